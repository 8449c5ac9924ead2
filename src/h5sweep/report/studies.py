"""The studies' own figure forms, from the summary's columns: Kang et al.'s split of a read's
time into its storage part and the rest (decode and memory copies) with the I/O operations it
made; the I/O lab's throughput against the chunk cache's size, slots and w0, as lines; and the
OpenMSI study's file size, write time and read ratio against the gzip level, and its
compression ratio over the (m, n) chunking."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.backends import chunk_cache as CC
from h5sweep.kit.claims import gzip_level  # noqa: E402
from h5sweep.kit.style import OKABE_ITO, log_if_wide, store_label  # noqa: E402
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.report.figures import _grid, _text_colour  # noqa: E402
from h5sweep.storage import columns as C


def _reads(summary: pd.DataFrame, filesystem: str) -> pd.DataFrame:
    rows = summary[(summary[C.FILESYSTEM] == filesystem) & summary[C.RATIO_TO_CONTIGUOUS].notna()]
    return rows.assign(_name=[store_label(r) for _, r in rows.iterrows()])


def plot_split(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Kang et al.: per read case and store, the median storage part of a read (the stored
    bytes of its chunks fetched as they are) and the rest (decode, assembly, memory copies),
    stacked; beside it the median read calls the read made (its I/O operations)."""
    rows = _reads(summary, filesystem)
    rows = rows[rows[C.PRIMARY].fillna(False).astype(bool)] if C.PRIMARY in rows else rows
    cases = list(dict.fromkeys(rows[C.CASE])) if "storage_s_median" in rows else []
    fig, axes = plt.subplots(
        max(1, len(cases)), 2, figsize=(12, 1.5 + 0.3 * rows["_name"].nunique() * max(1, len(cases))), squeeze=False
    )
    if not cases or "storage_s_median" not in rows:
        _not_measured(axes[0][0], "no read split (split_read_time: false)")
    for (ax, calls), case in zip(axes, cases, strict=False):
        part = rows[rows[C.CASE] == case].sort_values(C.MEDIAN_S)
        y = np.arange(len(part))
        storage = part["storage_s_median"].to_numpy(float) * 1e3
        rest = part["decode_copy_s_median"].to_numpy(float) * 1e3
        ax.barh(y, storage, color=OKABE_ITO[0], label="storage (chunks fetched as stored)")
        ax.barh(y, rest, left=np.nan_to_num(storage), color=OKABE_ITO[1], label="decode and memory copies")
        ax.set_yticks(y, part["_name"], fontsize=7)
        log_if_wide(ax, "x", storage, np.nan_to_num(storage) + rest)
        ax.set_xlabel("median time of a read [ms]")
        ax.set_title(f"{case} on {filesystem}: where a read's time goes", fontsize=9)
        calls.barh(y, part[C.READ_CALLS_MEDIAN].to_numpy(float), color=OKABE_ITO[2])
        log_if_wide(calls, "x", part[C.READ_CALLS_MEDIAN])
        calls.set_yticks(y, [""] * len(part))
        calls.set_xlabel("read calls per read (I/O operations, median)")
        calls.set_title(f"{case}: I/O operations", fontsize=9)
    axes[0][0].legend(fontsize=7, loc="lower right")
    _save(fig, out)


