"""Draw the workflow's figures by kind (a plot rule's ``figure`` parameter), each with its
caption rendered for it."""

from __future__ import annotations

import importlib

import pandas as pd

from h5sweep.cases import FIGURES
from h5sweep.kit import figcheck
from h5sweep.report import bars, decision, figures, stores, studies
from h5sweep.storage import columns as C


def _drawn_by(figure: str):
    """The module whose ``plot_<figure>`` draws a figure: the case package's own where its
    spec names one, else the report's."""
    if figure in FIGURES and FIGURES[figure].module:
        return importlib.import_module(FIGURES[figure].module)
    return next(m for m in (studies, bars, stores, figures) if hasattr(m, f"plot_{figure}"))


def draw(figure: str, inputs: dict, wildcards: dict, out: str) -> None:
    """Draw ``figure`` (``plot_<figure>``) from the rule's inputs: the summary (primary
    variants, all for the variant figures), the single reads for the read-case figures, the
    recommendation for the trade-off."""
    if figure in ("tradeoff", "mix"):
        plot = decision.plot_tradeoff if figure == "tradeoff" else decision.plot_mix
        plot(pd.read_csv(inputs["recommendation"]), **wildcards, out=out)
        return
    every_variant = figure in ("variants", "backends", "cache") or figure.startswith("parallel")
    summary = figures.load_summary(inputs["summary"], primary_only=not every_variant)
    extra = {}
    if "measurements" in inputs:
        columns = [
            C.CASE,
            C.FILESYSTEM,
            C.BACKEND,
            C.VARIANT,
            C.LAYOUT,
            C.CHUNK_SHAPE,
            C.SHARD_SHAPE,
            C.PAGE_SIZE,
            C.LAYOUT_NAME,
            C.ORDER,
            C.COMPRESSION,
            C.CACHE_STATE,
            C.SECONDS,
        ]
        filters = [(C.CASE, "==", wildcards[C.CASE]), (C.FILESYSTEM, "==", wildcards[C.FILESYSTEM])]
        extra["measurements"] = pd.read_parquet(inputs["measurements"], columns=columns, filters=filters)
    getattr(_drawn_by(figure), f"plot_{figure}")(summary, **wildcards, out=out, **extra)


def draw_kind(figure: str, inputs: dict, figures: list[tuple[dict, str, str]], template: str, config: dict) -> None:
    """Draw every figure of one kind (``figures``: its wildcards' values, its PNG and its
    caption's path) and render the kind's caption ``template`` (a file) for each."""
    import jinja2

    with open(template, encoding="utf-8") as f:
        caption_template = jinja2.Template(f.read(), undefined=jinja2.StrictUndefined)
    for wildcards, out, caption in figures:
        draw(figure, inputs, wildcards, out)  # checked as it is saved (h5sweep.kit.figcheck)
        figcheck.record(figure, out)
        render_caption(caption_template, wildcards, config, caption)


def render_caption(template, wildcards: dict, config: dict, out: str) -> None:
    """A figure's caption: the kind's template (a ``jinja2.Template`` of reStructuredText, as
    Snakemake's report renders a caption) filled in with the figure's own wildcards and the
    config."""
    from pathlib import Path
    from types import SimpleNamespace

    context = SimpleNamespace(wildcards=SimpleNamespace(**wildcards), config=config)
    rendered = template.render(snakemake=context)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(rendered + "\n", encoding="utf-8")


def draw_kinds(kinds: list[dict], inputs: dict, outputs: list[str], captions: list[str], config: dict) -> None:
    """Draw the figures of several kinds, one kind after another (a plot job's): ``kinds`` in
    order, each ``{"figure", "wildcards", "template"}``; ``outputs`` and ``captions``, the
    figures' PNGs and captions in the same order."""
    at = 0
    for kind in kinds:
        n = len(kind["wildcards"])
        figures = list(zip(kind["wildcards"], outputs[at : at + n], captions[at : at + n], strict=True))
        draw_kind(kind["figure"], inputs, figures, kind["template"], config)
        at += n
    if at != len(outputs):
        raise ValueError(f"{len(outputs)} figures to draw, {at} named by their kinds")
