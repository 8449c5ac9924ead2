"""The read engine: every timed read of h5sweep, in the workflow, the bench and the tests.

What is read (:class:`ReadPlan`: the cases, their seeded selections, visiting policies, cold
modes) and the stores it is read from (:class:`StoreUnderTest`) are values; :func:`run_reads`
reads every selection of the plan from every store, interleaved in time, and
:func:`read_store` is the same with one store. It imports no backend and no case: what it asks
of them is :mod:`h5sweep.measure.engine.contracts`.

The protocol of every read (``docs/method.md`` gives the reasons):

- the selections are the same for every store (seeded by the case, not the layout);
- ``cold: first``: the store is dropped from the page cache and reopened before the case; the
  first read is a first access, the rest is sustained reading of an open store. ``cold:
  every``: the store is closed, dropped and reopened before every selection, outside the
  timer. Before its first drop each store is read once into the page cache, untimed
  (:func:`h5sweep.measure.pagecache.prime`), so that every drop frees the store's own pages;
- only the library's read is timed: everything the read needs is built before the clock
  (:meth:`h5sweep.measure.engine.contracts.OpenedStore.prepare`), the clock covers the read into a
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.storage import columns as C
from h5sweep.storage.datasources import DataSource
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection

if TYPE_CHECKING:  # types only: the engine runs whatever backend, case and read option it is given
    from h5sweep.measure.engine.contracts import Backend, ReadCase, StoredChunks


from h5sweep.measure.engine.interleave import Variant, interleave_variants
from h5sweep.measure.engine.race import RaceRule
from h5sweep.measure.engine.reads import (
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
    # race the stores of each pass of reads that each start cold (None: read every store to the end)
    race: RaceRule | None = None
    # a read that fails on a fault the relay injected (FaultedReadError) is recorded as a row
    # that says why and its store is read no further in that read option, instead of failing
    # the pass (a query job on a filesystem with s3.faults); any other failure still fails it
    record_faults: bool = False

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
    protected: bool = False  # never raced out (the reference store every ratio is to)
    kept_best_of: str = ""  # a group whose best store the race keeps to the end ("compressed")
    rows: list[dict] = field(default_factory=list)
    # byte-identical copies read in turn by reads that each start cold (h5sweep.measure.copies);
    # empty: the store alone
    copies: list[str] = field(default_factory=list)
    failed: str = ""  # why a read failed on an emulated fault (then read no further; ReadPlan.record_faults)

    def __post_init__(self) -> None:
        if self.read_options is None:
            self.read_options = [self.backend.default_read_option]

    def copy_for(self, repeat: int) -> tuple[int, str]:
        """Which copy selection ``repeat`` is read from (0: the store itself), and its path."""
        paths = self.copies or [self.path]
        return repeat % len(paths), paths[repeat % len(paths)]


def run_reads(stores: list[StoreUnderTest], plan: ReadPlan) -> list[StoreUnderTest]:
    """Every read case of ``plan``, visiting policy, read option and cold mode, interleaved
    over ``stores``; each store's rows end up in its ``rows``. Every store in every one of its
    read options (HDF5's chunk caches, Zarr's readers) takes part in the same pass of reads
    that each start cold, each such pair as one reader of the pass: a store read with two
    caches is paired, selection by selection, with itself and with every other store, as two
    stores are (a read option is a choice of the user's, ranked and raced as a store is).
    Reads of an open store (``cold: first``) take the read options one pass each."""
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
    # each store in each read option: a reader of its own (the reference's first option alone protected)
    pairs = [(store, k) for store in stores for k in range(len(store.read_options))]
    options = [store.read_options[k] for store, k in pairs]
    failed = [""] * len(pairs)  # a reader failed on an emulated fault is read no further
    for policy in plan.policies:
        readers = [
            replace(
                store, rows=[], read_options=[store.read_options[k]], protected=store.protected and k == 0, failed=why
            )
            for (store, k), why in zip(pairs, failed, strict=True)
        ]
        variants = [
            Variant(case, [plan.selections_of(case, policy, s.layout.chunk_shape) for s in readers], cold)
            for case in plan.cases
            for cold in case.cold_modes
        ]
        # reads that each start cold (cold: every) share one pass; a case read from an open
        # store (cold: first) keeps the store to itself, so it runs alone, and in one read
        # option at a time: two open handles on one file would share the library's state of
        # the file (HDF5 opens a file once per process, with the first open's chunk cache)
        every = [v for v in variants if v.cold == "every"]
        if every:
            interleave_variants(readers, every, options, policy, plan)
        for variant in (v for v in variants if v.cold != "every"):
            for k in sorted({k for _, k in pairs}):
                mine = [i for i, (_, j) in enumerate(pairs) if j == k]
                alone = Variant(variant.case, [variant.selections[i] for i in mine], variant.cold)
                interleave_variants([readers[i] for i in mine], [alone], [options[i] for i in mine], policy, plan)
        failed = [reader.failed for reader in readers]
        for (store, k), reader in zip(pairs, readers, strict=True):
            for row in reader.rows:
                row[C.READ_OPTION_INDEX] = k
            store.rows.extend(reader.rows)
    for store in stores:
        if store.backend.call_overhead_column:
            for row in store.rows:
                row[store.backend.call_overhead_column] = store.call_overhead_s
    return stores


def read_store(store: StoreUnderTest, plan: ReadPlan) -> list[dict]:
    """:func:`run_reads` with one store (``interleave: false``, a test, the bench): its rows."""
    return run_reads([store], plan)[0].rows
