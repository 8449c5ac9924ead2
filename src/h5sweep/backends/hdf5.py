"""The HDF5 backend: one file per test store, written and read through h5py.

Timed reads call ``H5Dread`` with dataspaces built before the clock; the read option is
HDF5's chunk cache (:class:`h5sweep.backends.chunk_cache.ChunkCache`), set when the file is opened.
"""

from __future__ import annotations

import bisect
import math
import os
import time
from functools import partial

import h5py
import numpy as np
from h5py import h5s

from h5sweep.backends import HDF5, base, fastwrite, hdf5_columns, hdf5_filters
from h5sweep.backends.base import Backend, OpenedStore, SingleFileStore, stop_at

try:  # registers the hdf5plugin filters (Blosc, Zstd, LZ4, ...) with HDF5 in every process
    import hdf5plugin  # that loads this backend, before it writes or reads a store
except ImportError:  # pragma: no cover - codecs that need it are refused at validation
    hdf5plugin = None
from h5sweep.backends.chunk_cache import DEFAULT_CACHE, ChunkCache
from h5sweep.measure.pagecache import fsync_path
from h5sweep.measure.timing import gc_paused
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.storage.objectstore import DATA, METADATA, ROS3
from h5sweep.storage.selections import Selection


class OpenedFile(OpenedStore):
    """A test file opened for timed reads."""

    def __init__(self, path: str, dataset_name: str, cache: ChunkCache, readahead: bool = True):
        t0 = time.perf_counter_ns()
        self.file = h5py.File(path, "r", **cache.open_kwargs())
        self.dset = self.file[dataset_name]
        self.open_s = (time.perf_counter_ns() - t0) / 1e9
        if not readahead:  # the bench's read-amplification goal: no readahead on HDF5's descriptor
            os.posix_fadvise(self.file.id.get_vfd_handle(), 0, 0, os.POSIX_FADV_RANDOM)
        self._space = self.dset.id.get_space()
        self._mem_spaces: dict[tuple, h5s.SpaceID] = {}

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        mem_space = self._mem_spaces.get(buffer.shape)
        if mem_space is None:
            mem_space = self._mem_spaces[buffer.shape] = h5s.create_simple(buffer.shape)
        self._space.select_hyperslab(tuple(start), buffer.shape)
        return partial(self.dset.id.read, mem_space, self._space, buffer)

    def prepare_storage(self, start: tuple[int, ...], shape: tuple[int, ...]):
        """The storage part of a read: a direct chunk read (``H5Dread_chunk``: the stored
        bytes, no filter, no copy into the array) of every chunk the box touches; None for a
        contiguous dataset."""
        chunk = self.dset.chunks
        if chunk is None:
            return None
        offsets = [
            tuple(i * c for i, c in zip(index, chunk, strict=True))
            for index in Layout(chunk).chunk_indices(start, shape)
        ]
        read_chunk = self.dset.id.read_direct_chunk

        def fetch() -> None:
            for offset in offsets:
                read_chunk(offset)

        return fetch

    def close(self) -> None:
        self.file.close()


