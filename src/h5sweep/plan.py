"""What a sweep will cost before it runs: job time, wall time, and peak disk per filesystem.

The time model is deliberately simple (bytes over a rate, plus a cost per chunk); it is for
sizing an allocation, and the cluster limits in :mod:`h5sweep.resources` are derived from it
with a safety factor. Disk is bounded by construction: each running job holds at most one
test file, and a file is removed as soon as it has been queried.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from h5sweep.cases import CASE_SPECS
from h5sweep.filesystems import mount_info

MB = 1_000_000
# Rates of this project's reference machine (2 cores, ext4 on a virtual disk); see bench/.
STANDARD_WRITE_BYTES_PER_S = {"none": 600 * MB, "filtered": 70 * MB}
FAST_WRITE_BYTES_PER_S = {"none": 1000 * MB, "filtered": 70 * MB}  # filtered: per thread
MAKE_DATA_BYTES_PER_S = 150 * MB
READ_BYTES_PER_S = {"none": 2000 * MB, "filtered": 300 * MB}  # decompression bound
SECONDS_PER_WRITTEN_CHUNK = 12e-6
SECONDS_PER_READ_CHUNK = 15e-6
SECONDS_PER_JOB = 2.0  # starting Python and the packages
SECONDS_PER_REOPEN = 0.003  # close, evict and reopen a file before a selection (cold: every)
DEVICE_READ_BYTES_PER_S = 200 * MB  # a cold read from a block device, of the chunks' raw size
CHUNK_INDEX_BYTES = 64  # file metadata per chunk (B-tree entries), an upper estimate
RECORD_BYTES = 600  # one measurement row in Parquet, about
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")  # no device below: a cold read is a memory read


def file_bytes_bound(sweep, layout) -> int:
    """Largest size a test file of ``layout`` can have: every chunk allocated, uncompressed."""
    data = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
    return data + layout.n_chunks(sweep.shape) * CHUNK_INDEX_BYTES + 64 * 1024


def write_case_seconds(sweep, layout, compression) -> float:
    """The timed writes of the write case (every variant and repeat): serial windows."""
    kind = "none" if compression.is_none else "filtered"
    allocated = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
    standard = allocated / STANDARD_WRITE_BYTES_PER_S[kind] + layout.n_chunks(sweep.shape) * SECONDS_PER_WRITTEN_CHUNK
    return len(sweep.write_case.variants()) * sweep.write_case.repeats * standard


def generate_seconds(sweep, layout, compression, threads: int = 1) -> float:
    """A generate job: making the data, the timed writes, and the fast query file where the
    write case leaves none to query."""
    seconds = SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S + write_case_seconds(sweep, layout, compression)
    if not sweep.write_case.leaves_query_file:
        kind = "none" if compression.is_none else "filtered"
        allocated = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
        fast_rate = FAST_WRITE_BYTES_PER_S[kind] * (threads if kind == "filtered" else 1)
        seconds += allocated / fast_rate + layout.n_chunks(sweep.shape) * SECONDS_PER_WRITTEN_CHUNK
    return seconds


def read_seconds(sweep, layout, compression, from_device: bool = True) -> tuple[float, float]:
    """(timed, checking) seconds of a query job's reads: every case, visiting policy, chunk
    cache and cold mode; ``cold: every`` adds a close, eviction and reopen per selection and,
    on a filesystem with a device (``from_device``), reading what it touches from there."""
    itemsize = sweep.dtype.itemsize
    kind = "none" if compression.is_none else "filtered"
    variants = len(sweep.policies) * len(sweep.chunk_caches)
    timed = check = 0.0
    for case in sweep.read_cases:
        size = case.size(sweep.shape)
        if layout.chunk_shape is None:
            touched, chunks = math.prod(size) * itemsize, 0
        else:
            chunks = layout.chunks_touched(tuple(0 for _ in size), size)
            touched = chunks * layout.chunk_bytes(itemsize)
        read = touched / READ_BYTES_PER_S[kind] + chunks * SECONDS_PER_READ_CHUNK
        for cold in case.cold_modes:
            first_access = SECONDS_PER_REOPEN + (touched / DEVICE_READ_BYTES_PER_S if from_device else 0.0)
            timed += variants * case.repeats * (read + (first_access if cold == "every" else 0.0))
        check += variants * len(case.cold_modes) * case.repeats * math.prod(size) * itemsize / MAKE_DATA_BYTES_PER_S
    return timed, check


def query_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    timed, check = read_seconds(sweep, layout, compression, from_device)
    return SECONDS_PER_JOB + timed + check


SECONDS_PER_DATASET = 2e-4  # creating or opening one small dataset (metadata case)


def metadata_seconds(sweep) -> float:
    """The metadata case on one filesystem: per N and repeat, write everything (fsync
    included) and read it back cold, checking it; all timed."""
    case = sweep.metadata
    if case is None:
        return 0.0
    per = sweep.raw_bytes / STANDARD_WRITE_BYTES_PER_S["none"] + sweep.raw_bytes / DEVICE_READ_BYTES_PER_S
    return sum(case.repeats * (per + 2 * n * SECONDS_PER_DATASET) for n in case.datasets)


def iosize_seconds(sweep) -> float:
    """The I/O size case on one filesystem: per request size, API and repeat, a write and two
    reads (cold, warm) of the dataset's bytes; all timed."""
    case = sweep.iosize
    if case is None:
        return 0.0
    raw = sweep.raw_bytes
    per_api = raw / STANDARD_WRITE_BYTES_PER_S["none"] + raw / DEVICE_READ_BYTES_PER_S + raw / READ_BYTES_PER_S["none"]
    calls = sum(3 * math.ceil(raw / min(size, raw)) for size in case.sizes)
    return case.repeats * (2 * len(case.sizes) * per_api + 2 * calls * SECONDS_PER_WRITTEN_CHUNK)


