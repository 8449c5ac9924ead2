"""The findings of the HDF User's Guide, chapter 14, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import numpy as np

from h5sweep.analyze.aggregate import BASELINE_LAYOUT_ID as BASELINE
from h5sweep.analyze.studies.words import ratio_words as _ratio
from h5sweep.analyze.studies.words import store_name as _name
from h5sweep.cases.claims import (
    GUIDE,
    STUDIES,
    UNMEASURED,
    Finding,
    Result,
    above,
    below,
    chunked_rows,
    contiguous_rows,
    every,
    primary_reads,
)
from h5sweep.storage import columns as C

# The reads along one dimension, per rank: (the case, what it reads). 2-D (row-major): one
# column [:, c] runs along axis 0, the slowest-varying; one row [r, :] along axis 1, the
# fastest. 3-D (x, y, z; z fastest): a z-slice [:, :, z0:z0+depth] is a plane across x and y,
# the dimensions slower than z; a spectrum [x, y, :] runs along z.
SLOW = {2: ("column", "one column"), 3: ("slice", "z-slices")}
FAST = {2: ("rows", "one row"), 3: ("spectra", "spectra")}


def _one_line(rows, shape, case: str):
    """2-D: the reads of one whole column (``column``) or one whole row (``rows``), as in the
    chapter's example, not a block of several."""
    itemsize = rows[C.RAW_BYTES].astype(float) / float(np.prod(shape))
    line = shape[0] if case == "column" else shape[1]
    return rows[np.isclose(rows[C.BYTES_SELECTED].astype(float), line * itemsize)]


def _along(s, shape, axes: dict):
    """The reads along one dimension under the chapter's conditions (14.3.3: no compression;
    the chapter counts seeks, so reads from the device, cold): HDF5's first variant, storage
    order as the array's, each against the contiguous file. None where the sweep did not read
    so; (UNMEASURED, why) where it read, but not under these conditions."""
    if len(shape) not in axes:
        return None
    case, words = axes[len(shape)]
    rows = primary_reads(s, case)
    if rows.empty or contiguous_rows(rows).empty:
        return None
    if C.RATIO_REFERENCE in rows:
        rows = rows[rows[C.RATIO_REFERENCE].fillna(BASELINE) == BASELINE]
    rows = rows[rows[C.COMPRESSION] == "none"]
    if C.ORDER in rows:
        rows = rows[rows[C.ORDER].fillna("xyz") == "xyz"]
    read = rows
    rows = rows[rows[C.CACHE_STATE] == "cold"]
    if rows.empty:
        states = ", ".join(sorted(read[C.CACHE_STATE].dropna().astype(str).unique())) or "none"
        return UNMEASURED, f"no uncompressed {case} read came from the device (cold; cache states read: {states})"
    if len(shape) == 2:
        rows = _one_line(rows, shape, case)
        if rows.empty:
            return UNMEASURED, f"the {case} reads are not {words}, the chapter's read (cases.{case}.size is not 1)"
    chunked = chunked_rows(rows).dropna(subset=[C.RATIO_CI_LOW, C.RATIO_CI_HIGH])
    if contiguous_rows(rows).empty or chunked.empty:
        return UNMEASURED, f"{case}: no uncompressed chunked store with a ratio's interval to contiguous"
    return case, words, chunked.sort_values(C.RATIO_TO_CONTIGUOUS)


def _some(states: list) -> bool | None:
    """A claim that some store shows it: True where one surely does, False where none can."""
    if any(st is True for st in states):
        return True
    if all(st is False for st in states):
        return False
    return None


def _axis(s, shape, axes: dict, test) -> Result:
    found = _along(s, shape, axes)
    if found is None or found[0] == UNMEASURED:
        return found
    case, words, chunked = found
    states = [test(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH]) for _, r in chunked.iterrows()]
    said = "; ".join(f"{_name(r)} {_ratio(r)}" for _, r in chunked.iterrows())
    return _some(states), f"{words} ({case}), cold, of contiguous's time: {said}"


def _slow_axis(s, shape) -> Result:
    # "substantially improve": a chunked store reads in at most half contiguous's time
    return _axis(s, shape, SLOW, lambda low, high: below(low, high, 0.5))


def _fast_axis(s, shape) -> Result:
    # "substantially degrade": a chunked store reads in more than twice contiguous's time
    return _axis(s, shape, FAST, lambda low, high: above(low, high, 2.0))


