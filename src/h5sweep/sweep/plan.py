"""What a sweep will cost before it runs: job time, wall time, and peak disk per filesystem.

The time model is deliberately simple (bytes over a rate, plus a cost per chunk); it is for
sizing an allocation, and the cluster limits in :mod:`h5sweep.sweep.resources` are derived from it
with a safety factor. Disk is bounded by construction: each running job holds at most one
test file, and a file is removed as soon as it has been queried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from h5sweep import backends, host
from h5sweep.cases import CASE_SPECS, plot_jobs
from h5sweep.cases.write import rest_seconds
from h5sweep.measure import rates, settle
from h5sweep.storage.datasources import values_shared
from h5sweep.storage.filesystems import MEMORY_FILESYSTEMS, device_of, device_reads_counted, free_bytes, mount_info
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.settings import is_reference

CHUNK_INDEX_BYTES = 64  # file metadata per chunk (B-tree entries), an upper estimate
FS_BLOCK_BYTES = 4096  # a file takes whole blocks of this size (ext4, xfs, tmpfs pages)
ZARR_FILE_OVERHEAD_BYTES = 64  # a codec's frame, a shard's index per file, about
RECORD_BYTES = 600  # one measurement row in Parquet, about


def file_bytes_bound(sweep, layout, backend: str = backends.REFERENCE) -> int:
    """Largest size a test store of ``layout`` can take on disk: every chunk allocated,
    uncompressed; a directory store (Zarr) also rounds each file up to whole filesystem
    blocks and has a block per directory."""
    data = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
    if not backends.spec(backend).capabilities.directory_store:
        return data + layout.n_chunks(sweep.shape) * CHUNK_INDEX_BYTES + 64 * 1024
    unit = layout.shard_shape or layout.chunk_shape
    files = Layout(unit).n_chunks(sweep.shape)
    # a file holds a whole chunk (edge chunks padded), or a shard's chunks and their index
    per_file = (
        math.prod(unit) * sweep.dtype.itemsize
        + ZARR_FILE_OVERHEAD_BYTES
        + (16 * math.prod(u // c for u, c in zip(unit, layout.chunk_shape, strict=True)) if layout.shard_shape else 0)
    )
    grid = Layout(unit).chunk_grid(sweep.shape)  # c/<i>/<j>/<k>: a directory per prefix
    directories = 2 + sum(math.prod(grid[:k]) for k in range(1, len(grid)))
    return int(files * _blocks(per_file) + directories * FS_BLOCK_BYTES + 64 * 1024)


def _blocks(nbytes: float) -> int:
    return -(-int(nbytes) // FS_BLOCK_BYTES) * FS_BLOCK_BYTES


def measured_rows(sweep) -> int:
    """Rows the sweep's store jobs record: every write and read, in every variant (each
    backend's read options)."""
    reads = sum(c.repeats * len(c.cold_modes) for c in sweep.read_cases) * len(sweep.policies)
    writes = sweep.write_case.repeats * len(sweep.write_case.variants())
    return sum(writes + reads * len(sweep.read_options(tf.backend.name, tf.filesystem)) for tf in sweep.stores())


