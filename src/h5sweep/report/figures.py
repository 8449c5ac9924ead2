"""Figures from the summary (``summary.parquet``), after the OpenMSI study's: timing bars, (m, n) heat maps,
file size against the contiguous baseline, write time, and the performance score."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.colors import TwoSlopeNorm, to_rgb  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from h5sweep.backends import HDF5, RAW, REFERENCE  # noqa: E402
from h5sweep.backends import label as backend_label  # noqa: E402

# Colour-blind-safe throughout: Okabe and Ito's qualitative palette, a purple-orange diverging
# map for ratios (centred on 1) and cividis where a sequential scale is needed.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
CACHE_STATE_COLOURS = {"cold": "#0072B2", "warm": "#D55E00", "memory": "#009E73", "": "#000000"}
DIVERGING = "PuOr_r"
plt.rcParams["axes.prop_cycle"] = cycler(color=OKABE_ITO)
plt.rcParams["image.cmap"] = "cividis"


def load_summary(path: str, primary_only: bool = True) -> pd.DataFrame:
    """The typed summary (``summary.parquet``); by default only each case's first variant
    (policy, cache, strategy), which the study's figures show. The variant figures read all
    of it."""
    summary = pd.read_parquet(path)
    summary = summary.fillna({"chunk_shape": "", "variant": "", "layout_name": "", "shard_shape": ""})
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


def backend_prefix(row) -> str:
    """'' for the reference backend (the figures of a sweep of it alone stay as they were),
    else the backend's label and a space."""
    backend = row.get("backend", REFERENCE)
    if not isinstance(backend, str) or backend in ("", REFERENCE):
        return ""
    return f"{backend_label(backend)} "


def layout_label(row) -> str:
    order = row.get("order", "xyz")
    suffix = f" {order}" if isinstance(order, str) and order not in ("", "xyz") else ""
    if not row["chunk_shape"]:
        return backend_prefix(row) + "contiguous" + suffix
    name = row.get("layout_name", "")
    label = f"{name} {row['chunk_shape']}" if isinstance(name, str) and name else row["chunk_shape"]
    shard = row.get("shard_shape", "")
    shards = f" in shards {shard}" if isinstance(shard, str) and shard else ""
    return backend_prefix(row) + label + shards + suffix


def _layout_order(frame: pd.DataFrame) -> list[str]:
    """Contiguous first, then chunk shapes by size, each backend's store of a shape side by
    side; the transposed order after each."""
    keys = {}
    for _, r in frame.iterrows():
        shape = tuple(int(v) for v in r["chunk_shape"].split("x")) if r["chunk_shape"] else ()
        keys[layout_label(r)] = (bool(shape), shape, backend_prefix(r), layout_label(r))
    return sorted(keys, key=keys.get)


def interval_errors(frame: pd.DataFrame, value: str, low: str, high: str) -> list[pd.Series]:
    """Error bar lengths below and above ``value`` for its interval ``[low, high]``."""
    return [(frame[value] - frame[low]).clip(lower=0), (frame[high] - frame[value]).clip(lower=0)]


def _save(fig, out: str) -> None:
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _reference_of(rows: pd.DataFrame) -> str:
    """The store the rows' ratios are to (the summary's ``ratio_reference``), as tables name it."""
    named = rows["ratio_reference"].dropna() if "ratio_reference" in rows else pd.Series(dtype=str)
    return str(named.iloc[0]) if len(named) else "contiguous"


def _for_compression(rows: pd.DataFrame, compression: str) -> pd.DataFrame:
    """Rows of one compression, plus the contiguous baseline (always stored uncompressed)."""
    return rows[(rows["compression"] == compression) | (rows["layout"] == "contiguous")]


def _compressions(rows: pd.DataFrame) -> list[str]:
    chunked = rows[rows["layout"] == "chunked"]
    return list(dict.fromkeys(chunked["compression"])) or ["none"]