def _cache_thrash(s, shape) -> Result:
    """Per store, read case and visiting policy, a cache that holds fewer than the chunks a read
    crosses against one that holds them all, on sustained reads (an open file, read after read)
    that come back to the chunks of the reads before them, as the chapter's subset read row by
    row does: with the cache that holds them, a read fetches from the file less than half the
    chunk bytes it crosses."""
    rows = s[(s[C.CASE] != "write") & s[C.CHUNK_CACHE_BYTES].notna()]
    if C.COLD_MODE in rows:
        rows = rows[rows[C.COLD_MODE] == "first"]
    if C.CACHE_STATE in rows:
        rows = rows[rows[C.CACHE_STATE] != "cold"]  # the reads after the first
    rows = rows.dropna(subset=[C.CHUNK_BYTES_TOUCHED_MEDIAN, C.MEDIAN_CI_LOW_S])
    keys = [k for k in (C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.CASE, C.POLICY) if k in rows]
    said, states, elsewhere = [], [], []
    for _, g in rows.groupby(keys, dropna=False):
        crossed = g[C.CHUNK_BYTES_TOUCHED_MEDIAN].iloc[0]
        small = g[g[C.CHUNK_CACHE_BYTES] < crossed].sort_values(C.CHUNK_CACHE_BYTES)
        large = g[g[C.CHUNK_CACHE_BYTES] >= crossed].sort_values(C.CHUNK_CACHE_BYTES)
        if small.empty or large.empty:
            continue
        a, b = small.iloc[0], large.iloc[0]
        name = f"{_name(a)} {a[C.CASE]}"
        fetched = b.get(C.LIBRARY_READ_BYTES_MEDIAN, float("nan"))
        if not fetched < crossed / 2:  # each read fetches its own chunks: nothing to thrash
            elsewhere.append(f"{name} reads fetch {fetched:,.0f} B of the {int(crossed):,} B of chunks they cross")
            continue
        low, high = a[C.MEDIAN_CI_LOW_S] / b[C.MEDIAN_CI_HIGH_S], a[C.MEDIAN_CI_HIGH_S] / b[C.MEDIAN_CI_LOW_S]
        # thrashing reads each chunk again for every read that crosses it: at least 2x
        states.append(above(low, high, 2.0))
        said.append(
            f"{name}: {int(a[C.CHUNK_CACHE_BYTES])} B cache over {int(b[C.CHUNK_CACHE_BYTES])} B "
            f"{a[C.MEDIAN_S] / b[C.MEDIAN_S]:.2f}x ({low:.2f}-{high:.2f}); reads cross {int(crossed)} B of chunks"
        )
    if not states:
        if elsewhere:
            return UNMEASURED, "the reads do not come back to their predecessors' chunks: " + "; ".join(elsewhere[:3])
        return None
    verdict = every(states)
    return verdict, "; ".join(said[:3])


FINDINGS: list[Finding] = [
    Finding(
        "chunking-helps-slow-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.3.3 Chunking without Compression",
        "Chunking can substantially improve I/O performance when data is read along the slowest-varying dimension.",
        "read along the slowest-varying dimension (2-D, row-major: one column [:, c], the chapter's 2,000-integer "
        "column; 3-D, z fastest: z-slices [:, :, z0:z0+depth], planes across x and y) from the device (cold), some "
        "uncompressed chunked store takes at most half the contiguous file's time (its ratio's interval below 0.5; "
        "every store's at or above: does not hold)",
        "cases.column with size 1 (2-D) or cases.slice (3-D), cold reads, layouts.contiguous and chunks, "
        "compression none",
        STUDIES + "users-guide/subsetting.yaml",
        _slow_axis,
    ),
    Finding(
        "chunking-hurts-fast-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.3.3 Chunking without Compression",
        "It can substantially degrade performance when data is read along the fastest-varying dimension.",
        "read along the fastest-varying dimension (2-D, row-major: one row [r, :], the chapter's row; 3-D, z "
        "fastest: spectra [x0:x0+size, y0:y0+size, :], along z) from the device (cold), some uncompressed chunked "
        "store takes more than twice the contiguous file's time (its ratio's interval above 2; every store's at or "
        "below: does not hold)",
        "cases.rows with size 1 (2-D) or cases.spectra (3-D), cold reads, layouts.contiguous and chunks, "
        "compression none",
        STUDIES + "users-guide/subsetting.yaml",
        _fast_axis,
    ),
    Finding(
        "cache-thrashing",
        "User's Guide ch. 14",
        GUIDE,
        "14.3.6 How Insufficient Chunk Cache Space can Impair Chunking Performance",
        'From this example it should be apparent that, to prevent this kind of chunk cache "thrashing" from '
        "occurring, the size of the chunk cache should be made equal to, or greater than, the number of chunks "
        "along the fastest-varying dimension of the dataset.",
        "reading from an open file read after read, each read coming back to the chunks of the reads before it "
        "(as the chapter's subset read row by row; with the cache that holds them, a read fetches less than half "
        "the chunk bytes it crosses), a chunk cache smaller than the chunks a read crosses is at least 2x slower "
        "than one that holds them (ratio's interval above 2), store by store",
        "chunk_cache: a size below and one above the chunk bytes a read crosses, a read case with cold: first "
        "whose reads come back to the chunks before them (cases.trace of a subset read row by row)",
        STUDIES + "users-guide/chunk-cache.yaml",
        _cache_thrash,
    ),
]
