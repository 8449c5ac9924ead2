"""The write case's timed writes (in jobs only): a store's own writes, its query file, and
one timed write on its own (which the filesystem's write race repeats)."""

from __future__ import annotations

import math
import os
import time

import numpy as np

from h5sweep.backends.base import Backend, WriteStopped
from h5sweep.backends.chunk_cache import DEFAULT_CACHE, ChunkCache
from h5sweep.cases.write import QUERIED_VARIANT, WriteCase
from h5sweep.cases.write import columns as WC
from h5sweep.measure import settle
from h5sweep.measure.lock import untimed_work
from h5sweep.measure.pagecache import fsync_path
from h5sweep.measure.timing import timed_io
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import Compression
from h5sweep.storage.datasources import DataSource, StoredValues
from h5sweep.storage.layouts import Layout, storage_order

QUERY_FILE_FROM_WRITE_CASE = "write-case"
QUERY_FILE_STREAMED = "standard-streamed"


def generate(
    backend: Backend,
    path: str,
    data: np.ndarray | DataSource,
    layout: Layout,
    compression: Compression,
    write_case: WriteCase,
    name: str = "data",
    threads: int = 1,
    cache: ChunkCache | None = DEFAULT_CACHE,
    settle_s: float = 0.0,
    limits: dict[str, float] | None = None,
) -> list[dict]:
    """The write case, each write timed in its own window; its default variant's last file
    becomes the query file at ``path`` (else the fast path writes one). One row per timed
    write; each row also says how the query file was made. ``cache``: the HDF5 chunk cache
    the file is written with (None: a backend without one). ``settle_s``: the filesystem's
    rest after a removal (:mod:`h5sweep.measure.settle`); where it is above 0, a variant's repeats
    are kept until its last one is written, so that no repeat reuses the blocks of the one
    before (elsewhere each repeat's file is removed before the next: on tmpfs, a write into
    pages just freed by the previous repeat is what every repeat meets alike). ``limits``:
    seconds per strategy after which a write is stopped (:meth:`WriteCase.limits`; None: no
    limit); a stopped write is recorded as stopped at the time it ran (``stopped``), its
    variant's other repeats are not written, and if it was the queried variant the fast path
    writes the query file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    partials: list[str] = []
    rows = []
    method, query_write_s = None, float("nan")

    settled = settle.Rest(directory, settle_s)

    try:
        with untimed_work():
            stored = in_storage_order(data, layout)
        for strategy, fill_time in write_case.variants():
            if fill_time not in backend.fill_times:  # e.g. Zarr has no fill times but its own
                continue
            limit_s = (limits or {}).get(strategy, math.inf)
            for repeat in range(write_case.first_repeats):
                partial = f"{path}.partial-{os.getpid()}-{len(partials)}"
                partials.append(partial)
                row = timed_write(
                    backend, partial, stored, layout, compression, name, (strategy, fill_time), cache, limit_s, settled
                )
                rows.append({C.REPEAT: repeat, C.VARIANT: write_case.variant_label(strategy, fill_time), **row})
                stopped = row[C.STOPPED]
                if stopped:  # the variant's other repeats would be stopped too
                    if settle_s <= 0:
                        backend.remove(partials.pop())
                    break
                if (strategy, fill_time) == QUERIED_VARIANT and repeat == write_case.first_repeats - 1:
                    backend.rename(partials.pop(), path)
                    method, query_write_s = QUERY_FILE_FROM_WRITE_CASE, row[C.SECONDS] + row[WC.SOURCE_READ_S]
                elif settle_s <= 0:  # nothing to wait for: the next repeat may reuse the space
                    backend.remove(partials.pop())
            settle.remove_and_mark(partials, directory)  # this variant's other repeats
            partials.clear()
        if method is None:
            partial = f"{path}.partial-{os.getpid()}-fast"
            partials.append(partial)
            with untimed_work():
                t0 = time.perf_counter_ns()
                if isinstance(stored, StoredValues):  # the standard path, block by block
                    backend.write(partial, stored, layout, compression, name, "chunk", backend.fill_times[0], cache)
                    method = QUERY_FILE_STREAMED
                else:
                    method = backend.write_fast(partial, data, layout, compression, name, threads)
                query_write_s = (time.perf_counter_ns() - t0) / 1e9
                backend.rename(partials.pop(), path)
    finally:
        for partial in partials:
            if os.path.lexists(partial):
                backend.remove(partial)
    fsync_path(directory)  # the rename, too
    for row in rows:
        row.update(
            query_file_method=method, query_file_write_s=query_write_s, query_file_bytes=backend.footprint_bytes(path)
        )
    return rows


def in_storage_order(data: np.ndarray | DataSource, layout: Layout) -> np.ndarray | StoredValues:
    """What a timed write writes: the values in the layout's storage order, in memory, or a
    donor's, read block by block as the write asks for them (:class:`StoredValues`)."""
    return storage_order(data, layout) if isinstance(data, np.ndarray) else StoredValues(data, layout)


def timed_write(
    backend: Backend,
    partial: str,
    stored: np.ndarray | StoredValues,
    layout: Layout,
    compression: Compression,
    name: str,
    variant: tuple[str, str],
    cache: ChunkCache | None,
    limit_s: float,
    settled,
) -> dict:
    """One timed write of the whole dataset to ``partial`` (a strategy and fill time) in its
    own window, after ``settled()`` (the filesystem's rest); its row. A donor's reads are
    taken off the clock (``source_read_s``); a write past ``limit_s`` is stopped."""
    strategy, fill_time = variant
    stopped = False
    with timed_io(settle=settled) as timed:
        try:
            deadline = time.perf_counter() + limit_s
            writes = backend.write(partial, stored, layout, compression, name, strategy, fill_time, cache, deadline)
        except WriteStopped as stop:
            writes, stopped = stop.calls, True
    source_s = stored.take_compute_s() if isinstance(stored, StoredValues) else 0.0
    return {
        C.SECONDS: timed.seconds - source_s,
        WC.SOURCE_READ_S: source_s,
        C.STOPPED: stopped,
        C.LIMIT_S: limit_s if math.isfinite(limit_s) else float("nan"),
        C.FILE_BYTES: float("nan") if stopped else backend.footprint_bytes(partial),
        C.WRITE_CALLS: writes,
        C.LIBRARY_WRITE_BYTES: timed.io.requested_write,
        WC.WRITE_STRATEGY: strategy,
        WC.FILL_TIME: fill_time,
        settle.SETTLE_WAIT_S: timed.settle_wait_s,
        **(cache.columns() if cache is not None else {}),
        **timed.window.columns(),
    }
