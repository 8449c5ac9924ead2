"""The scaling case's figure: time and speed-up against the processes, per block of slices."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.cases.style import layout_label  # noqa: E402
from h5sweep.cases.style import save as _save  # noqa: E402


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