def scratch_bytes(sweep) -> int:
    """Files the enabled cases write beside the test stores (h5sweep.kit.spec), which may
    all exist at once."""
    return sum(spec.scratch_bytes(sweep) for spec in CASE_SPECS if spec.enabled(sweep))


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
    job_seconds: float  # of the measuring jobs
    timed_seconds: float = 0.0  # inside measurement windows, which never overlap on a node
    exclusive_seconds: float = 0.0  # of jobs that take every core (an MPI job's ranks): they run alone
    # on a cluster every job is an allocation of its own, on nodes of its own: jobs run side by
    # side up to ``parallel_jobs`` (the scheduler's job limit), each node's windows its own
    cluster: bool = False
    longest_job_seconds: float = 0.0
    # the jobs after the measurements: the aggregate (first, alone), then the recommendation
    # and one job per kind of figure, sharing the cores
    finishing_jobs: int = 0
    finishing_seconds: float = 0.0
    aggregate_seconds: float = 0.0
    # locally, the jobs that write the stores, then each filesystem's write race (it starts once
    # its stores are written), then the rest: seconds of each writing job, of each race job, and
    # of the other measuring jobs together
    writing_jobs: list[float] = field(default_factory=list)
    race_jobs: list[float] = field(default_factory=list)
    other_job_seconds: float = 0.0
    # locally, the rests of the write case and the write races on the device that rests the
    # most: a removal dates the device's last release for every job on the node, so one job's
    # removal restarts the others' rests, and the rests of jobs side by side follow one another
    device_rest_seconds: float = 0.0
    filesystems: list[FilesystemPlan] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what would make the measurements unsteady

    @property
    def measuring_wall_seconds(self) -> float:
        """Jobs share the cores, but their timed windows run one at a time: the measuring
        jobs' wall time is at least the sum of the windows."""
        if self.cluster:  # side by side, no node's lock shared: at least the longest job
            return max(self.job_seconds / max(1, self.parallel_jobs), self.longest_job_seconds)
        shared = (self.job_seconds - self.exclusive_seconds) / max(1, self.parallel_jobs)
        return max(shared + self.exclusive_seconds, self.timed_seconds, self.phased_seconds, self.device_rest_seconds)

    @property
    def phased_seconds(self) -> float:
        """The measuring jobs in the order their inputs allow: the writing jobs on the cores
        (whole jobs, the longest first), then the write races, then the other jobs sharing the
        cores. Three store jobs of 10 s on 2 cores take 20 s, not 15, and a race job waits for
        its filesystem's stores."""
        cores = max(1, self.parallel_jobs)
        return (
            longest_first_makespan(self.writing_jobs, cores)
            + longest_first_makespan(self.race_jobs, cores)
            + self.other_job_seconds / cores
        )

    @property
    def wall_seconds(self) -> float:
        """The whole sweep: the workflow's start, the measuring jobs, the aggregate, then the
        figures and the recommendation side by side."""
        drawing = (self.finishing_seconds - self.aggregate_seconds) / max(1, self.parallel_jobs)
        return rates.WORKFLOW_START_S + self.measuring_wall_seconds + self.aggregate_seconds + drawing

    @property
    def total_job_seconds(self) -> float:
        return self.job_seconds + self.finishing_seconds

    def describe(self) -> str:
        lines = [
            f"h5sweep plan: {self.jobs} measuring jobs, about {_duration(self.job_seconds)} of job time, "
            f"{_duration(self.timed_seconds)} of it in timed windows (one at a time), and {self.finishing_jobs} "
            f"jobs for the tables and figures ({_duration(self.finishing_seconds)}); with {self.parallel_jobs} "
            f"at once, about {_duration(self.wall_seconds)} wall time",
        ]
        for fs in self.filesystems:
            lines.append(
                f"  {fs.name} ({fs.directory}): {fs.files} test files, largest {_size(fs.largest_file_bytes)}; "
                f"peak disk {_size(fs.peak_bytes)}, free {_size(fs.free_bytes)}"
                + ("" if fs.fits else "  << DOES NOT FIT")
            )
        return "\n".join(lines)


def longest_first_makespan(seconds: list[float], cores: int) -> float:
    """The wall time of jobs of ``seconds`` each on ``cores``, each started on the core free
    first, the longest first."""
    free = [0.0] * max(1, cores)
    for job in sorted(seconds, reverse=True):
        free[free.index(min(free))] += job
    return max(free)


def reads_in_store_job(sweep, cluster: bool) -> bool:
    """Whether a store's read cases run in the job that writes it (one Python start per store
    instead of two): locally, where the store is read one at a time (``interleave: false``).
    On a scheduler (``cluster``) a store's write and reads stay two jobs, grouped into one
    allocation; interleaved, one job per filesystem reads them all."""
    reads = any(spec.stage == "query" and spec.enabled(sweep) for spec in CASE_SPECS)
    return reads and not cluster and not sweep.interleave


# a store of at most this many bytes is written by its filesystem's one write job
ONE_WRITE_JOB_BYTES = 1 << 30


