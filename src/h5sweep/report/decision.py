"""Figures of the decision (``recommendation.csv``): what each store costs the user's read mix,
and the trade-off of read time against file size with its Pareto front."""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.analyze.ranking import mix_of  # noqa: E402
from h5sweep.analyze.wording import several_options  # noqa: E402
from h5sweep.cases.style import OKABE_ITO, backend_prefix, interval_errors, log_if_wide, raced_suffix  # noqa: E402
from h5sweep.cases.style import not_measured as _not_measured  # noqa: E402
from h5sweep.cases.style import save as _save  # noqa: E402
from h5sweep.measure.objective import DEFAULT_OBJECTIVE
from h5sweep.storage import columns as C  # noqa: E402


def store_name(row, with_option: bool = False) -> str:
    """A store as the decision's figures name it, with its read option where its backend was
    read with several (:func:`h5sweep.analyze.wording.several_options`)."""
    name = row[C.LAYOUT_NAME] if isinstance(row[C.LAYOUT_NAME], str) and row[C.LAYOUT_NAME] else row[C.LAYOUT_ID]
    name = backend_prefix(row) + name + ("" if row[C.COMPRESSION] == "none" else f" {row[C.COMPRESSION]}")
    option = row.get(C.READ_OPTION)
    return f"{name}, {option}" if with_option and isinstance(option, str) and option else name


def plot_mix(recommendation: pd.DataFrame, filesystem: str, out: str) -> None:
    """Each store's time for one unit of the read mix, stacked by case (reads of the case per
    unit times its mean read time), with the mix's 95% interval, in the ranking's order."""
    rows = recommendation[recommendation[C.FILESYSTEM] == filesystem].sort_values(C.RANK)
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * max(len(rows), 1)))
    if rows.empty:
        _not_measured(ax, "no store ranked")
        _save(fig, out)
        return
    mix = mix_of(rows[C.WEIGHTS].iloc[0])
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for k, (case, count) in enumerate(mix.items()):
        part = count * rows[f"seconds_{case}"].fillna(0).to_numpy(float) * 1e3
        ax.barh(y, part, left=left, color=OKABE_ITO[k % len(OKABE_ITO)], label=f"{case} x {count:g}")
        left += part
    mix_ms = rows[C.MIX_SECONDS].to_numpy(float) * 1e3
    errors = [
        np.clip(mix_ms - rows[C.MIX_SECONDS_CI_LOW].to_numpy(float) * 1e3, 0, None),
        np.clip(rows[C.MIX_SECONDS_CI_HIGH].to_numpy(float) * 1e3 - mix_ms, 0, None),
    ]
    ax.errorbar(mix_ms, y, xerr=np.nan_to_num(errors), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
    # a store raced out of the pass: at the bound it was known to be behind by (at least x times the best)
    raced = rows[C.RACED_OUT_ROUND].notna().to_numpy() if C.RACED_OUT_ROUND in rows else np.zeros(len(rows), bool)
    best_ms = np.nanmin(mix_ms) if np.isfinite(mix_ms).any() else np.nan
    bound_ms = best_ms * rows[C.RACED_OUT_AT_LEAST].to_numpy(float) if raced.any() else np.full(len(rows), np.nan)
    if raced.any() and np.isfinite(best_ms):
        ax.plot(bound_ms[raced], y[raced], ">", color="grey", markersize=5, label="raced out: at least")
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
    # leaders would be slivers on a linear axis (their intervals' ends count)
    log_if_wide(ax, "x", mix_ms, bound_ms[raced], mix_ms - errors[0], mix_ms + errors[1])
    ax.set_xlabel("time of one unit of work [ms] (reads per unit x mean read time; 95% interval)")
    objective = rows[C.OBJECTIVE].iloc[0] if C.OBJECTIVE in rows else DEFAULT_OBJECTIVE
    ax.set_title(
        f"read mix on {filesystem}: {rows[C.WEIGHTS].iloc[0]} reads per unit (ranked by objective {objective})",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
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
        for _, r in pd.concat([front, chosen, rows[_reference_rows(rows)]]).drop_duplicates("_name").iterrows():
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
            if positive.nunique() == 1:  # one value: a decade around it (a log axis has no span of its own)
                ax.set_xlim(positive.iloc[0] / 3, positive.iloc[0] * 3)
        if rows.empty:
            _not_measured(ax, "no layout ranked")
    reference = rows[C.REFERENCE_STORE].iloc[0] if C.REFERENCE_STORE in rows and not rows.empty else "contiguous"
    objective = rows[C.OBJECTIVE].iloc[0] if C.OBJECTIVE in rows and not rows.empty else DEFAULT_OBJECTIVE
    axes[0].set_ylabel(f"score ({objective}; 1 = {reference}), 95% interval")
    axes[0].legend(fontsize=7)
    if not rows.empty:
        fig.suptitle(
            f"trade-off on {filesystem}: read mix {rows[C.WEIGHTS].iloc[0]} ({rows[C.STATISTIC].iloc[0]})", fontsize=9
        )
    _save(fig, out)
