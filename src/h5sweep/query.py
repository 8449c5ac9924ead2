"""Time the read cases on one generated file.

The protocol of every read case (see config/README.md, "What a measurement means"):

- the case's selections are the same for every layout (seeded by the case, not the layout);
- ``cold: first`` (the study's): the file is flushed, dropped from the page cache and
  reopened before the case; the first read is a first access, the rest is sustained reading
  of an open file. ``cold: every``: the file is closed, dropped and reopened before every
  selection, outside the timer, so every read is a first access. Before its first drop the
  store is read once into the page cache, untimed (:func:`h5sweep.pagecache.prime`), so that
  every drop frees the store's own pages just before its read takes pages again: the first
  read meets the machine's memory as every later one does (stores beyond half of the
  available memory are left unprimed, and their rows say so);
- only HDF5's read is timed: the file and memory dataspaces are built before the clock and
  the clock covers ``H5Dread`` into a preallocated buffer (its pages written once before,
  so that none is mapped on the clock), with Python's garbage collector paused; h5py's own
  per-call cost is measured once per file and recorded beside;
- the timed reads run inside the node's exclusive measurement window
  (:mod:`h5sweep.windows`); checking the values read against the data source happens after
  the window closes;
- every read records the bytes it fetched from the device and the bytes HDF5 asked of the
  file (page cache or not), and so whether it was ``cold``, ``warm`` or from ``memory``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from h5sweep import pagecache
from h5sweep.backends.base import Backend, StoredChunks
from h5sweep.cases import ReadCase
from h5sweep.cases.base import COLD_MODES
from h5sweep.chunkcache import DEFAULT_CACHE, ChunkCache
from h5sweep.datasources import DataSource
from h5sweep.errors import VerificationError
from h5sweep.layouts import Layout
from h5sweep.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.resources import VERIFY_BUDGET_BYTES
from h5sweep.selections import Selection
from h5sweep.timing import gc_paused, minor_faults, touched_empty
from h5sweep.windows import timed_window, untimed_work


def verify(values: np.ndarray, expected: np.ndarray, where: str, tolerance: float = 0.0) -> None:
    """Raise if ``values`` differ from ``expected`` (by more than ``tolerance``, a lossy
    codec's error bound); the message says where and how."""
    if values.shape != expected.shape:
        raise VerificationError(f"{where}: read shape {values.shape}, expected {expected.shape}")
    if tolerance > 0:
        differ = np.abs(values.astype(np.float64) - expected.astype(np.float64)) > tolerance
    else:
        differ = values != expected
    if np.issubdtype(values.dtype, np.floating):
        differ &= ~(np.isnan(values) & np.isnan(expected))
    if differ.any():
        first = tuple(int(i) for i in np.argwhere(differ)[0])
        raise VerificationError(
            f"{where}: {int(differ.sum())} of {differ.size} values differ from the data source "
            f"(first at offset {first} of the selection: file has {values[first]!r}, "
            f"expected {expected[first]!r}); the file is not what was written"
        )


def prime_stores(stores: list[tuple[Backend, str]]) -> int:
    """Untimed, before the stores' first cold reads: every page of each store (a backend and
    its path) in the page cache, in order, while they fit in half of the available memory
    (see :func:`h5sweep.pagecache.prime`); the bytes read."""
    return pagecache.prime([p for backend, path in stores for p in backend.paths_to_evict(path)])


class OpenedForReads:
    """A test store dropped from the page cache (``evict``), then opened by its backend."""

    def __init__(
        self,
        backend: Backend,
        path: str,
        dataset_name: str,
        options,
        evict: bool,
        readahead: bool,
        layout: Layout,
        split: bool = False,
    ):
        self.layout = layout
        self.paths = paths = backend.paths_to_evict(path)
        self.evict = evict
        self.split = split  # also time the storage part of every read (see timed_read)
        # how much of the store the drop below frees (1.0 after priming; a store's previous
        # read leaves what it pulled in); NaN when nothing is dropped
        self.resident_before = pagecache.resident_fraction_of(paths) if evict else float("nan")
        if evict:
            for each in paths:
                pagecache.evict(each)
        self.resident = pagecache.resident_fraction_of(paths)
        self.evictable = not evict or self.resident < COLD_RESIDENT_FRACTION
        self.store = backend.open_for_reads(path, dataset_name, options, readahead)
        self.open_s = self.store.open_s
        self.reads = 0

    def close(self) -> None:
        self.store.close()


# Reads of one store at a time (h5sweep.interleave reads several, selection by selection).
ONE_STORE = {"interleaved_stores": 1, "visit_position": 0, "store_copy": 0}


class TimedRead(NamedTuple):
    """What the window keeps of one read; its row is written after the window."""

    repeat: int
    selection: Selection
    elapsed_ns: int
    io: pagecache.IOCounters
    handle: OpenedForReads
    reads_before: int  # reads of this handle before this one (0: a first access)
    values: np.ndarray
    storage_ns: int | None = None  # the storage part alone (split reads), where measured
    page_faults: int = -1  # minor page faults taken during the timed read


def _batches(selections: list[Selection], nbytes: int) -> Iterator[list[tuple[int, Selection]]]:
    """Selections in groups whose values fit the memory budget for checking: each group is
    read in one window and checked after it."""
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, nbytes))
    numbered = list(enumerate(selections))
    for i in range(0, len(numbered), per_batch):
        yield numbered[i : i + per_batch]


