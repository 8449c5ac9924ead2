"""Folk & Choi's sentences on BIGDOQ against ORIGDOQ, judged across two sweeps of the two sizes
(the cast and the ratios of :mod:`.sizes`; the rules in :mod:`h5sweep.cases.claims`): the
parallel case's ``compared_findings``."""

from __future__ import annotations

import pandas as pd

from h5sweep.cases.claims import FOLK_CHOI, STUDIES, UNMEASURED, Comparative, Result, below, counts, every, within
from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.sizes import KIND, RATIO, RATIO_HIGH, RATIO_LOW, ROLES, cast_sizes, passes, ratios


def interval_words(low: float, high: float) -> str:
    return "no interval" if pd.isna(low) or pd.isna(high) else f"{low:.2f}-{high:.2f}"


def _pick(table: pd.DataFrame, **where) -> pd.DataFrame:
    rows = table.reset_index()
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows


def _over(a: pd.Series, b: pd.Series) -> tuple[float, float, float]:
    """One pass's bandwidth over another's: the medians' ratio and its interval."""
    return (
        a[PC.BYTES_PER_S_MEDIAN] / b[PC.BYTES_PER_S_MEDIAN],
        a[PC.BYTES_PER_S_CI_LOW] / b[PC.BYTES_PER_S_CI_HIGH],
        a[PC.BYTES_PER_S_CI_HIGH] / b[PC.BYTES_PER_S_CI_LOW],
    )


def _words(label: str, ratio: tuple[float, float, float]) -> str:
    return f"{label} {ratio[0]:.2f}x ({interval_words(ratio[1], ratio[2])})"


def _largest_k(table: pd.DataFrame, kind: str) -> int | None:
    ks = table.reset_index()
    ks = ks.loc[ks[KIND] == kind, PC.UNITS_PER_ACCESS]
    return int(ks.max()) if len(ks) else None


def _size_check(kind: str, mode: str, least: float, most: float, k_of=None, processes: int = 1):
    """Table 8, 9 and 11's sentences: per operation (and P at least ``processes``) where both
    images were measured, the larger's bandwidth over the smaller's in [least, most] for every
    pass of ``mode`` on the ``kind`` layout at ``k_of`` units per access (None: the largest
    k both measured)."""

    def check(cast) -> Result:
        table = ratios(cast)
        rows = table[(table[KIND] == kind) & (table[PC.MODE].isin([mode] if isinstance(mode, str) else mode))]
        rows = rows[rows[PC.PROCESSES] >= processes]
        if rows.empty:
            return None
        k = k_of if k_of is not None else int(rows[PC.UNITS_PER_ACCESS].max())
        rows = rows[rows[PC.UNITS_PER_ACCESS] == k]
        if rows.empty:
            return None
        states = [within(r[RATIO_LOW], r[RATIO_HIGH], least, most) for _, r in rows.iterrows()]
        said = [
            _words(f"{r[PC.OPERATION]} {r[PC.MODE]} P={int(r[PC.PROCESSES])}", (r[RATIO], r[RATIO_LOW], r[RATIO_HIGH]))
            for _, r in rows.head(6).iterrows()
        ]
        return every(states), (
            f"{cast['big'].name} over {cast['orig'].name}, {kind}, {k} per access: "
            + "; ".join(said)
            + (" ..." if len(rows) > 6 else "")
            + f" ({counts(states)} within {least:g}-{most:g}x)"
        )

    return check


