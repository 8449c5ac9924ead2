"""The studies' findings on local parallel scaling, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.backends import HDF5
from h5sweep.cases.scaling import columns as SC
from h5sweep.kit.claims import OPENMSI, STUDIES, Finding, Result, counts, every, within
from h5sweep.storage import columns as C
from h5sweep.storage.filesystems import MEMORY_FILESYSTEMS

# "Using hopper we observe a linear speed-up for up to 8 processes": on one login node of hopper
# (16 or 32 cores), numpy.var over 20,000 of the 100,000 z-slices (20% of the cube)
UP_TO = 8
BLOCK = 0.2
# "linear": the parallel efficiency S(P) / P at least 0.8 at every P from 2 to 8. The study sees
# the linear rise end at 8 ("Afterwards, we still observe speed-up, however, at a lower and less
# stable rate"): a curve that has lost a fifth of each process's work by some P already bends
# the way it describes after 8, as 2.0, 2.9, 3.6, 4.2, 4.8, 5.3, 5.7 at P = 2..8 does (0.71 at 8)
LINEAR = 0.8


def _efficiencies(rows: pd.DataFrame) -> list[tuple[int, float, float, float]]:
    """One store's parallel efficiency, its speed-up over one process over P, at each P from 2 to
    8: (P, median ratio, low, high); the interval is the ratio of the two medians' intervals,
    crossed, over P."""
    by_p = rows.set_index(SC.PROCESSES)
    one = by_p.loc[1]
    out = []
    for p in range(2, UP_TO + 1):
        many = by_p.loc[p]
        out.append(
            (
                p,
                one[C.MEDIAN_S] / many[C.MEDIAN_S] / p,
                one[C.MEDIAN_CI_LOW_S] / many[C.MEDIAN_CI_HIGH_S] / p,
                one[C.MEDIAN_CI_HIGH_S] / many[C.MEDIAN_CI_LOW_S] / p,
            )
        )
    return out


def _scaling(s, shape) -> Result:
    rows = s[s[C.CASE] == "scaling"]
    if rows.empty or SC.PROCESSES not in rows or SC.Z_SLICES not in rows or SC.CORES not in rows or len(shape) != 3:
        return None
    rows = rows[(rows[C.BACKEND] == HDF5) & ((rows[SC.Z_SLICES] - BLOCK * shape[2]).abs() <= 1)]
    # the node must hold 8 processes on cores of their own, as hopper's login nodes did, and the
    # block come from a filesystem with a device or a network below it (hopper's /project), not memory
    rows = rows[(rows[SC.CORES].fillna(0) >= UP_TO) & ~rows[C.FS_TYPE].isin(MEMORY_FILESYSTEMS)]
    said, states = [], []
    for (layout, compression), store in rows.groupby([C.LAYOUT_ID, C.COMPRESSION], sort=True):
        if not set(range(1, UP_TO + 1)) <= set(store[SC.PROCESSES].astype(int)):
            continue
        efficiencies = _efficiencies(store)
        # every P's efficiency wholly at or above 0.8: linear; some P's wholly below: not
        mine = [within(low, high, LINEAR, math.inf) for _, _, low, high in efficiencies]
        states.append(every(mine))
        _, ratio, low, high = efficiencies[-1]
        short = [p for (p, *_), state in zip(efficiencies, mine, strict=True) if state is False]
        said.append(
            f"{layout} {compression}: {ratio * UP_TO:.2f}x ({low * UP_TO:.2f}-{high * UP_TO:.2f}) at {UP_TO} "
            f"processes, efficiency {ratio:.2f} ({low:.2f}-{high:.2f})"
            + (f", below {LINEAR:g} at P = {', '.join(map(str, short))}" if short else "")
        )
    if not states:
        return None
    cores, fs = int(rows[SC.CORES].min()), ", ".join(sorted(set(rows[C.FS_TYPE].astype(str))))
    return every(states), (
        f"speed-up over one process on blocks of {int(round(BLOCK * shape[2]))} slices, {cores} cores, {fs}: "
        + "; ".join(said)
        + f" (linear: efficiency, speed-up over P, at least {LINEAR:g} at every P from 2 to {UP_TO}; stores "
        f"{counts(states)})"
    )


FINDINGS = (
    Finding(
        "local-scaling",
        "OpenMSI",
        OPENMSI,
        "Local Scalability: Multi-processing",
        "Using hopper we observe a linear speed-up for up to 8 processes.",
        "numpy.var over blocks of 20% of the z-slices, split along x, on a node with at least 8 cores and a "
        "filesystem not in memory (the study: hopper's /project, GPFS): in every "
        "HDF5 store (layout and codec apart), the speed-up over one process is linear: at every P from 2 to 8 "
        "the parallel efficiency (speed-up over P) has its interval wholly at or above 0.8; some P's wholly "
        "below 0.8: does not hold",
        "cases.scaling with processes 1 to 8 and slices: [0.2], run on a node with at least 8 cores (the rows' "
        "cores) on a filesystem not in memory",
        STUDIES + "openmsi/local-scaling.yaml",
        _scaling,
    ),
)
