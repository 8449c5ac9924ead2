"""The studies' findings on parallel passes, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import numpy as np

from h5sweep.cases.claims import FOLK_CHOI, STUDIES, Finding, Result, above, contiguous_rows, counts, every
from h5sweep.cases.parallel import columns as PC
from h5sweep.storage import columns as C


def _passes(s):
    rows = s[s[C.CASE] == "parallel"]
    return rows if not rows.empty and PC.MODE in rows else None


def _collective_vs_independent(s, shape) -> Result:
    rows = _passes(s)
    if rows is None:
        return None
    rows = contiguous_rows(rows[rows[PC.OPERATION] == "read"])
    said, states, large = [], [], False
    for p, g in rows.groupby(PC.PROCESSES):
        modes = g.groupby(PC.MODE)[[PC.BYTES_PER_S_MEDIAN, PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH]].max()
        if not {"collective", "independent"} <= set(modes.index):
            continue
        c, i = modes.loc["collective"], modes.loc["independent"]
        low, high = (
            c[PC.BYTES_PER_S_CI_LOW] / i[PC.BYTES_PER_S_CI_HIGH],
            c[PC.BYTES_PER_S_CI_HIGH] / i[PC.BYTES_PER_S_CI_LOW],
        )
        if p >= 8:
            large = True
            states.append(above(low, high, 4.0))
        elif p <= 2:  # "no appreciable difference": within 25% either way
            states.append(True if low >= 0.8 and high <= 1.25 else False if low > 1.25 or high < 0.8 else None)
        said.append(f"P={int(p)}: collective {c[PC.BYTES_PER_S_MEDIAN] / i[PC.BYTES_PER_S_MEDIAN]:.2f}x independent")
    if not states:
        return None
    verdict = every(states)
    if verdict and not large:
        return None, "; ".join(said) + "; 8 and 12 processes not measured"
    return verdict, "; ".join(said) + " (stated: no different at 1-2, 4-7x at 8 and 12)"


BIGDOQ_ROWS = 160_419


def _chunking_improves_passes(s, shape) -> Result:
    rows = _passes(s)
    if rows is None or not shape or shape[0] < BIGDOQ_ROWS:  # the sentence is about BIGDOQ
        return None
    rows = rows[rows[PC.UNITS_PER_ACCESS] == rows[PC.UNITS_PER_ACCESS].max()]  # 525 columns per access
    keys = [PC.OPERATION, PC.MODE, PC.PROCESSES]
    kind = np.where(rows[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked")
    table = rows.assign(kind=kind).groupby([*keys, "kind"])[[PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH]].max()
    table = table.unstack("kind").dropna()
    if table.empty:
        return None
    low = table[(PC.BYTES_PER_S_CI_LOW, "chunked")] / table[(PC.BYTES_PER_S_CI_HIGH, "contiguous")]
    high = table[(PC.BYTES_PER_S_CI_HIGH, "chunked")] / table[(PC.BYTES_PER_S_CI_LOW, "contiguous")]
    states = [above(a, b, 1.0) for a, b in zip(low, high, strict=True)]
    verdict = every(states)
    return verdict, f"chunked faster than contiguous (operation, mode, P): {counts(states)}"


FINDINGS = (
    Finding(
        "collective-vs-independent",
        "Folk & Choi",
        FOLK_CHOI,
        "3.3.1 Contiguous storage results (Table 7)",
        "For 1-2 processors, no appreciable difference is obvious, but for larger numbers of processors, "
        "collective performance improves substantially over independent, reaching 4-7 times faster for 8 and 12 "
        "processors.",
        "contiguous reads: collective within 25% of independent at 1-2 processes, and 4x or more at 8 and 12",
        "cases.parallel with modes independent and collective on 1, 2, 8 and 12 processes",
        STUDIES + "folk-choi/origdoq.yaml",
        _collective_vs_independent,
    ),
    Finding(
        "chunking-improves-passes",
        "Folk & Choi",
        FOLK_CHOI,
        "3.3.3 Comparing chunked vs. contiguous results (BIGDOQ)",
        "In all cases, the ratios are greater than 1, indicating that chunking improved I/O performances in all "
        "of the cases tested.",
        "for BIGDOQ (160,419 rows or more), 525 columns per access: the chunked image is surely faster than "
        "contiguous in every operation, mode and process count",
        "cases.parallel, layouts.contiguous and chunks, dataset.shape of BIGDOQ",
        STUDIES + "folk-choi/bigdoq.yaml",
        _chunking_improves_passes,
    ),
)
