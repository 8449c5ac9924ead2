"""The OpenMSI study's performance score: one point for each criterion a layout meets.

Criteria: slice, spectra and subcube median times below their thresholds, and a file no
larger than the raw data plus an allowed overhead. A criterion whose case was not run is
left out; ``score_max`` says how many criteria were available.

The study's thresholds are for its reference selections (a 25-slice ion image of a
100 x 100 cube is 500,000 bytes; 5 x 5 full spectra of 100,000 m/z bins 5,000,000; a
5 x 5 x 1000 subcube 50,000). A sweep of another size selects other amounts, so by default
(``score.scale_to_selection``) each threshold is scaled by the bytes the case selects over
the study's reference bytes: the same throughput earns the point.
"""

from __future__ import annotations

import math

CASE_THRESHOLDS = {"slice": "slice_median_s", "spectra": "spectra_median_s", "subcube": "subcube_median_s"}
# Bytes each scored case selected in the study (uint16, 100 x 100 x 100,000).
REFERENCE_SELECTED_BYTES = {"slice": 500_000, "spectra": 5_000_000, "subcube": 50_000}


def threshold_s(case: str, thresholds: dict, selected_bytes: float | None = None) -> float | None:
    """The median time under which ``case`` earns its point (None: the case is not scored),
    scaled to ``selected_bytes`` unless ``thresholds['scale_to_selection']`` is false."""
    key = CASE_THRESHOLDS.get(case)
    if key is None:
        return None
    limit = float(thresholds[key])
    if selected_bytes is not None and thresholds["scale_to_selection"]:
        limit *= float(selected_bytes) / REFERENCE_SELECTED_BYTES[case]
    return limit


def score(
    medians_s: dict[str, float],
    file_bytes: float,
    raw_bytes: float,
    thresholds: dict,
    selected_bytes: dict[str, float] | None = None,
) -> tuple[int, int]:
    """(points, available criteria) for one file, from its per-case median times and the
    bytes each case selects (for the scaled thresholds)."""
    points, available = 0, 0
    for case in CASE_THRESHOLDS:
        median = medians_s.get(case)
        if median is None or math.isnan(median):
            continue
        available += 1
        points += int(median < threshold_s(case, thresholds, (selected_bytes or {}).get(case)))
    if file_bytes is not None and file_bytes == file_bytes:  # known (not NaN or NA)
        available += 1
        points += int(file_bytes <= raw_bytes * (1.0 + thresholds["file_overhead"]))
    return points, available
