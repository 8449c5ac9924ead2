"""Run the local scaling case: worker processes each read a range of x of the selection and
compute its count, mean and sum of squared deviations; the parent combines them into the
variance of the whole selection (Chan et al.'s pairwise update), timed from handing out the
work to having the combined result. The pool is started before the clock; each worker opens
the file itself (HDF5 handles do not survive a fork).
"""

from __future__ import annotations

import multiprocessing
import time

import h5py
import numpy as np

from h5sweep import pagecache
from h5sweep.cases.scaling import ScalingCase
from h5sweep.datasources import DataSource
from h5sweep.errors import VerificationError
from h5sweep.layouts import Layout
from h5sweep.query import DEFAULT_CACHE, ChunkCache

CONTIGUOUS = Layout(None)
# Check the result against the data source while the selection is at most this large.
VERIFY_LIMIT_BYTES = 64 * 2**20


def _partial_stats(task) -> tuple[int, float, float]:
    path, name, cache_kwargs, region = task
    with h5py.File(path, "r", **cache_kwargs) as f:
        values = f[name][region].astype(np.float64)
    n = values.size
    mean = float(values.mean()) if n else 0.0
    return n, mean, float(((values - mean) ** 2).sum())


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
) -> list[dict]:
    rows = []
    context = multiprocessing.get_context("fork")
    itemsize = source.dtype.itemsize
    for slices in case.slices:
        selections = case.selections(shape, seed, slices)
        for processes in case.processes:
            pagecache.evict(path)  # every process count starts from a cold file
            with context.Pool(processes) as pool:
                pool.map(int, range(processes))  # workers are up before the clock starts
                for repeat, selection in enumerate(selections):
                    (x0, y0, z0), (sx, sy, sz) = selection.start, selection.size
                    tasks = [
                        (
                            path,
                            dataset_name,
                            cache.open_kwargs(),
                            layout.to_storage((slice(a, b), slice(y0, y0 + sy), slice(z0, z0 + sz))),
                        )
                        for a, b in split_x(x0, x0 + sx, processes)
                    ]
                    start = time.perf_counter_ns()
                    variance = combine(pool.map(_partial_stats, tasks))
                    seconds = (time.perf_counter_ns() - start) / 1e9
                    nbytes = selection.nbytes(itemsize)
                    verified = nbytes <= VERIFY_LIMIT_BYTES or repeat == 0
                    if verified:
                        expected = float(np.var(source.region(selection.region).astype(np.float64)))
                        if not np.isclose(variance, expected, rtol=1e-9, atol=1e-9):
                            raise VerificationError(
                                f"{path} case scaling {selection.label} with {processes} processes: variance "
                                f"{variance!r} differs from the data source's {expected!r}"
                            )
                    rows.append(
                        {
                            "case": "scaling",
                            "repeat": repeat,
                            "seconds": seconds,
                            "selection": selection.label,
                            "bytes_selected": nbytes,
                            "processes": processes,
                            "z_slices": sz,
                            "scaling_slices": case.label(slices),
                            "variance": variance,
                            "verified": verified,
                            "chunk_cache_bytes": cache.nbytes,
                            "chunk_cache_slots": cache.slots,
                            "chunk_cache_w0": cache.w0,
                            "variant": f"{case.label(slices)}, {processes} processes",
                        }
                    )
    return rows
