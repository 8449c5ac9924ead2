"""The findings of OpenMSI's chunking and compression study, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.analyze.studies.words import ms_words as _ms
from h5sweep.analyze.studies.words import store_name as _name
from h5sweep.cases.claims import (
    OPENMSI,
    STUDIES,
    Finding,
    Result,
    above,
    below,
    chunked_rows,
    contiguous_rows,
    counts,
    every,
    gzip_level,
    majority,
    primary_reads,
    shape_of,
)
from h5sweep.storage import columns as C


def _gzip4_ratio(s, shape) -> Result:
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "gzip-4")].dropna(subset=[C.COMPRESSION_RATIO])
    rows = rows.drop_duplicates([C.BACKEND, C.LAYOUT_ID]) if C.LAYOUT_ID in rows else rows
    if rows.empty:
        return None
    ratios = rows[C.COMPRESSION_RATIO]
    words = f"gzip-4 ratio median {ratios.median():.2f} over {len(rows)} stores ({ratios.min():.2f}-{ratios.max():.2f})"
    if ratios.between(2.9, 3.8).all():
        return True, words
    # "on the order of 2.9 to 3.8": within 10% of the range is not a clear miss
    if (ratios < 2.9 * 0.9).any() or (ratios > 3.8 * 1.1).any():
        return False, words
    return None, words + "; outside 2.9-3.8 by less than 10%"


def _padding(s, shape) -> Result:
    if len(shape) != 3:
        return None
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "none")].dropna(subset=[C.FILE_BYTES])
    rows = rows[
        [
            bool(c) and any(n % m for n, m in zip(shape[:2], shape_of(c)[:2], strict=True))
            for c in rows[C.CHUNK_SHAPE].fillna("")
        ]
    ]
    if rows.empty:
        return None
    said, states = [], []
    for _, r in rows.drop_duplicates(C.CHUNK_SHAPE).iterrows():
        m = shape_of(r[C.CHUNK_SHAPE])
        padded = math.prod(math.ceil(n / c) * c for n, c in zip(shape, m, strict=True)) / math.prod(shape)
        size = r[C.FILE_BYTES] / r[C.RAW_BYTES]
        # allocated whole: at least the padded size (a file also holds its chunk index)
        states.append(True if size >= 0.99 * padded else False if size < 0.9 * padded else None)
        said.append(f"{r[C.CHUNK_SHAPE]}: file {size:.3f}x raw, edge chunks {padded:.3f}x")
    verdict = every(states)
    return verdict, "; ".join(said[:4])


def _one_by_one_128(s, shape) -> Result:
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "none")].dropna(subset=[C.FILE_BYTES])
    rows = rows[[shape_of(c)[:2] == (1, 1) for c in rows[C.CHUNK_SHAPE].fillna("")]].drop_duplicates(C.CHUNK_SHAPE)
    by_n = rows.assign(n=[shape_of(c)[-1] for c in rows[C.CHUNK_SHAPE]]).sort_values("n")
    if 128 not in set(by_n["n"]) or len(by_n) < 2:
        return None
    sizes = ", ".join(f"{r[C.CHUNK_SHAPE]} {r[C.FILE_BYTES] / r[C.RAW_BYTES]:.3f}x raw" for _, r in by_n.iterrows())
    mine = by_n.loc[by_n["n"] == 128, C.FILE_BYTES].iloc[0]
    others = by_n.loc[by_n["n"] != 128, C.FILE_BYTES].max()
    if mine <= others:
        return False, sizes
    # "much larger": more than 5% above the next largest; a few kB decide nothing
    return (True if mine > 1.05 * others else None), sizes


def _against_contiguous(case: str, slower: bool, words: str):
    """A check that most chunked stores read ``case`` surely slower (or faster) than
    contiguous: the paired ratio's interval above (below) 1."""

    def check(s, shape) -> Result:
        rows = primary_reads(s, case)
        chunked = chunked_rows(rows).dropna(subset=[C.RATIO_CI_LOW])
        if contiguous_rows(rows).empty or chunked.empty:
            return None
        side = above if slower else below
        states = [side(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH], 1.0) for _, r in chunked.iterrows()]
        return majority(states), f"{words}: {counts(states)}"

    return check


