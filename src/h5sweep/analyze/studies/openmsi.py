"""The findings of OpenMSI's chunking and compression study, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`).

Writes race (:mod:`h5sweep.cases.write.race`): a store separated from the best of its write variant
writes no more, so its row has one write and no interval, only the race's bound
(``raced_out_at_least``: its time is at least that many times the best's). A finding on write times
takes that bound times the lowest interval end of the variant's measured stores as the raced-out
store's lower end, with no upper end."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.analyze.studies.words import ms_words as _ms
from h5sweep.analyze.studies.words import store_name as _name
from h5sweep.backends import REFERENCE
from h5sweep.cases.claims import (
    OPENMSI,
    STUDIES,
    UNMEASURED,
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

# A finding that depends on the values (a compression ratio, a codec's speed) judges a donor's
# values; synthetic ones (fill synthetic or chunk-index) only where the config opts in: the
# generator's values compress as it was tuned to, so a ratio measured on them tests the
# generator, not MSI data.
OPT_IN = "dataset.judge_synthetic_values"


def _fills(s) -> list[str]:
    return sorted(set(s[C.FILL].dropna())) if C.FILL in s else []


def _values_not_judged(s) -> str | None:
    """Why a finding that depends on the values does not judge this summary's (None: it does)."""
    fills = _fills(s)
    if not fills:
        return "the summary does not say where its values came from (no fill column)"
    if fills == ["donor"]:
        return None
    if C.JUDGE_SYNTHETIC_VALUES in s and s[C.JUDGE_SYNTHETIC_VALUES].fillna(False).astype(bool).all():
        return None
    return (
        f"the values are {', '.join(fills)}, not a donor's MSI data: a compression ratio or codec speed "
        f"measured on them tests h5sweep's generator (set dataset.fill to a donor, or {OPT_IN}: true to "
        "judge the generator's values)"
    )


def _on_values(s) -> str:
    """Where the values were not a donor's, the evidence says whose they were."""
    fills = _fills(s)
    return "" if fills == ["donor"] else f"; on {', '.join(fills)} values ({OPT_IN}: true)"


def _hdf5(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.BACKEND] == REFERENCE] if C.BACKEND in rows else rows


def _uncompressed(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.COMPRESSION] == "none"]


def _one_state(s: pd.DataFrame, *cases: str) -> list[pd.DataFrame]:
    """Each read case's HDF5 rows of its primary variant, all in one cache state, so that no
    store's first accesses are set against another's sustained reads: the state most of the
    cases' reads were in (a row's state is measured: a read meant warm whose pages were gone
    is cold)."""
    primary = [primary_reads(s, case) for case in cases]
    if C.CACHE_STATE not in s or any(p.empty for p in primary):
        return primary
    rows = [
        _hdf5(s[(s[C.CASE] == c) & s[C.VARIANT].isin(set(p[C.VARIANT]))]) for c, p in zip(cases, primary, strict=True)
    ]
    state = pd.concat(rows).groupby(C.CACHE_STATE)[C.REPEATS].sum().idxmax()
    return [r[r[C.CACHE_STATE] == state] for r in rows]


LOW, HIGH = "_low", "_high"


