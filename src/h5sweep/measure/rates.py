"""The time model's rates and the stage models every case shares (making the data, writing a
test store, reading it), in seconds. Rates are this project's reference machine's (2 cores,
ext4 on a virtual disk; see ``bench/``); the model sizes an allocation, it measures nothing.

A case's own time model lives in its module (``job_cost`` in its spec, see
:mod:`h5sweep.cases.spec`) and is built from these. Nothing here imports an I/O library.
"""

from __future__ import annotations

import math

from h5sweep.measure import settle
from h5sweep.storage import objectstore

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


def generate_seconds(
    sweep, layout, compression, threads: int = 1, encodes_chunks: bool = False, cache_bytes: int = 1 << 20
) -> float:
    """A generate job: making the data, the timed writes, and the fast query file where the
    write case leaves none to query. ``encodes_chunks``: whether the backend's fast write
    encodes the chunks itself, in ``threads`` threads (else its library's pipeline writes)."""
    seconds = SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S
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


# On an object store: a request's own time on a local server (besides its emulated latency),
# the requests of an open (HEAD, the metadata's first ranges), how many requests a reader
# keeps in flight at once (zarr-python's default concurrency; s3fs's ranged GETs alike), and
# the bytes a response brings per second through the relay (bench/README.md, Object storage:
# a slice of the paged 4x4x256 file, 1.8 GB in 355 requests, 12.3 s at 20 ms)
SECONDS_PER_REQUEST = 0.002
OPEN_REQUESTS = 3
REQUESTS_IN_FLIGHT = 10
S3_BYTES_PER_S = 400 * MB
# fsspec's file caches that keep the blocks they fetched (a block serves every piece inside
# it); the others keep one span at most, which HDF5's index lookups between its chunk reads
# move away, so every piece is a request of a block of its own
KEEPS_BLOCKS = ("blockcache", "all", "mmap", "parts", "background")
# The others keep one span: the pieces inside it are served from it but for about one in ten,
# read after HDF5's chunk index moved the span away (bench/README.md, Object storage: 21 GETs
# for the 169 chunks of a slice of 4x4x256 chunks through s3fs's 5 MiB readahead, 7 for 16)
SPAN_MISSES = 0.1
# A store of a file per chunk (Zarr) writes its objects to the object store in its timed write,
# about one at a time: each object's own time on a local server besides its latency (6.5 ms:
# 1,352 objects of 4x4x256 chunks in 8.7 s at 0 ms and 38 s at 20 ms, bench/README.md)
SECONDS_PER_WRITTEN_OBJECT = 0.0065


# A read of a store on an object store besides its requests: reopening it before each read
# (a client, the store's metadata; inside the read's window) and, outside the window, checking
# its values, whose own requests wait for the latency again (bench/README.md, The plan: 68-76
# ms a read inside the windows at 0 and 20 ms, 34 ms and 137 ms outside)
REMOTE_REOPEN_S = 0.07
REMOTE_CHECK_S = 0.034
REMOTE_CHECK_REQUESTS = 5


def remote_read_seconds(sweep, store) -> tuple[float, float]:
    """(inside the windows, outside) seconds of a query job's reads on an object store besides
    their requests (0 on a filesystem): each read's reopen, and the check of what it read."""
    fs = store.filesystem
    if fs.s3 is None:
        return 0.0, 0.0
    options = len(sweep.read_options(store.backend.name, fs))
    reads = sum(len(sweep.policies) * case.repeats * len(case.cold_modes) for case in sweep.read_cases) * options
    check = REMOTE_CHECK_S + REMOTE_CHECK_REQUESTS * fs.s3.latency_ms / 1e3
    return reads * REMOTE_REOPEN_S, reads * check


def object_write_seconds(sweep, store) -> float:
    """A timed write of a store of a file per chunk on an object store: its objects (a shard
    each where sharded, else a chunk each) at the latency and :data:`SECONDS_PER_WRITTEN_OBJECT`
    each (0 on a filesystem, and for a store written whole and uploaded after its clock)."""
    fs = store.filesystem
    if fs.s3 is None or not store.backend.capabilities.file_per_chunk:
        return 0.0
    layout = store.layout
    grid = layout if layout.shard_shape is None else type(layout)(layout.shard_shape)
    return grid.n_chunks(sweep.shape) * (SECONDS_PER_WRITTEN_OBJECT + fs.s3.latency_ms / 1e3)


def _runs(shape: tuple[int, ...], size: tuple[int, ...]) -> int:
    """Contiguous runs of a box in a C-ordered array: the trailing axes it spans whole and the
    first one it does not merge into one run."""
    k = len(shape) - 1
    while k > 0 and size[k] == shape[k]:
        k -= 1
    return math.prod(size[:k])


