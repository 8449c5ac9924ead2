"""The OpenMSI study's performance score: one point for each criterion a layout meets.

Criteria: slice, spectra and subcube median times below their thresholds, and a file no
larger than the raw data plus an allowed overhead. A criterion whose case was not run is
left out; ``score_max`` says how many criteria were available.
"""

from __future__ import annotations

import math

CASE_THRESHOLDS = {"slice": "slice_median_s", "spectra": "spectra_median_s", "subcube": "subcube_median_s"}


def score(medians_s: dict[str, float], file_bytes: float, raw_bytes: float, thresholds: dict) -> tuple[int, int]:
    """(points, available criteria) for one file, from its per-case median times."""
    points, available = 0, 0
    for case, key in CASE_THRESHOLDS.items():
        median = medians_s.get(case)
        if median is None or math.isnan(median):
            continue
        available += 1
        points += int(median < thresholds[key])
    if not math.isnan(file_bytes):
        available += 1
        points += int(file_bytes <= raw_bytes * (1.0 + thresholds["file_overhead"]))
    return points, available
