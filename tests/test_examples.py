"""The examples (examples/README.md) run as a user runs them, at a tiny size: a file of the
config's shape, the analysis program run with its reads recorded, and the sweep replaying the
recording on every layout of the config, ranked by its total time."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import REPO, Workflow

from h5sweep.storage.trace import load

# Each example's axes at a tiny size, and the analysis's extra arguments.
TINY = {
    "climate": ({"time": 96, "level": 2, "lat": 19, "lon": 36}, []),
    "microscopy": ({"t": 4, "c": 2, "z": 6, "y": 32, "x": 32}, []),
    "recording": ({"time": 4000, "channels": 40}, ["data", "500"]),
}


def _tiny(config: dict, sizes: dict) -> dict:
    axes = [{"name": a["name"], "size": sizes[a["name"]]} for a in config["dataset"]["axes"]]
    config["dataset"]["axes"] = axes
    for shape in config["layouts"]["shapes"]:  # each chunk within the tiny array
        shape["chunk"] = [min(c, a["size"]) for c, a in zip(shape["chunk"], axes, strict=True)]
    for box in config["cases"].get("boxes", []):
        box["repeats"] = 4
    return config


def _recorded(tmp_path, example: str, config: dict, extra: list) -> str:
    """The example's analysis run on a file of the tiny config's shape, its reads recorded."""
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(yaml.safe_dump(config))
    data, recording = tmp_path / "data.h5", tmp_path / "reads.jsonl"
    subprocess.run([sys.executable, str(REPO / "examples" / "make_data.py"), str(tiny), str(data)], check=True)
    analysis = [sys.executable, str(REPO / "examples" / example / "analysis.py"), str(data), *extra]
    recorded = subprocess.run(
        [sys.executable, "-m", "h5sweep.storage.trace", "run", "-o", str(recording), "--", *analysis],
        capture_output=True,
        text=True,
    )
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    reads = load(recording)
    assert len(reads) >= 3 and all(r["selection"] for r in reads)
    return str(recording)


@pytest.mark.workflow
@pytest.mark.parametrize("example", sorted(TINY))
def test_an_example_runs_end_to_end_at_a_tiny_size(tmp_path, example):
    sizes, extra = TINY[example]
    config = _tiny(yaml.safe_load((REPO / "examples" / example / "config.yaml").read_text()), sizes)
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["figures"] = False  # a replay's figures: test_trace; every kind's: test_studies, test_generated_configs
    config["cases"]["trace"]["file"] = _recorded(tmp_path, example, config, extra)
    reads = load(config["cases"]["trace"]["file"])
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / config["sweep"]
    assert (results / "decision.md").read_text().startswith(f"# Decision: {config['sweep']}\n")
    assert "window.vegaEmbed" in (results / "index.html").read_text()
    replayed = pd.read_parquet(results / "measurements.parquet").query("case == 'trace'")
    # every store in every read option it replayed with is ranked
    choices = replayed.drop_duplicates(["backend", "layout_id", "compression", "read_option"])
    assert len(choices) == len(pd.read_csv(results / "recommendation.csv"))
    # every store replays every read once per read option (Zarr: zarr-python and tensorstore)
    per_store = replayed.groupby(["backend", "layout_id", "compression", "variant"], dropna=False).size()
    assert (per_store == len(reads)).all()
    assert f"trace {len(reads)}" in (results / "recommendation.md").read_text()


@pytest.mark.workflow
def test_the_climate_example_replays_its_analysis_on_an_object_store(tmp_path):
    """examples/climate/cloud.yaml at a tiny size, on moto's S3 server at 20 ms: the analysis's
    recorded reads replayed on every store in the bucket, each replayed read counting its
    requests, and the decision naming how to open the file it chose."""
    import s3server

    from h5sweep.storage import objectstore
    from h5sweep.storage.objectstore import S3Location

    record, server = s3server.start()
    try:
        config = _tiny(yaml.safe_load((REPO / "examples" / "climate" / "cloud.yaml").read_text()), TINY["climate"][0])
        # no paged copies: what paged aggregation does on S3 is the S3 sweep's test
        # (tests/test_objectstore.py); here each layout once, replayed in each read option
        config["layouts"]["pages"] = []
        s3 = config["filesystems"]["cloud"]["s3"]
        location = S3Location(record.endpoint, "climate-test", "tiny")
        objectstore.client(location).mkdir(location.bucket)
        s3.update(endpoint=record.endpoint, bucket=location.bucket, prefix=location.prefix)
        config["filesystems"]["cloud"]["path"] = str(tmp_path / "staging")
        config["figures"] = False
        config["cases"].pop("boxes")  # the replay is what this test reads: its 20 ms requests alone
        config["cases"]["trace"]["file"] = _recorded(tmp_path, "climate", config, [])
        wf = Workflow(tmp_path / "wf")
        wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    finally:
        server.shutdown()
    results = wf.root / "results" / config["sweep"]
    rows = pd.read_parquet(results / "measurements.parquet")
    replayed = rows[rows["case"] == "trace"]
    assert len(replayed) and (replayed["fs_type"] == "s3").all() and (replayed["latency_ms"] == 20).all()
    # a replay opens its store once, by its first read (the open's requests among that read's)
    first = replayed[replayed["reads_since_open"] == 0]
    assert len(first) and (first["requests"] >= first["open_requests"]).all() and (first["open_requests"] >= 1).all()
    assert (replayed.groupby(["backend", "layout_id", "read_option"])["requests"].sum() >= 1).all()
    # every store of the grid replayed: HDF5's in each S3 read, Zarr's at each concurrency
    options = replayed.groupby("backend")["read_option"].nunique().to_dict()
    assert options == {"hdf5": 2, "zarr": 2}
    assert (results / "decision.md").read_text().startswith("# Decision: climate-cloud\n")