def _orig_serial_fastest(cast) -> Result:
    """Table 5: ORIG's serial pass 3-10x the bandwidth of ORIG's and BIG's independent passes
    (each P) and of BIG's serial pass, contiguous, 525 columns per access."""
    small, large = passes(cast["orig"]), passes(cast["big"])
    if small is None or large is None:
        return None
    states, said = [], []
    k = _largest_k(small, "contiguous")
    for op in sorted(set(small.reset_index()[PC.OPERATION])):
        mine = _pick(small, **{PC.OPERATION: op, KIND: "contiguous", PC.UNITS_PER_ACCESS: k})
        theirs = _pick(large, **{PC.OPERATION: op, KIND: "contiguous", PC.UNITS_PER_ACCESS: k})
        serial, big_serial = mine[mine[PC.MODE] == "serial"], theirs[theirs[PC.MODE] == "serial"]
        if serial.empty or big_serial.empty:
            continue
        others = [(f"{op} BIG serial", big_serial.iloc[0])]
        for p in sorted(set(mine.loc[mine[PC.MODE] == "independent", PC.PROCESSES])):
            for label, table in (("ORIG", mine), ("BIG", theirs)):
                row = table[(table[PC.MODE] == "independent") & (table[PC.PROCESSES] == p)]
                if len(row):
                    others.append((f"{op} {label} independent P={int(p)}", row.iloc[0]))
        for label, row in others:
            ratio = _over(serial.iloc[0], row)
            states.append(within(ratio[1], ratio[2], 3.0, 10.0))
            said.append(_words(f"ORIG serial over {label}", ratio))
    if len(states) < 2:
        return None
    return every(states), "; ".join(said[:6]) + (" ..." if len(said) > 6 else "") + f" ({counts(states)} in 3-10x)"


def _big_serial_worst(cast) -> Result:
    """Table 5: BIG's serial pass surely slower than ORIG's serial and ORIG's and BIG's
    independent passes (each P), contiguous, 525 columns per access."""
    small, large = passes(cast["orig"]), passes(cast["big"])
    if small is None or large is None:
        return None
    states, said = [], []
    k = _largest_k(large, "contiguous")
    for op in sorted(set(large.reset_index()[PC.OPERATION])):
        mine = _pick(large, **{PC.OPERATION: op, KIND: "contiguous", PC.UNITS_PER_ACCESS: k})
        theirs = _pick(small, **{PC.OPERATION: op, KIND: "contiguous", PC.UNITS_PER_ACCESS: k})
        serial = mine[mine[PC.MODE] == "serial"]
        if serial.empty:
            continue
        others = [(f"{op} ORIG serial", r) for _, r in theirs[theirs[PC.MODE] == "serial"].iterrows()]
        for label, table in (("ORIG", theirs), ("BIG", mine)):
            for _, r in table[table[PC.MODE] == "independent"].iterrows():
                others.append((f"{op} {label} independent P={int(r[PC.PROCESSES])}", r))
        for label, row in others:
            ratio = _over(serial.iloc[0], row)
            states.append(below(ratio[1], ratio[2], 1.0))
            said.append(_words(f"BIG serial over {label}", ratio))
    if len(states) < 2:
        return None
    return every(states), "; ".join(said[:6]) + (" ..." if len(said) > 6 else "") + f" ({counts(states)} slower)"


def _orig_serial_17x(cast) -> Result:
    """Table 8: ORIG's serial pass about 17x BIG's (within 1.5x of it), contiguous."""
    check = _size_check("contiguous", "serial", 1 / (17 * 1.5), 1 / (17 / 1.5))
    result = check(cast)
    if result is None:
        return None
    table = ratios(cast)
    rows = table[(table[KIND] == "contiguous") & (table[PC.MODE] == "serial")]
    said = "; ".join(
        _words(f"{r[PC.OPERATION]} ORIG over BIG", (1 / r[RATIO], 1 / r[RATIO_HIGH], 1 / r[RATIO_LOW]))
        for _, r in rows.iterrows()
    )
    return result[0], f"serial, contiguous: {said} (stated: 17x; within 1.5x of it: 11.3-25.5x)"


SECTION = "3.3 Results"
CONFIGS = STUDIES + "folk-choi/origdoq.yaml and " + STUDIES + "folk-choi/bigdoq.yaml"
NEEDS = "two sweeps of cases.parallel on images of one width, the larger 10x or more the rows (ORIGDOQ, BIGDOQ)"


# the study's images: as wide as each other, BIGDOQ 21 times ORIGDOQ's rows (160,419 against 7,639)
LEAST_ROWS_RATIO = 10


def images(cast) -> str:
    """Where the two parties' datasets are not the study's two images (a 2-D array of one width,
    the larger 10 or more times the smaller's rows), why; else ""."""
    small, large = cast["orig"].shape, cast["big"].shape
    if len(small) != 2 or len(large) != 2 or small[1] != large[1]:
        return f"the datasets ({small} and {large}) are not two images of one width, as ORIGDOQ and BIGDOQ"
    if large[0] < LEAST_ROWS_RATIO * small[0]:
        return (
            f"{large[0]:,} rows against {small[0]:,}: less than {LEAST_ROWS_RATIO}x (BIGDOQ has 21x ORIGDOQ's rows, "
            "160,419 against 7,639)"
        )
    return ""