def _best_slice_chunks(s, shape) -> Result:
    rows = chunked_rows(primary_reads(s, "slice")).dropna(subset=[C.MEDIAN_CI_LOW_S])
    ms = {c: shape_of(c)[0] for c in rows[C.CHUNK_SHAPE]}
    inside = {c for c, m in ms.items() if m in (4, 8, 16)}
    if not inside or len(inside) == len(ms):  # both sides of the claim must be measured
        return None
    fastest = rows.sort_values(C.MEDIAN_S).iloc[0]
    tied = rows[rows[C.MEDIAN_CI_LOW_S] <= fastest[C.MEDIAN_CI_HIGH_S]]  # not told apart from the fastest
    states = [c in inside for c in tied[C.CHUNK_SHAPE]]
    verdict = True if all(states) else False if not any(states) else None
    return verdict, (
        f"fastest z-slice median {_name(fastest)} {_ms(fastest)}; not told apart from it: "
        + ", ".join(_name(r) for _, r in tied.head(6).iterrows())
    )


def _slices_slower(s, shape) -> Result:
    slices, spectra = primary_reads(s, "slice"), primary_reads(s, "spectra")
    if slices.empty or spectra.empty:
        return None
    if int(slices[C.BYTES_SELECTED].iloc[0]) >= int(spectra[C.BYTES_SELECTED].iloc[0]):
        return None  # the sentence's condition: the slices select less data than the spectra
    keys = [C.LAYOUT_ID, C.COMPRESSION]
    both = slices.merge(spectra, on=keys, suffixes=("", "_spectra"))
    states = [
        above(
            r[C.MEDIAN_CI_LOW_S] - r[f"{C.MEDIAN_CI_HIGH_S}_spectra"],
            r[C.MEDIAN_CI_HIGH_S] - r[f"{C.MEDIAN_CI_LOW_S}_spectra"],
            0.0,
        )
        for _, r in both.iterrows()
    ]
    data = spectra[C.BYTES_SELECTED].iloc[0] / slices[C.BYTES_SELECTED].iloc[0]
    return majority(
        states
    ), f"z-slices slower than spectra: {counts(states)} stores; spectra select {data:.2g}x the slices' bytes"


def _by_level(s) -> pd.DataFrame:
    rows = s[s[C.CASE] == "write"]
    rows = rows.assign(level=[gzip_level(c) for c in rows[C.COMPRESSION]]).dropna(subset=["level"])
    return rows.drop_duplicates([C.LAYOUT_ID, C.COMPRESSION, C.WRITE_STRATEGY] if C.WRITE_STRATEGY in rows else None)


def _gzip_levels_size(s, shape) -> Result:
    rows = _by_level(s)
    if 1 not in set(rows["level"]) or rows["level"].max() <= 1:
        return None
    by = rows.groupby("level")[C.COMPRESSION_RATIO].median()
    gain = by.iloc[-1] / by.loc[1]
    words = f"compression ratio {by.loc[1]:.2f} at level 1, {by.iloc[-1]:.2f} at {by.index[-1]:g} ({gain:.2f}x)"
    return (True if gain < 1.15 else False if gain > 1.3 else None), words


def _gzip_levels_write(s, shape) -> Result:
    rows = _by_level(s)
    if not ((rows["level"] > 5).any() and (rows["level"] <= 5).any()):
        return None
    ratios = []
    for _, g in rows.groupby(C.CHUNK_SHAPE):
        high, low = g[g["level"] > 5], g[g["level"] <= 5]
        if len(high) and len(low):
            ratios.append(high[C.MEDIAN_S].median() / low[C.MEDIAN_S].median())
    if not ratios:
        return None
    middle = float(np.median(ratios))
    words = (
        f"write time above level 5 over at most 5, per chunk shape: median {middle:.2f}x "
        f"({min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} shapes)"
    )
    return (True if middle >= 1.5 and min(ratios) > 1 else False if middle < 1.2 else None), words


def _contiguous_fastest_write(s, shape) -> Result:
    rows = primary_reads(s, "write")
    if contiguous_rows(rows).empty or chunked_rows(rows).empty:
        return None
    base = contiguous_rows(rows).iloc[0]
    states = [
        above(r[C.MEDIAN_CI_LOW_S] - base[C.MEDIAN_CI_HIGH_S], r[C.MEDIAN_CI_HIGH_S] - base[C.MEDIAN_CI_LOW_S], 0.0)
        for _, r in chunked_rows(rows).iterrows()
    ]
    verdict = every(states)
    return verdict, f"contiguous {base[C.MEDIAN_S]:.3g} s; chunked stores slower: {counts(states)}"


