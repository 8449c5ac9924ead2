"""The raw backend: the array as a plain binary ``.npy`` file, read with POSIX ``pread``.

It is the no-library floor the other backends are compared with: contiguous only, no codec,
no chunk index. A timed read is one ``pread`` per contiguous run of the selection in the
file, straight into the read buffer; nothing is decoded or copied afterwards.
"""

from __future__ import annotations

import io
import math
import os
import time

import numpy as np

from h5sweep.backends import RAW, base
from h5sweep.backends.base import Backend, OpenedStore, SingleFileStore
from h5sweep.measure.pagecache import fsync_path
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.storage.objectstore import DATA, METADATA
from h5sweep.storage.selections import Selection


def read_header(f) -> tuple[int, tuple[int, ...], np.dtype]:
    """Where the values of a ``.npy`` file start, its shape and its dtype (C order only),
    from a binary file object at its start."""
    version = np.lib.format.read_magic(f)
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = header(f)
    if fortran:
        raise ValueError("a raw store holds its array in C order")
    return f.tell(), tuple(shape), np.dtype(dtype)


def data_offset(fd: int) -> tuple[int, tuple[int, ...], np.dtype]:
    """:func:`read_header` of an open file descriptor."""
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)
        return read_header(f)


def contiguous_runs(shape: tuple[int, ...], start: tuple[int, ...], size: tuple[int, ...]) -> tuple[int, list[int]]:
    """The contiguous runs of a box of ``size`` at ``start`` in a C-order array of ``shape``:
    the elements per run and the element offset of each run (in buffer order)."""
    k = len(shape) - 1
    while k > 0 and size[k] == shape[k]:
        k -= 1  # trailing axes read whole join the run
    run = size[k] * math.prod(shape[k + 1 :])
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    first = sum(s * st for s, st in zip(start, strides, strict=True))
    if k == 0:
        return run, [first]
    outer = np.indices(size[:k]).reshape(k, -1).T  # the index of each run along the axes before k
    return run, [first + int(off) for off in outer @ np.array(strides[:k], dtype=np.int64)]


class OpenedNpy(OpenedStore):
    """A ``.npy`` file opened for timed reads."""

    def __init__(self, path: str, readahead: bool = True):
        t0 = time.perf_counter_ns()
        self.fd = os.open(path, os.O_RDONLY)
        self.offset, self.shape, self.dtype = data_offset(self.fd)
        self.open_s = (time.perf_counter_ns() - t0) / 1e9
        if not readahead:
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        run, offsets = contiguous_runs(self.shape, tuple(start), buffer.shape)
        itemsize = self.dtype.itemsize
        view = memoryview(buffer.reshape(-1).view(np.uint8))
        nbytes = run * itemsize
        calls = [(view[i * nbytes : (i + 1) * nbytes], self.offset + off * itemsize) for i, off in enumerate(offsets)]
        fd = self.fd

        def read() -> None:
            for target, at in calls:
                if os.preadv(fd, [target], at) != len(target):
                    raise OSError(f"short read at byte {at}: the file is shorter than its header says")

        return read

    def close(self) -> None:
        os.close(self.fd)


class StoredBytes(base.StoredChunks):
    """A raw file stores each value once, as it is: a selection touches its own bytes."""

    def __init__(self, itemsize: int):
        self.itemsize = itemsize

    def touched(self, selection: Selection) -> int:
        return selection.nbytes(self.itemsize)

    def files_touched(self, selection: Selection) -> int:
        return 1


def write_npy(path: str, stored) -> int:
    """One ``.npy`` file of ``stored`` (C order), flushed to the device; one write call (streamed
    values: the header, then one call per slab along the first axis)."""
    with open(path, "wb") as f:
        if isinstance(stored, np.ndarray):
            np.lib.format.write_array(f, np.ascontiguousarray(stored), allow_pickle=False)
            calls = 1
        else:
            header = {"descr": np.lib.format.dtype_to_descr(stored.dtype), "fortran_order": False}
            np.lib.format.write_array_header_1_0(f, {**header, "shape": tuple(stored.shape)})
            calls = 1
            for region in Layout(None).write_blocks(tuple(stored.shape), stored.dtype.itemsize):
                f.write(stored[region].tobytes())
                calls += 1
    fsync_path(path)
    return calls


class RemoteNpy(OpenedStore):
    """A ``.npy`` object opened for timed reads: its header read at open (one GET), then one
    ranged GET per contiguous run of each selection."""

    def __init__(self, fs, path: str):
        self.fs, self.path = fs, path
        t0 = time.perf_counter_ns()
        self.offset, self.shape, self.dtype = read_header(io.BytesIO(fs.cat_file(path, start=0, end=4096)))
        self.open_s = (time.perf_counter_ns() - t0) / 1e9

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        run, offsets = contiguous_runs(self.shape, tuple(start), buffer.shape)
        nbytes = run * self.dtype.itemsize
        starts = [self.offset + off * self.dtype.itemsize for off in offsets]
        flat = buffer.reshape(-1).view(np.uint8)
        fs, path = self.fs, self.path

        def read() -> None:
            parts = fs.cat_ranges([path] * len(starts), starts, [s + nbytes for s in starts])
            for i, part in enumerate(parts):
                if len(part) != nbytes:
                    raise OSError(f"short read at byte {starts[i]} of {path}")
                flat[i * nbytes : (i + 1) * nbytes] = np.frombuffer(part, np.uint8)

        return read

    def close(self) -> None:
        pass


class RawBackend(SingleFileStore, Backend):
    name = RAW
    label = "raw binary"

    def write(self, path, stored, layout, compression, dataset_name, strategy, fill_time, option, deadline=None):
        _refuse(layout, compression)  # one call: nothing to stop between
        return write_npy(path, stored)

    def write_fast(self, path, data, layout: Layout, compression: Compression, dataset_name, threads) -> str:
        _refuse(layout, compression)
        write_npy(path, storage_order(data, layout))
        return "npy"

    def open_for_reads(self, path, dataset_name, option, readahead=True) -> OpenedNpy:
        return OpenedNpy(path, readahead)

    def byte_kinds(self, path, dataset_name):
        """A request inside the ``.npy`` header is metadata, any other data."""
        with open(path, "rb") as f:
            header = read_header(f)[0]
        return lambda method, key, start, stop: METADATA if stop is not None and stop <= header else DATA

    def open_remote(self, source, dataset_name, option):
        """The header read at open, then a ranged request per contiguous run (the source's
        filesystem)."""
        fs = source.filesystem()
        return lambda: RemoteNpy(fs, source.path)

    def stored_chunks(self, path, layout, dataset_name) -> StoredBytes:
        fd = os.open(path, os.O_RDONLY)
        try:
            return StoredBytes(data_offset(fd)[2].itemsize)
        finally:
            os.close(fd)

    def versions(self) -> dict:
        return {}


def _refuse(layout: Layout, compression: Compression) -> None:
    if layout.chunk_shape is not None or compression.family != "none":
        raise ValueError(f"a raw store is contiguous and uncompressed, not {layout.id} with {compression.name}")


BACKEND = RawBackend()
