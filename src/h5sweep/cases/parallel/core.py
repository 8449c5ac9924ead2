"""The parallel case's definition: its settings, checks and the deal of accesses among ranks
(see the package's docstring for the method)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.settings import (
    LAYOUT_KINDS,
    MODES,
    OPERATIONS,
    REMAINDERS,
    SETTINGS,
    STUDY_REMAINDER,
    UNITS,
)
from h5sweep.storage import columns as C
from h5sweep.storage.errors import ConfigError, check_limit_s
from h5sweep.storage.layouts import Layout, Shape

# The units of a pass and the axis they lie along, by the dataset's rank.
DEFAULT_UNITS = {2: "columns", 3: "z_slabs"}
# The MPI environment's Python (make install-mpi); H5SWEEP_MPI_PYTHON overrides it.
MPI_PYTHON = Path(__file__).resolve().parents[4] / ".venv-mpi" / "bin" / "python"
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
    if remainder == "first" or (remainder == STUDY_REMAINDER and mode == "collective"):
        return 0
    return processes - 1


def accesses(units: int, k: int) -> list[tuple[int, int]]:
    """The accesses of a pass, in order along the axis: (first unit, units)."""
    full = [(a * k, k) for a in range(units // k)]
    return full + ([(units // k * k, units % k)] if units % k else [])


def deal(
    units: int, k: int, processes: int, mode: str, remainder: str = STUDY_REMAINDER
) -> list[list[tuple[int, int]]]:
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
    SETTINGS = SETTINGS

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.processes = [int(p) for p in self.settings[PC.PROCESSES]]
        given = self.settings[PC.UNITS_PER_ACCESS]
        # k for every layout, or per layout kind (the study read 1 column of chunked images only)
        by_kind = given if isinstance(given, dict) else {kind: given for kind in LAYOUT_KINDS}
        self.units_by_kind = {kind: [int(k) for k in by_kind.get(kind, [])] for kind in LAYOUT_KINDS}
        # the k of the write passes, of those (all unless given)
        self.write_units = None if "writes" not in by_kind else [int(k) for k in by_kind["writes"]]
        self.modes = list(dict.fromkeys(self.settings["modes"]))
        self.operations = list(dict.fromkeys(self.settings["operations"]))
        self.remainder = str(self.settings["remainder"])
        self.units = self.settings[PC.UNITS_COLUMN]
        self.repeats = int(self.settings["repeats"])
        self.limit_s = self.settings["limit_s"]
        self.tasks_per_node = self.settings[PC.TASKS_PER_NODE]
        self.hints = {str(k): _hint_value(v) for k, v in (self.settings["hints"] or {}).items()}

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
        check_limit_s(f"{key}.limit_s", self.limit_s)
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
        per_kind = isinstance(self.settings[PC.UNITS_PER_ACCESS], dict)
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
            C.LAYOUT: job.settings[C.LAYOUT],
            C.COMPRESSION: job.compression.name,
            C.BACKEND: job.backend,
            "read_options": [o.settings() for o in job.read_options],
            "modes": self.modes_for(backend),
            "operations": self.operations,
            PC.UNITS_COLUMN: self.units,
            PC.UNITS_PER_ACCESS: {op: self.units_for(job.layout, op) for op in self.operations},
            "remainder": self.remainder,
            C.REPEATS: self.repeats,
            C.LIMIT_S: None if self.limit_s is None else float(self.limit_s),
            "hints": self.hints,
            PC.TASKS_PER_NODE: self.tasks_per_node,
        }