def _write_ends(s: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (write rows of ``s``) with each store's interval of its write time (``LOW``,
    ``HIGH``): its median's, or where the race stopped it, at least its bound times the lowest
    interval end of its variant's stores measured to the end (the race's best is one of them),
    with no upper end; where a write was stopped at its limit, no upper end either, and where
    every write was, at least the limit."""
    writes = s[s[C.CASE] == "write"]
    raced = writes[C.RACED_OUT_AT_LEAST].notna() if C.RACED_OUT_AT_LEAST in writes else writes[C.CASE].isna()
    base = writes[~raced].groupby(C.VARIANT)[C.MEDIAN_CI_LOW_S].min()
    low = rows[C.MEDIAN_CI_LOW_S].astype(float)
    high = rows[C.MEDIAN_CI_HIGH_S].astype(float)
    if C.RACED_OUT_AT_LEAST in rows:
        bound = rows[C.RACED_OUT_AT_LEAST].astype(float)
        out = bound.notna()
        low = low.where(~out, np.fmax(low, bound * rows[C.VARIANT].map(base).astype(float)))
        high = high.where(~out | high.notna(), math.inf)
    if C.WRITES_STOPPED in rows:
        stopped = rows[C.WRITES_STOPPED].astype(float).fillna(0)
        high = high.where(stopped == 0, math.inf)
        if C.LIMIT_S in rows:
            every_write = (stopped > 0) & (stopped >= rows[C.REPEATS].astype(float))
            low = low.where(~every_write, np.fmax(low, rows[C.LIMIT_S].astype(float)))
    return rows.assign(**{LOW: low, HIGH: high})


def _slower(a, b) -> bool | None:
    """Whether store ``a`` surely writes (or reads) slower than ``b``: True where its interval
    lies wholly above b's, False where wholly at or below, None where they overlap."""
    return above(a[LOW] - b[HIGH], a[HIGH] - b[LOW], 0.0)


def _span(r) -> str:
    if math.isinf(r[HIGH]):
        why = "raced out" if not pd.isna(r.get(C.RACED_OUT_AT_LEAST)) else "a write stopped at its limit"
        return f"at least {r[LOW]:.3g} s ({why})" if not pd.isna(r[LOW]) else f"{r[C.MEDIAN_S]:.3g} s ({why})"
    if pd.isna(r[LOW]):
        return f"{r[C.MEDIAN_S]:.3g} s (one write, no interval)"
    return f"{r[C.MEDIAN_S]:.3g} s ({r[LOW]:.3g}-{r[HIGH]:.3g})"


def _gzip4_ratio(s, shape) -> Result:
    rows = _hdf5(s[(s[C.CASE] == "write") & (s[C.COMPRESSION] == "gzip-4")]).dropna(subset=[C.COMPRESSION_RATIO])
    rows = chunked_rows(rows).drop_duplicates(C.LAYOUT_ID)
    if rows.empty:
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    ratios = rows[C.COMPRESSION_RATIO]
    words = (
        f"gzip-4 ratio median {ratios.median():.2f} over {len(rows)} chunked stores "
        f"({ratios.min():.2f}-{ratios.max():.2f}){_on_values(s)}"
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


def _against_contiguous(case: str, slower: bool, words: str):
    """A check that most uncompressed chunked stores (the chunking study's) read ``case``
    surely slower (or faster) than contiguous: the paired ratio's interval above (below) 1."""

    def check(s, shape) -> Result:
        rows = _uncompressed(_one_state(s, case)[0])
        chunked = chunked_rows(rows).dropna(subset=[C.RATIO_CI_LOW])
        if contiguous_rows(rows).empty or chunked.empty:
            return None
        side = above if slower else below
        states = [side(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH], 1.0) for _, r in chunked.iterrows()]
        return majority(states), f"{words}: {counts(states)}"

    return check


# the chunkings the study compared (m x m x n), and the sentence's best among them
GRID_M, GRID_N = (1, 2, 4, 8, 16, 32), (128, 256, 512, 1024, 2048, 4096, 8192)
BEST_SLICE_M = (4, 8, 16)
BEST_SLICE_N = (128, 256, 512, 1024, 2048, 4096)


def _in_grid(chunk: str) -> bool:
    m = shape_of(chunk)
    return len(m) == 3 and m[0] == m[1] and m[0] in GRID_M and m[2] in GRID_N


