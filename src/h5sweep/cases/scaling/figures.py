"""The scaling case's figure: time and speed-up against the processes, per block of slices."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.cases.scaling import columns as SC
from h5sweep.kit.style import layout_label  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def plot_scaling(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Time (mean, std) and speed-up over one process, per layout, for each block of slices."""
    rows = summary[(summary[C.CASE] == "scaling") & (summary[C.FILESYSTEM] == filesystem)]
    blocks = list(dict.fromkeys(rows[SC.SCALING_SLICES]))
    fig, axes = plt.subplots(len(blocks), 2, figsize=(11, 3.6 * len(blocks)), squeeze=False)
    for (ax_time, ax_speed), block in zip(axes, blocks, strict=True):
        part = rows[rows[SC.SCALING_SLICES] == block]
        for (label, comp), line in part.groupby([part.apply(layout_label, axis=1), C.COMPRESSION], sort=False):
            line = line.sort_values(SC.PROCESSES)
            name = label if label == "contiguous" else f"{label} {comp}"
            ax_time.errorbar(line[SC.PROCESSES], line[C.MEAN_S], yerr=line[C.STD_S].fillna(0), marker="o", label=name)
            base = line.loc[line[SC.PROCESSES] == line[SC.PROCESSES].min(), C.MEAN_S].iloc[0]
            ax_speed.plot(line[SC.PROCESSES], base / line[C.MEAN_S], marker="o", label=name)
        top = int(part[SC.PROCESSES].max())
        ax_speed.plot([1, top], [1, top], color="grey", linestyle=":", label="linear")
        ax_time.set(xlabel=SC.PROCESSES, ylabel="seconds (mean, std)", title=f"var over {block}, {filesystem}")
        ax_speed.set(xlabel=SC.PROCESSES, ylabel="speed-up", title=f"speed-up, {block}")
        ax_speed.legend(fontsize=6)
    _save(fig, out)