def _candidate(row) -> str:
    """A layout and its compression, as the figures name them."""
    label = layout_label(row)
    return label if row["compression"] == "none" else f"{label} {row['compression']}"


def _selection_words(row, reads) -> str:
    words = f"{row['bytes_selected'] / 1e6:.3g} MB per read"
    if reads is not None and not reads.empty and "dataset_shape" in reads:
        first = reads.iloc[0]
        words += f" of a {first['dataset_shape']} {first['dtype']} dataset"
    return words


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


def _text_colour(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba``."""
    r, g, b = to_rgb(rgba)
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def plot_heatmaps(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """Ratio to contiguous over chunk sizes m (x and y) and n (z): the median of the paired
    ratios and the ratio of the 90th percentiles, one row per compression, all on one
    diverging log2 scale centred on 1 (same as contiguous); the best median cell framed. With
    several backends, one row per backend and compression (each against the contiguous HDF5
    file)."""
    rows = summary[(summary["case"] == case) & (summary["filesystem"] == filesystem)]
    reference = _reference_of(rows)
    layout_id, _, compression = reference.partition(" ")
    base = rows[(rows["layout_id"] == layout_id) & (rows["compression"] == (compression or "none"))]
    rows = rows[rows["layout"] == "chunked"].copy()
    base_p90 = float(base["p90_s"].iloc[0]) if not base.empty else np.nan
    rows["p90_ratio"] = rows["p90_s"] / base_p90
    if "backend" not in rows:
        rows = rows.assign(backend=REFERENCE)
    comps = [
        (backend, comp)
        for backend in dict.fromkeys(rows["backend"])
        for comp in _compressions(rows[rows["backend"] == backend])
    ] or [(REFERENCE, "none")]
    panels = [("ratio_to_contiguous", "median ratio"), ("p90_ratio", "p90 ratio")]
    grids = {
        (c, stat): _grid(rows[(rows["backend"] == c[0]) & (rows["compression"] == c[1])], stat)
        for c in comps
        for stat, _ in panels
    }
    logs = [np.log2(v[2][np.isfinite(v[2]) & (v[2] > 0)]) for v in grids.values()]
    reach = max([float(np.abs(v).max()) for v in logs if v.size] + [0.1])
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-reach, vmax=reach)
    best = min(
        (
            (float(v), c, i, j)
            for c in comps
            for (i, j), v in np.ndenumerate(grids[(c, panels[0][0])][2])
            if np.isfinite(v)
        ),
        default=None,
    )
    fig, axes = plt.subplots(len(comps), 2, figsize=(10, 3.4 * len(comps)), squeeze=False)
    for row_axes, comp in zip(axes, comps, strict=True):
        for ax, (stat, words) in zip(row_axes, panels, strict=True):
            ms, ns, values = grids[(comp, stat)]
            if not ms:
                ax.set_axis_off()
                ax.set_title("no m x m x n layouts")
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                image = ax.imshow(np.log2(values), cmap=DIVERGING, norm=norm, aspect="auto")
            ax.set_xticks(range(len(ns)), ns)
            ax.set_yticks(range(len(ms)), ms)
            ax.set_xlabel("n (chunk size in z)")
            ax.set_ylabel("m (chunk size in x, y)")
            several = any(c[0] != REFERENCE for c in comps)
            store = f"{backend_label(comp[0])} {comp[1]}" if several else comp[1]
            ax.set_title(f"{case} {words} to {reference}, {store}, {filesystem}", fontsize=9)
            for (i, j), v in np.ndenumerate(values):
                if np.isfinite(v) and v > 0:
                    colour = _text_colour(image.cmap(norm(np.log2(v))))
                    ax.text(j, i, f"{v:.2g}", ha="center", va="center", color=colour, fontsize=7)
            if best and stat == panels[0][0] and best[1] == comp:
                ax.add_patch(Rectangle((best[3] - 0.5, best[2] - 0.5), 1, 1, fill=False, linewidth=2.5, color="black"))
            bar = fig.colorbar(image, ax=ax)
            ticks = np.arange(-np.floor(reach), np.floor(reach) + 1)
            bar.set_ticks(ticks, labels=[f"{2**t:g}" for t in ticks])
            bar.set_label(f"x {reference} (log2)", fontsize=7)
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
    """Median write time per layout, whiskers from the fastest to the slowest repeat."""
    rows = summary[(summary["case"] == "write") & (summary["filesystem"] == filesystem)]
    n = int(rows["repeats"].min()) if not rows.empty else 0
    title = f"write on {filesystem}: median, whiskers min to max of n = {n} repeats"
    _grouped_bars(rows, "median_s", "write time [s]", title, out, errors=True)


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
    """Bars per layout, one colour per compression; contiguous (always uncompressed) once,
    in black."""
    order = _layout_order(rows)
    comps = _compressions(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order) + 3), 4))
    width = 0.8 / max(len(comps), 1)
    groups = [(comp, rows[(rows["compression"] == comp) & (rows["layout"] != "contiguous")], None) for comp in comps]
    groups.append(("contiguous", rows[rows["layout"] == "contiguous"], "black"))
    for k, (name, part_rows, colour) in enumerate(groups):
        part = {layout_label(r): r for _, r in part_rows.iterrows()}
        if not part:
            continue
        offset = 0.4 - width / 2 if colour else min(k, len(comps) - 1) * width
        x = np.arange(len(order)) + offset
        values = [part[label][stat] if label in part else np.nan for label in order]
        kwargs = {"color": colour} if colour else {}
        if errors:
            lo = [part[label][stat] - part[label]["min_s"] if label in part else 0 for label in order]
            hi = [part[label]["max_s"] - part[label][stat] if label in part else 0 for label in order]
            kwargs["yerr"] = [lo, hi]
            kwargs["capsize"] = 2
        bars = ax.bar(x, values, width, label=name, **kwargs)
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


MODE_STYLES = {"serial": ":", "independent": "--", "collective": "-"}


def _passes(summary: pd.DataFrame, filesystem: str) -> pd.DataFrame:
    """The parallel case's rows of a filesystem, each with the label of its store (backend,
    layout, compression, reader) in ``_store``."""
    rows = summary[(summary["case"] == "parallel") & (summary["filesystem"] == filesystem)].copy()
    if rows.empty:
        return rows.assign(_store=[])

    def store(row) -> str:
        comp = "" if row["compression"] in ("", "none") else f" {row['compression']}"
        reader = row.get("reader", "")
        reader = f" ({reader})" if isinstance(reader, str) and reader and reader != "h5py" else ""
        return layout_label(row) + comp + reader

    rows["_store"] = rows.apply(store, axis=1)
    rows["processes"] = rows["processes"].astype(int)
    rows["units_per_access"] = rows["units_per_access"].astype(int)
    return rows


def _pass_grid(rows: pd.DataFrame, columns: str = "units_per_access"):
    """Panels: one row per operation, one column per value of ``columns``."""
    operations = [op for op in ("read", "write") if op in set(rows["operation"])] or ["read"]
    values = sorted(set(rows[columns])) if not rows.empty else [None]
    fig, axes = plt.subplots(
        len(operations), len(values), figsize=(5.5 * len(values), 4.2 * len(operations)), squeeze=False
    )
    return fig, axes, operations, values


def _not_measured(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"{what}: not measured", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def _panels(rows: pd.DataFrame, axes, operations: list[str], ks: list):
    """(axis, operation, k, rows) of every panel with rows; the others say not measured."""
    for i, op in enumerate(operations):
        for j, k in enumerate(ks):
            part = rows[(rows["operation"] == op) & (rows["units_per_access"] == k)]
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
    counts = sorted(set(rows["processes"])) if not rows.empty else []
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            for mode, line in by_store.groupby("mode", sort=False):
                line = line.sort_values("processes")
                label = f"{store}, {mode}"
                if mode == "serial":
                    _serial_line(ax, line, counts, "bytes_per_s_max", colour, label)
                    continue
                ax.errorbar(
                    line["processes"],
                    line["bytes_per_s_median"],
                    yerr=interval_errors(line, "bytes_per_s_median", "bytes_per_s_ci_low", "bytes_per_s_ci_high"),
                    color=colour,
                    linestyle=MODE_STYLES.get(mode, "-"),
                    capsize=2,
                    label=label,
                )
                ax.plot(line["processes"], line["bytes_per_s_max"], color=colour, marker="o", linestyle="none")
        units = part["units"].iloc[0] if not part.empty else "units"
        ax.set(xlabel="processes", ylabel="bytes/s (best: dot; median, 95% interval)", yscale="log")
        ax.set_title(f"{op}, {k} {units} per access, {filesystem}", fontsize=9)
        if counts:
            ax.set_xticks(counts)
        ax.legend(fontsize=6)
    _save(fig, out)


def _ratio_line(ax, ratio: pd.Series, colour, style: str, label: str) -> None:
    ax.plot(ratio.index, ratio, color=colour, linestyle=style, marker="o", label=label)


def _ratio_panel(ax, ylabel: str, title: str) -> None:
    """A panel of ratios against processes: 1 marked, log scale."""
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set(xlabel="processes", ylabel=ylabel, yscale="log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def _best(part: pd.DataFrame, keys: list[str]) -> pd.Series:
    return part.set_index(keys)["bytes_per_s_max"]


def plot_parallel_modes(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 5-6: the ratios of best bandwidths independent / collective,
    independent / serial and collective / serial against processes, per store."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, ks = _pass_grid(rows)
    pairs = [("independent", "collective"), ("independent", "serial"), ("collective", "serial")]
    styles = ["-", "--", ":"]
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            by_mode = {m: g.set_index("processes")["bytes_per_s_max"] for m, g in by_store.groupby("mode")}
            for style, (top, bottom) in zip(styles, pairs, strict=True):
                if top not in by_mode or bottom not in by_mode:
                    continue
                below = by_mode[bottom]
                if bottom == "serial":  # one serial pass for every process count
                    below = pd.Series(float(below.iloc[0]), index=by_mode[top].index)
                ratio = (by_mode[top] / below).dropna().sort_index()
                _ratio_line(ax, ratio, colour, style, f"{store}: {top} / {bottom}")
        _ratio_panel(ax, "ratio of best bandwidths", f"{op}, {k} per access, {filesystem}")
    _save(fig, out)


def plot_parallel_units(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 8-9: best bandwidth with the most units per access over that with
    the fewest, against processes, per store and mode."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, _ = _pass_grid(rows, columns="operation")
    for i, op in enumerate(operations):
        ax = axes[i][0]
        part = rows[rows["operation"] == op]
        ks = sorted(set(part["units_per_access"]))
        if len(ks) > 1:
            for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
                for mode, line in by_store.groupby("mode", sort=False):
                    best = line.set_index(["units_per_access", "processes"])["bytes_per_s_max"]
                    ratio = (
                        (best.loc[ks[-1]] / best.loc[ks[0]]).dropna().sort_index()
                        if ks[0] in best.index.get_level_values(0) and ks[-1] in best.index.get_level_values(0)
                        else pd.Series(dtype=float)
                    )
                    _ratio_line(ax, ratio, colour, MODE_STYLES.get(mode, "-"), f"{store}, {mode}")
        title = f"{op}: {ks[-1]} / {ks[0]} per access, {filesystem}" if len(ks) > 1 else f"{op}: one k"
        _ratio_panel(ax, "ratio of best bandwidths", title)
    _save(fig, out)


def plot_parallel_layouts(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Folk & Choi's Figs. 10-11: best bandwidth of each chunked store over its backend's
    contiguous store, in the same mode, units per access and process count."""
    rows = _passes(summary, filesystem)
    fig, axes, operations, ks = _pass_grid(rows)
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        keys = ["backend", "reader", "mode", "processes"]
        base = _best(part[part["layout"] == "contiguous"], keys)
        chunked = part[part["layout"] != "contiguous"]
        for colour, (store, by_store) in zip(OKABE_ITO, chunked.groupby("_store", sort=False), strict=False):
            for mode, line in by_store.groupby("mode", sort=False):
                ratio = (_best(line, keys) / base).dropna()
                if ratio.empty:
                    continue
                ratio = ratio.droplevel([0, 1, 2]).sort_index()
                _ratio_line(ax, ratio, colour, MODE_STYLES.get(mode, "-"), f"{store}, {mode}")
        _ratio_panel(ax, "chunked / contiguous (best bandwidths)", f"{op}, {k} per access, {filesystem}")
    _save(fig, out)