def run_case(
    backend: Backend,
    path: str,
    case: ReadCase,
    selections: list[Selection],
    source: DataSource,
    layout: Layout,
    cache: ChunkCache = DEFAULT_CACHE,
    dataset_name: str = "data",
    stored: StoredChunks | None = None,
    evict: bool = True,
    policy: str = "random",
    cold: str = "first",
    readahead: bool = True,
    tolerance: float = 0.0,
    split: bool = False,
) -> list[dict]:
    """Time every selection of one case (see the module docstring); one row per selection.

    ``evict=False`` keeps the page cache as it is (warm-file benchmarks); ``readahead=False``
    tells the kernel that HDF5's reads are random (no readahead); ``tolerance`` is the lossy
    codec's error bound values are checked against (0: exactly)."""
    if cold not in COLD_MODES:
        raise ValueError(f"cold must be one of {COLD_MODES}, not {cold!r}")
    with untimed_work():
        if stored is None:
            stored = backend.stored_chunks(path, layout, dataset_name)
        if evict:
            prime_stores([(backend, path)])
    itemsize = source.dtype.itemsize
    buffer = touched_empty(layout.to_storage(selections[0].size), source.dtype)
    rows: list[dict] = []
    opened: OpenedForReads | None = None
    try:
        for batch in _batches(selections, buffer.nbytes):
            # inside the window only what a read needs: the row is written afterwards, so
            # that no bookkeeping pushes HDF5's state out of the CPU caches between reads
            timed: list[TimedRead] = []
            with timed_window() as window, gc_paused():
                for repeat, selection in batch:
                    if opened is None or cold == "every":
                        if opened is not None:
                            opened.close()
                        opened = OpenedForReads(backend, path, dataset_name, cache, evict, readahead, layout, split)
                        counters = pagecache.io_counters()
                    record, counters = timed_read(backend, path, case, repeat, selection, opened, buffer, counters)
                    timed.append(record)
            rows += [
                {**measurement_row(t, case, layout, stored, cache, policy, cold, window, itemsize), **ONE_STORE}
                for t in timed
            ]
            with untimed_work():
                unchecked = [(t.repeat, t.selection, t.values) for t in timed]
                check_all(path, case, unchecked, source, layout, tolerance)
    finally:
        if opened is not None:
            opened.close()
    return rows


