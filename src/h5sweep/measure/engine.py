"""The read engine: every timed read of h5sweep, in the workflow, the bench and the tests.

What is read (:class:`ReadPlan`: the cases, their seeded selections, visiting policies, cold
modes) and the stores it is read from (:class:`StoreUnderTest`) are values; :func:`run_reads`
reads every selection of the plan from every store, interleaved in time, and
:func:`read_store` is the same with one store.

The protocol of every read (``docs/method.md`` gives the reasons):

- the selections are the same for every store (seeded by the case, not the layout);
- ``cold: first``: the store is dropped from the page cache and reopened before the case; the
  first read is a first access, the rest is sustained reading of an open store. ``cold:
  every``: the store is closed, dropped and reopened before every selection, outside the
  timer. Before its first drop each store is read once into the page cache, untimed
  (:func:`h5sweep.measure.pagecache.prime`), so that every drop frees the store's own pages;
- only the library's read is timed: everything the read needs is built before the clock
  (:meth:`h5sweep.backends.base.OpenedStore.prepare`), the clock covers the read into a
  preallocated buffer, with Python's garbage collector paused;
- the timed reads run inside the node's exclusive measurement window
  (:mod:`h5sweep.measure.lock`); the values are checked against the data source after it;
- every read records the bytes it fetched from the device and the bytes the library asked of
  the store, and so whether it was ``cold``, ``warm`` or from ``memory``;
- interleaving: selection ``i`` of a case is read from every store, in an order drawn anew for
  each selection (seeded), before selection ``i + 1``, so each store's read of a selection is
  seconds, not minutes, away from the reference's read of the same selection and the paired
  ratio cancels the machine's drift. Cases whose every read starts cold take turns round by
  round (:func:`rounds`), so each case's reads span the whole pass; a case read from an open
  store (``cold: first``) keeps the store to itself and runs alone. With a filesystem's
  ``read_copies``, each store's cold reads take its byte-identical copies in turn
  (:mod:`h5sweep.measure.copies`).
"""

from __future__ import annotations

import math
import os
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from h5sweep.errors import VerificationError
from h5sweep.measure import pagecache
from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.measure.timing import gc_paused, minor_faults, touched_empty
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.filesystems import device_reads_counted
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection

if TYPE_CHECKING:  # types only: the engine runs whatever backend, case and read option it is given
    from h5sweep.backends.base import Backend, ReadOption, StoredChunks
    from h5sweep.cases.base import ReadCase


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
        self.open_s = self.store.open_s
        self.reads = 0

    def close(self) -> None:
        self.store.close()


# Reads of one store at a time (h5sweep.measure.interleave reads several, selection by selection).
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
        "cache_state": cache_state(t.io.device_read, t.handle.evictable, t.handle.counted),
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


def variant_label(policy: str, cache: ReadOption, cold: str) -> str:
    return f"{policy}, {cache.label}, cold {cold}"


def check_all(path: str, case: ReadCase, unchecked, source: DataSource, layout: Layout, tolerance: float) -> None:
    for repeat, selection, stored in unchecked:
        values = stored.transpose(np.argsort(layout.axes_of(stored.ndim)))  # back to (x, y, z)
        where = f"{path} case {case.name} repeat {repeat} {selection.label}"
        verify(values, source.region(selection.region), where, tolerance)


@dataclass(frozen=True)
class ReadPlan:
    """What is read: the read cases (each with its repeats and cold modes), the dataset's shape
    and the seed their selections are drawn from, the visiting policies, and how."""

    cases: Sequence[ReadCase]
    shape: tuple[int, ...]
    seed: int
    policies: Sequence[str] = ("random",)
    split: bool = False  # also time each read's storage part alone (:func:`timed_storage_read`)
    evict: bool = True  # False: read the page cache as it is (warm reads), nothing dropped
    readahead: bool = True  # False: tell the kernel the store's reads are random
    # fixed selections per case name, the same for every store and policy, instead of the
    # case's seeded draws (a test or the bench that reads chosen boxes)
    selections: Mapping[str, list[Selection]] | None = None

    def selections_of(self, case, policy: str, chunk_shape) -> list[Selection]:
        if self.selections is not None and case.name in self.selections:
            return list(self.selections[case.name])
        return case.selections(self.shape, self.seed, policy, chunk_shape)


@dataclass
class StoreUnderTest:
    """One store the plan is read from (a backend, its path, layout and the source of its
    values), the read options it is read with, and the rows measured on it."""

    backend: Backend
    path: str
    layout: Layout
    source: DataSource
    dataset_name: str = "data"
    tolerance: float = 0.0  # a lossy codec's error bound (0: values checked exactly)
    read_options: list | None = None  # the backend's, each its own rows (None: its default)
    stored: StoredChunks | None = None  # found by the engine
    call_overhead_s: float = math.nan
    rows: list[dict] = field(default_factory=list)
    # byte-identical copies read in turn by reads that each start cold (h5sweep.measure.copies);
    # empty: the store alone
    copies: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.read_options is None:
            self.read_options = [self.backend.default_read_option]

    def copy_for(self, repeat: int) -> tuple[int, str]:
        """Which copy selection ``repeat`` is read from (0: the store itself), and its path."""
        paths = self.copies or [self.path]
        return repeat % len(paths), paths[repeat % len(paths)]


def visiting_order(n_stores: int, seed: int, case: str, repeat: int) -> list[int]:
    """The order the stores are read in for one selection: a permutation drawn from the seed,
    the case and the selection's number, so every run reads in the same order."""
    rng = np.random.default_rng([seed, zlib.crc32(case.encode()), repeat])
    return [int(i) for i in rng.permutation(n_stores)]


