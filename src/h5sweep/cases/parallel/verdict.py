"""The parallel case's verdicts: per filesystem, operation, process count and units per
access, the store and mode of the highest median bandwidth, for the section
``recommendation.md`` ends with (:mod:`h5sweep.analyze.recommend`). Nothing here imports an I/O
library."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.backends import label as _backend_label

PARALLEL_HEADING = "## Parallel passes (cases.parallel)"
PARALLEL_COLUMNS = [
    "filesystem",
    "operation",
    "processes",
    "units_per_access",
    "backend",
    "layout_id",
    "compression",
    "reader",
    "mode",
    "bytes_per_s_median",
    "bytes_per_s_ci_low",
    "bytes_per_s_ci_high",
    "bytes_per_s_max",
    "tied",
    "stopped",
]


def parallel_verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """The parallel passes, per filesystem, operation, process count P and units per access:
    the store and mode of the highest median bandwidth (serial passes, one process, compete at
    every P: a user with P ranks may still read or write with one), with its interval, and
    how many others' intervals reach it (``tied``: the measurements cannot tell them apart).
    A store and mode whose every pass was stopped at ``cases.parallel.limit_s`` has no
    bandwidth: it is not ranked, but counted (``stopped``)."""
    if summary.empty or "case" not in summary or not (summary["case"] == "parallel").any():
        return pd.DataFrame(columns=PARALLEL_COLUMNS)
    runs = summary[summary["case"] == "parallel"].copy()
    runs["reader"] = runs["reader"].fillna("") if "reader" in runs else ""
    out = []
    for (filesystem, op, k), group in runs.groupby(["filesystem", "operation", "units_per_access"], sort=True):
        serial = group[group["mode"] == "serial"]
        for p in sorted(set(group.loc[group["mode"] != "serial", "processes"].astype(int))) or [1]:
            candidates = pd.concat([group[(group["processes"] == p) & (group["mode"] != "serial")], serial])
            measured = candidates[candidates["bytes_per_s_median"].notna()]
            where = {
                "filesystem": filesystem,
                "operation": op,
                "processes": p,
                "units_per_access": int(k),
                "stopped": len(candidates) - len(measured),
            }
            if measured.empty:  # every pass stopped at its limit
                out.append({**where, "tied": 0})
                continue
            ranked = measured.sort_values("bytes_per_s_median", ascending=False, kind="stable")
            best = ranked.iloc[0]
            tied = int((ranked["bytes_per_s_ci_high"].iloc[1:] >= best["bytes_per_s_ci_low"]).sum())
            out.append(
                {
                    **{c: best[c] for c in PARALLEL_COLUMNS if c in best and c not in ("tied", "stopped")},
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
    """Where the parallel rows ran on another HDF5 than the serial reads (parallel HDF5 is
    the system's MPI build, the serial rows the h5py wheels'), a sentence that says so."""
    if measurements is None or "hdf5_version" not in measurements or "case" not in measurements:
        return ""
    hdf5 = measurements[measurements["backend"] == REFERENCE]
    parallel = set(hdf5.loc[hdf5["case"] == "parallel", "hdf5_version"].dropna())
    serial = set(hdf5.loc[~hdf5["case"].isin(["parallel"]), "hdf5_version"].dropna())
    if not parallel or not serial or parallel == serial:
        return ""
    return (
        f"The parallel passes ran on HDF5 {', '.join(sorted(parallel))} (the MPI build of .venv-mpi), "
        f"the serial cases on HDF5 {', '.join(sorted(serial))}: compare them across cases with care."
    )


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
        where = f"- {v['filesystem']}, {v['operation']}, P = {v['processes']}, {v['units_per_access']} per access: "
        stopped = (
            f"; {v['stopped']} store(s) or mode(s) stopped at cases.parallel.limit_s, not ranked"
            if v["stopped"]
            else ""
        )
        if pd.isna(v["bytes_per_s_median"]):
            lines.append(where + "every pass stopped at cases.parallel.limit_s: no bandwidth to rank.")
            continue
        ranks = f"{v['processes']} process{'es' if v['processes'] != 1 else ''}"
        mode = "one process (serial)" if v["mode"] == "serial" else f"{v['mode']} on {ranks}"
        reader = f" read by {v['reader']}" if v["reader"] and v["reader"] != "h5py" else ""
        tied = f"; {v['tied']} other(s) within its interval" if v["tied"] else ""
        lines.append(
            where + f"{_backend_label(v['backend'])} {v['layout_id']} {v['compression']}{reader}, {mode}: "
            f"{_rate(v['bytes_per_s_median'])} ({_rate(v['bytes_per_s_ci_low'])}-{_rate(v['bytes_per_s_ci_high'])}; "
            f"best {_rate(v['bytes_per_s_max'])}){tied}{stopped}."
        )
    note = version_note(measurements)
    lines += ["", note] if note else []
    lines.append("")
    return "\n".join(lines) + "\n"
