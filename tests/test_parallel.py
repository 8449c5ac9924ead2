"""Serial, independent and collective MPI-IO reads of a 2-D image under real ``mpirun`` with
the parallel h5py of ``.venv-mpi`` (``make install-mpi``; ``.ci/run`` builds it)."""

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from h5sweep.backends.hdf5 import write_file
from h5sweep.cases.parallel_run import block_starts, rank_selection
from h5sweep.measure import pagecache
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import make_source
from h5sweep.storage.layouts import Layout

REPO = Path(__file__).resolve().parents[1]
MPI_PYTHON = REPO / ".venv-mpi" / "bin" / "python"
DATASET = {"shape": [512, 2048], "dtype": "uint16", "fill": "synthetic", "seed": 4, "name": "data"}
LAYOUTS = [Layout(None), Layout((512, 32))]  # contiguous, and column chunks (all rows x 32)

needs_mpi = pytest.mark.skipif(not MPI_PYTHON.exists(), reason="no .venv-mpi: run `make install-mpi`")


def test_every_mode_reads_the_same_block_split_among_the_ranks():
    starts = block_starts(2048, 2 * 32, 5, seed=4, k=32)
    assert starts == block_starts(2048, 2 * 32, 5, seed=4, k=32) and max(starts) <= 2048 - 64
    serial = rank_selection(512, 100, 32, 0, "serial", 2)
    parts = [rank_selection(512, 100, 32, r, "collective", 2) for r in range(2)]
    assert serial.size == (512, 64) and [p.start for p in parts] == [(0, 100), (0, 132)]
    assert sum(p.elements for p in parts) == serial.elements


