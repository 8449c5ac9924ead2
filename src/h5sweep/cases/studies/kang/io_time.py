"""The checks of Kang et al.'s findings: each backend's I/O time bracketed by the intervals it was
measured with (the package's docstring says how)."""

from __future__ import annotations

import math
import statistics

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.kit.claims import (
    UNMEASURED,
    Result,
    chunked_rows,
    counts,
    every,
    primary_reads,
    shape_of,
)
from h5sweep.storage import columns as C

# "twice I/O operations": a ratio nearer 2 than 1 or 4 on a log scale, 2 / sqrt(2) to 2 * sqrt(2)
TWICE = (math.sqrt(2.0), 2.0 * math.sqrt(2.0))

# "the same I/O performance": every storage interval of a group within 25% of each other, small
# beside what chunk size does in the same experiment (3.1: HDF5 78 s to 19 s, 4.1x; Zarr 1,408 s
# to 68 s, 21x, as the chunks grow)
SAME_WITHIN = 1.25

# the summary's median of the storage part (its interval: C.STORAGE_S_CI_LOW, C.STORAGE_S_CI_HIGH)
STORAGE_S_MEDIAN = f"{C.STORAGE_S}_median"

SHARDED_LEFT_OUT = "sharded stores left out (one file holds many chunks; their storage part is not timed apart)"


def _unsharded(rows: pd.DataFrame) -> pd.DataFrame:
    if C.SHARD_SHAPE not in rows:
        return rows
    return rows[rows[C.SHARD_SHAPE].fillna("") == ""]


def _cold_split_reads(s: pd.DataFrame, shape, case: str, backends: int = 2):
    """The poster's reads of ``case``: a 2-D dataset, every backend's first variant, chunked and
    unsharded, from the device (cold), with the storage part's interval. None where the sweep
    did not read so; (UNMEASURED, why) where it read, but not under these conditions."""
    if len(shape) != 2:
        return None
    rows = chunked_rows(primary_reads(s, case, backend=None))
    if rows.empty or rows[C.BACKEND].nunique() < backends:
        return None
    if C.STORAGE_S_CI_LOW not in rows or rows[C.STORAGE_S_CI_LOW].isna().all():
        return UNMEASURED, f"{case}: no read's storage part was timed apart (split_read_time: true)"
    read = rows
    rows = _unsharded(rows[rows[C.CACHE_STATE] == "cold"])
    if rows.empty:
        states = ", ".join(sorted(read[C.CACHE_STATE].dropna().astype(str).unique())) or "none"
        return UNMEASURED, f"no {case} read came from the device (cold; cache states read: {states})"
    return rows


def _pairs(rows: pd.DataFrame) -> list[tuple[pd.Series, pd.Series]]:
    """(HDF5, Zarr) rows of the same chunk shape and codec (and storage order)."""
    keys = [c for c in (C.CHUNK_SHAPE, C.COMPRESSION, C.ORDER) if c in rows]
    hdf5 = rows[rows[C.BACKEND] == REFERENCE]
    out = []
    for _, other in rows[rows[C.BACKEND] != REFERENCE].iterrows():
        twin = hdf5[(hdf5[keys].fillna("") == other[keys].fillna("")).all(axis=1)]
        if not twin.empty:
            out.append((twin.iloc[0], other))
    return out


def _where(rows: pd.DataFrame) -> str:
    kinds = sorted(rows[C.FS_TYPE].dropna().astype(str).unique()) if C.FS_TYPE in rows else []
    return f"on {', '.join(kinds)}" if kinds else "on the sweep's filesystem"


def _ms(row) -> str:
    return (
        f"{row[STORAGE_S_MEDIAN] * 1e3:.3g} ms ({row[C.STORAGE_S_CI_LOW] * 1e3:.3g}-"
        f"{row[C.STORAGE_S_CI_HIGH] * 1e3:.3g})"
    )


def _pair_name(row) -> str:
    return f"{row[C.CHUNK_SHAPE]}" + ("" if row[C.COMPRESSION] == "none" else f" {row[C.COMPRESSION]}")


def _zarr_reader(rows: pd.DataFrame) -> str:
    """The reader of the Zarr rows compared (the config's first: zarr-python, the poster's)."""
    zarr = rows[rows[C.BACKEND] != REFERENCE]
    readers = sorted(zarr[C.READER].dropna().astype(str).unique()) if C.READER in zarr else []
    return ", ".join(readers) or "its first reader"


def _all_or_most_not(states: list[bool | None]) -> bool | None:
    """A claim the study shows for every store it read: True where every pair surely shows it,
    False where at least half surely do not, None otherwise."""
    if states and all(st is True for st in states):
        return True
    if states and sum(st is False for st in states) * 2 >= len(states):
        return False
    return None


