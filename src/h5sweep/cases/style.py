"""What every figure shares, for the figures of the report (:mod:`h5sweep.report`) and those a
case package draws itself (e.g. :mod:`h5sweep.cases.parallel.figures`): the colour-blind-safe
palette, how a store is labelled, how a figure is saved. Imported only where a figure is drawn
(it loads matplotlib)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from cycler import cycler  # noqa: E402

from h5sweep.backends import REFERENCE  # noqa: E402
from h5sweep.backends import label as backend_label  # noqa: E402
from h5sweep.storage import columns as C

# Colour-blind-safe throughout: Okabe and Ito's qualitative palette, a purple-orange diverging
# map for ratios (centred on 1) and cividis where a sequential scale is needed.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
CACHE_STATE_COLOURS = {"cold": "#0072B2", "warm": "#D55E00", "memory": "#009E73", "": "#000000"}
DIVERGING = "PuOr_r"
plt.rcParams["axes.prop_cycle"] = cycler(color=OKABE_ITO)
plt.rcParams["image.cmap"] = "cividis"


def backend_prefix(row) -> str:
    """'' for the reference backend (the figures of a sweep of it alone stay as they were),
    else the backend's label and a space."""
    backend = row.get(C.BACKEND, REFERENCE)
    if not isinstance(backend, str) or backend in ("", REFERENCE):
        return ""
    return f"{backend_label(backend)} "


def layout_label(row) -> str:
    order = row.get(C.ORDER, "xyz")
    suffix = f" {order}" if isinstance(order, str) and order not in ("", "xyz") else ""
    if not row[C.CHUNK_SHAPE]:
        return backend_prefix(row) + "contiguous" + suffix + raced_suffix(row)
    name = row.get(C.LAYOUT_NAME, "")
    label = f"{name} {row[C.CHUNK_SHAPE]}" if isinstance(name, str) and name else row[C.CHUNK_SHAPE]
    shard = row.get(C.SHARD_SHAPE, "")
    shards = f" in shards {shard}" if isinstance(shard, str) and shard else ""
    return backend_prefix(row) + label + shards + suffix + raced_suffix(row)


def raced_suffix(row) -> str:
    """What a figure adds to a store raced out of its read pass: it was not read to the end
    (nothing for a write row: the write figure's title says the writes raced)."""
    raced = row.get(C.RACED_OUT_ROUND)
    # a write row's marks are the write race's: its figure's title says so, not a label
    if raced is None or pd.isna(raced) or row.get(C.CASE) == "write":
        return ""
    return f" (raced out at round {int(raced)}, >{row.get(C.RACED_OUT_AT_LEAST, float('nan')):.2f}x best)"


def interval_errors(frame: pd.DataFrame, value: str, low: str, high: str) -> list[pd.Series]:
    """Error bar lengths below and above ``value`` for its interval ``[low, high]``."""
    return [(frame[value] - frame[low]).clip(lower=0), (frame[high] - frame[value]).clip(lower=0)]


def save(fig, out: str) -> None:
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def not_measured(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"{what}: not measured", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
