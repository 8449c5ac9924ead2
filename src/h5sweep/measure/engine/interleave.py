"""One pass of interleaved reads (:func:`interleave_variants`): the variants of a read plan
that share a pass, round by round, every store's read of a selection in a seeded order, in
timed windows that end where the values read must be checked or the race looks
(:mod:`h5sweep.measure.engine.race`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from h5sweep.measure import pagecache
from h5sweep.measure.engine.race import Race
from h5sweep.measure.engine.reads import (
    VERIFY_BUDGET_BYTES,
    OpenedForReads,
    TimedRead,
    check_all,
    failure_row,
    measurement_row,
    prime_stores,
    rounds,
    timed_read,
    visiting_order,
)
from h5sweep.measure.lock import timed_window, untimed_work
from h5sweep.measure.timing import gc_paused, touched_empty
from h5sweep.storage import columns as C
from h5sweep.storage.errors import FaultedReadError

if TYPE_CHECKING:
    from h5sweep.measure.engine import ReadPlan
    from h5sweep.measure.engine.contracts import ReadCase


@dataclass
class Variant:
    """One case in one cold mode, with each store's selections."""

    case: ReadCase
    selections: list[list]  # per store
    cold: str


def interleave_variants(stores, variants: list[Variant], options, policy, plan: ReadPlan) -> None:
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
    # the first round's drops then free each store's own pages, as every later round's do (a
    # store read in several read options is primed once)
    every = any(v.cold == "every" for v in variants)
    with untimed_work():
        prime_stores(
            []
            if not plan.evict
            else list(
                dict.fromkeys(
                    (store.backend, path)
                    for store in stores
                    for path in dict.fromkeys([store.path, *(store.copies if every else [])])
                )
            )
        )
    schedule = rounds([len(v.selections[0]) for v in variants])
    per_round = sum(max(b.nbytes for b in sizes.values()) for per_variant in buffers for sizes in per_variant)
    per_batch = max(1, VERIFY_BUDGET_BYTES // max(1, per_round))
    race = None
    if plan.race is not None and every and len(stores) > 1:
        protected = {k for k, store in enumerate(stores) if store.protected}
        groups: dict[str, set[int]] = {}
        for k, store in enumerate(stores):
            if store.kept_best_of:
                groups.setdefault(store.kept_best_of, set()).add(k)
        cases = [v.case.name for v in variants]
        race = Race(plan.race, len(stores), cases, len(schedule), protected, list(groups.values()))
    mine_before = [len(store.rows) for store in stores]
    opened: dict[tuple[int, int], OpenedForReads] = {}
    try:
        for first, last in _batches(len(schedule), per_batch, race):
            # variant, store, read, its place in the visit, the copy it read
            timed: list[tuple[int, int, TimedRead, int, int]] = []
            failures: list[tuple[int, int, int, FaultedReadError, int, int]] = []
            with timed_window() as window, gc_paused():
                for v, repeat in (item for r in schedule[first:last] for item in r):
                    variant = variants[v]
                    for place, k in enumerate(visiting_order(len(stores), plan.seed, variant.case.name, repeat)):
                        if race is not None and not race.reads(v, k) or stores[k].failed:
                            continue
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
                        try:
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
                        except FaultedReadError as err:
                            if not plan.record_faults:
                                raise
                            # an emulated fault's failure: recorded, and the store read no further
                            store.failed = str(err)
                            failures.append((v, k, repeat, err, place, copy))
                            opened.pop((v, k)).close()
                            if race is not None:
                                race.failed.add(k)
                            counters = pagecache.io_counters()
                            continue
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
                disturbed = read.handle.requests is not None and read.handle.requests.disturbed(read.requests)
                if race is not None and not disturbed:  # raced on undisturbed reads
                    race.record(v, k, read.repeat, row[C.SECONDS])
            for v, k, repeat, err, place, copy in failures:
                variant = variants[v]
                row = failure_row(
                    variant.case, repeat, variant.selections[k][repeat], options[k], policy, variant.cold, err
                )
                stores[k].rows.append(
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
                if race is not None and race.due(last):
                    for k in race.look(last):  # out: its open handles go
                        for v in range(len(variants)):
                            if (v, k) in opened and not race.reads(v, k):
                                opened.pop((v, k)).close()
    finally:
        for handle in opened.values():
            handle.close()
    if race is not None:  # a raced-out store's rows of this pass say when it stopped, and by how much
        for k, out in race.out.items():
            for row in stores[k].rows[mine_before[k] :]:
                row.update({C.RACED_OUT_ROUND: out.round, C.RACED_OUT_AT_LEAST: out.at_least})


def _batches(rounds: int, per_batch: int, race: Race | None) -> list[tuple[int, int]]:
    """The rounds read in one timed window each, ``[first, last)``: at most ``per_batch`` (the
    values checked after it fit the budget), and a window ends where the race looks."""
    out, first = [], 0
    while first < rounds:
        last = min(rounds, first + per_batch)
        if race is not None:
            due = [r for r in range(first + 1, last) if race.due(r)]
            last = due[0] if due else last
        out.append((first, last))
        first = last
    return out
