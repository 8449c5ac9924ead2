"""Figures of the decision (``recommendation.csv``): what each store costs the user's read mix,
and the trade-off of read time against file size with its Pareto front."""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter, PercentFormatter  # noqa: E402

from h5sweep.analyze.ranking import mix_in  # noqa: E402
from h5sweep.analyze.wording import several_options  # noqa: E402
from h5sweep.kit.style import OKABE_ITO, backend_prefix, interval_errors, log_if_wide, raced_suffix  # noqa: E402
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.measure import objective as objectives  # noqa: E402
from h5sweep.measure.objective import objective_of  # noqa: E402
from h5sweep.storage import columns as C  # noqa: E402


def store_name(row, with_option: bool = False) -> str:
    """A store as the decision's figures name it, with its read option where its backend was
    read with several (:func:`h5sweep.analyze.wording.several_options`)."""
    name = row[C.LAYOUT_NAME] if isinstance(row[C.LAYOUT_NAME], str) and row[C.LAYOUT_NAME] else row[C.LAYOUT_ID]
    name = backend_prefix(row) + name + ("" if row[C.COMPRESSION] == "none" else f" {row[C.COMPRESSION]}")
    option = row.get(C.READ_OPTION)
    return f"{name}, {option}" if with_option and isinstance(option, str) and option else name


def plot_mix(recommendation: pd.DataFrame, filesystem: str, out: str) -> None:
    """Each store's time for one unit of the read mix with its 95% interval (left, a raced-out
    store at the bound it was behind by), and what share of that time each case takes (right:
    reads of the case per unit times its mean read time, over the store's total), in the
    ranking's order. Shares are drawn on their own linear axis: stacked on a log axis the
    largest part of a store would look the smallest."""
    rows = recommendation[recommendation[C.FILESYSTEM] == filesystem].sort_values(C.RANK)
    fig, (ax, share_ax) = plt.subplots(
        1, 2, figsize=(12, 1.2 + 0.28 * max(len(rows), 1)), sharey=True, gridspec_kw={"width_ratios": [3, 2]}
    )
    if rows.empty:
        _not_measured(ax, "no store ranked")
        _not_measured(share_ax, "no store ranked")
        _save(fig, out)
        return
    mix = mix_in(rows)
    y = np.arange(len(rows))[::-1]
    mix_ms = rows[objectives.MIX_SECONDS].to_numpy(float) * 1e3
    errors = [
        np.clip(mix_ms - rows[objectives.MIX_SECONDS_CI_LOW].to_numpy(float) * 1e3, 0, None),
        np.clip(rows[objectives.MIX_SECONDS_CI_HIGH].to_numpy(float) * 1e3 - mix_ms, 0, None),
    ]
    ax.errorbar(
        mix_ms,
        y,
        xerr=np.nan_to_num(errors),
        fmt="o",
        color="black",
        markersize=4,
        capsize=2,
        linewidth=0.8,
        label="time of one unit (95% interval)",
    )
    # a store raced out of the pass: at the bound it was known to be behind by (at least x times the best)
    raced = rows[C.RACED_OUT_ROUND].notna().to_numpy() if C.RACED_OUT_ROUND in rows else np.zeros(len(rows), bool)
    best_ms = np.nanmin(mix_ms) if np.isfinite(mix_ms).any() else np.nan
    bound_ms = best_ms * rows[C.RACED_OUT_AT_LEAST].to_numpy(float) if raced.any() else np.full(len(rows), np.nan)
    if raced.any() and np.isfinite(best_ms):
        ax.plot(bound_ms[raced], y[raced], ">", color="grey", markersize=5, label="raced out: at least")
    reference = _reference_rows(rows).to_numpy()
    if reference.any() and np.isfinite(mix_ms[reference]).any():
        ax.axvline(mix_ms[reference][0], color="black", linestyle=":", linewidth=0.8, label="the reference store")
    several = several_options(rows)
    names = []
    for (_, r), out_early in zip(rows.iterrows(), raced, strict=True):
        name = store_name(r, r[C.BACKEND] in several)
        if out_early:
            name += raced_suffix(r)
        else:
            name += " (recommended)" if r[C.RECOMMENDED] else " (tied)" if r[C.TIED_WITH_BEST] else ""
        names.append(name)
    ax.set_yticks(y, names, fontsize=7)
    log_if_wide(ax, "x", mix_ms, bound_ms[raced], mix_ms - errors[0], mix_ms + errors[1])
    ax.set_xlabel("time of one unit of work [ms] (reads per unit x mean read time)")
    ax.legend(fontsize=7, loc="lower right")
    # each case's share of a store's unit of work, on a linear axis of its own
    parts = np.array([count * rows[f"seconds_{case}"].to_numpy(float) for case, count in mix.items()])
    total = parts.sum(axis=0)
    left = np.zeros(len(rows))
    for k, (case, count) in enumerate(mix.items()):
        share = np.where(total > 0, parts[k] / np.where(total > 0, total, 1), np.nan)
        share_ax.barh(
            y, np.nan_to_num(share), left=left, color=OKABE_ITO[k % len(OKABE_ITO)], label=f"{case} x {count:g}"
        )
        left += np.nan_to_num(share)
    share_ax.set_xlim(0, 1)
    share_ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    share_ax.set_xlabel("share of the unit's time, per case")
    share_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    objective = objective_of(rows[C.OBJECTIVE].iloc[0] if C.OBJECTIVE in rows else None).name
    fig.suptitle(
        f"read mix on {filesystem}: {rows[C.WEIGHTS].iloc[0]} reads per unit (ranked by objective {objective}); "
        "raced-out stores have no measured share",
        fontsize=9,
    )
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
    if C.IS_REFERENCE in rows:
        return rows[C.IS_REFERENCE].fillna(False).astype(bool)
    return rows[C.LAYOUT_ID] == "contiguous"


