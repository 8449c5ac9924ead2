"""The write race's job (:mod:`h5sweep.cases.write.race` is its rule): from the writes each
store's own job made, more timed writes of the stores still in the race, variant by variant,
until the rule separates them; one table with every write of the filesystem.

The job's settings per store are duck-typed (``h5sweep.sweep.settings.JobSettings`` gives
them: ``backend``, ``layout``, ``compression``, ``directory``, ``settle_s``, ...); what the
sweep layer adds to each row (the store's columns and the provenance) and the dataset's
values come in as callables, so nothing here imports the layer above."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import numpy as np

from h5sweep import backends
from h5sweep.cases.write import columns as WC
from h5sweep.cases.write.race import WriteRace, race_writes
from h5sweep.cases.write.run import in_storage_order, timed_write
from h5sweep.measure import settle
from h5sweep.measure.lock import untimed_work
from h5sweep.storage import columns as C
from h5sweep.storage.datasources import make_source
from h5sweep.storage.filesystems import nearest_existing


def write_limits(job) -> dict[str, float]:
    """Seconds after which each strategy's timed write is stopped, for the job's store."""
    cache = job.write_option
    return job.write_case.limits(job, job.layout, job.compression, int(getattr(cache, "nbytes", 0)))


class ValuesOnce:
    """The dataset's values for a store's write, held once for every store whose values are
    the same (all but a source whose values depend on the layout); a donor is not held.
    ``cache``: where the sweep keeps the values; ``load(job, cache)``: the values (or a
    donor's source) of a job's store."""

    def __init__(self, cache: str | None, load: Callable):
        self.cache, self.load, self.key, self.values = cache, load, None, None

    def __call__(self, job):
        if self.cache is not None and self.values is not None:  # shared by every store: held already
            return self.values
        source = make_source(job.dataset, job.layout)
        if source.streams:
            return source
        key = job.layout if source.per_layout else None
        if self.values is None or key != self.key:
            self.key, self.values = None, None  # one copy in memory at a time
            self.key, self.values = key, self.load(job, self.cache)
        return self.values


class KeptWrites:
    """The write race's files on a filesystem with a rest after removals
    (:mod:`h5sweep.measure.settle`): kept until the race ends, or until a quarter of the
    free space found at its start is used, then removed together, so that one rest serves
    many writes and no write reuses blocks freed a moment before."""

    def __init__(self, job):
        self.settle_s, self.directory = job.settle_s, job.directory
        self.budget = shutil.disk_usage(nearest_existing(job.directory)).free / 4
        self.paths: list[str] = []
        self.bytes = 0
        self.backends: list = []  # whose copies elsewhere (an object store's) go with the files

    def make_room(self, nbytes: int) -> None:
        if self.paths and self.bytes + nbytes > self.budget:
            self.release()

    def keep(self, backend, path: str) -> None:
        if self.settle_s <= 0:
            if os.path.lexists(path):
                backend.remove(path)
            return
        self.bytes += backend.footprint_bytes(path) if os.path.lexists(path) else 0
        self.paths.append(path)
        self.backends.append(backend)

    def release(self) -> None:
        if self.paths:  # all on the filesystem's device: one removal, one rest
            settle.remove_and_mark(self.paths, self.directory)
        for backend in self.backends:
            backend.remove_orphans()
        self.paths, self.bytes, self.backends = [], 0, []


def one_more_write(job, first, variant: str, repeat: int, values, kept: KeptWrites, shared: Callable) -> dict:
    """One more timed write of a store's ``variant`` (its row: the store's own rows' columns,
    the job's ``shared(job, backend)`` columns, the new measurement); the file goes once
    measured, or where the filesystem rests after removals, with the race's others (``kept``)."""
    backend = job.backend_io()
    template = first[first[C.VARIANT] == variant].iloc[-1].to_dict()
    strategy, fill_time = template[WC.WRITE_STRATEGY], template[WC.FILL_TIME]
    limit_s = write_limits(job)[strategy]
    with untimed_work():
        stored = in_storage_order(values(job), job.layout)
    store = backends.store_path(job.directory, job.sweep, job.backend, job.layout.id, job.compression.name)
    directory = os.path.dirname(store)
    os.makedirs(directory, exist_ok=True)
    partial = f"{store}.race-{os.getpid()}-{repeat}"
    kept.make_room(job.layout.allocated_elements(job.shape) * job.dtype.itemsize)
    try:
        row = timed_write(
            backend,
            partial,
            stored,
            job.layout,
            job.compression,
            job.dataset_name,
            (strategy, fill_time),
            job.write_option,
            limit_s,
            settle.Rest(directory, job.settle_s),
        )
    finally:
        kept.keep(backend, partial)
    return {**template, **shared(job, backend), C.REPEAT: repeat, C.VARIANT: variant, **row}


def race_stores(jobs: list, race: dict, tables: list, values: ValuesOnce, shared: Callable):
    """Race the writes of ``jobs`` (one filesystem's stores) from their own jobs' ``tables``
    (in the same order) under the rule ``race``; every write of the filesystem as one table,
    the raced-out stores' rows marked (``raced_out_round``, ``raced_out_at_least``)."""
    import pandas as pd

    rule = WriteRace.from_settings(race)
    added: dict[int, list[dict]] = {}  # each store's rows of the race
    marks: dict[tuple[int, str], tuple[int, float]] = {}
    rng = np.random.default_rng(jobs[0].seed)  # each round's order of the stores

    def order(stores: list, repeat: int) -> list:
        return [stores[i] for i in rng.permutation(len(stores))]

    kept = KeptWrites(jobs[0])
    for variant in dict.fromkeys(v for table in tables for v in table[C.VARIANT]):
        mine = [t[t[C.VARIANT] == variant] for t in tables]
        # a store whose write of the variant was stopped at its limit has none to add
        times = {k: list(m[C.SECONDS]) for k, m in enumerate(mine) if len(m) and not m[C.STOPPED].any()}

        def write(k: int, repeat: int, variant=variant) -> float | None:
            row = one_more_write(jobs[k], tables[k], variant, repeat, values, kept, shared)
            added.setdefault(k, []).append(row)
            return None if row[C.STOPPED] else row[C.SECONDS]

        try:
            out = race_writes(times, rule, write, order)
        finally:
            kept.release()
        marks.update({(k, variant): mark for k, mark in out.items()})
    tables = list(tables)
    for k, rows in added.items():
        tables[k] = pd.concat([tables[k], pd.DataFrame(rows)], ignore_index=True)
    for (k, variant), (repeats, at_least) in marks.items():
        mine = tables[k][C.VARIANT] == variant
        tables[k].loc[mine, C.RACED_OUT_ROUND] = repeats
        tables[k].loc[mine, C.RACED_OUT_AT_LEAST] = at_least
    return pd.concat(tables, ignore_index=True)
