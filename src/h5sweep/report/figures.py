"""Figures from the summary (``summary.parquet``), after the OpenMSI study's: timing bars, (m, n) heat maps,
file size against the contiguous baseline, write time, and the performance score."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import TwoSlopeNorm, to_rgb  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from h5sweep.backends import REFERENCE  # noqa: E402
from h5sweep.backends import label as backend_label  # noqa: E402
from h5sweep.kit.style import (  # noqa: E402
    DIVERGING,
    backend_prefix,
    layout_label,
    log_if_wide,
    store_label,
    title,
)
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def load_summary(path: str, primary_only: bool = True) -> pd.DataFrame:
    """The typed summary (``summary.parquet``); by default only each case's first variant
    (policy, cache, strategy), which the study's figures show. The variant figures read all
    of it."""
    summary = pd.read_parquet(path)
    summary = summary.fillna({C.CHUNK_SHAPE: "", C.VARIANT: "", C.LAYOUT_NAME: "", C.SHARD_SHAPE: "", C.PAGE_SIZE: 0})
    if primary_only:
        summary = summary[summary[C.PRIMARY].fillna(False).astype(bool)]
    return summary


def plot_variants(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """Median time per layout for each variant of a case: visiting policy and chunk cache
    (read cases), or write strategy and fill time (write); horizontal bars, one group per
    layout (its name beside it), one colour per variant."""
    rows = summary[(summary[C.CASE] == case) & (summary[C.FILESYSTEM] == filesystem)]
    stat = C.MEAN_S if case == "write" else C.MEDIAN_S
    variants = list(dict.fromkeys(rows[C.VARIANT]))
    comps = _compressions(rows)
    layouts = max(1, max((len(_layout_order(_for_compression(rows, c))) for c in comps), default=1))
    tall = max(2.8, 0.12 * layouts * len(variants) + 1.2, 0.13 * len(variants) + 1.2)
    fig, axes = plt.subplots(len(comps), 1, figsize=(10, tall * len(comps)), squeeze=False)
    for ax, comp in zip(axes[:, 0], comps, strict=True):
        part = _for_compression(rows, comp)
        order = _layout_order(part)
        height = 0.8 / max(len(variants), 1)
        for k, variant in enumerate(variants):
            by_label = {layout_label(r): r[stat] for _, r in part[part[C.VARIANT] == variant].iterrows()}
            values = [by_label.get(label, np.nan) for label in order]
            if not np.isfinite(np.asarray(values, float)).any():  # not a variant of these stores
                continue
            ax.barh(np.arange(len(order)) + k * height, values, height, label=variant)
        ax.set_yticks(np.arange(len(order)) + 0.4 - height / 2, order, fontsize=7)
        ax.invert_yaxis()  # the first layout on top
        ax.set_xscale("log")
        ax.set_xlabel(f"{stat[:-2]} seconds")
        ax.set_title(f"{case} on {filesystem}, {comp}: variants", fontsize=9)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside: never over a bar
    _save(fig, out)


def _layout_order(frame: pd.DataFrame) -> list[str]:
    """Contiguous first, then chunk shapes by size, each backend's store of a shape side by
    side; the transposed order after each."""
    keys = {}
    for _, r in frame.iterrows():
        shape = tuple(int(v) for v in r[C.CHUNK_SHAPE].split("x")) if r[C.CHUNK_SHAPE] else ()
        keys[layout_label(r)] = (bool(shape), shape, backend_prefix(r), layout_label(r))
    return sorted(keys, key=keys.get)


def _reference_of(rows: pd.DataFrame) -> str:
    """The store the rows' ratios are to (the summary's ``ratio_reference``), as tables name it."""
    named = rows[C.RATIO_REFERENCE].dropna() if C.RATIO_REFERENCE in rows else pd.Series(dtype=str)
    return str(named.iloc[0]) if len(named) else "contiguous"


def _for_compression(rows: pd.DataFrame, compression: str) -> pd.DataFrame:
    """Rows of one compression, plus the contiguous baseline (always stored uncompressed)."""
    return rows[(rows[C.COMPRESSION] == compression) | (rows[C.LAYOUT] == "contiguous")]


def _compressions(rows: pd.DataFrame) -> list[str]:
    chunked = rows[rows[C.LAYOUT] == "chunked"]
    return list(dict.fromkeys(chunked[C.COMPRESSION])) or ["none"]


def _candidate(row) -> str:
    """A layout and its compression, as the figures name them (raced out: how far behind)."""
    return store_label(row)


def _selection_words(row, reads) -> str:
    words = f"{row[C.BYTES_SELECTED] / 1e6:.3g} MB per read"
    if reads is not None and not reads.empty and C.DATASET_SHAPE in reads:
        first = reads.iloc[0]
        words += f" of a {first[C.DATASET_SHAPE]} {first[C.DTYPE]} dataset"
    return words


def _grid(rows: pd.DataFrame, stat: str) -> tuple[list[int], list[int], np.ndarray]:
    """Values of ``stat`` over the m x m x n grid (chunk shapes with equal x and y), in the
    first storage order measured."""
    if C.ORDER in rows and not rows.empty:
        rows = rows[rows[C.ORDER] == rows[C.ORDER].iloc[0]]
    shapes = [tuple(int(v) for v in s.split("x")) for s in rows[C.CHUNK_SHAPE] if s]
    square = sorted({(s[0], s[2]) for s in shapes if s[0] == s[1]})
    ms = sorted({m for m, _ in square})
    ns = sorted({n for _, n in square})
    values = np.full((len(ms), len(ns)), np.nan)
    for _, r in rows[rows[C.CHUNK_SHAPE] != ""].iterrows():
        m, m2, n = (int(v) for v in r[C.CHUNK_SHAPE].split("x"))
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
    rows = summary[(summary[C.CASE] == case) & (summary[C.FILESYSTEM] == filesystem)]
    reference = _reference_of(rows)
    layout_id, _, compression = reference.partition(" ")
    base = rows[(rows[C.LAYOUT_ID] == layout_id) & (rows[C.COMPRESSION] == (compression or "none"))]
    rows = rows[rows[C.LAYOUT] == "chunked"].copy()
    base_p90 = float(base[C.P90_S].iloc[0]) if not base.empty else np.nan
    rows["p90_ratio"] = rows[C.P90_S] / base_p90
    if C.BACKEND not in rows:
        rows = rows.assign(backend=REFERENCE)
    comps = [
        (backend, comp)
        for backend in dict.fromkeys(rows[C.BACKEND])
        for comp in _compressions(rows[rows[C.BACKEND] == backend])
    ] or [(REFERENCE, "none")]
    panels = [(C.RATIO_TO_CONTIGUOUS, "median ratio"), ("p90_ratio", "p90 ratio")]
    grids = {
        (c, stat): _grid(rows[(rows[C.BACKEND] == c[0]) & (rows[C.COMPRESSION] == c[1])], stat)
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
                _not_measured(ax, "no m x m x n layouts")
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                image = ax.imshow(np.log2(values), cmap=DIVERGING, norm=norm, aspect="auto")
            ax.set_xticks(range(len(ns)), ns)
            ax.set_yticks(range(len(ms)), ms)
            ax.set_xlabel("n (chunk size in z)")
            ax.set_ylabel("m (chunk size in x, y)")
            several = any(c[0] != REFERENCE for c in comps)
            store = f"{backend_label(comp[0])} {comp[1]}" if several else comp[1]
            title(ax, f"{case} {words} to {reference}, {store}, {filesystem}")
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
    rows = summary[summary[C.CASE] == summary[C.CASE].iloc[0]]
    rows = rows[rows[C.FILESYSTEM] == rows[C.FILESYSTEM].iloc[0]]
    order = [label for label in _layout_order(rows) if not label.startswith("contiguous")]
    comps = _compressions(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order) + 3), 4))
    width = 0.8 / max(len(comps), 1)
    for k, comp in enumerate(comps):
        part = rows[(rows[C.COMPRESSION] == comp) & (rows[C.LAYOUT] == "chunked")]
        size = {layout_label(r): r[C.FILE_BYTES] / 1e6 for _, r in part.iterrows()}
        if size:
            ax.bar(np.arange(len(order)) + k * width, [size.get(s, np.nan) for s in order], width, label=comp)
    baseline = rows[rows[C.LAYOUT] == "contiguous"]
    if not order:  # the contiguous store alone: its size in words, no empty chart
        words = f"contiguous: {baseline[C.FILE_BYTES].iloc[0] / 1e6:.3g} MB, " if not baseline.empty else ""
        _not_measured(ax, f"{words}raw data {rows[C.RAW_BYTES].iloc[0] / 1e6:.3g} MB; chunked stores")
        _save(fig, out)
        return
    if not baseline.empty:
        ax.axhline(baseline[C.FILE_BYTES].iloc[0] / 1e6, color="black", linestyle="--", label="contiguous")
    ax.axhline(rows[C.RAW_BYTES].iloc[0] / 1e6, color="grey", linestyle=":", label="raw data")
    ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=70, fontsize=7)
    ax.set_ylabel("file size [MB]")
    ax.legend(fontsize=7)
    _save(fig, out)


def plot_write(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Median write time per layout, whiskers from the fastest to the slowest repeat."""
    rows = summary[(summary[C.CASE] == "write") & (summary[C.FILESYSTEM] == filesystem)]
    n, most = (int(rows[C.REPEATS].min()), int(rows[C.REPEATS].max())) if not rows.empty else (0, 0)
    title = f"write on {filesystem}: median, whiskers min to max of n = {n} repeats"
    if most > n:  # writes raced: a store separated from the best's after the minimum wrote no more
        title = f"write on {filesystem}: median, whiskers min to max of n = {n} to {most} repeats (raced)"
    _grouped_bars(rows, C.MEDIAN_S, "write time [s]", title, out, errors=True)


