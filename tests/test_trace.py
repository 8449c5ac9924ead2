"""Your reads, recorded and replayed: ``h5sweep.storage.trace`` records the selections a real program
reads through h5py and zarr-python, in order; ``cases.trace`` replays the recording on every
layout in a real Snakemake run, and the recommendation ranks by the replay's total time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import zarr
from conftest import Workflow

from h5sweep.storage.errors import ConfigError
from h5sweep.storage.trace import box_of, load, record
from h5sweep.sweep.config import load_schema
from h5sweep.sweep.model import load_sweep

SHAPE = (40, 30, 200)

# An analysis program as a user would write it: open the file once, read an ion image, a few
# spectra and a block, in that order.
ANALYSIS = """
import sys
import h5py

with h5py.File(sys.argv[1], "r") as f:
    data = f["data"]
    image = data[:, :, 120]
    total = 0
    for x, y in [(3, 4), (10, 20), (39, 0)]:
        total += int(data[x, y, :].sum())
    block = data[5:15, 5:15, 50:150]
print(image.shape, total, block.shape)
"""


def test_an_index_becomes_the_box_it_selects():
    shape = (10, 20, 30)
    assert box_of(3, shape) == [[3, 4], [0, 20], [0, 30]]
    assert box_of((slice(None), slice(2, 5), -1), shape) == [[0, 10], [2, 5], [29, 30]]
    assert box_of((Ellipsis, slice(0, 7)), shape) == [[0, 10], [0, 20], [0, 7]]
    assert box_of((slice(None, None, 2),), shape) is None  # a step: not a box
    assert box_of(([1, 2], 0), shape) is None and box_of(99, shape) is None


def test_the_context_manager_records_h5py_and_zarr_reads_in_order(tmp_path):
    values = np.arange(20 * 30, dtype="i4").reshape(20, 30)
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("data", data=values)
    array = zarr.create_array(store=str(tmp_path / "a.zarr"), shape=values.shape, chunks=(5, 10), dtype="i4")
    array[:] = values
    out = tmp_path / "reads.jsonl"
    with record(out), h5py.File(tmp_path / "a.h5", "r") as f:
        f["data"][2:4]
        f["data"][::3, 0]  # not a box: recorded as such
        zarr.open_array(str(tmp_path / "a.zarr"))[:, 7]
    f = h5py.File(tmp_path / "a.h5", "r")
    f["data"][0]  # after the block: not recorded
    f.close()
    reads = load(out)
    assert [r["library"] for r in reads] == ["h5py", "h5py", "zarr-python"]
    assert [r["selection"] for r in reads] == [[[2, 4], [0, 30]], None, [[0, 20], [7, 8]]]
    assert reads[0]["dataset"] == "/data" and reads[0]["shape"] == [20, 30] and reads[0]["seconds"] >= 0


def _store(path, shape=SHAPE):
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=np.zeros(shape, dtype="uint16"))


def test_a_program_run_under_the_recorder_is_recorded_whole(tmp_path):
    _store(tmp_path / "cube.h5")
    (tmp_path / "analysis.py").write_text(ANALYSIS)
    out = tmp_path / "reads.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "h5sweep.storage.trace",
            "run",
            "-o",
            str(out),
            "--",
            sys.executable,
            "analysis.py",
            "cube.h5",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "(40, 30) " in run.stdout  # the program ran as itself
    header = json.loads(out.read_text().splitlines()[0])
    assert header["h5sweep_trace"] == 1 and header["program"][-1] == "cube.h5"
    reads = load(out)
    assert [r["selection"] for r in reads] == [
        [[0, 40], [0, 30], [120, 121]],
        [[3, 4], [4, 5], [0, 200]],
        [[10, 11], [20, 21], [0, 200]],
        [[39, 40], [0, 1], [0, 200]],
        [[5, 15], [5, 15], [50, 150]],
    ]
    assert "5 reads recorded" in run.stderr


def _recording(tmp_path) -> str:
    _store(tmp_path / "cube.h5")
    (tmp_path / "analysis.py").write_text(ANALYSIS)
    out = tmp_path / "reads.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "h5sweep.storage.trace",
            "run",
            "-o",
            str(out),
            "--",
            sys.executable,
            "analysis.py",
            "cube.h5",
        ],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    return str(out)


def _config(tmp_path, recording: str) -> dict:
    return {
        "sweep": "trace",
        "dataset": {"shape": list(SHAPE), "dtype": "uint16", "fill": "synthetic", "seed": 5},
        "layouts": {"contiguous": True, "chunks": {"xy": [4], "z": [50]}, "shapes": [[40, 30, 1]]},
        "compression": ["none"],
        "filesystems": {"disk": str(tmp_path / "disk")},
        "cases": {"write": {"repeats": 1}, "trace": {"file": recording}},
    }


def test_a_read_outside_the_dataset_or_not_a_box_is_refused_naming_the_read(tmp_path):
    recording = _recording(tmp_path)
    config = _config(tmp_path, recording)
    config["dataset"]["shape"] = [40, 20, 200]  # the ion image's 30 rows no longer fit
    refused = r"cases\.trace\.file.*read 0 \(h5py /data, index .*selects 0:30 along axis 1"
    with pytest.raises(ConfigError, match=refused):
        load_sweep(config)
    lines = Path(recording).read_text().splitlines()
    entry = json.loads(lines[2])
    entry.update(selection=None, index="(slice(None, None, 2), 0)")
    lines[2] = json.dumps(entry)
    (tmp_path / "stepped.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"read 1 .* is not a box"):
        load_sweep(_config(tmp_path, str(tmp_path / "stepped.jsonl")))


@pytest.mark.workflow
def test_a_recorded_analysis_is_replayed_on_every_layout_and_ranked_by_its_total_time(tmp_path):
    recording = _recording(tmp_path)
    wf = Workflow(tmp_path / "wf")
    config = {**_config(tmp_path, recording), "figures": ["case_bars"]}
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / "trace"
    reads = pd.read_parquet(results / "measurements.parquet").query("case == 'trace'")
    layouts = sorted(set(reads["layout_id"]))
    assert layouts == ["chunked-40x30x1", "chunked-4x4x50", "contiguous"]
    recorded = [json.loads(line)["selection"] for line in Path(recording).read_text().splitlines()[1:]]
    for layout in layouts:  # every read, in the program's order, on every layout
        mine = reads[reads["layout_id"] == layout].sort_values("repeat")
        expected = ["[" + ", ".join(f"{a}:{b}" for a, b in box) + "]" for box in recorded]
        assert list(mine["selection"]) == expected
        assert list(mine["bytes_selected"]) == [2 * int(np.prod([b - a for a, b in box])) for box in recorded]
    ranked = pd.read_csv(results / "recommendation.csv")
    assert len(ranked) == 3
    text = (results / "recommendation.md").read_text()
    assert "trace 5" in text  # one unit of work: the recording's five reads
    assert (results / "plots" / "bars-trace-disk.png").stat().st_size > 5_000
    assert load_schema()["properties"]["cases"]["properties"]["trace"]
