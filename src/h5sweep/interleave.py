"""Read cases interleaved in time over every test store of a filesystem.

Measured one store after another, two layouts are compared across minutes, and a shared
machine drifts by 10-30% over minutes: the drift then decides close rankings. Interleaved,
selection ``i`` of a case is read from every store, in an order drawn anew for each
selection (seeded: the same in every run), before selection ``i + 1``; each layout's read of
a selection is then seconds, not minutes, away from contiguous's read of the same selection,
and the paired ratio cancels the drift. Cases whose every read starts cold (``cold: every``)
also take turns, round by round (:func:`rounds`), so each case's reads span the whole pass
instead of a stretch of it: a faster or slower minute of the machine then weighs on every case
alike rather than shifting one case's medians. A case read from an open file (``cold:
first``) keeps the store to itself and runs alone. The protocol of each read is :mod:`h5sweep.query`'s:
the same cold modes, only the library's read timed inside the node's measurement window,
every value checked afterwards; with a filesystem's ``read_copies``, each store's cold reads
take its byte-identical copies in turn (:mod:`h5sweep.readcopies`). The price is disk: every
store of the filesystem exists at once (the plan counts it, copies too). A store queried alone
(``interleave: false``, :func:`run_queries`)
is a pass over one store: its cases take the same turns.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from h5sweep import pagecache
from h5sweep.backends.base import Backend, StoredChunks
from h5sweep.cases import ReadCase
from h5sweep.chunkcache import DEFAULT_CACHE, ChunkCache
from h5sweep.datasources import DataSource
from h5sweep.layouts import Layout
from h5sweep.query import OpenedForReads, TimedRead, check_all, measurement_row, prime_stores, timed_read
from h5sweep.resources import VERIFY_BUDGET_BYTES
from h5sweep.timing import gc_paused, touched_empty
from h5sweep.windows import timed_window, untimed_work


@dataclass
class StoreUnderTest:
    """One test store of the interleaved reads, and the rows measured on it."""

    backend: Backend
    path: str
    layout: Layout
    source: DataSource
    dataset_name: str = "data"
    tolerance: float = 0.0
    read_options: list = field(default_factory=lambda: [DEFAULT_CACHE])  # the backend's, each its own rows
    stored: StoredChunks | None = None
    call_overhead_s: float = math.nan
    rows: list[dict] = field(default_factory=list)
    # byte-identical copies read in turn by reads that each start cold (h5sweep.readcopies);
    # empty: the store alone
    copies: list[str] = field(default_factory=list)

    def copy_for(self, repeat: int) -> tuple[int, str]:
        """Which copy selection ``repeat`` is read from (0: the store itself), and its path."""
        paths = self.copies or [self.path]
        return repeat % len(paths), paths[repeat % len(paths)]


def visiting_order(n_stores: int, seed: int, case: str, repeat: int) -> list[int]:
    """The order the stores are read in for one selection: a permutation drawn from the seed,
    the case and the selection's number, so every run reads in the same order."""
    rng = np.random.default_rng([seed, zlib.crc32(case.encode()), repeat])
    return [int(i) for i in rng.permutation(n_stores)]


def run_interleaved(
    stores: list[StoreUnderTest],
    cases: list[ReadCase],
    shape: tuple,
    seed: int,
    policies: list[str] | None = None,
    split: bool = False,
) -> list[StoreUnderTest]:
    """Every read case, visiting policy, read option and cold mode, interleaved over
    ``stores``; each store's rows end up in its ``rows``. Read option k of every store (HDF5's
    k-th chunk cache, Zarr's k-th reader) is read in the same pass; a store with fewer options
    sits out the passes beyond its own."""
    with untimed_work():
        for store in stores:
            store.stored = store.backend.stored_chunks(store.path, store.layout, store.dataset_name)
    with timed_window():
        for store in stores:
            store.call_overhead_s = store.backend.call_overhead_s(store.path, store.dataset_name)
    for policy in policies or ["random"]:
        for k in range(max(len(s.read_options) for s in stores)):
            taking_part = [s for s in stores if k < len(s.read_options)]
            options = [s.read_options[k] for s in taking_part]
            variants = [
                Variant(case, [case.selections(shape, seed, policy, s.layout.chunk_shape) for s in taking_part], cold)
                for case in cases
                for cold in case.cold_modes
            ]
            # reads that each start cold (cold: every) share one pass; a case read from an
            # open file (cold: first) keeps the file to itself, so it runs alone
            every = [v for v in variants if v.cold == "every"]
            for group in ([every] if every else []) + [[v] for v in variants if v.cold != "every"]:
                _interleave_variants(taking_part, group, options, policy, seed, split)
    for store in stores:
        for row in store.rows:
            row["h5py_call_overhead_s"] = store.call_overhead_s
    return stores


def run_queries(
    backend: Backend,
    path: str,
    cases: list[ReadCase],
    shape: tuple,
    seed: int,
    source: DataSource,
    layout: Layout,
    caches: list[ChunkCache] | None = None,
    policies: list[str] | None = None,
    dataset_name: str = "data",
    tolerance: float = 0.0,
    split: bool = False,
    copies: list[str] | None = None,
) -> list[dict]:
    """Every read case, for every visiting policy, read option and cold mode; ``split``: each
    read's storage part timed too (:func:`h5sweep.query.timed_storage_read`). The reads follow the
    interleaved protocol with this one store (:func:`run_interleaved`):
    cases whose every read starts cold take turns round by round, so that each case's reads
    span the whole job rather than one stretch of it; a ``cold: first`` case runs alone.
    ``copies``: the store and its byte-identical copies, read in turn (h5sweep.readcopies)."""
    store = StoreUnderTest(
        backend, path, layout, source, dataset_name, tolerance, list(caches or [DEFAULT_CACHE]), copies=copies or []
    )
    return run_interleaved([store], cases, shape, seed, policies, split)[0].rows


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


def _interleave_variants(stores, variants: list[Variant], options, policy, seed, split=False) -> None:
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
            [
                (store.backend, path)
                for store in stores
                for path in dict.fromkeys([store.path, *(store.copies if every else [])])
            ]
        )
    plan = rounds([len(v.selections[0]) for v in variants])
    per_round = sum(b.nbytes for per_variant in buffers for b in per_variant)
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, per_round))
    opened: dict[tuple[int, int], OpenedForReads] = {}
    try:
        for first in range(0, len(plan), per_batch):
            # variant, store, read, its place in the visit, the copy it read
            timed: list[tuple[int, int, TimedRead, int, int]] = []
            with timed_window() as window, gc_paused():
                for v, repeat in (item for r in plan[first : first + per_batch] for item in r):
                    variant = variants[v]
                    for place, k in enumerate(visiting_order(len(stores), seed, variant.case.name, repeat)):
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
                                True,
                                True,
                                store.layout,
                                split,
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