def run_reads(stores: list[StoreUnderTest], plan: ReadPlan) -> list[StoreUnderTest]:
    """Every read case of ``plan``, visiting policy, read option and cold mode, interleaved
    over ``stores``; each store's rows end up in its ``rows``. Read option k of every store
    (HDF5's k-th chunk cache, Zarr's k-th reader) is read in the same pass; a store with fewer
    options sits out the passes beyond its own."""
    with untimed_work():
        for store in stores:
            try:
                store.stored = store.backend.stored_chunks(store.path, store.layout, store.dataset_name)
            except (OSError, ValueError, KeyError) as err:  # a store that cannot be opened at all
                case = plan.cases[0] if plan.cases else None
                first = plan.selections_of(case, plan.policies[0], store.layout.chunk_shape)[0] if case else None
                where = f", before case {case.name}, selection {first.label}" if case else ""
                raise VerificationError(f"{store.path}: cannot be opened for reading{where}: {err}") from err
    with timed_window():
        for store in stores:
            try:
                store.call_overhead_s = store.backend.call_overhead_s(store.path, store.dataset_name)
            except Exception:  # an unreadable store: its timed reads say where, naming case and selection
                store.call_overhead_s = math.nan
    for policy in plan.policies:
        for k in range(max(len(s.read_options) for s in stores)):
            taking_part = [s for s in stores if k < len(s.read_options)]
            options = [s.read_options[k] for s in taking_part]
            variants = [
                Variant(case, [plan.selections_of(case, policy, s.layout.chunk_shape) for s in taking_part], cold)
                for case in plan.cases
                for cold in case.cold_modes
            ]
            # reads that each start cold (cold: every) share one pass; a case read from an
            # open store (cold: first) keeps the store to itself, so it runs alone
            every = [v for v in variants if v.cold == "every"]
            for group in ([every] if every else []) + [[v] for v in variants if v.cold != "every"]:
                _interleave_variants(taking_part, group, options, policy, plan)
    for store in stores:
        for row in store.rows:
            row["h5py_call_overhead_s"] = store.call_overhead_s
    return stores


def read_store(store: StoreUnderTest, plan: ReadPlan) -> list[dict]:
    """:func:`run_reads` with one store (``interleave: false``, a test, the bench): its rows."""
    return run_reads([store], plan)[0].rows


@dataclass
class Variant:
    """One case in one cold mode, with each store's selections."""

    case: ReadCase
    selections: list[list]  # per store
    cold: str


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


def _interleave_variants(stores, variants: list[Variant], options, policy, plan: ReadPlan) -> None:
    """Variants read in one pass: round by round (:func:`rounds`), each variant's next
    selection from every store in its visiting order. A single variant is read selection by
    selection; several (each cold: every) take turns, so that a case's medians span the
    whole pass rather than a stretch of it in which the machine may be faster or slower."""
    buffers = [
        [
            touched_empty(s.layout.to_storage(sel[0].size), s.source.dtype)
            for s, sel in zip(stores, v.selections, strict=True)
        ]
        for v in variants
    ]
    # the first round's drops then free each store's own pages, as every later round's do
    every = any(v.cold == "every" for v in variants)
    with untimed_work():
        prime_stores(
            []
            if not plan.evict
            else [
                (store.backend, path)
                for store in stores
                for path in dict.fromkeys([store.path, *(store.copies if every else [])])
            ]
        )
    schedule = rounds([len(v.selections[0]) for v in variants])
    per_round = sum(b.nbytes for per_variant in buffers for b in per_variant)
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, per_round))
    opened: dict[tuple[int, int], OpenedForReads] = {}
    try:
        for first in range(0, len(schedule), per_batch):
            # variant, store, read, its place in the visit, the copy it read
            timed: list[tuple[int, int, TimedRead, int, int]] = []
            with timed_window() as window, gc_paused():
                for v, repeat in (item for r in schedule[first : first + per_batch] for item in r):
                    variant = variants[v]
                    for place, k in enumerate(visiting_order(len(stores), plan.seed, variant.case.name, repeat)):
                        store = stores[k]
                        # a read that starts cold reads its copy; an open file is the store itself
                        copy, path = store.copy_for(repeat) if variant.cold == "every" else (0, store.path)
                        if (v, k) not in opened or variant.cold == "every":
                            if (v, k) in opened:
                                opened[(v, k)].close()
                            opened[(v, k)] = OpenedForReads(
                                store.backend,
                                path,
                                store.dataset_name,
                                options[k],
                                plan.evict,
                                plan.readahead,
                                store.layout,
                                plan.split,
                            )
                            counters = pagecache.io_counters()
                        read, counters = timed_read(
                            store.backend,
                            path,
                            variant.case,
                            repeat,
                            variant.selections[k][repeat],
                            opened[(v, k)],
                            buffers[v][k],
                            counters,
                        )
                        if variant.cold == "every":  # closed before another store's read
                            opened.pop((v, k)).close()
                        timed.append((v, k, read, place, copy))
            for v, k, read, place, copy in timed:
                store, variant = stores[k], variants[v]
                size = store.source.dtype.itemsize
                row = measurement_row(
                    read, variant.case, store.layout, store.stored, options[k], policy, variant.cold, window, size
                )
                store.rows.append(
                    {**row, "interleaved_stores": len(stores), "visit_position": place, "store_copy": copy}
                )
            with untimed_work():  # every value against the source, per store and copy read
                for v, variant in enumerate(variants):
                    for k, store in enumerate(stores):
                        for copy, path in enumerate(store.copies or [store.path]):
                            mine = [
                                (t.repeat, t.selection, t.values)
                                for u, j, t, _, c in timed
                                if (u, j, c) == (v, k, copy)
                            ]
                            if mine:
                                check_all(path, variant.case, mine, store.source, store.layout, store.tolerance)
    finally:
        for handle in opened.values():
            handle.close()