def plot_parallel_backends(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Kang et al.'s Fig. 3: median time of a whole read pass and a whole write pass against
    processes, each rank its own part (independent mode; one process: serial), per backend,
    layout and reader, with the median's interval."""
    rows = _passes(summary, filesystem)
    rows = rows[rows["mode"].isin(["independent", "serial"])]
    fig, axes, operations, ks = _pass_grid(rows)
    for ax, op, k, part in _panels(rows, axes, operations, ks):
        for colour, (store, by_store) in zip(OKABE_ITO, part.groupby("_store", sort=False), strict=False):
            line = by_store.sort_values(["processes", "mode"]).drop_duplicates("processes", keep="first")
            ax.errorbar(
                line["processes"],
                line["median_s"],
                yerr=interval_errors(line, "median_s", "median_ci_low_s", "median_ci_high_s"),
                color=colour,
                marker="o",
                capsize=2,
                label=store,
            )
        ax.set(xlabel="processes", ylabel="seconds per pass (median, 95% interval)", yscale="log")
        ax.set_title(f"{op}, {k} per access, {filesystem}", fontsize=9)
        ax.legend(fontsize=6)
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
    styles = {RAW: "--", HDF5: "-"}
    for (api, direction, state), line in rows.groupby(["api", "direction", "cache_state"], dropna=False):
        line = line.sort_values("request_bytes")
        label = f"{api} {direction}" + (f" {state}" if isinstance(state, str) and state else "")
        ax.plot(line["request_bytes"], line["throughput"], styles.get(api, "-"), marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="request size [bytes]", ylabel="MB/s", title=f"throughput, {filesystem}")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    _save(fig, out)


def pareto_front(points: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """The rows no other row beats on both ``x`` and ``y`` (smaller is better), by ``x``."""
    ordered = points.dropna(subset=[x, y]).sort_values([x, y], kind="stable")
    keep, best = [], np.inf
    for index, row in ordered.iterrows():
        if row[y] < best:
            keep.append(index)
            best = row[y]
    return ordered.loc[keep]


def _reference_rows(rows: pd.DataFrame) -> pd.Series:
    if "is_reference" in rows:
        return rows["is_reference"].fillna(False).astype(bool)
    return rows["layout_id"] == "contiguous"


def plot_tradeoff(recommendation: pd.DataFrame, filesystem: str, out: str) -> None:
    """The ranking's score (the objective's, e.g. the read mix's time over the reference's)
    against file size and write time, with the Pareto front (nothing is both faster and
    smaller) and the recommendation marked."""
    rows = recommendation[recommendation["filesystem"] == filesystem].copy()
    rows["_name"] = [
        backend_prefix(r)
        + (r["layout_id"] if not isinstance(r["layout_name"], str) or not r["layout_name"] else r["layout_name"])
        + ("" if r["compression"] == "none" else f" {r['compression']}")
        for _, r in rows.iterrows()
    ]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, (x, words) in zip(
        axes, [("file_ratio", "file size / raw data"), ("write_median_s", "write time [s]")], strict=True
    ):
        inside = rows[rows["meets_limits"].astype(bool)]
        outside = rows[~rows["meets_limits"].astype(bool)]
        # one colour per filter (the compression's family: gzip, shuffle+gzip, blosc, ...)
        family = rows["compression"].str.replace(r"-[^+]*$", "", regex=True)
        families = list(dict.fromkeys(family))
        groups = [
            (inside[family[inside.index] == f], {"color": OKABE_ITO[k % len(OKABE_ITO)], "label": f})
            for k, f in enumerate(families)
        ]
        groups.append((outside, {"color": "grey", "alpha": 0.5, "label": "beyond the limits"}))
        for part, style in groups:
            if part.empty:
                continue
            ax.errorbar(
                part[x],
                part["score"],
                yerr=interval_errors(part, "score", "score_ci_low", "score_ci_high"),
                fmt="o",
                markersize=4,
                capsize=2,
                linestyle="none",
                **style,
            )
        front = pareto_front(inside, x, "score")
        ax.step(front[x], front["score"], where="post", color="black", linestyle="--", label="Pareto front")
        chosen = rows[rows["recommended"].astype(bool)]
        ax.scatter(chosen[x], chosen["score"], marker="*", s=260, color=OKABE_ITO[5], zorder=5, label="recommended")
        for _, r in pd.concat([front, chosen, rows[_reference_rows(rows)]]).drop_duplicates("_name").iterrows():
            ax.annotate(r["_name"], (r[x], r["score"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        if (rows["score"] > 0).any():
            ax.set_yscale("log", base=2)
        ax.set_xlabel(words)
        if x == "write_median_s" and (pd.to_numeric(rows[x], errors="coerce") > 0).any():
            ax.set_xscale("log")
        if rows.empty:
            _not_measured(ax, "no layout ranked")
    reference = rows["reference_store"].iloc[0] if "reference_store" in rows and not rows.empty else "contiguous"
    objective = rows["objective"].iloc[0] if "objective" in rows and not rows.empty else "time"
    axes[0].set_ylabel(f"score ({objective}; 1 = {reference}), 95% interval")
    axes[0].legend(fontsize=7)
    if not rows.empty:
        fig.suptitle(
            f"trade-off on {filesystem}: read mix {rows['weights'].iloc[0]} ({rows['statistic'].iloc[0]})", fontsize=9
        )
    _save(fig, out)


def plot_amplification(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """The model against the device: per read case, the stored bytes of the chunks a read
    touches (from the layout and the file's chunk index) against the bytes its cold reads
    fetched from the device; above the diagonal the storage read more than the chunks
    (readahead, metadata), below it less (already cached)."""
    from h5sweep.analyze.aggregate import model_bytes

    rows = summary[(summary["filesystem"] == filesystem) & (summary["cache_state"] == "cold")]
    rows = rows.dropna(subset=["device_read_bytes_median"])
    rows = rows.assign(_model=model_bytes(rows) if not rows.empty else [])
    rows = rows[rows["_model"] > 0]
    cases = list(dict.fromkeys(rows["case"]))
    fig, axes = plt.subplots(1, max(1, len(cases)), figsize=(4.6 * max(1, len(cases)), 4.4), squeeze=False)
    if not cases:
        axes[0][0].set_axis_off()
        axes[0][0].set_title(f"no cold reads from a device on {filesystem} (a memory filesystem?)", fontsize=9)
    for ax, case in zip(axes[0], cases, strict=False):
        part = rows[rows["case"] == case]
        groups = part.groupby(["backend", "compression"], sort=False)
        for colour, ((backend, comp), group) in zip(OKABE_ITO * 3, groups, strict=False):
            ax.scatter(
                group["stored_bytes_touched_median"] / 1e6,
                group["device_read_bytes_median"] / 1e6,
                color=colour,
                s=18,
                marker="o" if backend == REFERENCE else "s",
                label=comp if backend == REFERENCE else f"{backend_label(backend)} {comp}",
            )
        values = np.concatenate([part["stored_bytes_touched_median"], part["device_read_bytes_median"]]) / 1e6
        values = values[values > 0]
        if values.size:
            lo, hi = values.min() / 1.5, values.max() * 1.5
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, linestyle=":", label="read = chunks touched")
            ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi))
        ax.set_xlabel("model: stored bytes of chunks touched [MB]")
        ax.set_ylabel("measured: device bytes read [MB]")
        ax.set_title(f"{case} on {filesystem} (medians of cold reads)", fontsize=9)
        ax.legend(fontsize=7)
    _save(fig, out)


def plot_backends(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """HDF5 against the other backends, layout by layout: per read case, each store's paired
    ratio of its reads to HDF5's reads of the same layout, compression and selections (median
    and 95% interval, log2 axis; left of 1 the other backend is faster), one colour per
    reader."""
    if "ratio_to_hdf5" not in summary:
        summary = summary.assign(ratio_to_hdf5=np.nan)
    rows = summary[(summary["filesystem"] == filesystem) & summary["ratio_to_hdf5"].notna()]
    others = " and ".join(backend_label(b) for b in sorted(set(rows["backend"]) - {REFERENCE})) or "Other backends"
    # named without the backend: each row is one store against its HDF5 twin
    rows = rows.assign(backend=REFERENCE)
    rows = rows.assign(_name=rows.apply(_candidate, axis=1) if not rows.empty else [])
    shape = {  # a contiguous store (raw) sorts first
        n: tuple(int(v) for v in str(c).split("x") if v.isdigit())
        for n, c in zip(rows["_name"], rows["chunk_shape"], strict=True)
    }
    names = sorted(shape, key=lambda n: (shape[n], n))  # one order for every case (shared axis)
    y = {n: i for i, n in enumerate(names)}
    series = list(dict.fromkeys(zip(rows["reader"], rows["cache_state"].fillna(""), strict=True)))
    cases = list(dict.fromkeys(rows["case"]))
    fig, axes = plt.subplots(
        1,
        max(1, len(cases)),
        figsize=(3.6 * max(1, len(cases)) + 3.5, max(3.0, 0.35 * len(names) + 1.8)),
        squeeze=False,
        sharey=True,
    )
    if not cases:
        axes[0][0].set_axis_off()
        axes[0][0].set_title(f"no store of another backend was compared with HDF5 on {filesystem}", fontsize=9)
    for ax, case in zip(axes[0], cases, strict=False):
        for k, (reader, state) in enumerate(series):
            mine = rows[(rows["case"] == case) & (rows["reader"] == reader) & (rows["cache_state"].fillna("") == state)]
            ax.errorbar(
                mine["ratio_to_hdf5"],
                mine["_name"].map(y).astype(float) + (k - (len(series) - 1) / 2) * 0.18,
                xerr=interval_errors(mine, "ratio_to_hdf5", "ratio_to_hdf5_ci_low", "ratio_to_hdf5_ci_high"),
                fmt="o",
                markersize=4,
                capsize=3,
                color=OKABE_ITO[k % len(OKABE_ITO)],
                label=f"{reader}, {state}" if state else reader,
            )
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("time / HDF5's (median, 95% CI)", fontsize=8)
        ax.set_title(case, fontsize=9)
    if cases:
        axes[0][0].set_yticks(range(len(names)), names, fontsize=7)
        axes[0][-1].legend(fontsize=7, loc="best")
        fig.suptitle(
            f"{others} against {backend_label(REFERENCE)} on {filesystem}: per read case, time on a selection over "
            f"the {backend_label(REFERENCE)} file's of the same chunk shape and codec (paired; left of 1 the other "
            "backend is faster)",
            fontsize=9,
        )
    _save(fig, out)
