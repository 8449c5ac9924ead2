"""The sweep through `--profile profiles/slurm` on a real SLURM controller and node.

`.ci/run` starts the single-node cluster (tests/slurm/local-cluster.sh start); in CI these
tests must run, elsewhere they are skipped when no cluster answers.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, Workflow, interrupt, tiny_config
from test_workflow import snakemake_incomplete

pytestmark = pytest.mark.slurm

CLUSTER = REPO / "tests" / "slurm" / "local-cluster.sh"
JOBCOMP = Path(os.environ.get("H5SWEEP_SLURM_STATE", "/var/lib/h5sweep-slurm")) / "jobcomp.log"
# The test cluster has no accounting database: status comes from squeue, checked early.
TEST_CLUSTER_ARGS = ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2"]


@pytest.fixture(scope="session")
def cluster():
    ok = subprocess.run(["bash", str(CLUSTER), "status"], capture_output=True).returncode == 0
    if not ok:
        reason = "no SLURM cluster answers (start one with tests/slurm/local-cluster.sh start)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"SLURM tests must run in CI: {reason}")
        pytest.skip(reason)


def test_the_test_cluster_is_the_one_answering(cluster):
    """The SLURM tests read this cluster's own job-completion log: they must talk to it."""
    name = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True).stdout
    assert re.search(r"^ClusterName\s*=\s*h5sweep-test$", name, re.M)


def test_the_cluster_script_refuses_a_slurm_configuration_it_did_not_write(cluster, tmp_path):
    site = tmp_path / "slurm.conf"
    site.write_text("ClusterName=site\nSlurmctldHost=somewhere\n")
    env = {**os.environ, "H5SWEEP_SLURM_CONF": str(site)}
    for action in ("start", "stop"):
        proc = subprocess.run(["bash", str(CLUSTER), action], capture_output=True, text=True, env=env)
        assert proc.returncode == 3 and f"refusing to {action}" in proc.stderr and str(site) in proc.stderr
    assert site.read_text() == "ClusterName=site\nSlurmctldHost=somewhere\n"
    assert subprocess.run(["bash", str(CLUSTER), "status"]).returncode == 0  # ours still runs


def test_without_accounting_the_shipped_profile_says_what_to_add_before_submitting(cluster, tmp_path):
    """The test cluster keeps no accounting, like many small clusters: with the profile as
    shipped (status from sacct) the sweep stops before submitting and names the fix."""
    wf = Workflow(tmp_path / "wf")
    cfg = wf.write_config(slurm_config(tmp_path, "noacct"))
    before = set(jobcomp())
    proc = wf.run("--profile", "profiles/slurm", "--configfile", str(cfg), timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "keeps no job accounting" in output and "slurm-status-command: squeue" in output
    assert set(jobcomp()) == before  # nothing was submitted
    assert not (wf.root / "results" / "noacct" / "raw").exists()


def slurm_config(tmp: Path, sweep: str, slice_repeats: int = 6) -> dict:
    config = tiny_config(tmp, sweep=sweep)
    config["filesystems"] = {"disk": str(tmp / "disk")}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [2, 5], "z": [64]}, "shapes": []}
    config["cases"]["slice"]["repeats"] = slice_repeats
    # each store's writes all in its own job: a filesystem's write race would join its stores
    # into one allocation (as interleave does), and these tests check one allocation per store
    config["cases"]["write"] = {**config["cases"]["write"], "race": False}
    return config


def jobcomp() -> dict[str, dict]:
    """SLURM's own record of finished jobs: {job id: fields}."""
    records = {}
    if JOBCOMP.exists():
        for line in JOBCOMP.read_text().splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "JobId" in fields:
                records[fields["JobId"]] = fields
    return records


def slurm_run(wf: Workflow, cfg: Path, *extra: str) -> subprocess.CompletedProcess:
    return wf.run("--profile", "profiles/slurm", "--configfile", str(cfg), *TEST_CLUSTER_ARGS, *extra, timeout=900)


def slurm_popen(wf: Workflow, cfg: Path) -> subprocess.Popen:
    return wf.popen("--profile", "profiles/slurm", "--configfile", str(cfg), *TEST_CLUSTER_ARGS)


