"""The findings of the HDF User's Guide, chapter 14, checked on one filesystem's summary (the rules in
:mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import math

import numpy as np

from h5sweep.backends import chunk_cache as CC
from h5sweep.cases.studies.words import ratio_words as _ratio
from h5sweep.cases.studies.words import store_name as _name
from h5sweep.kit.claims import (
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
    shape_of,
)
from h5sweep.storage import columns as C
from h5sweep.storage.layouts import BASELINE_LAYOUT_ID as BASELINE

# The reads along one dimension of a 2-D array (row-major), as the chapter's example reads them
# (14.3.3, seed lines 235-283): one column [:, c] runs along axis 0, the slowest-varying (2,000
# seeks contiguous, 5 chunked: Figures 14l and 14n); one row [r, :] along axis 1, the fastest (1
# seek contiguous, 4 chunked: Figures 14k and 14m). Only 2-D: the chapter counts the seeks of one
# row and one column of a 2-D array, and a 3-D sweep's reads (a z-slice, a plane across two
# dimensions; a block of spectra) are not one line along one dimension.
SLOW = ("column", "one column")
FAST = ("rows", "one row")
# A median's 95% interval from order statistics needs 6 or more values; with 5 or fewer
# (h5sweep.measure.stats.median_ci_ranks) it is the whole range, covering less than 95%.
MIN_PAIRS = 6


def _one_line(rows, shape, case: str):
    """The reads of one whole column (``column``) or one whole row (``rows``), as in the
    chapter's example, not a block of several."""
    itemsize = rows[C.RAW_BYTES].astype(float) / float(np.prod(shape))
    line = shape[0] if case == "column" else shape[1]
    return rows[np.isclose(rows[C.BYTES_SELECTED].astype(float), line * itemsize)]


def _along(s, shape, axis: tuple):
    """The reads along one dimension of a 2-D array under the chapter's conditions (14.3.3: no
    compression; the chapter counts seeks, so reads from the device, cold): HDF5's first
    variant, storage order as the array's, each against the contiguous file. None where the
    sweep did not read so; (UNMEASURED, why) where it read, but not under these conditions."""
    case, words = axis
    rows = primary_reads(s, case)
    if rows.empty or contiguous_rows(rows).empty:
        return None
    if len(shape) != 2:
        return UNMEASURED, (
            f"the dataset is {len(shape)}-D: the chapter reads one row and one column of a 2-D array (14.3.3), "
            f"and a {case} read of it is not one line along one dimension"
        )
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


def _pairs(row) -> int:
    pairs = row.get(C.RATIO_PAIRS, float("nan"))
    return 0 if pairs != pairs else int(pairs)


def _axis(s, shape, axis: tuple, test) -> Result:
    found = _along(s, shape, axis)
    if found is None or found[0] == UNMEASURED:
        return found
    case, words, chunked = found
    states, said = [], []
    for _, r in chunked.iterrows():
        pairs = _pairs(r)
        # fewer pairs than a 95% interval needs: the store's interval decides nothing
        states.append(test(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH]) if pairs >= MIN_PAIRS else None)
        short = "" if pairs >= MIN_PAIRS else f" [{pairs} pairs: a 95% interval needs {MIN_PAIRS}]"
        said.append(f"{_name(r)} {_ratio(r)}{short}")
    return _some(states), f"{words} ({case}), cold, of contiguous's time: {'; '.join(said)}"


def _slow_axis(s, shape) -> Result:
    # "substantially improve" (seed line 283): a chunked store reads in at most half contiguous's time
    return _axis(s, shape, SLOW, lambda low, high: below(low, high, 0.5))


def _fast_axis(s, shape) -> Result:
    # "substantially degrade" (seed line 283): a chunked store reads in more than twice contiguous's time
    return _axis(s, shape, FAST, lambda low, high: above(low, high, 2.0))


# Per read, the share of the stored bytes of the chunks it crosses that the library fetches from
# the file: a cache that thrashes fetches them all again for every read (seed lines 412-427:
# "For each row, five tiles must be read in. No actual caching results"); one that prevents it,
# less than half.
THRASHES = 0.9
PREVENTS = 0.5
# The reads must come back to chunks that reads before them crossed: at least half of their
# chunk crossings revisit a chunk.
REVISITED = 0.5


