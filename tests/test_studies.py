"""The studies' experiments, one config each under config/studies/: each dry-runs with its
plan, and the experiments the studies ran on one machine run end to end at a tiny size with
every figure they plan."""

import copy
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, Workflow

from h5sweep.cases import figure_names
from h5sweep.sweep.model import load_sweep

STUDIES = sorted((REPO / "config" / "studies").glob("*/*.yaml"))

# Each experiment at a tiny size: the dataset and repeats shrunk, its layouts, codecs, cases,
# variants and figures as shipped (chunk shapes shrunk only where they would exceed the data).
TINY = {
    "openmsi/compression.yaml": {
        "dataset": {"shape": [16, 16, 4096]},
        "compression": ["none", "gzip-1", "gzip-4", "gzip-8"],
        "cases": {"slice": {"repeats": 4}, "spectra": {"repeats": 4}, "subcube": {"repeats": 4, "size": [5, 5, 500]}},
    },
    "kang/hdf5-vs-zarr.yaml": {
        "dataset": {"shape": [32768, 64]},
        "layouts": {
            "shapes": [{"name": "flush_block", "chunk": [4096, 64]}, {"name": "channel_flush", "chunk": [4096, 1]}],
            "shards": [{"name": "channel_flush_sharded", "chunk": [4096, 1], "shard": [16384, 64]}],
        },
        "cases": {"whole": {"repeats": 2}, "rows": {"repeats": 4, "size": 4096}, "column": {"repeats": 4}},
    },
    "openmsi/write-strategies.yaml": {"dataset": {"shape": [32, 32, 4096]}, "cases": {"write": {"repeats": 1}}},
    "openmsi/local-scaling.yaml": {
        "dataset": {"shape": [20, 20, 4096]},
        "cases": {"scaling": {"processes": [1, 2], "repeats": 2}},
    },
    "openmsi/compression-grid.yaml": {"dataset": {"shape": [20, 20, 4096]}},
    "openmsi/image-aligned.yaml": {
        "dataset": {"shape": [16, 25, 4096]},
        "layouts": {"shapes": [{"name": "image-aligned", "chunk": [8, 5, 100]}, [4, 4, 2048]]},
        "cases": {"slice": {"repeats": 4}, "spectra": {"repeats": 4}},
    },
    "users-guide/metadata.yaml": {
        "dataset": {"shape": [20, 20, 50]},
        "cases": {"metadata": {"datasets": [1, 10, 100]}},
    },
    "users-guide/subsetting.yaml": {
        "dataset": {"shape": [400, 320]},
        "layouts": {"shapes": [{"name": "tiles", "chunk": [80, 80]}]},
        "cases": {"rows": {"repeats": 4}, "column": {"repeats": 4}},
    },
    "users-guide/chunk-cache.yaml": {
        "dataset": {"shape": [300, 840]},
        "layouts": {"shapes": [{"name": "tiles", "chunk": [30, 20]}]},
        "cases": {"boxes": [{"name": "subset_row", "size": [1, 100], "repeats": 30, "cold": "first"}]},
    },
    "io-lab/chunk-io.yaml": {
        "dataset": {"shape": [32, 32, 2048]},
        "cases": {"spectra": {"repeats": 4}, "subcube": {"repeats": 4, "size": [5, 5, 500]}},
    },
}


def _merged(base: dict, change: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_every_study_section_has_its_config_and_each_header_says_its_plan():
    assert {_name(p) for p in STUDIES} >= set(TINY)
    mapped = (REPO / "config" / "README.md").read_text()
    for path in STUDIES:
        header = path.read_text().split("\nsweep:")[0]
        assert "Planned" in header and "departure" in header.lower(), _name(path)
        assert f"studies/{path.parent.name}/" in mapped and path.name in mapped, _name(path)


@pytest.mark.workflow
@pytest.mark.parametrize("path", STUDIES, ids=_name)
def test_every_study_config_dry_runs_with_its_plan(workflow, path):
    dry = workflow.run("-n", "--configfile", str(path.relative_to(REPO)), check=True)
    assert "h5sweep plan:" in dry.stdout + dry.stderr
    assert not (workflow.root / "results" / yaml.safe_load(path.read_text())["sweep"] / "summary.csv").exists()


@pytest.mark.workflow
@pytest.mark.parametrize("name", sorted(TINY))
def test_the_experiments_run_end_to_end_at_a_tiny_size_with_their_figures(tmp_path, name):
    config = _merged(yaml.safe_load((REPO / "config" / "studies" / name).read_text()), TINY[name])
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / config["sweep"]
    summary = pd.read_parquet(results / "summary.parquet")
    assert set(summary["case"]) >= set(config["cases"]) - {"boxes"}
    sweep = load_sweep(config, probe=False)
    for figure in figure_names(sweep):
        assert (results / "plots" / f"{figure}.png").stat().st_size > 5_000, figure
    findings = pd.read_csv(results / "findings.csv")
    assert len(findings) >= 16 and (findings["verdict"] != "not measured").any()
