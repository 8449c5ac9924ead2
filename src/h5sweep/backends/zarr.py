"""The Zarr backend: one Zarr v3 store (a directory: ``zarr.json`` and one file per chunk under
``c/``) per test store, written by zarr-python and read by zarr-python or tensorstore.

- Standard write (the write case): zarr-python's own writer, one block of the write strategy
  per assignment; every chunk is stored, edge chunks padded with the fill value (0), as HDF5
  does.
- Fast path (query stores): the array's metadata is written by zarr-python, then every chunk is
  encoded once by numcodecs (the library Zarr's codecs call) in a pool of threads and written
  straight to its file: byte for byte zarr-python's chunks (tested).
- Timed reads: the selection is parsed and the view built before the clock; the clock covers
  the library's read of it into a new array. zarr-python reads with ``async.concurrency``
  chunk reads in flight; tensorstore reads with its chunk cache off, so that every read comes
  from the files (the page cache or the device), as zarr-python's do.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import itertools
import json
import math
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import numcodecs
import numpy as np
import tensorstore
import zarr
from zarr.storage import LocalStore

from h5sweep.backends import ZARR, base, zarr_columns
from h5sweep.backends.base import Backend, OpenedStore, stop_at
from h5sweep.backends.fastwrite import prefetched
from h5sweep.backends.zarr_readers import ZARR_CODEC_FAMILIES, ZarrReader
from h5sweep.measure.pagecache import fsync_path
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.storage.objectstore import DATA, METADATA, OBSTORE
from h5sweep.storage.selections import Selection


# the table's shuffle -> (zarr-python's Blosc shuffle, numcodecs' Blosc shuffle)
def zarr_compressors(compression: Compression, itemsize: int):
    """zarr-python's compressor for a codec of the table (its module's ``zarr``), or None."""
    hook = compression.codec.zarr
    if hook is None:
        raise ValueError(f"Zarr stores {', '.join(ZARR_CODEC_FAMILIES)}, not {compression.name}")
    return hook.compressor(compression.params, itemsize)


def chunk_encoder(compression: Compression):
    """The numcodecs codec that produces zarr-python's chunk bytes, or None (stored raw)."""
    hook = compression.codec.zarr
    if hook is None:
        raise ValueError(f"Zarr stores {', '.join(ZARR_CODEC_FAMILIES)}, not {compression.name}")
    return hook.numcodec(compression.params)


def create_array(path: str, shape, chunks, dtype, compression: Compression, shards=None):
    """A new Zarr v3 array at ``path`` as h5sweep stores them (every chunk stored)."""
    return zarr.create_array(
        store=LocalStore(path),
        shape=shape,
        chunks=chunks,
        shards=shards,
        dtype=dtype,
        compressors=zarr_compressors(compression, np.dtype(dtype).itemsize),
        fill_value=0,
        zarr_format=3,
        overwrite=True,
        config={"write_empty_chunks": True},  # every chunk stored, as HDF5 allocates them
    )


def fsync_tree(path: str) -> None:
    """Every file and directory of a store on storage."""
    for directory, _, files in os.walk(path):
        for name in files:
            fsync_path(os.path.join(directory, name))
        fsync_path(directory)


# What the workflow engine puts into a directory output (not the store's)
NOT_OF_THE_STORE = {".snakemake_timestamp"}


def store_files(path: str) -> list[str]:
    """Every file of a store (metadata and chunks)."""
    return [
        os.path.join(d, name) for d, _, files in os.walk(path) for name in sorted(files) if name not in NOT_OF_THE_STORE
    ]


def chunk_file(path: str, index: tuple[int, ...]) -> str:
    """The file of one chunk (Zarr v3's default key encoding, ``/`` separated)."""
    return os.path.join(path, "c", *map(str, index))


def write_stored(
    path: str,
    stored: np.ndarray,
    layout: Layout,
    compression: Compression,
    strategy: str = "chunk",
    deadline: float | None = None,
) -> int:
    """zarr-python's writer: one assignment per block of the write ``strategy`` (regions in
    the layout's storage axes); returns the number of assignments. ``deadline``: stop
    between two assignments once it has passed (:func:`h5sweep.backends.base.stop_at`)."""
    array = create_array(
        path, stored.shape, layout.storage_chunk_shape, stored.dtype, compression, layout.storage_shard_shape
    )
    writes = 0
    for logical in layout.write_blocks(layout.to_logical(stored.shape), stored.dtype.itemsize, strategy):
        if writes:
            stop_at(deadline, writes)
        region = layout.to_storage(logical)
        array[region] = stored[region]
        writes += 1
    fsync_tree(path)
    return writes


