"""The OpenMSI study's findings on the write case's rows (its write times, and the sizes of the
files it wrote), checked on a sweep's summary (registered by this case's spec, ``findings``; the
rules in :mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import math

from h5sweep.cases.studies.openmsi.rows import hdf5_rows as _hdf5
from h5sweep.cases.studies.openmsi.rows import uncompressed as _uncompressed
from h5sweep.cases.studies.openmsi.rows import values_not_judged as _values_not_judged
from h5sweep.cases.write.write_times import contiguous_fastest_write, gzip_levels_write, spectrum_writes
from h5sweep.kit.claims import (
    OPENMSI,
    STUDIES,
    UNMEASURED,
    Finding,
    Result,
    chunked_rows,
    every,
    shape_of,
)
from h5sweep.storage import columns as C


def _ratio_grid(chunk: str) -> bool:
    """The chunkings of the study's compression ratios: m x m x 2048, m in 1..10 (seed l.404,
    its figure of l.364's ratios)."""
    m = shape_of(chunk)
    return len(m) == 3 and m[0] == m[1] and 1 <= m[0] <= 10 and m[2] == 2048


def _gzip4_ratio(s, shape) -> Result:
    rows = _hdf5(s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "gzip-4")]).dropna(subset=[C.COMPRESSION_RATIO])
    rows = chunked_rows(rows).drop_duplicates(C.LAYOUT_ID)
    rows = rows[[_ratio_grid(c) for c in rows[C.CHUNK_SHAPE]]]
    if rows.empty:
        return None
    why = _values_not_judged(s, opt_in=False)
    if why:
        return UNMEASURED, why
    ratios = rows[C.COMPRESSION_RATIO]
    words = (
        f"gzip-4 ratio median {ratios.median():.2f} over {len(rows)} m x m x 2048 stores "
        f"({ratios.min():.2f}-{ratios.max():.2f})"
    )
    if ratios.between(2.9, 3.8).all():
        return True, words
    # "on the order of 2.9 to 3.8": within 10% of the range is not a clear miss
    if (ratios < 2.9 * 0.9).any() or (ratios > 3.8 * 1.1).any():
        return False, words
    return None, words + "; outside 2.9-3.8 by less than 10%"


def _padding(s, shape) -> Result:
    if len(shape) != 3:
        return None
    rows = _uncompressed(_hdf5(s[s[C.CASE] == "write"])).dropna(subset=[C.FILE_BYTES])
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
    rows = _uncompressed(_hdf5(s[s[C.CASE] == "write"])).dropna(subset=[C.FILE_BYTES])
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


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "gzip4-ratio",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Ratio",
        "The compression ratios we achieve are on the order of 2.9 to 3.8 in all cases (comparable to the "
        "compression ratio we have seen for the donor dataset A).",
        "gzip-4 compresses every m x m x 2048 HDF5 store (m in 1-10, the study's) of MSI data 2.9-3.8x (within "
        "10% of the range: inconclusive); judged on a donor's values only (synthetic values compress as the "
        "generator was tuned to, opt-in or not)",
        "compression: [gzip-4], layouts.chunks: {xy: [1 to 10], z: [2048]}, dataset.fill a donor",
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
        "the sentence's example: 32 x 32 x n chunks of the 100 x 100 image allocate 128 x 128; widened to the "
        "previous sentence's rule (l.211), every uncompressed store whose xy chunks do not divide the image takes "
        "at least the space of its edge chunks allocated whole (the study: hopper /scratch; file sizes, judged "
        "here on the filesystem measured)",
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
        "uncompressed, the 1x1x128 store is the largest of the 1x1xn stores, by more than 5% (h5sweep's reading "
        "of 'much larger'; the study: hopper /scratch; file sizes, judged here on the filesystem measured)",
        "layouts.chunks: {xy: [1], z: [128 and another]}, compression: [none]",
        STUDIES + "openmsi/chunking.yaml",
        _one_by_one_128,
    ),
    Finding(
        "gzip-levels-write",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Aggression",
        "For the data write, we observe that the performance is acceptable for aggression in [1,5] and decreases "
        "significantly for aggression >5.",
        "per chunk shape and write strategy, every write at a gzip level above 5 takes surely at least 1.5x as "
        "long as every write at levels 1-5 (the interval of their ratio wholly above 1.5: h5sweep's reading of "
        "'decreases significantly'; a raced-out store at least its race bound times the best store's median); "
        "'acceptable for [1,5]' is not judged; on a donor's values, on synthetic ones only where the config opts "
        "in",
        "compression: gzip levels at most 5 and above 5, dataset.fill a donor (or "
        "dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        gzip_levels_write,
    ),
    Finding(
        "contiguous-fastest-write",
        "OpenMSI",
        OPENMSI,
        "Chunking: Data Write",
        "It is not surprising that the contiguous baseline layout outperforms the chunked layouts in a serial setting.",
        "with each write strategy, the uncompressed contiguous store writes surely faster than every uncompressed "
        "chunked store (median intervals of 6 or more writes apart; a raced-out store at least its race bound "
        "times the best store's median, the race's reference; the study: hopper /project; judged here on the "
        "filesystem measured)",
        "cases.write, layouts.contiguous and chunks, compression: [none]",
        STUDIES + "openmsi/write-strategies.yaml",
        contiguous_fastest_write,
    ),
    Finding(
        "spectrum-writes-slow-with-m",
        "OpenMSI",
        OPENMSI,
        "Chunking: Data Write",
        "It is not surprising that we observes a significant decrease in performance with increasing chunk sizes "
        "m in the x and y dimensions, as each data chunk is modified m*m times.",
        "one spectrum per write, uncompressed m x m x n chunks: each step up in m writes surely slower than the "
        "step before, per n, but the step to m = 32 where n >= 1024 (the next sentence's exception: those write "
        "faster) (median intervals of 6 or more writes apart; a raced-out store at least its race bound times the "
        "best store's median, so two raced-out stores are not told apart; the study: hopper /scratch; judged here "
        "on the filesystem measured)",
        "cases.write.strategies: [spectrum] with layouts.chunks.xy of two or more sizes, compression: [none]",
        STUDIES + "openmsi/write-strategies.yaml",
        spectrum_writes,
    ),
)
