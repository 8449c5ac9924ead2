"""One timed read and its row, as the engine (:mod:`h5sweep.measure.engine`) makes it: the store
opened for reads, the read timed into a preallocated buffer, its cache state, the checking of
its values after the window; and the order in which stores and cases take turns."""

from __future__ import annotations

import os
import time
import zlib
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from h5sweep.measure import pagecache
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.measure.timing import minor_faults
from h5sweep.storage import columns as C
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.filesystems import device_reads_counted
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection

if TYPE_CHECKING:  # types only: the engine runs whatever backend, case and read option it is given
    from h5sweep.measure.engine.contracts import Backend, ReadCase, ReadOption, StoredChunks


# Bytes of values read in one measurement window before they are checked (and freed): the
# window's reads are kept until it closes, so this bounds the memory a job holds for them.
VERIFY_BUDGET_BYTES = 256 * 2**20


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
    (see :func:`h5sweep.measure.pagecache.prime`); the bytes read."""
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
        self.counted = device_reads_counted(os.path.dirname(os.path.abspath(path)))
        self.store = backend.open_for_reads(path, dataset_name, options, readahead)
        self.reads = 0
        # where its target meters its reads itself (an object store's requests), that meter
        self.requests = self.store.meter

    @property
    def open_s(self) -> float:
        """The open's seconds (on an object store: the part of the first read it took)."""
        return self.store.open_s

    @property
    def open_requests(self) -> int | None:
        """On an object store, the requests of the open (inside the first read's): None elsewhere."""
        if self.requests is None:
            return None
        return self.store.open_requests

    def close(self) -> None:
        self.store.close()


# Reads of one store at a time (h5sweep.measure.engine.interleave reads several, selection by selection).
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
    requests: dict | None = None  # a remote store's requests during the read (their columns)


def timed_read(backend, path, case, repeat, selection, opened, buffer, counters) -> tuple[TimedRead, object]:
    """One timed read of ``selection`` from the open store into ``buffer``: only the library's
    read is timed. ``counters`` is the I/O counters' snapshot at the read's start; the
    snapshot after it is returned as the next read's start (nothing between two reads reads
    a file), so each read costs one system call for its I/O evidence. Page faults are counted
    from before the read's preparation (selecting its dataspace) to just after the read; the
    copy of the values after it, which maps pages of its own, is left out."""
    faults = minor_faults()  # a system call: kept away from the clock by the preparation below
    read = opened.store.prepare(opened.layout.to_storage(selection.start), buffer)
    mark = opened.requests.mark() if opened.requests is not None else None
    start = time.perf_counter_ns()
    try:
        result = read()
    except Exception as err:  # e.g. a corrupt chunk: HDF5's "filter returned failure", a codec's error
        lost = _not_found(opened, mark)
        raise _failed(
            opened,
            mark,
            f"{path} case {case.name} repeat {repeat} {selection.label}: {backend.label} could not "
            f"read the selection: {err}" + (f"; {lost}" if lost else ""),
        ) from err
    elapsed = time.perf_counter_ns() - start
    faults = minor_faults() - faults
    requests = opened.requests.since(mark) if mark is not None else None
    after = pagecache.io_counters()
    io = after - counters  # the read's own: the storage part timed after it is not counted
    if mark is not None:  # a remote store's: a key it holds answered "not found" fails the read
        lost = _not_found(opened, mark)
        if lost:  # its values are fill values where the store's are, whatever they are
            raise _failed(opened, mark, f"{path} case {case.name} repeat {repeat} {selection.label}: {lost}")
        after = pagecache.io_counters()  # the relay's log read for it is not the next read's
    values = buffer.copy() if result is None else np.asarray(result)
    storage_ns = None
    if opened.split:
        storage_ns, after = timed_storage_read(opened, selection, buffer.shape, after)
    record = TimedRead(repeat, selection, elapsed, io, opened, opened.reads, values, storage_ns, faults, requests)
    opened.reads += 1
    return record, after


def _not_found(opened: OpenedForReads, mark) -> str:
    """On an object store, the keys of the store answered "not found" during a read, in words
    ("" for none, and off an object store)."""
    return opened.requests.not_found_said(mark) if mark is not None else ""


def _failed(opened: OpenedForReads, mark, message: str) -> VerificationError:
    """The error of a failed read: the :class:`h5sweep.storage.errors.FaultedReadError` its store's
    meter makes where the read failed on a fault its target emulated, else a
    VerificationError."""
    faulted = opened.requests.faulted(message, mark) if mark is not None else None
    return faulted or VerificationError(message)