def _on_uncompressed(judged: list[tuple[pd.Series, bool | None]], what: str) -> tuple[bool | None | str, str]:
    """The verdict on the uncompressed pairs of ``judged`` ((HDF5 row, state) per pair; every
    pair, or at least half surely not), and in words its count with each other codec's beside,
    judged alike but not pooled in."""
    by_codec: dict[str, list[bool | None]] = {}
    for h, state in judged:
        by_codec.setdefault(str(h[C.COMPRESSION]), []).append(state)
    others = "; ".join(
        f"{codec} pairs (not judged: the poster decodes nothing): {counts(states)}"
        for codec, states in sorted(by_codec.items())
        if codec != "none"
    )
    plain = by_codec.get("none", [])
    if not plain:
        return UNMEASURED, (
            f"no uncompressed pair (the poster's stores: Fig. 1 has I/O and memory copy, no decoding; compression: "
            f"[none]); {what}: {others}"
        )
    return _all_or_most_not(plain), f"uncompressed pairs (judged), {what}: {counts(plain)}" + (
        f"; {others}" if others else ""
    )


def _io_bounds(row: pd.Series, index_reads: bool) -> tuple[float, float]:
    """A read's I/O time: its storage part's interval, capped by its whole read's; with
    ``index_reads`` (HDF5) reaching up to the whole read's upper end."""
    low = min(row[C.STORAGE_S_CI_LOW], row[C.MEDIAN_CI_LOW_S])
    high = row[C.MEDIAN_CI_HIGH_S] if index_reads else min(row[C.STORAGE_S_CI_HIGH], row[C.MEDIAN_CI_HIGH_S])
    return low, high


def _surely_slower(slow: tuple[float, float], fast: tuple[float, float]) -> bool | None:
    """Whether the I/O time bracketed by ``slow`` lies wholly above that bracketed by ``fast``
    (True), wholly below it (False), or neither (None)."""
    if slow[0] > fast[1]:
        return True
    if slow[1] < fast[0]:
        return False
    return None


def _zarr_surely_slower(h: pd.Series, z: pd.Series) -> bool | None:
    return _surely_slower(_io_bounds(z, index_reads=False), _io_bounds(h, index_reads=True))


def _hdf5_surely_slower(h: pd.Series, z: pd.Series) -> bool | None:
    return _surely_slower(_io_bounds(h, index_reads=True), _io_bounds(z, index_reads=False))


def _ms_whole(row) -> str:
    low, high = row[C.MEDIAN_CI_LOW_S] * 1e3, row[C.MEDIAN_CI_HIGH_S] * 1e3
    return f"whole read {row[C.MEDIAN_S] * 1e3:.3g} ms ({low:.3g}-{high:.3g})"


def zarr_slower(s, shape) -> Result:
    rows = _cold_split_reads(s, shape, "whole")
    if rows is None or isinstance(rows, tuple):
        return rows
    pairs = [(h, z) for h, z in _pairs(rows) if pd.notna(h[C.STORAGE_S_CI_LOW]) and pd.notna(z[C.STORAGE_S_CI_LOW])]
    if not pairs:
        return UNMEASURED, "whole: no unsharded Zarr store with an HDF5 twin of the same chunks and codec"
    judged = [(h, _zarr_surely_slower(h, z)) for h, z in pairs]
    said = [f"{_pair_name(h)}: Zarr {_ms(z)}, {_ms_whole(z)}; HDF5 {_ms(h)}, {_ms_whole(h)}" for h, z in pairs]
    verdict, words = _on_uncompressed(judged, "Zarr slower in I/O time")
    return verdict, (
        f"whole-array reads, cold, {_where(rows)}, I/O time (storage part) of Zarr ({_zarr_reader(rows)}) against HDF5 "
        f"of the same chunks and codec (each between its storage part and its whole read): {words}; "
        f"{'; '.join(said)}; {SHARDED_LEFT_OUT}"
    )


def _other_readers(s: pd.DataFrame, rows: pd.DataFrame) -> str:
    """HDF5's read calls over those of Zarr's other readers (not the poster's), for the evidence."""
    if C.READER not in s:
        return ""
    others = chunked_rows(s[(s[C.CASE] == "column") & (s[C.BACKEND] != REFERENCE)])
    others = _unsharded(others[~others[C.PRIMARY].fillna(False).astype(bool) & (others[C.CACHE_STATE] == "cold")])
    hdf5 = rows[rows[C.BACKEND] == REFERENCE]
    said = []
    for reader, g in others.groupby(C.READER):
        factors = [h[C.READ_CALLS_MEDIAN] / z[C.READ_CALLS_MEDIAN] for h, z in _pairs(pd.concat([hdf5, g]))]
        factors = [f for f in factors if pd.notna(f) and math.isfinite(f)]
        if factors:
            said.append(f"{reader} {statistics.median(factors):.2f}x")
    return f"; HDF5's read calls over Zarr's other readers' (not the poster's): {', '.join(said)}" if said else ""


