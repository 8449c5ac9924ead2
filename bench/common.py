"""Shared by the bench's goals: units, the samples behind every ratio, their spread."""

from __future__ import annotations

import statistics
import time

MB = 1_000_000


SAMPLES = 5  # interleaved samples behind every ratio


# Seconds a disk is left idle between removing one contender's file and the next write. On
# a thin-provisioned virtual disk mounted with `discard` (the reference machine), a 1 GB
# write with fsync took 0.45 s when it reused blocks freed less than a second before and
# 2.0-2.9 s when it went to released space; with 0.5 s or 1 s of rest both happened, with 2 s
# every write went to released space. So every contender meets the same device state.
SETTLE_S = 3.0


def _timed(fn, *args, **kwargs) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def spread(ratios: list[float]) -> dict:
    """A ratio's samples as median, min and max (what the bench prints and judges)."""
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios), "samples": ratios}


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(numerators) / statistics.median(denominators)
