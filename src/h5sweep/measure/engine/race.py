"""Racing the stores of an interleaved read pass: a store that has clearly lost stops being read.

After each look (``rounds_per_look`` rounds of selections, from ``min_rounds`` on), every
store still in the race is scored by the recommendation's objective (``recommend.objective``
and ``recommend.weights``), computed by the very code the ranking uses
(:func:`h5sweep.measure.objective.costs`), on the selections every store has read so far. The
current best is the store of the lowest score. A paired bootstrap (the same resampled
selections for every store) gives each store's ratio ``score / score_best`` a one-sided lower
bound at level ``alpha / looks`` (:func:`h5sweep.measure.objective.bound_to_best`); a store
whose bound lies above ``margin`` is out: it is not read in later rounds, and its rows say at
which round it stopped and the bound then (``raced_out_round``, ``raced_out_at_least``). A
protected store (the reference every paired ratio is to) is read to the end; the objectives
that are ratios to it (``time``, ``geometric``) take it as their reference, or, in a pass it
does not read (another backend's read option), the first store of the pass. In each group of
``kept_best`` (the compressed stores), the store of the lowest score at a look is not raced out
at that look: the best compressed store is read to the end, so that what compression costs in
reads rests on full intervals, not on the rounds before a drop.

The chance that racing drops a store whose full pass would have been within the margin of the
best is at most about ``alpha`` over the whole pass: each look's test has level
``alpha / looks`` (Bonferroni over the planned looks), and a store within the margin must see
its bound pass the margin at some look to be dropped. The bound is approximate (a bootstrap
percentile, on the selections read so far); ``docs/method.md`` states it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from h5sweep.measure.objective import Reads, anchors, best_of, bound_to_best, costs
from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting

# ``race:`` as an object (true: these defaults; false: no race), declared once: the schema's
# object form and the rules' defaults come from here (h5sweep.sweep.config.load_schema)
SETTINGS = Block(
    "race",
    "The race's rule.",
    (
        Setting(
            "margin",
            "number",
            1.25,
            "A store is out once its ratio's interval lies above this.",
            {"exclusiveMinimum": 1},
        ),
        Setting("min_rounds", "integer", 8, "Rounds every store reads before the first look.", {"minimum": 2}),
        Setting("rounds_per_look", "integer", 5, "Rounds between two looks.", {"minimum": 1}),
        Setting(
            "alpha",
            "number",
            0.05,
            "The chance, over the whole pass, of racing out a store within the margin of the best (split over "
            "the looks).",
            {"exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
    ),
)
_DEFAULT = SETTINGS.defaults()


@dataclass(frozen=True)
class RaceRule:
    weights: dict[str, float]  # reads of each case per unit of work
    objective: str | None = None  # what is scored (recommend.objective; None: its declared default)
    margin: float = _DEFAULT["margin"]
    min_rounds: int = _DEFAULT["min_rounds"]
    rounds_per_look: int = _DEFAULT["rounds_per_look"]
    alpha: float = _DEFAULT["alpha"]
    samples: int = 400
    seed: int = 20_261_126
    unraced: frozenset[str] = field(default_factory=frozenset)  # cases read to the end (cases.<c>.race: false)

    @classmethod
    def from_settings(cls, settings: dict | None) -> RaceRule | None:
        if not settings:
            return None
        settings = SETTINGS.filled(settings)
        return cls(
            # the run's read mix, recommend.weights as filled (h5sweep.sweep.settings.with_race_scoring)
            weights={k: float(v) for k, v in settings["weights"].items()},
            objective=settings.get("objective"),
            margin=float(settings["margin"]),
            min_rounds=int(settings["min_rounds"]),
            rounds_per_look=int(settings["rounds_per_look"]),
            alpha=float(settings["alpha"]),
            unraced=frozenset(settings.get("unraced", ())),
        )

    def looks(self, rounds: int) -> int:
        """The looks a pass of ``rounds`` rounds has (each after ``rounds_per_look`` rounds,
        from ``min_rounds`` on, the last round aside: it is read whatever the look says)."""
        if rounds <= self.min_rounds:
            return 0
        return max(1, math.ceil((rounds - self.min_rounds) / self.rounds_per_look))


@dataclass
class RacedOut:
    round: int  # rounds read before it stopped
    at_least: float  # its lower bound of the objective's ratio to the best then


class Race:
    """One pass's race over ``stores`` stores reading ``cases`` (each variant's case name)."""

    def __init__(
        self,
        rule: RaceRule,
        stores: int,
        cases: list[str],
        rounds: int,
        protected: set[int],
        kept_best: list[set[int]] | None = None,
    ):
        self.rule, self.cases, self.rounds, self.protected = rule, cases, rounds, protected
        self.kept_best = kept_best or []
        self.out: dict[int, RacedOut] = {}
        self.failed: set[int] = set()  # stores whose read failed on an emulated fault: read no further
        self.seconds: list[list[dict[int, float]]] = [[{} for _ in range(stores)] for _ in cases]
        self.level = rule.alpha / max(1, rule.looks(rounds))
        self.rng = np.random.default_rng(rule.seed)

    def reads(self, variant: int, store: int) -> bool:
        """Whether ``store`` reads ``variant``'s next selection."""
        return store not in self.out or self.cases[variant] in self.rule.unraced

    def record(self, variant: int, store: int, repeat: int, seconds: float) -> None:
        self.seconds[variant][store][repeat] = seconds

    def due(self, rounds_done: int) -> bool:
        """Whether a look comes after ``rounds_done`` rounds."""
        r = self.rule
        return r.min_rounds <= rounds_done < self.rounds and (rounds_done - r.min_rounds) % r.rounds_per_look == 0

    def look(self, rounds_done: int) -> list[int]:
        """Score the stores in the race on what they have read; the stores out from now."""
        active = [k for k in range(len(self.seconds[0])) if k not in self.out and k not in self.failed]
        weighted = [(v, self.rule.weights[c]) for v, c in enumerate(self.cases) if self.rule.weights.get(c, 0) > 0]
        if len(active) < 2 or not weighted:
            return []
        times = {}
        for v, _ in weighted:
            common = sorted(set.intersection(*(set(self.seconds[v][k]) for k in active)))
            if len(common) < 2:
                return []
            times[self.cases[v]] = np.array([[self.seconds[v][k][j] for j in common] for k in active])
        reads = Reads(
            stores=active,
            cases=list(times),
            times=times,
            copies={c: np.zeros(m.shape[1], int) for c, m in times.items()},
        )
        reference = next((i for i, k in enumerate(active) if k in self.protected), 0)
        weights = {self.cases[v]: w for v, w in weighted}
        scored = costs(reads, weights, reference, self.rng, self.rule.objective, self.rule.samples)
        samples = scored.attrs["score_samples"]
        score = scored[C.SCORE].to_numpy(float)
        if samples is None or np.isnan(score).all():
            return []
        best = best_of(score, ~np.isnan(score))
        low = bound_to_best(samples, best, self.level)
        kept = {active[i] for i in anchors(reads, weights, self.rule.objective)} | self.protected
        for group in self.kept_best:  # each group's best store so far stays in
            members = [i for i, k in enumerate(active) if k in group and not np.isnan(score[i])]
            if members:
                kept.add(active[min(members, key=lambda i: score[i])])
        dropped = []
        for i, k in enumerate(active):
            if k != active[best] and k not in kept and low[i] > self.rule.margin:
                self.out[k] = RacedOut(rounds_done, float(low[i]))
                dropped.append(k)
        return dropped
