"""Resources a job needs, computed from the config (used by local runs and cluster profiles)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from h5sweep import backends
from h5sweep.backends import REFERENCE
from h5sweep.cases.write import rest_seconds, write_cache_bytes
from h5sweep.measure import rates
from h5sweep.measure.engine import VERIFY_BUDGET_BYTES  # the values a query job holds for checking
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


# A job asks twice its planned time (never under MIN_RUNTIME_MIN minutes); a job the scheduler
# stops at its limit is submitted again (the profile's retries), asking attempt x as much, and
# from its second attempt on at least what its timed writes may take before their own limits
# stop them (cases.write.limit_s): the retries are the stated margin beyond 2x.
SAFETY = 2
MIN_RUNTIME_MIN = 5


def _minutes(seconds: float, attempt: int) -> int:
    return max(MIN_RUNTIME_MIN, math.ceil(SAFETY * seconds / 60)) * attempt


def generate_runtime_min(
    sweep, layout, compression, attempt: int = 1, backend: str = REFERENCE, threads: int = 1
) -> int:
    """Minutes for a generate job: the data, the timed writes, the query file; on a retry
    never less than its writes may run before their limits stop them (``cases.write.limit_s``),
    so that the scheduler does not stop again a job the limits would have let finish."""
    spec = backends.spec(backend)
    cache = write_cache_bytes(sweep, spec)
    seconds = rates.generate_seconds(sweep, layout, compression, threads, spec.encodes_chunks(compression), cache)
    case = sweep.write_case
    limits = case.limits(sweep, layout, compression, cache)
    limited = seconds - rates.write_case_seconds(sweep, layout, compression, cache)
    limited += case.repeats * sum(limits[strategy] for strategy, _ in case.variants())
    return _with_limits(_minutes(seconds, attempt), limited, attempt)


def _with_limits(minutes: int, limited_seconds: float, attempt: int) -> int:
    """A retry's minutes: at least what the timed writes may take before their limits."""
    return minutes if attempt == 1 else max(minutes, math.ceil(limited_seconds / 60 + 1) * attempt)


def write_race_mem_mb(sweep, attempt: int = 1) -> int:
    """The write race's memory: one store's timed write at a time (a generate job's, at most)."""
    return max(generate_mem_mb(sweep, layout, attempt) for layout in sweep.layouts)


def write_race_runtime_min(sweep, filesystem, attempt: int = 1) -> int:
    """Minutes for the write race of a filesystem: at most every store's repeats beyond the
    minimum, each within its limit, and each store's data made again for each."""
    seconds, limited = write_race_seconds(sweep, filesystem)
    return _with_limits(_minutes(seconds, attempt), limited, attempt)


def write_race_seconds(sweep, filesystem) -> tuple[float, float]:
    """The write race's planned seconds (every extra repeat of every store, at most, and a rest
    before each variant after the first), and the seconds its writes may take before their
    limits stop them."""
    case = sweep.write_case
    extra = case.repeats - case.min_repeats
    seconds = limited = 0.0
    for tf in sweep.stores():
        if tf.filesystem.name != filesystem.name:
            continue
        cache = write_cache_bytes(sweep, tf.backend)
        per_repeat = rates.write_case_seconds(sweep, tf.layout, tf.compression, cache) / case.repeats
        seconds += extra * (per_repeat + sweep.raw_bytes / rates.MAKE_DATA_BYTES_PER_S)
        limits = case.limits(sweep, tf.layout, tf.compression, cache)
        limited += extra * sum(limits[strategy] for strategy, _ in case.variants())
    return seconds + rates.SECONDS_PER_JOB + rest_seconds(sweep, filesystem), limited


def query_runtime_min(sweep, layout, compression, attempt: int = 1, backend: str = REFERENCE) -> int:
    """Minutes for a query job: every selection, reading and checking all it touches."""
    return _minutes(rates.query_seconds(sweep, layout, compression, backend=backend), attempt)


def interleaved_query_runtime_min(sweep, filesystem, attempt: int = 1) -> int:
    """Minutes for the interleaved query job of a filesystem: every store's reads."""
    stores = [tf for tf in sweep.stores() if tf.filesystem.name == filesystem.name]
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
    return _minutes(rates.aggregate_seconds(plan.measured_rows(sweep), len(sweep.stores())), attempt)


@dataclass(frozen=True)
class Ask:
    """What one measuring job asks of SLURM at its first attempt, beside its planned time."""

    rule: str
    where: str
    planned_s: float
    runtime_min: int
    mem_mb: int
    tasks: int = 1
    nodes: int | None = None

    def describe(self) -> str:
        nodes = f", {self.nodes} nodes" if self.nodes else ""
        return (
            f"  {self.rule} {self.where}: {self.runtime_min} min (planned {self.planned_s / 60:.1f} min), "
            f"{self.mem_mb} MB, {self.tasks} task{'s' if self.tasks > 1 else ''}{nodes}"
        )


