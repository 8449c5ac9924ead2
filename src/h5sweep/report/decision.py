"""Figures of the decision (``recommendation.csv``): what each store costs the user's read mix."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.analyze.recommend import mix_of  # noqa: E402
from h5sweep.report.figures import OKABE_ITO, _not_measured, _save, backend_prefix  # noqa: E402


def store_name(row) -> str:
    name = row["layout_name"] if isinstance(row["layout_name"], str) and row["layout_name"] else row["layout_id"]
    return backend_prefix(row) + name + ("" if row["compression"] == "none" else f" {row['compression']}")


def plot_mix(recommendation: pd.DataFrame, filesystem: str, out: str) -> None:
    """Each store's time for one unit of the read mix, stacked by case (reads of the case per
    unit times its mean read time), with the mix's 95% interval, in the ranking's order."""
    rows = recommendation[recommendation["filesystem"] == filesystem].sort_values("rank")
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * max(len(rows), 1)))
    if rows.empty:
        _not_measured(ax, "no store ranked")
        _save(fig, out)
        return
    mix = mix_of(rows["weights"].iloc[0])
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for k, (case, count) in enumerate(mix.items()):
        part = count * rows[f"seconds_{case}"].fillna(0).to_numpy(float) * 1e3
        ax.barh(y, part, left=left, color=OKABE_ITO[k % len(OKABE_ITO)], label=f"{case} x {count:g}")
        left += part
    mix_ms = rows["mix_seconds"].to_numpy(float) * 1e3
    errors = [
        np.clip(mix_ms - rows["mix_seconds_ci_low"].to_numpy(float) * 1e3, 0, None),
        np.clip(rows["mix_seconds_ci_high"].to_numpy(float) * 1e3 - mix_ms, 0, None),
    ]
    ax.errorbar(mix_ms, y, xerr=np.nan_to_num(errors), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
    names = [
        store_name(r) + (" (recommended)" if r["recommended"] else " (tied)" if r["tied_with_best"] else "")
        for _, r in rows.iterrows()
    ]
    ax.set_yticks(y, names, fontsize=7)
    ax.set_xlabel("time of one unit of work [ms] (reads per unit x mean read time; 95% interval)")
    objective = rows["objective"].iloc[0] if "objective" in rows else "time"
    ax.set_title(
        f"read mix on {filesystem}: {rows['weights'].iloc[0]} reads per unit (ranked by objective {objective})",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, out)
