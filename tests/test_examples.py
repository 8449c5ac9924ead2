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

from h5sweep.trace import load

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


@pytest.mark.workflow
@pytest.mark.parametrize("example", sorted(TINY))
def test_an_example_runs_end_to_end_at_a_tiny_size(tmp_path, example):
    sizes, extra = TINY[example]
    config = _tiny(yaml.safe_load((REPO / "examples" / example / "config.yaml").read_text()), sizes)
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["figures"] = False  # a replay's figures: test_trace; every kind's: test_studies, test_generated_configs
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(yaml.safe_dump(config))
    data, recording = tmp_path / "data.h5", tmp_path / "reads.jsonl"
    subprocess.run([sys.executable, str(REPO / "examples" / "make_data.py"), str(tiny), str(data)], check=True)
    analysis = [sys.executable, str(REPO / "examples" / example / "analysis.py"), str(data), *extra]
    recorded = subprocess.run(
        [sys.executable, "-m", "h5sweep.trace", "run", "-o", str(recording), "--", *analysis],
        capture_output=True,
        text=True,
    )
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    reads = load(recording)
    assert len(reads) >= 3 and all(r["selection"] for r in reads)
    config["cases"]["trace"]["file"] = str(recording)
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
