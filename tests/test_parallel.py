"""Parallel passes: P ranks read and write the whole dataset, HDF5 (parallel HDF5 through
MPI-IO) and Zarr (each rank its own chunk files), under real ``mpirun`` with the parallel h5py
of ``.venv-mpi`` (``make install-mpi``; ``.ci/run`` builds it)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml

from h5sweep import backends
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases import parallel
from h5sweep.cases.parallel import accesses, deal, mpi, passes, remainder_rank, runner
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import make_source
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import load_sweep

REPO = Path(__file__).resolve().parents[1]
MPI_PYTHON = REPO / ".venv-mpi" / "bin" / "python"
DATASET = {"shape": [96, 1000], "dtype": "uint8", "fill": "synthetic", "seed": 4, "name": "data"}
CHUNKED = Layout((96, 100))

needs_mpi = pytest.mark.skipif(not MPI_PYTHON.exists(), reason="no .venv-mpi: run `make install-mpi`")


def test_the_study_deals_contiguous_blocks_and_the_remainder_to_the_last_or_first_rank():
    # ORIGDOQ: 6,308 columns in accesses of 525 are 12 full accesses and one of 8 columns
    assert accesses(6308, 525)[-2:] == [(11 * 525, 525), (12 * 525, 8)]
    independent = deal(6308, 525, 5, "independent")
    assert [len(p) for p in independent] == [2, 2, 2, 2, 2 + 2 + 1]  # 12 // 5 = 2 each, the rest last
    collective = deal(6308, 525, 5, "collective")
    assert [len(p) for p in collective] == [2 + 2 + 1, 2, 2, 2, 2]  # the rest to rank 0
    assert collective[0][-3:] == [(10 * 525, 525), (11 * 525, 525), (12 * 525, 8)]
    assert deal(6308, 525, 5, "collective", "last") == independent
    assert deal(6308, 525, 5, "independent", "first") == collective
    assert [len(p) for p in deal(6308, 525, 3, "serial")] == [13, 0, 0]
    assert remainder_rank("independent", "study", 4) == 3 and remainder_rank("collective", "study", 4) == 0
    for mode in ("serial", "independent", "collective"):
        for processes in (1, 2, 3, 7, 12, 20):  # more ranks than accesses: the rest take it all
            parts = deal(6308, 525, processes, mode)
            assert passes._tiles(parts, 6308) is None
            assert sum(n for part in parts for _, n in part) == 6308
    assert passes._tiles([[(0, 10)], [(5, 10)]], 15) == "unit 5 is accessed 2 times"


def test_spread_deals_every_access_in_blocks_that_differ_by_at_most_one():
    """Kang's Fig. 3 at the poster's size: 511 flushes and a short one over 64 ranks, 8 each."""
    parts = deal(35_660_170, 69_649, 64, "independent", "spread")
    assert [len(p) for p in parts] == [8] * 64
    assert parts[-1][-1] == (511 * 69_649, 69_531) and parts[1][0] == (8 * 69_649, 69_649)
    assert [len(p) for p in deal(10, 1, 4, "collective", "spread")] == [3, 3, 2, 2]


def _config(**parallel_settings) -> dict:
    config = yaml.safe_load((REPO / "tests" / "configs" / "parallel.yaml").read_text())
    config["cases"]["parallel"].update(parallel_settings)
    return config


@pytest.mark.parametrize(
    "change, key, reason",
    [
        ({"units_per_access": [1500]}, "cases.parallel.units_per_access[0]", "must be 1 to the 1024 columns"),
        ({"units": "z_slabs"}, "cases.parallel.units", "is for 3-D datasets; a 2-D one has columns"),
        ({"remainder": "middle"}, "cases.parallel.remainder", "must be one of study, first, last"),
        # 1024 columns in accesses of 512: two whole accesses, so 4 ranks leave 2 without any
        (
            {"processes": [1, 4], "units_per_access": [512]},
            "cases.parallel.processes[1]",
            "more ranks than the 2 whole accesses of 512 columns",
        ),
        # Zarr: with 2 ranks, 10 accesses of 20 columns split at column 100, inside the 4th
        # chunk of 32 columns: both ranks would write it
        ({"units_per_access": [20]}, "cases.parallel.units_per_access[0]", "two ranks would write one Zarr chunk"),
        ({"compression": ["gzip-1"]}, "cases.parallel.modes[1]", "writes a filtered dataset (gzip-1) in parallel"),
        ({"limit_s": 0}, "cases.parallel.limit_s", ""),
        ({"tasks_per_node": 0}, "cases.parallel.tasks_per_node", ""),
    ],
)
def test_a_parallel_case_that_cannot_run_is_refused_before_any_job(monkeypatch, change, key, reason):
    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", change.pop("env", sys.executable))
    config = _config()
    if "compression" in change:
        config["compression"] = ["none", *change.pop("compression")]
        config["backends"] = ["hdf5"]
    config["cases"]["parallel"].update(change)
    with pytest.raises(ConfigError) as err:
        load_sweep(config, probe=False)
    assert key in str(err.value) and reason in str(err.value)
    if "chunk" in reason:
        assert "chunk shape 256x32" in str(err.value) and "=20" in str(err.value)


@pytest.mark.workflow
def test_a_parallel_config_dry_runs_without_the_mpi_environment_and_a_run_is_refused(monkeypatch, tmp_path):
    """A fresh clone without .venv-mpi plans a parallel sweep and says what the run needs; the
    run itself stops before any job, naming the key and the command."""
    from conftest import Workflow

    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", str(tmp_path / "no-such-python"))
    config = _config()
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    wf = Workflow(tmp_path / "wf")
    path = wf.write_config(config)
    dry = wf.run("-n", "--configfile", str(path))
    assert dry.returncode == 0, dry.stderr
    said = dry.stdout + dry.stderr
    assert "measuring jobs" in said and "To run (not for a dry run): cases.parallel needs the MPI environment" in said
    run = wf.run("--cores", "2", "--configfile", str(path))
    assert run.returncode != 0 and "make install-mpi" in run.stdout + run.stderr
    assert not (wf.root / "results" / config["sweep"] / "raw").exists()


def test_filtered_writes_pass_collectively_and_reads_need_no_refusal(monkeypatch):
    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", sys.executable)
    config = _config(modes=["serial", "collective"])
    config["compression"] = ["none", "gzip-1"]
    load_sweep(config, probe=False)
    config = _config(operations=["read"])  # independent reads of a filtered dataset are fine
    config["compression"] = ["none", "gzip-1"]
    config["backends"] = ["hdf5"]
    load_sweep(config, probe=False)


def _settings(directory: Path, layout: Layout, backend: str = "hdf5", **extra) -> str:
    spec = backends.spec(backend)
    settings = {
        "dataset": DATASET,
        "layout": {"id": layout.id, "name": ""},
        "compression": "none",
        "backend": backend,
        "read_options": [o.settings() for o in spec.options_from_config({})],
        "modes": list(spec.capabilities.parallel_modes),
        "operations": ["read", "write"],
        "units": "columns",
        "units_per_access": [1, 100],
        "remainder": "study",
        "repeats": 2,
        **extra,
    }
    path = directory / f"settings-{backend}-{layout.id}.json"
    path.write_text(json.dumps(settings))
    return str(path)


def mpirun(processes: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*runner.launcher(processes), *runner.program(), *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="session")
def stores(tmp_path_factory):
    directory = tmp_path_factory.mktemp("parallel")
    made = {}
    for layout in (Layout(None), CHUNKED):
        data = make_source(DATASET, layout).materialize()
        made["hdf5", layout.id] = str(directory / f"{layout.id}.h5")
        write_file(made["hdf5", layout.id], data, layout, parse_compression("none"))
    made["zarr", CHUNKED.id] = str(directory / "chunked.zarr")
    data = make_source(DATASET, CHUNKED).materialize()
    backends.load("zarr").write_fast(made["zarr", CHUNKED.id], data, CHUNKED, parse_compression("none"), "data", 1)
    return directory, made


@pytest.mark.heavy
@needs_mpi
@pytest.mark.parametrize(
    "backend, layout, rows_units",
    [("hdf5", Layout(None), False), ("hdf5", CHUNKED, False), ("zarr", CHUNKED, False), ("hdf5", CHUNKED, True)],
    ids=["hdf5-contiguous", "hdf5-chunked", "zarr", "hdf5-rows"],
)
def test_a_pass_reads_and_writes_every_byte_once_under_mpirun(stores, tmp_path, backend, layout, rows_units):
    directory, made = stores
    out = tmp_path / "rows.parquet"
    units = {"units": "rows", "units_per_access": [1, 12]} if rows_units else {}
    proc = mpirun(2, _settings(directory, layout, backend, **units), made[backend, layout.id], str(out), "--first")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = pd.read_parquet(out)
    modes = backends.spec(backend).capabilities.parallel_modes
    readers = 2 if backend == "zarr" else 1  # zarr-python and tensorstore
    assert len(rows) == 2 * readers * 2 * 2 * len(modes)  # repeats x readers x k x operations x modes
    raw = 96 * 1000
    # counted: every pass covers each column once, the whole dataset's bytes
    along, k = (96, 12) if rows_units else (1000, 100)  # rows of [rows, columns], or columns
    assert (rows["units_accessed"] == along).all() and (rows["bytes_selected"] == raw).all()
    assert set(zip(rows["units_per_access"], rows["accesses"], strict=True)) == {(1, along), (k, along // k)}
    assert np.allclose(rows["bytes_per_s"], raw / rows["seconds"]) and rows["verified"].all()
    assert set(rows.loc[rows["mode"] == "serial", "processes"]) == {1}
    assert set(rows.loc[rows["mode"] != "serial", "processes"]) == {2}
    assert set(rows.loc[rows["mode"] == "independent", "remainder_rank"]) == {1}
    assert set(rows["rank_nodes"]) == {1}  # every rank on this machine
    reads = rows[rows["operation"] == "read"]
    assert (reads["device_read_bytes"] > 0).all()  # cold: evicted on the node before every pass
    if backend == "hdf5":
        assert set(rows["hdf5_version"]) == {"1.10.8"}  # the parallel HDF5 it ran on
        assert set(rows["mode"]) == {"serial", "independent", "collective"}
    else:
        assert set(rows["reader"]) == {"zarr-python", "tensorstore"} and "collective" not in set(rows["mode"])
    # the write passes' stores were removed after checking
    assert not list(Path(made[backend, layout.id]).parent.glob("*" + parallel.WRITE_SUFFIX))


@pytest.mark.heavy
@needs_mpi
def test_a_write_pass_leaves_the_source_values_in_a_compressed_store(stores, tmp_path):
    """A collective write pass of a gzip dataset (parallel HDF5 writes filters collectively)
    is checked by reading every rank's part back; then a read pass of the same settings."""
    directory, made = stores
    settings = _settings(directory, CHUNKED, modes=["collective"], compression="gzip-1", operations=["write"])
    out = tmp_path / "rows.parquet"
    proc = mpirun(2, settings, str(tmp_path / "gzip.h5"), str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pd.read_parquet(out)
    assert list(rows["mode"].unique()) == ["collective"] and rows["verified"].all() and len(rows) == 4


@needs_mpi
def test_a_wrong_value_fails_the_run_naming_the_rank_the_mode_and_the_access(stores, tmp_path):
    directory, made = stores
    path = tmp_path / "wrong.h5"
    path.write_bytes(Path(made["hdf5", "contiguous"]).read_bytes())
    with h5py.File(path, "r+") as f:
        f["data"][90, 950] = f["data"][90, 950] + 1  # in the last rank's part of every deal
    settings = _settings(directory, Layout(None), modes=["independent"], operations=["read"])
    proc = mpirun(2, settings, str(path), str(tmp_path / "out.parquet"))
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert re.search(r"rank 1, mode independent, read access \d+ \(columns \d+-\d+, 1 per access", said), said[-2000:]
    assert "1 values differ from the data source" in said


@needs_mpi
def test_hints_reach_the_mpi_io_driver_and_are_recorded_per_row(stores, tmp_path):
    directory, made = stores
    hints = {"romio_cb_read": "enable", "cb_buffer_size": "8388608"}
    settings = _settings(directory, CHUNKED, operations=["read"], units_per_access=[100], repeats=1, hints=hints)
    out = tmp_path / "rows.parquet"
    proc = mpirun(2, settings, made["hdf5", CHUNKED.id], str(out), "--first")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pd.read_parquet(out).set_index("mode")
    asked = "cb_buffer_size=8388608;romio_cb_read=enable"
    assert set(rows["mpi_hints"]) == {asked}
    # what HDF5's mpio driver holds: the hints it was given (serial passes open no MPI-IO file)
    assert rows.loc["independent", "mpi_hints_in_effect"] == asked == rows.loc["collective", "mpi_hints_in_effect"]
    assert rows.loc["serial", "mpi_hints_in_effect"] == ""


@pytest.mark.heavy
@needs_mpi
def test_a_pass_past_its_limit_stops_is_recorded_as_stopped_and_its_later_repeats_are_not_run(stores, tmp_path):
    """A limit shorter than one access: every rank stops after its first access (in collective
    mode, all at the same call); what they read or wrote is still checked."""
    directory, made = stores
    settings = _settings(directory, Layout(None), units_per_access=[1], repeats=3, limit_s=1e-9)
    out = tmp_path / "rows.parquet"
    proc = mpirun(2, settings, made["hdf5", "contiguous"], str(out), "--first")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pd.read_parquet(out)
    assert len(rows) == 2 * 3 and set(rows["repeat"]) == {0}  # read and write, 3 modes; repeats 1-2 not run
    assert rows["stopped"].all() and rows["bytes_per_s"].isna().all() and set(rows["limit_s"]) == {1e-9}
    made_accesses = rows.set_index(["operation", "mode"])["units_accessed"].to_dict()
    for operation in ("read", "write"):
        assert made_accesses[operation, "serial"] == 1
        assert made_accesses[operation, "independent"] == 2 == made_accesses[operation, "collective"]
    assert rows["verified"].all()


@pytest.mark.heavy
@needs_mpi
def test_a_run_appends_each_pass_to_its_checkpoint_and_skips_the_passes_it_holds(stores, tmp_path):
    directory, made = stores
    checkpoint = tmp_path / "passes.jsonl"
    fresh = mpi.Checkpoint(str(checkpoint), "fingerprint")
    assert not fresh.passes and checkpoint.read_text().count("\n") == 1
    settings = json.loads(Path(_settings(directory, CHUNKED, operations=["read"], repeats=2)).read_text())
    settings["checkpoint"] = str(checkpoint)
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    proc = mpirun(2, str(path), made["hdf5", CHUNKED.id], str(tmp_path / "first.parquet"), "--first")
    assert proc.returncode == 0, proc.stderr[-2000:]
    planned = [key for key, _ in mpi.planned(settings, 2, True)]
    assert len(planned) == 2 * 2 * 3  # repeats x k x modes
    # a kill after three passes, with the fourth's line cut short
    lines = checkpoint.read_text().splitlines()
    assert len(lines) == 1 + len(planned)
    checkpoint.write_text("\n".join(lines[:4]) + "\n" + lines[4][:40])
    kept = mpi.Checkpoint(str(checkpoint), "fingerprint")
    assert list(kept.passes) == planned[:3]
    settings["done"] = sorted(kept.passes)
    path.write_text(json.dumps(settings))
    proc = mpirun(2, str(path), made["hdf5", CHUNKED.id], str(tmp_path / "rest.parquet"), "--first")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(pd.read_parquet(tmp_path / "rest.parquet")) == len(planned) - 3
    resumed = mpi.Checkpoint(str(checkpoint), "fingerprint")
    assert list(resumed.passes) == planned[:3] + planned[3:]
    # other settings: started afresh
    assert not mpi.Checkpoint(str(checkpoint), "other settings").passes


def _run_config(workflow, tmp_path, name: str, figures: bool = False, shape=None, **changes) -> Path:
    config = yaml.safe_load((REPO / "tests" / "configs" / name).read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"]["shape"] = shape or config["dataset"]["shape"]
    config["figures"] = figures
    config["cases"]["parallel"].update(changes)
    path = workflow.write_config(config, name)
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    return workflow.root / "results" / config["sweep"]


@needs_mpi
@pytest.mark.workflow
def test_the_passes_run_in_the_workflow_for_hdf5_and_zarr_and_draw_the_studies_figures(workflow, tmp_path):
    # 256 of the config's 1024 columns: Zarr's column-at-a-time writes take most of the run
    results = _run_config(workflow, tmp_path, "parallel.yaml", figures=True, shape=[256, 256])
    measured = pd.read_parquet(results / "measurements.parquet")
    runs = measured[measured["case"] == "parallel"]
    # HDF5: contiguous and chunked; Zarr: chunked (zarr-python, tensorstore)
    stores = set(zip(runs["backend"], runs["layout_id"], strict=True))
    assert stores == {("hdf5", "contiguous"), ("hdf5", "chunked-256x32"), ("zarr", "chunked-256x32")}
    assert set(runs["slurm_tasks"]) == {""}  # not in a SLURM allocation
    # one MPI run per store and process count, each in one timed window of its own
    assert runs["window_opened_at"].nunique() == 3 * 2
    assert set(runs.loc[runs["backend"] == "hdf5", "hdf5_version"]) == {"1.10.8"}
    summary = pd.read_parquet(results / "summary.parquet")
    rows = summary[summary["case"] == "parallel"]
    for column in ("operation", "mode", "processes", "units_per_access", "bytes_per_s_max", "bytes_per_s_median"):
        assert rows[column].notna().all(), column
    assert (rows["bytes_per_s_ci_low"] <= rows["bytes_per_s_median"]).all()
    assert (rows["bytes_per_s_max"] >= rows["bytes_per_s_median"]).all()
    assert set(rows["operation"]) == {"read", "write"}
    for name in ("parallel", "parallel-modes", "parallel-units", "parallel-layouts", "parallel-backends"):
        assert (results / "plots" / f"{name}-disk.png").stat().st_size > 10_000, name
    recommendation = (results / "recommendation.md").read_text()
    assert "## Parallel passes (cases.parallel)" in recommendation
    rate = r"[0-9.]+ [kMGT]B/s"
    assert re.search(rf"- disk, read, P = 2, 32 per access: .* {rate} \({rate}-{rate}; best {rate}\)", recommendation)
    assert "nothing to rank" not in recommendation
    # the report: every parallel figure has its caption
    workflow.run("--configfile", "parallel.yaml", "--report", str(results / "report.html"), check=True)
    assert (results / "report.html").stat().st_size > 100_000
    assert re.search(r"- disk, write, P = 2, 1 per access: ", recommendation)
    assert "the MPI build of .venv-mpi" in recommendation  # the serial column reads ran on HDF5 2.0


def _ranks_of(root: Path) -> list[int]:
    """The MPI ranks of the parallel passes running in the workflow at ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if entry.name.isdigit() and "mpi.main" in command and str(root) in command:
                found.append(int(entry.name))
        except OSError:  # ended meanwhile
            continue
    return found


@needs_mpi
@pytest.mark.workflow
def test_a_killed_mpi_job_loses_at_most_its_pass_and_the_rerun_runs_only_the_rest(workflow, tmp_path):
    """SIGKILL to the whole run (as an allocation's time limit ends it) once the MPI job has
    finished a few passes; after --unlock, the rerun keeps those passes' rows as measured and
    runs only the others."""
    import signal
    import time

    config = yaml.safe_load((REPO / "tests" / "configs" / "parallel.yaml").read_text())
    config.update(sweep="killed-mpi", backends=["hdf5"], filesystems={"disk": str(tmp_path / "disk")}, figures=False)
    config["layouts"] = {"contiguous": True, "shapes": []}
    config["cases"] = {
        "write": {"repeats": 1},
        "parallel": {"processes": [1, 2], "units_per_access": [1], "operations": ["read"], "repeats": 8},
    }
    cfg = workflow.write_config(config)
    results = workflow.root / "results" / "killed-mpi"
    proc = workflow.popen("--cores", "2", "--configfile", str(cfg))
    deadline, before = time.monotonic() + 300, []
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((results / "raw").rglob("*.checkpoint.jsonl")) if (results / "raw").exists() else []
        lines = found[0].read_text().splitlines() if found else []
        if len(lines) >= 1 + 5:
            os.killpg(proc.pid, signal.SIGKILL)
            before = lines
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    assert before, f"the MPI job was not caught running:\n{proc.stdout.read()[-3000:]}"
    while time.monotonic() < deadline and _ranks_of(tmp_path):  # they end with their launcher
        time.sleep(0.1)
    assert not _ranks_of(tmp_path)
    checkpoint = next((results / "raw").rglob("*.checkpoint.jsonl"))
    kept = mpi.Checkpoint(str(checkpoint), json.loads(before[0])["fingerprint"]).passes
    assert len(kept) >= 5 and len(kept) < 3 * 8 + 2 * 8
    workflow.run("--unlock", "--configfile", str(cfg), check=True)
    workflow.run("--cores", "2", "--configfile", str(cfg), "--rerun-incomplete", check=True)
    runs = pd.read_parquet(results / "measurements.parquet").query("case == 'parallel'")
    assert len(runs) == 3 * 8 + 2 * 8  # serial once, independent and collective at P = 2; 8 repeats each
    keys = set(zip(runs["processes"], runs["mode"], runs["repeat"], strict=True))
    assert len(keys) == len(runs)  # every pass once
    measured = set(runs["seconds"])
    assert all(row["seconds"] in measured for row in kept.values())  # kept as measured, not redone
    log = next((results / "logs" / "parallel").rglob("*.log")).read_text()
    assert re.search(rf"\b{len(kept)} passes kept from an earlier attempt", log), log
    assert not list((results / "raw").rglob("*.checkpoint.jsonl"))  # removed once the record is written


@needs_mpi
@pytest.mark.workflow
@pytest.mark.parametrize("units", ["z_slabs", "x_planes"])
def test_the_passes_run_over_a_3d_cube_in_z_slabs_and_x_planes(workflow, tmp_path, units):
    changes = {"units": units} if units == "z_slabs" else {"units": units, "units_per_access": [5, 12]}
    results = _run_config(workflow, tmp_path, "parallel-3d.yaml", **changes)
    runs = pd.read_parquet(results / "measurements.parquet").query("case == 'parallel'")
    units_along = {"z_slabs": 256, "x_planes": 24}[units]
    assert set(runs["units"]) == {units} and (runs["units_accessed"] == units_along).all()
    assert set(runs["compression"]) == {"none", "gzip-1"} and runs["verified"].all()
    assert set(runs["mode"]) == {"serial", "collective"}


@needs_mpi
@pytest.mark.workflow
def test_the_study_size_config_plans_one_twelve_task_allocation_per_test_file(workflow):
    """config/studies/folk-choi/bigdoq.yaml: each test file's MPI job asks SLURM for 12 tasks of one CPU
    and one rank's memory (the resources the SLURM plugin turns into --ntasks, --cpus-per-task
    and --mem-per-cpu), apart from the generation."""
    dry = workflow.run("-n", "--configfile", "config/studies/folk-choi/bigdoq.yaml", check=True).stdout
    jobs = [block for block in dry.split("rule ")[1:] if block.startswith("measure_mpi_case:")]
    assert len(jobs) == 2
    for block in jobs:
        fields = dict(re.findall(r"\b(\w+)=([^,\s]+)", block.split("resources:")[1].splitlines()[0]))
        assert (fields["tasks"], fields["cpus_per_task"], fields["mpi"]) == ("12", "1", "srun")
        assert int(fields["mem_mb_per_cpu"]) * 12 <= int(fields["mem_mb"]) + 12
        assert int(fields["mem_mb_per_cpu"]) > 2 * 160419 * 6308 / 1e6  # serial: rank 0 holds it all, twice


def test_the_shipped_configs_are_the_studies_images(monkeypatch):
    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", sys.executable)
    orig = load_sweep(
        yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "origdoq.yaml").read_text()), probe=False
    )
    big = load_sweep(
        yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "bigdoq.yaml").read_text()), probe=False
    )
    assert (orig.shape, orig.dtype.name, big.shape, big.dtype.name) == ((7639, 6308), "uint8", (160419, 6308), "uint8")
    for sweep in (orig, big):
        chunked = [lay for lay in sweep.layouts if lay.chunk_shape]
        assert [lay.n_chunks(sweep.shape) for lay in chunked] == [13]
        assert sweep.parallel.units_per_access == [1, 525]
    assert big.parallel.processes == [1, 2, 4, 8, 12] and max(orig.parallel.processes) <= os.cpu_count()
    kang = load_sweep(yaml.safe_load((REPO / "config" / "studies" / "kang" / "parallel.yaml").read_text()), probe=False)
    assert [b.name for b in kang.backends] == ["hdf5", "zarr"] and kang.parallel.modes == ["independent"]
    # the poster's array, [time, channels], in chunks of one flush, k = one flush, P up to 64
    assert kang.shape == (35_660_170, 64) and [lay.chunk_shape for lay in kang.layouts if lay.chunk_shape] == [
        (69_649, 64)
    ]
    case = kang.parallel
    assert (case.units, case.units_per_access, max(case.processes)) == ("rows", [69_649], 64)
    assert {len(part) for part in deal(kang.shape[0], 69_649, 64, "independent", case.remainder)} == {8}


def test_the_plan_counts_the_runs_of_bytes_each_pass_touches():
    shape = (7639, 6308)
    contiguous, chunked = Layout(None), Layout((7639, 525))
    assert parallel.runs_per_pass(shape, contiguous, 1, 525) == 13 * 7639  # a run per row and access
    assert parallel.runs_per_pass(shape, contiguous, 1, 6308) == 1  # the whole image at once
    assert parallel.runs_per_pass(shape, chunked, 1, 525) == 13  # every access one whole chunk
    assert parallel.runs_per_pass(shape, chunked, 1, 1) == 6308 * 7639
    # a 3-D cube in x-planes is one run per access; in z-slabs one per spectrum and access
    assert parallel.runs_per_pass((24, 20, 256), Layout(None), 0, 5) == 5
    assert parallel.runs_per_pass((24, 20, 256), Layout(None), 2, 16) == 16 * 24 * 20


def test_units_per_access_may_differ_by_layout_kind_and_operation(monkeypatch):
    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", sys.executable)
    config = _config(units_per_access={"contiguous": [32], "chunked": [1, 32], "writes": [32]})
    sweep = load_sweep(config, probe=False)
    case = sweep.parallel
    assert case.units_for(Layout(None), "read") == [32] and case.units_for(CHUNKED, "read") == [1, 32]
    assert case.units_for(CHUNKED, "write") == [32] and case.units_per_access == [1, 32]
    config = _config(units_per_access={"chunked": [20]})
    with pytest.raises(ConfigError, match=r"cases\.parallel\.units_per_access\.chunked\[0\]=20"):
        load_sweep(config, probe=False)


def test_bigdoq_as_table_4_plans_at_most_8_hours_per_allocation():
    """config/studies/folk-choi/bigdoq.yaml: 525 columns per access for both layouts and 1 column for
    the chunked image's reads (the study's Table 4), ORIGDOQ's chunk cache: every MPI job (one
    SLURM allocation) fits a night."""
    from h5sweep.cases.parallel import SPEC

    sweep = load_sweep(
        yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "bigdoq.yaml").read_text()), probe=False
    )
    origdoq = load_sweep(
        yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "origdoq.yaml").read_text()), probe=False
    )
    assert sweep.chunk_caches == origdoq.chunk_caches
    jobs = [SPEC.job_cost(sweep, store, True)[0] for store in sweep.stores() if SPEC.runs_on(store)]
    assert len(jobs) == 2 and max(jobs) <= 8 * 3600
