"""A 2-D [time, channels] recording (the neuroscience study's array) through the whole sweep:
HDF5 and Zarr stores, read whole, as a block of time steps and as one channel."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from h5sweep.cases import read_cases_from_config
from h5sweep.storage.datasources import ChunkIndexSource, RecordingSource, make_source
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import load_sweep

REPO = Path(__file__).resolve().parents[1]
SHAPE = (40000, 16)


def config(**changes):
    loaded = yaml.safe_load((REPO / "tests" / "configs" / "recording.yaml").read_text())
    loaded.update(changes)
    return loaded


def test_the_recording_cases_select_time_blocks_and_channels():
    cases = {c.name: c for c in read_cases_from_config(config()["cases"], SHAPE)}
    assert cases["whole"].size(SHAPE) == SHAPE and cases["whole"].repeats == 2
    assert cases["rows"].size(SHAPE) == (2000, 16)
    assert cases["column"].size(SHAPE) == (40000, 1)
    selections = cases["column"].selections(SHAPE, seed=3)
    assert len({s.start[1] for s in selections}) > 1 and {s.start[0] for s in selections} == {0}
    chunked = Layout((5000, 1))  # one channel's chunks: a column read touches 8 of them
    assert {chunked.chunks_touched(s.start, s.size) for s in selections} == {8}
    assert Layout((5000, 16)).chunks_touched(*_box(cases["rows"].selections(SHAPE, 3)[0])) in (1, 2)


def _box(selection):
    return selection.start, selection.size


def test_recording_values_are_deterministic_for_any_region():
    source = RecordingSource(SHAPE, np.dtype("int16"), seed=3)
    whole = source.materialize()
    assert whole.dtype == np.int16 and whole.std() > 10  # a signal, not a constant
    np.testing.assert_array_equal(source.region((slice(1234, 5678), slice(3, 4))), whole[1234:5678, 3:4])
    assert make_source({"shape": list(SHAPE), "dtype": "int16", "fill": "synthetic", "seed": 3}, Layout(None)).kind
    index = ChunkIndexSource(SHAPE, np.dtype("uint16"), Layout((5000, 4)))
    values = index.materialize()
    assert values[0, 0] == 0 and values[0, 4] == 1 and values[5000, 0] == 4 and values[-1, -1] == 31


@pytest.mark.parametrize(
    "changes, key, reason",
    [
        ({"cases": {"slice": {"repeats": 2}}}, "cases.slice", "reads [x, y, z] datasets"),
        (
            {"cases": {"column": {"repeats": 2}}, "dataset": {"shape": [10, 10, 100]}},
            "cases.column",
            "[time, channels]",
        ),
        ({"layouts": {"chunks": {"xy": [4], "z": [64]}}}, "layouts.chunks", "m x m x n grid of 3-D"),
        ({"layouts": {"orders": ["zxy"]}}, "layouts.orders[0]", "transposes [x, y, z] datasets only"),
        ({"cases": {"write": {"strategies": ["spectrum"]}, "whole": {}}}, "cases.write.strategies", "chunk by chunk"),
        ({"cases": {"whole": {}, "metadata": {}}}, "cases.metadata", "[x, y, z] datasets only"),
        ({"cases": {"boxes": [{"name": "b", "size": [10, 10, 10]}]}}, "cases.boxes[0].size", "needs 2 axes"),
    ],
)
def test_cases_and_layouts_that_need_another_rank_are_refused_naming_the_key(changes, key, reason):
    bad = config(**{k: v for k, v in changes.items() if k != "dataset"})
    if "dataset" in changes:
        bad["dataset"] = {**bad["dataset"], **changes["dataset"]}
    with pytest.raises(ConfigError) as err:
        load_sweep(bad, probe=False)
    assert key in str(err.value) and reason in str(err.value)


@pytest.mark.workflow
def test_a_recording_sweep_runs_end_to_end(workflow, tmp_path):
    from conftest import tiny_config

    settings = config()
    settings["filesystems"] = tiny_config(tmp_path)["filesystems"]
    path = workflow.write_config(settings, "recording.yaml")
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    results = workflow.root / "results" / "recording"
    measured = pd.read_parquet(results / "measurements.parquet")
    reads = measured[measured["case"].isin(["whole", "rows", "column"])]
    assert set(reads["dataset_shape"]) == {"40000x16"}
    assert set(reads["case"]) == {"whole", "rows", "column"}
    column = reads[(reads["case"] == "column") & (reads["layout_id"] == "chunked-5000x1")]
    assert set(column["chunks_touched"]) == {8}
    assert set(column[column["backend"] == "zarr"]["files_touched"]) == {8}
    sharded = reads[(reads["case"] == "column") & (reads["shard_shape"] == "20000x16")]
    assert set(sharded["files_touched"]) == {2} and set(sharded["chunks_touched"]) == {8}
    chunked = reads[(reads["layout"] == "chunked") & (reads["shard_shape"] == "")]
    assert chunked["storage_s"].notna().all() and (chunked["storage_s"] > 0).all()  # split_read_time
    assert reads[(reads["layout"] == "contiguous") | (reads["shard_shape"] != "")]["storage_s"].isna().all()
    summary = pd.read_parquet(results / "summary.parquet")
    assert summary[(summary["layout"] == "chunked") & (summary["shard_shape"] == "")]["storage_s_median"].notna().any()
    zarr_rows = summary[(summary["backend"] == "zarr") & summary["case"].isin(["rows", "column", "whole"])]
    assert zarr_rows["ratio_to_contiguous"].notna().all() and zarr_rows["ratio_to_hdf5"].notna().all()
    assert (results / "recommendation.md").read_text().count("Zarr") > 0
