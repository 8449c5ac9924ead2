"""The workflow's stages as plain functions: what each ``workflow/scripts/*.py`` calls.

Each takes the job's own settings (the rule's ``params.settings``, see :mod:`h5sweep.sweep.settings`)
and the job's paths; none reads the whole config.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import os
import shutil
import socket
from functools import partial
from pathlib import Path

from h5sweep import backends
from h5sweep.cases import case_spec
from h5sweep.cases.write.race_runner import ValuesOnce, race_stores, write_limits
from h5sweep.cases.write.run import generate
from h5sweep.measure.copies import read_copies, read_copies_of_all
from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store, run_reads
from h5sweep.measure.engine.race import RaceRule
from h5sweep.measure.lock import untimed_work
from h5sweep.measure.provenance import provenance
from h5sweep.measure.records import write_table
from h5sweep.storage import columns as C
from h5sweep.storage.datasources import kept_or_made, load_values, make_source, save_values, values_shared
from h5sweep.storage.errors import DirectoryRemovedError, StorageFullError, is_no_space
from h5sweep.storage.filesystems import apply_stripe, mount_info, nearest_existing, stripe_words
from h5sweep.sweep.settings import JobSettings


def largest_magnitude(source) -> float:
    """The data's largest absolute value (for a lossy codec's error bound; computed in the
    job's untimed part, only when a codec asks)."""
    with untimed_work():
        return source.largest_magnitude()


def _shared_columns(job: JobSettings, backend) -> dict:
    """The store's columns and the provenance, common to every row a job writes (where the
    filesystem's target is not a directory, its columns over the directory's: on an object
    store ``fs_type`` s3, the bucket and prefix as ``fs_path``, the server as ``fs_device``)."""
    where = provenance(job.directory, job.hash, backend.versions())
    where.update(job.target.where(job.place))
    return {**job.store_columns(), **where, C.FS_STRIPE: stripe_words(job.stripe)}


def _removed(job: JobSettings) -> DirectoryRemovedError:
    return DirectoryRemovedError(
        f"filesystems.{job.filesystem}: the directory {job.directory} was removed while this job "
        "wrote or read there; what the job wrote is lost. Run the sweep again: finished results are "
        "kept, and the job is redone (in the directory made again, on the same filesystem)."
    )


def _sweep_results(job: JobSettings, record: str) -> Path | None:
    """The sweep's results directory above a job's ``record``
    (``<results>/<sweep>/<records>/<filesystem>/...``), or None where it is not under one."""
    parts = Path(record).absolute().parts
    found = [i for i in range(len(parts) - 3) if parts[i] == job.sweep and parts[i + 2] == job.filesystem]
    return Path(*parts[: found[0] + 1]) if found else None


def _measured_on(job: JobSettings, record: str) -> tuple[str, str] | None:
    """The mount point and filesystem type this node's earlier records of the job's filesystem
    name (records are under ``<results>/<sweep>/raw/<filesystem>/``; each row names its host),
    or None where it has none."""
    import pandas as pd

    here = socket.gethostname()
    results = _sweep_results(job, record)
    if results is None:
        return None
    records = Path(record).absolute().parts[len(results.parts)]
    for table in sorted((results / records / job.filesystem).rglob("*.parquet")):
        with contextlib.suppress(Exception):  # a record being written, or one without provenance
            rows = pd.read_parquet(table, columns=[C.HOST, C.FS_MOUNT, C.FS_TYPE])
            mine = rows[rows[C.HOST] == here]
            if len(mine):
                return str(mine[C.FS_MOUNT].iloc[0]), str(mine[C.FS_TYPE].iloc[0])
    return None


@contextlib.contextmanager
def in_its_directory(job: JobSettings, record: str):
    """A job's work in its filesystem's directory (``filesystems.<name>``).

    A directory that is missing is made by the job that writes there (Snakemake, too, removes
    a directory a temporary store leaves empty). But where the directory now lies on another
    mount than this node's earlier records of the filesystem say (its mount was removed while
    the sweep ran, and the path now falls on the filesystem below), the job stops before any
    work, naming the key: measuring on would mix two filesystems under one name. A directory
    removed during the job turns the error that causes into one naming the key."""
    earlier = _measured_on(job, record)
    now = mount_info(str(nearest_existing(job.directory)))
    if earlier is not None and earlier[0] != now.mount_point:
        raise DirectoryRemovedError(
            f"filesystems.{job.filesystem}: the directory {job.directory} now lies on {now.mount_point} "
            f"({now.fs_type}), but this sweep measured it on {earlier[0]} ({earlier[1]}) on this node: "
            "its mount or directory was removed while the sweep ran. Mount it again (or point "
            f"filesystems.{job.filesystem} at where it is now), then run the sweep again: finished "
            "results are kept."
        )
    apply_stripe(job.directory, job.stripe)  # the stores made below take the directory's layout
    try:
        with job.target.guarded(job.place, job.filesystem):  # a server gone is named as such
            yield
    except OSError as err:
        if os.path.isdir(job.directory):  # the job's own error (a full filesystem among them)
            raise
        raise _removed(job) from err


