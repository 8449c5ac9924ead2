"""The findings of OpenMSI's chunking and compression study, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`).

A row with fewer than :data:`~h5sweep.cases.claims.MIN_REPEATS` timed operations has no 95% interval
of its median (its [min, max] covers less), so every check here counts it undecided and says so.

Writes may race (:mod:`h5sweep.cases.write.race`): a store separated from the best of its write
variant writes no more, so its row has one write and no interval, only the race's bound
(``raced_out_at_least``: its time is at least that many times the best's). A finding on write times
takes that bound times the best store's median (the race's own reference) as the raced-out store's
lower end, with no upper end. The study configs write every store to the end (``race: false``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.analyze.studies.words import ms_words as _ms
from h5sweep.analyze.studies.words import store_name as _name
from h5sweep.backends import REFERENCE
from h5sweep.cases.claims import (
    FEW_REPEATS,
    MIN_REPEATS,
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
    short_of_repeats,
)
from h5sweep.storage import columns as C

# A finding that depends on the values (a compression ratio, a codec's speed) judges a donor's
# values; synthetic ones (fill synthetic or chunk-index) only where the config opts in: the
# generator's values compress as it was tuned to, so a ratio measured on them tests the
# generator, not MSI data. gzip4-ratio never takes the opt-in: its ratio on synthetic values is
# the generator's tuning.
OPT_IN = "dataset.judge_synthetic_values"


def _fills(s) -> list[str]:
    return sorted(set(s[C.FILL].dropna())) if C.FILL in s else []


def _values_not_judged(s, opt_in: bool = True) -> str | None:
    """Why a finding that depends on the values does not judge this summary's (None: it does);
    ``opt_in``: whether the config's opt-in lets it judge synthetic values."""
    fills = _fills(s)
    if not fills:
        return "the summary does not say where its values came from (no fill column)"
    if fills == ["donor"]:
        return None
    if not opt_in:
        return (
            f"the values are {', '.join(fills)}, not a donor's MSI data: their compression ratio is how "
            "h5sweep's generator was tuned (set dataset.fill to a donor; the opt-in does not apply here)"
        )
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


INTERVALS = (C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S, C.RATIO_CI_LOW, C.RATIO_CI_HIGH)