def request_seconds(sweep, store) -> float:
    """A query job's requests on an object store (:func:`read_requests`) priced at the
    filesystem's latency plus :data:`SECONDS_PER_REQUEST` each, and the bytes they bring
    (:func:`read_bytes`) at :data:`S3_BYTES_PER_S` (0 on a filesystem)."""
    fs = store.filesystem
    if fs.s3 is None:
        return 0.0
    requests, received = _remote_reads(sweep, store)
    return requests * (fs.s3.latency_ms / 1e3 + SECONDS_PER_REQUEST) + received / S3_BYTES_PER_S


def read_requests(sweep, store) -> float:
    """A query job's requests on an object store, waited for one after another (0 on a
    filesystem), a rough model: per read, an open, then for a store read as one file through
    blocks (HDF5) the chunks or runs its selection touches, at most the blocks their span
    covers where the file object keeps its blocks (:data:`KEEPS_BLOCKS`), for a store of
    objects (Zarr) its chunks touched and for raw its runs, each :data:`REQUESTS_IN_FLIGHT`
    at a time; every case, read option and cold mode."""
    return _remote_reads(sweep, store)[0]


def read_bytes(sweep, store) -> float:
    """The bytes a query job's requests on an object store bring (0 on a filesystem): a block
    per request where the file object fetches blocks, else the pieces' own bytes."""
    return _remote_reads(sweep, store)[1]


def _remote_reads(sweep, store) -> tuple[float, float]:
    fs = store.filesystem
    if fs.s3 is None:
        return 0.0, 0.0
    reads = [getattr(option, "read", None) for option in sweep.read_options(store.backend.name, fs)]
    itemsize, layout, shape = sweep.dtype.itemsize, store.layout, sweep.shape
    row_bytes = math.prod(shape[1:]) * itemsize  # one index of the first axis, stored
    requests_total = bytes_total = 0.0
    for case in sweep.read_cases:
        size = case.size(shape)
        if layout.chunk_shape is None:
            pieces, rows = _runs(shape, size), size[0]
            piece_bytes = math.prod(size) * itemsize / pieces
        else:
            pieces = layout.chunks_touched(tuple(0 for _ in size), size)
            rows = min(shape[0], (math.ceil(size[0] / layout.chunk_shape[0]) + 1) * layout.chunk_shape[0])
            piece_bytes = layout.chunk_bytes(itemsize)
        requests = received = 0.0
        for read in reads:  # each read option
            if read is None or read.cache_type == objectstore.NO_CACHE:
                n = pieces if read is not None else pieces / REQUESTS_IN_FLIGHT
                requests += n
                received += pieces * piece_bytes
            elif read.cache_type in KEEPS_BLOCKS:
                n = min(pieces, math.ceil(rows * row_bytes / read.block_size))
                requests += n
                received += n * read.block_size
            else:  # one span kept: a piece inside it is served, one after the chunk index moved it is not
                n = min(pieces, math.ceil(rows * row_bytes / read.block_size) + SPAN_MISSES * pieces)
                requests += n
                received += n * max(read.block_size, piece_bytes)
        n = len(sweep.policies) * case.repeats * len(case.cold_modes)
        requests_total += n * (len(reads) * OPEN_REQUESTS + requests)
        bytes_total += n * received
    return requests_total, bytes_total


def query_seconds(sweep, layout, compression, from_device: bool = True, backend: str | None = None) -> float:
    timed, check = read_seconds(sweep, layout, compression, from_device, backend)
    return SECONDS_PER_JOB + timed + check


COPY_BYTES_PER_S = {"device": 600 * MB, "memory": 2000 * MB}  # a store's read copy, written out


def read_copies_seconds(sweep, layout, copies: int, from_device: bool = True) -> float:
    """Making a query job's read copies of its store (untimed; h5sweep.cases.copies): at most
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


def read_race_share(stores: int, read_to_end: int, rounds: int, rule: dict) -> float:
    """The share of an interleaved pass's reads its race leaves, on average: ``read_to_end``
    stores (the reference, the best, the best compressed) read every round, the others the
    first ``min_rounds`` and half a look more."""
    if stores <= read_to_end or rounds <= 0:
        return 1.0
    floor = min(1.0, (rule["min_rounds"] + rule["rounds_per_look"] / 2) / rounds)
    return (read_to_end + (stores - read_to_end) * floor) / stores


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
        return SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S + timed, timed

    return cost


def cube_and_copy_mb(sweep) -> int:
    """Memory of a job that holds the cube and the copy it reads back to check it, plus the
    interpreter and its packages: a case spec's ``mem_mb``."""
    return -(-2 * sweep.raw_bytes // MB) + 256  # rounded up
