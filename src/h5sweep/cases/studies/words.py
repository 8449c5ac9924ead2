"""How a finding's evidence names a store and prints its times."""

from __future__ import annotations

from h5sweep.storage import columns as C


def ratio_words(row) -> str:
    return f"{row[C.RATIO_TO_CONTIGUOUS]:.2f}x ({row[C.RATIO_CI_LOW]:.2f}-{row[C.RATIO_CI_HIGH]:.2f})"


def store_name(row) -> str:
    shape = row[C.CHUNK_SHAPE] if isinstance(row[C.CHUNK_SHAPE], str) and row[C.CHUNK_SHAPE] else "contiguous"
    return shape if row[C.COMPRESSION] == "none" else f"{shape} {row[C.COMPRESSION]}"


def ms_words(row) -> str:
    return f"{row[C.MEDIAN_S] * 1e3:.3g} ms ({row[C.MEDIAN_CI_LOW_S] * 1e3:.3g}-{row[C.MEDIAN_CI_HIGH_S] * 1e3:.3g})"
