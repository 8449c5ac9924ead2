"""Time the read cases on one generated file.

The protocol of every read case (see config/README.md, "What a measurement means"):

- the case's selections are the same for every layout (seeded by the case, not the layout);
- ``cold: first`` (the study's): the file is flushed, dropped from the page cache and
  reopened before the case; the first read is a first access, the rest is sustained reading
  of an open file. ``cold: every``: the file is closed, dropped and reopened before every
  selection, outside the timer, so every read is a first access;
- only HDF5's read is timed: the file and memory dataspaces are built before the clock and
  the clock covers ``H5Dread`` into a preallocated buffer, with Python's garbage collector
  paused; h5py's own per-call cost is measured once per file and recorded beside;
- the timed reads run inside the node's exclusive measurement window
  (:mod:`h5sweep.windows`); checking the values read against the data source happens after
  the window closes;
- every read records the bytes it fetched from the device and the bytes HDF5 asked of the
  file (page cache or not), and so whether it was ``cold``, ``warm`` or from ``memory``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import h5py
import numpy as np
from h5py import h5s

from h5sweep import pagecache
from h5sweep.cases import ReadCase
from h5sweep.cases.base import COLD_MODES
from h5sweep.datasources import DataSource
from h5sweep.errors import VerificationError
from h5sweep.layouts import Layout
from h5sweep.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.selections import Selection
from h5sweep.timing import gc_paused
from h5sweep.windows import timed_window, untimed_work

# Values read are held for checking after the timed reads up to this many bytes.
VERIFY_BUDGET_BYTES = 256 * 2**20


@dataclass(frozen=True)
class ChunkCache:
    """HDF5's per-dataset chunk cache, set when the file is opened. The default is HDF5
    1.x's (1 MiB, 521 slots, w0 0.75), the cache of the studies; HDF5 2.0 raised its own
    default to 8 MiB and 8191 slots. h5sweep always sets the cache explicitly."""

    nbytes: int = 1024**2
    slots: int = 521
    w0: float = 0.75

    def open_kwargs(self) -> dict:
        return {"rdcc_nbytes": self.nbytes, "rdcc_nslots": self.slots, "rdcc_w0": self.w0}

    @property
    def label(self) -> str:
        size = f"{self.nbytes / 2**20:g} MiB" if self.nbytes >= 2**20 else f"{self.nbytes / 2**10:g} KiB"
        return f"cache {size}/{self.slots}/{self.w0:g}"

    @classmethod
    def from_config(cls, entry: dict) -> ChunkCache:
        return cls(int(entry["bytes"]), int(entry["slots"]), float(entry["w0"]))


DEFAULT_CACHE = ChunkCache()


def verify(values: np.ndarray, expected: np.ndarray, where: str) -> None:
    """Raise if ``values`` differ from ``expected``; the message says where and how."""
    if values.shape != expected.shape:
        raise VerificationError(f"{where}: read shape {values.shape}, expected {expected.shape}")
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


class StoredChunks:
    """Stored (after filtering) size of every chunk, to say how many bytes a selection
    needs from storage. Contiguous: the selection's own bytes."""

    def __init__(self, path: str, layout: Layout, dataset_name: str = "data"):
        # Reading the chunk index warms caches: do it before the file is evicted.
        with h5py.File(path, "r") as f:
            self._load(f[dataset_name], layout)

    def _load(self, dset, layout: Layout) -> None:
        self.layout = layout
        self.itemsize = dset.dtype.itemsize
        self.sizes = None
        if layout.chunk_shape is not None:
            grid = layout.storage_layout().chunk_grid(dset.shape)  # the file's own axes
            sizes = np.zeros(grid, dtype=np.int64)
            chunk = layout.storage_chunk_shape

            def record(info):
                sizes[tuple(o // c for o, c in zip(info.chunk_offset, chunk, strict=True))] = info.size

            dset.id.chunk_iter(record)
            self.sizes = sizes

    def touched(self, selection: Selection) -> int:
        if self.sizes is None:
            return selection.nbytes(self.itemsize)
        start, size = self.layout.to_storage(selection.start), self.layout.to_storage(selection.size)
        box = tuple(
            slice(s // c, (s + n - 1) // c + 1)
            for s, n, c in zip(start, size, self.layout.storage_chunk_shape, strict=True)
        )
        return int(self.sizes[box].sum())


class OpenedFile:
    """A test file opened for timed reads, after dropping it from the page cache."""

    def __init__(self, path: str, dataset_name: str, cache: ChunkCache, evict: bool, readahead: bool):
        if evict:
            pagecache.evict(path)
        self.resident = pagecache.resident_fraction(path)
        self.evictable = not evict or self.resident < COLD_RESIDENT_FRACTION
        t0 = time.perf_counter_ns()
        self.file = h5py.File(path, "r", **cache.open_kwargs())
        self.dset = self.file[dataset_name]
        self.open_s = (time.perf_counter_ns() - t0) / 1e9
        if not readahead:  # the bench's read-amplification goal: no readahead on HDF5's descriptor
            os.posix_fadvise(self.file.id.get_vfd_handle(), 0, 0, os.POSIX_FADV_RANDOM)
        self.space = self.dset.id.get_space()
        self.reads = 0

    def close(self) -> None:
        self.file.close()


class TimedRead(NamedTuple):
    """What the window keeps of one read; its row is written after the window."""

    repeat: int
    selection: Selection
    elapsed_ns: int
    io: pagecache.IOCounters
    handle: OpenedFile
    reads_before: int  # reads of this handle before this one (0: a first access)
    values: np.ndarray


def _batches(selections: list[Selection], nbytes: int) -> Iterator[list[tuple[int, Selection]]]:
    """Selections in groups whose values fit the memory budget for checking: each group is
    read in one window and checked after it."""
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, nbytes))
    numbered = list(enumerate(selections))
    for i in range(0, len(numbered), per_batch):
        yield numbered[i : i + per_batch]


def run_case(
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
) -> list[dict]:
    """Time every selection of one case (see the module docstring); one row per selection.

    ``evict=False`` keeps the page cache as it is (warm-file benchmarks); ``readahead=False``
    tells the kernel that HDF5's reads are random (no readahead)."""
    if cold not in COLD_MODES:
        raise ValueError(f"cold must be one of {COLD_MODES}, not {cold!r}")
    if stored is None:
        with untimed_work():
            stored = StoredChunks(path, layout, dataset_name)
    itemsize = source.dtype.itemsize
    buffer = np.empty(layout.to_storage(selections[0].size), dtype=source.dtype)
    mem_space = h5s.create_simple(buffer.shape)
    chunk_bytes = layout.chunk_bytes(itemsize)
    rows: list[dict] = []
    opened: OpenedFile | None = None
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
                        opened = OpenedFile(path, dataset_name, cache, evict, readahead)
                        counters = pagecache.io_counters()
                    space = opened.space
                    space.select_hyperslab(layout.to_storage(selection.start), buffer.shape)
                    start = time.perf_counter_ns()
                    try:
                        opened.dset.id.read(mem_space, space, buffer)
                    except OSError as err:  # e.g. a corrupt chunk: "filter returned failure"
                        raise VerificationError(
                            f"{path} case {case.name} repeat {repeat} {selection.label}: HDF5 could not read "
                            f"the selection: {err}"
                        ) from err
                    elapsed = time.perf_counter_ns() - start
                    # one snapshot of the counters serves as this read's end and the next one's
                    # start (nothing between them reads a file): one system call per read
                    after = pagecache.io_counters()
                    io, counters = after - counters, after
                    timed.append(TimedRead(repeat, selection, elapsed, io, opened, opened.reads, buffer.copy()))
                    opened.reads += 1
            for repeat, selection, elapsed, io, handle, reads_before, _ in timed:
                chunks = layout.chunks_touched(selection.start, selection.size)
                rows.append(
                    {
                        "case": case.name,
                        "repeat": repeat,
                        "seconds": elapsed / 1e9,
                        "selection": selection.label,
                        "bytes_selected": selection.nbytes(itemsize),
                        "chunks_touched": chunks,
                        "chunk_bytes_touched": chunks * chunk_bytes,
                        "stored_bytes_touched": stored.touched(selection),
                        "device_read_bytes": io.device_read,
                        "library_read_bytes": io.requested_read,
                        "read_calls": io.read_calls,
                        "cache_state": cache_state(io.device_read, handle.evictable),
                        "cold_mode": cold,
                        "reads_since_open": reads_before,
                        "open_s": handle.open_s if reads_before == 0 else float("nan"),
                        "resident_fraction_at_open": handle.resident,
                        "chunk_cache_bytes": cache.nbytes,
                        "chunk_cache_slots": cache.slots,
                        "chunk_cache_w0": cache.w0,
                        "cache_holds_chunk": cache.nbytes >= chunk_bytes,
                        "policy": policy,
                        "variant": variant_label(policy, cache, cold),
                        **window.columns(),
                    }
                )
            with untimed_work():
                _check_all(path, case, [(t.repeat, t.selection, t.values) for t in timed], source, layout)
    finally:
        if opened is not None:
            opened.close()
    return rows


def variant_label(policy: str, cache: ChunkCache, cold: str) -> str:
    return f"{policy}, {cache.label}, cold {cold}"


def _check_all(path: str, case: ReadCase, unchecked, source: DataSource, layout: Layout) -> None:
    for repeat, selection, stored in unchecked:
        values = stored.transpose(np.argsort(layout.axes))  # back to (x, y, z)
        verify(values, source.region(selection.region), f"{path} case {case.name} repeat {repeat} {selection.label}")


def h5py_call_overhead_s(path: str, dataset_name: str = "data", calls: int = 200) -> float:
    """What h5py's ``read_direct`` costs on top of ``H5Dread`` per call (parsing the
    selection and building dataspaces), measured on a warm one-element read: the median of
    ``calls`` alternating pairs. Recorded with every read so a user can add it back."""
    with h5py.File(path, "r") as f:
        dset = f[dataset_name]
        one = (slice(0, 1),) * dset.ndim
        buffer = np.empty((1,) * dset.ndim, dtype=dset.dtype)
        mem_space, space = h5s.create_simple(buffer.shape), dset.id.get_space()
        space.select_hyperslab((0,) * dset.ndim, buffer.shape)
        dset.read_direct(buffer, source_sel=one)  # warm
        wrapped, bare = [], []
        with gc_paused():
            for _ in range(calls):
                t0 = time.perf_counter_ns()
                dset.read_direct(buffer, source_sel=one)
                t1 = time.perf_counter_ns()
                dset.id.read(mem_space, space, buffer)
                t2 = time.perf_counter_ns()
                wrapped.append(t1 - t0)
                bare.append(t2 - t1)
    return max(0.0, (float(np.median(wrapped)) - float(np.median(bare))) / 1e9)


def run_queries(
    path: str,
    cases: list[ReadCase],
    shape: tuple,
    seed: int,
    source: DataSource,
    layout: Layout,
    caches: list[ChunkCache] | None = None,
    policies: list[str] | None = None,
    dataset_name: str = "data",
) -> list[dict]:
    """Every read case, for every visiting policy, chunk cache setting and cold mode."""
    rows: list[dict] = []
    with untimed_work():
        stored = StoredChunks(path, layout, dataset_name)
    with timed_window():
        overhead = h5py_call_overhead_s(path, dataset_name)
    for policy in policies or ["random"]:
        for cache in caches or [ChunkCache()]:
            for case in cases:
                selections = case.selections(shape, seed, policy, layout.chunk_shape)
                for cold in case.cold_modes:
                    rows += run_case(
                        path, case, selections, source, layout, cache, dataset_name, stored, policy=policy, cold=cold
                    )
    for row in rows:
        row["h5py_call_overhead_s"] = overhead
    return rows