def writes_in_one_job(sweep, filesystem, cluster: bool) -> bool:
    """Whether one job writes every store of ``filesystem`` (one Python start and one load of
    the values for them all, instead of one per store): locally (not ``cluster``), where one
    interleaved job reads them all anyway, where stores are written in place (a staged store,
    uploaded to an object store, keeps a job of its own: a server gone mid-sweep costs one
    store), for stores of at most ``ONE_WRITE_JOB_BYTES`` (a job that fails writes its
    filesystem's stores again)."""
    writes = any(spec.stage == "write" and spec.enabled(sweep) for spec in CASE_SPECS)
    small = sweep.raw_bytes <= ONE_WRITE_JOB_BYTES
    return writes and small and not cluster and sweep.interleave and not filesystem.target.staged


def make_plan(sweep, parallel_jobs: int, results_dir: str = "results", cluster: bool = False) -> Plan:
    """Jobs, job time and timed time of every case the sweep runs (from the case specs and
    their cost models), and the peak disk of every filesystem. ``cluster``: the jobs are
    submitted to a scheduler, each an allocation of its own (``parallel_jobs`` at once)."""
    files = sweep.stores()
    stores_of = {fs.name: [tf for tf in files if tf.filesystem.name == fs.name] for fs in sweep.filesystems}
    in_memory = {fs.name: mount_info(fs.directory).fs_type in MEMORY_FILESYSTEMS for fs in sweep.filesystems}
    jobs, job_seconds, timed, exclusive, longest = 0, 0.0, 0.0, 0.0, 0.0
    writing: dict[int, float] = {}  # each writing job's seconds, by its store's or filesystem's id
    rests: dict[object, list[float]] = {}  # the write case's rests of each store job, by device
    others = 0.0  # the other measuring jobs' seconds
    batched = [fs for fs in sweep.filesystems if writes_in_one_job(sweep, fs, cluster)]
    apart = [fs for fs in sweep.filesystems if fs.name not in {b.name for b in batched}]  # a job per store
    for spec in CASE_SPECS:
        if not spec.enabled(sweep):
            continue
        cost = spec.job_cost
        if spec.scope == "store":
            places = [(tf, not in_memory[tf.filesystem.name]) for tf in files if spec.runs_on(tf)]
        else:
            places = [(fs, not in_memory[fs.name]) for fs in sweep.filesystems]
        costs = [(where, from_device, *cost(sweep, where, from_device)) for where, from_device in places]
        for (where, _, job, timed_part), share in zip(costs, _race_shares(sweep, spec, costs), strict=True):
            if spec.name == "read":  # every read the race leaves out: its time, checks and reopening
                job = rates.SECONDS_PER_JOB + share * (job - rates.SECONDS_PER_JOB)
                timed_part *= share
            elif share < 1:  # a write race's repeats: their timed writes (each variant's rest stays)
                job -= (1 - share) * timed_part
                timed_part *= share
            jobs, job_seconds, timed = jobs + 1, job_seconds + job, timed + timed_part
            longest = max(longest, job)
            if spec.stage == "write":
                writing[id(where)] = writing.get(id(where), 0.0) + job
                if spec.scope == "store":
                    rest = rest_seconds(sweep, where.filesystem)
                    rests.setdefault(device_of(where.filesystem.directory), []).append(rest)
            elif spec.stage == "query" and reads_in_store_job(sweep, cluster) and id(where) in writing:
                writing[id(where)] += job - rates.SECONDS_PER_JOB  # read by the job that wrote it
            else:
                others += job
            exclusive += job if spec.threads(sweep) >= max(1, parallel_jobs) else 0.0
        if spec.stage == "write":  # a filesystem whose one job writes every store
            merged = sum(len(stores_of[fs.name]) - 1 for fs in batched)
            jobs, job_seconds = jobs - merged, job_seconds - merged * rates.SECONDS_PER_JOB
            for fs in batched:  # one job of its stores' work
                mine = [id(tf) for tf in stores_of[fs.name] if id(tf) in writing]
                if mine:
                    writing[id(fs)] = sum(writing.pop(k) for k in mine) - (len(mine) - 1) * rates.SECONDS_PER_JOB
        if spec.stage == "query" and sweep.interleave:  # one job per filesystem reads them all
            merged = len(places) - len(sweep.filesystems)
            jobs, job_seconds = jobs - merged, job_seconds - merged * rates.SECONDS_PER_JOB
            others -= merged * rates.SECONDS_PER_JOB
        elif spec.stage == "query" and reads_in_store_job(sweep, cluster):  # in the writing job
            jobs, job_seconds = jobs - len(places), job_seconds - len(places) * rates.SECONDS_PER_JOB
    races = []
    if sweep.write_race:  # a job per filesystem; its writes are in the stores' (every repeat: the most)
        # (where one job writes a filesystem's stores, it races them too); it makes the values
        # again, and where the filesystem rests after removals, it removes each variant's files
        # before the next variant's writes, which rest first
        races = [rates.job_with_values_seconds(sweep) + rest_seconds(sweep, fs) for fs in apart]
        jobs, job_seconds = jobs + len(apart), job_seconds + sum(races)
        for fs in batched:
            if id(fs) in writing:
                writing[id(fs)] += rest_seconds(sweep, fs)  # racing in its one job
                job_seconds += rest_seconds(sweep, fs)
    if not cluster:  # store jobs side by side on a device (not one job per filesystem) rest longer
        own_jobs = {device_of(fs.directory) for fs in apart}
        job_seconds += sum(_chained_rests(rests[device], parallel_jobs) for device in own_jobs if device in rests)
    on_device = {device: sum(mine) for device, mine in rests.items()}
    for fs in sweep.filesystems:  # the write races' rests, on their filesystems' devices
        if sweep.write_race and device_of(fs.directory) in on_device:
            on_device[device_of(fs.directory)] += rest_seconds(sweep, fs)
    values = sweep.raw_bytes if values_shared(sweep.dataset) else 0  # kept for every write (h5sweep.sweep.stages)
    rows = measured_rows(sweep)
    results_bytes = rows * RECORD_BYTES * 2 + values  # raw records and the merged table, the values
    results_dev = device_of(results_dir)
    aggregate = rates.aggregate_seconds(rows, len(files)) + rates.findings_seconds()  # one job
    plots = plot_jobs(sweep)
    plan = Plan(
        parallel_jobs=max(1, parallel_jobs),
        jobs=jobs,
        job_seconds=job_seconds,
        timed_seconds=timed,
        exclusive_seconds=exclusive,
        cluster=cluster,
        longest_job_seconds=longest,
        finishing_jobs=2 + len(plots),  # the aggregate (and the findings), the recommendation, the plot jobs
        finishing_seconds=aggregate
        + rates.recommend_seconds(len(files))
        + sum(rates.figure_seconds(sum(map(len, kinds.values())), len(files)) for kinds in plots.values()),
        aggregate_seconds=aggregate,
        writing_jobs=list(writing.values()),
        race_jobs=races,
        other_job_seconds=others,
        device_rest_seconds=0.0 if cluster else max(on_device.values(), default=0.0),
    )
    # an object store's reads fill no page cache (its writes' staging does, like any directory's)
    on_device = [fs.name for fs in sweep.filesystems if not in_memory[fs.name] and fs.target.fills_page_cache]
    reporting = host.plan_warning(host.free_page_reporting(), on_device)
    plan.warnings += [reporting] if reporting else []
    unseen = [fs.name for fs in sweep.filesystems if not in_memory[fs.name] and not device_reads_counted(fs.directory)]
    if unseen:
        plan.warnings.append(
            f"The kernel does not count the device reads of {', '.join(unseen)} (a network filesystem or a FUSE "
            "mount): their reads are recorded as unverified, and no first access there can be checked as cold."
        )
    for fs in sweep.filesystems:
        mine = [tf for tf in files if tf.filesystem.name == fs.name]
        bounds = [file_bytes_bound(sweep, tf.layout, tf.backend.name) for tf in mine]
        largest = max(bounds)
        running = min(plan.parallel_jobs, len(mine))
        copies = fs.read_copies  # a query job copies its stores to read them in turn
        if sweep.interleave:  # every store of the filesystem exists while it is queried
            peak = copies * sum(bounds) + scratch_bytes(sweep)
        else:  # a store is removed once queried: at most one per running job
            peak = running * copies * largest + scratch_bytes(sweep)
            # ... unless a job of its own reads it too (an MPI case's allocation, or any such
            # job where Snakemake does not group it with the generation: locally): then it can
            # wait on disk after its query job, at worst every such store at once
            read_again = _read_again(sweep)
            peak += sum(bound for tf, bound in zip(mine, bounds, strict=True) if read_again(tf))
        if settle.settle_seconds(fs) > 0:  # a generate job keeps a variant's repeats (h5sweep.measure.settle)
            peak += running * (sweep.write_case.repeats - 1) * largest
            peak += race_kept_bytes(sweep, bounds, free_bytes(fs.directory) - copies * sum(bounds))
        if device_of(fs.directory) == results_dev:
            peak += results_bytes
        plan.filesystems.append(
            FilesystemPlan(fs.name, fs.directory, len(mine), largest, peak, free_bytes(fs.directory))
        )
    return plan


