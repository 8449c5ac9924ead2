"""The time model's rates and the stage models every case shares (making the data, writing a
test store, reading it), in seconds. Rates are this project's reference machine's (2 cores,
ext4 on a virtual disk; see ``bench/``); the model sizes an allocation, it measures nothing.

A case's own time model lives in its module (``job_cost`` in its spec, see
:mod:`h5sweep.kit.spec`) and is built from these. Nothing here imports an I/O library.
"""

from __future__ import annotations

import math

from h5sweep.measure import settle

MB = 1_000_000
STANDARD_WRITE_BYTES_PER_S = {"none": 600 * MB, "filtered": 70 * MB}
FAST_WRITE_BYTES_PER_S = {"none": 1000 * MB, "filtered": 70 * MB}  # filtered: per thread
MAKE_DATA_BYTES_PER_S = 150 * MB
READ_BYTES_PER_S = {"none": 4000 * MB, "filtered": 300 * MB}  # decompression bound
SECONDS_PER_WRITTEN_CHUNK = 12e-6
SECONDS_PER_READ_CHUNK = 15e-6
# Per chunk read by a backend with one file per chunk (Zarr: open, read, close a file, and the
# reader's own per-chunk work)
SECONDS_PER_CHUNK_FILE = 250e-6
SECONDS_PER_JOB = 0.8  # starting Python and the packages
SECONDS_PER_REOPEN = 0.003  # close, evict and reopen a file before a selection (cold: every)
DEVICE_READ_BYTES_PER_S = 400 * MB  # a cold read from a block device, of the chunks' raw size
DEVICE_STREAM_BYTES_PER_S = 1500 * MB  # a cold read of a whole file, start to end (a parallel pass)
SECONDS_PER_DATASET = 2e-4  # creating or opening one small dataset
# The jobs after the measurements and the workflow's own start (Snakemake reading the
# workflow and building its graph, the plan included)
WORKFLOW_START_S = 3.0
# A plot job (one per kind of figure): Python, matplotlib and the summary, then each of its
# figures, and in a figure each store's bars or points
SECONDS_PER_PLOT_JOB = 0.9
SECONDS_PER_FIGURE = 0.3
SECONDS_PER_FIGURE_STORE = 0.01
SECONDS_PER_TABLE_JOB = 0.5  # the aggregate or the recommendation job, before its work
FINDINGS_SECONDS = 0.3  # the findings' checks of a summary
SECONDS_PER_RANKED_STORE = 0.02  # the recommendation's paired bootstrap of one store
AGGREGATED_ROWS_PER_S = 50_000  # the aggregate's rows, interval by interval
SECONDS_PER_RECORD = 0.015  # the aggregate reading one store's records


def aggregate_seconds(rows: int, stores: int) -> float:
    """The aggregate job: every record read, summarized with intervals."""
    return SECONDS_PER_TABLE_JOB + rows / AGGREGATED_ROWS_PER_S + stores * SECONDS_PER_RECORD


def recommend_seconds(stores: int) -> float:
    """The recommendation job: every store ranked with its paired intervals."""
    return SECONDS_PER_TABLE_JOB + stores * SECONDS_PER_RANKED_STORE


def findings_seconds() -> float:
    """The findings, checked in the aggregate job: a few dozen checks of the summary."""
    return FINDINGS_SECONDS


def figure_seconds(figures: int, stores: int) -> float:
    """One plot job, drawing ``figures`` figures."""
    return SECONDS_PER_PLOT_JOB + figures * (SECONDS_PER_FIGURE + stores * SECONDS_PER_FIGURE_STORE)


def write_rate(compression) -> float:
    """Bytes of raw data a second through HDF5's standard write path, one thread."""
    return STANDARD_WRITE_BYTES_PER_S["none"] if compression.is_none else compression.codec.write_bytes_per_s


def read_rate(compression) -> float:
    """Bytes of raw data a second read and decoded (the decoding bound, data in memory)."""
    return READ_BYTES_PER_S["none"] if compression.is_none else compression.codec.read_bytes_per_s


SECONDS_PER_WRITE_CALL = 40e-6  # one H5Dwrite of a hyperslab (dataspaces, the call itself)
SECONDS_PER_PIECE = 3e-6  # one contiguous piece of a partial chunk written around a cache


