"""The findings of Kang et al. (2019), HDF5 against Zarr, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import math

from h5sweep.backends import RATIO_TO_REFERENCE, RATIO_TO_REFERENCE_CI_HIGH, RATIO_TO_REFERENCE_CI_LOW, REFERENCE
from h5sweep.cases.claims import (
    KANG,
    STUDIES,
    Finding,
    Result,
    above,
    chunked_rows,
    counts,
    every,
    majority,
    primary_reads,
    shape_of,
)
from h5sweep.storage import columns as C


def _zarr_slower(s, shape) -> Result:
    if RATIO_TO_REFERENCE not in s:
        return None
    rows = primary_reads(s, "whole", backend=None).dropna(subset=[RATIO_TO_REFERENCE])
    if rows.empty:
        return None
    states = [above(r[RATIO_TO_REFERENCE_CI_LOW], r[RATIO_TO_REFERENCE_CI_HIGH], 1.0) for _, r in rows.iterrows()]
    return majority(states), (
        f"whole-array reads, Zarr over HDF5 of the same chunks: {counts(states)} slower "
        f"(median ratio {rows[RATIO_TO_REFERENCE].median():.2f})"
    )


def _io_operations(s, shape) -> Result:
    rows = primary_reads(s, "column", backend=None)
    if rows.empty or rows[C.BACKEND].nunique() < 2:
        return None
    keys = [C.LAYOUT_ID, C.COMPRESSION]
    hdf5 = rows[rows[C.BACKEND] == REFERENCE].set_index(keys)[C.READ_CALLS_MEDIAN]
    other = rows[rows[C.BACKEND] != REFERENCE].groupby(keys)[C.READ_CALLS_MEDIAN].min()
    pairs = (hdf5 / other).dropna()
    if pairs.empty:
        return None
    factor = float(pairs.median())
    words = f"read calls per column read, HDF5 over Zarr of the same chunks: median {factor:.2f}x ({len(pairs)} stores)"
    return (True if factor >= 1.5 else False if factor < 1.2 else None), words


def _same_size_same_time(s, shape) -> Result:
    rows = chunked_rows(primary_reads(s, "whole", backend=None)).dropna(subset=[C.MEDIAN_CI_LOW_S])
    rows = rows[rows[C.COMPRESSION] == "none"]
    if rows.empty:
        return None
    rows = rows.assign(size=[math.prod(shape_of(c)) for c in rows[C.CHUNK_SHAPE]])
    groups = [g for _, g in rows.groupby([C.BACKEND, "size"]) if g[C.CHUNK_SHAPE].nunique() > 1]
    if not groups:
        return None
    states = []
    for g in groups:  # the same within 25%: every interval inside, or two apart by more
        if g[C.MEDIAN_CI_HIGH_S].max() <= 1.25 * g[C.MEDIAN_CI_LOW_S].min():
            states.append(True)
        elif g[C.MEDIAN_CI_LOW_S].max() > 1.25 * g[C.MEDIAN_CI_HIGH_S].min():
            states.append(False)
        else:
            states.append(None)
    verdict = every(states)
    return verdict, f"{len(groups)} chunk sizes read whole in several shapes: {counts(states)} the same within 25%"


FINDINGS: list[Finding] = [
    Finding(
        "zarr-slower",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Zarr has higher I/O cost because Zarr reads chunks from separate files while HDF5 reads from a single file.",
        "reading the whole array, most Zarr stores are surely slower than the HDF5 store of the same chunks (the "
        "study: on Cori's Lustre)",
        "backends: [hdf5, zarr], cases.whole",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _zarr_slower,
    ),
    Finding(
        "hdf5-io-operations",
        "Kang",
        KANG,
        "3.2 Column-major read",
        "Figure 2b shows that HDF5 has twice I/O operations than Zarr, such that HDF5 is slower shown in Figure 2a.",
        "reading a column, HDF5 makes 1.5x or more the read calls of Zarr on the same chunks (below 1.2x: does "
        "not hold)",
        "backends: [hdf5, zarr], cases.column (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _io_operations,
    ),
    Finding(
        "same-size-same-time",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Chunk shapes, having the same chunk size, result in the same I/O performance.",
        "read whole, uncompressed stores whose chunks hold as many elements in other shapes take the same time "
        "within 25% (every median interval inside)",
        "cases.whole, layouts.shapes of equal chunk size in two shapes",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _same_size_same_time,
    ),
]