def _on_images(check):
    """A check judged only on the study's two images (:func:`images`)."""

    def judged(cast) -> Result:
        why = images(cast)
        return (UNMEASURED, why) if why else check(cast)

    return judged


def _finding(key, section, quote, statement, check, needs=NEEDS) -> Comparative:
    return Comparative(
        key,
        "Folk & Choi",
        FOLK_CHOI,
        section,
        quote,
        statement,
        needs,
        CONFIGS,
        _on_images(check),
        roles=ROLES,
        cast=cast_sizes,
    )


FINDINGS = (
    _finding(
        "size-parallel",
        f"{SECTION}: 3.3.1 Contiguous storage (Table 8)",
        "Neither type of parallel access was affected appreciably by the size of the file.",
        "contiguous, the most columns per access both measured (525): BIG's median bandwidth over ORIG's within "
        "0.8-1.25x (25% either way) for every independent and collective pass (operation, P) on both",
        _size_check("contiguous", ("independent", "collective"), 0.8, 1.25),
    ),
    _finding(
        "size-serial",
        f"{SECTION}: 3.3.1 Contiguous storage (Table 8)",
        "Serial performance on ORIG was 17 times better than on BIG.",
        "contiguous, the most columns per access both measured (525): ORIG's serial median bandwidth over BIG's "
        "within 1.5x of 17 (11.3-25.5x) in each operation",
        _orig_serial_17x,
    ),
    _finding(
        "orig-serial-fastest",
        f"{SECTION}: 3.3.1 Contiguous storage (Table 5, Big vs. orig)",
        "Orig. serial performed 3-10 times faster than the other three.",
        "contiguous, 525 columns per access: ORIG's serial median bandwidth 3-10x that of ORIG's and BIG's "
        "independent passes at each P and of BIG's serial pass, in each operation",
        _orig_serial_fastest,
    ),
    _finding(
        "big-serial-worst",
        f"{SECTION}: 3.3.1 Contiguous storage (Table 5, Big vs. orig)",
        "Big serial worse than all the others.",
        "contiguous, 525 columns per access: BIG's serial pass surely slower (median intervals apart) than ORIG's "
        "serial pass and ORIG's and BIG's independent passes at each P, in each operation",
        _big_serial_worst,
    ),
    _finding(
        "size-chunked-serial",
        f"{SECTION}: 3.3.2 Chunked storage (Table 9, Big vs. orig chunk)",
        "Serial access was about 35% faster for the BIG than for ORIG.",
        "chunked (all rows x 525 columns), 525 columns per access: BIG's serial median bandwidth over ORIG's "
        "within 1.175-1.525x (35%, give or take half of it), in each operation",
        _size_check("chunked", "serial", 1.175, 1.525),
    ),
    _finding(
        "size-column-serial",
        f"{SECTION}: 3.3.2 Chunked storage (Table 11)",
        "Serial access was 55% better for BIG than for ORIG.",
        "chunked, 1 column per access: BIG's serial median bandwidth over ORIG's within 1.275-1.825x (55%, give or "
        "take half of it), in each operation",
        _size_check("chunked", "serial", 1.275, 1.825, k_of=1),
    ),
    _finding(
        "size-column-independent",
        f"{SECTION}: 3.3.2 Chunked storage (Table 11)",
        "Independent access was 74-94% better for BIG on 4 or more processors.",
        "chunked, 1 column per access, 4 or more processes: BIG's independent median bandwidth over ORIG's within "
        "1.74-1.94x at every P both measured, in each operation",
        _size_check("chunked", "independent", 1.74, 1.94, k_of=1, processes=4),
        NEEDS + ", each with 4 or more processes",
    ),
    _finding(
        "size-column-collective",
        f"{SECTION}: 3.3.2 Chunked storage (Table 11)",
        "Collective access was 58-77% better for BIG on 4 or more processors.",
        "chunked, 1 column per access, 4 or more processes: BIG's collective median bandwidth over ORIG's within "
        "1.58-1.77x at every P both measured, in each operation",
        _size_check("chunked", "collective", 1.58, 1.77, k_of=1, processes=4),
        NEEDS + ", each with 4 or more processes",
    ),
)
