"""Run the local scaling case: worker processes each read a range of x of the selection and
compute its count, mean and sum of squared deviations; the parent combines them into the
variance of the whole selection (Chan et al.'s pairwise update), timed from handing out the
work to the moment the last worker has its partial result. The pool is started before the
clock; each worker opens the file itself (HDF5 handles do not survive a fork), and checksums
what it read after its clock stops.
"""

from __future__ import annotations

import multiprocessing
import time
import zlib

import numpy as np

from h5sweep import backends
from h5sweep.backends import HDF5
from h5sweep.backends.chunk_cache import DEFAULT_CACHE, ChunkCache
from h5sweep.cases.scaling import ScalingCase
from h5sweep.errors import VerificationError
from h5sweep.measure import pagecache
from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.measure.timing import gc_paused
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.layouts import Layout

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
                            "case": "scaling",
                            "repeat": repeat,
                            "seconds": seconds,
                            "selection": selection.label,
                            "bytes_selected": selection.nbytes(itemsize),
                            "processes": processes,
                            "z_slices": sz,
                            "scaling_slices": case.label(slices),
                            "variance": variance,
                            "verified": True,
                            "resident_fraction_before_evict": resident_before,
                            **cache.columns(),
                            "variant": f"{case.label(slices)}, {processes} processes",
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
