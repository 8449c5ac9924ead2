"""The findings of the HDF5 I/O lab, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.cases.claims import (
    IO_LAB,
    STUDIES,
    Finding,
    Result,
    above,
    counts,
    majority,
)
from h5sweep.storage import columns as C


def _random_worst(s, shape) -> Result:
    rows = s[s[C.CASE].isin(["slice", "spectra", "subcube"]) & s[C.CHUNK_SHAPE].fillna("").ne("")]
    rows = rows.dropna(subset=[C.POLICY, C.MEDIAN_CI_LOW_S])
    if "random" not in set(rows[C.POLICY]) or rows[C.POLICY].nunique() < 2:
        return None
    keys = (
        [C.LAYOUT_ID, C.COMPRESSION, C.CASE, C.CHUNK_CACHE_BYTES]
        if C.CHUNK_CACHE_BYTES in rows
        else [
            C.LAYOUT_ID,
            C.COMPRESSION,
            C.CASE,
        ]
    )
    states = []
    for _, g in rows.groupby(keys, dropna=False):
        mine = g[g[C.POLICY] == "random"]
        others = g[g[C.POLICY] != "random"]
        if mine.empty or others.empty:
            continue
        r = mine.iloc[0]
        # random slower than the best of the constrained policies
        best = others.sort_values(C.MEDIAN_S).iloc[0]
        states.append(
            above(r[C.MEDIAN_CI_LOW_S] - best[C.MEDIAN_CI_HIGH_S], r[C.MEDIAN_CI_HIGH_S] - best[C.MEDIAN_CI_LOW_S], 0.0)
        )
    if not states:
        return None
    by = rows.groupby(C.POLICY)[C.MEDIAN_S].median()
    return majority(states), (
        f"random slower than aligned or localized: {counts(states)} (store, case, cache); medians "
        + ", ".join(f"{p} {t * 1e3:.3g} ms" for p, t in by.items())
    )


FINDINGS: list[Finding] = [
    Finding(
        "random-worst",
        "I/O lab",
        IO_LAB,
        "Chunked dataset: visiting policies",
        "The ramdom visiting, as expected, give the worst performance.",
        "in most chunked stores, cases and caches, random visiting is surely slower than the best of aligned and "
        "localized",
        "policies: [random, aligned, localized]",
        STUDIES + "io-lab/chunk-io.yaml",
        _random_worst,
    ),
]
