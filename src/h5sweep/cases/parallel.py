"""Parallel passes (Folk & Choi's TeraGrid study; the parallel half of Kang et al.'s Fig. 3):
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
interval. The runner (:func:`measure`) starts one MPI program per process count
(:func:`main`, :func:`run`; see :func:`program`) with ``mpirun`` locally or ``srun
--mpi=pmix`` inside a SLURM allocation, under the parallel h5py of ``.venv-mpi``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from h5sweep.cases.spec import CaseSpec, Figure
from h5sweep.errors import ConfigError
from h5sweep.measure import pagecache, rates
from h5sweep.measure.timing import touched_empty
from h5sweep.storage.layouts import Layout, Shape

MODES = ("serial", "independent", "collective")
OPERATIONS = ("read", "write")
REMAINDERS = ("study", "first", "last", "spread")
LAYOUT_KINDS = ("contiguous", "chunked")
# The units of a pass and the axis they lie along, by the dataset's rank.
UNITS = {"columns": (2, 1), "rows": (2, 0), "z_slabs": (3, 2), "x_planes": (3, 0)}
DEFAULT_UNITS = {2: "columns", 3: "z_slabs"}
# The MPI environment's Python (make install-mpi); H5SWEEP_MPI_PYTHON overrides it.
MPI_PYTHON = Path(__file__).resolve().parents[3] / ".venv-mpi" / "bin" / "python"
SECONDS_PER_LAUNCH = 2.5  # starting P MPI processes, their Python and the I/O libraries
SECONDS_PER_PASS = 0.05  # evicting, opening or creating, the barriers and closing
WRITE_SUFFIX = ".parallel-write"  # a write pass's store, beside the test store


def mpi_python() -> Path:
    return Path(os.environ.get("H5SWEEP_MPI_PYTHON", MPI_PYTHON))


def missing_mpi_environment() -> str | None:
    """What a run of the parallel passes needs and this machine lacks: the MPI environment's
    Python (its parallel h5py). A dry run only says it; a run is refused before any job."""
    if mpi_python().exists():
        return None
    return (
        f"cases.parallel needs the MPI environment {mpi_python()}: run `make install-mpi` "
        "(or set H5SWEEP_MPI_PYTHON to a Python with mpi4py and a parallel h5py)"
    )


def _hint_value(value) -> str:
    """An MPI-IO hint's value as MPI_Info holds it: a string (true/false for YAML booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def hints_words(hints: dict[str, str]) -> str:
    """Hints as one column: ``key=value`` pairs in key order, joined by ``;`` (empty: none)."""
    return ";".join(f"{k}={hints[k]}" for k in sorted(hints))


def remainder_rank(mode: str, remainder: str, processes: int) -> int:
    """The rank that takes the accesses left over after the even deal (``spread``: the last
    rank takes the short last access, the others left over go one each to the first ranks)."""
    if remainder == "first" or (remainder == "study" and mode == "collective"):
        return 0
    return processes - 1