def _sure(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the intervals of those short of :data:`MIN_REPEATS` repeats taken away
    (their [min, max] is not a 95% interval): each such row is undecided."""
    short = short_of_repeats(rows)
    if not short.any():
        return rows
    return rows.assign(**{c: rows[c].astype(float).where(~short) for c in INTERVALS if c in rows})


def _short(*frames: pd.DataFrame) -> str:
    """The evidence's words on the rows short of repeats ("" where none is)."""
    n = sum(int(short_of_repeats(f).sum()) for f in frames)
    total = sum(len(f) for f in frames)
    return f"; {n} of {total} rows with fewer than {MIN_REPEATS} repeats counted undecided ({FEW_REPEATS})" if n else ""


def _one_state(s: pd.DataFrame, *cases: str) -> list[pd.DataFrame]:
    """Each read case's HDF5 rows of its primary variant, all in one cache state, so that no
    store's first accesses are set against another's sustained reads: the state most of the
    cases' reads were in (a row's state is measured: a read meant warm whose pages were gone
    is cold)."""
    primary = [primary_reads(s, case) for case in cases]
    if C.CACHE_STATE not in s or any(p.empty for p in primary):
        return [_sure(p) for p in primary]
    rows = [
        _hdf5(s[(s[C.CASE] == c) & s[C.VARIANT].isin(set(p[C.VARIANT]))]) for c, p in zip(cases, primary, strict=True)
    ]
    state = pd.concat(rows).groupby(C.CACHE_STATE)[C.REPEATS].sum().idxmax()
    return [_sure(r[r[C.CACHE_STATE] == state]) for r in rows]


LOW, HIGH = "_low", "_high"


def _write_ends(s: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (write rows of ``s``) with each store's interval of its write time (``LOW``,
    ``HIGH``): its median's (none for a store short of :data:`MIN_REPEATS` writes), or where the
    race stopped it, at least its bound times the median of its variant's best store (the
    lowest median of those measured to the end: the race's reference), with no upper end; where
    a write was stopped at its limit, no upper end either, and where every write was, at least
    the limit."""
    writes = s[s[C.CASE] == "write"]
    raced = writes[C.RACED_OUT_AT_LEAST].notna() if C.RACED_OUT_AT_LEAST in writes else writes[C.CASE].isna()
    best = writes[~raced].groupby(C.VARIANT)[C.MEDIAN_S].min()
    short = short_of_repeats(rows)
    low = rows[C.MEDIAN_CI_LOW_S].astype(float).where(~short)
    high = rows[C.MEDIAN_CI_HIGH_S].astype(float).where(~short)
    if C.RACED_OUT_AT_LEAST in rows:
        bound = rows[C.RACED_OUT_AT_LEAST].astype(float)
        out = bound.notna()
        low = low.where(~out, bound * rows[C.VARIANT].map(best).astype(float))
        high = high.where(~out, math.inf)
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
        return f"{r[C.MEDIAN_S]:.3g} s ({r[C.REPEATS]:.0f} writes, no interval)"
    return f"{r[C.MEDIAN_S]:.3g} s ({r[LOW]:.3g}-{r[HIGH]:.3g})"


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


# the chunkings the study compared (m x m x n, seed l.185), and the z-slice sentence's best among
# them (l.253)
GRID_M, GRID_N = (1, 2, 4, 8, 16, 32), (128, 256, 512, 1024, 2048, 4096, 8192)
BEST_SLICE_M = (4, 8, 16)
BEST_SLICE_N = (128, 256, 512, 1024, 2048, 4096)


def _in_grid(chunk: str) -> bool:
    m = shape_of(chunk)
    return len(m) == 3 and m[0] == m[1] and m[0] in GRID_M and m[2] in GRID_N


GRID = len(GRID_M) * len(GRID_N)
GRID_KEYS = "layouts.chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, 256, 512, 1024, 2048, 4096, 8192]}"


def _against_contiguous(case: str, slower: bool, words: str):
    """A check that most uncompressed chunked stores of the study's grid read ``case`` surely
    slower (or faster) than contiguous: the paired ratio's interval above (below) 1. "In most
    cases" (seed l.272) and "generally" (l.284) are over the study's grid: with fewer than most
    of its 42 chunkings measured, not measured."""

    def check(s, shape) -> Result:
        rows = _uncompressed(_one_state(s, case)[0])
        chunked = chunked_rows(rows)
        chunked = chunked[[_in_grid(c) for c in chunked[C.CHUNK_SHAPE]]]
        if contiguous_rows(rows).empty or chunked.empty:
            return None
        measured = chunked[C.CHUNK_SHAPE].nunique()
        if measured * 2 <= GRID:
            return UNMEASURED, (
                f"{measured} of the study's {GRID} m x m x n chunkings measured: its sentence is about most of "
                f"them ({GRID_KEYS})"
            )
        side = above if slower else below
        states = [side(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH], 1.0) for _, r in chunked.iterrows()]
        return majority(states), f"{words}: {counts(states)}{_short(chunked)}"

    return check


def _best_slice_chunks(s, shape) -> Result:
    rows = chunked_rows(_uncompressed(_one_state(s, "slice")[0]))
    rows = rows[[_in_grid(c) for c in rows[C.CHUNK_SHAPE]]]  # a chunking the study did not compare says nothing
    inside = {c for c in rows[C.CHUNK_SHAPE] if shape_of(c)[0] in BEST_SLICE_M and shape_of(c)[-1] in BEST_SLICE_N}
    if not inside or inside == set(rows[C.CHUNK_SHAPE]):  # both sides of the claim must be measured
        return None
    short = _short(rows)
    rows = rows.dropna(subset=[C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S])
    if rows.empty:
        return None, "no store's z-slice median has an interval" + short
    fastest = rows.sort_values(C.MEDIAN_S).iloc[0]
    tied = rows[rows[C.MEDIAN_CI_LOW_S] <= fastest[C.MEDIAN_CI_HIGH_S]]  # not told apart from the fastest
    states = [c in inside for c in tied[C.CHUNK_SHAPE]]
    verdict = True if all(states) else False if not any(states) else None
    if short:  # a store without an interval may be the fastest, or tied with it
        verdict = None
    return verdict, (
        f"fastest z-slice median {_name(fastest)} {_ms(fastest)}; not told apart from it: "
        + ", ".join(_name(r) for _, r in tied.head(6).iterrows())
        + f" ({sum(states)} of {len(states)} with m in {{4, 8, 16}} and n in 128-4096){short}"
    )


def _slices_slower(s, shape) -> Result:
    slices, spectra = (_uncompressed(r) for r in _one_state(s, "slice", "spectra"))  # the chunking study's
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
    return majority(states), (
        f"z-slices slower than spectra: {counts(states)} uncompressed stores; spectra select {data:.2g}x the "
        f"slices' bytes{_short(slices, spectra)}"
    )


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
    reads, slow, read_rows = [], [], []
    for case in READS:
        rows = _by_level(_one_state(s, case)[0])
        read_rows.append(rows)
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
        + _short(*read_rows)
        + _on_values(s)
    )
    return verdict, words


# "decreases significantly for aggression >5" (seed l.479), h5sweep's reading: a write at a level
# above 5 takes at least 1.5x as long as a write at levels 1-5
WRITE_SIGNIFICANT = 1.5


def _times_slower(a, b) -> bool | None:
    """Whether store ``a`` surely writes more than :data:`WRITE_SIGNIFICANT` times as long as
    ``b`` (the interval of their ratio wholly above it), surely not (wholly at or below), or
    undecided."""
    return above(a[LOW] / b[HIGH], a[HIGH] / b[LOW], WRITE_SIGNIFICANT)


def _gzip_levels_write(s, shape) -> Result:
    writes = s[s[C.CASE] == "write"]
    rows = _write_ends(s, _by_level(writes))
    verdicts, said = [], []
    for (variant, chunk), g in rows.groupby([C.VARIANT, C.CHUNK_SHAPE], sort=False):
        high, low = g[g["level"] > 5], g[g["level"] <= 5]
        if high.empty or low.empty:
            continue
        states = [_times_slower(h, lo) for _, h in high.iterrows() for _, lo in low.iterrows()]
        verdicts.append(every(states))
        if verdicts[-1] is not True or len(said) < 2:
            said.append(f"{chunk} ({variant}): {counts(states)}")
    if not verdicts:
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    words = (
        f"per chunk shape, each write above level 5 surely at least {WRITE_SIGNIFICANT}x as long as each at "
        f"levels 1-5: {sum(v is True for v in verdicts)} of {len(verdicts)} shapes; "
        + "; ".join(said[:4])
        + _short(_measured(rows))
        + _on_values(s)
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
    return every(verdicts), "; ".join(said) + _short(_measured(rows))


def _measured(rows: pd.DataFrame) -> pd.DataFrame:
    """The write rows measured to the end (not raced out): those whose repeats count."""
    return rows[rows[C.RACED_OUT_AT_LEAST].isna()] if C.RACED_OUT_AT_LEAST in rows else rows


# "For chunkings of m x m x 32 with m in {1024, 2048, 4096, 8192} the write performance
# improves" (seed l.221): the figure's 32 x 32 x n, n >= 1024, the sentence's exception
EXCEPT_M, EXCEPT_N = 32, 1024


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
        # the trend: each step up in m writes surely slower than the step before, but the step
        # to the exception's m = 32 where n is 1024 or more
        pairs = [
            (g.iloc[i], g.iloc[i + 1])
            for i in range(len(g) - 1)
            if not (g.iloc[i + 1]["m"] == EXCEPT_M and n >= EXCEPT_N)
        ]
        if not pairs:
            continue
        steps = [_slower(up, down) for down, up in pairs]
        verdicts.append(every(steps))
        left_out = EXCEPT_M in set(g["m"]) and n >= EXCEPT_N
        said.append(
            f"n={n} ({variant}): "
            + ", ".join(f"m={r['m']} {_span(r)}" for _, r in g.iterrows())
            + f"; steps up in m slower: {counts(steps)}"
            + (f" (the step to m={EXCEPT_M} left out: the study's exception at n >= {EXCEPT_N})" if left_out else "")
        )
    if not verdicts:
        return None
    return every(verdicts), "; ".join(said) + _short(_measured(rows))


# uncompressed chunks read this fast from the filesystem (the chunk bytes a cold z-slice read
# touches over its time) leave decompression the bottleneck: hopper's fast filesystem, not
# portal's I/O-bound one (seed l.406, l.412-414)
FAST_READ_BYTES_PER_S = 200e6
# "(of up to 1 order of magnitude)" (seed l.406): a slowdown wholly above it does not hold
AT_MOST = 10.0


def _cold_rate(s) -> float | None:
    """The median over the uncompressed chunked HDF5 stores of their cold z-slice reads' chunk
    bytes over time (None where no cold read was measured): the filesystem's speed, not the
    page cache's."""
    if C.CACHE_STATE not in s:
        return None
    rows = _hdf5(s[(s[C.CASE] == "slice") & (s[C.CACHE_STATE] == "cold")])
    rows = _uncompressed(chunked_rows(rows)).dropna(subset=[C.CHUNK_BYTES_TOUCHED_MEDIAN, C.MEDIAN_S])
    if rows.empty:
        return None
    return float((rows[C.CHUNK_BYTES_TOUCHED_MEDIAN] / rows[C.MEDIAN_S]).median())


def _compression_slows(s, shape) -> Result:
    present = [c for c in READS if not primary_reads(s, c).empty]  # the quote's "selection performance"
    pairs = []  # per case: (case, compressed rows with the uncompressed store of their chunk shape)
    for case, rows in zip(present, _one_state(s, *present) if present else [], strict=True):
        rows = _hdf5(chunked_rows(rows))
        plain = rows[rows[C.COMPRESSION] == "none"][[C.CHUNK_SHAPE, C.RATIO_CI_LOW, C.RATIO_CI_HIGH, C.REPEATS]]
        packed = rows[rows[C.COMPRESSION] != "none"].merge(plain, on=C.CHUNK_SHAPE, suffixes=("", "_plain"))
        if len(packed):
            pairs.append((case, packed))
    if not pairs:
        return None
    rate = _cold_rate(s)
    if rate is None:
        return UNMEASURED, (
            "no cold z-slice read of an uncompressed chunked store: the sentence's fast filesystem (hopper's) is "
            "told by reads from the filesystem, not the page cache (cases.slice.cold: first or every)"
        )
    if not rate >= FAST_READ_BYTES_PER_S:  # the sentence's condition: a fast filesystem (hopper's)
        return UNMEASURED, (
            f"uncompressed z-slices read their chunks cold at {rate / 1e6:.0f} MB/s, under "
            f"{FAST_READ_BYTES_PER_S / 1e6:.0f} MB/s: not the study's fast filesystem (hopper's), where it reports "
            "the decrease"
        )
    why = _values_not_judged(s)  # decompression's cost is the values'
    if why:
        return UNMEASURED, why
    verdicts, said, beyond = [], [], []
    for case, packed in pairs:
        low = packed[C.RATIO_CI_LOW] / packed[f"{C.RATIO_CI_HIGH}_plain"]
        high = packed[C.RATIO_CI_HIGH] / packed[f"{C.RATIO_CI_LOW}_plain"]
        states = [above(lo, hi, 1.0) for lo, hi in zip(low, high, strict=True)]
        verdicts.append(majority(states))
        beyond += [
            f"{case} {_name(r)} {lo:.3g}-{hi:.3g}x"
            for (_, r), lo, hi in zip(packed.iterrows(), low, high, strict=True)
            if above(lo, hi, AT_MOST)
        ]
        short = short_of_repeats(packed) | short_of_repeats(packed.assign(**{C.REPEATS: packed[f"{C.REPEATS}_plain"]}))
        said.append(
            f"{case}: {counts(states)}"
            + (f" ({int(short.sum())} pairs with fewer than {MIN_REPEATS} repeats undecided)" if short.any() else "")
        )
    verdict = False if beyond else every(verdicts)
    return verdict, (
        f"uncompressed z-slices read their chunks cold at {rate / 1e6:.0f} MB/s; compressed slower than "
        f"uncompressed, same chunk shape (ratio of their paired ratios to contiguous), per case: {'; '.join(said)}"
        + (f"; more than {AT_MOST:g}x slower: {', '.join(beyond[:4])}" if beyond else "")
        + _on_values(s)
    )


# where the chunking study measured (seed l.185)
SCRATCH = "the study: hopper /scratch; judged here on the filesystem measured"

FINDINGS: list[Finding] = [
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
        "contiguous-best-spectra",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "For the spectra selections (see Figure hdf5_chunking_spectra_figure) we observe in most cases a "
        "decrease in the median performance compared to the baseline contiguous data layout.",
        "of the study's m x m x n chunkings (m in {1, ..., 32}, n in {128, ..., 8192}; most of them measured), "
        "most uncompressed stores read 5x5 spectra surely slower than contiguous (median ratio's interval above "
        f"1; {SCRATCH})",
        "cases.spectra, layouts.contiguous and chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, ..., 8192]}",
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
        "h5sweep's reading of 'show the best': of the uncompressed chunkings the study compared (m x m x n, m in "
        "{1, ..., 32}, n in {128, ..., 8192}), the stores tied with the fastest z-slice median (intervals "
        "overlapping its) all lie in the set m in {4, 8, 16}, n in {128, ..., 4096} (with stores outside it "
        f"measured; {SCRATCH})",
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
        "where the z-slices select fewer bytes than the spectra, most uncompressed stores read them surely slower "
        f"(median intervals apart; {SCRATCH})",
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
        "of the study's m x m x n chunkings (m in {1, ..., 32}, n in {128, ..., 8192}; most of them measured), "
        "most uncompressed stores read 5x5x1000 sub-cubes surely faster than contiguous (median ratio's interval "
        "below 1): the medians of sustained reads; the next sentence's 'initial data access' is not judged "
        f"({SCRATCH})",
        "cases.subcube, layouts.contiguous and chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, ..., 8192]}",
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
        "intervals; wholly beyond 1.5x: does not hold); the write clause is judged by gzip-levels-write; on a "
        "donor's values, on synthetic ones only where the config opts in (the study: portal, hopper /project "
        "and /scratch; judged here on the filesystem measured)",
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
        "per chunk shape and write strategy, every write at a gzip level above 5 takes surely at least 1.5x as "
        "long as every write at levels 1-5 (the interval of their ratio wholly above 1.5: h5sweep's reading of "
        "'decreases significantly'; a raced-out store at least its race bound times the best store's median); "
        "'acceptable for [1,5]' is not judged; on a donor's values, on synthetic ones only where the config opts "
        "in",
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
        "chunked store (median intervals of 6 or more writes apart; a raced-out store at least its race bound "
        "times the best store's median, the race's reference; the study: hopper /project; judged here on the "
        "filesystem measured)",
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
        "step before, per n, but the step to m = 32 where n >= 1024 (the next sentence's exception: those write "
        "faster) (median intervals of 6 or more writes apart; a raced-out store at least its race bound times the "
        "best store's median, so two raced-out stores are not told apart; the study: hopper /scratch; judged here "
        "on the filesystem measured)",
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
        "the study: hopper /scratch and /project; judged here on the filesystem measured, where it is fast "
        "(uncompressed z-slices read their chunks cold at 200 MB/s or more): for each of z-slices, spectra and "
        "sub-cubes (the 'selection performance'), most compressed stores read surely slower than the "
        "uncompressed store of the same chunk shape, none surely more than 10x slower ('up to 1 order of "
        "magnitude'; paired ratios to contiguous); on a donor's values, on synthetic ones only where the config "
        "opts in",
        "cases.slice, spectra and subcube with cold reads (cold: first), compression: [none, gzip-<n>], on a "
        "filesystem that reads at 200 MB/s or more, dataset.fill a donor (or dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        _compression_slows,
    ),
]
