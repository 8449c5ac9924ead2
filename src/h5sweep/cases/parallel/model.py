"""The parallel case's time and memory model: what the plan counts for its jobs."""

from __future__ import annotations

import functools
import math

from h5sweep.cases.parallel.core import SECONDS_PER_LAUNCH, SECONDS_PER_PASS, accesses, region
from h5sweep.measure import rates
from h5sweep.storage.layouts import Layout, Shape

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