# Of the rests of store jobs side by side on one device, the share by which each job's rests
# are lengthened by the others' (their removals restart its rest): none where the jobs rest in
# step, all where their rests alternate. tests/configs/write-variants.yaml on 2 cores, two
# store jobs of 10 s of rests at once: 11 s each in step (2026-12-03, 45.6 s wall), 14 and 16 s
# (2026-12-02), 20 s each alternating (2026-12-03, 53.0 s wall).
CHAINED_REST_SHARE = 0.5


def _chained_rests(rests: list[float], parallel_jobs: int) -> float:
    """The job time the rests of one device's store jobs (``rests``: each job's) add to each
    other's when ``parallel_jobs`` run at once: of the jobs that run beside another, each
    waits a share (:data:`CHAINED_REST_SHARE`) of the others' rests beside it."""
    at_once = min(max(1, parallel_jobs), len(rests))
    if at_once < 2:
        return 0.0
    beside = len(rests) - len(rests) % at_once  # the jobs in full rounds (the last may run alone)
    return CHAINED_REST_SHARE * (at_once - 1) * sum(sorted(rests, reverse=True)[:beside])


def race_kept_bytes(sweep, bounds: list[int], room: float) -> float:
    """What a filesystem's write race keeps on a filesystem that rests after removals
    (:class:`h5sweep.cases.write.race_runner.KeptWrites`): its files until the variant's race
    ends, at most every extra repeat of every store (``bounds``: each store's file bound), and
    at most a quarter of the free space left at its start (``room``) and one file more."""
    if not sweep.write_race:
        return 0.0
    extra = max(0, sweep.write_case.repeats - sweep.write_case.min_repeats)
    return min(extra * sum(bounds), max(0.0, room) / 4 + max(bounds, default=0))