def failure_row(case, repeat: int, selection: Selection, cache, policy: str, cold: str, error) -> dict:
    """The row of a read that failed on an emulated fault (:class:`FaultedReadError`): what it
    asked for and met, no time, and why it failed (``read_failed``)."""
    counts = error.counts
    return {
        C.CASE: case.name,
        C.REPEAT: repeat,
        C.SECONDS: float("nan"),
        C.SELECTION: selection.label,
        C.CACHE_STATE: error.cache_state,
        **counts,
        C.COLD_MODE: cold,
        **cache.columns(),
        C.READ_OPTION: cache.label,
        C.READ_OPTION_SETTING: cache.setting,
        C.POLICY: policy,
        C.VARIANT: variant_label(policy, cache, cold),
        **error.columns,
    }


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
        C.CASE: case.name,
        C.REPEAT: t.repeat,
        C.SECONDS: t.elapsed_ns / 1e9,
        C.STORAGE_S: t.storage_ns / 1e9 if t.storage_ns is not None else float("nan"),
        C.DECODE_COPY_S: (t.elapsed_ns - t.storage_ns) / 1e9 if t.storage_ns is not None else float("nan"),
        C.SELECTION: t.selection.label,
        C.BYTES_SELECTED: t.selection.nbytes(itemsize),
        C.CHUNKS_TOUCHED: chunks,
        C.CHUNK_BYTES_TOUCHED: chunks * layout.chunk_bytes(itemsize),
        C.STORED_BYTES_TOUCHED: stored.touched(t.selection),
        C.FILES_TOUCHED: stored.files_touched(t.selection),
        C.DEVICE_READ_BYTES: t.io.device_read,
        C.LIBRARY_READ_BYTES: t.io.requested_read,
        C.READ_CALLS: t.io.read_calls,
        C.PAGE_FAULTS: t.page_faults,
        C.CACHE_STATE: (
            t.handle.requests.cache_state(t.requests)
            if t.requests is not None
            else cache_state(t.io.device_read, t.handle.evictable, t.handle.counted)
        ),
        **(t.requests or {}),
        **(
            t.handle.requests.open_columns(t.handle.open_requests if t.reads_before == 0 else None)
            if t.requests is not None
            else {}
        ),
        C.COLD_MODE: cold,
        C.READS_SINCE_OPEN: t.reads_before,
        C.OPEN_S: t.handle.open_s if t.reads_before == 0 else float("nan"),
        C.RESIDENT_FRACTION_AT_OPEN: t.handle.resident,
        C.RESIDENT_FRACTION_BEFORE_EVICT: t.handle.resident_before,
        **cache.columns(),
        C.READ_OPTION: cache.label,
        C.READ_OPTION_SETTING: cache.setting,
        C.CACHE_HOLDS_CHUNK: cache.holds_chunk(layout.chunk_bytes(itemsize)),
        C.POLICY: policy,
        C.VARIANT: variant_label(policy, cache, cold),
        **window.columns(),
    }


def variant_label(policy: str, cache: ReadOption, cold: str) -> str:
    return f"{policy}, {cache.label}, cold {cold}"


def check_all(path: str, case: ReadCase, unchecked, source: DataSource, layout: Layout, tolerance: float) -> None:
    for repeat, selection, stored in unchecked:
        values = stored.transpose(np.argsort(layout.axes_of(stored.ndim)))  # back to (x, y, z)
        where = f"{path} case {case.name} repeat {repeat} {selection.label}"
        verify(values, source.region(selection.region), where, tolerance)


def visiting_order(n_stores: int, seed: int, case: str, repeat: int) -> list[int]:
    """The order the stores are read in for one selection: a permutation drawn from the seed,
    the case and the selection's number, so every run reads in the same order."""
    rng = np.random.default_rng([seed, zlib.crc32(case.encode()), repeat])
    return [int(i) for i in rng.permutation(n_stores)]


def rounds(repeats: list[int]) -> list[list[tuple[int, int]]]:
    """The passes of an interleaved read: each variant's repeats spread evenly over as many
    rounds as the variant with the most has, so every variant's reads span the whole pass in
    time; round r lists (variant, repeat) in variant order."""
    n = max(repeats)
    out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for v, m in enumerate(repeats):
        for j in range(m):
            out[j * n // m].append((v, j))
    return out