def _best_slice_chunks(s, shape) -> Result:
    rows = chunked_rows(_uncompressed(_one_state(s, "slice")[0])).dropna(subset=[C.MEDIAN_CI_LOW_S])
    rows = rows[[_in_grid(c) for c in rows[C.CHUNK_SHAPE]]]  # a chunking the study did not compare says nothing
    inside = {c for c in rows[C.CHUNK_SHAPE] if shape_of(c)[0] in BEST_SLICE_M and shape_of(c)[-1] in BEST_SLICE_N}
    if not inside or inside == set(rows[C.CHUNK_SHAPE]):  # both sides of the claim must be measured
        return None
    fastest = rows.sort_values(C.MEDIAN_S).iloc[0]
    tied = rows[rows[C.MEDIAN_CI_LOW_S] <= fastest[C.MEDIAN_CI_HIGH_S]]  # not told apart from the fastest
    states = [c in inside for c in tied[C.CHUNK_SHAPE]]
    verdict = True if all(states) else False if not any(states) else None
    return verdict, (
        f"fastest z-slice median {_name(fastest)} {_ms(fastest)}; not told apart from it: "
        + ", ".join(_name(r) for _, r in tied.head(6).iterrows())
        + f" ({sum(states)} of {len(states)} with m in {{4, 8, 16}} and n in 128-4096)"
    )


def _slices_slower(s, shape) -> Result:
    slices, spectra = _one_state(s, "slice", "spectra")
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


READS = ("slice", "spectra", "subcube")
# "a large impact": a level's compression ratio more than 1.3x level 1's (below 1.15x: not
# large); a selection more than 1.5x faster or slower than at level 1
SIZE_SMALL, SIZE_LARGE, READ_LARGE = 1.15, 1.3, 1.5


def _by_level(rows: pd.DataFrame) -> pd.DataFrame:
    """The HDF5 chunked stores' rows of a gzip level, with the level."""
    rows = chunked_rows(_hdf5(rows))
    return rows.assign(level=[gzip_level(c) for c in rows[C.COMPRESSION]]).dropna(subset=["level"])


def _gzip_levels_size(s, shape) -> Result:
    writes = _by_level(s[s[C.CASE] == "write"]).drop_duplicates([C.LAYOUT_ID, C.COMPRESSION])
    sizes, said = [], []
    for chunk, g in writes.groupby(C.CHUNK_SHAPE, sort=False):
        one = g[g["level"] == 1]
        for _, r in g[g["level"] > 1].iterrows() if len(one) else ():
            gain = r[C.COMPRESSION_RATIO] / one[C.COMPRESSION_RATIO].iloc[0]
            far = max(gain, 1 / gain)
            sizes.append(True if far < SIZE_SMALL else False if far > SIZE_LARGE else None)
            said.append(f"{chunk} gzip-{r['level']:g} {gain:.2f}x")
    reads, slow = [], []
    for case in READS:
        rows = _by_level(_one_state(s, case)[0])
        for chunk, g in rows.groupby(C.CHUNK_SHAPE, sort=False):
            one = g[g["level"] == 1]
            for _, r in g[g["level"] > 1].iterrows() if len(one) else ():
                o = one.iloc[0]
                low, high = r[C.MEDIAN_CI_LOW_S] / o[C.MEDIAN_CI_HIGH_S], r[C.MEDIAN_CI_HIGH_S] / o[C.MEDIAN_CI_LOW_S]
                inside = above(low, high, 1 / READ_LARGE) and below(low, high, READ_LARGE)
                outside = below(low, high, 1 / READ_LARGE) or above(low, high, READ_LARGE)
                reads.append(True if inside else False if outside else None)
                if reads[-1] is not True:
                    slow.append(f"{case} {chunk} gzip-{r['level']:g} {low:.2f}-{high:.2f}x")
    if not sizes or not reads:  # the sentence's two clauses: the ratio and the selections
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    verdict = every([every(sizes), every(reads)])
    words = (
        f"compression ratio at levels above 1 over level 1's, per chunk shape: {', '.join(said[:6])} "
        f"({counts(sizes)} within {SIZE_SMALL}x); selections (slice, spectra, sub-cube) at levels above 1 over "
        f"level 1's, per chunk shape: {counts(reads)} within {READ_LARGE}x either way"
        + (f" (not: {', '.join(slow[:4])})" if slow else "")
        + _on_values(s)
    )
    return verdict, words


