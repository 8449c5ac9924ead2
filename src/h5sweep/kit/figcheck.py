"""What makes a drawn figure hard to read, found from its artists and the extents of its text
(never its pixels): an empty panel, a legend entry for nothing drawn, text reaching outside the
figure, a linear axis over values that span more than :data:`LOG_SPAN` times.

Every figure is checked as it is saved (:func:`h5sweep.kit.style.save`): a plot job logs what
it finds, and stops on it where ``H5SWEEP_FIGURE_CHECK=strict`` (the test suite sets it, so
that every figure a test sweep draws is checked)."""

from __future__ import annotations

import os

import numpy as np

STRICT_ENV = "H5SWEEP_FIGURE_CHECK"
LOG_ENV = "H5SWEEP_FIGURE_LOG"  # a file each drawn figure's kind is added to (the test suite's)
LOG_SPAN = 10.0  # a linear axis over positive values spanning more than this many times: log
SLACK_IN = 0.01  # inches a text may reach past the figure's edge (antialiasing)


class FigureDefect(Exception):
    """A figure a strict check refuses (:data:`STRICT_ENV`)."""


def _data_lines(ax):
    """The lines drawn in data coordinates (not ``axhline``-style guides, which span the axes)."""
    return [line for line in ax.get_lines() if line.get_transform() is ax.transData]


def _finite(values) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):  # categorical values: each is a point
        return np.zeros(len(values))
    return array[np.isfinite(array)]


def _points(artist) -> int:
    """How many points or marks of ``artist`` are drawn (finite, non-empty)."""
    from matplotlib.collections import Collection, PathCollection
    from matplotlib.container import Container
    from matplotlib.image import AxesImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    if isinstance(artist, Container):
        return sum(_points(child) for child in artist if child is not None and not isinstance(child, tuple))
    if isinstance(artist, Line2D):
        try:
            x, y = (np.asarray(v, dtype=float) for v in artist.get_data())
        except (TypeError, ValueError):
            return len(artist.get_xdata())
        return int(np.sum(np.isfinite(x) & np.isfinite(y)))
    if isinstance(artist, PathCollection):  # markers (a scatter): one per finite offset
        offsets = np.asarray(artist.get_offsets(), dtype=float).reshape(-1, 2)
        return int(np.sum(np.all(np.isfinite(offsets), axis=1)))
    if isinstance(artist, Collection):  # lines or areas (error bars, intervals): one per path
        return sum(1 for path in artist.get_paths() if len(path.vertices) and np.isfinite(path.vertices).all())
    if isinstance(artist, Rectangle):
        w, h = artist.get_width(), artist.get_height()
        return int(bool(np.isfinite(w) and np.isfinite(h) and (w != 0 and h != 0)))
    if isinstance(artist, AxesImage):
        return int(np.ma.count(artist.get_array()))
    return 1


def _drawn(ax) -> int:
    artists = [*_data_lines(ax), *ax.collections, *ax.images, *(p for p in ax.patches if p.get_visible())]
    return sum(_points(a) for a in artists if a.get_visible())


def _name(ax, i: int) -> str:
    title = ax.get_title() or ax.get_ylabel() or ax.get_xlabel()
    return f"panel {i + 1}" + (f" ({title!r})" if title else "")


def empty_axes(fig) -> list[str]:
    """Visible panels with nothing drawn in them (a panel that only says "not measured" is
    drawn: its text says why; a panel turned off with neither text nor title is blank space,
    not a panel)."""
    return [f"{_name(ax, i)} is empty" for i, ax in _empty(fig)]


def _empty(fig):
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or _drawn(ax) or ax.get_label() == "<colorbar>":
            continue
        if not ax.axison and (any(t.get_text().strip() for t in ax.texts) or not ax.get_title().strip()):
            continue
        yield i, ax


def explain_empty_panels(fig) -> None:
    """A panel left with nothing drawn (its values were all missing) says so in words instead
    of showing empty axes."""
    for _, ax in list(_empty(fig)):
        ax.set_axis_off()
        ax.text(0.5, 0.5, "nothing measured to draw", ha="center", va="center", fontsize=8, transform=ax.transAxes)


def drop_undrawn_legend_entries(fig) -> None:
    """Rebuild each panel's legend without the entries whose artists have nothing drawn (a
    series whose values were all missing); a legend left empty goes."""
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        handles, labels = ax.get_legend_handles_labels()
        kept = [(h, label) for h, label in zip(handles, labels, strict=True) if _points(h)]
        if len(kept) == len(handles):
            continue
        if not kept:
            legend.remove()
            continue
        anchor = legend.get_bbox_to_anchor()
        # the anchor in the panel's own fractions: in pixels it would not follow the figure's size
        where = None if anchor is ax.bbox else anchor.transformed(ax.transAxes.inverted()).bounds
        ax.legend(
            [h for h, _ in kept],
            [label for _, label in kept],
            loc=legend._loc,
            fontsize=legend.prop.get_size(),
            bbox_to_anchor=where,
            bbox_transform=ax.transAxes if where is not None else None,
            ncols=legend._ncols,
        )


