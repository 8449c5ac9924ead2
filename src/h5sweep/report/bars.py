"""The read cases' bars (the OpenMSI study's form): per layout, every read with its median and
interval beside the paired ratio to the reference (``bars-*``), and the study's min, median,
mean and max of the reads (``stats-*``). A grid of many layouts (the study's 43 chunkings times
its codecs) is faceted: one panel per compression, each of at most :data:`ROWS_PER_PANEL`
layouts, panels side by side, so that every label stays readable at paper scale."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from h5sweep.kit.style import CACHE_STATE_COLOURS, OKABE_ITO, interval_errors  # noqa: E402
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.report.figures import _candidate, _reference_of, _selection_words  # noqa: E402
from h5sweep.storage import columns as C

ROWS_PER_PANEL = 45  # layouts per panel: 7-point labels at 0.32 inch a row
PANELS_ACROSS = 3


def facets(rows: pd.DataFrame, order: list[str]) -> list[tuple[str, list[str]]]:
    """The panels of a bars figure: ``order`` (candidates, as drawn top to bottom) as one panel
    where it fits, else one per compression (the uncompressed contiguous baseline in each),
    each cut into panels of at most :data:`ROWS_PER_PANEL`."""
    if len(order) <= ROWS_PER_PANEL:
        return [("", order)]
    compression = rows.groupby("_candidate")[C.COMPRESSION].first().to_dict()
    baseline = set(rows.loc[rows[C.LAYOUT] == "contiguous", "_candidate"])
    panels = []
    for comp in dict.fromkeys(compression[c] for c in order if c not in baseline):
        mine = [c for c in order if c in baseline or compression[c] == comp]
        parts = math.ceil(len(mine) / ROWS_PER_PANEL)
        for i in range(parts):
            title = comp + (f" ({i + 1}/{parts})" if parts > 1 else "")
            panels.append((title, mine[i * ROWS_PER_PANEL : (i + 1) * ROWS_PER_PANEL]))
    return panels


def _panel_axes(panels: list, width_ratios: list[int], rows_tall: int):
    """A figure of ``panels`` laid out :data:`PANELS_ACROSS` across, each a group of axes
    side by side (``width_ratios``) sharing the rows; the groups, and the figure."""
    across = min(PANELS_ACROSS, len(panels))
    down = math.ceil(len(panels) / across)
    per = len(width_ratios)
    fig, axes = plt.subplots(
        down,
        across * per,
        figsize=(sum(width_ratios) * 2.2 * across, down * max(3.0, 0.32 * rows_tall + 1.6)),
        squeeze=False,
        gridspec_kw={"width_ratios": width_ratios * across},
    )
    groups = []
    for i in range(down * across):
        row, col = divmod(i, across)
        group = list(axes[row][col * per : (col + 1) * per])
        if i < len(panels):
            for ax in group[1:]:
                ax.sharey(group[0])
            groups.append(group)
        else:
            for ax in group:
                ax.set_axis_off()
    return fig, groups


def _rows(summary: pd.DataFrame, case: str, filesystem: str) -> pd.DataFrame:
    rows = summary[(summary[C.CASE] == case) & (summary[C.FILESYSTEM] == filesystem)]
    return rows.assign(_candidate=rows.apply(_candidate, axis=1) if not rows.empty else [])


def plot_case_bars(summary: pd.DataFrame, case: str, filesystem: str, out: str, measurements=None) -> None:
    """Every layout's reads of one case as points (colour: where their bytes came from), with
    the median and its 95% interval, sorted by the paired ratio to contiguous; beside it that
    ratio on a log2 axis with its interval and the contiguous reference at 1."""
    rows = _rows(summary, case, filesystem)
    order = _order(rows)
    panels = facets(rows, order)
    fig, groups = _panel_axes(panels, [3, 2], max(len(names) for _, names in panels))
    reads = _reads_of(measurements, case, filesystem, rows)
    states = [s for s in CACHE_STATE_COLOURS if s in set(rows[C.CACHE_STATE].fillna(""))]
    reference = _reference_of(rows)
    counts = reads_per_store(rows)
    means = reference_means(rows)
    for (title, names), (ax_time, ax_ratio) in zip(panels, groups, strict=True):
        mine = rows[rows["_candidate"].isin(names)]
        theirs = None if reads is None else reads[reads["_candidate"].isin(names)]
        _bars_panel(ax_time, ax_ratio, mine, names, theirs, states, reference, counts, means)
        if title:
            ax_time.set_title(title, fontsize=9, loc="left")
    if not states:
        _not_measured(groups[0][0], f"{case} on {filesystem}")
    if not rows.empty:
        first = rows.iloc[0]
        fig.suptitle(
            f"{case} on {filesystem}: {_selection_words(first, reads)}; {n_words(counts, 'layout and cache state')}",
            fontsize=9,
        )
    _save(fig, out)


def _order(rows: pd.DataFrame) -> list[str]:
    """The stores top to bottom, fastest first by their ratio to the reference in one cache
    state (cold where measured, cold and warm are never ranked together); stores not read in
    that state after, by their ratio in the next."""
    ranked: list[str] = []
    state_of = rows[C.CACHE_STATE].fillna("")
    for state in [s for s in CACHE_STATE_COLOURS if s in set(state_of)]:
        ratio = rows[state_of == state].groupby("_candidate")[C.RATIO_TO_CONTIGUOUS].median().fillna(1.0)
        ranked += [c for c in ratio.sort_values(ascending=False, kind="stable").index if c not in ranked]
    return ranked


def reads_per_store(rows: pd.DataFrame) -> dict[str, int]:
    """Each store's reads in one figure (its most in a cache state): stores raced out read fewer."""
    if rows.empty:
        return {}
    return {name: int(n) for name, n in rows.groupby("_candidate")[C.REPEATS].max().items()}


