"""The case's runner: one MPI run per process count on one test store, each in the node's
timed window, started with mpirun or srun."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.core import mpi_python
from h5sweep.cases.parallel.mpi import Checkpoint, pass_key, planned
from h5sweep.measure import lock
from h5sweep.storage import columns as C


def launcher(processes: int, tasks_per_node: int | None = None) -> list[str]:
    """How a job starts ``processes`` ranks: ``srun --mpi=pmix`` inside a SLURM allocation
    (PMIx, as Debian's Open MPI; slurmd must have been started with the PMIx library
    installed), else ``mpirun``; at most ``tasks_per_node`` ranks on a node, where set."""
    if os.environ.get("SLURM_JOB_ID") and shutil.which("srun"):
        # --overlap: the job's own Snakemake may itself run in a step of the allocation
        per_node = [f"--ntasks-per-node={tasks_per_node}"] if tasks_per_node else []
        return ["srun", "--overlap", "--mpi=pmix", f"--ntasks={processes}", *per_node]
    command = ["mpirun", "--oversubscribe", "-n", str(processes)]  # one node: tasks_per_node is moot
    if os.geteuid() == 0:  # a container's root; Open MPI refuses it unless told
        command.insert(1, "--allow-run-as-root")
    return command


def allocation_tasks() -> str:
    """The tasks of the SLURM allocation this job runs in (``scontrol``'s NumTasks: Snakemake's
    job step does not pass SLURM_NTASKS on), empty outside SLURM."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if not job_id or not shutil.which("scontrol"):
        return ""
    shown = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True).stdout
    found = re.search(r"\bNumTasks=(\d+)", shown)
    return found.group(1) if found else ""


def program() -> list[str]:
    """The MPI program every rank runs (:func:`main`), under the MPI environment's Python."""
    return [
        str(mpi_python()),
        "-c",
        "import sys; from h5sweep.cases.parallel import mpi; sys.exit(mpi.main(sys.argv[1:]))",
    ]


def variant_label(row: dict) -> str:
    reader = f", {row[C.READER]}" if row.get(C.READER) and row[C.READER] != "h5py" else ""
    return (
        f"{row[PC.OPERATION]} {row[PC.MODE]}, {row[PC.PROCESSES]} processes, "
        f"{row[PC.UNITS_PER_ACCESS]} {row[PC.UNITS_COLUMN]} per access{reader}"
    )


def measure(job, backend, store_path: str, source, checkpoint: str | None = None) -> list[dict]:
    """The case's runner (its spec's ``runner``): one MPI run per process count on one test
    store, each inside the node's exclusive measurement window; its rows. ``checkpoint``: the
    file that keeps finished passes across attempts of the job (:class:`Checkpoint`; the job
    removes it once its record is written); a rerun runs only the passes not in it."""
    import hashlib

    from h5sweep import backends
    from h5sweep.measure.lock import timed_window

    case = job.optional_case("parallel")
    spec = backends.spec(job.backend)
    tasks_ = allocation_tasks()
    settings = case.settings_for(job, spec)
    with tempfile.TemporaryDirectory(prefix="h5sweep-parallel-") as scratch:
        checkpoint = checkpoint or os.path.join(scratch, "passes.jsonl")
        what = json.dumps({"settings": settings, "store": os.path.abspath(store_path)}, sort_keys=True)
        kept = Checkpoint(checkpoint, hashlib.sha256(what.encode()).hexdigest())
        if kept.passes:
            logging.getLogger("h5sweep").info(
                "%s: %d passes kept from an earlier attempt (%s)", store_path, len(kept.passes), checkpoint
            )
        stopped = set(kept.stopped_variants())
        settings.update(checkpoint=checkpoint, done=sorted(kept.passes), stopped=sorted(stopped))
        path = os.path.join(scratch, "settings.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(settings, f)
        for i, processes in enumerate(sorted(set(case.processes))):
            todo = [
                key
                for key, (_, option, operation, k, mode) in planned(settings, processes, i == 0)
                if key not in kept.passes and pass_key(processes, option, operation, k, mode) not in stopped
            ]
            if not todo:
                continue
            out = os.path.join(scratch, f"{processes}.parquet")
            command = [*launcher(processes, case.tasks_per_node), *program(), path, store_path, out]
            command += ["--first"] if i == 0 else []
            with timed_window() as window:
                opened = {k: v for k, v in window.columns().items() if k != lock.WINDOW_CLOSED_AT}
                env = {
                    **os.environ,
                    "H5SWEEP_WINDOW": json.dumps({**opened, lock.WINDOW_STEAL_S: float("nan")}),
                    "H5SWEEP_RUNNER": f"{socket.gethostname()}:{os.getpid()}",
                }
                proc = subprocess.run(command, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                found = re.findall(r"PassError: (.*)", proc.stderr + proc.stdout)
                detail = found[0] if found else (proc.stderr or proc.stdout)[-1500:]
                raise RuntimeError(
                    f"{store_path}: the MPI run with {processes} processes failed ({' '.join(command[:4])} ...): "
                    f"{detail}"
                )
            Checkpoint.append(checkpoint, {"window": window.columns()})
        rows = Checkpoint(checkpoint, kept.fingerprint).rows()
    return [{**row, C.VARIANT: variant_label(row), PC.SLURM_TASKS: tasks_} for row in rows]