def test_the_sweep_runs_as_slurm_jobs_and_matches_a_local_run(cluster, tmp_path):
    wf = Workflow(tmp_path / "wf")
    cfg = wf.write_config(slurm_config(tmp_path, "onslurm"))
    proc = slurm_run(wf, cfg)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    measured = pd.read_parquet(wf.root / "results" / "onslurm" / "measurements.parquet")
    files = measured.groupby(["layout_id", "compression"])["slurm_job_id"]
    # every generate and query row ran inside a SLURM job, one allocation per file
    assert (measured["slurm_job_id"] != "").all()
    assert (files.nunique() == 1).all()
    job_ids = set(measured["slurm_job_id"])
    assert len(job_ids) == len(files) == 1 + 2 * 2
    records = jobcomp()
    for job_id in job_ids:
        assert records[job_id]["JobState"] == "COMPLETED"
        assert records[job_id]["WorkDir"] == str(wf.root)
        assert records[job_id]["Name"].startswith("h5sweep_")

    local_root = tmp_path / "local"
    local = Workflow(local_root / "wf")
    local_cfg = local.write_config(slurm_config(local_root, "onslurm"))
    local.run("--cores", "2", "--configfile", str(local_cfg), check=True)
    keys = ["filesystem", "layout", "chunk_shape", "compression", "case"]
    columns = [*keys, "repeats", "bytes_selected", "raw_bytes", "file_bytes"]
    on_slurm = pd.read_csv(wf.root / "results/onslurm/summary.csv", keep_default_na=False)[columns]
    on_local = pd.read_csv(local.root / "results/onslurm/summary.csv", keep_default_na=False)[columns]
    pd.testing.assert_frame_equal(
        on_slurm.sort_values(keys).reset_index(drop=True), on_local.sort_values(keys).reset_index(drop=True)
    )


def test_an_interleaved_sweep_generates_and_reads_a_filesystem_in_one_allocation(cluster, tmp_path):
    """With interleave: true a filesystem's stores and their interleaved query form one group:
    one sbatch, so node-local stores are read where they were written and every layout is
    read on the same node; Zarr's directory stores too."""
    wf = Workflow(tmp_path / "wf")
    config = slurm_config(tmp_path, "interleaved", slice_repeats=3)
    config["interleave"] = True
    config["backends"] = ["hdf5", "zarr"]
    config["layouts"]["chunks"]["xy"] = [5]  # 2 x 2 x 64 would be 4,700 files per Zarr store
    config["cases"]["write"].pop("race")  # writes race too, in the same allocation
    proc = slurm_run(wf, wf.write_config(config))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    measured = pd.read_parquet(wf.root / "results" / "interleaved" / "measurements.parquet")
    (job_id,) = set(measured["slurm_job_id"])  # writes, the write race and reads of every store: one job
    writes = measured[measured["case"] == "write"]
    assert len(writes) > writes.groupby(["backend", "layout_id", "compression"]).ngroups  # the race wrote more
    assert jobcomp()[job_id]["JobState"] == "COMPLETED"
    reads = measured[measured["case"] != "write"]
    # HDF5's 3 stores and Zarr's 2 (no contiguous) in one pass, Zarr's each with both readers
    assert set(reads["interleaved_stores"]) == {1 + 2 + 2 * 2}
    assert set(reads.loc[reads["backend"] == "zarr", "reader"]) == {"zarr-python", "tensorstore"}
    assert not list(Path(config["filesystems"]["disk"]).rglob("*.zarr"))  # temp stores removed


