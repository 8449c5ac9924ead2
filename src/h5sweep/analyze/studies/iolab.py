"""The findings of the HDF5 I/O lab, checked on one filesystem's summary (the rules in
:mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import pandas as pd

from h5sweep.cases.claims import (
    IO_LAB,
    STUDIES,
    Finding,
    Result,
    above,
    chunked_rows,
    counts,
    every,
    majority,
)
from h5sweep.storage import columns as C

RANDOM = "random"
CONSTRAINED = ("aligned", "localized")  # the lab's other visiting policies
# What makes two reads alike but their policy: the store, the case, the read option (chunk
# cache) and where the read's bytes came from
ALIKE = (
    C.BACKEND,
    C.LAYOUT_ID,
    C.COMPRESSION,
    C.CASE,
    C.COLD_MODE,
    C.READER,
    C.CHUNK_CACHE_BYTES,
    C.CHUNK_CACHE_SLOTS,
    C.CHUNK_CACHE_W0,
    C.CACHE_STATE,
)


def _slower(mine: pd.Series, other: pd.Series) -> bool | None:
    """Whether ``mine``'s median is surely above ``other``'s (their intervals apart)."""
    return above(
        mine[C.MEDIAN_CI_LOW_S] - other[C.MEDIAN_CI_HIGH_S], mine[C.MEDIAN_CI_HIGH_S] - other[C.MEDIAN_CI_LOW_S], 0.0
    )


def _random_worst(s, shape) -> Result:
    if C.POLICY not in s or C.COLD_MODE not in s:
        return None
    # reads of an open file (cold: first): the chunk cache carries over from one read to the
    # next, as in the lab's runs, so that a policy is what the cache keeps
    rows = chunked_rows(s[s[C.POLICY].notna() & (s[C.COLD_MODE] == "first")])
    if not {RANDOM, *CONSTRAINED} <= set(rows[C.POLICY]):
        return None
    keys = [c for c in ALIKE if c in rows]
    states, lacking, said = [], 0, []
    for _, g in rows.groupby(keys, dropna=False, sort=True):
        by = {policy: g[g[C.POLICY] == policy] for policy in (RANDOM, *CONSTRAINED)}
        if any(len(found) != 1 for found in by.values()):
            continue
        mine, others = by[RANDOM].iloc[0], [by[p].iloc[0] for p in CONSTRAINED]
        if any(pd.isna(r[C.MEDIAN_CI_LOW_S]) for r in (mine, *others)):
            lacking += 1  # a policy read once in this cache state: no interval
            continue
        states.append(every([_slower(mine, other) for other in others]))
        said.append(
            f"{mine[C.CASE]} ({mine.get(C.VARIANT, '')}, {mine.get(C.CACHE_STATE, '')}): "
            + ", ".join(f"{r[C.POLICY]} {r[C.MEDIAN_S] * 1e3:.3g} ms" for r in (mine, *others))
        )
    if not states:
        return (None, f"no store, case, cache and cache state with an interval for each policy ({lacking} without)")
    return majority(states), (
        f"random surely slower than both aligned and localized: {counts(states)} (store, case, chunk cache, cache "
        f"state; {lacking} without an interval for each policy); e.g. " + "; ".join(said[:3])
    )


FINDINGS: list[Finding] = [
    Finding(
        "random-worst",
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 3, visiting policies)",
        "The ramdom visiting, as expected, give the worst performance.",
        "reads of an open file (cold: first; the chunk cache carries over from read to read), each chunked "
        "store, case, chunk cache setting and cache state apart: in most, random visiting's median is surely "
        "above both aligned's and localized's (intervals apart), the worst of the three",
        "policies: [random, aligned, localized] and a read case with cold: first on a chunked store",
        STUDIES + "io-lab/chunk-io.yaml",
        _random_worst,
    ),
]
