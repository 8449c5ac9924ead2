"""Time the read cases on one generated file.

For each case: flush the file and drop it from the page cache, reopen it (fresh HDF5 chunk
and metadata caches), then read the case's seeded selections one by one into a preallocated
buffer, timing only the read. After each timed read, the values are compared with the data
source; a mismatch raises :class:`VerificationError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import h5py
import numpy as np

from h5sweep import pagecache
from h5sweep.cases import ReadCase
from h5sweep.datasources import DataSource
from h5sweep.errors import VerificationError
from h5sweep.layouts import Layout
from h5sweep.selections import Selection

# Pages still cached after eviction below this fraction count as a cold file.
COLD_RESIDENT_FRACTION = 0.01
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


def _check_all(path: str, case: ReadCase, unchecked, source: DataSource, layout: Layout) -> None:
    for repeat, selection, stored in unchecked:
        values = stored.transpose(np.argsort(layout.axes))  # back to (x, y, z)
        verify(values, source.region(selection.region), f"{path} case {case.name} repeat {repeat} {selection.label}")


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
) -> list[dict]:
    """Evict (unless ``evict`` is false), reopen, and time every selection of one case;
    one row per selection."""
    stored = stored or StoredChunks(path, layout, dataset_name)
    if evict:
        pagecache.evict(path)
    resident = pagecache.resident_fraction(path)
    t0 = time.perf_counter_ns()
    f = h5py.File(path, "r", **cache.open_kwargs())
    dset = f[dataset_name]
    open_s = (time.perf_counter_ns() - t0) / 1e9
    itemsize = dset.dtype.itemsize
    rows = []
    try:
        buffer = np.empty(layout.to_storage(selections[0].size), dtype=dset.dtype)
        chunk_bytes = layout.chunk_bytes(itemsize)
        # Values are checked after the case's timed reads, not between them (checking
        # between reads pushes HDF5's buffers out of the CPU caches and slows the next
        # read); copies are held up to a memory budget, then checked early.
        unchecked: list[tuple[int, Selection, np.ndarray]] = []
        held = 0
        for repeat, selection in enumerate(selections):
            region = layout.to_storage(selection.region)
            io_before = pagecache.process_read_bytes()
            start = time.perf_counter_ns()
            dset.read_direct(buffer, source_sel=region)
            elapsed = time.perf_counter_ns() - start
            io_after = pagecache.process_read_bytes()
            unchecked.append((repeat, selection, buffer.copy()))
            held += buffer.nbytes
            if held > VERIFY_BUDGET_BYTES:
                _check_all(path, case, unchecked, source, layout)
                unchecked, held = [], 0
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
                    "device_read_bytes": io_after - io_before if io_before >= 0 else -1,
                    "open_s": open_s if repeat == 0 else float("nan"),
                    "resident_fraction_at_open": resident,
                    "cold_start": resident < COLD_RESIDENT_FRACTION,
                    "chunk_cache_bytes": cache.nbytes,
                    "chunk_cache_slots": cache.slots,
                    "chunk_cache_w0": cache.w0,
                    "cache_holds_chunk": cache.nbytes >= chunk_bytes,
                    "policy": policy,
                    "variant": f"{policy}, {cache.label}",
                }
            )
        _check_all(path, case, unchecked, source, layout)
    finally:
        f.close()
    return rows


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
    """Every read case, for every visiting policy and chunk cache setting, each started
    from a cold (evicted and reopened) file."""
    rows: list[dict] = []
    stored = StoredChunks(path, layout, dataset_name)
    for policy in policies or ["random"]:
        for cache in caches or [ChunkCache()]:
            for case in cases:
                selections = case.selections(shape, seed, policy, layout.chunk_shape)
                rows += run_case(path, case, selections, source, layout, cache, dataset_name, stored, policy=policy)
    return rows