def _gzip_levels_write(s, shape) -> Result:
    writes = s[s[C.CASE] == "write"]
    rows = _write_ends(s, _by_level(writes))
    verdicts, said = [], []
    for (variant, chunk), g in rows.groupby([C.VARIANT, C.CHUNK_SHAPE], sort=False):
        high, low = g[g["level"] > 5], g[g["level"] <= 5]
        if high.empty or low.empty:
            continue
        states = [_slower(h, lo) for _, h in high.iterrows() for _, lo in low.iterrows()]
        verdicts.append(every(states))
        if verdicts[-1] is not True or len(said) < 2:
            said.append(f"{chunk} ({variant}): {counts(states)}")
    if not verdicts:
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    words = (
        f"per chunk shape, each write above level 5 surely slower than each at levels 1-5: "
        f"{sum(v is True for v in verdicts)} of {len(verdicts)} shapes; " + "; ".join(said[:4]) + _on_values(s)
    )
    return every(verdicts), words


def _contiguous_fastest_write(s, shape) -> Result:
    rows = _write_ends(s, _uncompressed(_hdf5(s[s[C.CASE] == "write"])))
    verdicts, said = [], []
    for variant, g in rows.groupby(C.VARIANT, sort=False):  # each strategy apart
        base, chunked = contiguous_rows(g), chunked_rows(g)
        if base.empty or chunked.empty:
            continue
        b = base.iloc[0]
        states = [_slower(r, b) for _, r in chunked.iterrows()]
        verdicts.append(every(states))
        out = chunked[np.isinf(chunked[HIGH])]
        said.append(
            f"{variant}: contiguous {_span(b)}, chunked stores slower: {counts(states)}"
            + (f" ({', '.join(f'{_name(r)} {_span(r)}' for _, r in out.head(3).iterrows())})" if len(out) else "")
        )
    if not verdicts:
        return None
    return every(verdicts), "; ".join(said)


def _spectrum_writes(s, shape) -> Result:
    rows = s[(s[C.CASE] == "write") & (s[C.WRITE_STRATEGY] == "spectrum")]
    rows = chunked_rows(_uncompressed(_hdf5(rows)))
    rows = rows[[shape_of(c)[0] == shape_of(c)[1] for c in rows[C.CHUNK_SHAPE]]]  # m x m x n
    rows = _write_ends(s, rows).assign(
        m=[shape_of(c)[0] for c in rows[C.CHUNK_SHAPE]], n=[shape_of(c)[-1] for c in rows[C.CHUNK_SHAPE]]
    )
    verdicts, said = [], []
    for (variant, n), g in rows.groupby([C.VARIANT, "n"], sort=False):
        g = g.sort_values("m").drop_duplicates("m")
        if len(g) < 2:
            continue
        # the trend: each step up in m writes surely slower than the step before
        steps = [_slower(g.iloc[i + 1], g.iloc[i]) for i in range(len(g) - 1)]
        verdicts.append(every(steps))
        said.append(
            f"n={n} ({variant}): "
            + ", ".join(f"m={r['m']} {_span(r)}" for _, r in g.iterrows())
            + f"; steps up in m slower: {counts(steps)}"
        )
    if not verdicts:
        return None
    return every(verdicts), "; ".join(said)


# uncompressed chunks read this fast (the chunk bytes a read touches over its time) leave
# decompression the bottleneck: hopper's fast filesystem, not portal's I/O-bound one
FAST_READ_BYTES_PER_S = 200e6