def _spectrum_writes(s, shape) -> Result:
    rows = s[(s[C.CASE] == "write") & (s[C.WRITE_STRATEGY] == "spectrum") & (s[C.COMPRESSION] == "none")]
    rows = chunked_rows(rows)
    if rows.empty:
        return None
    rows = rows.assign(m=[shape_of(c)[0] for c in rows[C.CHUNK_SHAPE]]).sort_values("m")
    if rows["m"].nunique() < 2:
        return None
    small, large = rows.iloc[0], rows.iloc[-1]
    verdict = above(
        large[C.MEDIAN_CI_LOW_S] - small[C.MEDIAN_CI_HIGH_S], large[C.MEDIAN_CI_HIGH_S] - small[C.MEDIAN_CI_LOW_S], 0.0
    )
    words = ", ".join(f"m={r['m']}: {r[C.MEDIAN_S]:.3g} s" for _, r in rows.drop_duplicates("m").iterrows())
    return verdict, words


# uncompressed chunks read this fast (the chunk bytes a read touches over its time) leave
# decompression the bottleneck: hopper's fast filesystem, not portal's I/O-bound one
FAST_READ_BYTES_PER_S = 200e6


def _compression_slows(s, shape) -> Result:
    rows = chunked_rows(primary_reads(s, "slice")).dropna(subset=[C.RATIO_CI_LOW])
    plain = rows[rows[C.COMPRESSION] == "none"].set_index(C.CHUNK_SHAPE)
    packed = rows[(rows[C.COMPRESSION] != "none") & rows[C.CHUNK_SHAPE].isin(plain.index)]
    if packed.empty:
        return None
    rate = (plain[C.CHUNK_BYTES_TOUCHED_MEDIAN] / plain[C.MEDIAN_S]).median()
    if not rate >= FAST_READ_BYTES_PER_S:  # the sentence's condition: a fast filesystem (hopper's)
        return None
    states = [
        above(
            r[C.RATIO_CI_LOW] - plain.loc[r[C.CHUNK_SHAPE], C.RATIO_CI_HIGH],
            r[C.RATIO_CI_HIGH] - plain.loc[r[C.CHUNK_SHAPE], C.RATIO_CI_LOW],
            0.0,
        )
        for _, r in packed.iterrows()
    ]
    return majority(states), (
        f"uncompressed z-slices read their chunks at {rate / 1e6:.0f} MB/s; compressed slower than "
        f"uncompressed, same chunk shape: {counts(states)}"
    )