def timed_read(backend, path, case, repeat, selection, opened, buffer, counters) -> tuple[TimedRead, object]:
    """One timed read of ``selection`` from the open store into ``buffer``: only the library's
    read is timed. ``counters`` is the I/O counters' snapshot at the read's start; the
    snapshot after it is returned as the next read's start (nothing between two reads reads
    a file), so each read costs one system call for its I/O evidence. Page faults are counted
    from before the read's preparation (selecting its dataspace) to just after the read; the
    copy of the values after it, which maps pages of its own, is left out."""
    faults = minor_faults()  # a system call: kept away from the clock by the preparation below
    read = opened.store.prepare(opened.layout.to_storage(selection.start), buffer)
    start = time.perf_counter_ns()
    try:
        result = read()
    except Exception as err:  # e.g. a corrupt chunk: HDF5's "filter returned failure", a codec's error
        raise VerificationError(
            f"{path} case {case.name} repeat {repeat} {selection.label}: {backend.label} could not "
            f"read the selection: {err}"
        ) from err
    elapsed = time.perf_counter_ns() - start
    faults = minor_faults() - faults
    after = pagecache.io_counters()
    values = buffer.copy() if result is None else np.asarray(result)
    storage_ns = None
    if opened.split:
        storage_ns, after = timed_storage_read(opened, selection, buffer.shape, after)
    record = TimedRead(repeat, selection, elapsed, after - counters, opened, opened.reads, values, storage_ns, faults)
    opened.reads += 1
    return record, after


def timed_storage_read(opened: OpenedForReads, selection: Selection, shape, counters) -> tuple[int | None, object]:
    """The storage part of a read, timed alone right after it: the stored bytes of the chunks
    the selection touches, fetched as they are (HDF5: a direct chunk read of each; Zarr: each
    chunk file read whole), nothing decoded or copied into the array. A first access is
    mirrored: the store is evicted again before it. Where the library cannot fetch stored
    chunks on their own (contiguous, Zarr shards) None. Returns the next read's counters."""
    fetch = opened.store.prepare_storage(opened.layout.to_storage(selection.start), shape)
    if fetch is None:
        return None, counters
    if opened.evict and opened.reads == 0:
        for each in opened.paths:
            pagecache.evict(each)
    start = time.perf_counter_ns()
    fetch()
    elapsed = time.perf_counter_ns() - start
    return elapsed, pagecache.io_counters()


def measurement_row(
    t: TimedRead, case, layout: Layout, stored: StoredChunks, cache, policy, cold, window, itemsize
) -> dict:
    """The measurement row of one timed read (written after its window closed)."""
    chunks = layout.chunks_touched(t.selection.start, t.selection.size)
    return {
        "case": case.name,
        "repeat": t.repeat,
        "seconds": t.elapsed_ns / 1e9,
        "storage_s": t.storage_ns / 1e9 if t.storage_ns is not None else float("nan"),
        "decode_copy_s": (t.elapsed_ns - t.storage_ns) / 1e9 if t.storage_ns is not None else float("nan"),
        "selection": t.selection.label,
        "bytes_selected": t.selection.nbytes(itemsize),
        "chunks_touched": chunks,
        "chunk_bytes_touched": chunks * layout.chunk_bytes(itemsize),
        "stored_bytes_touched": stored.touched(t.selection),
        "files_touched": stored.files_touched(t.selection),
        "device_read_bytes": t.io.device_read,
        "library_read_bytes": t.io.requested_read,
        "read_calls": t.io.read_calls,
        "page_faults": t.page_faults,
        "cache_state": cache_state(t.io.device_read, t.handle.evictable),
        "cold_mode": cold,
        "reads_since_open": t.reads_before,
        "open_s": t.handle.open_s if t.reads_before == 0 else float("nan"),
        "resident_fraction_at_open": t.handle.resident,
        "resident_fraction_before_evict": t.handle.resident_before,
        **cache.columns(),
        "cache_holds_chunk": cache.holds_chunk(layout.chunk_bytes(itemsize)),
        "policy": policy,
        "variant": variant_label(policy, cache, cold),
        **window.columns(),
    }


def variant_label(policy: str, cache: ChunkCache, cold: str) -> str:
    return f"{policy}, {cache.label}, cold {cold}"


def check_all(path: str, case: ReadCase, unchecked, source: DataSource, layout: Layout, tolerance: float) -> None:
    for repeat, selection, stored in unchecked:
        values = stored.transpose(np.argsort(layout.axes_of(stored.ndim)))  # back to (x, y, z)
        where = f"{path} case {case.name} repeat {repeat} {selection.label}"
        verify(values, source.region(selection.region), where, tolerance)
