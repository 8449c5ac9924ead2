"""Serial against independent and collective MPI-IO reads of a 2-D image (Folk & Choi's
TeraGrid study), run by ``mpirun``/``srun`` under the parallel h5py of ``.venv-mpi``
(``make install-mpi``).

The image is ``[rows, columns]``; a selection is a block of ``processes x k`` whole columns at
a seeded random position (the same for every layout and mode: paired). The modes:

- ``serial``: one process (rank 0) reads the whole block through HDF5's default driver;
- ``independent``: every rank reads its own ``k`` columns of the block through the MPI-IO
  driver, each on its own;
- ``collective``: the same, as one collective MPI-IO operation.

Every timed access is cold on every rank: each rank drops the file from its node's page cache
and reopens it, then all ranks meet at a barrier; the clock of each rank covers its
``H5Dread`` only (dataspaces and the transfer property list built before), and the access's
time is the maximum over the ranks. The values every rank read are checked against the data
source after the clock. Rank 0 writes one row per access with the HDF5 version it ran on.

Run: ``mpirun -n P .venv-mpi/bin/python -m h5sweep.cases.parallel_run SETTINGS.json STORE OUT.parquet``;
the workflow's job (:func:`measure`, the case's runner) launches one such run per process
count: ``srun --mpi=pmix`` inside a SLURM job (the job is an allocation of as many tasks as the
most processes, one CPU each; the ranks may span nodes), else ``mpirun``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

from h5sweep.measure import pagecache
from h5sweep.measure.timing import touched_empty
from h5sweep.storage.datasources import make_source
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection

MODES = ("serial", "independent", "collective")


def block_starts(columns: int, width: int, repeats: int, seed: int, k: int) -> list[int]:
    """The first column of each access's block of ``width`` columns: seeded by the seed and
    ``k`` only, so every layout, mode and process count of one ``k`` reads the same places
    (a block of ``width`` fits)."""
    rng = np.random.default_rng([int(seed), zlib.crc32(f"parallel/{k}".encode())])
    return [int(v) for v in rng.integers(0, columns - width + 1, size=repeats)]


def rank_selection(rows: int, start: int, k: int, rank: int, mode: str, processes: int) -> Selection:
    """What one rank reads of a block: serial, rank 0 the whole block; else its own k columns."""
    if mode == "serial":
        return Selection((0, start), (rows, k * processes))
    return Selection((0, start + rank * k), (rows, k))


def _prepared_read(dset, selection: Selection, buffer: np.ndarray, mode: str):
    """The ``H5Dread`` of ``selection`` into ``buffer`` with everything built beforehand: the
    file and memory dataspaces and the transfer property list (MPI-IO independent or
    collective; serial: HDF5's default)."""
    from h5py import h5fd, h5p, h5s

    space = dset.id.get_space()
    space.select_hyperslab(selection.start, selection.size)
    memory = h5s.create_simple(selection.size)
    transfer = h5p.create(h5p.DATASET_XFER)
    if mode != "serial":
        transfer.set_dxpl_mpio(h5fd.MPIO_COLLECTIVE if mode == "collective" else h5fd.MPIO_INDEPENDENT)
    return lambda: dset.id.read(memory, space, buffer, dxpl=transfer)


def run(settings: dict, path: str, comm) -> list[dict]:
    """Every mode and columns-per-access of the settings on one stored image, with the
    communicator's size as the process count; rows on rank 0 (empty elsewhere)."""
    import h5py
    from mpi4py import MPI

    rank, processes = comm.Get_rank(), comm.Get_size()
    dataset = settings["dataset"]
    rows, columns = (int(n) for n in dataset["shape"])
    layout = Layout.from_id(settings["layout"]["id"])
    source = make_source(dataset, layout)
    nodes = len(set(comm.allgather(MPI.Get_processor_name())))
    out: list[dict] = []
    # untimed: one rank per node reads the store into its page cache, so that the first
    # eviction frees the store's own pages just before the first read, as later ones do
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    if node.Get_rank() == 0:
        pagecache.prime([path])
    node.Free()
    comm.Barrier()
    for k in settings["columns_per_access"]:
        width = k * processes
        if width > columns:
            continue
        starts = block_starts(columns, width, int(settings["repeats"]), int(dataset["seed"]), k)
        for mode in settings["modes"]:
            reading = mode != "serial" or rank == 0
            for repeat, start in enumerate(starts):
                selection = rank_selection(rows, start, k, rank, mode, processes)
                # only rank 0's is recorded; measured before any rank of its node evicts
                resident_before = pagecache.resident_fraction(path) if rank == 0 else None
                comm.Barrier()
                pagecache.evict(path)  # cold on every rank's node
                if mode == "serial":
                    handle = h5py.File(path, "r") if rank == 0 else None
                else:
                    handle = h5py.File(path, "r", driver="mpio", comm=comm)
                buffer = touched_empty(selection.size, np.dtype(dataset["dtype"]))  # not faulted in on the clock
                read = _prepared_read(handle[dataset["name"]], selection, buffer, mode) if reading else None
                before = pagecache.io_counters()
                comm.Barrier()
                t0 = time.perf_counter_ns()
                if read is not None:
                    read()
                elapsed = (time.perf_counter_ns() - t0) / 1e9
                device = (pagecache.io_counters() - before).device_read
                comm.Barrier()
                if handle is not None:
                    handle.close()
                slowest = comm.allreduce(elapsed, op=MPI.MAX)
                fastest = comm.allreduce(elapsed if reading else np.inf, op=MPI.MIN)
                device_total = comm.allreduce(device, op=MPI.SUM)
                bad = 0
                if reading:  # checked after the clock, on every rank that read
                    bad = int(np.count_nonzero(buffer != source.region(selection.region)))
                bad = comm.allreduce(bad, op=MPI.SUM)
                if bad:
                    raise RuntimeError(
                        f"{path}: {bad} values read in mode {mode} with {processes} processes, "
                        f"{k} columns per rank, repeat {repeat} differ from the data source"
                    )
                if rank == 0:
                    out.append(
                        {
                            "case": "parallel",
                            "mode": mode,
                            "processes": processes,
                            "rank_nodes": nodes,
                            "columns_per_access": k,
                            "repeat": repeat,
                            "selection": Selection((0, start), (rows, width)).label,
                            "bytes_selected": rows * width * buffer.dtype.itemsize,
                            "seconds": slowest,
                            "fastest_rank_s": fastest,
                            "device_read_bytes": device_total,
                            "resident_fraction_before_evict": resident_before,
                            "chunks_touched": layout.chunks_touched((0, start), (rows, width)),
                            "verified": True,
                            "hdf5_version": h5py.version.hdf5_version,
                            "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
                        }
                    )
    return out


def launcher(processes: int) -> list[str]:
    """How a job starts ``processes`` ranks: ``srun --mpi=pmix`` inside a SLURM allocation
    (PMIx, as Debian's Open MPI; slurmd must have been started with the PMIx library
    installed), else ``mpirun``."""
    if os.environ.get("SLURM_JOB_ID") and shutil.which("srun"):
        # --overlap: the job's own Snakemake may itself run in a step of the allocation
        return ["srun", "--overlap", "--mpi=pmix", f"--ntasks={processes}"]
    command = ["mpirun", "--oversubscribe", "-n", str(processes)]
    if os.geteuid() == 0:  # a container's root; Open MPI refuses it unless told
        command.insert(1, "--allow-run-as-root")
    return command


def allocation_tasks() -> str:
    """The tasks of the SLURM allocation this job runs in (``scontrol``'s NumTasks; the job's
    environment no longer says: Snakemake's job step drops SLURM_NTASKS), empty outside SLURM."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if not job_id or not shutil.which("scontrol"):
        return ""
    shown = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True).stdout
    found = re.search(r"\bNumTasks=(\d+)", shown)
    return found.group(1) if found else ""


def measure(job, backend, store_path: str, source) -> list[dict]:
    """The case's runner (its spec's ``runner``): one MPI run per process count on one test
    store, each inside the node's exclusive measurement window; its rows."""
    import pandas as pd

    from h5sweep.cases.parallel import mpi_python
    from h5sweep.measure.lock import timed_window

    case = job.optional_case("parallel")
    rows: list[dict] = []
    tasks = allocation_tasks()
    with tempfile.TemporaryDirectory(prefix="h5sweep-parallel-") as scratch:
        settings = os.path.join(scratch, "settings.json")
        with open(settings, "w", encoding="utf-8") as f:
            json.dump(case.settings_for(job), f)
        for processes in case.processes:
            out = os.path.join(scratch, f"{processes}.parquet")
            command = [*launcher(processes), str(mpi_python()), "-m", __name__, settings, store_path, out]
            with timed_window() as window:
                proc = subprocess.run(command, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(
                    f"{store_path}: the MPI run with {processes} processes failed ({' '.join(command[:4])} ...): "
                    f"{(proc.stderr or proc.stdout)[-1500:]}"
                )
            for row in pd.read_parquet(out).to_dict("records"):
                variant = f"{row['mode']}, {row['processes']} processes, {row['columns_per_access']} columns per rank"
                rows.append({**row, "variant": variant, "slurm_tasks": tasks, **window.columns()})
    return rows


def main(argv: list[str]) -> int:
    from mpi4py import MPI

    from h5sweep.measure.records import write_table

    settings_path, store, record = argv
    with open(settings_path, encoding="utf-8") as f:
        settings = json.load(f)
    rows = run(settings, store, MPI.COMM_WORLD)
    if MPI.COMM_WORLD.Get_rank() == 0:
        write_table(rows, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
