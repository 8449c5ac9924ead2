"""What a layout costs the user, and how sure the measurements are of it.

The reads of one filesystem are laid out as one matrix per read case: a row per store, a
column per selection (every store read the same seeded selections, so a column pairs them).
One resampling of the selections (and of the store copies they were read from) is drawn per
bootstrap sample and applied to every store alike: every statistic below is paired.

Three objectives rank the stores (``recommend.objective``), each registered in
:data:`OBJECTIVES` with its words, its columns and how it is computed:

- ``time``: the expected time of one unit of the user's work, ``sum_c n_c * mean_c``, with
  ``n_c`` the reads of case ``c`` the unit does (``recommend.weights``) and ``mean_c`` the
  store's mean read time of the case; ranked by its ratio to the reference store's.
- ``worst-case``: the store's largest slowdown, over the cases of the mix, against the
  fastest store of each case (the minimax choice: no case is ever far from its best).
- ``geometric``: the weighted geometric mean over the cases of the median paired ratio to the
  reference store (every case's ratio counts the same whatever its time).

Where the reads came from several byte-identical copies of each store (a filesystem's
``read_copies``), a bootstrap sample first draws copies with replacement and then selections
within each drawn copy, so that how one copy's pages happen to lie widens the interval
instead of hiding in it. Nothing here imports an I/O library.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from h5sweep.storage import columns as C
from h5sweep.storage.declared import Setting

# The recommendation table's columns the objectives compute for each store (costs, to_best): their
# values with their paired 95% intervals
MIX_SECONDS = C.column("mix_seconds", C.FLOAT, "s")
MIX_SECONDS_CI_LOW = C.column("mix_seconds_ci_low", C.FLOAT, "s")
MIX_SECONDS_CI_HIGH = C.column("mix_seconds_ci_high", C.FLOAT, "s")
MIX_RATIO = C.column("mix_ratio", C.FLOAT, "ratio")
MIX_RATIO_CI_LOW = C.column("mix_ratio_ci_low", C.FLOAT, "ratio")
MIX_RATIO_CI_HIGH = C.column("mix_ratio_ci_high", C.FLOAT, "ratio")
WORST_CASE = C.column("worst_case", C.STRING, "")
WORST_SLOWDOWN = C.column("worst_slowdown", C.FLOAT, "ratio")
WORST_SLOWDOWN_CI_LOW = C.column("worst_slowdown_ci_low", C.FLOAT, "ratio")
WORST_SLOWDOWN_CI_HIGH = C.column("worst_slowdown_ci_high", C.FLOAT, "ratio")
CASE_SPREAD = C.column("case_spread", C.FLOAT, "ratio")
WEIGHTED_RATIO = C.column("weighted_ratio", C.FLOAT, "ratio")
WEIGHTED_RATIO_CI_LOW = C.column("weighted_ratio_ci_low", C.FLOAT, "ratio")
WEIGHTED_RATIO_CI_HIGH = C.column("weighted_ratio_ci_high", C.FLOAT, "ratio")
TO_BEST = C.column("to_best", C.FLOAT, "ratio")
TO_BEST_CI_LOW = C.column("to_best_ci_low", C.FLOAT, "ratio")
TO_BEST_CI_HIGH = C.column("to_best_ci_high", C.FLOAT, "ratio")

C.group(
    C.RECOMMENDATION,
    (
        MIX_SECONDS,
        MIX_SECONDS_CI_LOW,
        MIX_SECONDS_CI_HIGH,
    ),
    (
        "The expected time of one unit of the user's work: the sum over the cases of the reads per "
        "unit (`recommend.weights`; 1 each by default) times the store's mean read time of the case, "
        "in seconds, with its 95% interval."
    ),
)

C.group(
    C.RECOMMENDATION,
    (
        MIX_RATIO,
        MIX_RATIO_CI_LOW,
        MIX_RATIO_CI_HIGH,
    ),
    ("`mix_seconds` over the reference store's, paired (the `time` objective's score)."),
)

C.group(
    C.RECOMMENDATION,
    (
        WORST_CASE,
        WORST_SLOWDOWN,
        WORST_SLOWDOWN_CI_LOW,
        WORST_SLOWDOWN_CI_HIGH,
    ),
    (
        "The case this store serves worst against that case's fastest store, and the slowdown (mean "
        "time over the fastest store's mean time; the `worst-case` objective's score)."
    ),
)

C.group(
    C.RECOMMENDATION,
    (CASE_SPREAD,),
    (
        "The store's slowest case's mean read time over its fastest case's (how strongly the layout "
        "favours one access pattern, Rew's bias)."
    ),
)

C.group(
    C.RECOMMENDATION,
    (
        WEIGHTED_RATIO,
        WEIGHTED_RATIO_CI_LOW,
        WEIGHTED_RATIO_CI_HIGH,
    ),
    (
        "The weighted geometric mean of the per-case median paired ratios to the reference store (the"
        " `geometric` objective's score)."
    ),
)

C.group(
    C.RECOMMENDATION,
    (
        TO_BEST,
        TO_BEST_CI_LOW,
        TO_BEST_CI_HIGH,
    ),
    ("`score` over the best store's within the limits, with its paired 95% interval (the same resamplings divided)."),
)

C.group(
    C.COMPARISON,
    (
        MIX_SECONDS,
        MIX_SECONDS_CI_LOW,
        MIX_SECONDS_CI_HIGH,
    ),
    ("Its expected time for one unit of the read mix on the system, with its 95% interval."),
)

BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95
STORE_KEYS = [C.BACKEND, C.LAYOUT_ID, C.COMPRESSION]
# what a user chooses: a store and the read option it is read with (each ranked on its own)
CHOICE_KEYS = [*STORE_KEYS, C.READ_OPTION]


@dataclass
class Reads:
    """One filesystem's reads as matrices: ``times[case]`` is stores x selections (NaN where
    a store lacks a selection), ``copies[case]`` the store copy each selection was read from."""

    stores: list[tuple]
    cases: list[str]
    times: dict[str, np.ndarray]
    copies: dict[str, np.ndarray]

    @classmethod
    def of(cls, reads: pd.DataFrame, cases: list[str], keys: list[str] = CHOICE_KEYS) -> Reads:
        """The matrices of ``reads``, a row per value of ``keys`` (a store and read option)."""
        stores = list(dict.fromkeys(map(tuple, reads[keys].itertuples(index=False))))
        index = {store: i for i, store in enumerate(stores)}
        times, copies = {}, {}
        present = [c for c in cases if (reads[C.CASE] == c).any()]
        for case in present:
            mine = reads[reads[C.CASE] == case]
            repeats = np.sort(mine[C.REPEAT].unique())
            column = {r: j for j, r in enumerate(repeats)}
            matrix = np.full((len(stores), len(repeats)), np.nan)
            rows = [index[s] for s in map(tuple, mine[keys].itertuples(index=False))]
            matrix[rows, [column[r] for r in mine[C.REPEAT]]] = mine[C.SECONDS].to_numpy(float)
            times[case] = matrix
            if C.STORE_COPY in mine:
                copy = mine.groupby(C.REPEAT)[C.STORE_COPY].first().reindex(repeats).fillna(0)
                copies[case] = copy.to_numpy(int)
            else:
                copies[case] = np.zeros(len(repeats), int)
        return cls(stores, present, times, copies)

    def draws(self, rng: np.random.Generator, samples: int = BOOTSTRAP_SAMPLES) -> dict[str, np.ndarray]:
        """Per case, ``samples`` resamplings of its selections (indices, samples x selections):
        copies first where there are several, then selections within each drawn copy."""
        out = {}
        for case in self.cases:
            copy = self.copies[case]
            n = len(copy)
            groups = [np.flatnonzero(copy == k) for k in np.unique(copy)]
            if len(groups) < 2:
                out[case] = rng.integers(0, n, size=(samples, n))
                continue
            picks = np.empty((samples, n), int)
            for b in range(samples):
                chosen = [groups[k] for k in rng.integers(0, len(groups), size=len(groups))]
                drawn = np.concatenate([g[rng.integers(0, len(g), size=len(g))] for g in chosen])
                if len(drawn) < n:  # copies read unequally often: top up from the whole
                    drawn = np.concatenate([drawn, rng.integers(0, n, size=n - len(drawn))])
                picks[b] = drawn[:n]
            out[case] = picks
        return out


def resampled_means(times: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """Each store's mean time over each resampling (stores x samples), ignoring missing reads."""
    counts = np.zeros((picks.shape[0], times.shape[1]))
    np.add.at(counts, (np.repeat(np.arange(picks.shape[0]), picks.shape[1]), picks.ravel()), 1)
    valid = ~np.isnan(times)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(valid, times, 0.0) @ counts.T) / (valid.astype(float) @ counts.T)


