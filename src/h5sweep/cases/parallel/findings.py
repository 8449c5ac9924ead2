"""The studies' findings on parallel passes, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.backends import HDF5
from h5sweep.cases.claims import FOLK_CHOI, STUDIES, Finding, Result, above, counts, every
from h5sweep.cases.parallel import columns as PC
from h5sweep.storage import columns as C

# Folk & Choi's images (section 3.1, Table 2): [rows, columns] at one byte per pixel (48 MB and
# 1 GB; the sizes the study gives are its files', 16,864 bytes more), accessed whole in
# selections of 525 columns (Table 4), and chunked in all rows x 525 columns (13 chunks)
ORIGDOQ, BIGDOQ = (7639, 6308), (160_419, 6308)
COLUMNS_PER_ACCESS = 525
CHUNK_COLUMNS = 525
OPERATIONS = ("read", "write")  # Figs. 3 and 10: read/write results
INTERVAL = [PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH]


def _study_passes(s: pd.DataFrame, shape: tuple, images: tuple[tuple[int, int], ...]) -> pd.DataFrame | None:
    """The passes the study ran, on one of ``images``: parallel HDF5 (the study's library; its
    serial passes too), uncompressed, columns in selections of 525, over the whole image at one
    byte per pixel (uint8). None where there are none."""
    if tuple(shape) not in images:
        return None
    rows = s[s[C.CASE] == "parallel"]
    if rows.empty or PC.MODE not in rows:
        return None
    rows = rows[
        (rows[C.BACKEND] == HDF5)
        & (rows[C.COMPRESSION] == "none")
        & (rows[PC.UNITS_COLUMN] == "columns")
        & (rows[PC.UNITS_PER_ACCESS] == COLUMNS_PER_ACCESS)
        & (rows[C.BYTES_SELECTED] == math.prod(shape))  # every pass the whole image, one byte a pixel
    ]
    return rows if not rows.empty else None


def _ratio(a: pd.Series, b: pd.Series) -> tuple[float, float, float]:
    """The bandwidth of ``a`` over that of ``b``: the medians' ratio and the intervals' crossed
    ratios (low over high, high over low)."""
    return (
        a[PC.BYTES_PER_S_MEDIAN] / b[PC.BYTES_PER_S_MEDIAN],
        a[PC.BYTES_PER_S_CI_LOW] / b[PC.BYTES_PER_S_CI_HIGH],
        a[PC.BYTES_PER_S_CI_HIGH] / b[PC.BYTES_PER_S_CI_LOW],
    )


SAME = 1.25  # "no appreciable difference": within 25% either way
FOUR_TIMES = 4.0  # "reaching 4-7 times faster": at least the 4 of it
FEW, MANY = (1, 2), (8, 12)


def _within(low: float, high: float) -> bool | None:
    """Whether a ratio's interval lies wholly within 1/1.25-1.25 (True), wholly outside it
    (False), or admits both (None)."""
    if pd.isna(low) or pd.isna(high):
        return None
    if low >= 1 / SAME and high <= SAME:
        return True
    return False if low > SAME or high < 1 / SAME else None


def _collective_vs_independent(s, shape) -> Result:
    rows = _study_passes(s, shape, (ORIGDOQ, BIGDOQ))
    if rows is None:
        return None
    rows = rows[rows[C.CHUNK_SHAPE].fillna("") == ""]  # contiguous storage (Table 7)
    said, states, missing = [], [], []
    for operation in OPERATIONS:
        mine = rows[rows[PC.OPERATION] == operation]
        found = []
        for p, group in mine.groupby(PC.PROCESSES, sort=True):
            modes = group.set_index(PC.MODE)
            if not {"collective", "independent"} <= set(modes.index) or p not in (*FEW, *MANY):
                continue
            ratio, low, high = _ratio(modes.loc["collective"], modes.loc["independent"])
            states.append(_within(low, high) if p in FEW else above(low, high, FOUR_TIMES))
            found.append(int(p))
            said.append(f"{operation} P={int(p)}: collective {ratio:.2f}x independent ({low:.2f}-{high:.2f})")
        missing += [f"{operation} P={p}" for p in (*FEW, *MANY) if p not in found]
    if not states:
        return None
    verdict = every(states)
    words = "; ".join(said) + " (stated: within 25% at 1-2 processes, 4x or more at 8 and 12)"
    if missing and verdict is not False:  # the sentence covers both operations at 1, 2, 8 and 12
        return None, words + "; not measured: " + ", ".join(missing)
    return verdict, words


def _chunking_improves_passes(s, shape) -> Result:
    rows = _study_passes(s, shape, (BIGDOQ,))
    if rows is None:
        return None
    chunk = rows[C.CHUNK_SHAPE].fillna("")
    contiguous = rows[chunk == ""]
    chunked = rows[chunk == f"{BIGDOQ[0]}x{CHUNK_COLUMNS}"]  # the study's chunks: all rows x 525 columns
    keys = [PC.OPERATION, PC.MODE, PC.PROCESSES]
    baseline = contiguous.set_index(keys)
    said, states = [], []
    for (operation, mode, p), row in chunked.set_index(keys).iterrows():
        if (operation, mode, p) not in baseline.index:
            continue
        ratio, low, high = _ratio(row, baseline.loc[(operation, mode, p)])
        states.append(above(low, high, 1.0))
        said.append(f"{operation} {mode} P={int(p)}: {ratio:.2f}x ({low:.2f}-{high:.2f})")
    if not states:
        return None
    return every(states), (
        f"chunked ({BIGDOQ[0]}x{CHUNK_COLUMNS}) over contiguous bandwidth, 525 columns per access: "
        + "; ".join(said)
        + f" ({counts(states)})"
    )


FINDINGS = (
    Finding(
        "collective-vs-independent",
        "Folk & Choi",
        FOLK_CHOI,
        "3.3.1 Contiguous storage results (Table 7)",
        "For 1-2 processors, no appreciable difference is obvious, but for larger numbers of processors, "
        "collective performance improves substantially over independent, reaching 4-7 times faster for 8 and 12 "
        "processors.",
        "ORIGDOQ or BIGDOQ (uint8), contiguous HDF5, 525 columns per access, reads and writes each: collective "
        "bandwidth within 25% of independent at 1 and 2 processes, and 4x or more at 8 and 12",
        "cases.parallel with modes independent and collective, operations read and write and 525 columns per "
        "access on 1, 2, 8 and 12 processes over the contiguous ORIGDOQ or BIGDOQ image",
        STUDIES + "folk-choi/bigdoq.yaml",
        _collective_vs_independent,
    ),
    Finding(
        "chunking-improves-passes",
        "Folk & Choi",
        FOLK_CHOI,
        "3.3.3 Comparing chunked vs. contiguous results (BIGDOQ, Fig. 10)",
        "In all cases, the ratios are greater than 1, indicating that chunking improved I/O performances in all "
        "of the cases tested.",
        "BIGDOQ (160,419 x 6,308 uint8) in HDF5 chunks of 160,419 x 525 against contiguous HDF5, 525 columns per "
        "access: the chunked store's bandwidth surely above the contiguous one's in every operation, mode and "
        "process count measured",
        "cases.parallel with layouts contiguous and chunks of 160419 x 525, 525 columns per access, over the "
        "BIGDOQ image (dataset.shape [160419, 6308], uint8)",
        STUDIES + "folk-choi/bigdoq.yaml",
        _chunking_improves_passes,
    ),
)
