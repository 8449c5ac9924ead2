"""Generate a test file: time the write case; the file the read cases query is the write
case's own, as a user's converter would leave it.

The values are computed into memory first (as the study read its donor into memory) and put
into the layout's storage order before the clock starts, so the timed region is only HDF5's
work and the storage's: create, write one block per call (HDF5 gathers each block from the
in-memory array itself), flush, fsync, close, inside the node's exclusive measurement
window. The last write of the default variant (one chunk per call, fill time ``ifset``)
becomes the query file; where the write case has no such variant, the query file is written
by the fast path (:mod:`h5sweep.fastwrite`), and each row says which (``query_file_method``).
Files are written under a temporary name and renamed into place, so a file at the output
path is always complete.
"""

from __future__ import annotations

import os
import time

import h5py
import numpy as np
from h5py import h5s

from h5sweep.cases.write import QUERIED_VARIANT, WriteCase
from h5sweep.compression import Compression
from h5sweep.fastwrite import write_fast
from h5sweep.layouts import Layout
from h5sweep.pagecache import fsync_path
from h5sweep.query import DEFAULT_CACHE, ChunkCache
from h5sweep.timing import timed_io
from h5sweep.windows import untimed_work

QUERY_FILE_FROM_WRITE_CASE = "write-case"


def storage_order(data: np.ndarray, layout: Layout) -> np.ndarray:
    """``data`` (x, y, z) as a C-contiguous array in the layout's storage order (no copy
    where it already is one)."""
    stored = data if layout.order == "xyz" else data.transpose(layout.axes)
    return np.ascontiguousarray(stored)


def write_file(
    path: str, data: np.ndarray, layout: Layout, compression: Compression, name: str = "data", **options
) -> int:
    """:func:`write_stored` of ``data`` given in (x, y, z) order (for untimed callers)."""
    return write_stored(path, storage_order(data, layout), layout, compression, name, **options)


def write_stored(
    path: str,
    stored: np.ndarray,
    layout: Layout,
    compression: Compression,
    name: str = "data",
    strategy: str = "chunk",
    fill_time: str = "ifset",
    cache: ChunkCache = DEFAULT_CACHE,
) -> int:
    """Write ``stored`` (the array in the layout's storage order, C-contiguous) to a new HDF5
    file at ``path`` through the standard HDF5 write path; return the number of writes.

    Each block of the write ``strategy`` is one ``H5Dwrite`` of a hyperslab, from a memory
    hyperslab of the whole array (HDF5 gathers the block; no copy is made in Python).
    ``fill_time`` is HDF5's: ``ifset`` (fill values are written only if one was set; none
    is), ``never``, or ``alloc`` (storage is filled with the fill value when it is
    allocated, then overwritten). The file is open with the chunk ``cache`` setting: with a
    strategy that writes a chunk in several calls, whether the chunk stays cached between
    them decides how often it is compressed.
    """
    if not stored.flags.c_contiguous:
        raise ValueError("write_stored needs a C-contiguous array in storage order")
    kwargs = {} if layout.chunk_shape is None else {"chunks": layout.storage_chunk_shape, **compression.h5py_kwargs()}
    if fill_time != "ifset":
        kwargs.update(fill_time=fill_time, fillvalue=0)
    logical_shape = layout.to_logical(stored.shape)
    writes = 0
    with h5py.File(path, "w", **cache.open_kwargs()) as f:
        dset = f.create_dataset(name, shape=stored.shape, dtype=stored.dtype, **kwargs)
        file_space = dset.id.get_space()
        mem_space = h5s.create_simple(stored.shape)
        for logical in layout.write_blocks(logical_shape, stored.dtype.itemsize, strategy):
            region = layout.to_storage(logical)
            start = tuple(s.start for s in region)
            count = tuple(s.stop - s.start for s in region)
            file_space.select_hyperslab(start, count)
            mem_space.select_hyperslab(start, count)
            dset.id.write(mem_space, file_space, stored)
            writes += 1
        f.flush()
    fsync_path(path)
    return writes


def generate(
    path: str,
    data: np.ndarray,
    layout: Layout,
    compression: Compression,
    write_case: WriteCase,
    name: str = "data",
    threads: int = 1,
    cache: ChunkCache = DEFAULT_CACHE,
) -> list[dict]:
    """The write case, each write timed in its own window; its default variant's last file
    becomes the query file at ``path`` (else the fast path writes one). One row per timed
    write; each row also says how the query file was made."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = f"{path}.partial-{os.getpid()}"
    rows = []
    method, query_write_s = None, float("nan")
    try:
        with untimed_work():
            stored = storage_order(data, layout)
        for strategy, fill_time in write_case.variants():
            for repeat in range(write_case.repeats):
                with timed_io() as timed:
                    writes = write_stored(partial, stored, layout, compression, name, strategy, fill_time, cache)
                rows.append(
                    {
                        "repeat": repeat,
                        "seconds": timed.seconds,
                        "file_bytes": os.stat(partial).st_size,
                        "write_calls": writes,
                        "library_write_bytes": timed.io.requested_write,
                        "write_strategy": strategy,
                        "fill_time": fill_time,
                        "variant": write_case.variant_label(strategy, fill_time),
                        "chunk_cache_bytes": cache.nbytes,
                        "chunk_cache_slots": cache.slots,
                        "chunk_cache_w0": cache.w0,
                        **timed.window.columns(),
                    }
                )
                if (strategy, fill_time) == QUERIED_VARIANT and repeat == write_case.repeats - 1:
                    os.replace(partial, path)
                    method, query_write_s = QUERY_FILE_FROM_WRITE_CASE, timed.seconds
                else:
                    os.remove(partial)
        if method is None:
            with untimed_work():
                t0 = time.perf_counter_ns()
                method = write_fast(partial, data, layout, compression, name, threads)
                query_write_s = (time.perf_counter_ns() - t0) / 1e9
                os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    fsync_path(os.path.dirname(os.path.abspath(path)))  # the rename, too
    for row in rows:
        row.update(query_file_method=method, query_file_write_s=query_write_s, query_file_bytes=os.stat(path).st_size)
    return rows