FINDINGS: list[Finding] = [
    Finding(
        "gzip4-ratio",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Ratio",
        "The compression ratios we achieve are on the order of 2.9 to 3.8 in all cases (comparable to the "
        "compression ratio we have seen for the donor dataset A).",
        "gzip-4 compresses every chunked store of MSI spectra 2.9-3.8x (within 10% of the range: inconclusive)",
        "compression: [gzip-4] with MSI-like values (dataset.fill synthetic or a donor)",
        STUDIES + "openmsi/compression-grid.yaml",
        _gzip4_ratio,
    ),
    Finding(
        "edge-padding",
        "OpenMSI",
        OPENMSI,
        "Chunking: File Size",
        "This means, in order to store the 100 x 100 x 100,000 test dataset, we allocate space for at least "
        "128 x 128 x 100,000 records (additional padding may be required in the z dimension).",
        "an uncompressed store whose chunks do not divide the image takes at least the space of its edge chunks "
        "allocated whole",
        "layouts.chunks.xy with a size that does not divide dataset.shape, compression: [none]",
        STUDIES + "openmsi/chunking.yaml",
        _padding,
    ),
    Finding(
        "one-by-one-metadata",
        "OpenMSI",
        OPENMSI,
        "Chunking: File Size",
        "We observe that the file with a chunking of 1 x 1 x 128 is much larger than the other files with a "
        "1 x 1 x n chunked layout.",
        "uncompressed, the 1x1x128 store is the largest of the 1x1xn stores, by more than 5%",
        "layouts.chunks: {xy: [1], z: [128 and another]}, compression: [none]",
        STUDIES + "openmsi/chunking.yaml",
        _one_by_one_128,
    ),
    Finding(
        "contiguous-best-spectra",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "For the spectra selections (see Figure hdf5_chunking_spectra_figure) we observe in most cases a "
        "decrease in the median performance compared to the baseline contiguous data layout.",
        "most chunked stores read 5x5 spectra surely slower than contiguous (median ratio's interval above 1)",
        "cases.spectra, layouts.contiguous and chunks",
        STUDIES + "openmsi/chunking.yaml",
        _against_contiguous("spectra", True, "chunked spectra medians slower than contiguous"),
    ),
    Finding(
        "best-slice-chunks",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "We observe that data layouts with a chunking of m x m x n with m in {4, 8 ,16} and n in {128, 256, "
        "512, 1024, 2048, 4096} show the best z-slice selection performance.",
        "the chunked stores not told apart from the fastest z-slice median all have m in {4, 8, 16} (with stores "
        "of other m measured)",
        "cases.slice, layouts.chunks.xy: [4, 8 or 16, and others]",
        STUDIES + "openmsi/chunking.yaml",
        _best_slice_chunks,
    ),
    Finding(
        "slices-slower-than-spectra",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "When comparing the selection performance plots, we observe that --- even though the amount of data that "
        "is retrieved is only 0.5MB in z-slice selection case compared to 5MB in the spectra selection case--- "
        "the performance for z-slice selection case is generally lower than for the spectra selection case.",
        "where the z-slices select fewer bytes than the spectra, most stores read them surely slower "
        "(median intervals apart)",
        "cases.slice and cases.spectra (slices selecting less than spectra)",
        STUDIES + "openmsi/chunking.yaml",
        _slices_slower,
    ),
    Finding(
        "chunking-helps-subcubes",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "We observe that using chunking generally improves the performance of the selection.",
        "most chunked stores read 5x5x1000 sub-cubes surely faster than contiguous (ratio's interval below 1)",
        "cases.subcube, layouts.contiguous and chunks",
        STUDIES + "openmsi/chunking.yaml",
        _against_contiguous("subcube", False, "chunked sub-cube medians faster than contiguous"),
    ),
    Finding(
        "gzip-levels-size",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Aggression",
        "Overall, we find that for the data layouts tested here, increasing the aggression parameter above 1 does "
        "not have a large impact on the compression ratio and selection performance, whereas high aggression "
        "values may significantly decrease the data write performance.",
        "the median compression ratio at the highest gzip level is less than 1.15x level 1's (more than 1.3x: "
        "does not hold)",
        "compression: gzip-1 and higher levels, e.g. [gzip-1, gzip-4, gzip-8]",
        STUDIES + "openmsi/compression.yaml",
        _gzip_levels_size,
    ),
    Finding(
        "gzip-levels-write",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Aggression",
        "For the data write, we observe that the performance is acceptable for aggression in [1,5] and decreases "
        "significantly for aggression >5.",
        "per chunk shape, writes at gzip levels above 5 take 1.5x or more those at levels 1-5 (median over the "
        "shapes; below 1.2x: does not hold)",
        "compression: gzip levels at most 5 and above 5",
        STUDIES + "openmsi/compression.yaml",
        _gzip_levels_write,
    ),
    Finding(
        "contiguous-fastest-write",
        "OpenMSI",
        OPENMSI,
        "Chunking: Data Write",
        "It is not surprising that the contiguous baseline layout outperforms the chunked layouts in a serial setting.",
        "a serial write of the contiguous store is surely faster than every chunked store's (median intervals apart)",
        "cases.write, layouts.contiguous and chunks",
        STUDIES + "openmsi/write-strategies.yaml",
        _contiguous_fastest_write,
    ),
    Finding(
        "spectrum-writes-slow-with-m",
        "OpenMSI",
        OPENMSI,
        "Chunking: Data Write",
        "It is not surprising that we observes a significant decrease in performance with increasing chunk sizes "
        "m in the x and y dimensions, as each data chunk is modified m*m times.",
        "one spectrum per write, the store of the largest m writes surely slower than the store of the smallest m",
        "cases.write.strategies: [spectrum] with layouts.chunks.xy of two or more sizes",
        STUDIES + "openmsi/write-strategies.yaml",
        _spectrum_writes,
    ),
    Finding(
        "compression-slows-reads",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "In contrast to portal, we observe on hopper a general decrease (of up to 1 order of magnitude) in the "
        "selection performance when using compression compared to when storing the data in raw, uncompressed "
        "form.",
        "on a fast filesystem (uncompressed z-slices read their chunks at 200 MB/s or more, as on hopper), most "
        "compressed stores read z-slices surely slower than the uncompressed store of the same chunk shape",
        "cases.slice, compression: [none, gzip-<n>], on a filesystem that reads at 200 MB/s or more",
        STUDIES + "openmsi/compression.yaml",
        _compression_slows,
    ),
]