def _chunks(stored: np.ndarray, chunk: tuple[int, ...]):
    """(grid index, chunk zero-padded to the full chunk shape) in storage order."""
    grid = Layout(chunk).chunk_grid(stored.shape)
    for index in np.ndindex(*grid):
        region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunk, strict=True))
        part = stored[region]
        if part.shape != chunk:
            padded = np.zeros(chunk, dtype=stored.dtype)
            padded[tuple(slice(0, n) for n in part.shape)] = part
            part = padded
        yield index, np.ascontiguousarray(part)


def write_fast(path: str, data: np.ndarray, layout: Layout, compression: Compression, threads: int = 1) -> str:
    """The store zarr-python writes, at the storage's speed: metadata by zarr-python, each
    chunk encoded once by numcodecs in ``threads`` threads and written to its file."""
    stored = storage_order(data, layout)
    chunk = layout.storage_chunk_shape
    if layout.shard_shape is not None:  # shards: zarr-python's own writer, a shard per call
        write_stored(path, stored, layout, compression)
        return "zarr-python-shards"
    create_array(path, stored.shape, chunk, stored.dtype, compression)
    codec = chunk_encoder(compression)

    def put(item) -> None:
        index, values = item
        payload = values.tobytes() if codec is None else codec.encode(values)
        target = chunk_file(path, index)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(payload)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for _ in pool.map(put, prefetched(_chunks(stored, chunk)), chunksize=8):
            pass
    fsync_tree(path)
    return f"zarr-chunk-files-{threads}-threads"


SHARD_INDEX_ENTRY = 16  # (offset, bytes) as two little-endian uint64 per chunk of a shard
SHARD_INDEX_CHECKSUM = 4  # the index's CRC-32C, after it at the end of the shard file
MISSING = 2**64 - 1  # an index entry of a chunk the shard does not hold


def shard_chunk_sizes(path: str, chunks_per_shard: tuple[int, ...]) -> np.ndarray:
    """The stored size of each chunk of one shard file, from the index at its end (Zarr v3's
    sharding codec, index at the end); 0 for a chunk it does not hold."""
    n = int(np.prod(chunks_per_shard))
    with open(path, "rb") as f:
        f.seek(-(n * SHARD_INDEX_ENTRY + SHARD_INDEX_CHECKSUM), os.SEEK_END)
        index = np.frombuffer(f.read(n * SHARD_INDEX_ENTRY), dtype="<u8").reshape(*chunks_per_shard, 2)
    sizes = index[..., 1].astype(np.float64)
    return np.where(index[..., 1] == MISSING, 0, sizes).astype(np.int64)


