"""Draw one figure of the workflow by its kind (a plot rule's ``figure`` parameter)."""

from __future__ import annotations

import pandas as pd

from h5sweep.report import bars, decision, figures, studies


def draw(figure: str, inputs: dict, wildcards: dict, out: str) -> None:
    """Draw ``figure`` (``plot_<figure>``) from the rule's inputs: the summary (primary
    variants, all for the variant figures), the single reads for the read-case figures, the
    recommendation for the trade-off."""
    if figure in ("tradeoff", "mix"):
        plot = figures.plot_tradeoff if figure == "tradeoff" else decision.plot_mix
        plot(pd.read_csv(inputs["recommendation"]), **wildcards, out=out)
        return
    every_variant = figure in ("variants", "backends", "cache") or figure.startswith("parallel")
    summary = figures.load_summary(inputs["summary"], primary_only=not every_variant)
    extra = {}
    if "measurements" in inputs:
        columns = [
            "case",
            "filesystem",
            "backend",
            "variant",
            "layout",
            "chunk_shape",
            "shard_shape",
            "layout_name",
            "order",
            "compression",
            "cache_state",
            "seconds",
        ]
        filters = [("case", "==", wildcards["case"]), ("filesystem", "==", wildcards["filesystem"])]
        extra["measurements"] = pd.read_parquet(inputs["measurements"], columns=columns, filters=filters)
    module = next(m for m in (studies, bars, figures) if hasattr(m, f"plot_{figure}"))
    getattr(module, f"plot_{figure}")(summary, **wildcards, out=out, **extra)
