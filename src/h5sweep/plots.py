"""Figures from the summary (``summary.parquet``), after the OpenMSI study's: timing bars, (m, n) heat maps,
file size against the contiguous baseline, write time, and the performance score."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

STAT_COLOURS = {"max_s": "#b39ddb", "mean_s": "#66bb6a", "median_s": "#ef5350", "min_s": "#42a5f5"}


def load_summary(path: str, primary_only: bool = True) -> pd.DataFrame:
    """The typed summary (``summary.parquet``); by default only each case's first variant
    (policy, cache, strategy), which the study's figures show. The variant figures read all
    of it."""
    summary = pd.read_parquet(path)
    summary = summary.fillna({"chunk_shape": "", "variant": "", "layout_name": ""})
    if primary_only:
        summary = summary[summary["primary"].fillna(False).astype(bool)]
    return summary


def plot_variants(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """Median time per layout for each variant of a case: visiting policy and chunk cache
    (read cases), or write strategy and fill time (write)."""
    rows = summary[(summary["case"] == case) & (summary["filesystem"] == filesystem)]
    stat = "mean_s" if case == "write" else "median_s"
    variants = list(dict.fromkeys(rows["variant"]))
    comps = _compressions(rows)
    fig, axes = plt.subplots(len(comps), 1, figsize=(max(7, 0.5 * rows["chunk_shape"].nunique() + 4), 3.4 * len(comps)))
    for ax, comp in zip(np.atleast_1d(axes), comps, strict=True):
        part = _for_compression(rows, comp)
        order = _layout_order(part)
        width = 0.8 / max(len(variants), 1)
        for k, variant in enumerate(variants):
            by_label = {layout_label(r): r[stat] for _, r in part[part["variant"] == variant].iterrows()}
            x = np.arange(len(order)) + k * width
            ax.bar(x, [by_label.get(label, np.nan) for label in order], width, label=variant)
        ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=70, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel(f"{stat[:-2]} seconds")
        ax.set_title(f"{case} on {filesystem}, {comp}: variants", fontsize=9)
        ax.legend(fontsize=6)
    _save(fig, out)


def layout_label(row) -> str:
    order = row.get("order", "xyz")
    suffix = f" {order}" if isinstance(order, str) and order not in ("", "xyz") else ""
    if not row["chunk_shape"]:
        return "contiguous" + suffix
    name = row.get("layout_name", "")
    label = f"{name} {row['chunk_shape']}" if isinstance(name, str) and name else row["chunk_shape"]
    return label + suffix


def _layout_order(frame: pd.DataFrame) -> list[str]:
    """Contiguous first, then chunk shapes by size; the transposed order after each."""
    keys = {}
    for _, r in frame.iterrows():
        shape = tuple(int(v) for v in r["chunk_shape"].split("x")) if r["chunk_shape"] else ()
        keys[layout_label(r)] = (bool(shape), shape, layout_label(r))
    return sorted(keys, key=keys.get)


def _save(fig, out: str) -> None:
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _for_compression(rows: pd.DataFrame, compression: str) -> pd.DataFrame:
    """Rows of one compression, plus the contiguous baseline (always stored uncompressed)."""
    return rows[(rows["compression"] == compression) | (rows["layout"] == "contiguous")]


def _compressions(rows: pd.DataFrame) -> list[str]:
    chunked = rows[rows["layout"] == "chunked"]
    return list(dict.fromkeys(chunked["compression"])) or ["none"]


def plot_case_bars(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """min / median / mean / max per layout, drawn over each other as in the study."""
    rows = summary[(summary["case"] == case) & (summary["filesystem"] == filesystem)]
    comps = _compressions(rows)
    fig, axes = plt.subplots(
        len(comps), 1, figsize=(max(6, 0.45 * rows["chunk_shape"].nunique() + 3), 3.2 * len(comps))
    )
    for ax, comp in zip(np.atleast_1d(axes), comps, strict=True):
        part = _for_compression(rows, comp)
        order = _layout_order(part)
        by_label = {layout_label(r): r for _, r in part.iterrows()}
        x = np.arange(len(order))
        for stat, colour in STAT_COLOURS.items():
            ax.bar(x, [by_label[label][stat] for label in order], color=colour, width=0.75, label=stat[:-2])
        ax.set_xticks(x, order, rotation=70, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("seconds")
        ax.set_title(f"{case} on {filesystem}, {comp}", fontsize=9)
        ax.legend(fontsize=7, ncols=4)
    _save(fig, out)


def _grid(rows: pd.DataFrame, stat: str) -> tuple[list[int], list[int], np.ndarray]:
    """Values of ``stat`` over the m x m x n grid (chunk shapes with equal x and y), in the
    first storage order measured."""
    if "order" in rows and not rows.empty:
        rows = rows[rows["order"] == rows["order"].iloc[0]]
    shapes = [tuple(int(v) for v in s.split("x")) for s in rows["chunk_shape"] if s]
    square = sorted({(s[0], s[2]) for s in shapes if s[0] == s[1]})
    ms = sorted({m for m, _ in square})
    ns = sorted({n for _, n in square})
    values = np.full((len(ms), len(ns)), np.nan)
    for _, r in rows[rows["chunk_shape"] != ""].iterrows():
        m, m2, n = (int(v) for v in r["chunk_shape"].split("x"))
        if m == m2:
            values[ms.index(m), ns.index(n)] = r[stat]
    return ms, ns, values


def plot_heatmaps(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """Median and max time over chunk sizes m (x and y) and n (z), one row per compression."""
    rows = summary[(summary["case"] == case) & (summary["filesystem"] == filesystem) & (summary["layout"] == "chunked")]
    comps = _compressions(rows)
    fig, axes = plt.subplots(len(comps), 2, figsize=(10, 3.4 * len(comps)), squeeze=False)
    for row_axes, comp in zip(axes, comps, strict=True):
        part = rows[rows["compression"] == comp]
        for ax, stat in zip(row_axes, ["median_s", "max_s"], strict=True):
            ms, ns, values = _grid(part, stat)
            if not ms:
                ax.set_axis_off()
                ax.set_title("no m x m x n layouts")
                continue
            finite = values[np.isfinite(values) & (values > 0)]
            norm = LogNorm(finite.min(), finite.max()) if finite.size and finite.min() < finite.max() else None
            image = ax.imshow(values, cmap="viridis", norm=norm, aspect="auto")
            ax.set_xticks(range(len(ns)), ns)
            ax.set_yticks(range(len(ms)), ms)
            ax.set_xlabel("n (chunk size in z)")
            ax.set_ylabel("m (chunk size in x, y)")
            ax.set_title(f"{case} {stat[:-2]} [s], {comp}, {filesystem}", fontsize=9)
            for (i, j), v in np.ndenumerate(values):
                if np.isfinite(v):
                    ax.text(j, i, f"{v:.2g}", ha="center", va="center", color="white", fontsize=7)
            fig.colorbar(image, ax=ax)
    _save(fig, out)


def plot_file_sizes(summary: pd.DataFrame, out: str) -> None:
    """File size per layout and compression, against the contiguous baseline."""
    rows = summary[summary["case"] == summary["case"].iloc[0]]
    rows = rows[rows["filesystem"] == rows["filesystem"].iloc[0]]
    order = [label for label in _layout_order(rows) if not label.startswith("contiguous")]
    comps = _compressions(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order) + 3), 4))
    width = 0.8 / max(len(comps), 1)
    for k, comp in enumerate(comps):
        part = rows[(rows["compression"] == comp) & (rows["layout"] == "chunked")]
        size = {layout_label(r): r["file_bytes"] / 1e6 for _, r in part.iterrows()}
        ax.bar(np.arange(len(order)) + k * width, [size.get(s, np.nan) for s in order], width, label=comp)
    baseline = rows[rows["layout"] == "contiguous"]
    if not baseline.empty:
        ax.axhline(baseline["file_bytes"].iloc[0] / 1e6, color="black", linestyle="--", label="contiguous")
    ax.axhline(rows["raw_bytes"].iloc[0] / 1e6, color="grey", linestyle=":", label="raw data")
    ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=70, fontsize=7)
    ax.set_ylabel("file size [MB]")
    ax.legend(fontsize=7)
    _save(fig, out)


def plot_write(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Mean write time per layout (error bars: min to max of the repeats)."""
    rows = summary[(summary["case"] == "write") & (summary["filesystem"] == filesystem)]
    _grouped_bars(rows, "mean_s", "write time [s] (mean, min-max)", f"write on {filesystem}", out, errors=True)