def _race_shares(sweep, spec, costs: list) -> list[float]:
    """Each place's share of a case's timed work its race leaves (``costs``: each place, from
    the device or not, its job and its timed seconds; 1 unraced). A race keeps measuring the
    stores nearest the best, so what it keeps falls on each filesystem's fastest stores: the
    write race's repeats beyond the minimum (as many as :func:`rates.write_race_share` leaves
    on average) on the stores of least timed writes; an interleaved pass's reads to the end on
    the reference, the fastest other store and the fastest compressed one, every other store
    its first rounds (:func:`rates.read_race_floor`)."""
    shares = [1.0] * len(costs)
    writes = spec.name == "write" and sweep.write_race
    reads = spec.name == "read" and spec.stage == "query" and sweep.interleave and sweep.race
    if not (writes or reads):
        return shares
    rounds = max((case.repeats for case in sweep.read_cases), default=0)
    for fs in sweep.filesystems:
        mine = sorted((k for k, c in enumerate(costs) if c[0].filesystem.name == fs.name), key=lambda k: costs[k][3])
        if writes:
            low, high = sweep.write_race["min_repeats"], sweep.write_race["max_repeats"]
            extra = len(mine) * (high * rates.write_race_share(low, high, len(mine)) - low)
            for k in mine:
                more = min(high - low, max(0.0, extra))
                extra -= more
                shares[k] = (low + more) / high if high > 0 else 1.0
            continue
        others = [k for k in mine if not is_reference(sweep, costs[k][0])]
        kept = set(others[:1] + [k for k in others if not costs[k][0].compression.is_none][:1])
        floor = rates.read_race_floor(rounds, sweep.race)
        for k in mine:
            shares[k] = floor if k in others and k not in kept else 1.0
    return shares


def _read_again(sweep):
    """Whether a case with a job of its own (store scope) reads a store after its query job."""
    cases = [spec for spec in CASE_SPECS if spec.scope == "store" and spec.has_own_job and spec.enabled(sweep)]
    return lambda store: any(spec.runs_on(store) for spec in cases)


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
