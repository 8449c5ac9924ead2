"""The iosize case's figure: throughput against request size, per API and operation."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.backends import HDF5, RAW  # noqa: E402
from h5sweep.cases.iosize import columns as IC
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def plot_iosize(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Throughput (MB/s, from the mean time) against the amount of data where the sweep varies
    it (the lab's Figure 1), else against request size; per API, operation and cache state
    (and request size, where both vary)."""
    rows = summary[(summary[C.CASE] == "iosize") & (summary[C.FILESYSTEM] == filesystem)].copy()
    rows[IC.REQUEST_BYTES] = rows[IC.REQUEST_BYTES].astype(int)
    rows[C.BYTES_SELECTED] = rows[C.BYTES_SELECTED].astype(int)
    by_amount = rows[C.BYTES_SELECTED].nunique() > 1
    x, other = (C.BYTES_SELECTED, IC.REQUEST_BYTES) if by_amount else (IC.REQUEST_BYTES, C.BYTES_SELECTED)
    rows["throughput"] = rows[C.BYTES_SELECTED].astype(float) / rows[C.MEAN_S] / 1e6
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = {RAW: "--", HDF5: "-"}
    several = by_amount and rows[IC.REQUEST_BYTES].nunique() > 1
    keys = [IC.API, IC.DIRECTION, C.CACHE_STATE] + ([other] if several else [])
    for key, line in rows.groupby(keys, dropna=False):
        api, direction, state = key[:3]
        line = line.sort_values(x)
        label = f"{api} {direction}" + (f" {state}" if isinstance(state, str) and state else "")
        label += f", {key[3]} B requests" if several else ""
        ax.plot(line[x], line["throughput"], styles.get(api, "-"), marker="o", label=label)
    xlabel = "data size [bytes]" if by_amount else "request size [bytes]"
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel="MB/s", title=f"throughput, {filesystem}")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    _save(fig, out)