def accesses(units: int, k: int) -> list[tuple[int, int]]:
    """The accesses of a pass, in order along the axis: (first unit, units)."""
    full = [(a * k, k) for a in range(units // k)]
    return full + ([(units // k * k, units % k)] if units % k else [])


def deal(units: int, k: int, processes: int, mode: str, remainder: str = "study") -> list[list[tuple[int, int]]]:
    """Each rank's accesses: serial, rank 0 all of them; else contiguous blocks of the full
    accesses, ``(units // k) // processes`` each, and the rest to :func:`remainder_rank`."""
    every = accesses(units, k)
    if mode == "serial":
        return [every] + [[] for _ in range(processes - 1)]
    if remainder == "spread":  # contiguous blocks whose sizes differ by at most one access
        sizes = [len(every) // processes + (r < len(every) % processes) for r in range(processes)]
        edges = np.cumsum([0, *sizes])
        return [every[edges[r] : edges[r + 1]] for r in range(processes)]
    share = (units // k) // processes
    parts = [every[r * share : (r + 1) * share] for r in range(processes)]
    parts[remainder_rank(mode, remainder, processes)] += every[processes * share :]
    return parts


def region(shape: Shape, axis: int, start: int, count: int) -> tuple[slice, ...]:
    """The part of the dataset an access of ``count`` units from ``start`` along ``axis`` covers."""
    return tuple(slice(start, start + count) if a == axis else slice(0, n) for a, n in enumerate(shape))


class ParallelCase:
    name = "parallel"
    description = "whole-dataset read and write passes by P ranks: serial, independent and collective"
    ranks = (2, 3)

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.processes = [int(p) for p in self.settings.get("processes", [1, 2])]
        given = self.settings.get("units_per_access", [1, 32])
        # k for every layout, or per layout kind (the study read 1 column of chunked images only)
        by_kind = given if isinstance(given, dict) else {kind: given for kind in LAYOUT_KINDS}
        self.units_by_kind = {kind: [int(k) for k in by_kind.get(kind, [])] for kind in LAYOUT_KINDS}
        # the k of the write passes, of those (all unless given)
        self.write_units = None if "writes" not in by_kind else [int(k) for k in by_kind["writes"]]
        self.modes = list(dict.fromkeys(self.settings.get("modes", list(MODES))))
        self.operations = list(dict.fromkeys(self.settings.get("operations", list(OPERATIONS))))
        self.remainder = str(self.settings.get("remainder", "study"))
        self.units = self.settings.get("units")
        self.repeats = int(self.settings.get("repeats", 6))
        self.limit_s = self.settings.get("limit_s")
        self.tasks_per_node = self.settings.get("tasks_per_node")
        self.hints = {str(k): _hint_value(v) for k, v in (self.settings.get("hints") or {}).items()}

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        key = "cases.parallel"
        if self.units in (None, "auto"):
            self.units = DEFAULT_UNITS[len(shape)]
        if self.units not in UNITS:
            raise ConfigError(f"{key}.units", self.units, f"unknown units (known: {', '.join(UNITS)})")
        rank, _ = UNITS[self.units]
        if rank != len(shape):
            fits = ", ".join(u for u, (r, _) in UNITS.items() if r == len(shape))
            raise ConfigError(f"{key}.units", self.units, f"is for {rank}-D datasets; a {len(shape)}-D one has {fits}")
        if self.repeats < 1:
            raise ConfigError(f"{key}.repeats", self.repeats, "must be at least 1")
        limit = self.limit_s
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int | float) or not limit > 0):
            raise ConfigError(f"{key}.limit_s", limit, "must be a number of seconds above 0, or null")
        per_node = self.tasks_per_node
        if per_node is not None and (isinstance(per_node, bool) or not isinstance(per_node, int) or per_node < 1):
            raise ConfigError(f"{key}.tasks_per_node", per_node, "must be a whole number of ranks, at least 1, or null")
        if self.remainder not in REMAINDERS:
            raise ConfigError(f"{key}.remainder", self.remainder, f"must be one of {', '.join(REMAINDERS)}")
        for name, values, known in (("modes", self.modes, MODES), ("operations", self.operations, OPERATIONS)):
            for i, value in enumerate(values):
                if value not in known:
                    raise ConfigError(f"{key}.{name}[{i}]", value, f"unknown (known: {', '.join(known)})")
        for i, p in enumerate(self.processes):
            if p < 1:
                raise ConfigError(f"{key}.processes[{i}]", p, "must be at least 1")
        for kind, ks in self.units_by_kind.items():
            for i, k in enumerate(ks):
                if not 1 <= k <= self.axis_units(shape):
                    raise ConfigError(
                        self.units_key(kind, i), k, f"must be 1 to the {self.axis_units(shape)} {self.units}"
                    )
        self.check_every_rank_accesses(shape)

    def check_every_rank_accesses(self, shape: Shape) -> None:
        """Refuse a process count with more ranks than a parallel pass has whole accesses: the
        deal would leave ranks without any, and the pass would not be the P-rank pass it says."""
        if all(mode == "serial" for mode in self.modes):
            return
        for kind, ks in self.units_by_kind.items():
            for k in ks:
                whole = self.axis_units(shape) // k
                for i, p in enumerate(self.processes):
                    if p > whole:
                        raise ConfigError(
                            f"cases.parallel.processes[{i}]",
                            p,
                            f"more ranks than the {whole} whole accesses of {k} {self.units} a pass has "
                            f"({kind} layouts, {self.axis_units(shape)} {self.units}): {p - whole} rank(s) would "
                            "get none; lower the process count or the units per access",
                        )

    @property
    def units_per_access(self) -> list[int]:
        """Every k of the case, over the layout kinds."""
        return sorted({k for ks in self.units_by_kind.values() for k in ks})

    def units_for(self, layout: Layout, operation: str = "read") -> list[int]:
        """The k of the ``operation`` passes over a store of ``layout``."""
        ks = self.units_by_kind[layout.kind]
        if operation == "write" and self.write_units is not None:
            return [k for k in ks if k in self.write_units]
        return ks

    def units_key(self, kind: str, i: int) -> str:
        per_kind = isinstance(self.settings.get("units_per_access"), dict)
        return f"cases.parallel.units_per_access{'.' + kind if per_kind else ''}[{i}]"

    @property
    def axis(self) -> int:
        return UNITS[self.units][1]

    def axis_units(self, shape: Shape) -> int:
        return shape[self.axis]

    def check_stores(self, shape: Shape, stores) -> None:
        """Refusals that need the grid (``stores``: objects with ``backend``, ``layout`` and
        ``compression``), before any job: a filtered write in a mode the backend cannot write
        filters in; a partition in which two ranks would write one chunk or shard file."""
        key = "cases.parallel"
        for store in stores:
            caps, layout = store.backend.capabilities, store.layout
            if not caps.parallel_modes or "write" not in self.operations:
                continue
            if not store.compression.is_none:
                for i, mode in enumerate(self.modes):
                    if mode in caps.parallel_modes and mode not in caps.parallel_filtered_write_modes:
                        raise ConfigError(
                            f"{key}.modes[{i}]",
                            mode,
                            f"{store.backend.label} writes a filtered dataset ({store.compression.name}) in "
                            f"parallel only in mode(s) {', '.join(caps.parallel_filtered_write_modes)}: "
                            "drop the mode, the write operation or the compression",
                        )
            if not caps.file_per_chunk or layout.chunk_shape is None:
                continue
            unit = (layout.shard_shape or layout.chunk_shape)[self.axis]
            for i, k in enumerate(self.units_for(layout, "write")):
                for p in self.processes:
                    for mode in (m for m in self.modes if m != "serial" and m in caps.parallel_modes):
                        parts = deal(self.axis_units(shape), k, p, mode, self.remainder)
                        edges = [part[0][0] for part in parts if part]
                        if any(edge % unit for edge in edges):
                            what = "shard" if layout.shard_shape else "chunk"
                            raise ConfigError(
                                self.units_key(layout.kind, i),
                                k,
                                f"with {p} processes, two ranks would write one {store.backend.label} {what} "
                                f"({what} shape {'x'.join(map(str, layout.shard_shape or layout.chunk_shape))}, "
                                f"{unit} {self.units} along the pass): k must keep every rank's part to whole "
                                f"{what}s",
                            )

    def modes_for(self, backend) -> list[str]:
        return [m for m in self.modes if m in backend.capabilities.parallel_modes]

    def settings_for(self, job, backend) -> dict:
        """What one MPI run of :func:`run` receives."""
        return {
            "dataset": job.dataset,
            "layout": job.settings["layout"],
            "compression": job.compression.name,
            "backend": job.backend,
            "read_options": [o.settings() for o in job.read_options],
            "modes": self.modes_for(backend),
            "operations": self.operations,
            "units": self.units,
            "units_per_access": {op: self.units_for(job.layout, op) for op in self.operations},
            "remainder": self.remainder,
            "repeats": self.repeats,
            "limit_s": None if self.limit_s is None else float(self.limit_s),
            "hints": self.hints,
            "tasks_per_node": self.tasks_per_node,
        }


# The time model of a pass. An access's cost is dominated by the contiguous runs of bytes it
# touches in the file (a column of a row-major image is one run per row): per run, by how it
# is served (reference machine, parallel HDF5 1.10 through ROMIO).
SECONDS_PER_RUN = {
    ("read", "file"): 0.8e-6,  # a read of its own (HDF5's default driver or independent MPI-IO)
    ("read", "collective"): 0.035e-6,  # ROMIO's two-phase reads gather the runs into large reads
    ("read", "cache"): 0.007e-6,  # a copy out of a chunk cache that holds the chunk
    ("write", "file"): 3.0e-6,  # MPI-IO or the default driver without a cache: read-modify-write
    ("write", "cache"): 0.007e-6,  # into a chunk cache that holds the chunk (serial writes only)
}


@functools.lru_cache(maxsize=256)  # asked per mode and process count of one store's job
def runs_per_pass(shape: Shape, layout: Layout, axis: int, k: int) -> int:
    """Contiguous runs of bytes a pass of ``k`` units along ``axis`` touches in the file: per
    access, each row of the storage (or of each chunk) it cuts, or one per whole chunk."""
    total = 0
    for start, count in accesses(shape[axis], k):
        if layout.chunk_shape is None:
            total += 1 if count == shape[axis] else math.prod(shape[:axis])
            continue
        chunk = layout.chunk_shape
        first, last = start // chunk[axis], (start + count - 1) // chunk[axis]
        others = math.prod(-(-n // c) for a, (n, c) in enumerate(zip(shape, chunk, strict=True)) if a != axis)
        for index in range(first, last + 1):
            covered = min(start + count, (index + 1) * chunk[axis]) - max(start, index * chunk[axis])
            whole = covered == min(chunk[axis], shape[axis] - index * chunk[axis])
            total += others * (1 if whole else math.prod(chunk[:axis]))
    return total


def pass_seconds(sweep, store, operation: str, mode: str, k: int, processes: int, from_device: bool) -> float:
    """One timed pass: the dataset's bytes through the device (cold reads) or the codec, and
    the runs its accesses touch, shared among the ranks; a Zarr access decodes (and, writing,
    re-encodes) every chunk it touches."""
    layout, compression, caps = store.layout, store.compression, store.backend.capabilities
    shape, itemsize, case = sweep.shape, sweep.dtype.itemsize, sweep.parallel
    raw = sweep.raw_bytes
    ranks = 1 if mode == "serial" else processes
    if operation == "read":
        seconds = raw / (rates.DEVICE_STREAM_BYTES_PER_S if from_device else rates.read_rate(compression))
    else:
        seconds = raw / rates.write_rate(compression)
    if caps.file_per_chunk and layout.chunk_shape is not None:
        chunk_bytes = layout.chunk_bytes(itemsize)
        touched = sum(
            layout.chunks_touched(*_start_and_size(region(shape, case.axis, start, count)))
            for start, count in accesses(shape[case.axis], k)
        )
        per_chunk = chunk_bytes / rates.read_rate(compression) + rates.SECONDS_PER_CHUNK_FILE
        if operation == "write":
            per_chunk += chunk_bytes / rates.write_rate(compression)
        return seconds + touched * per_chunk / ranks
    holds = any(
        option.holds_chunk(layout.chunk_bytes(itemsize)) for option in sweep.read_options(store.backend.name)[:1]
    )
    if mode == "collective" and operation == "read":
        served = "collective"
    elif layout.chunk_shape is not None and holds and (operation == "read" or mode == "serial"):
        served = "cache"
    else:
        served = "file"
    runs = runs_per_pass(shape, layout, case.axis, k)
    return seconds + runs * SECONDS_PER_RUN[operation, served] / ranks


def _start_and_size(part: tuple[slice, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(s.start for s in part), tuple(s.stop - s.start for s in part)


def job_seconds(sweep, store, from_device: bool = True) -> tuple[float, float]:
    """(job, timed) seconds of the case's job on one store: per process count its launch, and
    per operation, k, mode and repeat a pass, its preparation (eviction, opening, the values
    a write writes) and its checking (the source's values, and a write's store read back)."""
    case = sweep.parallel
    raw = sweep.raw_bytes
    modes_of = case.modes_for(store.backend)
    options = len(sweep.read_options(store.backend.name))  # every read option is its own set of passes
    timed = untimed = 0.0
    for i, processes in enumerate(sorted(set(case.processes))):
        untimed += SECONDS_PER_LAUNCH
        modes = [m for m in modes_of if m != "serial" or i == 0]
        for op in case.operations:
            for k in case.units_for(store.layout, op):
                for mode in modes:
                    one = pass_seconds(sweep, store, op, mode, k, processes, from_device)
                    timed += options * case.repeats * (one if case.limit_s is None else min(one, case.limit_s))
                    check = raw / rates.MAKE_DATA_BYTES_PER_S
                    if op == "write":  # its values made before, and read back after
                        check += raw / rates.MAKE_DATA_BYTES_PER_S + raw / rates.read_rate(store.compression)
                    untimed += options * case.repeats * (SECONDS_PER_PASS + check)
    return rates.SECONDS_PER_JOB + timed + untimed, timed


RANK_MB = 200  # one rank's interpreter and libraries


def memory_per_task_mb(sweep) -> int:
    """One task's memory (SLURM's --mem-per-cpu): a rank holds its accesses' values twice
    (read or to write, and the source's, for checking); a serial pass's rank 0 holds the whole
    dataset. Without ``tasks_per_node`` a node may hold rank 0 alone, so every task gets the
    most one rank needs; with it, a node's tasks share the most one node needs in any run."""
    case = sweep.parallel
    data_mb = -(-2 * sweep.raw_bytes // rates.MB)
    per_node = case.tasks_per_node
    if not per_node:
        return RANK_MB + data_mb
    serial = "serial" in case.modes
    need = 0
    for p in sorted(set(case.processes)):
        on_node = min(p, per_node)
        held = data_mb if serial or p == 1 else -(-data_mb * on_node // p)
        need = max(need, on_node * RANK_MB + held)
    return -(-need // per_node)


def tasks(sweep) -> int:
    """The job's MPI tasks: the largest process count; each run starts as many as it needs."""
    return max(sweep.parallel.processes)


def memory_mb(sweep) -> int:
    return tasks(sweep) * memory_per_task_mb(sweep) + 256  # and the job's own Snakemake


def _runs_on(store) -> bool:
    caps = store.backend.capabilities
    return bool(caps.parallel_modes) and store.layout.order == Layout(None).order


BANDWIDTH = Figure("parallel", "parallel-{filesystem}", "Parallel passes")
MODE_RATIOS = Figure("parallel_modes", "parallel-modes-{filesystem}", "Parallel passes", "parallel-modes")
UNITS_FIGURE = Figure("parallel_units", "parallel-units-{filesystem}", "Parallel passes", "parallel-units")
LAYOUTS_FIGURE = Figure("parallel_layouts", "parallel-layouts-{filesystem}", "Parallel passes", "parallel-layouts")
BACKENDS_FIGURE = Figure("parallel_backends", "parallel-backends-{filesystem}", "Parallel passes", "parallel-backends")


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
    variant_columns=("operation", "mode", "processes", "units", "units_per_access", "reader"),
    enabled=lambda sweep: getattr(sweep, "parallel", None) is not None,
    figures=_figures,
    job_cost=job_seconds,
    runner="h5sweep.cases.parallel:measure",
    mem_mb=memory_mb,
    threads=tasks,  # locally: the cores mpirun's ranks take; on SLURM, tasks of one CPU each
    mpi_tasks=tasks,
    mpi_tasks_per_node=lambda sweep: sweep.parallel.tasks_per_node,
    applies=_runs_on,
    read_options="all",
    plots=(BANDWIDTH, MODE_RATIOS, UNITS_FIGURE, LAYOUTS_FIGURE, BACKENDS_FIGURE),
    integer_columns=("processes", "units_per_access"),
    scratch_bytes=lambda sweep: sweep.largest_file_bytes(),  # a write pass's store
)


# ---------------------------------------------------------------------------------------------
# The MPI program: one run per process count, every rank runs run().


class PassError(RuntimeError):
    """A rank's values differ from the data source (the message names rank, mode and access)."""


def _evict(backend, path: str) -> None:
    for name in backend.paths_to_evict(path):
        pagecache.evict(name)


def _check(comm, problems: list[str]) -> None:
    """Every rank raises the first rank's problem, so that the run fails as a whole."""
    found = [p for rank_problems in comm.allgather(problems) for p in rank_problems]
    if found:
        raise PassError(found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""))


def _tiles(parts: list[list[tuple[int, int]]], units: int) -> str | None:
    """Why the ranks' accesses do not cover the axis exactly once, or None."""
    covered = np.zeros(units, dtype=np.int64)
    for part in parts:
        for start, count in part:
            covered[start : start + count] += 1
    if (covered != 1).any():
        first = int(np.flatnonzero(covered != 1)[0])
        return f"unit {first} is accessed {int(covered[first])} times"
    return None


def one_pass(ctx: dict, operation: str, mode: str, k: int, option, repeat: int) -> dict | None:
    """One timed pass; its row on rank 0 (None elsewhere)."""
    from mpi4py import MPI

    comm, backend, shape, axis = ctx["comm"], ctx["backend"], ctx["shape"], ctx["axis"]
    rank, size = comm.Get_rank(), comm.Get_size()
    processes = 1 if mode == "serial" else size
    parts = deal(shape[axis], k, size, mode, ctx["remainder"])
    problem = _tiles(parts, shape[axis]) if rank == 0 else None
    if problem:
        raise PassError(f"{ctx['path']}: the {mode} pass of {k} {ctx['units']} per access: {problem}")
    mine = parts[rank]
    taking_part = mode != "serial" or rank == 0
    source, dtype = ctx["source"], np.dtype(ctx["dataset"]["dtype"])
    target = ctx["path"] if operation == "read" else ctx["path"] + WRITE_SUFFIX
    resident_before = None
    if operation == "read":
        resident_before = pagecache.resident_fraction(backend.paths_to_evict(target)[0]) if rank == 0 else None
        comm.Barrier()
        _evict(backend, target)  # cold on every rank's node
    else:
        if rank == 0 and os.path.lexists(target):
            backend.remove(target)
        comm.Barrier()
    create = (shape, dtype, ctx["layout"], ctx["compression"]) if operation == "write" else None
    hints = ctx["hints"]
    handle = backend.open_pass(target, ctx["name"], mode, comm, option, create, hints) if taking_part else None
    # every rank with a handle asks (HDF5 duplicates the communicator to answer)
    in_effect = handle.hints_in_effect() if handle is not None and hints else {}
    regions = [region(shape, axis, start, count) for start, count in mine]
    if operation == "read":
        buffers = [touched_empty(_start_and_size(r)[1], dtype) for r in regions]
    else:
        buffers = [np.ascontiguousarray(source.region(r)) for r in regions]
    calls = [handle.prepare(r, b) for r, b in zip(regions, buffers, strict=True)] if handle else []
    if mode == "collective":
        most = comm.allreduce(len(calls), op=MPI.MAX)
        empty = handle.prepare_empty()
        calls += [empty] * (most - len(calls))
    limit_s = ctx["limit_s"]
    before = pagecache.io_counters()
    comm.Barrier()
    t0 = time.perf_counter_ns()
    if limit_s is None:
        results = [call() for call in calls]
    else:
        results = _until_deadline(calls, t0 + int(limit_s * 1e9), comm if mode == "collective" else None)
    if handle is not None and operation == "write":
        handle.close()  # flush, close and fsync: inside the clock
    own = (time.perf_counter_ns() - t0) / 1e9
    comm.Barrier()
    elapsed = (time.perf_counter_ns() - t0) / 1e9
    io = pagecache.io_counters() - before
    if handle is not None and operation == "read":
        handle.close()
    done = min(len(results), len(regions))  # this rank's accesses made before any stop
    stopped = bool(comm.allreduce(len(results) < len(calls), op=MPI.LOR))
    seconds = comm.allreduce(elapsed, op=MPI.MAX)
    fastest = comm.allreduce(own if taking_part else np.inf, op=MPI.MIN)
    device_read = comm.allreduce(max(io.device_read, 0), op=MPI.SUM)
    units_done = comm.allreduce(sum(count for _, count in mine[:done]), op=MPI.SUM)
    # checked after the clock: what was read, or what the write left in the store (read back
    # by every rank, each its own accesses); a stopped pass, the accesses it made
    regions, buffers = regions[:done], buffers[:done]
    if operation == "read":
        found = [b if value is None else np.asarray(value) for b, value in zip(buffers, results, strict=False)]
    else:
        comm.Barrier()
        found = _read_back(backend.open_pass(target, ctx["name"], "independent", comm, option), regions, buffers)
    problems = []
    for i, (r, values) in enumerate(zip(regions, found, strict=True)):
        expected = source.region(r) if operation == "read" else buffers[i]
        bad = int(np.count_nonzero(values != expected))
        if bad:
            start, count = mine[i]
            problems.append(
                f"{ctx['path']}: rank {rank}, mode {mode}, {operation} access {i} ({ctx['units']} "
                f"{start}-{start + count - 1}, {k} per access, {processes} processes, repeat {repeat}): "
                f"{bad} values differ from the data source"
            )
    _check(comm, problems)
    if operation == "write":
        comm.Barrier()
        if rank == 0 and os.path.lexists(target):
            backend.remove(target)
    if rank != 0:
        return None
    raw = int(np.prod(shape)) * dtype.itemsize
    return {
        "case": "parallel",
        "operation": operation,
        "mode": mode,
        "processes": processes,
        "units": ctx["units"],
        "units_per_access": k,
        "remainder_rank": remainder_rank(mode, ctx["remainder"], size) if mode != "serial" else 0,
        "accesses": len(accesses(shape[axis], k)),
        "units_accessed": units_done,
        "repeat": repeat,
        "selection": "whole dataset",
        "bytes_selected": raw,
        "seconds": seconds,
        "stopped": stopped,
        "limit_s": float("nan") if limit_s is None else float(limit_s),
        "bytes_per_s": float("nan") if stopped else raw / seconds,
        "fastest_rank_s": fastest,
        "device_read_bytes": device_read,
        "resident_fraction_before_evict": resident_before,
        "rank_nodes": ctx["nodes"],
        "tasks_per_node": ctx["tasks_per_node"],
        "mpi_hints": hints_words(hints),
        "mpi_hints_in_effect": hints_words({key: in_effect[key] for key in hints if key in in_effect}),
        "verified": True,
        "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
        **option.columns(),
        **ctx["versions"],
    }


def _until_deadline(calls, deadline_ns: int, comm=None) -> list:
    """Make the calls in order until the clock passes the deadline (the pass's ``limit_s``
    after its start); their results. ``comm``: in collective mode the ranks agree after each
    call whether any is past it, so that all stop at the same collective call."""
    from mpi4py import MPI

    results = []
    for call in calls:
        results.append(call())
        late = time.perf_counter_ns() > deadline_ns
        if comm is not None:
            late = comm.allreduce(late, op=MPI.LOR)
        if late:
            break
    return results


def _read_back(handle, regions, written) -> list[np.ndarray]:
    """What a store holds in each region (after a write pass), through a rank's own handle."""
    found = []
    for r, values in zip(regions, written, strict=True):
        out = np.empty_like(values)
        value = handle.prepare(r, out)()
        found.append(out if value is None else np.asarray(value))
    handle.close()
    return found


def planned(settings: dict, size: int, first_run: bool) -> list[tuple[str, tuple]]:
    """The passes of one MPI run of ``size`` ranks, in the order they run (repeats outermost,
    then read options, operations, k and modes; serial passes only in the ``first_run``):
    ``(key, (repeat, option, operation, k, mode))``. A key names a pass across attempts of the
    job, so that a rerun skips the passes a killed attempt finished."""
    modes = [m for m in settings["modes"] if m != "serial" or first_run]
    ks = settings["units_per_access"]  # per operation, or one list for both
    per_operation = ks if isinstance(ks, dict) else {op: ks for op in settings["operations"]}
    options = max(1, len(settings["read_options"]))
    passes = []
    for repeat in range(int(settings["repeats"])):
        for option in range(options):
            for operation in settings["operations"]:
                for k in per_operation[operation]:
                    for mode in modes:
                        passes.append(
                            (
                                pass_key(size, option, operation, int(k), mode, repeat),
                                (repeat, option, operation, int(k), mode),
                            )
                        )
    return passes


def pass_key(size: int, option: int, operation: str, k: int, mode: str, repeat: int | None = None) -> str:
    """A pass's key; without ``repeat``, its variant's (every repeat of it)."""
    variant = f"{size}|{option}|{operation}|{k}|{mode}"
    return variant if repeat is None else f"{variant}|{repeat}"


def run(settings: dict, path: str, comm, first_run: bool = True) -> list[dict]:
    """Every operation, k and mode of the settings on one store, with the communicator's size
    as the process count (serial passes only in the ``first_run``); rows on rank 0.

    With ``settings["checkpoint"]``, rank 0 appends each pass's row to that file as the pass
    ends (:class:`Checkpoint`), and the passes it already holds (``settings["done"]``) are
    skipped. A pass stopped at ``limit_s`` stops its variant: its later repeats are not run."""
    from mpi4py import MPI

    from h5sweep import backends
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.datasources import make_source

    backend = backends.load(settings["backend"])
    spec = backends.spec(settings["backend"])
    dataset = settings["dataset"]
    layout = Layout.from_id(settings["layout"]["id"])
    ctx = {
        "comm": comm,
        "backend": backend,
        "path": path,
        "name": dataset["name"],
        "dataset": dataset,
        "shape": tuple(int(n) for n in dataset["shape"]),
        "axis": UNITS[settings["units"]][1],
        "units": settings["units"],
        "remainder": settings["remainder"],
        "layout": layout,
        "compression": parse_compression(settings["compression"]),
        "source": make_source(dataset, layout),
        "nodes": len(set(comm.allgather(MPI.Get_processor_name()))),
        "versions": backend.versions(),
        "limit_s": settings.get("limit_s"),
        "hints": settings.get("hints") or {},
        "tasks_per_node": settings.get("tasks_per_node"),
    }
    options = [spec.option_from_settings(o) for o in settings["read_options"]] or [backend.default_read_option]
    size = comm.Get_size()
    done, stopped = set(settings.get("done", [])), set(settings.get("stopped", []))
    todo = [(key, p) for key, p in planned(settings, size, first_run) if key not in done]
    # untimed: one rank per node reads the store into its page cache, so that the first
    # eviction frees the store's own pages just before the first read, as later ones do
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    if node.Get_rank() == 0 and any(p[2] == "read" for _, p in todo):
        pagecache.prime(backend.paths_to_evict(path))
    node.Free()
    comm.Barrier()
    window = json.loads(os.environ.get("H5SWEEP_WINDOW", "{}"))  # the runner's timed window, as it opened
    checkpoint = settings.get("checkpoint")
    rows = []
    for key, (repeat, option, operation, k, mode) in todo:
        variant = pass_key(size, option, operation, k, mode)
        if variant in stopped:
            continue
        row = one_pass(ctx, operation, mode, k, options[option], repeat)
        if row is not None and not _runner_alive():
            # the job that holds the node's timed window is gone (killed): a pass from now on
            # would not be exclusive, and this one ended after it; neither is recorded
            comm.Abort(1)
        if row is not None:
            row.update(window)
            rows.append(row)
            if checkpoint:
                Checkpoint.append(checkpoint, {"pass": key, "row": row})
        if row is not None and row["stopped"]:
            stopped.add(variant)
        stopped = set(comm.bcast(sorted(stopped), root=0))
    return rows


def _runner_alive() -> bool:
    """Whether the job that started this MPI run is still running (where it runs on this
    node: ``H5SWEEP_RUNNER`` is its host and process id)."""
    host, _, pid = os.environ.get("H5SWEEP_RUNNER", "").rpartition(":")
    if not pid or host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _die_with_parent() -> None:
    """On Linux, end this rank when the process that started it (mpirun, or srun's step
    daemon) ends, as a killed job's ranks should; and at once if it has already ended."""
    import ctypes
    import signal

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


class Checkpoint:
    """The passes a job has finished, kept beside its record until the record is written, so
    that a killed job (its allocation's time limit, a node failure) loses at most the pass it
    was in: a JSON line per finished pass (``{"pass": key, "row": ...}``), and one per MPI run
    that ended (``{"window": ...}``: its timed window's columns). The first line is the
    fingerprint of the job's settings; a checkpoint of other settings is started afresh."""

    def __init__(self, path: str, fingerprint: str):
        self.path, self.fingerprint = path, fingerprint
        self.passes: dict[str, dict] = {}
        self.windows: dict[float, dict] = {}
        lines = Path(path).read_text(encoding="utf-8").splitlines() if os.path.exists(path) else []
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:  # the line a kill cut short
                break
        if not entries or entries[0].get("fingerprint") != fingerprint:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps({"fingerprint": fingerprint}) + "\n", encoding="utf-8")
            entries = []
        for entry in entries[1:]:
            if "pass" in entry:
                self.passes[entry["pass"]] = entry["row"]
            elif "window" in entry:
                self.windows[entry["window"]["window_opened_at"]] = entry["window"]
        if entries and len(entries) < len(lines):  # drop the cut line before appending
            Path(path).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")

    @staticmethod
    def append(path: str, entry: dict) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, default=_plain) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def stopped_variants(self) -> list[str]:
        return sorted({key.rsplit("|", 1)[0] for key, row in self.passes.items() if row.get("stopped")})

    def rows(self) -> list[dict]:
        """Every finished pass's row, with its MPI run's window where that run ended (a killed
        run's window has no closing time)."""
        return [{**row, **self.windows.get(row.get("window_opened_at"), {})} for row in self.passes.values()]


def _plain(value):
    """JSON for what a row holds beyond Python's own types: NumPy scalars."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} in a row")


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
        "import sys; from h5sweep.cases import parallel; sys.exit(parallel.main(sys.argv[1:]))",
    ]


def variant_label(row: dict) -> str:
    reader = f", {row['reader']}" if row.get("reader") and row["reader"] != "h5py" else ""
    return (
        f"{row['operation']} {row['mode']}, {row['processes']} processes, "
        f"{row['units_per_access']} {row['units']} per access{reader}"
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
                opened = {k: v for k, v in window.columns().items() if k != "window_closed_at"}
                env = {
                    **os.environ,
                    "H5SWEEP_WINDOW": json.dumps({**opened, "window_steal_s": float("nan")}),
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
    return [{**row, "variant": variant_label(row), "slurm_tasks": tasks_} for row in rows]


def main(argv: list[str]) -> int:
    from mpi4py import MPI

    from h5sweep.measure.records import write_table

    _die_with_parent()
    first = "--first" in argv
    settings_path, store, record = [a for a in argv if a != "--first"]
    with open(settings_path, encoding="utf-8") as f:
        settings = json.load(f)
    rows = run(settings, store, MPI.COMM_WORLD, first_run=first)
    if MPI.COMM_WORLD.Get_rank() == 0:
        write_table(rows, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
