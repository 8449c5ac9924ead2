"""The parallel case, one package: its definition and deal (:mod:`.core`), time and memory
model (:mod:`.model`), a timed pass (:mod:`.passes`), the MPI program and its checkpoint
(:mod:`.mpi`), the runner (:mod:`.runner`), its figures (:mod:`.figures`) and its verdict
(:mod:`.verdict`).

Parallel passes (Folk & Choi's TeraGrid study; the parallel half of Kang et al.'s Fig. 3):
P ranks read or write the *entire* dataset in a series of accesses of ``k`` units each along one
axis, in every mode, for every process count, on every store whose backend has parallel passes.

- **Units** (``units``): columns or rows of a 2-D array ``[rows, columns]`` (rows: Kang's
  ``[time, channels]`` recording in blocks of time steps); for a 3-D cube ``[x, y, z]``,
  ``z_slabs`` (ion images, ``[:, :, z]``) or ``x_planes`` (blocks of spectra, ``[x, :, :]``).
- **Accesses**: ``units // k`` accesses of ``k`` units, and one of the ``units % k`` left over.
- **Dealing** (the study's rule): the full accesses are dealt among the P ranks in contiguous
  blocks of ``(units // k) // P``; the accesses left over, the short one included, go to one
  rank: with ``remainder: study``, the last rank in independent mode and rank 0 in collective
  mode, as the study did; ``first`` or ``last`` choose rank 0 or the last rank in both modes;
  ``spread`` deals every access, the short one included, in contiguous blocks whose sizes
  differ by at most one (an even partition, as Kang et al.'s).
- **Modes**: ``serial`` (rank 0 does the whole pass through the library's default driver; its
  rows say 1 process), ``independent`` (each rank its own accesses), ``collective`` (MPI-IO
  collective calls; a rank with fewer accesses joins the others' calls with an empty one).
  A backend runs the modes its capabilities name: HDF5 all three through parallel HDF5, Zarr
  serial and independent (each rank writes its own chunk files; no MPI-IO).
- **Timing**: a pass is timed from the barrier before the first access to the barrier after
  the last. Before it, outside the clock: a read pass's store is evicted on every node and
  opened, its buffers allocated; a write pass's file is created (together by the ranks, where
  the mode is parallel) and its values computed. A write's flush, close and fsync (each rank's
  own node's pages or chunk files) are inside the clock. Bandwidth is the dataset's bytes over
  the pass's time.
- **Checking**: after the clock, every rank compares what it read (or, after a write, reads
  back what it wrote) with the data source; a difference fails the job, naming the rank, the
  mode and the access. Rank 0 checks that the ranks' accesses tile the axis exactly once.

Repeats are whole passes, interleaved over ``k`` and modes within each repeat. The summary
gives the best bandwidth over the repeats (the study's statistic) and the median with its
interval. The runner (:func:`.runner.measure`) starts one MPI program per process count
(:func:`.mpi.main`, :func:`.mpi.run`; see :func:`.runner.program`) with ``mpirun`` locally or ``srun
--mpi=pmix`` inside a SLURM allocation, under the parallel h5py of ``.venv-mpi``.
"""

from __future__ import annotations

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel import columns as parallel_columns  # noqa: F401 - registers the columns it adds
from h5sweep.cases.parallel.core import (
    DEFAULT_UNITS,
    LAYOUT_KINDS,
    MODES,
    OPERATIONS,
    REMAINDERS,
    UNITS,
    WRITE_SUFFIX,
    ParallelCase,
    accesses,
    deal,
    hints_words,
    missing_mpi_environment,
    mpi_python,
    region,
    remainder_rank,
)
from h5sweep.cases.parallel.model import job_seconds, memory_mb, memory_per_task_mb, pass_seconds, runs_per_pass, tasks
from h5sweep.kit.spec import CaseSpec, Figure
from h5sweep.storage import columns as C
from h5sweep.storage.layouts import Layout