def run_generate(settings: dict, store_path: str, record: str, threads: int = 1) -> None:
    """Generate one test store (the write case) and record its timings."""
    job = JobSettings(settings)
    with in_its_directory(job, record):
        _generate(job, store_path, record, threads)


def run_generate_all(
    settings: dict, store_paths: list[str], records: list[str], threads: int = 1, race_record: str | None = None
) -> None:
    """Generate every test store of one filesystem (the write case), in one job: the stores
    of ``settings["stores"]`` one after another in a seeded order (so that no store is always
    written first or last), the values loaded once for them all; each store's record written
    as soon as its store is, as its own job would write it. Then, where ``race_record`` is
    given, the write race of :func:`run_write_race` on those records, in the same job."""
    import numpy as np
    import pandas as pd

    jobs = [JobSettings(each) for each in settings["stores"]]
    values = ValuesOnce(values_cache(jobs[0], records[0]), _dataset_values)
    with in_its_directory(jobs[0], records[0]):
        for k in np.random.default_rng(jobs[0].seed).permutation(len(jobs)):
            _generate(jobs[k], store_paths[k], records[k], threads, values)
        if race_record is not None:
            tables = [pd.read_parquet(path) for path in records]
            write_table(race_stores(jobs, settings["race"], tables, values, _shared_columns), race_record)


def values_cache(job: JobSettings, record: str) -> str | None:
    """Where the sweep keeps the dataset's values for every store's writes, where they are
    shared (:func:`h5sweep.storage.datasources.values_shared`): ``data/values-<hash>.npy``
    in the sweep's results (:func:`_sweep_results`), the hash of the dataset's settings (a change of them
    never meets old values). None: made in each job.

    The first job that needs them makes them and keeps them (complete or not at all; jobs on
    several nodes at once each make their own and the last kept wins, the same values); the
    aggregate removes them. They are not a Snakemake input: made again for a store added
    later, they would make every store's job run again."""
    results = _sweep_results(job, record)
    if results is None or not values_shared(job.dataset):
        return None
    digest = hashlib.sha256(json.dumps(job.dataset, sort_keys=True).encode()).hexdigest()[:16]
    return str(results / VALUES_DIRECTORY / f"values-{digest}.npy")


VALUES_DIRECTORY = "data"


def remove_values_cache(results: str) -> None:
    """Remove the values the sweep in ``results`` kept for its writes (:func:`values_cache`):
    once every write is made (the aggregate), they are no longer needed."""
    directory = Path(results) / VALUES_DIRECTORY
    for path in directory.glob("values-*.npy"):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        directory.rmdir()  # if nothing else is there


def _dataset_values(job: JobSettings, cache: str | None):
    """What a store's writes take: the values (from the sweep's ``cache`` where it keeps
    them), or a donor's source (never held whole). A ``cache`` is only ever given for values
    every store shares (:func:`values_cache`): the source is built only to make them."""
    if cache is not None:
        with contextlib.suppress(FileNotFoundError):
            return load_values(cache, job.dataset)
    source = make_source(job.dataset, job.layout)
    if source.streams:
        return source
    if cache is None:
        return source.materialize()
    values = source.materialize()
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    save_values(values, cache)
    return values


def _generate(job: JobSettings, store_path: str, record: str, threads: int, values: ValuesOnce | None = None) -> None:
    """Write one store (``values``: the values, where the job holds them for several stores)."""
    backend = job.backend_io()
    layout, comp = job.layout, job.compression
    with untimed_work():
        data = values(job) if values is not None else _dataset_values(job, values_cache(job, record))
    cache, settle_s = job.write_option, job.settle_s
    limits = write_limits(job)
    try:
        rows = generate(
            backend, store_path, data, layout, comp, job.write_case, job.dataset_name, threads, cache, settle_s, limits
        )
    except OSError as err:
        if not is_no_space(err):
            raise
        need = layout.allocated_elements(job.shape) * job.dtype.itemsize
        free = shutil.disk_usage(job.directory).free
        raise StorageFullError(
            f"filesystem {job.filesystem} ({job.directory}) is full: writing {store_path} failed "
            f"({err}); {free / 1e6:.1f} MB are free now (partial files removed), and this store needs "
            f"about {need / 1e6:.1f} MB for each repeat of the write case kept at once. Free space there "
            f"or point filesystems.{job.filesystem} elsewhere, then run again: finished jobs are kept."
        ) from err
    backend.remove_orphans()  # on an object store: the repeats removed here go there too
    shared = {**_shared_columns(job, backend), **backend.store_counts(store_path)}
    full = "[" + ", ".join(f"0:{n}" for n in job.shape) + "]"
    for row in rows:
        row.update(shared)
        row.update(
            case="write", selection=full, bytes_selected=job.raw_bytes, chunks_touched=layout.n_chunks(job.shape)
        )
    write_table(rows, record)


