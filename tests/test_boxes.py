"""Boxes: read cases named and sized in the config, here the 2-D studies' selections."""

from __future__ import annotations

import pytest
from conftest import run_test_config

from h5sweep.cases import read_cases_from_config
from h5sweep.storage.errors import ConfigError

IMAGE = (480, 1, 2100)


def test_boxes_are_read_cases_with_their_own_names_and_sizes():
    cases = read_cases_from_config(
        {"slice": {"repeats": 2}, "boxes": [{"name": "one_column", "size": ["all", "all", 1], "repeats": 7}]}, IMAGE
    )
    box = cases[1]
    assert [c.name for c in cases] == ["slice", "one_column"]
    assert box.size(IMAGE) == (480, 1, 1) and box.repeats == 7
    sels = box.selections(IMAGE, 0)
    assert len({s.start[2] for s in sels}) > 3 and all(s.start[:2] == (0, 0) for s in sels)
    assert sels == box.selections(IMAGE, 0, "random", (480, 1, 525))  # the same for every layout


@pytest.mark.parametrize(
    "boxes, message",
    [
        ([{"name": "slice", "size": [1, 1, 1]}], "cases.boxes[0].name='slice': is already the name of a case"),
        ([{"name": "a", "size": [1, 1, 1]}, {"name": "a", "size": [2, 1, 1]}], "cases.boxes[1].name='a'"),
        ([{"name": "Bad-Name", "size": [1, 1, 1]}], "cases.boxes[0].name='Bad-Name'"),
        ([{"name": "wide", "size": [1, 1, 5000]}], "cases.boxes[0].size=[1, 1, 5000]: selects 5000 along axis 2"),
    ],
)
def test_bad_boxes_are_refused(boxes, message):
    with pytest.raises(ConfigError) as err:
        read_cases_from_config({"boxes": boxes}, IMAGE)
    assert message in str(err.value)


@pytest.mark.workflow
def test_the_2d_studies_selections_run_contiguous_and_column_chunked(tmp_path):
    _, results, summary = run_test_config(tmp_path, "image2d.yaml", figures=["case_bars"])
    reads = summary[summary["case"] != "write"]
    assert set(reads["case"]) == {"one_column", "columns_525", "row_block"}
    assert set(reads["layout_name"]) == {"", "column_chunked"}
    nbytes = reads.groupby("case")["bytes_selected"].first().astype(int).to_dict()
    assert nbytes == {"one_column": 480 * 2, "columns_525": 480 * 525 * 2, "row_block": 48 * 2100 * 2}
    chunked = reads[reads["layout"] == "chunked"].set_index("case")
    # one column lies in one column chunk; 525 columns in one or two
    assert chunked.loc["one_column", "chunks_touched_mean"] == 1
    assert 1 <= chunked.loc["columns_525", "chunks_touched_mean"] <= 2
    for case in ["one_column", "columns_525", "row_block"]:
        assert (results / "plots" / f"bars-{case}-disk.png").exists()