class StoredChunks(base.StoredChunks):
    """Stored (after filtering) size of every chunk, to say how many bytes a selection
    needs from storage. Contiguous: the selection's own bytes."""

    def __init__(self, path: str, layout: Layout, dataset_name: str = "data"):
        # Reading the chunk index warms caches: do it before the file is evicted.
        with h5py.File(path, "r") as f:
            dset = f[dataset_name]
            self.layout = layout
            self.itemsize = dset.dtype.itemsize
            self.sizes = None
            if layout.chunk_shape is not None:
                grid = layout.storage_layout().chunk_grid(dset.shape)  # the file's own axes
                sizes = np.zeros(grid, dtype=np.int64)
                chunk = layout.storage_chunk_shape

                def record(info):
                    sizes[tuple(o // c for o, c in zip(info.chunk_offset, chunk, strict=True))] = info.size

                dset.id.chunk_iter(record)
                self.sizes = sizes

    def files_touched(self, selection: Selection) -> int:
        """Files a read opens: the one file (opened before the read)."""
        return 1

    def touched(self, selection: Selection) -> int:
        if self.sizes is None:
            return selection.nbytes(self.itemsize)
        start, size = self.layout.to_storage(selection.start), self.layout.to_storage(selection.size)
        return int(self.sizes[self.layout.storage_layout().chunk_box(start, size)].sum())


def file_space_kwargs(layout: Layout) -> dict:
    """h5py.File's keywords for the layout's file space: paged aggregation at its page size
    (``layouts.pages``), else HDF5's default strategy."""
    if layout.page_size is None:
        return {}
    return {"fs_strategy": "page", "fs_page_size": layout.page_size}


def write_stored(
    path: str,
    stored: np.ndarray,
    layout: Layout,
    compression: Compression,
    name: str = "data",
    strategy: str = "chunk",
    fill_time: str = "ifset",
    cache: ChunkCache = DEFAULT_CACHE,
    deadline: float | None = None,
) -> int:
    """Write ``stored`` (the array in the layout's storage order, C-contiguous, or streamed
    values that compute a block when indexed) to a new HDF5 file at ``path`` through the
    standard HDF5 write path; return the number of writes.

    Each block of the write ``strategy`` is one ``H5Dwrite`` of a hyperslab, from a memory
    hyperslab of the whole array (HDF5 gathers the block; no copy is made in Python).
    ``fill_time`` is HDF5's: ``ifset`` (fill values are written only if one was set; none
    is), ``never``, or ``alloc`` (storage is filled with the fill value when it is
    allocated, then overwritten). The file is open with the chunk ``cache`` setting: with a
    strategy that writes a chunk in several calls, whether the chunk stays cached between
    them decides how often it is compressed. ``deadline``: stop between two calls once it has
    passed (:func:`h5sweep.backends.base.stop_at`).
    """
    in_memory = isinstance(stored, np.ndarray)
    if in_memory and not stored.flags.c_contiguous:
        raise ValueError("write_stored needs a C-contiguous array in storage order")
    kwargs = (
        {}
        if layout.chunk_shape is None
        else {"chunks": layout.storage_chunk_shape, **hdf5_filters.create_keywords(compression)}
    )
    if fill_time != "ifset":
        kwargs.update(fill_time=fill_time, fillvalue=0)
    logical_shape = layout.to_logical(stored.shape)
    writes = 0
    with h5py.File(path, "w", **cache.open_kwargs(), **file_space_kwargs(layout)) as f:
        dset = f.create_dataset(name, shape=stored.shape, dtype=stored.dtype, **kwargs)
        file_space = dset.id.get_space()
        mem_space = h5s.create_simple(stored.shape)
        for logical in layout.write_blocks(logical_shape, stored.dtype.itemsize, strategy):
            if writes:
                stop_at(deadline, writes)
            region = layout.to_storage(logical)
            start = tuple(s.start for s in region)
            count = tuple(s.stop - s.start for s in region)
            file_space.select_hyperslab(start, count)
            if in_memory:
                mem_space.select_hyperslab(start, count)
                dset.id.write(mem_space, file_space, stored)
            else:  # streamed values (h5sweep.storage.datasources.StoredValues): this block only
                block = stored[region]
                dset.id.write(h5s.create_simple(block.shape), file_space, block)
            writes += 1
        f.flush()
    fsync_path(path)
    return writes


def write_file(
    path: str, data: np.ndarray, layout: Layout, compression: Compression, name: str = "data", **options
) -> int:
    """:func:`write_stored` of ``data`` given in (x, y, z) order (for untimed callers)."""
    return write_stored(path, storage_order(data, layout), layout, compression, name, **options)


def call_overhead_s(path: str, dataset_name: str = "data", calls: int = 200) -> float:
    """What h5py's ``read_direct`` costs on top of ``H5Dread`` per call (parsing the
    selection and building dataspaces), measured on a warm one-element read: the median of
    ``calls`` alternating pairs. Recorded with every read so a user can add it back. The
    file is opened with a chunk cache that holds the element's chunk, so that no pair decodes
    it again (a chunk larger than the default cache would be inflated by every call)."""
    with h5py.File(path, "r") as f:
        chunks = f[dataset_name].chunks
        chunk_bytes = math.prod(chunks) * f[dataset_name].dtype.itemsize if chunks else 0
    with h5py.File(path, "r", rdcc_nbytes=max(2**20, 2 * chunk_bytes)) as f:
        dset = f[dataset_name]
        one = (slice(0, 1),) * dset.ndim
        buffer = np.empty((1,) * dset.ndim, dtype=dset.dtype)
        mem_space, space = h5s.create_simple(buffer.shape), dset.id.get_space()
        space.select_hyperslab((0,) * dset.ndim, buffer.shape)
        dset.read_direct(buffer, source_sel=one)  # warm
        wrapped, bare = [], []
        with gc_paused():
            for _ in range(calls):
                t0 = time.perf_counter_ns()
                dset.read_direct(buffer, source_sel=one)
                t1 = time.perf_counter_ns()
                dset.id.read(mem_space, space, buffer)
                t2 = time.perf_counter_ns()
                wrapped.append(t1 - t0)
                bare.append(t2 - t1)
    return max(0.0, (float(np.median(wrapped)) - float(np.median(bare))) / 1e9)


class PassFile(base.PassFile):
    """One rank's HDF5 file for a parallel pass: HDF5's default driver in ``serial`` mode
    (rank 0 alone), else the MPI-IO driver, every access an ``H5Dread``/``H5Dwrite`` of one
    hyperslab with an independent or collective transfer property list."""

    def __init__(self, path, dataset_name, mode, comm, option: ChunkCache, create, hints=None):
        from h5py import h5fd, h5p  # the MPI-IO driver's constants

        kwargs = dict(option.open_kwargs())
        self.mpio = mode != "serial"
        if self.mpio:
            kwargs.update(driver="mpio", comm=comm)
            if hints:
                from mpi4py import MPI

                info = MPI.Info.Create()
                for key, value in hints.items():
                    info.Set(str(key), str(value))
                kwargs.update(info=info)
        self.path, self.writing, self.collective = path, create is not None, mode == "collective"
        if self.writing:
            shape, dtype, layout, compression = create
            self.file = h5py.File(path, "w", **kwargs)
            chunked = {} if layout.chunk_shape is None else {"chunks": layout.chunk_shape}
            if chunked:
                chunked.update(hdf5_filters.create_keywords(compression))
            self.dset = self.file.create_dataset(dataset_name, shape=shape, dtype=dtype, **chunked)
        else:
            self.file = h5py.File(path, "r", **kwargs)
            self.dset = self.file[dataset_name]
        self.transfer = h5p.create(h5p.DATASET_XFER)
        if mode != "serial":
            self.transfer.set_dxpl_mpio(h5fd.MPIO_COLLECTIVE if self.collective else h5fd.MPIO_INDEPENDENT)

    def _call(self, memory, space, buffer):
        io = self.dset.id.write if self.writing else self.dset.id.read
        return lambda: io(memory, space, buffer, dxpl=self.transfer)

    def prepare(self, region, buffer):
        space = self.dset.id.get_space()
        space.select_hyperslab(tuple(s.start for s in region), buffer.shape)
        return self._call(h5s.create_simple(buffer.shape), space, buffer)

    def prepare_empty(self):
        if not self.collective:
            return None
        space = self.dset.id.get_space()
        space.select_none()
        memory = h5s.create_simple((1,))
        memory.select_none()
        return self._call(memory, space, np.zeros(1, dtype=self.dset.dtype))

    def close(self) -> None:
        self.file.close()
        if self.writing:  # this rank's node's pages of the file, on storage
            fsync_path(self.path)

    def hints_in_effect(self) -> dict[str, str]:
        if not self.mpio:
            return {}
        comm, info = self.file.id.get_access_plist().get_fapl_mpio()  # collective: every rank asks
        comm.Free()
        return {info.Get_nthkey(i): info.Get(info.Get_nthkey(i)) for i in range(info.Get_nkeys())}


# A store on an object store (h5sweep.backends.remote.S3Source): h5py on a file object of
# the source's, or HDF5's ROS3 driver on its URL.


class RemoteHdf5(OpenedStore):
    """An HDF5 object opened through an fsspec file object."""

    def __init__(self, fs, path: str, dataset_name: str, read, open_kwargs: dict | None = None):
        t0 = time.perf_counter_ns()
        self.handle = fs.open(path, "rb", block_size=read.block_size, cache_type=read.cache_type)
        self._open(self.handle, dataset_name, read, open_kwargs, t0)

    def _open(self, target, dataset_name: str, read, open_kwargs: dict | None, t0: int, **driver) -> None:
        """h5py.File on ``target`` (a file object, or ROS3's URL with its ``driver`` arguments),
        with the chunk cache and the page buffer; ``open_s`` counted from ``t0``."""
        import h5py

        page = {"page_buf_size": read.page_buffer} if read.page_buffer else {}
        self.file = h5py.File(target, "r", **driver, **(open_kwargs or {}), **page)
        self.dataset = self.file[dataset_name]
        self.open_s = (time.perf_counter_ns() - t0) / 1e9

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        box = tuple(slice(a, a + n) for a, n in zip(start, buffer.shape, strict=True))
        dataset = self.dataset

        def read() -> None:
            dataset.read_direct(buffer, source_sel=box)

        return read

    def close(self) -> None:
        self.file.close()
        if self.handle is not None:
            self.handle.close()


class RemoteHdf5Ros3(RemoteHdf5):
    """An HDF5 object opened by HDF5's read-only S3 driver: each of HDF5's reads one ranged
    GET, no cache but HDF5's own (its chunk cache, and a paged file's page buffer)."""

    def __init__(self, url: str, keys: dict, dataset_name: str, read, open_kwargs: dict | None = None):
        t0 = time.perf_counter_ns()
        self.handle = None
        self._open(url, dataset_name, read, open_kwargs, t0, driver="ros3", **keys)


def _hdf5_extents(path: str, dataset_name: str) -> list[tuple[int, int]]:
    """The byte extents [start, stop) of the dataset's values in an HDF5 file: each stored
    chunk's, or the contiguous block's, sorted."""
    import h5py

    with h5py.File(path, "r") as f:
        dsid = f[dataset_name].id
        if f[dataset_name].chunks is None:
            offset = dsid.get_offset()
            return [] if offset is None else [(offset, offset + dsid.get_storage_size())]
        extents = []
        for i in range(dsid.get_num_chunks()):
            info = dsid.get_chunk_info(i)
            extents.append((info.byte_offset, info.byte_offset + info.size))
    return sorted(extents)


def _hdf5_classifier(extents: list[tuple[int, int]], size: int):
    starts = [a for a, _ in extents]

    def classify(method: str, key: str, start: int | None, stop: int | None) -> str:
        if start is None:
            return DATA if extents else METADATA  # the whole file
        if start < 0:  # the file's last -start bytes
            start = max(0, size + start)
        stop = size if stop is None else stop
        i = bisect.bisect_right(starts, stop - 1) - 1  # the last extent starting inside or before the range
        return DATA if i >= 0 and extents[i][1] > start else METADATA

    return classify


class HDF5Backend(SingleFileStore, Backend):
    name = HDF5
    label = "HDF5"  # in messages

    def write(self, path, stored, layout, compression, dataset_name, strategy, fill_time, options, deadline=None):
        return write_stored(path, stored, layout, compression, dataset_name, strategy, fill_time, options, deadline)

    def write_fast(self, path, data, layout, compression, dataset_name, threads) -> str:
        method = fastwrite.write_fast(path, data, layout, compression, dataset_name, threads)
        if method is None:  # no fast path for this codec: HDF5's own pipeline
            write_file(path, data, layout, compression, dataset_name)
            fsync_path(path)
            method = "standard"
        return method

    def open_for_reads(self, path, dataset_name, options, readahead=True) -> OpenedFile:
        return OpenedFile(path, dataset_name, options, readahead)

    def stored_chunks(self, path, layout, dataset_name) -> StoredChunks:
        return StoredChunks(path, layout, dataset_name)

    def open_pass(self, path, dataset_name, mode, comm, option, create=None, hints=None) -> PassFile:
        return PassFile(path, dataset_name, mode, comm, option, create, hints)

    def byte_kinds(self, path, dataset_name):
        """A request for a range of the file: data where it overlaps a stored chunk's extent
        (or the contiguous block's), else metadata."""
        return _hdf5_classifier(_hdf5_extents(path, dataset_name), os.path.getsize(path))

    def open_remote(self, source, dataset_name, option):
        """h5py on a file object of the source's (its block size and cache type), or HDF5's
        ROS3 driver on its URL; the chunk cache of ``option``, the page buffer of its read."""
        read, kwargs = source.read, option.open_kwargs() if option is not None else None
        if read.driver == ROS3:
            url, keys = source.url(), source.driver_keys()
            return lambda: RemoteHdf5Ros3(url, keys, dataset_name, read, kwargs)
        fs = source.filesystem()
        return lambda: RemoteHdf5(fs, source.path, dataset_name, read, kwargs)

    call_overhead_column = hdf5_columns.H5PY_CALL_OVERHEAD_S

    def call_overhead_s(self, path, dataset_name) -> float:
        return call_overhead_s(path, dataset_name)

    def versions(self) -> dict:
        return {
            hdf5_columns.H5PY_VERSION: h5py.version.version,
            hdf5_columns.HDF5_VERSION: h5py.version.hdf5_version,
            hdf5_columns.HDF5PLUGIN_VERSION: hdf5plugin.version if hdf5plugin else "",
        }


BACKEND = HDF5Backend()