def plot_cache(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """The I/O lab: per read case, each chunked store's median throughput (bytes selected over
    the median time) against the chunk cache setting, as lines; the settings ordered by size,
    then slots, then w0."""
    rows = _reads(summary, filesystem).dropna(subset=[CC.CHUNK_CACHE_BYTES])
    rows = rows[rows[C.CHUNK_SHAPE].fillna("") != ""]
    if C.POLICY in rows and rows[C.POLICY].nunique() > 1:  # the first policy's reads
        primary = summary.loc[summary[C.PRIMARY].fillna(False).astype(bool), C.POLICY].dropna()
        rows = rows[rows[C.POLICY] == (primary.iloc[0] if len(primary) else rows[C.POLICY].iloc[0])]
    settings = rows[[CC.CHUNK_CACHE_BYTES, CC.CHUNK_CACHE_SLOTS, CC.CHUNK_CACHE_W0]].drop_duplicates()
    settings = settings.sort_values([CC.CHUNK_CACHE_BYTES, CC.CHUNK_CACHE_SLOTS, CC.CHUNK_CACHE_W0])
    labels = [f"{int(b) / 2**20:g} MiB\n{int(s)} slots\nw0 {w:g}" for b, s, w in settings.itertuples(index=False)]
    index = {_setting(r): i for i, (_, r) in enumerate(settings.iterrows())}
    cases = list(dict.fromkeys(rows[C.CASE]))
    fig, axes = plt.subplots(1, max(1, len(cases)), figsize=(4.5 * max(1, len(cases)) + 1, 4.2), squeeze=False)
    if not cases:
        _not_measured(axes[0][0], "no chunked store read through several chunk caches")
    for ax, case in zip(axes[0], cases, strict=False):
        part = rows[rows[C.CASE] == case].assign(_state=lambda r: r[C.CACHE_STATE].fillna(""))
        several = part["_state"].nunique() > 1
        # a line per store and cache state: cold and warm reads are never joined in one line
        for (name, state), line in part.groupby(["_name", "_state"], sort=True):
            k = sorted(part["_name"].unique()).index(name)
            at = [index[_setting(r)] for _, r in line.iterrows()]
            rate = line[C.BYTES_SELECTED].to_numpy(float) / line[C.MEDIAN_S].to_numpy(float) / 1e6
            order = np.argsort(at)
            ax.plot(
                np.asarray(at)[order],
                rate[order],
                marker="o",
                linestyle=STATE_LINES.get(state, "-"),
                color=OKABE_ITO[k % len(OKABE_ITO)],
                label=f"{name} ({state or 'reads'})" if several else name,
            )
        ax.set_xticks(range(len(labels)), labels, fontsize=6)
        ax.set_yscale("log")
        ax.set_ylabel("median throughput [MB/s]")
        ax.set_title(f"{case} on {filesystem}: against the chunk cache", fontsize=9)
    axes[0][-1].legend(fontsize=6)
    _save(fig, out)


STATE_LINES = {"cold": "-", "warm": "--", "memory": ":"}  # a line's cache state, in every line figure


def _setting(row) -> tuple[float, float, float]:
    return tuple(float(row[c]) for c in (CC.CHUNK_CACHE_BYTES, CC.CHUNK_CACHE_SLOTS, CC.CHUNK_CACHE_W0))


def plot_levels(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """The OpenMSI study's compression figures: against the gzip level, the file size over the
    raw data, the write's median time and each read case's median ratio to the reference, one
    line per chunk shape."""
    rows = summary[summary[C.FILESYSTEM] == filesystem]
    rows = rows.assign(level=[gzip_level(c) for c in rows[C.COMPRESSION]]).dropna(subset=["level"])
    panels = [("write", C.FILE_BYTES, "file size / raw data"), ("write", C.MEDIAN_S, "write time [s] (median)")]
    panels += [
        (case, C.RATIO_TO_CONTIGUOUS, f"{case}: read time / reference's")
        for case in dict.fromkeys(rows.loc[rows[C.RATIO_TO_CONTIGUOUS].notna(), C.CASE])
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 1, 3.8), squeeze=False)
    for ax, (case, column, words) in zip(axes[0], panels, strict=True):
        part = rows[(rows[C.CASE] == case) & rows[C.PRIMARY].fillna(False).astype(bool)]
        part = part.assign(_state=part[C.CACHE_STATE].fillna(""))
        shapes = sorted(part[C.CHUNK_SHAPE].unique())
        several = part["_state"].nunique() > 1
        drawn = []
        # a line per chunk shape and cache state: cold and warm reads are never joined
        for (shape, state), line in part.groupby([C.CHUNK_SHAPE, "_state"], sort=True):
            line = line.sort_values("level")
            value = line[column] / line[C.RAW_BYTES] if column == C.FILE_BYTES else line[column]
            colour = OKABE_ITO[shapes.index(shape) % len(OKABE_ITO)]
            label = f"{shape} ({state})" if several else shape
            ax.plot(line["level"], value, marker="o", linestyle=STATE_LINES.get(state, "-"), color=colour, label=label)
            drawn.append(value)
        if drawn:
            log_if_wide(ax, "y", *drawn)
        ax.set_xlabel("gzip level")
        ax.set_ylabel(words, fontsize=8)
        if column == C.RATIO_TO_CONTIGUOUS:
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    axes[0][0].legend(fontsize=6)
    fig.suptitle(f"compression levels on {filesystem}", fontsize=9)
    _save(fig, out)


def plot_compression_grid(summary: pd.DataFrame, out: str) -> None:
    """The OpenMSI study's compression ratio over the chunking: raw bytes over file bytes per
    m x m x n chunk shape (m across x and y, n along z), one panel per codec and level, each
    cell annotated; the write case's files, as the file-sizes figure."""
    rows = summary[summary[C.CASE] == summary[C.CASE].iloc[0]] if len(summary) else summary
    rows = rows[rows[C.FILESYSTEM] == rows[C.FILESYSTEM].iloc[0]] if len(rows) else rows
    rows = rows[(rows[C.LAYOUT] == "chunked") & (rows[C.COMPRESSION] != "none")] if len(rows) else rows
    if C.BACKEND in rows:
        rows = rows[rows[C.BACKEND] == rows[C.BACKEND].iloc[0]] if len(rows) else rows
    comps = list(dict.fromkeys(rows[C.COMPRESSION])) if len(rows) else []
    grids = [
        (comp, _grid(rows[rows[C.COMPRESSION] == comp].drop_duplicates(C.CHUNK_SHAPE), C.COMPRESSION_RATIO))
        for comp in comps
    ]
    grids = [(comp, grid) for comp, grid in grids if grid[0]]
    across = min(3, max(1, len(grids)))
    down = -(-max(1, len(grids)) // across)
    widest = max([len(grid[1]) for _, grid in grids] + [1])
    fig, axes = plt.subplots(down, across, figsize=(across * max(4.0, 0.7 * widest + 2), down * 4.0), squeeze=False)
    flat = [ax for row in axes for ax in row]
    if not grids:
        _not_measured(flat[0], "compression ratio of compressed m x m x n chunkings")
    top = max([float(np.nanmax(grid[2])) for _, grid in grids if np.isfinite(grid[2]).any()] + [1.0])
    for ax, (comp, (ms, ns, values)) in zip(flat, grids, strict=False):
        image = ax.imshow(values, cmap="cividis", vmin=1.0, vmax=top, aspect="auto")
        ax.set_xticks(range(len(ns)), ns)
        ax.set_yticks(range(len(ms)), ms)
        ax.set_xlabel("n (chunk size in z)")
        ax.set_ylabel("m (chunk size in x, y)")
        ax.set_title(f"compression ratio, {comp}", fontsize=9)
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                colour = _text_colour(image.cmap(image.norm(v)))
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color=colour, fontsize=7)
        fig.colorbar(image, ax=ax).set_label("raw bytes / file bytes", fontsize=7)
    for ax in flat[len(grids) :] if grids else flat[1:]:
        ax.set_axis_off()
    _save(fig, out)