def scaling_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    """The scaling case on one test store: per block, process count and repeat, reading the
    block (from the device first: each process count starts cold) and its variance; timed."""
    case = sweep.scaling
    if case is None:
        return 0.0
    kind = "none" if compression.is_none else "filtered"
    seconds = 0.0
    for slices in case.slices:
        block = sweep.shape[0] * sweep.shape[1] * case.depth(slices, sweep.shape) * sweep.dtype.itemsize
        read = block / READ_BYTES_PER_S[kind] + block / MAKE_DATA_BYTES_PER_S  # decode, then numpy.var
        cold = block / DEVICE_READ_BYTES_PER_S if from_device else 0.0
        seconds += len(case.processes) * (case.repeats * read + cold)
    return seconds


# Each case's cost model, by the name of its spec (h5sweep.cases.spec): (job seconds, timed
# seconds) of one job, for a test store (store scope) or a filesystem (filesystem scope);
# ``from_device`` is false on a filesystem that keeps its files in memory.
def _write_job(sweep, store, from_device):
    return generate_seconds(sweep, store.layout, store.compression), write_case_seconds(
        sweep, store.layout, store.compression
    )


def _read_job(sweep, store, from_device):
    timed, _ = read_seconds(sweep, store.layout, store.compression, from_device)
    return query_seconds(sweep, store.layout, store.compression, from_device), timed


def scaling_job_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    return SECONDS_PER_JOB + scaling_seconds(sweep, layout, compression, from_device)


def _scaling_job(sweep, store, from_device):
    timed = scaling_seconds(sweep, store.layout, store.compression, from_device)
    return scaling_job_seconds(sweep, store.layout, store.compression, from_device), timed


def filesystem_job_seconds(sweep, timed: float) -> float:
    """A once-per-filesystem job: starting, making the data in memory, then its timed work."""
    return SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S + timed


def _filesystem_job(seconds):
    def cost(sweep, filesystem, from_device):
        timed = seconds(sweep)
        return filesystem_job_seconds(sweep, timed), timed

    return cost


JOB_COSTS = {
    "write": _write_job,
    "read": _read_job,
    "scaling": _scaling_job,
    "metadata": _filesystem_job(metadata_seconds),
    "iosize": _filesystem_job(iosize_seconds),
}