def io_operations(s, shape) -> Result:
    rows = _cold_split_reads(s, shape, "column")
    if rows is None or isinstance(rows, tuple):
        return rows
    pairs = [(h, z) for h, z in _pairs(rows) if h[C.READ_CALLS_MEDIAN] > 0 and z[C.READ_CALLS_MEDIAN] > 0]
    pairs = [(h, z) for h, z in pairs if pd.notna(h[C.STORAGE_S_CI_LOW]) and pd.notna(z[C.STORAGE_S_CI_LOW])]
    if not pairs:
        return UNMEASURED, "column: no unsharded Zarr store with an HDF5 twin of the same chunks and codec"
    judged, clauses, said = [], [], []
    for h, z in pairs:  # both clauses on the same pair: about twice the calls, and so surely slower
        factor = h[C.READ_CALLS_MEDIAN] / z[C.READ_CALLS_MEDIAN]
        twice, slower = bool(TWICE[0] <= factor <= TWICE[1]), _hdf5_surely_slower(h, z)
        judged.append((h, True if twice and slower is True else False if not twice or slower is False else None))
        if h[C.COMPRESSION] == "none":
            clauses.append((twice, slower))
        said.append(
            f"{_pair_name(h)}: {h[C.READ_CALLS_MEDIAN]:.0f} against {z[C.READ_CALLS_MEDIAN]:.0f} read calls "
            f"({factor:.2f}x, {h[C.CHUNKS_TOUCHED_MEAN]:.0f} chunks), I/O time HDF5 {_ms(h)}, {_ms_whole(h)}; "
            f"Zarr {_ms(z)}, {_ms_whole(z)}"
        )
    verdict, words = _on_uncompressed(judged, "about twice the read calls and HDF5 surely slower in I/O time")
    apart = (
        f" (about twice the read calls, {TWICE[0]:.2f}-{TWICE[1]:.2f}x, {sum(t for t, _ in clauses)} of "
        f"{len(clauses)}; HDF5 slower in I/O time {counts([sl for _, sl in clauses])})"
        if clauses
        else ""
    )
    return verdict, (
        f"one column read whole, cold, {_where(rows)}, HDF5 against Zarr ({_zarr_reader(rows)}) of the same chunks and "
        f"codec: {words}{apart}; {'; '.join(said)}{_other_readers(s, rows)}; {SHARDED_LEFT_OUT}"
    )


def same_size_same_time(s, shape) -> Result:
    rows = _cold_split_reads(s, shape, "whole", backends=1)
    if rows is None or isinstance(rows, tuple):
        return rows
    rows = rows[rows[C.COMPRESSION] == "none"].dropna(subset=[C.STORAGE_S_CI_LOW, C.STORAGE_S_CI_HIGH])
    if rows.empty:
        return UNMEASURED, "whole: no uncompressed store with an interval of its storage part"
    rows = rows.assign(size=[math.prod(shape_of(c)) for c in rows[C.CHUNK_SHAPE]])
    groups = [(k, g) for k, g in rows.groupby([C.BACKEND, "size"]) if g[C.CHUNK_SHAPE].nunique() > 1]
    if not groups:
        return None
    states, said = [], []
    for (backend, size), g in groups:  # every interval within 25% of the others, or two apart by more
        if g[C.STORAGE_S_CI_HIGH].max() <= SAME_WITHIN * g[C.STORAGE_S_CI_LOW].min():
            states.append(True)
        elif g[C.STORAGE_S_CI_LOW].max() > SAME_WITHIN * g[C.STORAGE_S_CI_HIGH].min():
            states.append(False)
        else:
            states.append(None)
        shapes = ", ".join(f"{r[C.CHUNK_SHAPE]} {_ms(r)}" for _, r in g.iterrows())
        said.append(f"{backend} {size:,} elements: {shapes}")
    return every(states), (
        f"whole-array reads, cold, uncompressed, {_where(rows)}, I/O time (storage part) of chunk shapes of "
        f"equal size, per backend: {counts(states)} the same within 25%; {'; '.join(said)}; {SHARDED_LEFT_OUT}"
    )