def run_write_race(settings: dict, records: list[str], record: str) -> None:
    """Race the timed writes of one filesystem's stores (:mod:`h5sweep.cases.write.race_runner`):
    from the writes each store's own job made (``records``, in the order of
    ``settings["stores"]``), more repeats for the stores still in the race, variant by
    variant; one record with every write of the filesystem, the raced-out stores' rows
    marked."""
    import pandas as pd

    jobs = [JobSettings(each) for each in settings["stores"]]
    tables = [pd.read_parquet(path) for path in records]
    values = ValuesOnce(values_cache(jobs[0], record), _dataset_values)
    with in_its_directory(jobs[0], record):
        table = race_stores(jobs, settings["race"], tables, values, _shared_columns)
    write_table(table, record)


def _store_columns(job: JobSettings, backend, store_path: str) -> dict:
    """What every row measured on a store carries: the shared columns, its footprint and counts."""
    return {
        **_shared_columns(job, backend),
        C.FILE_BYTES: backend.footprint_bytes(store_path),
        **backend.store_counts(store_path),
    }


def _measure_store(settings: dict, store_path: str, record: str, measure) -> None:
    """Run ``measure(job, backend, source)`` on one test store; record its rows with the
    store's columns and the provenance."""
    job = JobSettings(settings)
    backend = job.backend_io()
    with in_its_directory(job, record):
        rows = measure(job, backend, _checking_source(job, record))
        shared = _store_columns(job, backend, store_path)
        backend.remove_remote(store_path)  # read: its objects go (Snakemake removes its file)
    for row in rows:  # what a row measured itself (the MPI run's HDF5 version) is kept
        row.update({key: value for key, value in shared.items() if key not in row})
    write_table(rows, record)


def _store_under_test(job: JobSettings, backend, path: str, source=None) -> StoreUnderTest:
    """The store of a query job as the read engine takes it (``source``: its values, made
    here where the caller has none)."""
    source = source or make_source(job.dataset, job.layout)  # one source checks and bounds the values
    tolerance = job.compression.tolerance(partial(largest_magnitude, source))
    return StoreUnderTest(backend, path, job.layout, source, job.dataset_name, tolerance, job.read_options)


def _checking_source(job: JobSettings, record: str):
    """What a query job checks the values it reads against: the values the sweep kept for its
    writes (:func:`values_cache`), where it keeps them, else the job's data source made anew."""
    return kept_or_made(job.dataset, job.layout, values_cache(job, record))


def _sources(record: str):
    """The data source of each store of one filesystem's job (whose stores share the dataset):
    made once for them all, or once per layout where its values depend on the layout."""
    made: dict = {}

    def source(job):
        if "all" in made:
            return made["all"]
        if job.layout.id not in made:
            made[job.layout.id] = made_now = _checking_source(job, record)
            if not made_now.per_layout:
                made["all"] = made_now
        return made[job.layout.id]

    return source


def _read_plan(job: JobSettings, race: dict | None = None) -> ReadPlan:
    rule = RaceRule.from_settings(race)
    # on a filesystem with emulated faults, a read failed by one is recorded and its store read no further
    faulty = job.target.faulty(job.place)
    return ReadPlan(
        job.read_cases, job.shape, job.seed, tuple(job.policies), job.split_read_time, race=rule, record_faults=faulty
    )


def run_query(settings: dict, store_path: str, record: str) -> None:
    """Time every read case on one test store and record one row per selection."""

    def measure(job, backend, source):
        store = _store_under_test(job, backend, store_path, source)
        with read_copies(backend, store_path, job.read_copies) as copies:
            store.copies = copies
            return read_store(store, _read_plan(job))

    _measure_store(settings, store_path, record, measure)