def write_calls(sweep, layout, strategy: str) -> int:
    """Calls the write case makes in ``strategy`` (:meth:`Layout.write_blocks`)."""
    shape = sweep.shape
    if strategy == "spectrum":
        return math.prod(shape[:-1])
    if strategy == "block" and layout.chunk_shape is not None:
        return math.prod(layout.chunk_grid(shape)[:2])
    if layout.chunk_shape is not None:  # a chunk (or a shard) per call
        block = layout.shard_shape or layout.chunk_shape
        return math.prod(-(-n // b) for n, b in zip(shape, block, strict=True))
    return sum(1 for _ in layout.write_blocks(shape, sweep.dtype.itemsize, strategy))  # a few slabs


def write_seconds(sweep, layout, compression, strategy: str, cache_bytes: int = 1 << 20) -> float:
    """One timed write of the whole dataset in ``strategy``: its bytes through the codec, its
    calls, and each chunk's compressions. A spectrum per call writes a sliver of every chunk
    of its chunk column: where the chunk cache holds that column, each chunk is compressed once
    when it leaves the cache; otherwise every call reads, decodes, re-encodes and writes each
    chunk it touches (the study's slow layouts), or, uncompressed, writes a piece of it."""
    itemsize = sweep.dtype.itemsize
    allocated = layout.allocated_elements(sweep.shape) * itemsize
    chunks = layout.n_chunks(sweep.shape)
    calls = write_calls(sweep, layout, strategy)
    seconds = allocated / write_rate(compression) + chunks * SECONDS_PER_WRITTEN_CHUNK + calls * SECONDS_PER_WRITE_CALL
    if layout.chunk_shape is None or strategy != "spectrum" or len(sweep.shape) != 3:
        return seconds
    chunk_bytes = layout.chunk_bytes(itemsize)
    column = layout.chunk_grid(sweep.shape)[2]  # chunks a spectrum crosses
    if cache_bytes >= column * chunk_bytes:
        return seconds
    touched = calls * column  # chunk writes, one per spectrum and chunk of its column
    if compression.is_none:
        return seconds + touched * SECONDS_PER_PIECE
    per_rewrite = chunk_bytes / read_rate(compression) + chunk_bytes / write_rate(compression)
    return seconds + (touched - chunks) * per_rewrite


def write_case_seconds(sweep, layout, compression, cache_bytes: int = 1 << 20) -> float:
    """The timed writes of the write case (every variant and repeat): serial windows."""
    case = sweep.write_case
    return case.repeats * sum(write_seconds(sweep, layout, compression, s, cache_bytes) for s, _ in case.variants())


def job_with_values_seconds(sweep) -> float:
    """A job's start with the dataset's values made in memory (a generate job's, a
    filesystem's case job's, a write race's)."""
    return SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S


def generate_seconds(
    sweep, layout, compression, threads: int = 1, encodes_chunks: bool = False, cache_bytes: int = 1 << 20
) -> float:
    """A generate job: making the data, the timed writes, and the fast query file where the
    write case leaves none to query. ``encodes_chunks``: whether the backend's fast write
    encodes the chunks itself, in ``threads`` threads (else its library's pipeline writes)."""
    seconds = job_with_values_seconds(sweep)
    seconds += write_case_seconds(sweep, layout, compression, cache_bytes)
    if not sweep.write_case.leaves_query_file:
        allocated = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
        if compression.is_none:
            fast_rate = FAST_WRITE_BYTES_PER_S["none"]
        elif encodes_chunks:  # chunks encoded by a pool of threads
            fast_rate = FAST_WRITE_BYTES_PER_S["filtered"] * threads
        else:  # the library's pipeline writes the query file
            fast_rate = write_rate(compression)
        seconds += allocated / fast_rate + layout.n_chunks(sweep.shape) * SECONDS_PER_WRITTEN_CHUNK
    return seconds


def read_seconds(
    sweep, layout, compression, from_device: bool = True, backend: str | None = None
) -> tuple[float, float]:
    """(timed, checking) seconds of a query job's reads: every case, visiting policy, read
    option (chunk cache, Zarr reader) and cold mode; ``cold: every`` adds a close, eviction and
    reopen per selection and, on a filesystem with a device (``from_device``), reading what it
    touches from there. ``backend``: a name of the sweep's backends (None: its first)."""
    itemsize = sweep.dtype.itemsize
    spec = next((b for b in sweep.backends if b.name == backend), sweep.backends[0])
    variants = len(sweep.policies) * len(sweep.read_options(spec.name))
    per_chunk = SECONDS_PER_CHUNK_FILE if spec.capabilities.file_per_chunk else SECONDS_PER_READ_CHUNK
    timed = check = 0.0
    for case in sweep.read_cases:
        size = case.size(sweep.shape)
        if layout.chunk_shape is None:
            touched, chunks = math.prod(size) * itemsize, 0
        else:
            chunks = layout.chunks_touched(tuple(0 for _ in size), size)
            touched = chunks * layout.chunk_bytes(itemsize)
        read = touched / read_rate(compression) + chunks * per_chunk
        for cold in case.cold_modes:
            first_access = SECONDS_PER_REOPEN + (touched / DEVICE_READ_BYTES_PER_S if from_device else 0.0)
            # split_read_time: the storage part of every read is fetched again, evicted again
            # for a first access
            split = 2.0 if getattr(sweep, "split_read_time", False) and layout.chunk_shape is not None else 1.0
            timed += split * variants * case.repeats * (read + (first_access if cold == "every" else 0.0))
        check += variants * len(case.cold_modes) * case.repeats * math.prod(size) * itemsize / MAKE_DATA_BYTES_PER_S
    return timed, check


# A query job's reads and a timed write on a storage target besides the device's: each
# target prices its own (h5sweep.storage.targets, the filesystem's ``target``).


def remote_read_seconds(sweep, store) -> tuple[float, float]:
    """(inside the windows, outside) seconds of a query job's reads besides their requests
    (0 on a directory): on an object store each read's reopen, and the check of what it read."""
    return store.filesystem.target.read_seconds(sweep, store)


def object_write_seconds(sweep, store) -> float:
    """A timed write's cost on its filesystem's target besides the device's (0 on a
    directory; on an object store, a store of a file per chunk's objects)."""
    return store.filesystem.target.write_seconds(sweep, store)


def request_seconds(sweep, store) -> float:
    """A query job's requests to its filesystem's target, priced (0 on a directory)."""
    return store.filesystem.target.request_seconds(sweep, store)


def read_requests(sweep, store) -> float:
    """A query job's requests to its filesystem's target (0 on a directory)."""
    return store.filesystem.target.read_requests(sweep, store)[0]


def read_bytes(sweep, store) -> float:
    """The bytes a query job's requests to its filesystem's target bring (0 on a directory)."""
    return store.filesystem.target.read_requests(sweep, store)[1]


def query_seconds(sweep, layout, compression, from_device: bool = True, backend: str | None = None) -> float:
    timed, check = read_seconds(sweep, layout, compression, from_device, backend)
    return SECONDS_PER_JOB + timed + check


COPY_BYTES_PER_S = {"device": 600 * MB, "memory": 2000 * MB}  # a store's read copy, written out


def read_copies_seconds(sweep, layout, copies: int, from_device: bool = True) -> float:
    """Making a query job's read copies of its store (untimed; h5sweep.measure.copies): at most
    its allocated bytes, ``copies - 1`` times."""
    allocated = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
    return (copies - 1) * allocated / COPY_BYTES_PER_S["device" if from_device else "memory"]


# What a race leaves of the work it would do whole, on average: of the repeats beyond a race's
# minimum, the share its stores still make (the best and the close ones all of them, the rest
# none); measured on the default sweep (bench/README.md, the plan against the wall time): 29
# and 28 timed writes of 19 stores writing 1 to 3 times, and every store but the reference and
# the best two read a fifth to a third of the pass.
RACE_EXTRA_KEPT = 0.25


def write_race_share(min_repeats: int, max_repeats: int, stores: int = 1) -> float:
    """The share of a store's timed writes the write race of ``stores`` leaves, on average: the
    best writes every repeat, every other its first ``min_repeats`` and a share of the rest."""
    if max_repeats <= 0 or stores <= 1:
        return 1.0
    others = min_repeats + RACE_EXTRA_KEPT * (max_repeats - min_repeats)
    return (max_repeats + (stores - 1) * others) / (stores * max_repeats)


def read_race_floor(rounds: int, rule: dict) -> float:
    """The share of a pass of ``rounds`` a store the race drops reads, on average: its first
    ``min_rounds`` and half a look more."""
    return min(1.0, (rule["min_rounds"] + rule["rounds_per_look"] / 2) / rounds) if rounds > 0 else 1.0


def store_job(timed_seconds):
    """A job cost for a case with its own job per test store, from the seconds of its timed
    work: ``(job seconds, timed seconds)`` as a spec's ``job_cost`` returns them."""

    def cost(sweep, store, from_device):
        timed = timed_seconds(sweep, store.layout, store.compression, from_device)
        return SECONDS_PER_JOB + timed, timed

    return cost


def filesystem_job(timed_seconds, timed_writes=lambda sweep: 0):
    """A job cost for a case run once per filesystem, from the seconds of its timed work and
    the number of its timed writes (each after the filesystem's rest, h5sweep.measure.settle); the
    job also starts Python and makes the dataset's values in memory."""

    def cost(sweep, filesystem, from_device):
        timed = timed_seconds(sweep) + timed_writes(sweep) * settle.settle_seconds(filesystem)
        return job_with_values_seconds(sweep) + timed, timed

    return cost


def cube_and_copy_mb(sweep) -> int:
    """Memory of a job that holds the cube and the copy it reads back to check it, plus the
    interpreter and its packages: a case spec's ``mem_mb``."""
    return -(-2 * sweep.raw_bytes // MB) + 256  # rounded up