def plot_score(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Performance score per layout; full marks opaque, the rest transparent, as in the study."""
    mine = summary[summary["filesystem"] == filesystem]
    rows = mine.drop_duplicates(["layout", "chunk_shape", "compression"])
    title = f"performance score on {filesystem}"
    if "score_threshold_s" in mine:  # the thresholds applied (scaled to the bytes each case selects)
        limits = mine.dropna(subset=["score_threshold_s"]).drop_duplicates("case")
        title += "\nmedian under: " + ", ".join(
            f"{case} {limit * 1e3:.3g} ms"
            for case, limit in zip(limits["case"], limits["score_threshold_s"], strict=True)
        )
    _grouped_bars(rows, "score", "score", title, out, full_marks=True)


def _grouped_bars(rows, stat, ylabel, title, out, errors=False, full_marks=False) -> None:
    order = _layout_order(rows)
    comps = _compressions(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order) + 3), 4))
    width = 0.8 / max(len(comps), 1)
    for k, comp in enumerate(comps):
        part = {layout_label(r): r for _, r in _for_compression(rows, comp).iterrows()}
        x = np.arange(len(order)) + k * width
        values = [part[label][stat] if label in part else np.nan for label in order]
        kwargs = {}
        if errors:
            lo = [part[label][stat] - part[label]["min_s"] if label in part else 0 for label in order]
            hi = [part[label]["max_s"] - part[label][stat] if label in part else 0 for label in order]
            kwargs["yerr"] = [lo, hi]
        bars = ax.bar(x, values, width, label=comp, **kwargs)
        if full_marks:
            for bar, label in zip(bars, order, strict=True):
                if label in part and part[label]["score"] < part[label]["score_max"]:
                    bar.set_alpha(0.35)
    ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=70, fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    _save(fig, out)


def plot_scaling(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Time (mean, std) and speed-up over one process, per layout, for each block of slices."""
    rows = summary[(summary["case"] == "scaling") & (summary["filesystem"] == filesystem)]
    blocks = list(dict.fromkeys(rows["scaling_slices"]))
    fig, axes = plt.subplots(len(blocks), 2, figsize=(11, 3.6 * len(blocks)), squeeze=False)
    for (ax_time, ax_speed), block in zip(axes, blocks, strict=True):
        part = rows[rows["scaling_slices"] == block]
        for (label, comp), line in part.groupby([part.apply(layout_label, axis=1), "compression"], sort=False):
            line = line.sort_values("processes")
            name = label if label == "contiguous" else f"{label} {comp}"
            ax_time.errorbar(line["processes"], line["mean_s"], yerr=line["std_s"].fillna(0), marker="o", label=name)
            base = line.loc[line["processes"] == line["processes"].min(), "mean_s"].iloc[0]
            ax_speed.plot(line["processes"], base / line["mean_s"], marker="o", label=name)
        top = int(part["processes"].max())
        ax_speed.plot([1, top], [1, top], color="grey", linestyle=":", label="linear")
        ax_time.set(xlabel="processes", ylabel="seconds (mean, std)", title=f"var over {block}, {filesystem}")
        ax_speed.set(xlabel="processes", ylabel="speed-up", title=f"speed-up, {block}")
        ax_speed.legend(fontsize=6)
    _save(fig, out)


def plot_metadata(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """File size and write/read time against the number of datasets holding the values."""
    rows = summary[(summary["case"] == "metadata") & (summary["filesystem"] == filesystem)].copy()
    rows["n_datasets"] = rows["n_datasets"].astype(int)
    fig, (ax_size, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = rows.drop_duplicates("n_datasets").sort_values("n_datasets")
    ax_size.plot(sizes["n_datasets"], sizes["metadata_file_bytes"].astype(float) / 1e6, marker="o", label="file")
    ax_size.axhline(float(rows["raw_bytes"].iloc[0]) / 1e6, color="grey", linestyle=":", label="raw data")
    ax_size.set(xscale="log", xlabel="datasets", ylabel="file size [MB]", title=f"file size, {filesystem}")
    ax_size.legend(fontsize=7)
    for operation, part in rows.groupby("operation"):
        part = part.sort_values("n_datasets")
        ax_time.errorbar(part["n_datasets"], part["mean_s"], yerr=part["std_s"].fillna(0), marker="o", label=operation)
    ax_time.set(xscale="log", yscale="log", xlabel="datasets", ylabel="seconds (mean)", title=f"time, {filesystem}")
    ax_time.legend(fontsize=7)
    _save(fig, out)


def plot_iosize(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Throughput (MB/s, from the mean time) against request size, per API and operation."""
    rows = summary[(summary["case"] == "iosize") & (summary["filesystem"] == filesystem)].copy()
    rows["request_bytes"] = rows["request_bytes"].astype(int)
    rows["throughput"] = rows["bytes_selected"].astype(float) / rows["mean_s"] / 1e6
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = {"raw": "--", "hdf5": "-"}
    for (api, direction, state), line in rows.groupby(["api", "direction", "cache_state"], dropna=False):
        line = line.sort_values("request_bytes")
        label = f"{api} {direction}" + (f" {state}" if isinstance(state, str) and state else "")
        ax.plot(line["request_bytes"], line["throughput"], styles.get(api, "-"), marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="request size [bytes]", ylabel="MB/s", title=f"throughput, {filesystem}")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    _save(fig, out)
