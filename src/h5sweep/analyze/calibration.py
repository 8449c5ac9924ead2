"""How well the intervals held on the reference machine, per kind of filesystem.

`make bench-calibration` runs the default sweep four times back to back and counts, for every
ordered pair of runs, the share of one run's paired ratios that fall inside the other run's
95% intervals, and the share of their intervals that overlap (``bench/agreement.calibration``);
a row of a store raced out has its one-sided bound alone, held where the other run's store is
at least as far behind its best.
Two equally noisy, honest estimates put about 83% of one inside the other's 95% interval;
the goals are a median of 80% inside and 95% overlapping. Where a kind of filesystem missed
them on the reference machine, the recommendation says so with the measured figures: its
intervals there are narrower than they claim. The figures are the bench's, copied here from
``bench/results/runs.csv`` (the run named by ``RUN``).
"""

from __future__ import annotations

GOAL_INSIDE = 0.80
GOAL_OVERLAP = 0.95
RUN = "vm-20261128-150248"
# fs_type: (median share inside, median share overlapping), over the 12 ordered pairs
MEASURED: dict[str, tuple[float, float]] = {"ext4": (0.991, 1.0), "tmpfs": (1.0, 1.0)}


def caveat(fs_type: str, measured: dict[str, tuple[float, float]] | None = None) -> str | None:
    """A sentence where this kind of filesystem's intervals missed on the reference machine."""
    figures = (MEASURED if measured is None else measured).get(fs_type)
    if figures is None:
        return None
    inside, overlap = figures
    if inside >= GOAL_INSIDE and overlap >= GOAL_OVERLAP:
        return None
    return (
        f"Intervals on {fs_type} are narrower than they claim: on the reference machine (bench run {RUN}), "
        f"a median of {100 * inside:.0f}% of one run's paired ratios fell inside another run's 95% interval "
        f"(goal {100 * GOAL_INSIDE:.0f}%) and {100 * overlap:.0f}% of the two runs' intervals overlapped "
        f"(goal {100 * GOAL_OVERLAP:.0f}%): read a tie on {fs_type} as likely and a separation as less sure."
    )
