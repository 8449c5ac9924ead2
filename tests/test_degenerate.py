"""Degenerate results draw; they do not crash: one layout, one read per case, equal times, a
case with no rows. The records of one real tiny sweep are cut down to each, then aggregated,
ranked and drawn by the same functions the workflow's jobs call, every figure it plans."""

from pathlib import Path

import pandas as pd
import pytest
from conftest import tiny_config

from h5sweep.analyze.aggregate import aggregate
from h5sweep.analyze.recommend import recommend
from h5sweep.cases import FIGURE_INPUTS, FIGURES, figures_by_kind
from h5sweep.report.draw import draw
from h5sweep.sweep import settings
from h5sweep.sweep.model import load_sweep


@pytest.fixture(scope="session")
def measured(tmp_path_factory):
    """The measurements of a real tiny sweep (every store, every read case), and its sweep."""
    from conftest import Workflow

    root = tmp_path_factory.mktemp("degenerate")
    workflow = Workflow(root / "wf")
    config = tiny_config(root, sweep="degenerate")
    config["filesystems"] = {"disk": str(root / "disk")}
    cfg = workflow.write_config(config)
    workflow.run("--cores", "2", "--configfile", str(cfg), check=True)
    rows = pd.read_parquet(workflow.root / "results" / "degenerate" / "measurements.parquet")
    return rows, load_sweep({**config, "figures": True})  # the test draws every figure itself


def _one_layout(rows):
    return rows[rows["layout_id"] == "contiguous"]


def _one_read(rows):
    return rows[rows["repeat"] == 0]


def _equal_times(rows):
    return rows.assign(seconds=0.001)


def _no_spectra(rows):
    return rows[rows["case"] != "spectra"]


@pytest.mark.workflow
@pytest.mark.parametrize("cut", [_one_layout, _one_read, _equal_times, _no_spectra], ids=lambda f: f.__name__[1:])
def test_degenerate_results_draw_every_planned_figure(measured, tmp_path, cut):
    rows, sweep = measured
    record = tmp_path / "records.parquet"
    cut(rows).to_parquet(record)
    out = {name: tmp_path / FIGURE_INPUTS[name] for name in FIGURE_INPUTS}
    aggregate(
        [str(record)],
        str(out["measurements"]),
        str(out["summary"]),
        str(tmp_path / "summary.csv"),
        sweep.score,
        sweep.reference,
    )
    recommend(
        str(out["measurements"]),
        str(out["summary"]),
        settings.recommend_settings(sweep),
        str(out["recommendation"]),
        str(tmp_path / "recommendation.md"),
    )
    drawn = []
    for kind, figures in figures_by_kind(sweep).items():
        for name, wildcards in figures:
            png = tmp_path / "plots" / f"{name}.png"
            png.parent.mkdir(exist_ok=True)
            draw(kind, {i: str(out[i]) for i in FIGURES[kind].inputs}, wildcards, str(png))
            assert png.stat().st_size > 0, name
            drawn.append(name)
    assert len(drawn) >= 8 and "recommendation.md" in {p.name for p in Path(tmp_path).iterdir()}
