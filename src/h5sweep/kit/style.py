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
from h5sweep.kit.figcheck import LOG_SPAN  # noqa: E402
from h5sweep.storage import columns as C  # noqa: E402
from h5sweep.storage.layouts import Layout  # noqa: E402
from h5sweep.storage.sizes import factor  # noqa: E402

# Colour-blind-safe throughout: Okabe and Ito's qualitative palette, a purple-orange diverging
# map for ratios (centred on 1) and cividis where a sequential scale is needed.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
CACHE_STATE_COLOURS = {"cold": "#0072B2", "warm": "#D55E00", "memory": "#009E73", "": "#000000"}
DIVERGING = "PuOr_r"
DPI = 110
PAD_IN = 0.05  # the white margin around a figure's tight box, inches
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
    page = row.get(C.PAGE_SIZE, 0)
    if page is not None and pd.notna(page) and float(page) > 0:
        suffix += " paged " + Layout(page_size=int(page)).page_label
    if not row[C.CHUNK_SHAPE]:
        return backend_prefix(row) + "contiguous" + suffix
    name = row.get(C.LAYOUT_NAME, "")
    label = f"{name} {row[C.CHUNK_SHAPE]}" if isinstance(name, str) and name else row[C.CHUNK_SHAPE]
    shard = row.get(C.SHARD_SHAPE, "")
    shards = f" in shards {shard}" if isinstance(shard, str) and shard else ""
    return backend_prefix(row) + label + shards + suffix


def store_label(row) -> str:
    """A store as the figures name it: its layout, its compression unless none, and how far
    behind it was when raced out of its read pass."""
    label = layout_label(row)
    label = label if row[C.COMPRESSION] == "none" else f"{label} {row[C.COMPRESSION]}"
    return label + raced_suffix(row)


def raced_suffix(row) -> str:
    """What a figure adds to a store raced out of its read pass: it was not read to the end
    (nothing for a write row: the write figure's title says the writes raced)."""
    raced = row.get(C.RACED_OUT_ROUND)
    # a write row's marks are the write race's: its figure's title says so, not a label
    if raced is None or pd.isna(raced) or row.get(C.CASE) == "write":
        return ""
    return f" (raced out at round {int(raced)}, >{factor(row.get(C.RACED_OUT_AT_LEAST, float('nan')))} the best)"


def interval_errors(frame: pd.DataFrame, value: str, low: str, high: str) -> list[pd.Series]:
    """Error bar lengths below and above ``value`` for its interval ``[low, high]``."""
    return [(frame[value] - frame[low]).clip(lower=0), (frame[high] - frame[value]).clip(lower=0)]


def save(fig, out: str) -> None:
    """Lay ``fig`` out, save it as ``out`` and check it (:mod:`h5sweep.kit.figcheck`)."""
    from h5sweep.kit import figcheck

    fig.set_dpi(DPI)  # laid out and checked at the resolution it is saved at
    # whatever values a sweep measured: a wide span on a log axis, no legend entry for a series
    # with nothing drawn, no empty panel without words, and no text cut at the edge
    figcheck.log_wide_axes(fig)
    figcheck.drop_undrawn_legend_entries(fig)
    figcheck.explain_empty_panels(fig)
    fig.tight_layout()
    try:
        # the tight box from the layout just made (the text's extents are cached by it), so
        # that saving draws the figure once instead of twice
        box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD_IN)
        fig.set_layout_engine(None)  # laid out above: no draw before the one that saves
        fig.savefig(out, dpi=DPI, bbox_inches=box)
        figcheck.report(fig, out)
    finally:
        plt.close(fig)


def log_if_wide(ax, axis: str, *values) -> bool:
    """Put ``axis`` ('x' or 'y') of ``ax`` on a log scale where the finite positive
    ``values`` (arrays, Series) span more than ``figcheck.LOG_SPAN`` times; whether it did."""
    import numpy as np

    shown = np.concatenate([np.asarray(pd.to_numeric(pd.Series(np.ravel(v)), errors="coerce"), float) for v in values])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    wide = len(shown) > 1 and shown.max() / shown.min() > LOG_SPAN
    if wide:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    return wide


def title(ax, text: str, fontsize: float = 9, **kwargs) -> None:
    """A panel's title, wrapped to the panel's width."""
    import textwrap

    inches = ax.get_position().width * ax.figure.get_figwidth()
    ax.set_title("\n".join(textwrap.wrap(text, max(16, int(inches * 108 / fontsize)))), fontsize=fontsize, **kwargs)


def suptitle(fig, text: str, fontsize: float = 9) -> None:
    """A figure's title, wrapped to the figure's width (about 12 characters an inch at 9 points)."""
    import textwrap

    width = max(20, int(fig.get_figwidth() * 108 / fontsize))
    fig.suptitle("\n".join(textwrap.wrap(text, width)), fontsize=fontsize)


def not_measured(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"{what}: not measured", ha="center", va="center", wrap=True, fontsize=9, transform=ax.transAxes)
    ax.set_axis_off()
