"""Racing the timed writes of a filesystem's stores (``race``, ``cases.write.min_repeats``).

Each store's own job writes every variant ``min_repeats`` times (one by default). The
filesystem's write race then adds repeats, one round at a time, up to ``repeats``, only to the
stores whose write time is not yet separated from their competitors': the other stores of the
same write variant on the same filesystem, and ``recommend.max_write_s`` where it is set.

Before each extra round, per variant: the best store is the one with the lowest mean log
write time. A store is separated from it when the one-sided lower bound of its log ratio to
the best's lies above ``log(margin)``; the bound comes from a bootstrap of the write times'
residuals (each write's log time less its store's mean), pooled over the variant's stores
that have two writes or more (a store's own two writes say little of its spread; pooled, they
say how much two writes of one store differ on this filesystem). Its level is ``alpha`` split
over the looks (Bonferroni). A separated store writes no more: its rows say at which repeat it
stopped and the bound (``raced_out_round``, ``raced_out_at_least``). The best store writes on
while any other is in the race, and until it has two writes; a store whose interval holds the
limit writes on, too.

A store with one write is judged by the spread the others' repeats show. So before the first
look, the pilot: the best store and its nearest rivals by their first writes write a second
time, until :data:`PILOT_STORES` of the variant's stores (all, if fewer) have two writes. Every
store the race does not separate ends with two writes or more; one separated on its single
write is reported as raced out, never as measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from h5sweep.cases.write import WriteCase
from h5sweep.measure.engine.race import SETTINGS as RACE

RESAMPLES = 2000
# Stores of a variant with two writes before a store with one can be judged: the pooled
# residuals then come from this many independent pairs at least.
PILOT_STORES = 5


@dataclass(frozen=True)
class WriteRace:
    margin: float = RACE.setting("margin").default
    alpha: float = RACE.setting("alpha").default
    min_repeats: int = WriteCase.SETTINGS.setting("min_repeats").default
    max_repeats: int = 3
    limit_s: float | None = None  # recommend.max_write_s
    seed: int = 0

    @classmethod
    def from_settings(cls, settings: dict | None) -> WriteRace | None:
        if not settings:
            return None
        known = {k: settings[k] for k in cls.__dataclass_fields__ if settings.get(k) is not None}
        return cls(**known)

    @property
    def looks(self) -> int:
        """Decisions of the race: one before each extra round."""
        return max(1, self.max_repeats - self.min_repeats)

    def decide(self, times: dict[Hashable, list[float]], racing: set) -> tuple[dict[Hashable, float], set]:
        """Of the ``racing`` stores of one variant (``times``: every store's write seconds so
        far), those separated from the best now, each with the lower bound of its ratio to the
        best's; and those done without: the best, once no other is left and the limit (if
        any) lies outside its interval."""
        logs = {key: np.log(np.asarray(values, dtype=float)) for key, values in times.items() if len(values)}
        contenders = [key for key in sorted(racing, key=str) if key in logs]
        if not contenders:
            return {}, set(racing)
        pooled = [(y - y.mean()) * math.sqrt(len(y) / (len(y) - 1)) for y in logs.values() if len(y) > 1]
        if not pooled:  # no repeat yet, no spread: nothing can be separated
            return {}, set(racing) - set(logs)
        residuals = np.concatenate(pooled)
        rng = np.random.default_rng(self.seed)
        level = self.alpha / self.looks

        def spread(n: int) -> np.ndarray:  # the mean of n pooled residuals, resampled
            return rng.choice(residuals, size=(RESAMPLES, n)).mean(axis=1)

        def holds_limit(key) -> bool:
            if self.limit_s is None:
                return False
            gap = abs(logs[key].mean() - math.log(self.limit_s))
            return bool(gap <= np.quantile(np.abs(spread(len(logs[key]))), 1 - level))

        best = min(contenders, key=lambda key: logs[key].mean())
        out = {}
        for key in contenders:
            if key == best:
                continue
            d = logs[key].mean() - logs[best].mean()
            lower = d - np.quantile(spread(len(logs[key])) - spread(len(logs[best])), 1 - level)
            if lower > math.log(self.margin) and not holds_limit(key):
                out[key] = float(math.exp(lower))
        left = [key for key in contenders if key not in out]
        done = {best} if left == [best] and len(logs[best]) > 1 and not holds_limit(best) else set()
        return out, done | (set(racing) - set(logs))

    def pilot(self, times: dict[Hashable, list[float]], racing: set) -> list:
        """The stores to write once more before the first look: where fewer than
        :data:`PILOT_STORES` of the ``racing`` stores (all, if fewer) have two writes, the
        nearest to the best by mean log time among those with one, the best first."""
        want = min(PILOT_STORES, len(racing))
        have = sum(len(times[key]) > 1 for key in racing)
        ones = [key for key in racing if len(times[key]) == 1]
        ones.sort(key=lambda key: (math.log(times[key][0]), str(key)))
        return ones[: max(0, want - have)]


def race_writes(
    times: dict[Hashable, list[float]],
    rule: WriteRace,
    write: Callable[[Hashable, int], float | None],
    order: Callable[[list, int], list] | None = None,
) -> dict[Hashable, tuple[int, float]]:
    """Race the stores of one variant: ``times`` holds each store's first writes (and gains
    the race's); ``write(store, repeat)`` makes one more timed write and returns its seconds
    (None: stopped at its limit, it writes no more). ``order(stores, round)``: the round's
    order. Returns the stores raced out: the writes each made and the bound. A store that
    has made ``max_repeats`` writes stays in the race as a competitor, writing no more, and
    is never reported as raced out (it is measured whole)."""
    racing = {key for key, values in times.items() if len(values) >= rule.min_repeats}
    out: dict[Hashable, tuple[int, float]] = {}

    def one_more(stores: list, round_: int) -> None:
        stores = sorted(stores, key=str)
        for key in order(stores, round_) if order else stores:
            seconds = write(key, len(times[key]))
            if seconds is None:
                racing.discard(key)
            else:
                times[key].append(seconds)

    one_more(rule.pilot(times, racing), 0)
    for round_ in range(1, rule.looks + 1):
        separated, done = rule.decide(times, racing)
        for key, at_least in separated.items():
            if len(times[key]) < rule.max_repeats:  # one that wrote every repeat is measured whole
                out[key] = (len(times[key]), at_least)
        racing -= set(separated) | done
        due = [key for key in racing if len(times[key]) < rule.max_repeats]
        if not due:
            break
        one_more(due, round_)
    return out