def plot_tradeoff(recommendation: pd.DataFrame, filesystem: str, out: str) -> None:
    """The ranking's score (the objective's, e.g. the read mix's time over the reference's)
    against file size and write time, with the Pareto front (nothing is both faster and
    smaller) and the recommendation marked."""
    rows = recommendation[recommendation[C.FILESYSTEM] == filesystem].copy()
    several = several_options(rows)
    rows["_name"] = [store_name(r, r[C.BACKEND] in several) for _, r in rows.iterrows()]
    rows = rows.sort_values(C.RANK)
    rows["_key"] = range(1, len(rows) + 1)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, (x, words) in zip(
        axes, [(C.FILE_RATIO, "file size / raw data"), (C.WRITE_MEDIAN_S, "write time [s]")], strict=True
    ):
        inside = rows[rows[C.MEETS_LIMITS].astype(bool)]
        outside = rows[~rows[C.MEETS_LIMITS].astype(bool)]
        # one colour per filter (the compression's family: gzip, shuffle+gzip, blosc, ...)
        family = rows[C.COMPRESSION].str.replace(r"-[^+]*$", "", regex=True)
        families = list(dict.fromkeys(family))
        groups = [
            (inside[family[inside.index] == f], {"color": OKABE_ITO[k % len(OKABE_ITO)], "label": f})
            for k, f in enumerate(families)
        ]
        groups.append((outside, {"color": "grey", "alpha": 0.5, "label": "beyond the limits"}))
        for part, style in groups:
            part = part.dropna(subset=[x, C.SCORE])  # raced out: drawn at their bound below
            if part.empty:
                continue
            ax.errorbar(
                part[x],
                part[C.SCORE],
                yerr=interval_errors(part, C.SCORE, C.SCORE_CI_LOW, C.SCORE_CI_HIGH),
                fmt="o",
                markersize=4,
                capsize=2,
                linestyle="none",
                **style,
            )
        # a store raced out of the pass: at the bound it was behind the best by, drawn as a lower bound
        raced = rows[rows[C.RACED_OUT_ROUND].notna()] if C.RACED_OUT_ROUND in rows else rows.iloc[0:0]
        best = rows[C.SCORE].min()
        if not raced.empty and pd.notna(best):
            ax.scatter(
                raced[x],
                best * raced[C.RACED_OUT_AT_LEAST].astype(float),
                marker="^",
                s=30,
                color="grey",
                zorder=4,
                label="raced out (at least)",
            )
        front = pareto_front(inside, x, C.SCORE)
        ax.step(front[x], front[C.SCORE], where="post", color="black", linestyle="--", label="Pareto front")
        chosen = rows[rows[C.RECOMMENDED].astype(bool)]
        ax.scatter(chosen[x], chosen[C.SCORE], marker="*", s=260, color=OKABE_ITO[5], zorder=5, label=C.RECOMMENDED)
        named = pd.concat([front, chosen, rows[_reference_rows(rows)]]).drop_duplicates("_name")
        # every other point by its number in the key beside the figure
        numbered = rows[~rows["_name"].isin(named["_name"])] if len(rows) <= KEYED_STORES else rows.iloc[0:0]
        for _, r in numbered.iterrows():
            at_y = r[C.SCORE] if pd.notna(r[C.SCORE]) else best * float(r.get(C.RACED_OUT_AT_LEAST, np.nan))
            if pd.notna(r[x]) and pd.notna(at_y):
                ax.annotate(str(r["_key"]), (r[x], at_y), fontsize=6, xytext=(3, -8), textcoords="offset points")
        for _, r in named.iterrows():
            # names of the right half's points to their left, so that none runs past the figure
            right = pd.notna(r[x]) and r[x] > np.nanmedian(pd.to_numeric(rows[x], errors="coerce"))
            ax.annotate(
                "\n".join(textwrap.wrap(r["_name"], 30)),  # at most 30 characters a line: half a panel
                (r[x], r[C.SCORE]),
                fontsize=7,
                xytext=(-4 if right else 4, 4),
                textcoords="offset points",
                ha="right" if right else "left",
            )
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        if (rows[C.SCORE] > 0).any():
            ax.set_yscale("log", base=2)
        ax.set_xlabel(words)
        positive = pd.to_numeric(rows[x], errors="coerce")
        positive = positive[positive > 0]
        if x == C.WRITE_MEDIAN_S and len(positive):
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # a decade's minor labels overlap
            if positive.nunique() == 1:  # one value: a decade around it (a log axis has no span of its own)
                ax.set_xlim(positive.iloc[0] / 3, positive.iloc[0] * 3)
        if rows.empty:
            _not_measured(ax, "no layout ranked")
    reference = rows[C.REFERENCE_STORE].iloc[0] if C.REFERENCE_STORE in rows and not rows.empty else "contiguous"
    objective = objective_of(rows[C.OBJECTIVE].iloc[0] if C.OBJECTIVE in rows and not rows.empty else None).name
    axes[0].set_ylabel(f"score ({objective}; 1 = {reference}), 95% interval")
    axes[0].legend(fontsize=7)
    if not rows.empty:
        fig.suptitle(
            f"trade-off on {filesystem}: read mix {rows[C.WEIGHTS].iloc[0]} ({rows[C.STATISTIC].iloc[0]})", fontsize=9
        )
    key = _key(rows)
    if key:
        axes[1].text(1.03, 1.0, key, transform=axes[1].transAxes, fontsize=6, va="top", ha="left", family="monospace")
    _save(fig, out)


# stores whose points are numbered, their names in a key beside the figure (more: only the
# front, the choice and the reference are named; recommendation.csv lists every store)
KEYED_STORES = 40


def _key(rows: pd.DataFrame) -> str:
    if rows.empty:
        return ""
    if len(rows) > KEYED_STORES:
        return f"{len(rows)} stores: the front, the choice\nand the reference named;\nall in recommendation.csv"
    return "\n".join(
        f"{k:>2} {textwrap.shorten(name, 40)}" for k, name in zip(rows["_key"], rows["_name"], strict=True)
    )
