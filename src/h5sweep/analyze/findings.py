"""The studies' findings, checked on a sweep's own numbers.

Each :class:`Finding` states one result of a study h5sweep reproduces (the study, its
section, the statement) and checks it on one filesystem's summary: it returns a verdict with
the numbers it rests on, or None where the sweep did not measure what it needs, and then the
keys that would measure it are named. Register a new one by adding it to :data:`FINDINGS`.
A verdict rests on intervals where the summary has them: a ratio "holds" only where its 95%
interval lies on the stated side. Nothing here imports an I/O library.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from h5sweep.backends import RATIO_TO_REFERENCE, RATIO_TO_REFERENCE_CI_LOW, REFERENCE
from h5sweep.cases.iosize import columns as IC
from h5sweep.cases.metadata import columns as MC
from h5sweep.cases.parallel import columns as PC
from h5sweep.storage import columns as C

HOLDS, FAILS, UNMEASURED = "holds", "does not hold", "not measured"
COLUMNS = [C.FILESYSTEM, C.FINDING, C.STUDY, C.SECTION, C.STATEMENT, C.VERDICT, C.EVIDENCE, C.NEEDS]


@dataclass(frozen=True)
class Finding:
    key: str
    study: str
    section: str
    statement: str
    needs: str  # the config keys that would measure it
    check: Callable[[pd.DataFrame, tuple], tuple[bool, str] | None]


def _shape(text) -> tuple[int, ...]:
    return tuple(int(v) for v in str(text).split("x")) if isinstance(text, str) and text else ()


def _reads(s: pd.DataFrame, case: str, backend: str | None = REFERENCE) -> pd.DataFrame:
    """One case's primary rows (the config's first variant), of one backend (None: all)."""
    rows = s[(s[C.CASE] == case) & s[C.PRIMARY].fillna(False).astype(bool)]
    if backend is not None and C.BACKEND in rows:
        rows = rows[rows[C.BACKEND] == backend]
    return rows


def _contiguous(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.CHUNK_SHAPE].fillna("") == ""]


def _chunked(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.CHUNK_SHAPE].fillna("") != ""]


def gzip_level(compression: str) -> int | None:
    """The level of a gzip compression name (``gzip-4``: 4), or None for any other."""
    head, _, level = str(compression).rpartition("-")
    return int(level) if head == "gzip" and level.isdigit() else None


def _ratio(row) -> str:
    return f"{row[C.RATIO_TO_CONTIGUOUS]:.2f}x ({row[C.RATIO_CI_LOW]:.2f}-{row[C.RATIO_CI_HIGH]:.2f})"


def _name(row) -> str:
    shape = row[C.CHUNK_SHAPE] if isinstance(row[C.CHUNK_SHAPE], str) and row[C.CHUNK_SHAPE] else "contiguous"
    return shape if row[C.COMPRESSION] == "none" else f"{shape} {row[C.COMPRESSION]}"


# --- OpenMSI ----------------------------------------------------------------------------


def _gzip4_ratio(s, shape):
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "gzip-4")].dropna(subset=[C.COMPRESSION_RATIO])
    if rows.empty:
        return None
    ratios = rows[C.COMPRESSION_RATIO]
    median = float(ratios.median())
    return (
        2.9 <= median <= 3.8,
        f"gzip-4 ratio median {median:.2f} over {len(rows)} stores ({ratios.min():.2f}-{ratios.max():.2f})",
    )


def _padding(s, shape):
    if len(shape) != 3:
        return None
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "none")].dropna(subset=[C.FILE_BYTES])
    rows = rows[
        [
            bool(c) and any(n % m for n, m in zip(shape[:2], _shape(c)[:2], strict=True))
            for c in rows[C.CHUNK_SHAPE].fillna("")
        ]
    ]
    if rows.empty:
        return None
    said, holds = [], True
    for _, r in rows.drop_duplicates(C.CHUNK_SHAPE).iterrows():
        m = _shape(r[C.CHUNK_SHAPE])
        padded = math.prod(math.ceil(n / c) * c for n, c in zip(shape, m, strict=True)) / math.prod(shape)
        holds &= r[C.FILE_BYTES] >= 0.99 * padded * r[C.RAW_BYTES]
        said.append(f"{r[C.CHUNK_SHAPE]}: file {r[C.FILE_BYTES] / r[C.RAW_BYTES]:.3f}x raw, edge chunks {padded:.3f}x")
    return holds, "; ".join(said[:4])


def _one_by_one(s, shape):
    rows = s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "none")].dropna(subset=[C.FILE_BYTES])
    rows = rows[[_shape(c)[:2] == (1, 1) for c in rows[C.CHUNK_SHAPE].fillna("")]].drop_duplicates(C.CHUNK_SHAPE)
    if len(rows) < 2:
        return None
    by_n = rows.assign(n=[_shape(c)[-1] for c in rows[C.CHUNK_SHAPE]]).sort_values("n")
    sizes = ", ".join(f"{r[C.CHUNK_SHAPE]} {r[C.FILE_BYTES] / r[C.RAW_BYTES]:.3f}x raw" for _, r in by_n.iterrows())
    return bool(by_n[C.FILE_BYTES].iloc[0] == by_n[C.FILE_BYTES].max()), sizes


def _best_for(case: str, want_contiguous: bool):
    def check(s, shape):
        rows = _reads(s, case)
        if _contiguous(rows).empty or _chunked(rows).empty:
            return None
        faster = _chunked(rows)[_chunked(rows)[C.RATIO_CI_HIGH] < 1]
        best = rows.sort_values(C.MEDIAN_S).iloc[0]
        words = f"fastest median: {_name(best)}; chunked stores surely faster than contiguous: {len(faster)}"
        if len(faster):
            words += f" (best {_ratio(faster.sort_values(C.RATIO_TO_CONTIGUOUS).iloc[0])})"
        return (faster.empty if want_contiguous else not faster.empty), words

    return check


def _one_by_one_worst_slices(s, shape):
    rows = _reads(s, "slice")
    ones = rows[[_shape(c)[:2] == (1, 1) for c in rows[C.CHUNK_SHAPE].fillna("")]]
    if ones.empty or len(rows) < 2:
        return None
    worst = rows.sort_values(C.MEDIAN_S).iloc[-1]
    return _shape(worst[C.CHUNK_SHAPE])[:2] == (
        1,
        1,
    ), f"slowest slice median: {_name(worst)} ({worst[C.MEDIAN_S] * 1e3:.3g} ms)"


def _slices_slower(s, shape):
    slices, spectra = _contiguous(_reads(s, "slice")), _contiguous(_reads(s, "spectra"))
    if slices.empty or spectra.empty:
        return None
    a, b = slices.iloc[0], spectra.iloc[0]
    data = b[C.BYTES_SELECTED] / a[C.BYTES_SELECTED]
    return bool(a[C.MEDIAN_CI_LOW_S] > b[C.MEDIAN_CI_HIGH_S]), (
        f"contiguous slice {a[C.MEDIAN_S] * 1e3:.3g} ms "
        f"({a[C.MEDIAN_CI_LOW_S] * 1e3:.3g}-{a[C.MEDIAN_CI_HIGH_S] * 1e3:.3g}), "
        f"spectra {b[C.MEDIAN_S] * 1e3:.3g} ms ({b[C.MEDIAN_CI_LOW_S] * 1e3:.3g}-{b[C.MEDIAN_CI_HIGH_S] * 1e3:.3g}); "
        f"spectra select {data:.2g}x the slice's bytes"
    )


def _gzip_levels(s, shape, what: str):
    rows = s[s[C.CASE] == "write"].assign(level=[gzip_level(c) for c in s.loc[s[C.CASE] == "write", C.COMPRESSION]])
    rows = rows.dropna(subset=["level"])
    if rows["level"].nunique() < 2 or (
        what == "write" and not ((rows["level"] > 5).any() and (rows["level"] <= 5).any())
    ):
        return None
    by = rows.groupby("level").agg(ratio=(C.COMPRESSION_RATIO, "median"), write=(C.MEDIAN_S, "median"))
    if what == "size":
        low, high = by.index.min(), by.index.max()
        gain = by.loc[high, "ratio"] / by.loc[low, "ratio"]
        return (
            gain < 1.15,
            f"compression ratio {by.loc[low, 'ratio']:.2f} at level {low:g}, "
            f"{by.loc[high, 'ratio']:.2f} at {high:g} ({gain:.2f}x)",
        )
    slow = by.loc[by.index > 5, "write"].median() / by.loc[by.index <= 5, "write"].median()
    return slow > 1.5, f"median write time above level 5 over at most 5: {slow:.2f}x"


def _contiguous_fastest_write(s, shape):
    rows = _reads(s, "write")
    if _contiguous(rows).empty or _chunked(rows).empty:
        return None
    base = _contiguous(rows).iloc[0]
    faster = rows[rows[C.MEDIAN_CI_HIGH_S] < base[C.MEDIAN_CI_LOW_S]]
    words = f"contiguous {base[C.MEDIAN_S]:.3g} s; stores surely faster: {len(faster)}"
    if len(faster):
        words += f" (e.g. {_name(faster.sort_values(C.MEDIAN_S).iloc[0])} {faster[C.MEDIAN_S].min():.3g} s)"
    return faster.empty, words


def _spectrum_writes(s, shape):
    rows = s[(s[C.CASE] == "write") & (s[C.WRITE_STRATEGY] == "spectrum") & (s[C.COMPRESSION] == "none")]
    rows = _chunked(rows)
    if rows.empty:
        return None
    rows = rows.assign(m=[_shape(c)[0] for c in rows[C.CHUNK_SHAPE]])
    by_m = rows.groupby("m")[C.MEDIAN_S].median()
    if len(by_m) < 2:
        return None
    return bool(by_m.iloc[-1] > by_m.iloc[0]), ", ".join(f"m={m}: {t:.3g} s" for m, t in by_m.items())


def _compression_slows(s, shape):
    rows = _chunked(_reads(s, "slice"))
    plain = rows[rows[C.COMPRESSION] == "none"].set_index(C.CHUNK_SHAPE)[C.MEDIAN_S]
    packed = rows[rows[C.COMPRESSION] != "none"]
    pairs = [(r[C.MEDIAN_S] / plain[r[C.CHUNK_SHAPE]]) for _, r in packed.iterrows() if r[C.CHUNK_SHAPE] in plain]
    if not pairs:
        return None
    factor = float(np.median(pairs))
    return (
        factor > 1,
        f"compressed over uncompressed slice median, same chunk shape: median {factor:.2f}x "
        f"({min(pairs):.2f}-{max(pairs):.2f}, {len(pairs)} pairs)",
    )


def _scaling(s, shape):
    rows = s[s[C.CASE] == "scaling"]
    if rows.empty or PC.PROCESSES not in rows:
        return None
    by_p = rows.groupby(PC.PROCESSES)[C.MEDIAN_S].median()
    if len(by_p) < 2:
        return None
    p = max(q for q in by_p.index if q <= 8)
    speedup = by_p.iloc[0] / by_p[p]
    return speedup >= 0.7 * p, f"speed-up {speedup:.2f} at {p} processes (near-linear: at least {0.7 * p:.2g})"


# --- HDF User's Guide ch. 14 -------------------------------------------------------------


def _chunking_helps_slow_axis(s, shape):
    rows = _chunked(_reads(s, "slice"))
    if rows.empty or C.RATIO_CI_HIGH not in rows or rows[C.RATIO_CI_HIGH].isna().all():
        return None
    best = rows.sort_values(C.RATIO_TO_CONTIGUOUS).iloc[0]
    return bool(best[C.RATIO_CI_HIGH] < 0.5), f"best chunked slice: {_name(best)} {_ratio(best)} of contiguous"


def _chunking_hurts_fast_axis(s, shape):
    rows = _chunked(_reads(s, "spectra"))
    if rows.empty or rows[C.RATIO_CI_LOW].isna().all():
        return None
    worst = rows.sort_values(C.RATIO_TO_CONTIGUOUS).iloc[-1]
    return bool(worst[C.RATIO_CI_LOW] > 2), f"worst chunked spectra: {_name(worst)} {_ratio(worst)} of contiguous"


def _cache_thrash(s, shape):
    rows = s[s[C.CASE].isin(["slice", "spectra", "subcube", "rows", "column"])].dropna(subset=[C.CHUNK_CACHE_BYTES])
    if rows[C.CHUNK_CACHE_BYTES].nunique() < 2:
        return None
    small, large = rows[C.CHUNK_CACHE_BYTES].min(), rows[C.CHUNK_CACHE_BYTES].max()
    keys = [C.LAYOUT_ID, C.COMPRESSION, C.CASE]
    a = rows[rows[C.CHUNK_CACHE_BYTES] == small].groupby(keys)[C.MEDIAN_S].median()
    b = rows[rows[C.CHUNK_CACHE_BYTES] == large].groupby(keys)[C.MEDIAN_S].median()
    gain = (a / b).dropna()
    if gain.empty:
        return None
    top = gain.idxmax()
    return bool(
        gain.max() >= 2
    ), f"largest gain of a {int(large)} B cache over {int(small)} B: {gain.max():.2f}x ({', '.join(map(str, top))})"


def _many_datasets(s, shape):
    rows = s[(s[C.CASE] == "metadata")].dropna(subset=[MC.N_DATASETS])
    if rows[MC.N_DATASETS].nunique() < 2:
        return None
    by_n = rows.groupby(MC.N_DATASETS)[MC.METADATA_FILE_BYTES].median()
    return bool(by_n.iloc[-1] > by_n.iloc[0]), ", ".join(
        f"{int(n)} datasets: {b / 1e3:.4g} kB" for n, b in by_n.items()
    )


# --- Kang ----------------------------------------------------------------------------------


def _zarr_slower(s, shape):
    if RATIO_TO_REFERENCE not in s:
        return None
    rows = s[s[C.PRIMARY].fillna(False).astype(bool)].dropna(subset=[RATIO_TO_REFERENCE])
    if rows.empty:
        return None
    slower = (rows[RATIO_TO_REFERENCE_CI_LOW] > 1).mean()
    return (
        slower > 0.5,
        f"{100 * slower:.0f}% of {len(rows)} other-backend rows surely slower than HDF5 "
        f"(median ratio {rows[RATIO_TO_REFERENCE].median():.2f})",
    )


def _io_operations(s, shape):
    rows = _reads(s, "column", backend=None)
    if rows.empty or rows[C.BACKEND].nunique() < 2:
        return None
    calls = rows.groupby(C.BACKEND)[C.READ_CALLS_MEDIAN].median()
    others = calls.drop(REFERENCE, errors="ignore")
    if REFERENCE not in calls or others.empty:
        return None
    factor = calls[REFERENCE] / others.min()
    return (
        factor >= 1.5,
        f"read calls per column read: HDF5 {calls[REFERENCE]:.0f}, other {others.min():.0f} ({factor:.2f}x)",
    )


def _same_size_same_time(s, shape):
    rows = _chunked(_reads(s, "whole"))
    if rows.empty:
        return None
    rows = rows[rows[C.COMPRESSION] == "none"].assign(size=[math.prod(_shape(c)) for c in rows[C.CHUNK_SHAPE]])
    groups = [g for _, g in rows.groupby("size") if len(g) > 1]
    if not groups:
        return None
    apart = [g for g in groups if g[C.MEDIAN_CI_LOW_S].max() > g[C.MEDIAN_CI_HIGH_S].min()]
    return (
        not apart,
        f"{len(groups)} chunk sizes with several shapes, {len(apart)} with medians whose intervals do not overlap",
    )


# --- Folk & Choi ------------------------------------------------------------------------------


def _passes(s):
    rows = s[s[C.CASE] == "parallel"]
    return rows if not rows.empty and PC.MODE in rows else None


def _collective_vs_independent(s, shape):
    rows = _passes(s)
    if rows is None:
        return None
    rows = _contiguous(rows[rows[PC.OPERATION] == "read"])
    said, holds = [], True
    for p, g in rows.groupby(PC.PROCESSES):
        modes = g.groupby(PC.MODE)[PC.BYTES_PER_S_MEDIAN].max()
        if not {"collective", "independent"} <= set(modes.index):
            continue
        ratio = modes["collective"] / modes["independent"]
        holds &= (ratio >= 4) if p >= 8 else (0.8 <= ratio <= 1.25)
        said.append(f"P={int(p)}: collective {ratio:.2f}x independent")
    if not said:
        return None
    return holds, "; ".join(said) + " (stated: no different at 1-2, 4-7x at 8 and 12)"


def _chunking_improves_passes(s, shape):
    rows = _passes(s)
    if rows is None:
        return None
    keys = [PC.OPERATION, PC.MODE, PC.PROCESSES]
    best = rows.assign(kind=np.where(rows[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked"))
    table = best.groupby([*keys, "kind"])[PC.BYTES_PER_S_MEDIAN].max().unstack("kind")
    if not {"contiguous", "chunked"} <= set(table.columns):
        return None
    table = table.dropna()
    better = (table["chunked"] > table["contiguous"]).mean()
    return better == 1.0, f"chunked faster than contiguous in {100 * better:.0f}% of {len(table)} (operation, mode, P)"


# --- I/O lab ------------------------------------------------------------------------------------


def _hdf5_as_raw(s, shape):
    rows = s[(s[C.CASE] == "iosize")]
    if rows.empty or IC.API not in rows:
        return None
    rows = rows[rows[IC.REQUEST_BYTES] == rows[IC.REQUEST_BYTES].max()]
    by_api = rows.groupby(IC.API)[C.MEDIAN_S].median()
    if len(by_api) < 2:
        return None
    factor = by_api.max() / by_api.min()
    return factor <= 2, f"at {int(rows[IC.REQUEST_BYTES].max())} B per request: slowest API {factor:.2f}x the fastest"


def _request_size(s, shape):
    rows = s[(s[C.CASE] == "iosize")]
    if rows.empty or IC.REQUEST_BYTES not in rows or rows[IC.REQUEST_BYTES].nunique() < 2:
        return None
    rate = (rows[C.BYTES_SELECTED] if C.BYTES_SELECTED in rows else rows[C.RAW_BYTES]) / rows[C.MEDIAN_S]
    by = rows.assign(rate=rate).groupby(IC.REQUEST_BYTES)["rate"].median()
    gain = by.iloc[-1] / by.iloc[0]
    return gain >= 2, f"throughput at {int(by.index[-1])} B over {int(by.index[0])} B per request: {gain:.2f}x"


def _random_worst(s, shape):
    rows = s[s[C.CASE].isin(["slice", "spectra", "subcube"])].dropna(subset=[C.POLICY])
    if "random" not in set(rows[C.POLICY]) or rows[C.POLICY].nunique() < 2:
        return None
    by = rows.groupby(C.POLICY)[C.MEDIAN_S].median()
    return bool(by.idxmax() == "random"), ", ".join(f"{p} {t * 1e3:.3g} ms" for p, t in by.items())


FINDINGS: list[Finding] = [
    Finding(
        "gzip4-ratio",
        "OpenMSI",
        "Compression",
        "gzip level 4 compresses the cube 2.9-3.8x",
        "compression: [gzip-4] with dataset.fill synthetic or a donor",
        _gzip4_ratio,
    ),
    Finding(
        "edge-padding",
        "OpenMSI",
        "Chunking: file size",
        "chunks that do not divide the image allocate whole edge chunks (32x32 pads 100x100 to 128x128, about 1.28 GB)",
        "layouts.chunks.xy with a size that does not divide dataset.shape, compression: [none]",
        _padding,
    ),
    Finding(
        "one-by-one-metadata",
        "OpenMSI",
        "Chunking: file size",
        "1x1xn files grow from chunk-index metadata, 1x1x128 the largest",
        "layouts.chunks: {xy: [1], z: [two or more]}, compression: [none]",
        _one_by_one,
    ),
    Finding(
        "contiguous-best-spectra",
        "OpenMSI",
        "Chunking: access cases",
        "contiguous storage is best for spectra",
        "cases.spectra, layouts.contiguous and chunks",
        _best_for("spectra", True),
    ),
    Finding(
        "one-by-one-worst-slices",
        "OpenMSI",
        "Chunking: access cases",
        "1x1xn chunks are the worst for ion images (z-slices)",
        "cases.slice, layouts.chunks.xy: [1, ...]",
        _one_by_one_worst_slices,
    ),
    Finding(
        "slices-slower-than-spectra",
        "OpenMSI",
        "Chunking: access cases",
        "on contiguous storage z-slices are slower than spectra despite 10x less data",
        "cases.slice and cases.spectra, layouts.contiguous",
        _slices_slower,
    ),
    Finding(
        "chunking-helps-subcubes",
        "OpenMSI",
        "Chunking: access cases",
        "chunking speeds up sub-cube reads, first access included",
        "cases.subcube, layouts.contiguous and chunks",
        _best_for("subcube", False),
    ),
    Finding(
        "gzip-levels-size",
        "OpenMSI",
        "Compression level",
        "gzip levels above 1 change the file size little",
        "compression: two or more gzip levels, e.g. [gzip-1, gzip-4, gzip-8]",
        lambda s, shape: _gzip_levels(s, shape, "size"),
    ),
    Finding(
        "gzip-levels-write",
        "OpenMSI",
        "Compression level",
        "gzip levels above 5 slow writing sharply",
        "compression: gzip levels at most 5 and above 5",
        lambda s, shape: _gzip_levels(s, shape, "write"),
    ),
    Finding(
        "contiguous-fastest-write",
        "OpenMSI",
        "Writing",
        "contiguous is the fastest serial write",
        "cases.write, layouts.contiguous and chunks",
        _contiguous_fastest_write,
    ),
    Finding(
        "spectrum-writes-slow-with-m",
        "OpenMSI",
        "Writing",
        "one spectrum per write slows as m grows (each chunk rewritten m x m times)",
        "cases.write.strategies: [spectrum] with layouts.chunks.xy of two or more sizes",
        _spectrum_writes,
    ),
    Finding(
        "compression-slows-reads",
        "OpenMSI",
        "Compression: reads",
        "on a fast filesystem gzip slows z-slice reads (up to 10x on hopper)",
        "cases.slice, compression: [none, gzip-<n>]",
        _compression_slows,
    ),
    Finding(
        "local-scaling",
        "OpenMSI",
        "Local scaling",
        "numpy.var over z-slices scales near-linearly to 8 processes on a good filesystem",
        "cases.scaling.processes: [1, ...]",
        _scaling,
    ),
    Finding(
        "chunking-helps-slow-axis",
        "User's Guide ch. 14",
        "14.4 Chunking",
        "chunking substantially improves reads along the slowest-varying dimensions (ion images: 2x or more)",
        "cases.slice, layouts.contiguous and chunks",
        _chunking_helps_slow_axis,
    ),
    Finding(
        "chunking-hurts-fast-axis",
        "User's Guide ch. 14",
        "14.4 Chunking",
        "chunking can substantially degrade reads along the fastest-varying dimension (spectra: 2x or more)",
        "cases.spectra, layouts.contiguous and chunks",
        _chunking_hurts_fast_axis,
    ),
    Finding(
        "cache-thrashing",
        "User's Guide ch. 14",
        "14.5 Chunk cache",
        "a chunk cache smaller than the chunks along the read's fastest dimension thrashes: "
        "a large enough one reads 2x or more faster",
        "chunk_cache: two sizes or more",
        _cache_thrash,
    ),
    Finding(
        "many-datasets",
        "User's Guide ch. 14",
        "14.2.1 Metadata",
        "many small datasets cost more file than one large one",
        "cases.metadata",
        _many_datasets,
    ),
    Finding(
        "zarr-slower",
        "Kang",
        "Results",
        "Zarr reads are slower than HDF5's (a file open per chunk)",
        "backends: [hdf5, zarr]",
        _zarr_slower,
    ),
    Finding(
        "hdf5-io-operations",
        "Kang",
        "Results",
        "reading a column, HDF5 makes about twice Zarr's I/O operations (metadata blocks)",
        "backends: [hdf5, zarr], cases.column (2-D dataset)",
        _io_operations,
    ),
    Finding(
        "same-size-same-time",
        "Kang",
        "Results",
        "chunk shapes of the same size give the same I/O time",
        "cases.whole, layouts.shapes of equal chunk size",
        _same_size_same_time,
    ),
    Finding(
        "collective-vs-independent",
        "Folk & Choi",
        "Contiguous, 525 columns",
        "collective is 4-7x faster than independent at 8 and 12 processes and no different at 1-2",
        "cases.parallel with modes independent and collective",
        _collective_vs_independent,
    ),
    Finding(
        "chunking-improves-passes",
        "Folk & Choi",
        "Chunked storage",
        "column chunks improve every mode of parallel access",
        "cases.parallel, layouts.contiguous and chunks",
        _chunking_improves_passes,
    ),
    Finding(
        "hdf5-as-raw",
        "I/O lab",
        "I/O size",
        "HDF5 is about as fast as raw binary at large requests (within 2x)",
        "cases.iosize",
        _hdf5_as_raw,
    ),
    Finding(
        "request-size",
        "I/O lab",
        "I/O size",
        "throughput grows with the request size (2x or more from the smallest to the largest)",
        "cases.iosize.sizes: two or more",
        _request_size,
    ),
    Finding(
        "random-worst",
        "I/O lab",
        "Visiting policies",
        "random visiting is the slowest; aligned or localized much better",
        "policies: [random, aligned, localized]",
        _random_worst,
    ),
]


def evaluate(summary: pd.DataFrame, shape: tuple) -> pd.DataFrame:
    """Every finding's verdict per filesystem of ``summary``, with its evidence."""
    rows = []
    filesystems = sorted(set(summary[C.FILESYSTEM])) if C.FILESYSTEM in summary and len(summary) else ["-"]
    for filesystem in filesystems:
        mine = summary[summary[C.FILESYSTEM] == filesystem] if len(summary) else summary
        for finding in FINDINGS:
            try:
                result = finding.check(mine, tuple(shape))
            except (KeyError, ValueError, IndexError, ZeroDivisionError):  # a column the sweep lacks
                result = None
            verdict, evidence = (
                (UNMEASURED, f"measure it with {finding.needs}")
                if result is None
                else (
                    HOLDS if result[0] else FAILS,
                    result[1],
                )
            )
            rows.append(
                {
                    C.FILESYSTEM: filesystem,
                    C.FINDING: finding.key,
                    C.STUDY: finding.study,
                    C.SECTION: finding.section,
                    C.STATEMENT: finding.statement,
                    C.VERDICT: verdict,
                    C.EVIDENCE: evidence,
                    C.NEEDS: finding.needs,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def markdown(table: pd.DataFrame, title: str = "Findings of the studies, checked on this sweep") -> str:
    """``findings.md``: a count of verdicts, then one table per filesystem."""
    lines = [f"# {title}", ""]
    counts = table[C.VERDICT].value_counts()
    lines += [
        f"{len(FINDINGS)} findings of the studies h5sweep reproduces, each checked on every filesystem: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in (HOLDS, FAILS, UNMEASURED))
        + ". A verdict rests on the 95% intervals where the summary has them; 'not measured' names the keys "
        "that would measure it.",
        "",
    ]
    keys = [C.RUN, C.FILESYSTEM] if C.RUN in table else [C.FILESYSTEM]
    for key, group in table.groupby(keys, sort=True):
        lines += [
            f"## {' '.join(key)}",
            "",
            "| study | section | finding | verdict | evidence |",
            "|---|---|---|---|---|",
        ]
        for _, r in group.iterrows():
            lines.append(f"| {r[C.STUDY]} | {r[C.SECTION]} | {r[C.STATEMENT]} | {r[C.VERDICT]} | {r[C.EVIDENCE]} |")
        lines.append("")
    return "\n".join(lines)


def write(summary_path: str, shape: tuple, csv_out: str, md_out: str) -> pd.DataFrame:
    """The findings job: ``findings.csv`` and ``findings.md`` from the typed summary."""
    table = evaluate(pd.read_parquet(summary_path), shape)
    table.to_csv(csv_out, index=False)
    with open(md_out, "w") as out:
        out.write(markdown(table))
    return table
