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
from h5sweep.kit.style import OKABE_ITO, title  # noqa: E402
from h5sweep.kit.style import save as _save  # noqa: E402
from h5sweep.measure.objective import objective_of  # noqa: E402
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
    """Each store's regret on each system (its score by the sweeps' objective, by default its
    mix time, over that system's best store's), a heat map with the values written in; the
    minimax choice on top."""
    noun = objective_of(table.attrs.get(C.OBJECTIVE)).noun  # compare_runs says which
    systems = list(dict.fromkeys(table[C.SYSTEM]))
    keys = [c for c in (C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.COMPARED_OPTION) if c in table]
    several = several_options(table)
    order = table.drop_duplicates(keys).sort_values([C.MAX_REGRET])
    names = [
        f"{r[C.LAYOUT_ID]}{'' if r[C.COMPRESSION] == 'none' else ' ' + r[C.COMPRESSION]}"
        + ("" if r[C.BACKEND] == REFERENCE else f" ({backend_label(r[C.BACKEND])})")
        + (f", {r[C.COMPARED_OPTION]}" if r[C.BACKEND] in several else "")
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
    fig.colorbar(image, ax=ax, label=f"log2 of the {noun} over the system's best")
    title(ax, f"each store's {noun} over the best store's, per system")
    _save(fig, out)
