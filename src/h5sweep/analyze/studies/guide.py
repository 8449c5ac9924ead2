"""The findings of the HDF User's Guide, chapter 14, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.analyze.studies.words import ratio_words as _ratio
from h5sweep.analyze.studies.words import store_name as _name
from h5sweep.cases.claims import (
    GUIDE,
    STUDIES,
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


def _slow_axis(s, shape) -> Result:
    case = "slice" if len(shape) == 3 else "rows"
    rows = primary_reads(s, case)
    chunked = chunked_rows(rows).dropna(subset=[C.RATIO_CI_HIGH])
    if contiguous_rows(rows).empty or chunked.empty:
        return None
    best = chunked.sort_values(C.RATIO_TO_CONTIGUOUS).iloc[0]
    # "substantially improve": the best chunking at most half contiguous's time
    verdict = below(best[C.RATIO_CI_LOW], best[C.RATIO_CI_HIGH], 0.5)
    return verdict, f"best chunked {case}: {_name(best)} {_ratio(best)} of contiguous"


def _fast_axis(s, shape) -> Result:
    case = "spectra" if len(shape) == 3 else "column"
    rows = primary_reads(s, case)
    chunked = chunked_rows(rows).dropna(subset=[C.RATIO_CI_LOW])
    if contiguous_rows(rows).empty or chunked.empty:
        return None
    worst = chunked.sort_values(C.RATIO_TO_CONTIGUOUS).iloc[-1]
    verdict = above(worst[C.RATIO_CI_LOW], worst[C.RATIO_CI_HIGH], 2.0)
    return verdict, f"worst chunked {case}: {_name(worst)} {_ratio(worst)} of contiguous"


def _cache_thrash(s, shape) -> Result:
    """Per store and read case, a cache that holds fewer than the chunks a read crosses against
    one that holds them all, on sustained reads (an open file, read after read)."""
    rows = s[(s[C.CASE] != "write") & s[C.CHUNK_CACHE_BYTES].notna()]
    if C.COLD_MODE in rows:
        rows = rows[rows[C.COLD_MODE] == "first"]
    if C.CACHE_STATE in rows:
        rows = rows[rows[C.CACHE_STATE] != "cold"]  # the reads after the first
    rows = rows.dropna(subset=[C.CHUNK_BYTES_TOUCHED_MEDIAN, C.MEDIAN_CI_LOW_S])
    said, states = [], []
    for (layout, case), g in rows.groupby([C.LAYOUT_ID, C.CASE]):
        crossed = g[C.CHUNK_BYTES_TOUCHED_MEDIAN].iloc[0]
        small = g[g[C.CHUNK_CACHE_BYTES] < crossed].sort_values(C.CHUNK_CACHE_BYTES)
        large = g[g[C.CHUNK_CACHE_BYTES] >= crossed].sort_values(C.CHUNK_CACHE_BYTES)
        if small.empty or large.empty:
            continue
        a, b = small.iloc[0], large.iloc[0]
        low, high = a[C.MEDIAN_CI_LOW_S] / b[C.MEDIAN_CI_HIGH_S], a[C.MEDIAN_CI_HIGH_S] / b[C.MEDIAN_CI_LOW_S]
        # thrashing reads each chunk again for every read that crosses it: at least 2x
        states.append(above(low, high, 2.0))
        said.append(
            f"{layout} {case}: {int(a[C.CHUNK_CACHE_BYTES])} B cache over {int(b[C.CHUNK_CACHE_BYTES])} B "
            f"{a[C.MEDIAN_S] / b[C.MEDIAN_S]:.2f}x ({low:.2f}-{high:.2f}); reads cross {int(crossed)} B of chunks"
        )
    if not states:
        return None
    verdict = every(states)
    return verdict, "; ".join(said[:3])


FINDINGS: list[Finding] = [
    Finding(
        "chunking-helps-slow-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.4 Chunking",
        "Chunking can substantially improve I/O performance when data is read along the slowest-varying dimension.",
        "the best chunked store reads along the slowest-varying dimension (3-D: z-slices; 2-D: rows) in at most "
        "half contiguous's time (ratio's interval below 0.5)",
        "cases.slice (3-D) or cases.rows (2-D), layouts.contiguous and chunks",
        STUDIES + "users-guide/subsetting.yaml",
        _slow_axis,
    ),
    Finding(
        "chunking-hurts-fast-axis",
        "User's Guide ch. 14",
        GUIDE,
        "14.4 Chunking",
        "It can substantially degrade performance when data is read along the fastest-varying dimension.",
        "the worst chunked store reads along the fastest-varying dimension (3-D: spectra; 2-D: a column) in more "
        "than twice contiguous's time (ratio's interval above 2)",
        "cases.spectra (3-D) or cases.column (2-D), layouts.contiguous and chunks",
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
        "reading from an open file read after read, a chunk cache smaller than the chunks a read crosses is at "
        "least 2x slower than one that holds them (ratio's interval above 2)",
        "chunk_cache: a size below and one above the chunk bytes a read crosses, a read case with cold: first",
        STUDIES + "users-guide/chunk-cache.yaml",
        _cache_thrash,
    ),
]
