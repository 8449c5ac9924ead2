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
  (:mod:`h5sweep.cases.copies`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from h5sweep.errors import VerificationError
from h5sweep.measure import pagecache
from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.measure.timing import gc_paused, touched_empty
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection

if TYPE_CHECKING:  # types only: the engine runs whatever backend, case and read option it is given
    from h5sweep.backends.base import Backend, StoredChunks
    from h5sweep.cases.base import ReadCase


from h5sweep.cases.engine.reads import (
    VERIFY_BUDGET_BYTES,
    OpenedForReads,
    TimedRead,
    check_all,
    measurement_row,
    prime_stores,
    rounds,
    timed_read,
    timed_storage_read,
    variant_label,
    verify,
    visiting_order,
)
from h5sweep.storage import columns as C

__all__ = [
    "OpenedForReads",
    "TimedRead",
    "VERIFY_BUDGET_BYTES",
    "check_all",
    "measurement_row",
    "prime_stores",
    "timed_read",
    "timed_storage_read",
    "variant_label",
    "verify",
    "ReadPlan",
    "StoreUnderTest",
    "Variant",
    "read_store",
    "rounds",
    "run_reads",
    "visiting_order",
]


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
    # byte-identical copies read in turn by reads that each start cold (h5sweep.cases.copies);
    # empty: the store alone
    copies: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.read_options is None:
            self.read_options = [self.backend.default_read_option]

    def copy_for(self, repeat: int) -> tuple[int, str]:
        """Which copy selection ``repeat`` is read from (0: the store itself), and its path."""
        paths = self.copies or [self.path]
        return repeat % len(paths), paths[repeat % len(paths)]


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
            row[C.H5PY_CALL_OVERHEAD_S] = store.call_overhead_s
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


def _interleave_variants(stores, variants: list[Variant], options, policy, plan: ReadPlan) -> None:
    """Variants read in one pass: round by round (:func:`rounds`), each variant's next
    selection from every store in its visiting order. A single variant is read selection by
    selection; several (each cold: every) take turns, so that a case's medians span the
    whole pass rather than a stretch of it in which the machine may be faster or slower."""
    # one buffer per store and selection size (a recorded trace reads boxes of many sizes)
    buffers = [
        [
            {
                size: touched_empty(s.layout.to_storage(size), s.source.dtype)
                for size in dict.fromkeys(x.size for x in sel)
            }
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
    per_round = sum(max(b.nbytes for b in sizes.values()) for per_variant in buffers for sizes in per_variant)
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
                            buffers[v][k][variant.selections[k][repeat].size],
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
                    {**row, C.INTERLEAVED_STORES: len(stores), C.VISIT_POSITION: place, C.STORE_COPY: copy}
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
