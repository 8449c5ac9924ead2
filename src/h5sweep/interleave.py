"""Read cases interleaved in time over every test store of a filesystem.

Measured one store after another, two layouts are compared across minutes, and a shared
machine drifts by 10-30% over minutes: the drift then decides close rankings. Interleaved,
selection ``i`` of a case is read from every store, in an order drawn anew for each
selection (seeded: the same in every run), before selection ``i + 1``; each layout's read of
a selection is then seconds, not minutes, away from contiguous's read of the same selection,
and the paired ratio cancels the drift. The protocol of each read is :mod:`h5sweep.query`'s:
the same cold modes, only the library's read timed inside the node's measurement window,
every value checked afterwards. The price is disk: every store of the filesystem exists at
once (the plan counts it).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from h5sweep import pagecache
from h5sweep.backends.base import Backend, StoredChunks
from h5sweep.cases import ReadCase
from h5sweep.chunkcache import DEFAULT_CACHE
from h5sweep.datasources import DataSource
from h5sweep.layouts import Layout
from h5sweep.query import OpenedForReads, TimedRead, check_all, measurement_row, timed_read
from h5sweep.resources import VERIFY_BUDGET_BYTES
from h5sweep.timing import gc_paused
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
            for case in cases:
                selections = [case.selections(shape, seed, policy, s.layout.chunk_shape) for s in taking_part]
                for cold in case.cold_modes:
                    _interleave_case(taking_part, case, selections, options, policy, cold, seed, split)
    for store in stores:
        for row in store.rows:
            row["h5py_call_overhead_s"] = store.call_overhead_s
    return stores


def _interleave_case(stores, case, selections, options, policy, cold, seed, split=False) -> None:
    """One case in one variant: selection by selection, every store in its visiting order."""
    buffers = [
        np.empty(s.layout.to_storage(sel[0].size), dtype=s.source.dtype)
        for s, sel in zip(stores, selections, strict=True)
    ]
    repeats = len(selections[0])
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, sum(b.nbytes for b in buffers)))
    opened: dict[int, OpenedForReads] = {}
    try:
        for first in range(0, repeats, per_batch):
            timed: list[tuple[int, TimedRead, int]] = []  # store, read, its place in the visit
            with timed_window() as window, gc_paused():
                for repeat in range(first, min(repeats, first + per_batch)):
                    for place, k in enumerate(visiting_order(len(stores), seed, case.name, repeat)):
                        store = stores[k]
                        if k not in opened or cold == "every":
                            if k in opened:
                                opened[k].close()
                            opened[k] = OpenedForReads(
                                store.backend,
                                store.path,
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
                            store.path,
                            case,
                            repeat,
                            selections[k][repeat],
                            opened[k],
                            buffers[k],
                            counters,
                        )
                        timed.append((k, read, place))
            for k, read, place in timed:
                store = stores[k]
                size = store.source.dtype.itemsize
                row = measurement_row(read, case, store.layout, store.stored, options[k], policy, cold, window, size)
                store.rows.append({**row, "interleaved_stores": len(stores), "visit_position": place})
            with untimed_work():
                for k, store in enumerate(stores):
                    mine = [(t.repeat, t.selection, t.values) for j, t, _ in timed if j == k]
                    check_all(store.path, case, mine, store.source, store.layout, store.tolerance)
    finally:
        for handle in opened.values():
            handle.close()