def undrawn_legend_entries(fig) -> list[str]:
    """Legend entries whose artists (by label, in the legend's panel, or any panel for a
    figure's legend) have nothing drawn."""
    out = []
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(legend, list(fig.axes)) for legend in fig.legends]
    for legend, axes in legends:
        for text in legend.get_texts():
            label = text.get_text()
            artists = [
                a
                for ax in axes
                for a in (*ax.get_lines(), *ax.collections, *ax.patches, *ax.containers, *ax.images)
                if a.get_label() == label
            ]
            if artists and not any(_points(a) for a in artists):
                out.append(f"legend entry {label!r} has nothing drawn")
    return out


def text_outside(fig) -> list[str]:
    """The sides of the figure that its drawn artists (text above all) reach past."""
    inner, outer = fig.get_tightbbox(fig.canvas.get_renderer()), fig.bbox_inches
    sides = {
        "left": inner.x0 < outer.x0 - SLACK_IN,
        "bottom": inner.y0 < outer.y0 - SLACK_IN,
        "right": inner.x1 > outer.x1 + SLACK_IN,
        "top": inner.y1 > outer.y1 + SLACK_IN,
    }
    return [f"drawn past the figure's {side} edge" for side, beyond in sides.items() if beyond]


def _numeric_ticks(labels) -> bool:
    """Whether an axis is numeric as the reader sees it: its tick labels are numbers (a
    categorical axis labels positions with names)."""
    texts = [t.get_text().replace("\N{MINUS SIGN}", "-").strip("$ ") for t in labels]
    texts = [t for t in texts if t]
    for text in texts:
        try:
            float(text.replace(",", "").rstrip("%x×"))
        except ValueError:
            return False
    return True


def _axis_values(ax, axis: str) -> np.ndarray:
    """The values ``axis`` ('x' or 'y') shows: lines' and markers' coordinates, bars' far ends
    along their length."""
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle

    i = 0 if axis == "x" else 1
    values = [_finite(line.get_data()[i]) for line in _data_lines(ax)]
    values += [
        _finite(np.asarray(c.get_offsets(), dtype=float)[:, i])
        for c in ax.collections
        if isinstance(c, PathCollection) and len(c.get_offsets())
    ]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()]
    if len(bars) > 1:
        widths = {round(float(b.get_width()), 9) for b in bars}
        heights = {round(float(b.get_height()), 9) for b in bars}
        horizontal = len(heights) == 1 and len(widths) > 1
        vertical = len(widths) == 1 and len(heights) > 1
        if (axis == "x" and horizontal) or (axis == "y" and vertical):
            ends: dict[float, float] = {}  # a bar's far end; stacked segments: the stack's
            for b in bars:
                at, end = (
                    (b.get_y(), b.get_x() + b.get_width()) if axis == "x" else (b.get_x(), b.get_y() + b.get_height())
                )
                if np.isfinite(end):
                    ends[round(float(at), 9)] = max(ends.get(round(float(at), 9), -np.inf), float(end))
            values += [_finite(list(ends.values()))]
    return np.concatenate(values) if values else np.zeros(0)


def _wide_axes(fig):
    """(panel index, axes, axis, span) of every linear numeric axis over positive values that
    span more than :data:`LOG_SPAN` times."""
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison or ax.images:
            continue
        for axis, scale, ticks in (
            ("x", ax.get_xscale(), ax.get_xticklabels()),
            ("y", ax.get_yscale(), ax.get_yticklabels()),
        ):
            if scale != "linear" or not _numeric_ticks(ticks):
                continue
            values = _axis_values(ax, axis)
            if len(values) < 2 or values.min() <= 0:
                continue
            span = values.max() / values.min()
            if span > LOG_SPAN:
                yield i, ax, axis, span


def log_wide_axes(fig) -> None:
    """Put every linear axis over positive values spanning more than :data:`LOG_SPAN` times
    on a log scale (every figure, as it is saved: whatever values a sweep measures)."""
    for _, ax, axis, _ in list(_wide_axes(fig)):
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def linear_wide_axes(fig) -> list[str]:
    """Linear numeric axes over positive values that span more than :data:`LOG_SPAN` times."""
    return [
        f"{_name(ax, i)}: a linear {axis} axis over values spanning {span:.0f}x"
        for i, ax, axis, span in _wide_axes(fig)
    ]


def defects(fig, drawn: bool = False, edges: bool = True) -> list[str]:
    """Everything that makes ``fig`` hard to read, in words; empty for a clean figure. The
    figure is laid out as it is saved (call it after ``tight_layout``); ``drawn``: it has been
    drawn since (saved), so its tick labels are set."""
    if not drawn:
        fig.canvas.draw()
    outside = text_outside(fig) if edges else []
    return [*empty_axes(fig), *undrawn_legend_entries(fig), *outside, *linear_wide_axes(fig)]


def report(fig, out: str) -> list[str]:
    """Check ``fig`` (just saved as ``out``): say its defects on standard error, and raise
    :class:`FigureDefect` for them where :data:`STRICT_ENV` is ``strict``."""
    import sys

    found = defects(fig, drawn=True, edges=False)  # saved with its tight bounding box: nothing is cut
    for defect in found:
        print(f"h5sweep: figure {os.path.basename(out)}: {defect}", file=sys.stderr)
    if found and os.environ.get(STRICT_ENV) == "strict":
        raise FigureDefect(f"{os.path.basename(out)}: " + "; ".join(found))
    return found


def record(kind: str, out: str) -> None:
    """Add a drawn and checked figure (its kind and file) to :data:`LOG_ENV`'s file, if set."""
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{kind}\t{out}\n")
