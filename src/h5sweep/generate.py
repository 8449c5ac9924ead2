"""Generate a test file: time the write case, then write the file the read cases query.

The values are computed into memory first (as the study read its donor into memory), so the
timed region is only HDF5's work and the storage's: create, write one chunk per call
(contiguous: one x-slab per call), flush, fsync, close. Files are written under a temporary
name and renamed into place, so a file at the output path is always complete.
"""

from __future__ import annotations

import os
import time

import h5py
import numpy as np
from h5py import h5s

from h5sweep.cases.write import WriteCase
from h5sweep.compression import Compression
from h5sweep.fastwrite import write_fast
from h5sweep.layouts import Layout
from h5sweep.pagecache import fsync_path
from h5sweep.query import DEFAULT_CACHE, ChunkCache


def stored_array(data: np.ndarray, layout: Layout) -> np.ndarray:
    """``data`` (x, y, z) with its axes in the layout's storage order (a view)."""
    return data if layout.order == "xyz" else data.transpose(layout.axes)


def write_file(
    path: str,
    data: np.ndarray,
    layout: Layout,
    compression: Compression,
    name: str = "data",
    strategy: str = "chunk",
    fill_time: str = "ifset",
    cache: ChunkCache = DEFAULT_CACHE,
) -> None:
    """Write ``data`` to a new HDF5 file at ``path`` through the standard HDF5 write path.

    Each block of the write ``strategy`` is one ``H5Dwrite`` of a hyperslab (what
    ``dset[region] = block`` does, without re-parsing the selection in Python for every one
    of up to millions of chunks). ``fill_time`` is HDF5's: ``ifset`` (fill values are
    written only if one was set; none is), ``never``, or ``alloc`` (storage is filled with
    the fill value when it is allocated, then overwritten). The file is open with the
    chunk ``cache`` setting: with a strategy that writes a chunk in several calls, whether
    the chunk stays cached between them decides how often it is compressed.
    """
    kwargs = {} if layout.chunk_shape is None else {"chunks": layout.storage_chunk_shape, **compression.h5py_kwargs()}
    if fill_time != "ifset":
        kwargs.update(fill_time=fill_time, fillvalue=0)
    stored = stored_array(data, layout)
    with h5py.File(path, "w", **cache.open_kwargs()) as f:
        dset = f.create_dataset(name, shape=stored.shape, dtype=data.dtype, **kwargs)
        file_space = dset.id.get_space()
        mem_spaces: dict[tuple, h5s.SpaceID] = {}
        for logical in layout.write_blocks(data.shape, data.dtype.itemsize, strategy):
            region = layout.to_storage(logical)
            block = np.ascontiguousarray(stored[region])
            mem_space = mem_spaces.get(block.shape)
            if mem_space is None:
                mem_space = mem_spaces[block.shape] = h5s.create_simple(block.shape)
            file_space.select_hyperslab(tuple(s.start for s in region), block.shape)
            dset.id.write(mem_space, file_space, block)
        f.flush()
    fsync_path(path)


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
    """The write case, then the file to query.

    The write case writes the file ``repeats`` times for every strategy and fill time,
    through the standard API, timing each (those files are removed). The file at ``path``
    is then written by the fast path, which stores the same chunk bytes
    (:mod:`h5sweep.fastwrite`). One row per timed write; each row also says how the query
    file was made and how long that took.
    """
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = f"{path}.partial-{os.getpid()}"
    rows = []
    try:
        for strategy, fill_time in write_case.variants():
            for repeat in range(write_case.repeats):
                t0 = time.perf_counter_ns()
                write_file(partial, data, layout, compression, name, strategy, fill_time, cache)
                seconds = (time.perf_counter_ns() - t0) / 1e9
                rows.append(
                    {
                        "repeat": repeat,
                        "seconds": seconds,
                        "file_bytes": os.stat(partial).st_size,
                        "write_strategy": strategy,
                        "fill_time": fill_time,
                        "variant": write_case.variant_label(strategy, fill_time),
                        "chunk_cache_bytes": cache.nbytes,
                        "chunk_cache_slots": cache.slots,
                        "chunk_cache_w0": cache.w0,
                    }
                )
                os.remove(partial)
        t0 = time.perf_counter_ns()
        method = write_fast(partial, data, layout, compression, name, threads)
        fast_seconds = (time.perf_counter_ns() - t0) / 1e9
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    fsync_path(os.path.dirname(os.path.abspath(path)))  # the rename, too
    for row in rows:
        row.update(query_file_method=method, query_file_write_s=fast_seconds, query_file_bytes=os.stat(path).st_size)
    return rows