def interval(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 95% percentile interval of each row of ``samples`` (every objective's, and the
    ratios between stores' and systems' that are drawn from them)."""
    with np.errstate(invalid="ignore"):
        low, high = np.nanquantile(samples, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=-1)
    return low, high


@dataclass
class Parts:
    """What every objective is computed from: the weighted cases, each store's mean time per
    case (``means[c]``: stores) and its resampled means (``boot[c]``: stores x samples), the
    reads and their resamplings, and the reference store's row (None: no ratios)."""

    reads: Reads
    weights: dict[str, float]
    reference: int | None
    cases: list[str]
    draws: dict[str, np.ndarray]
    means: dict[str, np.ndarray]
    boot: dict[str, np.ndarray]


def _time(parts: Parts, out: pd.DataFrame) -> np.ndarray | None:
    """The mix of one unit of work, and its ratio to the reference store's."""
    mix = sum(parts.weights[c] * parts.means[c] for c in parts.cases)
    mix_boot = sum(parts.weights[c] * parts.boot[c] for c in parts.cases)
    out[MIX_SECONDS] = mix
    out[MIX_SECONDS_CI_LOW], out[MIX_SECONDS_CI_HIGH] = interval(mix_boot)
    if parts.reference is None:
        return None
    ratio = mix_boot / mix_boot[parts.reference]
    out[MIX_RATIO] = mix / mix[parts.reference]
    out[MIX_RATIO_CI_LOW], out[MIX_RATIO_CI_HIGH] = interval(ratio)
    return ratio


def _worst_case(parts: Parts, out: pd.DataFrame) -> np.ndarray:
    """The slowdown against each case's fastest store, at its largest over the cases; and the
    spread of a store's cases (its slowest case's time over its fastest's)."""
    cases, means, boot = parts.cases, parts.means, parts.boot
    slow = np.stack([means[c] / np.nanmin(means[c]) for c in cases])  # cases x stores
    slow_boot = np.stack([boot[c] / np.nanmin(boot[c], axis=0) for c in cases])  # cases x stores x samples
    worst = np.nanmax(slow_boot, axis=0)
    out[WORST_SLOWDOWN] = np.nanmax(slow, axis=0)
    out[WORST_CASE] = [cases[i] for i in np.nanargmax(np.nan_to_num(slow, nan=-1.0), axis=0)]
    out[WORST_SLOWDOWN_CI_LOW], out[WORST_SLOWDOWN_CI_HIGH] = interval(worst)
    per_case = np.stack([means[c] for c in cases])
    out[CASE_SPREAD] = np.nanmax(per_case, axis=0) / np.nanmin(per_case, axis=0)
    return worst


def _geometric(parts: Parts, out: pd.DataFrame) -> np.ndarray | None:
    """The weighted geometric mean of the medians of the paired log ratios to the reference."""
    if parts.reference is None:
        return None
    reads, weights, reference, draws = parts.reads, parts.weights, parts.reference, parts.draws
    n = len(reads.stores)
    total = sum(weights[c] for c in parts.cases)
    log_point = np.zeros(n)
    log_boot = np.zeros((n, draws[parts.cases[0]].shape[0]))
    for c in parts.cases:
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.log(reads.times[c]) - np.log(reads.times[c][reference])
        log_point += weights[c] * np.nanmedian(ratio, axis=1) / total
        for i in range(n):
            log_boot[i] += weights[c] * np.nanmedian(ratio[i][draws[c]], axis=1) / total
        out[f"ratio_{c}"] = np.exp(np.nanmedian(ratio, axis=1))
    out[WEIGHTED_RATIO] = np.exp(log_point)
    low, high = interval(log_boot)
    out[WEIGHTED_RATIO_CI_LOW], out[WEIGHTED_RATIO_CI_HIGH] = np.exp(low), np.exp(high)
    return np.exp(log_boot)


@dataclass(frozen=True)
class Objective:
    """One way of ranking the stores (``recommend.objective``): what it minimizes in words,
    the columns of its value and 95% interval, how it is computed, and how the tables say it.
    Every ranking, race, decision, caption and comparison asks :data:`OBJECTIVES`."""

    name: str
    words: str  # what it minimizes (the captions' "Ranked by ...")
    noun: str  # a store's value of it ("its ..."), as a comparison's regret is of it
    columns: tuple[str, str, str]  # its value, its interval's low and high end (costs' columns)
    # writes its columns into a store table; returns its bootstrap samples (stores x samples;
    # None without a reference where it needs one)
    compute: Callable[[Parts, pd.DataFrame], np.ndarray | None]
    # its score is a ratio to the reference store's (which scores 1); else it is to each
    # case's fastest store, which a race must read to the end (:func:`anchors`)
    to_reference: bool
    explained: str  # the score defined, in the ranking's notes ({ref}: the reference store in words)
    # one store's score in words: {score}, {ref}, {interval}, {worst} (its worst case), {per_unit}
    says: str

    @property
    def is_mix_time(self) -> bool:
        """Its score is the read mix's time over the reference's: what a sheet says of a store
        first (another objective's score is said besides)."""
        return self.columns[0] == MIX_RATIO

    def score(self, table: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
        """Its value and interval's ends from a table :func:`costs` wrote."""
        return tuple(table[c] for c in self.columns)


OBJECTIVES: dict[str, Objective] = {
    each.name: each
    for each in (
        Objective(
            "time",
            "the expected time of the read mix",
            "time for the read mix",
            (MIX_RATIO, MIX_RATIO_CI_LOW, MIX_RATIO_CI_HIGH),
            _time,
            True,
            "the mix's expected time relative to {ref} on the same selections",
            "{score:.2f}x {ref}'s time for the mix ({interval}), {per_unit}",
        ),
        Objective(
            "worst-case",
            "the largest slowdown against each case's fastest store (minimax)",
            "largest slowdown against each case's fastest store",
            (WORST_SLOWDOWN, WORST_SLOWDOWN_CI_LOW, WORST_SLOWDOWN_CI_HIGH),
            _worst_case,
            False,
            "the largest slowdown over the cases against each case's fastest store",
            "at most {score:.2f}x the fastest store's time in any case (its worst: {worst}; {interval})",
        ),
        Objective(
            "geometric",
            "the weighted geometric mean of the per-case median ratios",
            "weighted geometric mean of the per-case median ratios to the reference",
            (WEIGHTED_RATIO, WEIGHTED_RATIO_CI_LOW, WEIGHTED_RATIO_CI_HIGH),
            _geometric,
            True,
            "the weighted geometric mean of the per-case median ratios relative to {ref} on the same selections",
            "{score:.2f}x {ref}'s time, weighted geometric mean over the cases ({interval})",
        ),
    )
}
# recommend.objective, declared once: the schema, the ranking, the race and every table that
# does not name its objective take its default from here
SETTING = Setting(
    "objective",
    "string",
    "time",
    "What the ranking minimizes. time: the expected time of the read mix (the sum of its reads' mean "
    "times; what the user pays). worst-case: the largest slowdown, over the mix's cases, against each "
    "case's fastest store (minimax: no access pattern far from its best). geometric: the weighted geometric "
    "mean of the per-case median ratios to the reference (every case's ratio counts alike, whatever its "
    "time). docs/method.md says when each fits.",
    {"enum": list(OBJECTIVES)},
)
DEFAULT_OBJECTIVE = SETTING.default


def objective_of(name: object = None) -> Objective:
    """The registered objective ``name``; where there is none (a table or settings that do not
    name one: NaN, None or ""), the declared default."""
    if name is None or (isinstance(name, float) and math.isnan(name)) or name == "":
        name = DEFAULT_OBJECTIVE
    return OBJECTIVES[str(name)]


def given_mix(weights: dict, cases: list[str]) -> dict[str, float]:
    """The read mix ``weights`` gives, {case: reads per unit of work}, in ``cases`` order: the
    cases it weights (a case of weight 0 is left out)."""
    return {c: float(weights[c]) for c in cases if weights.get(c, 0)}


def read_mix(weights: dict | None, cases: list[str], own: dict[str, float] | None = None) -> dict[str, float]:
    """The read mix, {case: reads per unit of work}, in ``cases`` order: the cases
    ``weights`` (``recommend.weights``) weights; where it sets none, one read of each case, or
    the share a case sets itself (``own``: a recorded trace's, all of its reads). The sweep
    fills ``recommend.weights`` with it once (:func:`h5sweep.sweep.model.recommend_from_config`);
    the rest read that mix."""
    if weights:
        return given_mix(weights, cases)
    return {c: float((own or {}).get(c, 1.0)) for c in cases}


def costs(
    reads: Reads,
    weights: dict[str, float],
    reference: int | None,
    rng: np.random.Generator,
    objective: str | None = None,
    samples: int = BOOTSTRAP_SAMPLES,
) -> pd.DataFrame:
    """Every objective's value per store, with paired 95% intervals, and the ranked ``score``
    (the chosen ``objective``'s; None: the declared default). ``reference``: the reference
    store's row (None: no ratios). The score's bootstrap samples (stores x ``samples``) are in
    ``attrs["score_samples"]`` (None where there is no interval): the ranking's ties and the
    race's bounds both come from them."""
    chosen = objective_of(objective)
    cases = [c for c in reads.cases if weights.get(c, 0) > 0]
    draws = reads.draws(rng, samples)
    out = pd.DataFrame({"_store": range(len(reads.stores))})
    one_read = max((reads.times[c].shape[1] for c in cases), default=0) < 2
    means = {c: np.nanmean(reads.times[c], axis=1) for c in cases}
    boot = {c: resampled_means(reads.times[c], draws[c]) for c in cases}
    for c in cases:
        out[f"seconds_{c}"] = means[c]
    parts = Parts(reads, weights, reference, cases, draws, means, boot)
    drawn = {each.name: each.compute(parts, out) for each in OBJECTIVES.values()}
    interval_columns = [c for c in out.columns if c.endswith(("_ci_low", "_ci_high"))]
    if one_read:  # an interval from one read per case is no interval
        out[interval_columns] = math.nan
    if chosen.columns[0] in out:
        out[C.SCORE], out[C.SCORE_CI_LOW], out[C.SCORE_CI_HIGH] = chosen.score(out)
    out[C.OBJECTIVE] = chosen.name
    out.attrs["score_samples"] = None if one_read or reference is None else drawn[chosen.name]
    return out.drop(columns="_store")


def anchors(reads: Reads, weights: dict[str, float], objective: str | None) -> set[int]:
    """The stores an objective measures the others against besides the reference: under
    ``worst-case``, each weighted case's fastest store (its slowdowns are to them). A race
    reads them to the end: dropping one would change every other store's score."""
    if objective_of(objective).to_reference:  # only its reference, read to the end anyway
        return set()
    with np.errstate(invalid="ignore"):
        means = [np.nanmean(reads.times[c], axis=1) for c in reads.cases if weights.get(c, 0) > 0]
    return {int(np.nanargmin(m)) for m in means if not np.isnan(m).all()}


def best_of(score: np.ndarray, eligible: np.ndarray) -> int:
    """The row of the best (lowest) score among the eligible stores."""
    return int(np.flatnonzero(eligible)[np.nanargmin(score[eligible])])


def bound_to_best(samples: np.ndarray, best: int, level: float) -> np.ndarray:
    """Each store's one-sided lower bound, at ``level``, of its score over the best's (the
    same resamplings divided: paired). The race drops a store whose bound lies above its
    margin; the ranking's tie is the two-sided interval of the same ratio."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nanquantile(samples / samples[best], level, axis=-1)


def to_best(samples: np.ndarray | None, score: np.ndarray, eligible: np.ndarray) -> pd.DataFrame:
    """Each store's score over the best eligible store's, with its paired 95% interval (the
    same resamplings divided): the ratio by which ties are judged. ``samples``: stores x
    bootstrap samples of the score (None: no interval)."""
    out = pd.DataFrame(index=range(len(score)), columns=[TO_BEST, TO_BEST_CI_LOW, TO_BEST_CI_HIGH], dtype=float)
    if not eligible.any():
        return out
    best = best_of(score, eligible)
    out[TO_BEST] = score / score[best]
    if samples is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            out[TO_BEST_CI_LOW], out[TO_BEST_CI_HIGH] = interval(samples / samples[best])
    return out
