"""The parallel case's verdicts: per filesystem, operation, process count and units per
access, the store and mode of the highest median bandwidth, for the section
``recommendation.md`` ends with (:mod:`h5sweep.analyze.recommend`). Nothing here imports an I/O
library."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import REGISTRY, spec
from h5sweep.backends import label as _backend_label
from h5sweep.cases.parallel import columns as PC
from h5sweep.measure.stats import median_ci
from h5sweep.storage import columns as C

PARALLEL_HEADING = "## Parallel passes (cases.parallel)"
PARALLEL_COLUMNS = [
    C.FILESYSTEM,
    PC.OPERATION,
    PC.PROCESSES,
    PC.UNITS_PER_ACCESS,
    C.BACKEND,
    C.LAYOUT_ID,
    C.COMPRESSION,
    C.READER,
    PC.MODE,
    PC.BYTES_PER_S_MEDIAN,
    PC.BYTES_PER_S_CI_LOW,
    PC.BYTES_PER_S_CI_HIGH,
    PC.BYTES_PER_S_MAX,
    "tied",
    C.STOPPED,
]


def parallel_verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """The parallel passes, per filesystem, operation, process count P and units per access:
    the store and mode of the highest median bandwidth (serial passes, one process, compete at
    every P: a user with P ranks may still read or write with one), with its interval, and
    how many others' intervals reach it (``tied``: the measurements cannot tell them apart).
    A store and mode whose every pass was stopped at ``cases.parallel.limit_s`` has no
    bandwidth: it is not ranked, but counted (``stopped``)."""
    if summary.empty or C.CASE not in summary or not (summary[C.CASE] == "parallel").any():
        return pd.DataFrame(columns=PARALLEL_COLUMNS)
    runs = summary[summary[C.CASE] == "parallel"].copy()
    runs[C.READER] = runs[C.READER].fillna("") if C.READER in runs else ""
    out = []
    for (filesystem, op, k), group in runs.groupby([C.FILESYSTEM, PC.OPERATION, PC.UNITS_PER_ACCESS], sort=True):
        serial = group[group[PC.MODE] == "serial"]
        for p in sorted(set(group.loc[group[PC.MODE] != "serial", PC.PROCESSES].astype(int))) or [1]:
            candidates = pd.concat([group[(group[PC.PROCESSES] == p) & (group[PC.MODE] != "serial")], serial])
            measured = candidates[candidates[PC.BYTES_PER_S_MEDIAN].notna()]
            where = {
                C.FILESYSTEM: filesystem,
                PC.OPERATION: op,
                PC.PROCESSES: p,
                PC.UNITS_PER_ACCESS: int(k),
                C.STOPPED: len(candidates) - len(measured),
            }
            if measured.empty:  # every pass stopped at its limit
                out.append({**where, "tied": 0})
                continue
            ranked = measured.sort_values(PC.BYTES_PER_S_MEDIAN, ascending=False, kind="stable")
            best = ranked.iloc[0]
            tied = int((ranked[PC.BYTES_PER_S_CI_HIGH].iloc[1:] >= best[PC.BYTES_PER_S_CI_LOW]).sum())
            out.append(
                {
                    **{c: best[c] for c in PARALLEL_COLUMNS if c in best and c not in ("tied", C.STOPPED)},
                    **where,
                    "tied": tied,
                }
            )
    return pd.DataFrame(out)[PARALLEL_COLUMNS]


def _rate(value: float) -> str:
    """A bandwidth in the unit that keeps it short (MB/s, GB/s)."""
    for unit, size in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value / 1e3:.3g} kB/s"


def version_note(measurements: pd.DataFrame | None) -> str:
    """Where the parallel rows of a backend ran on another version of the library that stores
    the data than its serial rows (parallel HDF5 is the system's MPI build, the serial rows the
    h5py wheels'), a sentence that says so."""
    if measurements is None or C.CASE not in measurements or C.BACKEND not in measurements:
        return ""
    notes = []
    for name in dict.fromkeys(measurements[C.BACKEND]):
        versions = spec(name).version_columns if name in REGISTRY else ()
        if not versions or versions[0] not in measurements:
            continue
        mine = measurements[measurements[C.BACKEND] == name]
        is_parallel = mine[C.CASE] == "parallel"
        parallel = set(mine.loc[is_parallel, versions[0]].dropna())
        serial = set(mine.loc[~is_parallel, versions[0]].dropna())
        if parallel and serial and parallel != serial:
            library = spec(name).label
            notes.append(
                f"The parallel passes ran on {library} {', '.join(sorted(parallel))} (the MPI build of "
                f".venv-mpi), the serial cases on {library} {', '.join(sorted(serial))}: compare them "
                "across cases with care."
            )
    return " ".join(notes)


def parallel_markdown(summary: pd.DataFrame, measurements: pd.DataFrame | None = None) -> str:
    """The parallel section of ``recommendation.md`` (empty without the parallel case)."""
    verdicts = parallel_verdicts(summary)
    if verdicts.empty:
        return ""
    lines = [PARALLEL_HEADING, ""]
    lines.append(
        "Best store and mode per filesystem, operation, process count and units per access, by median "
        "bandwidth of whole passes (95% interval; best of the repeats in brackets)."
    )
    lines.append("")
    for _, v in verdicts.iterrows():
        where = f"- {v[C.FILESYSTEM]}, {v[PC.OPERATION]}, P = {v[PC.PROCESSES]}, {v[PC.UNITS_PER_ACCESS]} per access: "
        stopped = (
            f"; {v[C.STOPPED]} store(s) or mode(s) stopped at cases.parallel.limit_s, not ranked"
            if v[C.STOPPED]
            else ""
        )
        if pd.isna(v[PC.BYTES_PER_S_MEDIAN]):
            lines.append(where + "every pass stopped at cases.parallel.limit_s: no bandwidth to rank.")
            continue
        ranks = f"{v[PC.PROCESSES]} process{'es' if v[PC.PROCESSES] != 1 else ''}"
        mode = "one process (serial)" if v[PC.MODE] == "serial" else f"{v[PC.MODE]} on {ranks}"
        reader = f" read by {v[C.READER]}" if v[C.READER] and v[C.READER] != "h5py" else ""
        tied = f"; {v['tied']} other(s) within its interval" if v["tied"] else ""
        lines.append(
            where + f"{_backend_label(v[C.BACKEND])} {v[C.LAYOUT_ID]} {v[C.COMPRESSION]}{reader}, {mode}: "
            f"{_rate(v[PC.BYTES_PER_S_MEDIAN])} ({_rate(v[PC.BYTES_PER_S_CI_LOW])}-{_rate(v[PC.BYTES_PER_S_CI_HIGH])}; "
            f"best {_rate(v[PC.BYTES_PER_S_MAX])}){tied}{stopped}."
        )
    note = version_note(measurements)
    lines += ["", note] if note else []
    lines.append("")
    return "\n".join(lines) + "\n"


def _bandwidth_interval(rates: pd.Series) -> pd.Series:
    median, low, high = median_ci(rates.to_numpy())
    return pd.Series({PC.BYTES_PER_S_MEDIAN: median, PC.BYTES_PER_S_CI_LOW: low, PC.BYTES_PER_S_CI_HIGH: high})


def bandwidths(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
    """Cases timed as whole passes (``bytes_per_s`` per row): per group the best bandwidth
    over the repeats (the study's statistic) and the median with its interval, per group of
    ``keys`` (the summary's); None where no row is such a pass."""
    if PC.BYTES_PER_S not in rows or rows[PC.BYTES_PER_S].isna().all():
        return None
    passes = rows[rows[PC.BYTES_PER_S].notna()]
    grouped = passes.groupby(keys, sort=False, dropna=False)[PC.BYTES_PER_S]
    best = grouped.max().rename(PC.BYTES_PER_S_MAX)
    return pd.concat([best, grouped.apply(_bandwidth_interval).unstack()], axis=1).reset_index()
