"""The studies' findings on parallel passes, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.backends import HDF5
from h5sweep.cases.parallel import columns as PC
from h5sweep.kit.claims import FOLK_CHOI, STUDIES, UNMEASURED, Finding, Result, above, counts, every, within
from h5sweep.storage import columns as C

# Folk & Choi's images (section 3.1, Table 2): [rows, columns] at one byte per pixel (48 MB and
# 1 GB; the sizes the study gives are its files', 16,864 bytes more), accessed whole in
# selections of 525 columns (Table 4), and chunked in all rows x 525 columns (13 chunks)
ORIGDOQ, BIGDOQ = (7639, 6308), (160_419, 6308)
COLUMNS_PER_ACCESS = 525
CHUNK_COLUMNS = 525
OPERATIONS = ("read", "write")  # Figs. 3 and 10: read/write results


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
TIMES = (4.0, 7.0)  # "reaching 4-7 times faster for 8 and 12 processors" (Table 7)
FEW, MANY = (1, 2), (8, 12)
# the process counts of the study's parallel passes: "from 1 to 12" (3.1.1), named as 1-2 and 8
# and 12 (Table 7), 4 (Tables 10 and 11: "from 4 to 8 to 12 processors", "4 or more")
PROCESS_COUNTS = (1, 2, 4, 8, 12)
IMAGES = {ORIGDOQ: "ORIGDOQ", BIGDOQ: "BIGDOQ"}
ON_GPFS = "The study: TeraGrid's GPFS, judged here on the filesystem measured (the evidence names it)"


def _within(low: float, high: float) -> bool | None:
    """Whether a ratio's interval lies wholly within 1/1.25-1.25 (True), wholly outside it
    (False), or admits both (None)."""
    return within(low, high, 1 / SAME, SAME)


def _where(rows: pd.DataFrame) -> str:
    kinds = sorted(rows[C.FS_TYPE].dropna().astype(str).unique()) if C.FS_TYPE in rows else []
    return f"on {', '.join(kinds)}" if kinds else "on the sweep's filesystem"


def _pair(rows: pd.DataFrame, operation: str, mode: str, p: int) -> pd.Series | None:
    mine = rows[(rows[PC.OPERATION] == operation) & (rows[PC.MODE] == mode) & (rows[PC.PROCESSES] == p)]
    return mine.iloc[0] if len(mine) else None


def _collective_vs_independent(s, shape) -> Result:
    rows = _study_passes(s, shape, (ORIGDOQ, BIGDOQ))
    if rows is None:
        return None
    rows = rows[rows[C.CHUNK_SHAPE].fillna("") == ""]  # contiguous storage (Table 7)
    image = IMAGES[tuple(shape)]
    said, states, missing = [], [], []
    for operation in OPERATIONS:
        for p in (*FEW, *MANY):
            collective, independent = (_pair(rows, operation, m, p) for m in ("collective", "independent"))
            if collective is None or independent is None:
                missing.append(f"{operation} P={p}")
                continue
            ratio, low, high = _ratio(collective, independent)
            states.append(_within(low, high) if p in FEW else within(low, high, *TIMES))
            said.append(f"{operation} P={p}: collective {ratio:.2f}x independent ({low:.2f}-{high:.2f})")
    where = f"{image} measured, contiguous, {_where(rows)} (the study: both files, each judged on its own sweep)"
    stated = "stated: within 25% at 1-2 processes, 4-7x at 8 and 12"
    if missing:  # the sentence covers both operations at 1, 2, 8 and 12
        return UNMEASURED, (
            f"{where}: not measured: {', '.join(missing)}"
            + (f"; measured: {'; '.join(said)} ({stated})" if said else "")
        )
    return every(states), f"{where}: " + "; ".join(said) + f" ({stated}; {counts(states)})"


def _chunking_improves_passes(s, shape) -> Result:
    rows = _study_passes(s, shape, (BIGDOQ,))
    if rows is None:
        return None
    chunk = rows[C.CHUNK_SHAPE].fillna("")
    contiguous = rows[chunk == ""]
    chunked = rows[chunk == f"{BIGDOQ[0]}x{CHUNK_COLUMNS}"]  # the study's chunks: all rows x 525 columns
    grid = [(op, "serial", 1) for op in OPERATIONS]
    grid += [(op, mode, p) for op in OPERATIONS for mode in ("independent", "collective") for p in PROCESS_COUNTS]
    said, states, missing = [], [], []
    for operation, mode, p in grid:
        a, b = _pair(chunked, operation, mode, p), _pair(contiguous, operation, mode, p)
        if a is None or b is None:
            lacking = " and ".join(name for name, row in (("chunked", a), ("contiguous", b)) if row is None)
            missing.append(f"{operation} {mode} P={p} ({lacking})")
            continue
        ratio, low, high = _ratio(a, b)
        states.append(above(low, high, 1.0))
        said.append(f"{operation} {mode} P={p}: {ratio:.2f}x ({low:.2f}-{high:.2f})")
    where = f"chunked ({BIGDOQ[0]}x{CHUNK_COLUMNS}) over contiguous bandwidth, 525 columns per access, {_where(rows)}"
    if missing:  # the study's every case: serial, and independent and collective at 1-12 processes
        return UNMEASURED, (
            f"{where}: not measured: {', '.join(missing)}" + (f"; measured: {'; '.join(said)}" if said else "")
        )
    return every(states), f"{where}: " + "; ".join(said) + f" ({counts(states)})"


FINDINGS = (
    Finding(
        "collective-vs-independent",
        "Folk & Choi",
        FOLK_CHOI,
        "3.3.1 Contiguous storage results (Table 7)",
        "For 1-2 processors, no appreciable difference is obvious, but for larger numbers of processors, "
        "collective performance improves substantially over independent, reaching 4-7 times faster for 8 and 12 "
        "processors.",
        "the image measured, ORIGDOQ or BIGDOQ (uint8; Table 7's row is both files: each is judged on its own "
        "sweep, and the evidence names the image), contiguous HDF5, 525 columns per access, reads and writes "
        "each: collective bandwidth over independent within 1/1.25-1.25 at 1 and 2 processes, and within 4-7x "
        "at 8 and at 12, every ratio's interval wholly inside (one wholly outside: does not hold). A process "
        "count or operation missing: not measured. " + ON_GPFS,
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
        "access, in the study's every case: reads and writes, serial, and independent and collective on 1, 2, "
        "4, 8 and 12 processes; the chunked store's bandwidth surely above the contiguous one's in each (a case "
        "missing: not measured). " + ON_GPFS,
        "cases.parallel with modes serial, independent and collective, operations read and write, processes 1, "
        "2, 4, 8 and 12, layouts contiguous and chunks of 160419 x 525, 525 columns per access, over the BIGDOQ "
        "image (dataset.shape [160419, 6308], uint8)",
        STUDIES + "folk-choi/bigdoq.yaml",
        _chunking_improves_passes,
    ),
)
