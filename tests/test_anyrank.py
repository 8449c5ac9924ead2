"""Any array: a dataset of rank 1 to 5 with named axes (``dataset.axes``), chunk shapes given
per axis, boxes sized by axis name; a 4-D climate variable and a 5-D microscopy stack run end
to end through every backend they name, with every figure they plan and a recommendation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, run_test_config

from h5sweep.cases import figure_names
from h5sweep.storage.datasources import FieldSource, axis_names, make_source
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import load_sweep


def _config(name: str, tmp_path) -> dict:
    config = yaml.safe_load((REPO / "tests" / "configs" / name).read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    return config


def test_axes_give_the_shape_and_boxes_their_sizes_by_name(tmp_path):
    sweep = load_sweep(_config("rank4.yaml", tmp_path), probe=False)
    assert sweep.shape == (48, 4, 32, 64) and axis_names(sweep.dataset) == ["time", "level", "lat", "lon"]
    sizes = {case.name: case.size(sweep.shape) for case in sweep.read_cases}
    # a series at a point, and a map: an axis not named is whole
    assert sizes == {"whole": (48, 4, 32, 64), "series": (48, 1, 1, 1), "map": (1, 1, 32, 64)}
    assert axis_names({"shape": [5]}) == ["axis0"] and axis_names({"shape": [2, 3]}) == ["time", "channels"]


@pytest.mark.parametrize(
    "change, key",
    [
        ({"dataset": {"shape": [48, 4, 32, 65]}}, "dataset.shape"),  # disagrees with the axes
        ({"axes_twice": True}, "dataset.axes[1].name"),
        ({"box": {"name": "bad", "size": {"height": 1}}}, "cases.boxes[0].size.height"),
        ({"box": {"name": "bad", "size": [1, 1, 1]}}, "cases.boxes[0].size"),
        ({"dataset": {"shape": [2, 2, 2, 2, 2, 2], "axes": None}}, "dataset.shape"),  # rank 6
    ],
    ids=["shape-and-axes", "axis-named-twice", "unknown-axis", "wrong-rank", "rank-6"],
)
def test_an_array_config_that_cannot_run_is_refused_naming_the_key(tmp_path, change, key):
    config = _config("rank4.yaml", tmp_path)
    if "dataset" in change:
        config["dataset"].update(change["dataset"])
        if config["dataset"]["axes"] is None:
            del config["dataset"]["axes"]
    if change.get("axes_twice"):
        config["dataset"]["axes"][1]["name"] = "time"
    if "box" in change:
        config["cases"]["boxes"] = [change["box"]]
    with pytest.raises(ConfigError) as err:
        load_sweep(config)  # the schema, then the semantic checks
    assert key in str(err.value)


@pytest.mark.parametrize("shape", [(100,), (5, 6, 7, 8), (3, 2, 4, 5, 6)])
def test_the_field_source_gives_any_region_the_values_of_the_whole(shape):
    source = FieldSource(shape, np.dtype("int16"), 7)
    whole = source.materialize()
    region = tuple(slice(n // 3, n - n // 4) for n in shape)
    assert np.array_equal(source.region(region), whole[region])
    assert len(np.unique(whole)) > 10  # not a constant
    assert isinstance(
        make_source({"shape": list(shape), "dtype": "int16", "fill": "synthetic", "seed": 7}, Layout(None)), FieldSource
    )


@pytest.mark.workflow
@pytest.mark.parametrize("name", ["rank4.yaml", "rank5.yaml"])
def test_a_rank_4_and_a_rank_5_sweep_run_end_to_end_with_their_figures_and_a_recommendation(tmp_path, name):
    config, results, _ = run_test_config(tmp_path, name, figures=True)
    sweep = load_sweep(config, probe=False)
    for figure in figure_names(sweep):
        assert (results / "plots" / f"{figure}.png").stat().st_size > 5_000, figure
    measured = pd.read_parquet(results / "measurements.parquet")
    reads = measured[measured["case"] != "write"]  # each checked against the source (else the job fails)
    itemsize = np.dtype(config["dataset"]["dtype"]).itemsize
    for case in sweep.read_cases:  # each read selected the box its sizes by name describe
        selected = set(reads.loc[reads["case"] == case.name, "bytes_selected"])
        assert selected == {int(np.prod(case.size(sweep.shape))) * itemsize}, case.name
    # every store in every read option it was read with (Zarr's two readers) is ranked
    choices = reads.drop_duplicates(["backend", "layout_id", "compression", "read_option"])
    ranked = pd.read_csv(results / "recommendation.csv")
    assert len(ranked) == len(choices) and set(ranked["backend"]) == set(config["backends"])
    assert "Choose" in (results / "recommendation.md").read_text()