def plot_score(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Performance score per layout; full marks opaque, the rest transparent, as in the study."""
    mine = summary[summary[C.FILESYSTEM] == filesystem]
    store = [c for c in (C.BACKEND, C.LAYOUT, C.CHUNK_SHAPE, C.PAGE_SIZE, C.COMPRESSION) if c in mine]
    scored = mine.dropna(subset=[C.SCORE]) if C.SCORE in mine else mine
    rows = scored.drop_duplicates(store)  # each store once (its score is the same in every case row)
    title = f"OpenMSI performance score on {filesystem} (thresholds met)"
    if C.SCORE_THRESHOLD_S in mine:  # the thresholds applied (scaled to the bytes each case selects)
        limits = mine.dropna(subset=[C.SCORE_THRESHOLD_S]).drop_duplicates(C.CASE)
        title += "\nmedian under: " + ", ".join(
            f"{case} {limit * 1e3:.3g} ms"
            for case, limit in zip(limits[C.CASE], limits[C.SCORE_THRESHOLD_S], strict=True)
        )
    _grouped_bars(rows, C.SCORE, C.SCORE, title, out, full_marks=True)


def _grouped_bars(rows, stat, ylabel, title, out, errors=False, full_marks=False) -> None:
    """Bars per layout, one colour per compression; contiguous (always uncompressed) once,
    in black."""
    order = _layout_order(rows)
    comps = _compressions(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order) + 3), 4))
    width = 0.8 / max(len(comps), 1)
    groups = [(comp, rows[(rows[C.COMPRESSION] == comp) & (rows[C.LAYOUT] != "contiguous")], None) for comp in comps]
    groups.append(("contiguous", rows[rows[C.LAYOUT] == "contiguous"], "black"))
    for k, (name, part_rows, colour) in enumerate(groups):
        part = {layout_label(r): r for _, r in part_rows.iterrows()}
        if not part:
            continue
        offset = 0.4 - width / 2 if colour else min(k, len(comps) - 1) * width
        x = np.arange(len(order)) + offset
        values = [part[label][stat] if label in part else np.nan for label in order]
        kwargs = {"color": colour} if colour else {}
        if errors:
            lo = [part[label][stat] - part[label][C.MIN_S] if label in part else 0 for label in order]
            hi = [part[label][C.MAX_S] - part[label][stat] if label in part else 0 for label in order]
            kwargs["yerr"] = [lo, hi]
            kwargs["capsize"] = 2
        bars = ax.bar(x, values, width, label=name, **kwargs)
        if full_marks:
            for bar, label in zip(bars, order, strict=True):
                if label in part and part[label][C.SCORE] < part[label][C.SCORE_MAX]:
                    bar.set_alpha(0.35)
    ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=70, fontsize=7)
    # a slow store (or a wide whisker) would flatten the rest on a linear axis
    log_if_wide(ax, "y", rows[stat], *([rows[C.MIN_S], rows[C.MAX_S]] if errors else []))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, never over one
    _save(fig, out)