def measured_rows(sweep) -> int:
    """Rows the sweep's store jobs record: every write and read, in every variant."""
    reads = sum(c.repeats * len(c.cold_modes) for c in sweep.read_cases) * len(sweep.policies) * len(sweep.chunk_caches)
    writes = sweep.write_case.repeats * len(sweep.write_case.variants())
    return len(sweep.test_files()) * (writes + reads)


def filesystem_case_scratch_bytes(sweep) -> int:
    """Scratch files of the once-per-filesystem cases, which may run beside the store jobs:
    the metadata case's file and the I/O size case's two (HDF5 and raw)."""
    return (sweep.raw_bytes + 64 * 1024 if sweep.metadata else 0) + (2 * sweep.raw_bytes if sweep.iosize else 0)


@dataclass
class FilesystemPlan:
    name: str
    directory: str
    files: int
    largest_file_bytes: int
    peak_bytes: int
    free_bytes: int

    @property
    def fits(self) -> bool:
        return self.peak_bytes <= self.free_bytes


@dataclass
class Plan:
    parallel_jobs: int
    jobs: int
    job_seconds: float
    timed_seconds: float = 0.0  # inside measurement windows, which never overlap on a node
    filesystems: list[FilesystemPlan] = field(default_factory=list)

    @property
    def wall_seconds(self) -> float:
        """Jobs share the cores, but their timed windows run one at a time: the wall time is
        at least the sum of the windows."""
        return max(self.job_seconds / max(1, self.parallel_jobs), self.timed_seconds)

    def describe(self) -> str:
        lines = [
            f"h5sweep plan: {self.jobs} measuring jobs, about {_duration(self.job_seconds)} of job time, "
            f"{_duration(self.timed_seconds)} of it in timed windows (one at a time); "
            f"with {self.parallel_jobs} at once, about {_duration(self.wall_seconds)} wall time",
        ]
        for fs in self.filesystems:
            lines.append(
                f"  {fs.name} ({fs.directory}): {fs.files} test files, largest {_size(fs.largest_file_bytes)}; "
                f"peak disk {_size(fs.peak_bytes)}, free {_size(fs.free_bytes)}"
                + ("" if fs.fits else "  << DOES NOT FIT")
            )
        return "\n".join(lines)


def free_bytes(directory: str) -> int:
    path = Path(directory).absolute()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def make_plan(sweep, parallel_jobs: int, results_dir: str = "results") -> Plan:
    """Jobs, job time and timed time of every case the sweep runs (from the case specs and
    their cost models), and the peak disk of every filesystem."""
    files = sweep.test_files()
    in_memory = {fs.name: mount_info(fs.directory).fs_type in MEMORY_FILESYSTEMS for fs in sweep.filesystems}
    jobs, job_seconds, timed = 0, 0.0, 0.0
    for spec in CASE_SPECS:
        if not spec.enabled(sweep):
            continue
        cost = JOB_COSTS[spec.name]
        if spec.scope == "store":
            places = [(tf, not in_memory[tf.filesystem.name]) for tf in files]
        else:
            places = [(fs, not in_memory[fs.name]) for fs in sweep.filesystems]
        for where, from_device in places:
            job, timed_part = cost(sweep, where, from_device)
            jobs, job_seconds, timed = jobs + 1, job_seconds + job, timed + timed_part
    results_bytes = measured_rows(sweep) * RECORD_BYTES * 2  # raw records and the merged table
    results_dev = _device(results_dir)
    plan = Plan(parallel_jobs=max(1, parallel_jobs), jobs=jobs, job_seconds=job_seconds, timed_seconds=timed)
    for fs in sweep.filesystems:
        mine = [tf for tf in files if tf.filesystem.name == fs.name]
        largest = max(file_bytes_bound(sweep, tf.layout) for tf in mine)
        peak = min(plan.parallel_jobs, len(mine)) * largest + filesystem_case_scratch_bytes(sweep)
        if _device(fs.directory) == results_dev:
            peak += results_bytes
        plan.filesystems.append(
            FilesystemPlan(fs.name, fs.directory, len(mine), largest, peak, free_bytes(fs.directory))
        )
    return plan


def _device(directory: str) -> int:
    path = Path(directory).absolute()
    while not path.exists():
        path = path.parent
    return os.stat(path).st_dev


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