class StoredChunks(base.StoredChunks):
    """Stored (encoded) size of every chunk (its file, or its range in a shard file), to say
    how many bytes a selection needs and how many files it opens."""

    def __init__(self, path: str, layout: Layout):
        self.layout = layout
        chunk = layout.storage_chunk_shape
        meta = zarr.open_array(store=LocalStore(path, read_only=True), mode="r")
        self.itemsize = meta.dtype.itemsize
        grid = Layout(chunk).chunk_grid(meta.shape)
        self.sizes = np.zeros(grid, dtype=np.int64)
        shard = layout.storage_shard_shape
        if shard is None:
            for index in np.ndindex(*grid):
                with contextlib.suppress(FileNotFoundError):  # a chunk never written: fill values
                    self.sizes[index] = os.stat(chunk_file(path, index)).st_size
            return
        per_shard = tuple(s // c for s, c in zip(shard, chunk, strict=True))
        shard_grid = Layout(shard).chunk_grid(meta.shape)
        for index in np.ndindex(*shard_grid):
            with contextlib.suppress(FileNotFoundError):
                sizes = shard_chunk_sizes(chunk_file(path, index), per_shard)
                box = tuple(slice(i * p, (i + 1) * p) for i, p in zip(index, per_shard, strict=True))
                target = self.sizes[box]
                target[...] = sizes[tuple(slice(0, n) for n in target.shape)]

    def files_touched(self, selection: Selection) -> int:
        """Files a read of ``selection`` opens: one per chunk, or per shard."""
        start, size = self.layout.to_storage(selection.start), self.layout.to_storage(selection.size)
        unit = Layout(self.layout.storage_shard_shape or self.layout.storage_chunk_shape)
        return unit.chunks_touched(start, size)

    def touched(self, selection: Selection) -> int:
        start, size = self.layout.to_storage(selection.start), self.layout.to_storage(selection.size)
        return int(self.sizes[self.layout.storage_layout().chunk_box(start, size)].sum())


class _ChunkFiles:
    """What the storage part of a read fetches from an unsharded store: each chunk file the
    box touches, read whole (the grid comes from ``zarr.json``, read at open)."""

    def __init__(self, path: str):
        with open(os.path.join(path, "zarr.json"), encoding="utf-8") as f:
            meta = json.load(f)
        self.path = path
        self.chunk = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
        self.sharded = any(codec["name"] == "sharding_indexed" for codec in meta["codecs"])

    def prepare(self, start, shape):
        if self.sharded:  # a shard's chunks are byte ranges: not fetched on their own here
            return None
        files = [chunk_file(self.path, index) for index in Layout(self.chunk).chunk_indices(start, shape)]

        def fetch() -> None:
            for name in files:
                with open(name, "rb") as f:
                    f.read()

        return fetch


class ZarrPythonStore(OpenedStore):
    """A store opened by zarr-python for timed reads."""

    def __init__(self, path: str, reader: ZarrReader):
        zarr.config.set({"async.concurrency": reader.concurrency})
        t0 = time.perf_counter_ns()
        self.array = zarr.open_array(store=LocalStore(path, read_only=True), mode="r", zarr_format=3)
        self.open_s = (time.perf_counter_ns() - t0) / 1e9
        self.prepare_storage = _ChunkFiles(path).prepare

    def prepare(self, start, buffer: np.ndarray):
        region = tuple(slice(s, s + n) for s, n in zip(start, buffer.shape, strict=True))
        return lambda: self.array.get_basic_selection(region)

    def close(self) -> None:
        self.array = None


class TensorstoreStore(OpenedStore):
    """A store opened by tensorstore (Zarr v3 driver, chunk cache off) for timed reads."""

    def __init__(self, path: str, reader: ZarrReader):
        spec = {
            "driver": "zarr3",
            "kvstore": {"driver": "file", "path": os.path.abspath(path)},
            "context": {"cache_pool": {"total_bytes_limit": 0}},
            "recheck_cached_data": True,
        }
        t0 = time.perf_counter_ns()
        self.array = tensorstore.open(spec, read=True, open=True).result()
        self.open_s = (time.perf_counter_ns() - t0) / 1e9
        self.prepare_storage = _ChunkFiles(path).prepare

    def prepare(self, start, buffer: np.ndarray):
        view = self.array[tuple(slice(s, s + n) for s, n in zip(start, buffer.shape, strict=True))]
        return lambda: view.read().result()

    def close(self) -> None:
        self.array = None


class PassFile(base.PassFile):
    """One rank's Zarr store for a parallel pass, by the option's library (zarr-python or
    tensorstore): each rank reads or writes its own part; there is no MPI-IO, the
    communicator only orders the ranks. A write pass's array is created by rank 0 before the
    others open it, and each rank puts the chunk (or shard) files it wrote on storage."""

    def __init__(self, path, mode, comm, option: ZarrReader, create):
        self.path, self.writing, self.files = path, create is not None, set()
        if self.writing:
            shape, dtype, layout, compression = create
            self.layout = layout
            if comm.Get_rank() == 0:
                create_array(path, shape, layout.chunk_shape, dtype, compression, layout.shard_shape)
            if mode != "serial":
                comm.Barrier()
        if option.reader == "tensorstore":
            spec = {
                "driver": "zarr3",
                "kvstore": {"driver": "file", "path": os.path.abspath(path)},
                "context": {"cache_pool": {"total_bytes_limit": 0}},
                "recheck_cached_data": True,
            }
            self.array = tensorstore.open(spec, read=True, write=self.writing, open=True).result()
            self.tensorstore = True
        else:
            zarr.config.set({"async.concurrency": option.concurrency})
            store = LocalStore(path, read_only=not self.writing)
            self.array = zarr.open_array(store=store, mode="r+" if self.writing else "r")
            self.tensorstore = False

    def _files(self, region) -> list[str]:
        """The chunk or shard files a write of ``region`` stores."""
        unit = self.layout.shard_shape or self.layout.chunk_shape
        ranges = [range(s.start // u, -(-s.stop // u)) for s, u in zip(region, unit, strict=True)]
        return [chunk_file(self.path, index) for index in itertools.product(*ranges)]

    def prepare(self, region, buffer):
        if self.writing:
            self.files.update(self._files(region))
            if self.tensorstore:
                view = self.array[region]
                return lambda: view.write(buffer).result()
            return lambda: self.array.set_basic_selection(region, buffer)
        if self.tensorstore:
            view = self.array[region]
            return lambda: view.read().result()
        return lambda: self.array.get_basic_selection(region)

    def close(self) -> None:
        if self.writing:
            for name in sorted(self.files):
                fsync_path(name)
        self.array = None


# A store on an object store (h5sweep.backends.remote.S3Source): zarr-python on an fsspec or
# an obstore store of the source's, or tensorstore on its S3 key-value store.


class RemoteZarr(OpenedStore):
    """A Zarr array opened by zarr-python through a store of an object store's (fsspec's or
    obstore's)."""

    def __init__(self, store):
        t0 = time.perf_counter_ns()
        # as v3, as its writer made it: unsaid, zarr-python also asks for a v2 store's metadata
        # (.zarray, .zattrs: five requests more at every open)
        self.array = zarr.open_array(store, mode="r", zarr_format=3)
        self.open_s = (time.perf_counter_ns() - t0) / 1e9

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        box = tuple(slice(a, a + n) for a, n in zip(start, buffer.shape, strict=True))
        array = self.array

        def read() -> None:
            buffer[...] = array[box]

        return read

    close_client = None  # an asynchronous client's session, closed on zarr-python's loop

    def close(self) -> None:
        if self.close_client is not None:
            self.close_client()


def _tensorstore_context(timeout_s: float):
    """A new tensorstore context (its own connections, no chunk cache): a cold client. An
    attempt that receives nothing for ``timeout_s`` fails (curl's low-speed limit;
    tensorstore sets none of its own)."""
    os.environ.setdefault("TENSORSTORE_CURL_LOW_SPEED_TIME_SECONDS", f"{timeout_s:.0f}")
    os.environ.setdefault("TENSORSTORE_CURL_LOW_SPEED_LIMIT_BYTES", "1")

    return tensorstore.Context({"cache_pool": {"total_bytes_limit": 0}})


class RemoteTensorstore(OpenedStore):
    """A Zarr array opened by tensorstore through its S3 key-value store (chunk cache off)."""

    def __init__(self, kvstore: dict, context):
        spec = {"driver": "zarr3", "kvstore": kvstore, "recheck_cached_data": True}
        t0 = time.perf_counter_ns()
        self.array = tensorstore.open(spec, read=True, open=True, context=context).result()
        self.open_s = (time.perf_counter_ns() - t0) / 1e9

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        view = self.array[tuple(slice(a, a + n) for a, n in zip(start, buffer.shape, strict=True))]
        return lambda: view.read().result()

    def close(self) -> None:
        self.array = None


def _zarr_classifier(path: str):
    """A Zarr store's requests: its metadata objects, and in a sharded store the ranges inside
    a shard's index (zarr-python reads it apart, a range of its own, before the chunks it
    needs), are metadata; the rest fetches chunks."""
    with open(os.path.join(path, "zarr.json"), encoding="utf-8") as f:
        meta = json.load(f)
    ndim = len(meta["shape"])
    sharding = next((c["configuration"] for c in meta.get("codecs", []) if c["name"] == "sharding_indexed"), None)
    index_bytes, at_end, sizes = 0, True, {}
    if sharding is not None:
        shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
        per_shard = math.prod(s // c for s, c in zip(shard, sharding["chunk_shape"], strict=True))
        checksum = any(c["name"] == "crc32c" for c in sharding.get("index_codecs", []))
        index_bytes = 16 * per_shard + (4 if checksum else 0)  # an offset and a length per chunk
        at_end = sharding.get("index_location", "end") == "end"
        sizes = {os.path.relpath(f, path).replace(os.sep, "/"): os.path.getsize(f) for f in _files(path)}

    def classify(method: str, key: str, start: int | None, stop: int | None) -> str:
        if key.endswith(("zarr.json", ".zmetadata")):
            return METADATA
        if not index_bytes or start is None:
            return DATA
        size = sizes.get("/".join(key.split("/")[-(ndim + 1) :]))
        if size is None:
            return DATA
        first = size + start if start < 0 else start
        last = size if stop is None else stop
        inside = first >= size - index_bytes if at_end else last <= index_bytes
        return METADATA if inside else DATA

    return classify


def _files(path: str) -> list[str]:
    return [os.path.join(root, name) for root, _, names in os.walk(path) for name in names]


class ZarrBackend(Backend):
    name = ZARR
    label = "Zarr"

    def write(self, path, stored, layout, compression, dataset_name, strategy, fill_time, options, deadline=None):
        if fill_time not in self.fill_times:
            raise ValueError(f"the Zarr backend has no fill time {fill_time!r}")
        return write_stored(path, stored, layout, compression, strategy, deadline)

    def write_fast(self, path, data, layout, compression, dataset_name, threads) -> str:
        return write_fast(path, data, layout, compression, threads)

    def open_for_reads(self, path, dataset_name, options: ZarrReader, readahead=True):
        opened = TensorstoreStore if options.reader == "tensorstore" else ZarrPythonStore
        return opened(path, options)

    def open_pass(self, path, dataset_name, mode, comm, option, create=None, hints=None) -> PassFile:
        return PassFile(path, mode, comm, option, create)

    def stored_chunks(self, path, layout, dataset_name) -> StoredChunks:
        return StoredChunks(path, layout)

    def byte_kinds(self, path, dataset_name):
        """A request for a metadata object, or (sharded) for a range inside a shard's index, is
        metadata; any other fetches chunks."""
        return _zarr_classifier(path)

    def open_remote(self, source, dataset_name, option: ZarrReader | None):
        """tensorstore on the source's S3 key-value store, or zarr-python on an obstore store
        (``option.store``) or an fsspec one of the source's; its chunk reads in flight as the
        reader says (None: zarr-python through fsspec, as configured)."""
        if option is not None and option.reader == "tensorstore":
            context = _tensorstore_context(source.read_timeout_s)
            return lambda: RemoteTensorstore(source.key_value_spec(), context)
        if option is not None:
            zarr.config.set({"async.concurrency": option.concurrency})
        if option is not None and option.store == OBSTORE:
            from zarr.storage import ObjectStore

            store = ObjectStore(source.key_value_store(), read_only=True)
            return lambda: RemoteZarr(store)
        from zarr.core.sync import _get_loop, sync
        from zarr.storage import FsspecStore

        # on zarr-python's loop, where its store awaits it (and where it is closed)
        fs, close = source.async_filesystem(_get_loop(), sync)

        def opener() -> OpenedStore:
            store = RemoteZarr(FsspecStore(fs, path=source.path, read_only=True))
            store.close_client = close
            return store

        return opener

    def footprint_bytes(self, path) -> int:
        return sum(os.stat(f).st_size for f in store_files(path))

    def store_counts(self, path) -> dict:
        directories = sum(len(dirs) for _, dirs, _ in os.walk(path)) + 1
        return {C.STORE_FILES: len(store_files(path)), C.STORE_DIRECTORIES: directories}

    def remove(self, path) -> None:
        shutil.rmtree(path)

    def paths_to_evict(self, path) -> list[str]:
        return store_files(path)

    def versions(self) -> dict:
        return {
            zarr_columns.ZARR_VERSION: zarr.__version__,
            zarr_columns.NUMCODECS_VERSION: numcodecs.__version__,
            zarr_columns.TENSORSTORE_VERSION: importlib.metadata.version("tensorstore"),
        }


BACKEND = ZarrBackend()
