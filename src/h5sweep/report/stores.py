"""What a store costs beyond its read times: the bytes a read takes from the device against
what it selected (read amplification), and the backends' stores of one layout side by side."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.backends import (  # noqa: E402
    RATIO_TO_REFERENCE,
    RATIO_TO_REFERENCE_CI_HIGH,
    RATIO_TO_REFERENCE_CI_LOW,
    REFERENCE,
)
from h5sweep.backends import label as backend_label  # noqa: E402
from h5sweep.kit.style import OKABE_ITO, interval_errors, suptitle  # noqa: E402
from h5sweep.kit.style import not_measured as _not_measured  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.report.figures import _candidate  # noqa: E402
from h5sweep.storage import columns as C


def plot_amplification(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """The model against the device: per read case, the stored bytes of the chunks a read
    touches (from the layout and the file's chunk index) against the bytes its cold reads
    fetched from the device; above the diagonal the storage read more than the chunks
    (readahead, metadata), below it less (already cached)."""
    from h5sweep.analyze.aggregate import model_bytes

    rows = summary[(summary[C.FILESYSTEM] == filesystem) & (summary[C.CACHE_STATE] == "cold")]
    rows = rows.dropna(subset=[C.DEVICE_READ_BYTES_MEDIAN])
    rows = rows.assign(_model=model_bytes(rows) if not rows.empty else [])
    rows = rows[rows["_model"] > 0]
    # every point numbered, the numbers' stores in a key beside the figure
    rows = rows.assign(_name=rows.apply(_candidate, axis=1) if not rows.empty else [])
    names = list(dict.fromkeys(rows["_name"]))
    number = {name: k for k, name in enumerate(names, start=1)}
    cases = list(dict.fromkeys(rows[C.CASE]))
    fig, axes = plt.subplots(1, max(1, len(cases)), figsize=(4.6 * max(1, len(cases)), 4.4), squeeze=False)
    if not cases:
        axes[0][0].set_axis_off()
        axes[0][0].text(
            0.5,
            0.5,
            f"no cold reads from a device on {filesystem}\n(a memory filesystem?)",
            ha="center",
            va="center",
            fontsize=9,
            transform=axes[0][0].transAxes,
        )
    for ax, case in zip(axes[0], cases, strict=False):
        part = rows[rows[C.CASE] == case]
        groups = part.groupby([C.BACKEND, C.COMPRESSION], sort=False)
        for colour, ((backend, comp), group) in zip(OKABE_ITO * 3, groups, strict=False):
            ax.scatter(
                group[C.STORED_BYTES_TOUCHED_MEDIAN] / 1e6,
                group[C.DEVICE_READ_BYTES_MEDIAN] / 1e6,
                color=colour,
                s=18,
                marker="o" if backend == REFERENCE else "s",
                label=comp if backend == REFERENCE else f"{backend_label(backend)} {comp}",
            )
        if len(names) <= KEYED_STORES:
            for _, r in part.iterrows():
                ax.annotate(
                    str(number[r["_name"]]),
                    (r[C.STORED_BYTES_TOUCHED_MEDIAN] / 1e6, r[C.DEVICE_READ_BYTES_MEDIAN] / 1e6),
                    fontsize=6,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
        values = np.concatenate([part[C.STORED_BYTES_TOUCHED_MEDIAN], part[C.DEVICE_READ_BYTES_MEDIAN]]) / 1e6
        values = values[values > 0]
        if values.size:
            lo, hi = values.min() / 1.5, values.max() * 1.5
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, linestyle=":", label="read = chunks touched")
            ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi))
        ax.set_xlabel("model: stored bytes of chunks touched [MB]")
        ax.set_ylabel("measured: device bytes read [MB]")
        ax.set_title(f"{case} on {filesystem} (medians of cold reads)", fontsize=9)
        ax.legend(fontsize=7)
    if names:
        key = (
            "\n".join(f"{number[name]:>2} {name}" for name in names)
            if len(names) <= KEYED_STORES
            else f"{len(names)} stores: summary.csv\nnames each point"
        )
        last = axes[0][len(cases) - 1]
        last.text(1.04, 1.0, key, transform=last.transAxes, fontsize=6, va="top", ha="left", family="monospace")
    _save(fig, out)


# stores whose points are numbered (more: the key says where each is named)
KEYED_STORES = 40


def plot_backends(summary: pd.DataFrame, filesystem: str, out: str) -> None:
    """HDF5 against the other backends, layout by layout: per read case, each store's paired
    ratio of its reads to HDF5's reads of the same layout, compression and selections (median
    and 95% interval, log2 axis; left of 1 the other backend is faster), one colour per
    reader."""
    if RATIO_TO_REFERENCE not in summary:
        summary = summary.assign(**{RATIO_TO_REFERENCE: np.nan})
    rows = summary[(summary[C.FILESYSTEM] == filesystem) & summary[RATIO_TO_REFERENCE].notna()]
    others = " and ".join(backend_label(b) for b in sorted(set(rows[C.BACKEND]) - {REFERENCE})) or "Other backends"
    # named without the backend: each row is one store against its HDF5 twin
    rows = rows.assign(backend=REFERENCE)
    rows = rows.assign(_name=rows.apply(_candidate, axis=1) if not rows.empty else [])
    shape = {  # a contiguous store (raw) sorts first
        n: tuple(int(v) for v in str(c).split("x") if v.isdigit())
        for n, c in zip(rows["_name"], rows[C.CHUNK_SHAPE], strict=True)
    }
    names = sorted(shape, key=lambda n: (shape[n], n))  # one order for every case (shared axis)
    y = {n: i for i, n in enumerate(names)}
    series = list(dict.fromkeys(zip(rows[C.READER], rows[C.CACHE_STATE].fillna(""), strict=True)))
    cases = list(dict.fromkeys(rows[C.CASE]))
    fig, axes = plt.subplots(
        1,
        max(1, len(cases)),
        figsize=(3.6 * max(1, len(cases)) + 3.5, max(3.0, 0.35 * len(names) + 1.8)),
        squeeze=False,
        sharey=True,
    )
    if not cases:
        reference = backend_label(REFERENCE)
        _not_measured(axes[0][0], f"a store of another backend against {reference} on {filesystem}")
    for ax, case in zip(axes[0], cases, strict=False):
        for k, (reader, state) in enumerate(series):
            mine = rows[(rows[C.CASE] == case) & (rows[C.READER] == reader) & (rows[C.CACHE_STATE].fillna("") == state)]
            if mine[RATIO_TO_REFERENCE].notna().sum() == 0:  # not read so in this case: no entry
                continue
            ax.errorbar(
                mine[RATIO_TO_REFERENCE],
                mine["_name"].map(y).astype(float) + (k - (len(series) - 1) / 2) * 0.18,
                xerr=interval_errors(mine, RATIO_TO_REFERENCE, RATIO_TO_REFERENCE_CI_LOW, RATIO_TO_REFERENCE_CI_HIGH),
                fmt="o",
                markersize=4,
                capsize=3,
                color=OKABE_ITO[k % len(OKABE_ITO)],
                label=f"{reader}, {state}" if state else reader,
            )
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"time / {backend_label(REFERENCE)}'s (median, 95% CI)", fontsize=8)
        ax.set_title(case, fontsize=9)
    if cases:
        axes[0][0].set_yticks(range(len(names)), names, fontsize=7)
        axes[0][-1].legend(fontsize=7, loc="best")
        suptitle(
            fig,
            f"{others} against {backend_label(REFERENCE)} on {filesystem}: per read case, time on a selection over "
            f"the {backend_label(REFERENCE)} file's of the same chunk shape and codec (paired; left of 1 the other "
            "backend is faster)",
        )
    _save(fig, out)
