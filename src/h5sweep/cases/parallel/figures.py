"""The parallel case's figures (Folk & Choi's bandwidth against process count; Kang et al.'s
HDF5 against Zarr): bandwidth per mode and k, the modes', units' and layouts' ratios, and the
backends side by side, from the summary's parallel rows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.cases.parallel import columns as PC
from h5sweep.kit.style import OKABE_ITO, interval_errors, layout_label  # noqa: E402
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C

MODE_STYLES = {"serial": ":", "independent": "--", "collective": "-"}


def _passes(summary: pd.DataFrame, filesystem: str) -> pd.DataFrame:
    """The parallel case's rows of a filesystem, each with the label of its store (backend,
    layout, compression, reader) in ``_store``."""
    rows = summary[(summary[C.CASE] == "parallel") & (summary[C.FILESYSTEM] == filesystem)].copy()
    if rows.empty:
        return rows.assign(_store=[])

    def store(row) -> str:
        comp = "" if row[C.COMPRESSION] in ("", "none") else f" {row[C.COMPRESSION]}"
        reader = row.get(C.READER, "")
        reader = f" ({reader})" if isinstance(reader, str) and reader and reader != "h5py" else ""
        return layout_label(row) + comp + reader

    rows["_store"] = rows.apply(store, axis=1)
    rows[PC.PROCESSES] = rows[PC.PROCESSES].astype(int)
    rows[PC.UNITS_PER_ACCESS] = rows[PC.UNITS_PER_ACCESS].astype(int)
    return rows


def _pass_grid(rows: pd.DataFrame):
    """Panels: one row per operation, one column per count of units per access."""
    operations = [op for op in ("read", "write") if op in set(rows[PC.OPERATION])] or ["read"]
    values = sorted(set(rows[PC.UNITS_PER_ACCESS])) if not rows.empty else [None]
    fig, axes = plt.subplots(
        len(operations), len(values), figsize=(5.5 * len(values), 4.2 * len(operations)), squeeze=False
    )
    return fig, axes, operations, values


def _panels(rows: pd.DataFrame, axes, operations: list[str], ks: list):
    """(axis, operation, k, rows) of every panel with rows; the others say not measured."""
    for i, op in enumerate(operations):
        for j, k in enumerate(ks):
            part = rows[(rows[PC.OPERATION] == op) & (rows[PC.UNITS_PER_ACCESS] == k)]
            if part.empty:
                _not_measured(axes[i][j], f"{op}, {k} per access")
                continue
            yield axes[i][j], op, k, part


def _serial_line(ax, line: pd.DataFrame, counts: list[int], value: str, colour, label: str) -> None:
    """A serial pass (one process) drawn flat across the process counts, as the study drew it."""
    ax.plot(counts, [float(line[value].iloc[0])] * len(counts), color=colour, linestyle=":", label=label)


def plot_parallel(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 3-4: bandwidth of whole-dataset passes against processes, per store
    and mode: the best of the repeats (marker) and the median with its interval (bar); one row
    of panels per operation, one column per units per access."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, ks = _pass_grid(rows)
    counts = sorted(set(rows[PC.PROCESSES])) if not rows.empty else []
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            for mode, line in by_store.groupby(PC.MODE, sort=False):
                line = line.sort_values(PC.PROCESSES)
                label = f"{store}, {mode}"
                if mode == "serial":
                    _serial_line(ax, line, counts, PC.BYTES_PER_S_MAX, colour, label)
                    continue
                ax.errorbar(
                    line[PC.PROCESSES],
                    line[PC.BYTES_PER_S_MEDIAN],
                    yerr=interval_errors(line, PC.BYTES_PER_S_MEDIAN, PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH),
                    color=colour,
                    linestyle=MODE_STYLES.get(mode, "-"),
                    capsize=2,
                    label=label,
                )
                ax.plot(line[PC.PROCESSES], line[PC.BYTES_PER_S_MAX], color=colour, marker="o", linestyle="none")
        units = part[PC.UNITS_COLUMN].iloc[0] if not part.empty else PC.UNITS_COLUMN
        ax.set(xlabel=PC.PROCESSES, ylabel="bytes/s (best: dot; median, 95% interval)", yscale="log")
        ax.set_title(f"{op}, {k} {units} per access, {filesystem}", fontsize=9)
        _processes_axis(ax, counts)
        ax.legend(fontsize=6)
    _save(fig, out)


def _processes_axis(ax, counts) -> None:
    """Process counts on a log2 axis (1, 2, 4, ... are equally spaced), each count a tick."""
    counts = sorted({int(c) for c in counts})
    if len(counts) > 1:
        ax.set_xscale("log", base=2)
    if counts:
        ax.set_xticks(counts, [str(c) for c in counts])
        ax.minorticks_off()


def _ratio_line(ax, ratio: pd.Series, colour, style: str, label: str) -> None:
    """A ratio against processes; nothing (and no legend entry) where no ratio was measured."""
    ratio = ratio.dropna()
    if not ratio.empty:
        ax.plot(ratio.index, ratio, color=colour, linestyle=style, marker="o", label=label)


def _ratio_panel(ax, ylabel: str, title: str, missing: str) -> None:
    """A panel of ratios against processes: 1 marked, log scale; where no ratio was drawn,
    ``missing`` says why instead of an empty panel."""
    drawn = [line for line in ax.get_lines() if len(line.get_xdata())]
    if not drawn:
        ax.set_title(title, fontsize=9)
        ax.text(0.5, 0.5, missing, ha="center", va="center", fontsize=8, wrap=True, transform=ax.transAxes)
        ax.set_axis_off()
        return
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set(xlabel=PC.PROCESSES, ylabel=ylabel, yscale="log")
    _processes_axis(ax, [x for line in drawn for x in line.get_xdata()])
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def _best(part: pd.DataFrame, keys: list[str]) -> pd.Series:
    return part.set_index(keys)[PC.BYTES_PER_S_MAX]


def plot_parallel_modes(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 5-6: the ratios of best bandwidths independent / collective,
    independent / serial and collective / serial against processes, per store."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, ks = _pass_grid(rows)
    pairs = [("independent", "collective"), ("independent", "serial"), ("collective", "serial")]
    styles = ["-", "--", ":"]
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            by_mode = {m: g.set_index(PC.PROCESSES)[PC.BYTES_PER_S_MAX] for m, g in by_store.groupby(PC.MODE)}
            for style, (top, bottom) in zip(styles, pairs, strict=True):
                if top not in by_mode or bottom not in by_mode:
                    continue
                below = by_mode[bottom]
                if bottom == "serial":  # one serial pass for every process count
                    below = pd.Series(float(below.iloc[0]), index=by_mode[top].index)
                ratio = (by_mode[top] / below).dropna().sort_index()
                _ratio_line(ax, ratio, colour, style, f"{store}: {top} / {bottom}")
        _ratio_panel(
            ax,
            "ratio of best bandwidths",
            f"{op}, {k} per access, {filesystem}",
            "one mode measured: no ratio of modes",
        )
    _save(fig, out)


def plot_parallel_units(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 8-9: best bandwidth with the most units per access over that with
    the fewest, against processes, per store and mode."""
    rows = _passes(summary, filesystem)
    operations = [op for op in ("read", "write") if op in set(rows[PC.OPERATION])] or ["read"]
    fig, axes = plt.subplots(len(operations), 1, figsize=(5.5, 4.2 * len(operations)), squeeze=False)
    for i, op in enumerate(operations):
        ax = axes[i][0]
        part = rows[rows[PC.OPERATION] == op]
        ks = sorted(set(part[PC.UNITS_PER_ACCESS]))
        if len(ks) > 1:
            for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
                for mode, line in by_store.groupby(PC.MODE, sort=False):
                    best = line.set_index([PC.UNITS_PER_ACCESS, PC.PROCESSES])[PC.BYTES_PER_S_MAX]
                    ratio = (
                        (best.loc[ks[-1]] / best.loc[ks[0]]).dropna().sort_index()
                        if ks[0] in best.index.get_level_values(0) and ks[-1] in best.index.get_level_values(0)
                        else pd.Series(dtype=float)
                    )
                    _ratio_line(ax, ratio, colour, MODE_STYLES.get(mode, "-"), f"{store}, {mode}")
        title = f"{op}: {ks[-1]} / {ks[0]} per access, {filesystem}" if len(ks) > 1 else f"{op}, {filesystem}"
        _ratio_panel(ax, "ratio of best bandwidths", title, "one count of units per access measured: no ratio")
    _save(fig, out)


