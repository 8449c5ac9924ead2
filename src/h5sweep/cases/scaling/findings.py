"""The studies' findings on local parallel scaling, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.cases.claims import OPENMSI, STUDIES, Finding, Result, above
from h5sweep.cases.scaling import columns as SC
from h5sweep.storage import columns as C


def _scaling(s, shape) -> Result:
    rows = s[s[C.CASE] == "scaling"]
    if rows.empty or SC.PROCESSES not in rows or SC.Z_SLICES not in rows:
        return None
    rows = rows[rows[SC.Z_SLICES] == rows[SC.Z_SLICES].max()]  # the 20% block, not the 25 slices
    if len(shape) == 3 and rows[SC.Z_SLICES].max() < 0.1 * shape[2]:
        return None
    by_p = rows.groupby(SC.PROCESSES)[[C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S]].median()
    if 1 not in by_p.index or len(by_p) < 2:
        return None
    p = max(q for q in by_p.index if q <= 8)
    one, many = by_p.loc[1], by_p.loc[p]
    low, high = one[C.MEDIAN_CI_LOW_S] / many[C.MEDIAN_CI_HIGH_S], one[C.MEDIAN_CI_HIGH_S] / many[C.MEDIAN_CI_LOW_S]
    words = (
        f"speed-up {one[C.MEDIAN_S] / many[C.MEDIAN_S]:.2f} ({low:.2f}-{high:.2f}) at {p} processes on blocks of "
        f"{int(rows[SC.Z_SLICES].max())} slices (linear: at least {0.7 * p:.2g})"
    )
    verdict = above(low, high, 0.7 * p)
    if p < 8 and verdict is not False:  # the sentence reaches 8 processes: the rest is not measured
        return None, words + "; 8 processes not measured"
    return verdict, words


FINDINGS = (
    Finding(
        "local-scaling",
        "OpenMSI",
        OPENMSI,
        "Local Scaling",
        "Using hopper we observe a linear speed-up for up to 8 processes.",
        "numpy.var over blocks of 20% of the slices: the speed-up at 8 processes is at least 0.7 x 8 (its "
        "interval wholly above)",
        "cases.scaling with processes 1 to 8 and slices: [0.2]",
        STUDIES + "openmsi/local-scaling.yaml",
        _scaling,
    ),
)