def n_words(counts: dict[str, int], per: str) -> str:
    """The n of a figure's title: one n where every store read as many, else the range (each
    store's own beside its name)."""
    values = sorted(set(counts.values()))
    if len(values) <= 1:
        return f"n = {values[0] if values else 0} reads per {per}"
    return f"n = {values[0]}-{values[-1]} reads per {per} (a store's n beside its name where it read fewer)"


def with_n(names: list[str], counts: dict[str, int]) -> list[str]:
    """Names with ``(n=k)`` where a store read fewer than the most of the figure."""
    most = max(counts.values(), default=0)
    return [f"{name} (n={counts[name]})" if counts.get(name, most) < most else name for name in names]


def reference_means(rows: pd.DataFrame) -> dict[str, float]:
    """The reference store's mean read time per cache state: its rows are those whose paired
    ratio is 1 exactly, interval and all."""
    if rows.empty or C.MEAN_S not in rows:
        return {}
    mine = rows[(rows[C.RATIO_TO_CONTIGUOUS] == 1) & (rows[C.RATIO_CI_LOW] == 1) & (rows[C.RATIO_CI_HIGH] == 1)]
    return {str(state): float(t) for state, t in mine.groupby(mine[C.CACHE_STATE].fillna(""))[C.MEAN_S].first().items()}


def _bars_panel(ax_time, ax_ratio, rows, order, reads, states, reference, counts=None, means=None) -> None:
    y = {name: i for i, name in enumerate(order)}
    offsets = {state: (k - (len(states) - 1) / 2) * 0.25 for k, state in enumerate(states)}
    rng = np.random.default_rng(0)
    for state in states:
        colour = CACHE_STATE_COLOURS[state]
        part = rows[rows[C.CACHE_STATE].fillna("") == state]
        if reads is not None:
            mine = reads[reads[C.CACHE_STATE].fillna("") == state]
            ys = mine["_candidate"].map(y).astype(float) + offsets[state] + rng.uniform(-0.08, 0.08, len(mine))
            ax_time.scatter(mine[C.SECONDS], ys, s=6, color=colour, alpha=0.35, linewidths=0)
        # a store raced out of the pass: its median alone, hollow (its reads sample the pass's
        # start only: no two-sided interval; its name says the one-sided bound it lost by)
        raced = part[C.RACED_OUT_ROUND].notna() if C.RACED_OUT_ROUND in part else pd.Series(False, part.index)
        full, out = part[~raced], part[raced]
        ys = full["_candidate"].map(y).astype(float) + offsets[state]
        ax_time.errorbar(
            full[C.MEDIAN_S],
            ys,
            xerr=interval_errors(full, C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S),
            fmt="|",
            markersize=12,
            color=colour,
            capsize=3,
            label=f"{state or 'reads'}: median, 95% interval",
        )
        rat = full.dropna(subset=[C.RATIO_TO_CONTIGUOUS])
        ax_ratio.errorbar(
            rat[C.RATIO_TO_CONTIGUOUS],
            rat["_candidate"].map(y).astype(float) + offsets[state],
            xerr=interval_errors(rat, C.RATIO_TO_CONTIGUOUS, C.RATIO_CI_LOW, C.RATIO_CI_HIGH),
            fmt="o",
            color=colour,
            capsize=3,
            markersize=4,
        )
        if not out.empty:
            out_y = out["_candidate"].map(y).astype(float) + offsets[state]
            ax_time.plot(
                out[C.MEDIAN_S],
                out_y,
                "D",
                markerfacecolor="none",
                color=colour,
                markersize=5,
                label="raced out: median of its reads, no interval",
            )
            ax_ratio.plot(out[C.RATIO_TO_CONTIGUOUS], out_y, "D", markerfacecolor="none", color=colour, markersize=4)
        # the ranking scores a read mix by mean times: their ratio beside the median of the pairs
        if (means or {}).get(state) and C.MEAN_S in part:
            ax_ratio.plot(
                part[C.MEAN_S] / means[state],
                part["_candidate"].map(y).astype(float) + offsets[state],
                "x",
                color=colour,
                markersize=5,
                label="ratio of mean times (as the ranking scores)",
            )
    if not any(len(line.get_xdata()) for line in ax_ratio.get_lines()):  # the reference store alone
        ax_ratio.text(
            0.5, 0.5, f"{reference} alone: no ratio", ha="center", va="center", fontsize=8, transform=ax_ratio.transAxes
        )
        ax_ratio.set_axis_off()
        return _time_axis(ax_time, order, states, counts)
    ax_ratio.axvline(1.0, color="black", linewidth=1)
    ax_ratio.text(1.0, len(order) - 0.4, f" {reference}", fontsize=8, va="bottom")
    ax_ratio.set_xscale("log", base=2)
    ax_ratio.set_xlabel(
        f"ratio to {reference}: paired by selection (median, 95% CI);\nx: ratio of means, as the ranking"
    )
    ax_ratio.tick_params(labelleft=False)
    _time_axis(ax_time, order, states, counts)


