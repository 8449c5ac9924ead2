"""Statistics for timings: medians with distribution-free confidence intervals, and rank
agreement between runs.

Timings are skewed and heavy-tailed (a page fault, a flush of another process), so the
interval of a median comes from order statistics (the binomial argument), not from a normal
approximation: no assumption about the distribution, exact coverage of at least the level
asked for wherever the sample is large enough to give it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CONFIDENCE = 0.95


def _binomial_half_cdf(n: int) -> list[float]:
    """P(B <= k) for B ~ Binomial(n, 1/2), k = 0..n (exact: integer counts)."""
    total, out, acc = 2**n, [], 0
    for k in range(n + 1):
        acc += math.comb(n, k)
        out.append(acc / total)
    return out


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int]:
    """0-based ranks (lo, hi) of the sorted sample that bound the median with at least
    ``confidence``; (0, n - 1) where ``n`` is too small for that (n <= 5 at 95%)."""
    if n <= 0:
        raise ValueError("no values")
    alpha = 1.0 - confidence
    cdf = _binomial_half_cdf(n)
    # largest j (1-based) with P(B <= j - 1) <= alpha / 2; the interval is [x_(j), x_(n-j+1)]
    j = 0
    while j + 1 <= n and cdf[j] <= alpha / 2:
        j += 1
    if j == 0:
        return 0, n - 1
    return j - 1, n - j


def median_ci_level(n: int, confidence: float = CONFIDENCE) -> float:
    """The confidence the interval of :func:`median_ci_ranks` really has for ``n`` values:
    ``1 - 2 P(B <= lo)`` (at least ``confidence`` from n = 6 at 95%; the whole range of n <= 5
    values has ``1 - 2 * 0.5**n``, 75% for 3); NaN for one value (no interval)."""
    if n <= 1:
        return math.nan
    lo, _ = median_ci_ranks(n, confidence)
    return 1.0 - 2.0 * _binomial_half_cdf(n)[lo]


def median_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(median, low, high): the median and its order-statistic confidence interval; one value
    has no interval (NaN bounds: an interval from one measurement is not an interval)."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan, math.nan
    lo, hi = median_ci_ranks(x.size, confidence)
    return float(np.median(x)), float(x[lo]), float(x[hi])


COPY_BOOTSTRAP_SAMPLES = 2000
COPY_BOOTSTRAP_SEED = 20_261_125


def median_ci_over_copies(
    values: Sequence[float], copies: Sequence[int], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """(median, low, high) of reads taken from several byte-identical copies of a store (a
    filesystem's ``read_copies``): each copy reads at its own speed for as long as it exists,
    and the next run meets other copies, so the interval comes from a bootstrap that draws the
    copies with replacement, then the reads within each drawn copy (percentile interval, fixed
    seed). Reads of one copy: :func:`median_ci`."""
    x = np.asarray(values, dtype=float)
    c = np.asarray(copies)
    keep = ~np.isnan(x)
    x, c = x[keep], c[keep]
    groups = [x[c == k] for k in np.unique(c)]
    if len(groups) < 2:
        return median_ci(x, confidence)
    rng = np.random.default_rng(COPY_BOOTSTRAP_SEED)
    sizes = np.array([len(g) for g in groups])
    padded = np.full((len(groups), sizes.max()), np.nan)
    for k, g in enumerate(groups):
        padded[k, : len(g)] = g
    # per resample: the copies drawn, then as many reads of each drawn copy as it holds
    drawn = rng.integers(0, len(groups), size=(COPY_BOOTSTRAP_SAMPLES, len(groups)))
    n = sizes[drawn][..., None]
    picks = rng.integers(0, n, size=(*drawn.shape, sizes.max()))
    values = np.where(np.arange(sizes.max()) < n, padded[drawn[..., None], picks], np.nan)
    medians = np.nanmedian(values.reshape(COPY_BOOTSTRAP_SAMPLES, -1), axis=1)
    low, high = np.quantile(medians, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(np.median(x)), float(low), float(high)


def percentile(values: Sequence[float], q: float) -> float:
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    return float(np.percentile(x, q)) if x.size else math.nan


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two paired samples (average ranks for ties)."""
    ra, rb = _ranks(a), _ranks(b)
    if ra.size < 2 or ra.std() == 0 or rb.std() == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(values: Sequence[float]) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(x.size, dtype=float)
    for value in np.unique(x):  # ties share their average rank
        tied = x == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def intervals_overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