__all__ = [
    "DEFAULT_UNITS",
    "LAYOUT_KINDS",
    "MODES",
    "OPERATIONS",
    "REMAINDERS",
    "SPEC",
    "UNITS",
    "WRITE_SUFFIX",
    "ParallelCase",
    "accesses",
    "deal",
    "hints_words",
    "job_seconds",
    "memory_mb",
    "memory_per_task_mb",
    "missing_mpi_environment",
    "mpi_python",
    "pass_seconds",
    "region",
    "remainder_rank",
    "runs_per_pass",
    "tasks",
]


def _runs_on(store) -> bool:
    caps = store.backend.capabilities
    layout = store.layout
    return bool(caps.parallel_modes) and layout.order == Layout(None).order and layout.page_size is None


FIGURES = "h5sweep.cases.parallel.figures"  # the package draws its own
BANDWIDTH = Figure("parallel", "parallel-{filesystem}", "Parallel passes", module=FIGURES)
MODE_RATIOS = Figure(
    "parallel_modes", "parallel-modes-{filesystem}", "Parallel passes", "parallel-modes", module=FIGURES
)
UNITS_FIGURE = Figure(
    "parallel_units", "parallel-units-{filesystem}", "Parallel passes", "parallel-units", module=FIGURES
)
LAYOUTS_FIGURE = Figure(
    "parallel_layouts", "parallel-layouts-{filesystem}", "Parallel passes", "parallel-layouts", module=FIGURES
)
BACKENDS_FIGURE = Figure(
    "parallel_backends", "parallel-backends-{filesystem}", "Parallel passes", "parallel-backends", module=FIGURES
)


def _figures(sweep) -> list[str]:
    case = sweep.parallel
    names = [BANDWIDTH.name(), MODE_RATIOS.name()]
    names += [UNITS_FIGURE.name()] if len(case.units_per_access) > 1 else []
    chunked = any(lay.chunk_shape is not None for lay in sweep.layouts)
    contiguous = any(lay.chunk_shape is None for lay in sweep.layouts)
    names += [LAYOUTS_FIGURE.name()] if chunked and contiguous else []
    parallel_backends = [b for b in sweep.backends if b.capabilities.parallel_modes]
    names += [BACKENDS_FIGURE.name()] if len(parallel_backends) > 1 else []
    return names


SPEC = CaseSpec(
    name="parallel",
    scope="store",
    stage="parallel",
    variant_columns=(PC.OPERATION, PC.MODE, PC.PROCESSES, PC.UNITS_COLUMN, PC.UNITS_PER_ACCESS, C.READER),
    enabled=lambda sweep: getattr(sweep, "parallel", None) is not None,
    figures=_figures,
    job_cost=job_seconds,
    runner="h5sweep.cases.parallel.runner:measure",
    mem_mb=memory_mb,
    threads=tasks,  # locally: the cores mpirun's ranks take; on SLURM, tasks of one CPU each
    mpi_tasks=tasks,
    mpi_tasks_per_node=lambda sweep: sweep.parallel.tasks_per_node,
    applies=_runs_on,
    read_options="all",
    plots=(BANDWIDTH, MODE_RATIOS, UNITS_FIGURE, LAYOUTS_FIGURE, BACKENDS_FIGURE),
    settings_type=ParallelCase,
    findings="h5sweep.cases.parallel.findings:FINDINGS",
    run_check=lambda sweep: missing_mpi_environment(),
    verdict="h5sweep.cases.parallel.verdict:parallel_markdown",
    compare="h5sweep.cases.parallel.compare:compare_sizes",
    compared_findings="h5sweep.cases.parallel.compare_findings:FINDINGS",
    summary="h5sweep.cases.parallel.verdict:bandwidths",
    check_grid=lambda case, grid: case.check_stores(grid.shape, [s for s in grid.stores if SPEC.runs_on(s)]),
    scratch_bytes=lambda sweep: sweep.largest_file_bytes(),  # a write pass's store
)