def run_query_interleaved(settings: dict, store_paths: list[str], record: str) -> None:
    """Time every read case interleaved over all test stores of one filesystem
    (:func:`h5sweep.measure.engine.run_reads`); one row per store and selection, in one record."""
    jobs = [JobSettings(each) for each in settings["stores"]]
    first = jobs[0]
    with in_its_directory(first, record):
        source = _sources(record)
        stores = [
            _store_under_test(job, job.backend_io(), path, source(job))
            for job, path in zip(jobs, store_paths, strict=True)
        ]
        for store, each in zip(stores, settings["stores"], strict=True):
            store.protected = bool(each.get("protected", False))
            store.kept_best_of = str(each.get("kept_best_of", ""))
        with read_copies_of_all([(store.backend, store.path) for store in stores], first.read_copies) as copies:
            for store, paths in zip(stores, copies, strict=True):
                store.copies = paths
            run_reads(stores, _read_plan(first, settings.get("race")))
        rows = []
        for job, store in zip(jobs, stores, strict=True):
            shared = _store_columns(job, store.backend, store.path)
            rows += [{**row, **shared} for row in store.rows]
            store.backend.remove_remote(store.path)  # read: its objects go (Snakemake removes its file)
    write_table(rows, record)


def run_query_resumed(settings: dict, record: str) -> None:
    """Read a filesystem's resumed stores to the end (:mod:`h5sweep.sweep.resume`): each
    written again as its store job wrote it (the write case's rows are not kept: the sweep's
    write records stand), then every read case over them interleaved, on the same seeded
    selections as the sweep's pass, with no race; the stores go afterwards. One record; each
    row marked ``resumed`` and carrying its read option's place among the backend's."""
    jobs = [JobSettings(each) for each in settings["stores"]]
    first = jobs[0]
    paths = [
        backends.store_path(job.directory, f"{job.sweep}/resumed", job.backend, job.layout.id, job.compression.name)
        for job in jobs
    ]
    made: list[tuple[object, str]] = []
    rows = []
    with in_its_directory(first, record):
        try:
            stores = []
            for job, each, path in zip(jobs, settings["stores"], paths, strict=True):
                backend = job.backend_io()
                if os.path.lexists(path):  # left by a job that was stopped
                    backend.remove(path)
                _write_again(JobSettings(each["generate"]), backend, path, record)
                made.append((backend, path))
                stores.append(_store_under_test(job, backend, path, _checking_source(job, record)))
            with read_copies_of_all([(store.backend, store.path) for store in stores], first.read_copies) as copies:
                for store, copy_paths in zip(stores, copies, strict=True):
                    store.copies = copy_paths
                run_reads(stores, _read_plan(first))
            for job, each, store in zip(jobs, settings["stores"], stores, strict=True):
                shared = _store_columns(job, store.backend, store.path)
                indexes = each["option_indexes"]
                rows += [
                    {**row, **shared, C.READ_OPTION_INDEX: indexes[row[C.READ_OPTION_INDEX]], C.RESUMED: True}
                    for row in store.rows
                ]
        finally:
            for backend, path in made:
                with contextlib.suppress(OSError):
                    backend.remove(path)
    write_table(rows, record)


def _write_again(job: JobSettings, backend, path: str, record: str) -> None:
    """A resumed store written as its store job wrote it (the same write path, so the same
    bytes in the same places); the timed writes' rows are not kept."""
    with untimed_work():
        data = _dataset_values(job, values_cache(job, record))
    generate(
        backend,
        path,
        data,
        job.layout,
        job.compression,
        job.write_case,
        job.dataset_name,
        1,
        job.write_option,
        job.settle_s,
        write_limits(job),
    )


def checkpoint_path(record: str) -> str:
    """Where a job's runner keeps what it finished until the job's record is written (beside
    the record, which Snakemake removes when a job fails; this file it leaves)."""
    return f"{record}.checkpoint.jsonl"


def _runner(spec):
    """The function that measures a case with a job of its own, imported now (in the job)."""
    module, function = spec.runner.split(":")
    return getattr(importlib.import_module(module), function)


def run_case(case: str, settings: dict, record: str, store_path: str | None = None) -> None:
    """A case with a job of its own (its spec's ``runner``): once per test store
    (``store_path``), or once per filesystem in ``<filesystem dir>/<sweep>/<case>`` with the
    dataset's values in memory."""
    spec = case_spec(case)
    measure = _runner(spec)
    if spec.scope == "store":
        # a runner that can resume keeps its finished work beside the record until it is written
        keeps = "checkpoint" in inspect.signature(measure).parameters
        extra = {"checkpoint": checkpoint_path(record)} if keeps else {}
        _measure_store(
            settings,
            store_path,
            record,
            lambda job, backend, source: measure(job, backend, store_path, source, **extra),
        )
        if keeps and os.path.exists(extra["checkpoint"]):
            os.remove(extra["checkpoint"])
        return
    job = JobSettings(settings)
    backend = backends.load(job.backend)
    with untimed_work():
        data = make_source(job.dataset, job.layout).materialize()
    with in_its_directory(job, record):
        rows = measure(os.path.join(job.directory, job.sweep, case), job.optional_case(case), data, job.settle_s)
    shared = _shared_columns(job, backend)
    for row in rows:
        row.update(shared)
    write_table(rows, record)