def plot_parallel_layouts(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 10-11: best bandwidth of each chunked store over its backend's
    contiguous store, in the same mode, units per access and process count."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, ks = _pass_grid(rows)
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        keys = [C.BACKEND, C.READER, PC.MODE, PC.PROCESSES]
        base = _best(part[part[C.LAYOUT] == "contiguous"], keys)
        chunked = part[part[C.LAYOUT] != "contiguous"]
        for colour, (store, by_store) in zip(OKABE_ITO, chunked.groupby("_store", sort=False), strict=False):
            for mode, line in by_store.groupby(PC.MODE, sort=False):
                ratio = (_best(line, keys) / base).dropna()
                if ratio.empty:
                    continue
                ratio = ratio.droplevel([0, 1, 2]).sort_index()
                _ratio_line(ax, ratio, colour, MODE_STYLES.get(mode, "-"), f"{store}, {mode}")
        _ratio_panel(
            ax,
            "chunked / contiguous (best bandwidths)",
            f"{op}, {k} per access, {filesystem}",
            "no chunked store beside a contiguous one in the same mode: no ratio",
        )
    _save(fig, out)


def plot_parallel_backends(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Kang et al.'s Fig. 3: median time of a whole read pass and a whole write pass against
    processes, each rank its own part (independent mode; one process: serial), per backend,
    layout and reader, with the median's interval."""
    rows = _passes(summary, filesystem)
    rows = rows[rows[PC.MODE].isin(["independent", "serial"])]
    fig, axes, operations, ks = _pass_grid(rows)
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            line = by_store.sort_values([PC.PROCESSES, PC.MODE]).drop_duplicates(PC.PROCESSES, keep="first")
            ax.errorbar(
                line[PC.PROCESSES],
                line[C.MEDIAN_S],
                yerr=interval_errors(line, C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S),
                color=colour,
                marker="o",
                capsize=2,
                label=store,
            )
        ax.set(xlabel=PC.PROCESSES, ylabel="seconds per pass (median, 95% interval)", yscale="log")
        _processes_axis(ax, part[PC.PROCESSES])
        ax.set_title(f"{op}, {k} per access, {filesystem}", fontsize=9)
        ax.legend(fontsize=6)
    _save(fig, out)
