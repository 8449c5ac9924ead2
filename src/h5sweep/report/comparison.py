"""Figures of a comparison across systems (:mod:`h5sweep.compare`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from h5sweep.analyze.wording import several_options  # noqa: E402
from h5sweep.backends import REFERENCE  # noqa: E402
from h5sweep.backends import label as backend_label  # noqa: E402
from h5sweep.cases.parallel import columns as PC  # noqa: E402
from h5sweep.cases.style import OKABE_ITO, title  # noqa: E402
from h5sweep.cases.style import save as _save  # noqa: E402
from h5sweep.storage import columns as C


def plot_reference(systems, out) -> None:
    """The reference store on every system: its mean read time per case (log axis), so the
    systems themselves can be compared before their layouts are."""
    cases = list(dict.fromkeys(c for s in systems for c in s.reads[C.CASE]))
    fig, ax = plt.subplots(figsize=(2.2 + 1.6 * len(cases), 4))
    width = 0.8 / max(1, len(systems))
    for k, system in enumerate(systems):
        ref = system.run.settings["reference"]
        mine = system.reads[
            (system.reads[C.LAYOUT_ID] == ref[C.LAYOUT_ID]) & (system.reads[C.COMPRESSION] == ref[C.COMPRESSION])
        ]
        means = [mine.loc[mine[C.CASE] == c, C.SECONDS].mean() * 1e3 for c in cases]
        ax.bar(np.arange(len(cases)) + k * width, means, width, label=system.name, color=OKABE_ITO[k % len(OKABE_ITO)])
    ax.set_xticks(np.arange(len(cases)) + width * (len(systems) - 1) / 2, cases)
    ax.set_yscale("log")
    ax.set_ylabel("mean read time [ms]")
    ref = systems[0].run.settings["reference"]
    title(ax, f"the reference store ({ref[C.LAYOUT_ID]} {ref[C.COMPRESSION]}) on each system")
    ax.legend(fontsize=7)
    _save(fig, out)


def plot_regret(table: pd.DataFrame, out) -> None:
    """Each store's regret on each system (its mix time over that system's best store's), a
    heat map with the values written in; the minimax choice on top."""
    systems = list(dict.fromkeys(table[C.SYSTEM]))
    keys = [c for c in (C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.READ_OPTION) if c in table]
    several = several_options(table)
    order = table.drop_duplicates(keys).sort_values([C.MAX_REGRET])
    names = [
        f"{r[C.LAYOUT_ID]}{'' if r[C.COMPRESSION] == 'none' else ' ' + r[C.COMPRESSION]}"
        + ("" if r[C.BACKEND] == REFERENCE else f" ({backend_label(r[C.BACKEND])})")
        + (f", {r[C.READ_OPTION]}" if r[C.BACKEND] in several else "")
        + (" (choice)" if r[C.MINIMAX] else "")
        for _, r in order.iterrows()
    ]
    grid = np.array(
        [
            [
                table[(table[C.SYSTEM] == s) & (table[keys] == pd.Series(r[keys])).all(axis=1)][C.REGRET].iloc[0]
                for s in systems
            ]
            for _, r in order.iterrows()
        ]
    )
    fig, ax = plt.subplots(figsize=(3.5 + 1.4 * len(systems), 2.0 + 0.3 * len(names)))
    image = ax.imshow(np.log2(grid), cmap="cividis_r", vmin=0, vmax=max(1.0, np.log2(grid.max())), aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7, color="grey")
    ax.set_xticks(range(len(systems)), systems, fontsize=7, rotation=20)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(image, ax=ax, label="log2 of the time over the system's best")
    title(ax, "each store's read-mix time over the best store's, per system")
    _save(fig, out)


def plot_parallel_sizes(runs, out) -> None:
    """Folk & Choi's Fig. 7: the parallel passes' bandwidth against the process count, a panel
    per operation and layout kind, a line per mode, the larger dataset solid and the smaller
    dashed (each the best pass's bandwidth, as the study reports)."""
    frames = []
    for run in runs:
        s = run.summary
        if C.CASE not in s or not (s[C.CASE] == "parallel").any():
            continue
        rows = s[s[C.CASE] == "parallel"]
        kind = np.where(rows[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked")
        frames.append(rows.assign(kind=kind, size=int(np.prod(run.shape)) if run.shape else 0, sweep=run.sweep))
    both = pd.concat(frames) if frames else pd.DataFrame(columns=[PC.OPERATION, "kind", "size", PC.MODE])
    panels = sorted(set(zip(both[PC.OPERATION], both["kind"], strict=True)))
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4.6 * max(1, len(panels)), 4), squeeze=False)
    sizes = sorted(set(both["size"]))
    modes = sorted(set(both[PC.MODE]))
    for ax, (operation, kind) in zip(axes[0], panels, strict=False):
        part = both[(both[PC.OPERATION] == operation) & (both["kind"] == kind)]
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
        ax.set(xlabel="processes", ylabel="bandwidth [MB/s] (best pass)", yscale="log" if spread > 10 else "linear")
        ax.set_xticks(sorted(set(part[PC.PROCESSES])))
        ax.set_title(f"{operation}, {kind}", fontsize=9)
        ax.legend(fontsize=7)
    if not panels:
        axes[0][0].set_axis_off()
    _save(fig, out)
