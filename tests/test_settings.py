"""Each job's settings: exactly what it uses, rebuilt on the job's side without the config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from h5sweep.sweep import settings as job_settings
from h5sweep.sweep.model import load_sweep
from h5sweep.sweep.settings import JobSettings

REPO = Path(__file__).resolve().parents[1]


def _sweep(tmp_path):
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["chunk_cache"] = [{"bytes": 2**20, "slots": 521, "w0": 0.75}, {"bytes": 2**22, "slots": 1009, "w0": 1.0}]
    return load_sweep(config)


def test_each_job_gets_the_settings_it_uses_and_no_others(tmp_path):
    sweep = _sweep(tmp_path)
    fs = sweep.filesystems[0]
    generate = job_settings.generate_settings(sweep, fs, "hdf5", "chunked-3x7x100", "gzip-1")
    query = job_settings.query_settings(sweep, fs, "hdf5", "chunked-3x7x100", "gzip-1")
    assert set(generate["cases"]) == {"write"} and len(generate["chunk_cache"]) == 1  # writes with the first
    assert set(query["cases"]) == {"slice", "spectra", "subcube"} and len(query["chunk_cache"]) == 2
    assert "score" not in query and "filesystems" not in query and query["layout"]["name"] == "odd"


def test_a_job_rebuilds_its_store_and_cases_from_its_settings_alone(tmp_path):
    sweep = _sweep(tmp_path)
    settings = job_settings.query_settings(sweep, sweep.filesystems[0], "hdf5", "chunked-3x7x100", "gzip-1")
    job = JobSettings(yaml.safe_load(yaml.safe_dump(settings)))  # as a cluster job receives it
    assert job.layout == sweep.layout("chunked-3x7x100") and job.layout.name == "odd"
    assert job.compression.name == "gzip-1" and job.shape == sweep.shape and job.dtype == sweep.dtype
    assert [c.name for c in job.read_cases] == [c.name for c in sweep.read_cases]
    assert job.chunk_caches == sweep.chunk_caches
    columns = job.store_columns()
    assert (columns["backend"], columns["layout_id"], columns["layout_name"]) == ("hdf5", "chunked-3x7x100", "odd")
    other = job_settings.query_settings(sweep, sweep.filesystems[0], "hdf5", "chunked-2x2x64", "gzip-1")
    assert JobSettings(other).hash != job.hash


def test_targets_and_figures_come_from_the_case_specs(tmp_path):
    """Each case declares its scope, record and figures; the workflow's targets are theirs."""
    from h5sweep.cases import CASE_SPECS, VARIANT_COLUMNS
    from h5sweep.kit.spec import CaseSpec

    sweep = _sweep(tmp_path)
    enabled = [spec.name for spec in CASE_SPECS if spec.enabled(sweep)]
    assert enabled == ["write", "read"]  # tiny.yaml: no scaling, metadata or I/O size
    read = next(spec for spec in CASE_SPECS if spec.name == "read")
    figures = read.figures(sweep)
    assert "bars-slice-{filesystem}" in figures and "score-{filesystem}" in figures
    assert "variants-slice-{filesystem}" in figures  # two chunk caches: a variant figure per case
    assert {"policy", "cold_mode", "processes", "request_bytes"} <= set(VARIANT_COLUMNS)
    with pytest.raises(ValueError, match="scope must be one of"):
        CaseSpec("x", "node", "x", (), lambda s: True, lambda s: [], lambda s, w, d: (0, 0))
    with pytest.raises(ValueError, match="records as its name and declares mem_mb"):
        CaseSpec("x", "store", "y", (), lambda s: True, lambda s: [], lambda s, w, d: (0, 0), runner="m:f")


def test_the_values_are_made_once_for_every_stores_write_and_removed_by_the_aggregate(tmp_path, monkeypatch):
    import h5py
    import numpy as np

    from h5sweep import backends
    from h5sweep.storage.datasources import SyntheticSource, make_source
    from h5sweep.sweep import stages

    sweep = _sweep(tmp_path)
    fs = sweep.filesystems[0]
    made = []
    materialize = SyntheticSource.materialize
    monkeypatch.setattr(SyntheticSource, "materialize", lambda self: made.append(1) or materialize(self))
    results = tmp_path / "results" / sweep.name
    stores = [("hdf5", "contiguous", "none"), ("hdf5", "chunked-3x7x100", "gzip-1")]
    for name in stores:
        record = results / "raw" / fs.name / "-".join(name) / "write.parquet"
        stages.run_generate(
            job_settings.generate_settings(sweep, fs, *name),
            backends.store_path(fs.directory, sweep.name, *name),
            str(record),
        )
    assert len(made) == 1  # the first job made them, the second read them
    kept = list((results / "data").glob("values-*.npy"))
    job = JobSettings(job_settings.generate_settings(sweep, fs, *stores[0]))
    assert len(kept) == 1 and str(kept[0]) == stages.values_cache(job, str(record))
    expected = make_source(sweep.dataset, sweep.layout("contiguous")).materialize()
    for name in stores:
        with h5py.File(backends.store_path(fs.directory, sweep.name, *name), "r") as f:
            assert np.array_equal(f["data"][...], expected)
    other = JobSettings({**job.settings, "dataset": {**sweep.dataset, "seed": sweep.dataset["seed"] + 1}})
    assert stages.values_cache(other, str(record)) != str(kept[0])  # other settings, other values
    assert stages.values_cache(job, str(tmp_path / "elsewhere.parquet")) is None  # not under a sweep's results
    stages.remove_values_cache(str(results))
    assert not (results / "data").exists()