@pytest.mark.skipif(not (REPO / ".venv-mpi" / "bin" / "python").exists(), reason="no .venv-mpi: make install-mpi")
def test_the_parallel_case_launches_its_ranks_with_srun_inside_the_job(cluster, tmp_path):
    """One multi-task SLURM job per test file (2 tasks, apart from the store's generation);
    inside it each MPI run starts its ranks with ``srun --mpi=pmix`` (PMIx, as Debian's Open
    MPI), 1 and 2 ranks, and every read and write pass covers the whole image once. Ranks per
    node and MPI-IO hints reach the allocation (--ntasks-per-node) and the files, and are
    recorded."""
    import yaml

    wf = Workflow(tmp_path / "wf")
    config = yaml.safe_load((REPO / "tests" / "configs" / "parallel.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["backends"] = ["hdf5"]
    config["cases"]["parallel"].update(repeats=1, tasks_per_node=2, hints={"romio_cb_read": "enable"})
    proc = slurm_run(wf, wf.write_config(config))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    measured = pd.read_parquet(wf.root / "results" / "parallel" / "measurements.parquet")
    runs = measured[measured["case"] == "parallel"]
    assert set(runs["processes"]) == {1, 2} and runs["verified"].all()
    assert set(runs["operation"]) == {"read", "write"}
    columns = config["dataset"]["shape"][1]
    assert (runs["units_accessed"] == columns).all() and (runs["bytes_selected"] == 2 * 256 * columns).all()
    assert set(runs["hdf5_version"]) == {"1.10.8"}
    for job_id in set(runs["slurm_job_id"]):  # one job per test file, completed
        assert job_id and jobcomp()[job_id]["JobState"] == "COMPLETED"
    assert len(set(runs["slurm_job_id"])) == 2  # contiguous and column chunks
    assert set(runs["slurm_tasks"]) == {"2"} and set(runs["rank_nodes"]) == {1}
    assert set(runs["tasks_per_node"]) == {2} and set(runs["mpi_hints"]) == {"romio_cb_read=enable"}
    parallel_modes = runs[runs["mode"] != "serial"]
    assert set(parallel_modes["mpi_hints_in_effect"]) == {"romio_cb_read=enable"}
    others = set(measured[measured["case"] != "parallel"]["slurm_job_id"])
    assert not others & set(runs["slurm_job_id"])  # generation and serial queries ran elsewhere


@pytest.mark.skipif(not (REPO / ".venv-mpi" / "bin" / "python").exists(), reason="no .venv-mpi: make install-mpi")
def test_the_teragrid_config_runs_through_slurm_and_draws_the_studies_figures(cluster, tmp_path):
    """config/studies/folk-choi/origdoq.yaml (Folk & Choi's ORIGDOQ image) as shipped but for its
    filesystem (moved into the test's directory), 2 repeats and 800 of its 7,639 rows (the
    passes cover its 6,308 columns as the study does: 525 per access, 1 per access, 13 column
    chunks the last of 8): every pass of both layouts in 2-task allocations, and the study's
    figures (bandwidth per mode, mode ratios, 525 against 1 column, chunked against
    contiguous)."""
    import yaml

    wf = Workflow(tmp_path / "wf")
    config = yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "origdoq.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["cases"]["parallel"]["repeats"] = repeats = 2  # of the study's 6
    rows = 800  # each pass over the whole image is minutes on this machine's 2 cores
    config["dataset"]["shape"][0] = rows
    config["layouts"]["shapes"][0]["chunk"][0] = rows
    proc = slurm_run(wf, wf.write_config(config, "teragrid.yaml"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = wf.root / "results" / "teragrid"
    runs = pd.read_parquet(results / "measurements.parquet").query("case == 'parallel'")
    assert set(runs["slurm_tasks"]) == {"2"} and runs["verified"].all()
    assert (runs["units_accessed"] == 6308).all() and (runs["bytes_selected"] == rows * 6308).all()
    passes = set(zip(runs["layout"], runs["operation"], runs["units_per_access"], strict=True))
    assert passes == {
        ("contiguous", "read", 525),
        ("contiguous", "write", 525),
        ("chunked", "read", 1),
        ("chunked", "read", 525),
        ("chunked", "write", 525),
    }
    assert len(runs) == repeats * 5 * (2 + 3)  # repeats x modes over both runs x (contiguous + chunked passes)
    for name in ("parallel", "parallel-modes", "parallel-units", "parallel-layouts"):
        assert (results / "plots" / f"{name}-disk.png").stat().st_size > 10_000, name


def _running_job(timeout: float = 300) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-t", "R", "-o", "%i %j"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            job_id, name = line.split()
            if name.startswith("h5sweep_"):
                return job_id
        time.sleep(0.5)
    raise AssertionError("no h5sweep job started running")


def test_a_cancelled_job_is_resubmitted_and_the_sweep_completes(cluster, tmp_path):
    wf = Workflow(tmp_path / "wf")
    cfg = wf.write_config(slurm_config(tmp_path, "cancelled", slice_repeats=300))
    proc = slurm_popen(wf, cfg)
    victim = _running_job()
    time.sleep(1)
    subprocess.run(["scancel", victim], check=True)
    output, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, output[-3000:]
    assert jobcomp()[victim]["JobState"] == "CANCELLED"
    measured = pd.read_parquet(wf.root / "results" / "cancelled" / "measurements.parquet")
    assert victim not in set(measured["slurm_job_id"])
    assert measured.groupby(["layout_id", "compression"]).ngroups == 5
    # Snakemake's words for a retry: "Trying to restart job ..." (and "attempt" in some versions' job info)
    assert any(word in output.lower() for word in ("restart", "attempt", "retry", "resubmit"))


def finished_queries(root: Path, raw: Path) -> list[Path]:
    if not raw.exists():
        return []
    unfinished = snakemake_incomplete(root)
    return [p for p in raw.rglob("query.parquet") if p not in unfinished]


def test_an_interrupted_slurm_sweep_resumes_without_resubmitting_finished_work(cluster, tmp_path):
    wf = Workflow(tmp_path / "wf")
    cfg = wf.write_config(slurm_config(tmp_path, "resumed", slice_repeats=100))
    raw = wf.root / "results" / "resumed" / "raw"
    proc = slurm_popen(wf, cfg)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while not any("(Rule: query)" in line and "Finished" in line for line in list(lines)):
        assert time.monotonic() < deadline and proc.poll() is None, "no file was finished"
        time.sleep(0.5)
    # Ctrl-C: Snakemake cancels its SLURM jobs and stops
    interrupt(proc, stopping=lambda: any("Terminating processes" in line for line in list(lines)))
    reader.join(timeout=10)
    assert proc.returncode != 0
    # cancelled jobs leave the queue once SLURM has finished cancelling (state COMPLETING)
    deadline = time.monotonic() + 60
    while "h5sweep_" in (
        ours := subprocess.run(["squeue", "-h", "-o", "%j %T"], capture_output=True, text=True).stdout
    ):
        assert time.monotonic() < deadline, f"jobs were left in the queue: {ours}"
        time.sleep(1)
    done = {p: p.stat().st_mtime_ns for p in finished_queries(wf.root, raw)}
    assert done
    before = set(jobcomp())
    proc = slurm_run(wf, cfg)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for path, mtime in done.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was redone"
    new_jobs = set(jobcomp()) - before
    measured = pd.read_parquet(wf.root / "results" / "resumed" / "measurements.parquet")
    assert measured.groupby(["layout_id", "compression"]).ngroups == 5
    assert len(new_jobs) == 5 - len(done)


def test_a_job_that_keeps_failing_leaves_the_rest_going_and_is_reported(cluster, tmp_path):
    wf = Workflow(tmp_path / "wf")
    config = slurm_config(tmp_path, "failing")
    cfg = wf.write_config(config)
    # A storage fault: one file is corrupted after it was written, so its query fails on
    # every attempt (the retries do not regenerate a file that exists).
    # written on the cluster (locally one job would write and read it)
    target = "results/failing/raw/disk/hdf5/chunked-2x2x64/none/write.parquet"
    written = slurm_run(wf, cfg, target, "--notemp")
    assert written.returncode == 0, written.stdout[-3000:] + written.stderr[-3000:]
    from h5sweep.cases import read_cases_from_config

    shape = tuple(config["dataset"]["shape"])
    z0 = read_cases_from_config(config["cases"], shape)[0].selections(shape, config["dataset"]["seed"])[0].start[2]
    import h5py

    with h5py.File(tmp_path / "disk" / "failing" / "chunked-2x2x64" / "none.hdf5", "r+") as f:
        f["data"][1, 1, z0] += 1
    proc = slurm_run(wf, cfg)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "values differ from the data source" in output
    assert re.search(
        r"Error in rule query.*?wildcards: filesystem=disk, backend=hdf5, layout=chunked-2x2x64, compression=none",
        output,
        re.S,
    )
    raw = wf.root / "results" / "failing" / "raw" / "disk" / "hdf5"
    finished = {p.parent.relative_to(raw).as_posix() for p in raw.rglob("query.parquet")}
    assert finished == {"contiguous/none", "chunked-2x2x64/gzip-1", "chunked-5x5x64/none", "chunked-5x5x64/gzip-1"}
    assert not (wf.root / "results" / "failing" / "summary.csv").exists()
