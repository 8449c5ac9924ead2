"""The iosize case's figure: throughput against request size, per API and operation."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.backends import HDF5, RAW  # noqa: E402
from h5sweep.cases.iosize import columns as IC
from h5sweep.cases.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def plot_iosize(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """Throughput (MB/s, from the mean time) against request size, per API and operation."""
    rows = summary[(summary[C.CASE] == "iosize") & (summary[C.FILESYSTEM] == filesystem)].copy()
    rows[IC.REQUEST_BYTES] = rows[IC.REQUEST_BYTES].astype(int)
    rows["throughput"] = rows[C.BYTES_SELECTED].astype(float) / rows[C.MEAN_S] / 1e6
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = {RAW: "--", HDF5: "-"}
    for (api, direction, state), line in rows.groupby([IC.API, IC.DIRECTION, C.CACHE_STATE], dropna=False):
        line = line.sort_values(IC.REQUEST_BYTES)
        label = f"{api} {direction}" + (f" {state}" if isinstance(state, str) and state else "")
        ax.plot(line[IC.REQUEST_BYTES], line["throughput"], styles.get(api, "-"), marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="request size [bytes]", ylabel="MB/s", title=f"throughput, {filesystem}")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    _save(fig, out)