def _compression_slows(s, shape) -> Result:
    rows = chunked_rows(_one_state(s, "slice")[0]).dropna(subset=[C.RATIO_CI_LOW])
    plain = rows[rows[C.COMPRESSION] == "none"].set_index(C.CHUNK_SHAPE)
    packed = rows[(rows[C.COMPRESSION] != "none") & rows[C.CHUNK_SHAPE].isin(plain.index)]
    if packed.empty:
        return None
    rate = (plain[C.CHUNK_BYTES_TOUCHED_MEDIAN] / plain[C.MEDIAN_S]).median()
    if not rate >= FAST_READ_BYTES_PER_S:  # the sentence's condition: a fast filesystem (hopper's)
        return None
    why = _values_not_judged(s)  # decompression's cost is the values'
    if why:
        return UNMEASURED, why
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
        f"uncompressed, same chunk shape: {counts(states)}{_on_values(s)}"
    )


FINDINGS: list[Finding] = [
    Finding(
        "gzip4-ratio",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Ratio",
        "The compression ratios we achieve are on the order of 2.9 to 3.8 in all cases (comparable to the "
        "compression ratio we have seen for the donor dataset A).",
        "gzip-4 compresses every chunked HDF5 store of MSI data 2.9-3.8x (within 10% of the range: "
        "inconclusive); judged on a donor's values, on synthetic ones only where the config opts in",
        "compression: [gzip-4] on chunked layouts, dataset.fill a donor (or dataset.judge_synthetic_values: true)",
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
        "most uncompressed chunked stores read 5x5 spectra surely slower than contiguous (median ratio's "
        "interval above 1)",
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
        "of the uncompressed chunkings the study compared (m x m x n, m in {1, ..., 32}, n in {128, ..., 8192}), "
        "those not told apart from the fastest z-slice median all have m in {4, 8, 16} and n in {128, ..., 4096} "
        "(with stores outside those measured)",
        "cases.slice, layouts.chunks.xy: [4, 8 or 16, and others], layouts.chunks.z in 128-4096 (and others)",
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
        "most uncompressed chunked stores read 5x5x1000 sub-cubes surely faster than contiguous (ratio's "
        "interval below 1)",
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
        "per chunk shape, every gzip level above 1 compresses within 1.15x of level 1 (more than 1.3x: does not "
        "hold) and reads z-slices, spectra and sub-cubes within 1.5x of level 1's time either way (median "
        "intervals; wholly beyond 1.5x: does not hold); judged on a donor's values, on synthetic ones only where "
        "the config opts in",
        "compression: gzip-1 and higher levels, e.g. [gzip-1, gzip-4, gzip-8], cases.slice, spectra or subcube, "
        "dataset.fill a donor (or dataset.judge_synthetic_values: true)",
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
        "per chunk shape and write strategy, every write at a gzip level above 5 is surely slower than every "
        "write at levels 1-5 (intervals apart; a raced-out store at least its race bound); judged on a donor's "
        "values, on synthetic ones only where the config opts in",
        "compression: gzip levels at most 5 and above 5, dataset.fill a donor (or "
        "dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        _gzip_levels_write,
    ),
    Finding(
        "contiguous-fastest-write",
        "OpenMSI",
        OPENMSI,
        "Chunking: Data Write",
        "It is not surprising that the contiguous baseline layout outperforms the chunked layouts in a serial setting.",
        "with each write strategy, the uncompressed contiguous store writes surely faster than every uncompressed "
        "chunked store (median intervals apart; a raced-out store at least its race bound)",
        "cases.write, layouts.contiguous and chunks, compression: [none]",
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
        "one spectrum per write, uncompressed m x m x n chunks: each step up in m writes surely slower than the "
        "step before, per n (intervals apart; a raced-out store at least its race bound, so two raced-out stores "
        "are not told apart)",
        "cases.write.strategies: [spectrum] with layouts.chunks.xy of two or more sizes, compression: [none]",
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
        "compressed stores read z-slices surely slower than the uncompressed store of the same chunk shape; "
        "judged on a donor's values, on synthetic ones only where the config opts in",
        "cases.slice, compression: [none, gzip-<n>], on a filesystem that reads at 200 MB/s or more, "
        "dataset.fill a donor (or dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        _compression_slows,
    ),
]