def _revisited(g, shape, chunk) -> float:
    """The least share of the reads' chunk crossings that come back to a chunk an earlier read
    crossed, from the selections alone (pigeonhole): the reads cross ``repeats`` x
    ``chunks_touched_mean`` chunks, of the array's ``n`` chunks; no cache enters it."""
    n = math.prod(-(-a // c) for a, c in zip(shape, chunk, strict=True))
    visits = float((g[C.REPEATS].astype(float) * g[C.CHUNKS_TOUCHED_MEAN].astype(float)).min())
    return max(0.0, 1.0 - n / visits) if visits > 0 else 0.0


def _share(row, stored: float) -> float:
    return float(row[C.LIBRARY_READ_BYTES_MEDIAN]) / stored


def _cache_thrash(s, shape) -> Result:
    """Per chunked store and visiting policy, the trace case's sustained reads (an open file,
    read after read, ``cold: first``) of a subset row by row, as the chapter's: each cache that
    holds fewer than the chunks a read crosses (and at least one chunk, else HDF5 reads around
    it) against each that holds the chunks along the fastest-varying dimension of the dataset
    (seed line 431), judged on the bytes the library fetches per read."""
    rows = s[(s[C.CASE] == "trace") & s[CC.CHUNK_CACHE_BYTES].notna()]
    rows = chunked_rows(rows)
    if rows.empty:
        return None
    if C.COLD_MODE in rows and not (rows[C.COLD_MODE] == "first").any():
        return UNMEASURED, "every trace read is a first access (cold: every): no chunk stays in the cache between reads"
    if C.COLD_MODE in rows:
        rows = rows[rows[C.COLD_MODE] == "first"]
    if C.CACHE_STATE in rows:
        rows = rows[rows[C.CACHE_STATE] != "cold"]  # the reads after the first
    rows = rows.dropna(subset=[C.CHUNK_BYTES_TOUCHED_MEDIAN, C.LIBRARY_READ_BYTES_MEDIAN, C.MEDIAN_S])
    keys = [k for k in (C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.POLICY) if k in rows]
    said, states, missing = [], [], []
    itemsize = float(rows[C.RAW_BYTES].iloc[0]) / float(np.prod(shape)) if len(rows) else 0.0
    for _, g in rows.groupby(keys, dropna=False):
        first = g.iloc[0]
        name = _name(first)
        chunk = shape_of(first[C.CHUNK_SHAPE])
        chunk_bytes = math.prod(chunk) * itemsize
        n_fast = -(-shape[-1] // chunk[-1])  # chunks along the fastest-varying dimension
        crossed = float(first[C.CHUNK_BYTES_TOUCHED_MEDIAN])  # uncompressed: what the cache holds
        stored = float(first.get(C.STORED_BYTES_TOUCHED_MEDIAN, float("nan")))
        stored = stored if stored == stored and stored > 0 else crossed  # what fetching them reads
        revisit = _revisited(g, shape, chunk)
        if revisit < REVISITED:
            missing.append(f"{name}: at least {revisit:.1%} of the reads' chunk crossings come back to a chunk")
            continue
        cache = g[CC.CHUNK_CACHE_BYTES].astype(float)
        small = g[(cache < crossed) & (cache >= chunk_bytes)].sort_values(CC.CHUNK_CACHE_BYTES)
        large = g[cache >= n_fast * chunk_bytes].sort_values(CC.CHUNK_CACHE_BYTES)
        if small.empty or large.empty:
            caches = ", ".join(f"{int(b):,} B" for b in sorted(cache.unique()))
            missing.append(
                f"{name}: caches {caches}; needs one of {chunk_bytes:,.0f} B to {crossed:,.0f} B (one chunk to the "
                f"chunks a read crosses) and one of at least {n_fast * chunk_bytes:,.0f} B ({n_fast} chunks along "
                "the fastest-varying dimension)"
            )
            continue
        small_share = [(int(r[CC.CHUNK_CACHE_BYTES]), _share(r, stored)) for _, r in small.iterrows()]
        large_share = [(int(r[CC.CHUNK_CACHE_BYTES]), _share(r, stored)) for _, r in large.iterrows()]
        if any(x >= PREVENTS for _, x in large_share):
            state = False  # a cache of the sentence's size still fetches the chunks again
        elif all(x >= THRASHES for _, x in small_share):
            state = True
        elif any(x < PREVENTS for _, x in small_share):
            state = False  # the smaller cache does not thrash: the chapter's thrashing does not arise
        else:
            state = None
        states.append(state)
        a, b = small.iloc[0], large.iloc[0]
        low, high = a[C.MEDIAN_CI_LOW_S] / b[C.MEDIAN_CI_HIGH_S], a[C.MEDIAN_CI_HIGH_S] / b[C.MEDIAN_CI_LOW_S]
        fetched = ", ".join(f"{c:,} B cache {x:.0%}" for c, x in small_share)
        kept = ", ".join(f"{c:,} B {x:.0%}" for c, x in large_share)
        said.append(
            f"{name} {first[C.CASE]}: a read crosses {float(first[C.CHUNKS_TOUCHED_MEAN]):.0f} chunks "
            f"({stored:,.0f} B stored), at least {revisit:.1%} of crossings come back to a chunk; of those bytes "
            f"the library fetches per read: {fetched} (fewer than the chunks a read crosses); {kept} (at least "
            f"the {n_fast} chunks along the fastest-varying dimension); time {a[C.MEDIAN_S] / b[C.MEDIAN_S]:.2f}x "
            f"({low:.2f}-{high:.2f})"
        )
    if not states:
        return (UNMEASURED, "; ".join(missing[:3])) if missing else None
    return every(states), "; ".join(said[:3])


FINDINGS: list[Finding] = [
    Finding(
        "chunking-helps-slow-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.3.3 Chunking without Compression",
        "Chunking can substantially improve I/O performance when data is read along the slowest-varying dimension.",
        "reading one column [:, c] of a 2-D array (row-major: along the slowest-varying dimension, the chapter's "
        "2,000-integer column, Figures 14l and 14n) from the device (cold), some uncompressed chunked store takes at "
        "most half the contiguous file's time (its ratio's 95% interval, of 6 or more paired reads, below 0.5; "
        "every store's at or above: does not hold). Only the chapter's 2-D form: a 3-D read is not one line along "
        "one dimension. A cold chunked read also reads the chunk index from the device, a cost the chapter's seek "
        "counts leave out",
        "cases.column with size 1 and 6 or more repeats on a 2-D dataset, cold reads, layouts.contiguous and "
        "chunks, compression none",
        STUDIES + "users-guide/subsetting.yaml",
        _slow_axis,
    ),
    Finding(
        "chunking-hurts-fast-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.3.3 Chunking without Compression",
        "It can substantially degrade performance when data is read along the fastest-varying dimension.",
        "reading one row [r, :] of a 2-D array (row-major: along the fastest-varying dimension, the chapter's row, "
        "Figures 14k and 14m) from the device (cold), some uncompressed chunked store takes more than twice the "
        "contiguous file's time (its ratio's 95% interval, of 6 or more paired reads, above 2; every store's at or "
        "below: does not hold). Only the chapter's 2-D form: a 3-D read is not one line along one dimension. A cold "
        "chunked read also reads the chunk index from the device, a cost the chapter's seek counts leave out",
        "cases.rows with size 1 and 6 or more repeats on a 2-D dataset, cold reads, layouts.contiguous and chunks, "
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
        "a subset read row by row from an open file (the trace case, cold: first), whose reads come back to the "
        "chunks earlier reads crossed (at least half of their chunk crossings, counted from the selections and the "
        "array's chunks): a chunk cache that holds fewer than the chunks a read crosses (and at least one chunk) "
        "fetches from the file 90% or more of the stored bytes of the chunks each read crosses, and one that holds "
        "at least the chunks along the fastest-varying dimension (ceil(shape[-1] / chunk[-1]); 42 in the chapter's "
        "3,000 x 8,400 array of 300 x 200 tiles) fetches less than half of them, store by store (counted bytes per "
        "read; the sentence-sized cache fetching half or more, or the smaller one less than half: does not hold; "
        "the time ratio is evidence only)",
        "cases.trace of a subset read row by row with cold: first, chunk_cache: a size of one chunk or more below the "
        "chunks a read crosses and one of at least the chunks along the fastest-varying dimension",
        STUDIES + "users-guide/chunk-cache.yaml",
        _cache_thrash,
    ),
]
