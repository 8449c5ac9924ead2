"""Serial against independent and collective MPI-IO reads (Folk & Choi's TeraGrid study) on
a 2-D image ``[rows, columns]``: each access reads a block of whole columns, ``k`` per rank,
in every mode, for every process count; run by :mod:`h5sweep.cases.parallel_run` under ``mpirun``
(locally) or ``srun --mpi=pmix`` (in a SLURM job) with the parallel h5py of ``.venv-mpi``.

Settings: ``processes`` (MPI ranks of each run), ``columns_per_access`` (k), ``modes``,
``repeats`` (accesses per mode and k, each at a seeded random place: the same for every layout
and mode).
"""

from __future__ import annotations

import os
from pathlib import Path

from h5sweep.backends import HDF5
from h5sweep.cases.spec import CaseSpec, Figure
from h5sweep.errors import ConfigError
from h5sweep.measure import rates
from h5sweep.storage.layouts import Shape

MODES = ("serial", "independent", "collective")
# The MPI environment's Python (make install-mpi); H5SWEEP_MPI_PYTHON overrides it.
MPI_PYTHON = Path(__file__).resolve().parents[3] / ".venv-mpi" / "bin" / "python"
SECONDS_PER_LAUNCH = 2.0  # starting P MPI processes and their Python
SECONDS_PER_ACCESS = 0.01  # evicting, reopening through MPI-IO and the barriers


def mpi_python() -> Path:
    return Path(os.environ.get("H5SWEEP_MPI_PYTHON", MPI_PYTHON))


class ParallelCase:
    name = "parallel"
    description = "serial, independent and collective MPI-IO reads of column blocks"
    ranks = (2,)

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.processes = [int(p) for p in self.settings.get("processes", [1, 2])]
        self.columns = [int(k) for k in self.settings.get("columns_per_access", [1, 32])]
        self.modes = list(dict.fromkeys(self.settings.get("modes", list(MODES))))
        self.repeats = int(self.settings.get("repeats", 6))

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        key = "cases.parallel"
        if self.repeats < 1:
            raise ConfigError(f"{key}.repeats", self.repeats, "must be at least 1")
        for i, mode in enumerate(self.modes):
            if mode not in MODES:
                raise ConfigError(f"{key}.modes[{i}]", mode, f"unknown mode (known: {', '.join(MODES)})")
        for i, p in enumerate(self.processes):
            if p < 1:
                raise ConfigError(f"{key}.processes[{i}]", p, "must be at least 1")
        for i, k in enumerate(self.columns):
            if not 1 <= k * max(self.processes) <= shape[1]:
                raise ConfigError(
                    f"{key}.columns_per_access[{i}]",
                    k,
                    f"times the most processes ({max(self.processes)}) must fit the {shape[1]} columns",
                )
        if not mpi_python().exists():
            raise ConfigError(key, self.settings, f"needs the MPI environment {mpi_python()}: run `make install-mpi`")

    def settings_for(self, job) -> dict:
        """What one run of :mod:`h5sweep.cases.parallel_run` receives."""
        return {
            "dataset": job.dataset,
            "layout": job.settings["layout"],
            "modes": self.modes,
            "columns_per_access": self.columns,
            "repeats": self.repeats,
        }


READAHEAD_BYTES = 128 * 1024  # what a cold read of a few bytes fetches at least (a readahead window)


def fetched_bytes(sweep, layout, width: int) -> int:
    """The bytes one cold access of ``width`` whole columns fetches from the device: the chunks
    it touches, or, contiguous, a readahead window per row up to the span of all rows (a
    column's elements lie a whole row apart)."""
    rows, columns = sweep.shape
    itemsize = sweep.dtype.itemsize
    if layout.chunk_shape is None:
        return min(rows * columns * itemsize, rows * max(width * itemsize, READAHEAD_BYTES))
    chunk_rows, chunk_columns = layout.chunk_shape
    touched_columns = min(columns, (-(-width // chunk_columns) + 1) * chunk_columns)
    return rows * touched_columns * itemsize


def timed_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    """Per process count, mode, k and access: reading the block cold (what the device
    returns for it), and starting the ranks."""
    case = sweep.parallel
    rows, itemsize = sweep.shape[0], sweep.dtype.itemsize
    seconds = 0.0
    for p in case.processes:
        seconds += SECONDS_PER_LAUNCH
        for k in case.columns:
            block = rows * k * p * itemsize
            if from_device:
                read = fetched_bytes(sweep, layout, k * p) / rates.DEVICE_READ_BYTES_PER_S
            else:
                read = block / rates.read_rate(compression)
            seconds += (
                len(case.modes) * case.repeats * (read + SECONDS_PER_ACCESS + block / rates.MAKE_DATA_BYTES_PER_S)
            )
    return seconds


def memory_per_task_mb(sweep) -> int:
    """One rank: its interpreter, its data source and the largest block it reads (serial: rank
    0 reads the whole block, the buffer and the source's values beside it), and the job's own
    Snakemake and driver, which share the first rank's node."""
    case = sweep.parallel
    block = sweep.shape[0] * max(case.columns) * max(case.processes) * sweep.dtype.itemsize
    return 160 + -(-3 * block // rates.MB) + 256


def tasks(sweep) -> int:
    """The job's MPI tasks: the largest process count; each run starts as many as it needs."""
    return max(sweep.parallel.processes)


def memory_mb(sweep) -> int:
    return tasks(sweep) * memory_per_task_mb(sweep)


FIGURE = Figure("parallel", "parallel-{filesystem}", "MPI-IO reads")

SPEC = CaseSpec(
    name="parallel",
    scope="store",
    stage="parallel",
    variant_columns=("mode", "processes", "columns_per_access"),
    enabled=lambda sweep: getattr(sweep, "parallel", None) is not None,
    figures=lambda sweep: [FIGURE.name()],
    job_cost=rates.store_job(timed_seconds),
    runner="h5sweep.cases.parallel_run:measure",
    mem_mb=memory_mb,
    threads=tasks,  # locally: the cores mpirun's ranks take; on SLURM, tasks of one CPU each
    backends=(HDF5,),  # MPI-IO through parallel HDF5
    mpi_tasks=tasks,
    plots=(FIGURE,),
    integer_columns=("processes", "columns_per_access"),
)