def mpirun(processes: int, *args: str) -> subprocess.CompletedProcess:
    command = ["mpirun", "--oversubscribe", "-n", str(processes)]
    if os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    return subprocess.run(
        [*command, str(MPI_PYTHON), "-m", "h5sweep.cases.parallel_run", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    directory = tmp_path_factory.mktemp("parallel")
    made = {}
    for layout in LAYOUTS:
        data = make_source(DATASET, layout).materialize()
        path = str(directory / f"{layout.id}.h5")
        write_file(path, data, layout, parse_compression("none"))
        made[layout.id] = path
    return directory, made


def settings_file(directory: Path, layout: Layout, **extra) -> str:
    settings = {
        "dataset": DATASET,
        "layout": {"id": layout.id, "name": ""},
        "modes": ["serial", "independent", "collective"],
        "columns_per_access": [1, 32],
        "repeats": 3,
        **extra,
    }
    path = directory / f"settings-{layout.id}.json"
    path.write_text(json.dumps(settings))
    return str(path)


@needs_mpi
@pytest.mark.parametrize("processes", [1, 2])
def test_parallel_reads_run_under_mpirun_cold_and_checked_on_every_rank(images, processes):
    directory, made = images
    for layout in LAYOUTS:
        out = directory / f"{layout.id}-{processes}.parquet"
        pagecache.evict(made[layout.id])
        proc = mpirun(processes, settings_file(directory, layout), made[layout.id], str(out))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        rows = pd.read_parquet(out)
        assert len(rows) == 3 * 2 * 3  # modes x columns per access x repeats
        assert set(rows["processes"]) == {processes} and rows["verified"].all()
        assert set(rows["rank_nodes"]) == {1}  # every rank on this machine
        assert set(rows["hdf5_version"]) == {"1.10.8"}  # the parallel HDF5 it ran on
        # serial: only rank 0 reads, so the reduction over the reading ranks is its own read
        serial = rows[rows["mode"] == "serial"]
        assert serial["seconds"].equals(serial["fastest_rank_s"])
        ones = rows[rows["columns_per_access"] == 1]
        assert set(ones["bytes_selected"]) == {512 * processes * 2}
        # the same blocks in every mode (paired)
        by_mode = {m: list(g["selection"]) for m, g in rows.groupby("mode")}
        assert by_mode["serial"] == by_mode["independent"] == by_mode["collective"]
        # cold: every access fetched from the device
        assert (rows["device_read_bytes"] > 0).all()
        # the store was primed before its first eviction, which so freed all of it
        assert rows["resident_fraction_before_evict"].iloc[0] == 1.0
        assert (rows["resident_fraction_before_evict"] > 0).all()
        if layout.chunk_shape:  # a block of k columns touches k / 32 + 1 column chunks at most
            assert rows["chunks_touched"].between(1, 2 * processes + 1).all()


@needs_mpi
def test_a_rank_that_reads_wrong_values_fails_the_run_naming_it(images, tmp_path):
    directory, _ = images
    layout = LAYOUTS[1]
    wrong = make_source(DATASET, layout).materialize() + np.uint16(1)
    path = str(tmp_path / "wrong.h5")
    write_file(path, wrong, layout, parse_compression("none"))
    proc = mpirun(2, settings_file(directory, layout, modes=["collective"]), path, str(tmp_path / "out.parquet"))
    assert proc.returncode != 0
    assert "differ from the data source" in proc.stdout + proc.stderr and "collective with 2 processes" in (
        proc.stdout + proc.stderr
    )


@needs_mpi
@pytest.mark.workflow
def test_the_parallel_case_runs_in_the_workflow_once_per_store_and_process_count(workflow, tmp_path):
    import yaml

    config = yaml.safe_load((REPO / "tests" / "configs" / "parallel.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    path = workflow.write_config(config, "parallel.yaml")
    dry = workflow.run("--cores", "2", "--configfile", str(path), "--dry-run", check=True)
    # its own job per test file (an MPI allocation on SLURM, not grouped with generation)
    assert re.search(r"measure_mpi_case\s+2\b", dry.stdout + dry.stderr)
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    results = workflow.root / "results" / "parallel"
    measured = pd.read_parquet(results / "measurements.parquet")
    runs = measured[measured["case"] == "parallel"]
    assert set(runs["layout_id"]) == {"contiguous", "chunked-512x32"}
    assert len(runs) == 2 * 2 * 3 * 2 * 3  # layouts x processes x modes x k x repeats
    assert set(runs["slurm_tasks"]) == {""}  # not in a SLURM allocation
    # each MPI run inside one timed window of its own: one per store and process count
    assert runs.groupby(["layout_id", "processes"])["window_opened_at"].nunique().eq(1).all()
    assert runs["window_opened_at"].nunique() == 2 * 2 and (runs["window_wait_s"] >= 0).all()
    assert set(runs["hdf5_version"]) == {"1.10.8"}  # the MPI run's, not the job's own HDF5
    assert set(measured[measured["case"] == "column"]["hdf5_version"]) != {"1.10.8"}
    summary = pd.read_parquet(results / "summary.parquet")
    rows = summary[summary["case"] == "parallel"]
    assert set(zip(rows["mode"], rows["processes"], rows["columns_per_access"], strict=True)) == {
        (m, p, k) for m in ("serial", "independent", "collective") for p in (1, 2) for k in (1, 32)
    }
    assert (results / "plots" / "parallel-disk.png").stat().st_size > 10_000
    assert "## MPI-IO reads" in (results / "recommendation.md").read_text()


@pytest.mark.parametrize(
    "changes, key, reason",
    [
        ({"env": "/nonexistent/python"}, "cases.parallel", "make install-mpi"),
        ({"parallel": {"columns_per_access": [1500]}}, "cases.parallel.columns_per_access[0]", "must fit the 2048"),
        ({"parallel": {"modes": ["async"]}}, "cases.parallel.modes[0]", "unknown mode"),
        ({"shape": [64, 64, 512]}, "cases.parallel", "[rows, columns] (2-D) datasets only"),
    ],
)
def test_a_parallel_case_that_cannot_run_is_refused_before_any_job(monkeypatch, changes, key, reason):
    import sys

    import yaml

    from h5sweep.errors import ConfigError
    from h5sweep.sweep.model import load_sweep

    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", changes.get("env", sys.executable))
    config = yaml.safe_load((REPO / "tests" / "configs" / "parallel.yaml").read_text())
    config["cases"]["parallel"].update(changes.get("parallel", {}))
    if "shape" in changes:
        config["dataset"]["shape"] = changes["shape"]
        config["cases"] = {"write": {}, "parallel": config["cases"]["parallel"]}
        config["layouts"] = {"contiguous": True}
    with pytest.raises(ConfigError) as err:
        load_sweep(config, probe=False)
    assert key in str(err.value) and reason in str(err.value)


@needs_mpi
@pytest.mark.workflow
def test_the_study_size_config_plans_one_twelve_task_allocation_per_test_file(workflow):
    """config/teragrid-cluster.yaml: each test file's MPI job asks SLURM for 12 tasks of one CPU
    and one rank's memory (the resources the SLURM plugin turns into --ntasks, --cpus-per-task
    and --mem-per-cpu), apart from the generation; the contiguous file's job gets more time
    (a cold column of a contiguous image spans the whole 1 GiB file)."""
    dry = workflow.run("-n", "--configfile", "config/teragrid-cluster.yaml", check=True).stdout
    jobs = [block for block in dry.split("rule ")[1:] if block.startswith("measure_mpi_case:")]
    assert len(jobs) == 2
    runtime = {}
    for block in jobs:
        fields = dict(re.findall(r"\b(\w+)=([^,\s]+)", block.split("resources:")[1].splitlines()[0]))
        assert (fields["tasks"], fields["cpus_per_task"], fields["mpi"]) == ("12", "1", "srun")
        assert int(fields["mem_mb_per_cpu"]) * 12 <= int(fields["mem_mb"]) + 12
        assert int(fields["mem_mb_per_cpu"]) > 16384 * 525 * 12 * 2 * 3 / 1e6  # rank 0's serial block, 3 copies
        layout = re.search(r"wildcards: .*\blayout=([^,\s]+)", block).group(1)  # this job's own line
        runtime["contiguous" if layout == "contiguous" else "chunked"] = int(fields["runtime"])
    assert runtime["contiguous"] > runtime["chunked"]
