"""The metadata case's figure: file size and write and read time against the datasets."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.cases.metadata import columns as MC
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def plot_metadata(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """File size and write/read time against the number of datasets holding the values."""
    rows = summary[(summary[C.CASE] == "metadata") & (summary[C.FILESYSTEM] == filesystem)].copy()
    rows[MC.N_DATASETS] = rows[MC.N_DATASETS].astype(int)
    fig, (ax_size, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = rows.drop_duplicates(MC.N_DATASETS).sort_values(MC.N_DATASETS)
    ax_size.plot(sizes[MC.N_DATASETS], sizes[MC.METADATA_FILE_BYTES].astype(float) / 1e6, marker="o", label="file")
    ax_size.axhline(float(rows[C.RAW_BYTES].iloc[0]) / 1e6, color="grey", linestyle=":", label="raw data")
    ax_size.set(xscale="log", xlabel="datasets", ylabel="file size [MB]", title=f"file size, {filesystem}")
    ax_size.legend(fontsize=7)
    for operation, part in rows.groupby(MC.OPERATION):
        part = part.sort_values(MC.N_DATASETS)
        ax_time.errorbar(part[MC.N_DATASETS], part[C.MEAN_S], yerr=part[C.STD_S].fillna(0), marker="o", label=operation)
    ax_time.set(xscale="log", yscale="log", xlabel="datasets", ylabel="seconds (mean)", title=f"time, {filesystem}")
    ax_time.legend(fontsize=7)
    _save(fig, out)
