"""Local parallel scaling (the OpenMSI study's): ``numpy.var`` over a block of z-slices,
split along x across 1...N processes, each reading its part of the file.

Settings: ``processes`` (process counts), ``slices`` (each a fraction of z such as 0.2, or a
number of slices such as 25), ``repeats``. The z position of each repeat is drawn from the
seed, the same for every layout.

The runner (:func:`measure`, in jobs only): worker processes each read a range of x of the selection and
compute its count, mean and sum of squared deviations; the parent combines them into the
variance of the whole selection (Chan et al.'s pairwise update), timed from handing out the
work to the moment the last worker has its partial result. The pool is started before the
clock; each worker opens the file itself (HDF5 handles do not survive a fork), and checksums
what it read after its clock stops.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import zlib

import numpy as np

from h5sweep import backends
from h5sweep.backends import HDF5
from h5sweep.backends.chunk_cache import DEFAULT_CACHE, ChunkCache
from h5sweep.cases.scaling import columns as SC
from h5sweep.cases.scaling import columns as scaling_columns  # noqa: F401 - registers the columns it adds
from h5sweep.kit.spec import CaseSpec, Figure
from h5sweep.measure import pagecache, rates
from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.measure.timing import gc_paused
from h5sweep.storage import columns as C
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.layouts import Layout, Shape
from h5sweep.storage.selections import Selection, case_rng, random_boxes


class ScalingCase:
    name = "scaling"
    description = "numpy.var over z-slices, split along x across processes"
    SETTINGS = Block(
        "scaling",
        "Local parallel scaling (OpenMSI): numpy.var over z-slices [:, :, z0:z0+n], split along x across processes.",
        (
            Setting(
                SC.PROCESSES,
                "array",
                [1, 2],
                "Process counts to run with (each from 1 to dataset.shape[0]).",
                {"minItems": 1, "items": {"type": "integer", "minimum": 1}},
            ),
            Setting(
                "slices",
                "array",
                [0.2, 25],
                "Blocks of z-slices: a fraction of z (0.2 = 20% as in the study) or a number of slices (25).",
                {"minItems": 1, "items": {"type": "number", "exclusiveMinimum": 0}},
            ),
            Setting("repeats", "integer", 10, "Repeats per process count and block (random z0).", {"minimum": 1}),
        ),
    )

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.repeats = int(self.settings["repeats"])
        self.processes = [int(p) for p in self.settings[SC.PROCESSES]]
        self.slices = list(self.settings["slices"])

    @staticmethod
    def is_fraction(slices) -> bool:
        return isinstance(slices, float) and 0 < slices <= 1

    def depth(self, slices, shape: Shape) -> int:
        """Number of z-slices of a ``slices`` setting (a fraction of z, or a count)."""
        if self.is_fraction(slices):
            return max(1, round(slices * shape[2]))
        return int(slices)

    @classmethod
    def label(cls, slices) -> str:
        return f"{slices:g} of z" if cls.is_fraction(slices) else f"{int(slices)} slices"

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        key = "cases.scaling"
        if self.repeats < 1:
            raise ConfigError(f"{key}.repeats", self.repeats, "must be at least 1")
        for i, p in enumerate(self.processes):
            if not 1 <= p <= shape[0]:
                raise ConfigError(
                    f"{key}.processes[{i}]", p, f"must be 1 to dataset.shape[0]={shape[0]} (work is split along x)"
                )
        for i, s in enumerate(self.slices):
            depth = self.depth(s, shape)
            if isinstance(s, float) and s > 1 and s != int(s):
                raise ConfigError(f"{key}.slices[{i}]", s, "a fraction of z must be at most 1, a count whole")
            if not 1 <= depth <= shape[2]:
                raise ConfigError(f"{key}.slices[{i}]", s, f"selects {depth} z-slices of dataset.shape[2]={shape[2]}")

    def selections(self, shape: Shape, seed: int, slices) -> list[Selection]:
        size = (shape[0], shape[1], self.depth(slices, shape))
        return random_boxes(case_rng(seed, f"{self.name}/{slices}"), shape, size, self.repeats)


def timed_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    """Per block, process count and repeat: reading the block (from the device first: each
    process count starts cold) and its variance; timed."""
    case = sweep.scaling
    seconds = 0.0
    for slices in case.slices:
        block = sweep.shape[0] * sweep.shape[1] * case.depth(slices, sweep.shape) * sweep.dtype.itemsize
        read = block / rates.read_rate(compression) + block / rates.MAKE_DATA_BYTES_PER_S
        cold = block / rates.DEVICE_READ_BYTES_PER_S if from_device else 0.0
        seconds += len(case.processes) * (case.repeats * read + cold)
    return seconds


def memory_mb(sweep) -> int:
    """The largest block in the workers (as read and as float64) and in the parent (the data
    source's copy and its float64 for the variance), and each worker's interpreter."""
    case = sweep.scaling
    itemsize = sweep.dtype.itemsize
    block = max(sweep.shape[0] * sweep.shape[1] * case.depth(s, sweep.shape) for s in case.slices) * itemsize
    return -(-2 * block * (1 + 8 // itemsize) // rates.MB) + 64 * max(case.processes) + 256


FIGURE = Figure("scaling", "scaling-{filesystem}", "Local scaling", module="h5sweep.cases.scaling.figures")


def _lossless_only(case, grid) -> None:
    """The scaling case checks its values exactly: a lossy codec is refused."""
    for i, comp in enumerate(grid.compressions):
        if not comp.lossless:
            raise ConfigError(
                f"compression[{i}]", comp.name, "is lossy, and the scaling case checks its values exactly"
            )


SPEC = CaseSpec(
    name="scaling",
    scope="store",
    stage="scaling",
    # and the cores the job ran on, carried into the summary for the local-scaling finding
    variant_columns=(SC.PROCESSES, SC.SCALING_SLICES, SC.Z_SLICES, SC.CORES),
    enabled=lambda sweep: sweep.scaling is not None,
    figures=lambda sweep: [FIGURE.name()],
    job_cost=rates.store_job(timed_seconds),
    runner="h5sweep.cases.scaling:measure",
    mem_mb=memory_mb,
    threads=lambda sweep: max(sweep.scaling.processes),
    backends=(HDF5,),  # its workers read through h5py
    plots=(FIGURE,),
    findings="h5sweep.cases.scaling.findings:FINDINGS",
    settings_type=ScalingCase,
    check_grid=_lossless_only,
)


CONTIGUOUS = Layout(None)


def _partial_stats(task) -> tuple[int, float, float, int, int]:
    """A worker's share: read its region, compute (count, mean, M2). Returns also when that
    was done (``perf_counter_ns``, one clock for all processes of the node) and, after
    that, a CRC-32 of the values read, so the parent checks them outside the timed part."""
    backend_name, path, name, cache, region, dtype = task
    raw = np.empty(tuple(r.stop - r.start for r in region), dtype=dtype)
    store = backends.load(backend_name).open_for_reads(path, name, cache)
    try:
        store.prepare(tuple(r.start for r in region), raw)()
    finally:
        store.close()
    values = raw.astype(np.float64)
    n = values.size
    mean = float(values.mean()) if n else 0.0
    m2 = float(((values - mean) ** 2).sum())
    done = time.perf_counter_ns()
    return n, mean, m2, done, zlib.crc32(np.ascontiguousarray(raw).tobytes())


def combine(parts: list[tuple[int, float, float]]) -> float:
    """Population variance of the union of parts given as (count, mean, M2)."""
    n, mean, m2 = 0, 0.0, 0.0
    for nb, mb, m2b in parts:
        if nb == 0:
            continue
        delta = mb - mean
        total = n + nb
        mean += delta * nb / total
        m2 += m2b + delta * delta * n * nb / total
        n = total
    return m2 / n if n else float("nan")


def split_x(x0: int, x1: int, parts: int) -> list[tuple[int, int]]:
    edges = np.linspace(x0, x1, parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def run_scaling(
    path: str,
    case: ScalingCase,
    shape: tuple,
    seed: int,
    source: DataSource,
    cache: ChunkCache = DEFAULT_CACHE,
    dataset_name: str = "data",
    layout: Layout = CONTIGUOUS,
    backend: str = HDF5,
) -> list[dict]:
    """Time the variance of each selection across 1..N worker processes; each run is timed
    from handing out the work to the last worker's partial result, inside the node's measurement
    window. Every worker's values are checked (CRC-32 of what it read against the data
    source) after the window, and the variance against the data source's."""
    rows = []
    cores = len(os.sched_getaffinity(0))  # the CPUs the workers may run on
    context = multiprocessing.get_context("fork")
    itemsize = source.dtype.itemsize
    paths = backends.load(backend).paths_to_evict(path)
    with untimed_work():  # the first eviction frees the store's own pages, as later ones do
        pagecache.prime(paths)
    for slices in case.slices:
        selections = case.selections(shape, seed, slices)
        for processes in case.processes:
            # workers start before the clock; they drop the job's inherited lock (windows.py)
            with context.Pool(processes) as pool:
                pool.map(int, range(processes))  # workers are up before the clock starts
                resident_before = pagecache.resident_fraction_of(paths)
                for each in paths:  # every process count starts cold
                    pagecache.evict(each)
                for repeat, selection in enumerate(selections):
                    (x0, y0, z0), (sx, sy, sz) = selection.start, selection.size
                    parts = [
                        (slice(a, b), slice(y0, y0 + sy), slice(z0, z0 + sz))
                        for a, b in split_x(x0, x0 + sx, processes)
                    ]
                    tasks = [
                        (backend, path, dataset_name, cache, layout.to_storage(part), source.dtype.str)
                        for part in parts
                    ]
                    with timed_window() as window, gc_paused():
                        start = time.perf_counter_ns()
                        results = pool.map(_partial_stats, tasks)
                        variance = combine([r[:3] for r in results])
                        seconds = (max(r[3] for r in results) - start) / 1e9
                    with untimed_work():
                        _verify(path, selection, processes, parts, results, variance, source, layout)
                    rows.append(
                        {
                            C.CASE: "scaling",
                            C.REPEAT: repeat,
                            C.SECONDS: seconds,
                            C.SELECTION: selection.label,
                            C.BYTES_SELECTED: selection.nbytes(itemsize),
                            SC.PROCESSES: processes,
                            SC.Z_SLICES: sz,
                            SC.SCALING_SLICES: case.label(slices),
                            SC.VARIANCE: variance,
                            SC.VERIFIED: True,
                            SC.CORES: cores,
                            C.RESIDENT_FRACTION_BEFORE_EVICT: resident_before,
                            **cache.columns(),
                            C.VARIANT: f"{case.label(slices)}, {processes} processes",
                            **window.columns(),
                        }
                    )
    return rows


def _verify(path, selection, processes, parts, results, variance, source, layout) -> None:
    """Every worker's values against the data source, and the combined variance."""
    where = f"{path} case scaling {selection.label} with {processes} processes"
    for part, result in zip(parts, results, strict=True):
        expected = np.ascontiguousarray(source.region(part).transpose(layout.axes))
        if zlib.crc32(expected.tobytes()) != result[4]:
            label = "[" + ", ".join(f"{s.start}:{s.stop}" for s in part) + "]"
            raise VerificationError(f"{where}: the values a worker read at {label} differ from the data source")
    expected = float(np.var(source.region(selection.region).astype(np.float64)))
    if not np.isclose(variance, expected, rtol=1e-9, atol=1e-9):
        raise VerificationError(f"{where}: variance {variance!r} differs from the data source's {expected!r}")


def measure(job, backend, store_path: str, source: DataSource) -> list[dict]:
    """The case's runner (its spec's ``runner``): the scaling case on one test store."""
    case = job.optional_case("scaling")
    return run_scaling(
        store_path, case, job.shape, job.seed, source, job.chunk_caches[0], job.dataset_name, job.layout, backend.name
    )
