"""The findings of Kang et al. (2019), HDF5 against Zarr, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`).

The poster read a 2-D recording ([time, channels]) from Cori's Lustre and speaks of I/O time
apart from the memory copy (Fig. 1's breakdown, Fig. 2a). Its I/O time is the summary's
storage part of a read (``split_read_time``: ``storage_s_median`` with its interval): the
stored chunks fetched on their own, HDF5 by a direct read of each chunk, Zarr by reading each
chunk file whole. Each Zarr store is compared with the HDF5 store of the same chunk shape and
codec; Zarr read by zarr-python, the poster's library (the config's first reader). A sharded
Zarr store keeps many chunks in one file, so it is not the poster's one file per chunk, and
its storage part is not timed apart: it is left out."""

from __future__ import annotations

import math
import statistics

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.cases.claims import (
    KANG,
    STUDIES,
    UNMEASURED,
    Finding,
    Result,
    chunked_rows,
    counts,
    every,
    majority,
    primary_reads,
    shape_of,
)
from h5sweep.storage import columns as C

# "twice I/O operations": a ratio nearer 2 than 1 or 4 on a log scale, 2 / sqrt(2) to 2 * sqrt(2)
TWICE = (math.sqrt(2.0), 2.0 * math.sqrt(2.0))
# "the same I/O performance": every storage interval of a group within 25% of each other
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


def _zarr_slower(s, shape) -> Result:
    rows = _cold_split_reads(s, shape, "whole")
    if rows is None or isinstance(rows, tuple):
        return rows
    pairs = [(h, z) for h, z in _pairs(rows) if pd.notna(h[C.STORAGE_S_CI_LOW]) and pd.notna(z[C.STORAGE_S_CI_LOW])]
    if not pairs:
        return UNMEASURED, "whole: no unsharded Zarr store with an HDF5 twin of the same chunks and codec"
    states, said = [], []
    for h, z in pairs:  # Zarr's I/O time wholly above HDF5's, or wholly below
        states.append(
            True
            if z[C.STORAGE_S_CI_LOW] > h[C.STORAGE_S_CI_HIGH]
            else False
            if z[C.STORAGE_S_CI_HIGH] < h[C.STORAGE_S_CI_LOW]
            else None
        )
        said.append(f"{_pair_name(h)}: Zarr {_ms(z)}, HDF5 {_ms(h)}")
    return _all_or_most_not(states), (
        f"whole-array reads, cold, {_where(rows)}, I/O time (storage part) of Zarr ({_zarr_reader(rows)}) against HDF5 "
        f"of the same chunks and codec: {counts(states)} slower; {'; '.join(said)}; {SHARDED_LEFT_OUT}"
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


def _io_operations(s, shape) -> Result:
    rows = _cold_split_reads(s, shape, "column")
    if rows is None or isinstance(rows, tuple):
        return rows
    pairs = [(h, z) for h, z in _pairs(rows) if h[C.READ_CALLS_MEDIAN] > 0 and z[C.READ_CALLS_MEDIAN] > 0]
    if not pairs:
        return UNMEASURED, "column: no unsharded Zarr store with an HDF5 twin of the same chunks and codec"
    twice, slower, said = [], [], []
    for h, z in pairs:
        factor = h[C.READ_CALLS_MEDIAN] / z[C.READ_CALLS_MEDIAN]
        twice.append(bool(TWICE[0] <= factor <= TWICE[1]))
        # HDF5's storage part reads its chunks only (the read before it cached the chunk index):
        # surely slower where even that lies above Zarr's; surely not where HDF5's whole read,
        # index reads included, lies below Zarr's storage part
        slower.append(
            True
            if h[C.STORAGE_S_CI_LOW] > z[C.STORAGE_S_CI_HIGH]
            else False
            if h[C.MEDIAN_CI_HIGH_S] < z[C.STORAGE_S_CI_LOW]
            else None
        )
        said.append(
            f"{_pair_name(h)}: {h[C.READ_CALLS_MEDIAN]:.0f} against {z[C.READ_CALLS_MEDIAN]:.0f} read calls "
            f"({factor:.2f}x, {h[C.CHUNKS_TOUCHED_MEAN]:.0f} chunks), I/O time HDF5 {_ms(h)}, Zarr {_ms(z)}"
        )
    calls, time = majority(twice), majority(slower)
    verdict = True if calls is True and time is True else False if False in (calls, time) else None
    return verdict, (
        f"one column read whole, cold, {_where(rows)}, HDF5 against Zarr ({_zarr_reader(rows)}) of the same chunks and "
        f"codec: about twice the read calls ({TWICE[0]:.2f}-{TWICE[1]:.2f}x) {sum(twice)} of {len(twice)}; "
        f"HDF5 slower in I/O time {counts(slower)}; {'; '.join(said)}{_other_readers(s, rows)}; {SHARDED_LEFT_OUT}"
    )


def _same_size_same_time(s, shape) -> Result:
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


FINDINGS: list[Finding] = [
    Finding(
        "zarr-slower",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Zarr has higher I/O cost because Zarr reads chunks from separate files while HDF5 reads from a single file.",
        "a 2-D recording read whole from the device (cold): each unsharded Zarr store's I/O time (the "
        "storage part of the read, split_read_time; Zarr read by the config's first reader, zarr-python as the "
        "poster's) is surely above the HDF5 store's of the same chunk shape and codec, for every such pair (at "
        "least half surely not: does not hold); sharded stores left out, a shard file holding many chunks. The "
        "poster read Cori's Lustre, where each file opened asks the metadata server; the evidence names the "
        "filesystem measured",
        "backends: [hdf5, zarr], cases.whole, split_read_time: true (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _zarr_slower,
    ),
    Finding(
        "hdf5-io-operations",
        "Kang",
        KANG,
        "3.2 Column-major read",
        "Figure 2b shows that HDF5 has twice I/O operations than Zarr, such that HDF5 is slower shown in Figure 2a.",
        "one column of a 2-D recording read whole from the device (cold), HDF5 against the unsharded Zarr store "
        "of the same chunk shape and codec (read by the config's first reader, zarr-python as the poster's): in "
        "most pairs HDF5 makes about twice the read calls (system calls counted, a call that finds a file's end "
        "included; 1.41x to 2.83x, nearer 2x than 1x or 4x), and in most HDF5's I/O time (the storage part of "
        "the read: its chunks' direct reads) is surely above Zarr's. HDF5 is surely not slower where its whole "
        "read, chunk index reads included, is surely shorter than Zarr's storage part. The poster read Cori's "
        "Lustre; the evidence names the filesystem measured",
        "backends: [hdf5, zarr], cases.column, split_read_time: true (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _io_operations,
    ),
    Finding(
        "same-size-same-time",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Chunk shapes, having the same chunk size, result in the same I/O performance.",
        "a 2-D recording read whole from the device (cold), per backend, uncompressed and unsharded: chunk shapes "
        "holding as many elements take the same I/O time (the storage part of the read) within 25%, every "
        "interval inside (two apart by more: does not hold). The poster read Cori's Lustre; the evidence names "
        "the filesystem measured",
        "cases.whole, split_read_time: true, layouts.shapes of equal chunk size in two shapes (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        _same_size_same_time,
    ),
]
