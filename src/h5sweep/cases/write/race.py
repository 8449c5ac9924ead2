"""Racing the timed writes of a filesystem's stores (``race``, ``cases.write.min_repeats``).

Each store's own job writes every variant ``min_repeats`` times. The filesystem's write race
then adds repeats, one round at a time, up to ``repeats``, only to the stores whose write time
is not yet separated from their competitors': the other stores of the same write variant on
the same filesystem, and ``recommend.max_write_s`` where it is set.

Before each extra round, per variant: the best store is the one with the lowest mean log
write time. A store is separated from it when the one-sided lower bound of its log ratio to
the best's lies above ``log(margin)``; the bound comes from a bootstrap of the write times'
residuals (each write's log time less its store's mean), pooled over the variant's stores
(with two writes per store a store's own spread says little; pooled, it says how much two
writes of one store differ on this filesystem). Its level is ``alpha`` split over the looks
(Bonferroni). A separated store writes no more: its rows say at which repeat it stopped and
the bound (``raced_out_round``, ``raced_out_at_least``). The best store writes on while any
other is in the race; a store whose interval holds the limit writes on, too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000


@dataclass(frozen=True)
class WriteRace:
    margin: float = 1.25
    alpha: float = 0.05
    min_repeats: int = 2
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
        residuals = np.concatenate(
            [(y - y.mean()) * math.sqrt(len(y) / (len(y) - 1)) for y in logs.values() if len(y) > 1] or [np.zeros(1)]
        )
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
        done = {best} if left == [best] and not holds_limit(best) else set()
        return out, done | (set(racing) - set(logs))


def race_writes(
    times: dict[Hashable, list[float]],
    rule: WriteRace,
    write: Callable[[Hashable, int], float | None],
    order: Callable[[list, int], list] | None = None,
) -> dict[Hashable, tuple[int, float]]:
    """Race the stores of one variant: ``times`` holds each store's first writes (and gains
    the race's); ``write(store, repeat)`` makes one more timed write and returns its seconds
    (None: stopped at its limit, it writes no more). ``order(stores, round)``: the round's
    order. Returns the stores raced out: the writes each made and the bound."""
    racing = {key for key, values in times.items() if len(values) >= rule.min_repeats}
    out: dict[Hashable, tuple[int, float]] = {}
    for repeat in range(rule.min_repeats, rule.max_repeats):
        separated, done = rule.decide(times, racing)
        for key, at_least in separated.items():
            out[key] = (len(times[key]), at_least)
        racing -= set(separated) | done
        if not racing:
            break
        stores = sorted(racing, key=str)
        for key in order(stores, repeat) if order else stores:
            seconds = write(key, repeat)
            if seconds is None:
                racing.discard(key)
            else:
                times[key].append(seconds)
    return out
