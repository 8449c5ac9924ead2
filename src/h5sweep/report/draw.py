"""Draw the figures of the workflow by their kind (a plot rule's ``figure`` parameter)."""

from __future__ import annotations

import importlib

import pandas as pd

from h5sweep.cases import FIGURES
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
    draw_all(figure, inputs, [wildcards], [out])


def draw_all(figure: str, inputs: dict, instances: list[dict], outs: list[str]) -> None:
    """Draw every figure of one kind (a plot job's): ``instances[i]``'s wildcards into
    ``outs[i]``, the tables read once."""
    plot = getattr(_drawn_by(figure), f"plot_{figure}") if figure not in ("tradeoff", "mix") else None
    if plot is None:
        plot = decision.plot_tradeoff if figure == "tradeoff" else decision.plot_mix
        table = pd.read_csv(inputs["recommendation"])
        for wildcards, out in zip(instances, outs, strict=True):
            plot(table.copy(), **wildcards, out=out)
        return
    every_variant = figure in ("variants", "backends", "cache") or figure.startswith("parallel")
    summary = figures.load_summary(inputs["summary"], primary_only=not every_variant)
    reads = None
    if "measurements" in inputs:
        cases = sorted({w[C.CASE] for w in instances})
        reads = pd.read_parquet(inputs["measurements"], columns=MEASUREMENT_COLUMNS, filters=[(C.CASE, "in", cases)])
    for wildcards, out in zip(instances, outs, strict=True):
        extra = {}
        if reads is not None:
            mine = (reads[C.CASE] == wildcards[C.CASE]) & (reads[C.FILESYSTEM] == wildcards[C.FILESYSTEM])
            extra["measurements"] = reads[mine].reset_index(drop=True)
        plot(summary.copy(), **wildcards, out=out, **extra)  # a figure may add columns to its table


# What the figures that draw single reads need of them.
MEASUREMENT_COLUMNS = [
    C.CASE,
    C.FILESYSTEM,
    C.BACKEND,
    C.VARIANT,
    C.LAYOUT,
    C.CHUNK_SHAPE,
    C.SHARD_SHAPE,
    C.LAYOUT_NAME,
    C.ORDER,
    C.COMPRESSION,
    C.CACHE_STATE,
    C.SECONDS,
]
