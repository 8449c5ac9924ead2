"""Resources a job needs, computed from the config (used by local runs and cluster profiles)."""

from __future__ import annotations

import math

from h5sweep import backends
from h5sweep.backends import REFERENCE
from h5sweep.cases.engine import VERIFY_BUDGET_BYTES  # the values a query job holds for checking
from h5sweep.cases.write import write_cache_bytes
from h5sweep.measure import rates
from h5sweep.storage import columns as C
from h5sweep.storage.layouts import CONTIGUOUS_WRITE_BLOCK_BYTES
from h5sweep.sweep import plan

MB = 1_000_000


def generate_mem_mb(sweep, layout, attempt: int = 1) -> int:
    """The whole cube in memory, a padded row of chunks being laid out (and its compressed
    copy) for the fast write, the data source's temporaries; more on retry."""
    row = 0
    if layout.chunk_shape is not None:
        gx = layout.chunk_grid(sweep.shape)[0]
        row = layout.allocated_elements(sweep.shape) // gx * sweep.dtype.itemsize
    transposed = sweep.raw_bytes if layout.order != "xyz" else 0  # the fast path's stored copy
    need = sweep.raw_bytes + transposed + 3 * row + 64 * MB + 256 * MB
    if isinstance(sweep.dataset[C.FILL], dict):  # a donor streams: a block, its copy, a slab read
        block = min(sweep.raw_bytes, max(row, CONTIGUOUS_WRITE_BLOCK_BYTES))
        need = 3 * block + 64 * MB + 256 * MB
    return math.ceil(need / MB * (1 + 0.5 * (attempt - 1)))


def query_mem_mb(sweep, attempt: int = 1) -> int:
    """Values held for checking (up to the budget, plus one selection), the buffer and the
    expected values, the chunk index, and the interpreter with its packages."""
    largest = max((math.prod(c.size(sweep.shape)) for c in sweep.read_cases), default=0) * sweep.dtype.itemsize
    chunks = max(layout.n_chunks(sweep.shape) for layout in sweep.layouts)
    need = VERIFY_BUDGET_BYTES + 3 * largest + 8 * chunks + 256 * MB
    return math.ceil(need / MB * (1 + 0.5 * (attempt - 1)))


# Limits are the plan's expected time with a wide margin: a job that is given too little
# time is killed and resubmitted, which costs more than waiting in the queue a little longer.
SAFETY = 3
MIN_RUNTIME_MIN = 5


def _minutes(seconds: float, attempt: int) -> int:
    return max(MIN_RUNTIME_MIN, math.ceil(SAFETY * seconds / 60)) * attempt


def generate_runtime_min(
    sweep, layout, compression, attempt: int = 1, backend: str = REFERENCE, threads: int = 1
) -> int:
    """Minutes for a generate job: the data, the timed writes, the query file; never less
    than its writes may run before their limits stop them (``cases.write.limit_s``), so
    that the scheduler does not kill a job the limits would have let finish."""
    spec = backends.spec(backend)
    cache = write_cache_bytes(sweep, spec)
    seconds = rates.generate_seconds(sweep, layout, compression, threads, spec.encodes_chunks(compression), cache)
    case = sweep.write_case
    limits = case.limits(sweep, layout, compression, cache)
    limited = seconds - rates.write_case_seconds(sweep, layout, compression, cache)
    limited += case.repeats * sum(limits[strategy] for strategy, _ in case.variants())
    return max(_minutes(seconds, attempt), math.ceil(limited / 60 + 1) * attempt)


def write_race_mem_mb(sweep, attempt: int = 1) -> int:
    """The write race's memory: one store's timed write at a time (a generate job's, at most)."""
    return max(generate_mem_mb(sweep, layout, attempt) for layout in sweep.layouts)


def write_race_runtime_min(sweep, filesystem, attempt: int = 1) -> int:
    """Minutes for the write race of a filesystem: at most every store's repeats beyond the
    minimum, each within its limit, and each store's data made again for each."""
    case = sweep.write_case
    extra = case.repeats - case.min_repeats
    seconds = limited = 0.0
    for tf in sweep.test_files():
        if tf.filesystem.name != filesystem.name:
            continue
        cache = write_cache_bytes(sweep, tf.backend)
        per_repeat = rates.write_case_seconds(sweep, tf.layout, tf.compression, cache) / case.repeats
        seconds += extra * (per_repeat + sweep.raw_bytes / rates.MAKE_DATA_BYTES_PER_S)
        limits = case.limits(sweep, tf.layout, tf.compression, cache)
        limited += extra * sum(limits[strategy] for strategy, _ in case.variants())
    return max(_minutes(seconds + rates.SECONDS_PER_JOB, attempt), math.ceil(limited / 60 + 1) * attempt)


def query_runtime_min(sweep, layout, compression, attempt: int = 1, backend: str = REFERENCE) -> int:
    """Minutes for a query job: every selection, reading and checking all it touches."""
    return _minutes(rates.query_seconds(sweep, layout, compression, backend=backend), attempt)


def interleaved_query_runtime_min(sweep, filesystem, attempt: int = 1) -> int:
    """Minutes for the interleaved query job of a filesystem: every store's reads."""
    stores = [tf for tf in sweep.test_files() if tf.filesystem.name == filesystem.name]
    seconds = sum(rates.query_seconds(sweep, tf.layout, tf.compression, backend=tf.backend.name) for tf in stores)
    return _minutes(seconds, attempt)


def case_runtime_min(sweep, spec, where, attempt: int = 1) -> int:
    """Minutes for the job of a case with a job of its own (``where``: its test store, an
    object with .layout and .compression, or its filesystem), from the case's time model."""
    job_seconds, _ = spec.job_cost(sweep, where, True)
    return _minutes(job_seconds, attempt)


def case_mem_mb(sweep, spec, attempt: int = 1) -> int:
    """Memory for the job of a case with a job of its own, as the case declares it."""
    return math.ceil(spec.mem_mb(sweep) * (1 + 0.5 * (attempt - 1)))


def aggregate_mem_mb(sweep, attempt: int = 1) -> int:
    """Every measured row in pandas (about 2 kB each with its ~70 columns, twice while merging)."""
    need = 2 * 2000 * plan.measured_rows(sweep) + 512 * MB
    return math.ceil(need / MB * (1 + 0.5 * (attempt - 1)))


def aggregate_runtime_min(sweep, attempt: int = 1) -> int:
    """Reading every record and summarizing: about 50,000 rows a second, interval by interval."""
    return _minutes(rates.aggregate_seconds(plan.measured_rows(sweep), len(sweep.test_files())), attempt)
