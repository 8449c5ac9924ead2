"""The findings of the HDF5 I/O lab, checked on one filesystem's summary (the rules in
:mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import chunk_cache as CC
from h5sweep.kit.claims import (
    FEW_REPEATS,
    IO_LAB,
    MIN_REPEATS,
    STUDIES,
    UNMEASURED,
    Finding,
    Result,
    above,
    chunked_rows,
    counts,
    every,
    short_of_repeats,
)
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import binary_size

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
    CC.CHUNK_CACHE_BYTES,
    CC.CHUNK_CACHE_SLOTS,
    CC.CHUNK_CACHE_W0,
    C.CACHE_STATE,
)


def _slower(mine: pd.Series, other: pd.Series) -> bool | None:
    """Whether ``mine``'s median is surely above ``other``'s (their intervals apart)."""
    return above(
        mine[C.MEDIAN_CI_LOW_S] - other[C.MEDIAN_CI_HIGH_S], mine[C.MEDIAN_CI_HIGH_S] - other[C.MEDIAN_CI_LOW_S], 0.0
    )


def _fetched(row: pd.Series) -> str:
    """A cold read's median bytes from the device, in words ("" for a warm read or none counted)."""
    fetched = row.get(C.DEVICE_READ_BYTES_MEDIAN)
    if row.get(C.CACHE_STATE) != "cold" or fetched is None or pd.isna(fetched):
        return ""
    return f" ({binary_size(int(fetched))} from the device)"


def _random_worst(s, shape) -> Result:
    if C.POLICY not in s or C.COLD_MODE not in s:
        return None
    # reads of an open file (cold: first): the chunk cache carries over from one read to the
    # next, as in the lab's runs of many reads through one cache (the seed's lines 202 and
    # 211-213), so that a policy is what the cache keeps
    rows = chunked_rows(s[s[C.POLICY].notna() & (s[C.COLD_MODE] == "first")])
    if not {RANDOM, *CONSTRAINED} <= set(rows[C.POLICY]):
        return None
    keys = [c for c in ALIKE if c in rows]
    states, short, said = [], 0, []
    for _, g in rows.groupby(keys, dropna=False, sort=True):
        by = {policy: g[g[C.POLICY] == policy] for policy in (RANDOM, *CONSTRAINED)}
        if any(len(found) != 1 for found in by.values()):
            continue
        mine, others = by[RANDOM].iloc[0], [by[p].iloc[0] for p in CONSTRAINED]
        if short_of_repeats(pd.DataFrame([mine, *others])).any():
            short += 1  # a policy read fewer than MIN_REPEATS times in this cache state: no interval
            continue
        states.append(every([_slower(mine, other) for other in others]))
        said.append(
            f"{mine[C.CASE]} ({mine.get(C.VARIANT, '')}, {mine.get(C.CACHE_STATE, '')}): "
            + ", ".join(f"{r[C.POLICY]} {r[C.MEDIAN_S] * 1e3:.3g} ms{_fetched(r)}" for r in (mine, *others))
        )
    if not states:
        return UNMEASURED, (
            f"no store, case, chunk cache and cache state with {MIN_REPEATS} or more reads of each policy ({short} "
            f"with fewer): {FEW_REPEATS}"
        )
    # the sentence's "the worst" is unqualified (line 204): every one, not most
    # the cells that keep it from holding first: surely not, then undecided
    order = sorted(range(len(states)), key=lambda i: {False: 0, None: 1, True: 2}[states[i]])
    return every(states), (
        f"random surely slower than both aligned and localized: {counts(states)} (store, case, chunk cache, cache "
        f"state; {short} left out with fewer than {MIN_REPEATS} reads of a policy); e.g. "
        + "; ".join(said[i] for i in order[:3])
    )


FINDINGS: list[Finding] = [
    Finding(
        "random-worst",
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 3, visiting policies)",
        "The ramdom visiting, as expected, give the worst performance.",
        "reads of an open file (cold: first; the chunk cache carries over from read to read), each chunked "
        "store, case, chunk cache setting and cache state (cold; warm) apart, each with 6 or more reads of every "
        "policy: in every one, random visiting's median is surely above both aligned's and localized's "
        "(intervals apart), the worst of the three; surely at or below either's in any one, it does not hold. "
        "Cold and warm reads are split because h5sweep never ranks the two together, where the lab's Figure 3 "
        "plots each run's throughput over all its reads",
        "policies: [random, aligned, localized] and a read case with cold: first on a chunked store, 6 or more "
        "reads of each policy in a cache state",
        STUDIES + "io-lab/chunk-io.yaml",
        _random_worst,
    ),
]
