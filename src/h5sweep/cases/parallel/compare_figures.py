"""The parallel passes across sweeps of two dataset sizes, for ``python -m h5sweep.compare``
(Folk & Choi's Fig. 7)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.backends import REFERENCE  # noqa: E402
from h5sweep.cases.parallel import columns as PC  # noqa: E402
from h5sweep.kit.style import OKABE_ITO  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C  # noqa: E402


def plot_parallel_sizes(runs, out) -> None:
    """Folk & Choi's Fig. 7: the parallel passes' bandwidth against the process count, a panel
    per operation, layout kind and units per access, a line per mode, the larger dataset solid
    and the smaller dashed (each the best pass's bandwidth, as the study reports; the reference
    backend's passes, HDF5's, as the study's)."""
    frames = []
    for run in runs:
        s = run.summary
        if C.CASE not in s or not (s[C.CASE] == "parallel").any():
            continue
        rows = s[s[C.CASE] == "parallel"]
        rows = rows[rows[C.BACKEND] == REFERENCE] if C.BACKEND in rows else rows  # the study's HDF5 only
        kind = np.where(rows[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked")
        frames.append(rows.assign(kind=kind, size=int(np.prod(run.shape)) if run.shape else 0, sweep=run.sweep))
    empty = pd.DataFrame(columns=[PC.OPERATION, "kind", PC.UNITS_PER_ACCESS, "size", PC.MODE])
    both = pd.concat(frames) if frames else empty
    panels = sorted(set(zip(both[PC.OPERATION], both["kind"], both[PC.UNITS_PER_ACCESS], strict=True)))
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4.6 * max(1, len(panels)), 4), squeeze=False)
    sizes = sorted(set(both["size"]))
    modes = sorted(set(both[PC.MODE]))
    for ax, (operation, kind, k) in zip(axes[0], panels, strict=False):
        part = both[(both[PC.OPERATION] == operation) & (both["kind"] == kind) & (both[PC.UNITS_PER_ACCESS] == k)]
        for m, mode in enumerate(modes):
            for size in sizes:
                line = part[(part[PC.MODE] == mode) & (part["size"] == size)]
                line = line.groupby(PC.PROCESSES)[PC.BYTES_PER_S_MAX].max()
                if line.empty:
                    continue
                ax.plot(
                    line.index,
                    line.to_numpy() / 1e6,
                    marker="o",
                    color=OKABE_ITO[m % len(OKABE_ITO)],
                    linestyle="-" if size == max(sizes) else "--",
                    label=f"{mode}, {size:,} elements",
                )
        values = part[PC.BYTES_PER_S_MAX].dropna()
        spread = values.max() / values.min() if len(values) and values.min() > 0 else 1.0
        ax.set(xlabel="process count", ylabel="bandwidth [MB/s] (best pass)", yscale="log" if spread > 10 else "linear")
        ax.set_xticks(sorted(set(part[PC.PROCESSES])))
        ax.set_title(f"{operation}, {kind}, {int(k)} per access", fontsize=9)
        ax.legend(fontsize=7)
    if not panels:
        axes[0][0].set_axis_off()
    _save(fig, out)
