"""Writing query files at the speed of the storage.

The write *case* measures HDF5's standard write path, as a user's converter would use it.
The files that exist only to be queried are written faster, with the same bytes:

- contiguous: the dataset is allocated at creation, then its bytes are written with large
  ``pwrite`` calls at the dataset's offset in the file;
- chunked, unfiltered: every chunk is allocated at creation; chunks are laid out in memory
  in storage order (edge chunks zero-padded, as HDF5 pads them) and written with ``pwrite``
  in runs of adjacent chunks;
- chunked, filtered: chunks are compressed by a pool of threads (zlib releases the GIL) and
  stored with direct chunk writes; each codec's chunk encoder (:mod:`h5sweep.backends.hdf5_filters`)
  produces exactly what HDF5's filter stores, and codecs without one have no fast path.

Every file reads back identically through the normal h5py API (tests check it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from queue import Queue
from threading import Thread

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t

from h5sweep.backends import hdf5_filters
from h5sweep.measure.pagecache import fsync_path
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout, storage_order

# A contiguous dataset is written in pieces of this many bytes.
PWRITE_BYTES = 64 * 2**20


def _create(path: str, name: str, data: np.ndarray, dcpl) -> h5d.DatasetID:
    f = h5py.File(path, "w")
    space = h5s.create_simple(data.shape)
    dsid = h5d.create(f.id, name.encode(), h5t.py_create(data.dtype), space, dcpl=dcpl)
    return f, dsid


def chunk_rows(data: np.ndarray, chunk: tuple[int, ...]) -> Iterator[tuple[int, np.ndarray]]:
    """For each row of chunks along x: (x index, array of its chunks in storage order).

    The array has shape ``(gy * gz, cx, cy, cz)``: chunk (i, j, k) of the row is at
    ``j * gz + k``, zero-padded where the chunk reaches past the dataset.
    """
    nx, ny, nz = data.shape
    cx, cy, cz = chunk
    gy, gz = -(-ny // cy), -(-nz // cz)
    padded = None
    for i in range(-(-nx // cx)):
        slab = data[i * cx : (i + 1) * cx]
        if slab.shape != (cx, gy * cy, gz * cz):
            if padded is None:  # one buffer for every row: its padding stays zero
                padded = np.zeros((cx, gy * cy, gz * cz), dtype=data.dtype)
            padded[: slab.shape[0], :ny, :nz] = slab
            padded[slab.shape[0] :] = 0
            slab = padded
        # (cx, gy, cy, gz, cz) -> (gy, gz, cx, cy, cz)
        row = slab.reshape(cx, gy, cy, gz, cz).transpose(1, 3, 0, 2, 4)
        # always a copy: the padded buffer is reused for the next row
        yield i, row.copy(order="C").reshape(gy * gz, cx, cy, cz)


def prefetched(items: Iterator, depth: int = 2) -> Iterator:
    """Produce ``items`` in a background thread (numpy copies release the GIL), so laying
    out the next row of chunks overlaps with writing the current one."""
    queue: Queue = Queue(maxsize=depth)
    done = object()

    def produce():
        try:
            for item in items:
                queue.put(item)
        except BaseException as err:  # handed to the consumer
            queue.put(err)
        queue.put(done)

    Thread(target=produce, daemon=True).start()
    while (item := queue.get()) is not done:
        if isinstance(item, BaseException):
            raise item
        yield item


def _write_contiguous(path: str, data: np.ndarray, name: str) -> None:
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_layout(h5d.CONTIGUOUS)
    dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_time(h5d.FILL_TIME_NEVER)  # every byte is written right after
    f, dsid = _create(path, name, data, dcpl)
    offset = dsid.get_offset()
    f.close()
    raw = memoryview(np.ascontiguousarray(data)).cast("B")
    fd = os.open(path, os.O_WRONLY)
    try:
        for start in range(0, len(raw), PWRITE_BYTES):
            piece = raw[start : start + PWRITE_BYTES]
            _pwrite_all(fd, piece, offset + start)
    finally:
        os.close(fd)


def _pwrite_all(fd: int, piece, offset: int) -> None:
    while len(piece):
        written = os.pwrite(fd, piece, offset)
        piece, offset = piece[written:], offset + written


def _chunk_offsets(dsid, grid: tuple[int, ...], chunk: tuple[int, ...]) -> np.ndarray:
    """Byte offset in the file of every allocated chunk, in row-major chunk order."""
    gx, gy, gz = grid
    offsets = np.full(gx * gy * gz, -1, dtype=np.int64)

    def record(info):
        x, y, z = (o // c for o, c in zip(info.chunk_offset, chunk, strict=True))
        offsets[(x * gy + y) * gz + z] = info.byte_offset

    dsid.chunk_iter(record)
    if (offsets < 0).any():
        raise RuntimeError("HDF5 did not allocate every chunk at creation")
    return offsets


def _write_chunked_raw(path: str, data: np.ndarray, layout: Layout, name: str) -> None:
    chunk = layout.chunk_shape
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk(chunk)
    dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
    dcpl.set_fill_time(h5d.FILL_TIME_NEVER)  # every chunk is written right after
    f, dsid = _create(path, name, data, dcpl)
    grid = layout.chunk_grid(data.shape)
    offsets = _chunk_offsets(dsid, grid, chunk)
    f.close()
    chunk_bytes = layout.chunk_bytes(data.dtype.itemsize)
    per_row = grid[1] * grid[2]
    fd = os.open(path, os.O_WRONLY)
    try:
        for i, row in prefetched(chunk_rows(data, chunk)):
            raw = memoryview(row).cast("B")
            row_offsets = offsets[i * per_row : (i + 1) * per_row]
            # write runs of chunks that are adjacent in the file with one call each
            breaks = np.nonzero(np.diff(row_offsets) != chunk_bytes)[0] + 1
            for run in np.split(np.arange(per_row), breaks):
                first, last = int(run[0]), int(run[-1]) + 1
                _pwrite_all(fd, raw[first * chunk_bytes : last * chunk_bytes], int(row_offsets[first]))
    finally:
        os.close(fd)


def _write_chunked_filtered(
    path: str, data: np.ndarray, layout: Layout, compression: Compression, name: str, threads: int
) -> None:
    chunk = layout.chunk_shape
    compress = hdf5_filters.chunk_encoder(compression, data.dtype.itemsize)
    with h5py.File(path, "w") as f:
        dsid = f.create_dataset(
            name, shape=data.shape, dtype=data.dtype, chunks=chunk, **hdf5_filters.create_keywords(compression)
        ).id
        gz = layout.chunk_grid(data.shape)[2]
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            pending = None
            for i, row in prefetched(chunk_rows(data, chunk)):
                # compress this row while the previous one is being written
                current = (i, pool.map(compress, row, chunksize=16))
                if pending is not None:
                    _store(dsid, *pending, gz, chunk)
                pending = current
            if pending is not None:
                _store(dsid, *pending, gz, chunk)


def _store(dsid, i: int, compressed, gz: int, chunk) -> None:
    cx, cy, cz = chunk
    for n, (filter_mask, payload) in enumerate(compressed):
        j, k = divmod(n, gz)
        dsid.write_direct_chunk((i * cx, j * cy, k * cz), payload, filter_mask)


def write_fast(
    path: str, data: np.ndarray, layout: Layout, compression: Compression, name: str = "data", threads: int = 1
) -> str | None:
    """Write ``data`` to a new file at ``path`` by the fastest path that keeps HDF5's bytes.

    Returns the name of the path taken (recorded with the measurements), or None, writing
    nothing, where the codec has no chunk encoder that matches HDF5's filter (the caller then
    uses HDF5's own pipeline).
    """
    if layout.chunk_shape is not None and not compression.is_none and not hdf5_filters.has_chunk_encoder(compression):
        return None
    if layout.chunk_shape is not None and data.ndim != 3:  # the chunk rows below are 3-D
        return None
    if layout.page_size is not None:  # paged aggregation: HDF5 places every byte itself
        return None
    if layout.order != "xyz":  # write the transposed array as it is stored
        data = storage_order(data, layout)
        layout = layout.storage_layout()
    if layout.chunk_shape is None:
        _write_contiguous(path, data, name)
        method = "contiguous-pwrite"
    elif compression.is_none:
        _write_chunked_raw(path, data, layout, name)
        method = "chunk-pwrite"
    else:
        _write_chunked_filtered(path, data, layout, compression, name, threads)
        method = f"direct-chunk-{threads}-threads"
    fsync_path(path)
    return method