def _time_axis(ax_time, order, states, counts=None) -> None:
    ax_time.set_xscale("log")
    ax_time.xaxis.set_minor_formatter(NullFormatter())  # a decade's minor labels overlap
    ax_time.set_xlabel("seconds per read")
    ax_time.set_yticks(range(len(order)), with_n(order, counts or {}), fontsize=7)
    ax_time.set_ylim(-0.7, len(order) - 0.3)
    if states:
        ax_time.legend(fontsize=7, loc="lower right")


def _reads_of(measurements, case, filesystem, rows):
    """The single reads behind the summary rows drawn (same case, filesystem and variant)."""
    if measurements is None or rows.empty:
        return None
    reads = measurements[(measurements[C.CASE] == case) & (measurements[C.FILESYSTEM] == filesystem)]
    reads = reads[reads[C.VARIANT].isin(set(rows[C.VARIANT]))]
    reads = reads.fillna({C.CHUNK_SHAPE: "", C.LAYOUT_NAME: "", C.CACHE_STATE: "", C.SHARD_SHAPE: "", C.PAGE_SIZE: 0})
    return reads.assign(_candidate=reads.apply(_candidate, axis=1) if not reads.empty else [])


STATISTICS = ((C.MIN_S, "min"), (C.MEDIAN_S, "median"), (C.MEAN_S, "mean"), (C.MAX_S, "max"))


def plot_stats(summary: pd.DataFrame, case: str, filesystem: str, out: str) -> None:
    """The OpenMSI study's bars: per layout, the min, median, mean and max time of the case's
    reads (the sustained reads, under the study's protocol), fastest median on top, on a log
    axis; the first access of each layout marked apart where it was measured alone."""
    rows = _rows(summary, case, filesystem)
    rows = rows.assign(cache_state=rows[C.CACHE_STATE].fillna("")) if len(rows) else rows
    # the state with the most reads (the sustained reads under the study's protocol); a cold
    # state of fewer reads is the first access of each layout, marked apart
    reads_by_state = rows.groupby(C.CACHE_STATE)[C.REPEATS].sum() if len(rows) else pd.Series(dtype=float)
    state = str(reads_by_state.idxmax()) if len(reads_by_state) else ""
    first = rows[(rows[C.CACHE_STATE] == "cold") & (state != "cold")] if len(rows) else rows
    rows = rows[rows[C.CACHE_STATE] == state] if len(rows) else rows
    order = list(rows.sort_values(C.MEDIAN_S, kind="stable")["_candidate"].drop_duplicates())
    panels = facets(rows, order)
    fig, groups = _panel_axes(panels, [4], max(len(names) for _, names in panels))
    height = 0.8 / len(STATISTICS)
    counts = reads_per_store(rows)
    for (title, names), (ax,) in zip(panels, groups, strict=True):
        mine = rows[rows["_candidate"].isin(names)].drop_duplicates("_candidate").set_index("_candidate")
        y = np.arange(len(names))
        for k, (column, words) in enumerate(STATISTICS):
            values = mine.reindex(names)[column] if column in mine else pd.Series(np.nan, index=names)
            ax.barh(y + (k - 1.5) * height, values, height, color=OKABE_ITO[k], label=words)
        cold = first.drop_duplicates("_candidate").set_index("_candidate").reindex(names)[C.MEDIAN_S]
        if cold.notna().any():
            ax.scatter(cold, y, marker="x", color="black", s=14, label="first access (cold)")
        ax.set_yticks(y, with_n(names, counts), fontsize=7)
        ax.set_ylim(len(names) - 0.5, -0.5)  # fastest on top
        ax.set_xscale("log")
        ax.set_xlabel("seconds per read")
        ax.legend(fontsize=7, loc="lower right")
        if title:
            ax.set_title(title, fontsize=9, loc="left")
    if rows.empty:
        _not_measured(groups[0][0], f"{case} on {filesystem}")
    else:
        fig.suptitle(
            f"{case} on {filesystem}: min, median, mean and max of the {state} reads, {n_words(counts, 'layout')}",
            fontsize=9,
        )
    _save(fig, out)
