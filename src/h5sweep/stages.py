"""The workflow's stages as plain functions: what each ``workflow/scripts/*.py`` calls.

Each takes the job's own settings (the rule's ``params.settings``, see :mod:`h5sweep.jobs`)
and the job's paths; none reads the whole config.
"""

from __future__ import annotations

import importlib
import os
from functools import partial

import numpy as np

from h5sweep import backends
from h5sweep.cases import case_spec
from h5sweep.datasources import make_source
from h5sweep.generate import generate
from h5sweep.jobs import JobSettings
from h5sweep.provenance import provenance
from h5sweep.readcopies import read_copies, read_copies_of_all
from h5sweep.readprocesses import run_shares
from h5sweep.records import write_table
from h5sweep.windows import untimed_work


def largest_magnitude(source) -> float:
    """The data's largest absolute value (for a lossy codec's error bound; computed in the
    job's untimed part, only when a codec asks)."""
    with untimed_work():
        return float(np.abs(source.materialize()).max())


def _shared_columns(job: JobSettings, backend) -> dict:
    """The store's columns and the provenance, common to every row a job writes."""
    return {**job.store_columns(), **provenance(job.directory, job.hash, backend.versions())}


def run_generate(settings: dict, store_path: str, record: str, threads: int = 1) -> None:
    """Generate one test store (the write case) and record its timings."""
    job = JobSettings(settings)
    backend = backends.load(job.backend)
    layout, comp = job.layout, job.compression
    with untimed_work():
        data = make_source(job.dataset, layout).materialize()
    cache, settle_s = job.write_cache, job.settle_s
    rows = generate(backend, store_path, data, layout, comp, job.write_case, job.dataset_name, threads, cache, settle_s)
    shared = {**_shared_columns(job, backend), **backend.store_counts(store_path)}
    full = "[" + ", ".join(f"0:{n}" for n in job.shape) + "]"
    for row in rows:
        row.update(shared)
        row.update(
            case="write", selection=full, bytes_selected=job.raw_bytes, chunks_touched=layout.n_chunks(job.shape)
        )
    write_table(rows, record)


def _measure_store(settings: dict, store_path: str, record: str, measure) -> None:
    """Run ``measure(job, backend, source)`` on one test store; record its rows with the
    store's columns and the provenance."""
    job = JobSettings(settings)
    backend = backends.load(job.backend)
    rows = measure(job, backend, make_source(job.dataset, job.layout))
    shared = {
        **_shared_columns(job, backend),
        "file_bytes": backend.footprint_bytes(store_path),
        **backend.store_counts(store_path),
    }
    for row in rows:  # what a row measured itself (the MPI run's HDF5 version) is kept
        row.update({key: value for key, value in shared.items() if key not in row})
    write_table(rows, record)


def store_share(settings: dict, store_path: str, copies: list[str], share: tuple[int, int]) -> list[dict]:
    """One read process's share of the read cases on one test store (h5sweep.readprocesses)."""
    from h5sweep.interleave import run_queries

    job = JobSettings(settings)
    backend = backends.load(job.backend)
    source = make_source(job.dataset, job.layout)
    return run_queries(
        backend,
        store_path,
        job.read_cases,
        job.shape,
        job.seed,
        source,
        job.layout,
        caches=job.read_options,
        policies=job.policies,
        dataset_name=job.dataset_name,
        tolerance=job.compression.tolerance(partial(largest_magnitude, source)),
        split=job.split_read_time,
        copies=copies,
        share=share,
    )


def run_query(settings: dict, store_path: str, record: str) -> None:
    """Time every read case on one test store and record one row per selection: from the
    store's read copies, by its read processes in turn."""

    def measure(job, backend, source):
        with read_copies(backend, store_path, job.read_copies) as copies:
            shares = run_shares(job.read_processes, "h5sweep.stages:store_share", settings, store_path, copies)
        return [row for rows in shares for row in rows]

    _measure_store(settings, store_path, record, measure)


def _stores_under_test(settings: dict, store_paths: list[str]) -> list:
    """The interleaved job's stores: each with its layout, data source, value tolerance and
    read options."""
    from h5sweep.interleave import StoreUnderTest

    stores = []
    for each, path in zip(settings["stores"], store_paths, strict=True):
        job = JobSettings(each)
        source = make_source(job.dataset, job.layout)  # one source checks and bounds the values
        tolerance = job.compression.tolerance(partial(largest_magnitude, source))
        backend = backends.load(job.backend)
        stores.append(StoreUnderTest(backend, path, job.layout, source, job.dataset_name, tolerance, job.read_options))
    return stores


def interleaved_share(
    settings: dict, store_paths: list[str], copies: list[list[str]], share: tuple[int, int]
) -> list[list[dict]]:
    """One read process's share of a filesystem's interleaved reads (h5sweep.readprocesses):
    each store's rows."""
    from h5sweep.interleave import run_interleaved

    stores = _stores_under_test(settings, store_paths)
    for store, paths in zip(stores, copies, strict=True):
        store.copies = paths
    first = JobSettings(settings["stores"][0])
    run_interleaved(stores, first.read_cases, first.shape, first.seed, first.policies, first.split_read_time, share)
    return [store.rows for store in stores]


def run_query_interleaved(settings: dict, store_paths: list[str], record: str) -> None:
    """Time every read case interleaved over all test stores of one filesystem
    (:mod:`h5sweep.interleave`), from the stores' read copies, by the job's read processes in
    turn; one row per store and selection, in one record."""
    jobs = [JobSettings(each) for each in settings["stores"]]
    stores = [(backends.load(job.backend), path) for job, path in zip(jobs, store_paths, strict=True)]
    first = jobs[0]
    with read_copies_of_all(stores, first.read_copies) as copies:
        shares = run_shares(first.read_processes, "h5sweep.stages:interleaved_share", settings, store_paths, copies)
    rows = []
    for k, (job, (backend, path)) in enumerate(zip(jobs, stores, strict=True)):
        shared = {
            **_shared_columns(job, backend),
            "file_bytes": backend.footprint_bytes(path),
            **backend.store_counts(path),
        }
        rows += [{**row, **shared} for rows_of_share in shares for row in rows_of_share[k]]
    write_table(rows, record)


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
        _measure_store(
            settings, store_path, record, lambda job, backend, source: measure(job, backend, store_path, source)
        )
        return
    job = JobSettings(settings)
    backend = backends.load(job.backend)
    with untimed_work():
        data = make_source(job.dataset, job.layout).materialize()
    rows = measure(os.path.join(job.directory, job.sweep, case), job.optional_case(case), data, job.settle_s)
    shared = _shared_columns(job, backend)
    for row in rows:
        row.update(shared)
    write_table(rows, record)