def slurm_asks(sweep) -> list[Ask]:
    """Every measuring job's first ask of SLURM (time, memory, tasks, nodes), from the same
    functions its rule's resources call, with the time the plan gives it."""
    from h5sweep.cases import CASE_SPECS

    # the jobs of the write and read cases, one per test store: their rule, time and memory
    per_store = {
        "write": (
            "generate",
            lambda tf: generate_runtime_min(sweep, tf.layout, tf.compression, 1, tf.backend.name),
            lambda tf: generate_mem_mb(sweep, tf.layout),
        ),
        "query": (
            "query",
            lambda tf: query_runtime_min(sweep, tf.layout, tf.compression, 1, tf.backend.name),
            lambda tf: query_mem_mb(sweep),
        ),
    }
    asks = []
    for spec in CASE_SPECS:
        if not spec.enabled(sweep):
            continue
        if spec.stage == "query" and sweep.interleave:
            for fs in sweep.filesystems:
                mine = [tf for tf in sweep.stores() if tf.filesystem.name == fs.name]
                planned = sum(spec.job_cost(sweep, tf, True)[0] for tf in mine)
                planned -= (len(mine) - 1) * rates.SECONDS_PER_JOB  # one job reads them all
                asks.append(
                    Ask(
                        "query_interleaved",
                        fs.name,
                        planned,
                        interleaved_query_runtime_min(sweep, fs),
                        query_mem_mb(sweep),
                    )
                )
        elif spec.stage in per_store:
            rule, runtime, mem = per_store[spec.stage]
            for tf in sweep.stores():
                planned = spec.job_cost(sweep, tf, True)[0]
                asks.append(Ask(rule, _store_name(tf), planned, runtime(tf), mem(tf)))
        elif spec.scope == "store":
            for tf in sweep.stores():
                if not spec.runs_on(tf):
                    continue
                tasks = spec.mpi_tasks(sweep) if spec.mpi_tasks else 1
                per_node = spec.mpi_tasks_per_node(sweep)
                asks.append(
                    Ask(
                        f"measure_{spec.name}",
                        _store_name(tf),
                        spec.job_cost(sweep, tf, True)[0],
                        case_runtime_min(sweep, spec, tf),
                        case_mem_mb(sweep, spec),
                        tasks,
                        -(-tasks // per_node) if per_node else None,
                    )
                )
        else:
            for fs in sweep.filesystems:
                asks.append(
                    Ask(
                        f"measure_{spec.name}",
                        fs.name,
                        spec.job_cost(sweep, fs, True)[0],
                        case_runtime_min(sweep, spec, fs),
                        case_mem_mb(sweep, spec),
                    )
                )
    if sweep.write_race:
        for fs in sweep.filesystems:
            asks.append(
                Ask(
                    "write_race",
                    fs.name,
                    write_race_seconds(sweep, fs)[0],
                    write_race_runtime_min(sweep, fs),
                    write_race_mem_mb(sweep),
                )
            )
    return asks


def _store_name(tf) -> str:
    return f"{tf.filesystem.name}/{tf.backend.name}/{tf.layout.id}/{tf.compression.name}"


ASKS_SHOWN = 40  # a larger grid is summed up per rule


def describe_asks(sweep) -> str:
    """What the measuring jobs ask of SLURM at their first attempt, each beside its planned
    time (a retry asks attempt x as much); on a large grid, each rule's range."""
    asks = slurm_asks(sweep)
    head = (
        f"h5sweep on SLURM: {len(asks)} measuring jobs, each asking {SAFETY}x its planned time (at least "
        f"{MIN_RUNTIME_MIN} min; a retry asks attempt x as much, and at least its writes' limits); the profile "
        "groups a store's jobs (or a filesystem's, interleaved) into one allocation asking their sum"
    )
    if len(asks) <= ASKS_SHOWN:
        return "\n".join([head + ":", *(a.describe() for a in asks)])
    lines = [head + ", per rule:"]
    for rule in dict.fromkeys(a.rule for a in asks):
        mine = [a for a in asks if a.rule == rule]
        lines.append(
            f"  {rule}: {len(mine)} jobs, {min(a.runtime_min for a in mine)}-{max(a.runtime_min for a in mine)} min, "
            f"{min(a.mem_mb for a in mine)}-{max(a.mem_mb for a in mine)} MB, "
            f"{max(a.tasks for a in mine)} tasks at most"
        )
    return "\n".join(lines)
