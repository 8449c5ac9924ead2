"""Test stores on an S3-compatible object store (:mod:`h5sweep.storage.objectstore`): each
backend's store, written where it always is and uploaded object by object, then opened for
timed reads through a client of its own, every request counted.

- HDF5: h5py on an fsspec file object (its block size and cache type, and HDF5's page buffer
  for a file written with paged aggregation, are the read's settings);
- Zarr: zarr-python on an fsspec or an obstore store, or tensorstore's own S3 key-value store,
  one object per chunk (or shard) file;
- raw: one ranged GET per contiguous run of the selection, the ``.npy`` header read at open.

A store's bytes are classified before it is uploaded (:func:`classifier`): a request that
fetches bytes of a chunk (HDF5's chunk extents, Zarr's chunk objects, the raw file's values)
is a data request, any other a metadata request. fsspec's requests are counted from the S3
client's events; obstore's and tensorstore's, which send their own, by the relay every request
passes (:func:`h5sweep.storage.objectstore.relay_log`)."""

from __future__ import annotations

import bisect
import io
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from h5sweep.backends import HDF5, RAW, ZARR
from h5sweep.backends.base import Backend, OpenedStore
from h5sweep.backends.raw import contiguous_runs, read_header
from h5sweep.errors import VerificationError
from h5sweep.storage import objectstore
from h5sweep.storage.objectstore import DATA, METADATA, FileRead, RequestLog, S3Location

# the backends whose stores are read through a file object (each read option of theirs is
# measured in every one of the filesystem's reads); the others fetch whole objects or ranges
FILE_OBJECT_BACKENDS = (HDF5,)


@dataclass(frozen=True)
class RemoteOption:
    """A backend's read option on an object store, with how its file is fetched: measured as
    a read option of its own, named by both."""

    inner: object  # the backend's own read option (HDF5: a chunk cache)
    read: FileRead

    @property
    def label(self) -> str:
        return f"{self.inner.label}, {self.read.label}"

    @property
    def setting(self) -> str:
        # the page buffer, and ROS3's URL and keys (bytes), among h5py.File's arguments
        more = f", page_buf_size={self.read.page_buffer}" if self.read.page_buffer else ""
        opened = self.inner.setting
        if self.read.driver == objectstore.ROS3:
            more = ", driver='ros3', aws_region=region, secret_id=key_id, secret_key=secret" + more
            return _with_arguments(opened.replace("(path,", "(url,", 1), more)
        fetch = f"s3fs.S3FileSystem().open(key, 'rb', block_size={self.read.block_size}, "
        fetch += f"cache_type={self.read.cache_type!r})"
        return f"{fetch}; {_with_arguments(opened, more)}"

    def columns(self) -> dict:
        return {**self.inner.columns(), **self.read.columns()}

    def holds_chunk(self, chunk_bytes: int):
        return self.inner.holds_chunk(chunk_bytes)

    def settings(self) -> dict:
        return {**self.inner.settings(), READ_KEY: self.read.settings()}

    def __getattr__(self, name: str):  # the backend's own option's attributes (nbytes, reader, ...)
        if name in ("inner", "read"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def _with_arguments(call: str, more: str) -> str:
    """A call's text with more arguments before its closing parenthesis."""
    return call[:-1] + more + ")" if call.endswith(")") else call + more


READ_KEY = "s3_read"  # where an option's settings carry how its file is fetched


def remote_options(backend: str, options: list, reads: tuple[FileRead, ...], zarr_stores: tuple[str, ...] = ()) -> list:
    """A backend's read options on an object store: for a backend read through a file object,
    each of its options in each of the filesystem's reads; zarr-python's through each of the
    filesystem's Zarr stores, tensorstore's through its own S3 key-value store; the others' as
    they are."""
    if backend == ZARR:
        stores = zarr_stores or (objectstore.FSSPEC,)
        return [
            replace(option, store=store)
            for option in options
            for store in (stores if option.reader == "zarr-python" else (TENSORSTORE_S3,))
        ]
    if backend not in FILE_OBJECT_BACKENDS or not reads:
        return list(options)
    return [RemoteOption(option, read) for option in options for read in reads]


TENSORSTORE_S3 = "s3"  # tensorstore's own S3 key-value store


def counted_by_relay(backend: str, option) -> bool:
    """Whether a read option's requests are counted by the relay (obstore's, tensorstore's and
    HDF5's ROS3 driver's: they send their own, without an S3 client whose events can be
    counted)."""
    if backend == HDF5:
        return _ros3(option)
    return backend == ZARR and (option.reader == "tensorstore" or option.store == objectstore.OBSTORE)


def _ros3(option) -> bool:
    read = getattr(option, "read", None) if isinstance(option, RemoteOption) else None
    return read is not None and read.driver == objectstore.ROS3


def h5py_has_ros3() -> bool:
    """Whether this process's h5py was built with HDF5's read-only S3 driver."""
    import h5py

    return bool(h5py.get_config().ros3)


def request_log(backend: str, option, location: S3Location, classify) -> RequestLog:
    """Where a read option's requests on ``location`` are counted: the relay's log for
    obstore, tensorstore and ROS3, the S3 client's events for the others (and what went wrong
    with them, in the relay's log for every one)."""
    if option is not None and counted_by_relay(backend, option):
        return objectstore.relay_log(location, classify)
    log, relay = RequestLog(classify), objectstore.relay(location)
    log.relay_path = relay and relay.log_path  # what went wrong is counted by the relay for all
    return log


def option_from_settings(entry: dict, decode) -> object:
    """A read option from a job's settings: ``decode`` (the backend's) of its own part, wrapped
    with how its file is fetched where the settings carry it."""
    if READ_KEY not in entry:
        return decode(entry)
    own = {k: v for k, v in entry.items() if k != READ_KEY}
    return RemoteOption(decode(own), FileRead(**entry[READ_KEY]))


def objects(local_path: str) -> list[tuple[str, str]]:
    """(local file, its key under the store's name) of every file of a store: the file
    itself, or each file of a store's directory."""
    if os.path.isfile(local_path):
        return [(local_path, "")]
    found = []
    for root, _, files in os.walk(local_path):
        for name in sorted(files):
            path = os.path.join(root, name)
            found.append((path, os.path.relpath(path, local_path).replace(os.sep, "/")))
    return found


def upload(fs, location: S3Location, name: str, local_path: str, marked: bool = True) -> int:
    """Put the store at ``local_path`` under ``name`` (one object per file), then (``marked``)
    its marker (:func:`marker_path`): a store without one was not uploaded whole, and is not
    read (:meth:`RemoteBackend.open_for_reads`). The bytes sent."""
    sent = 0
    for path, key in objects(local_path):
        fs.put_file(path, location.path(name, key))
        sent += os.path.getsize(path)
    if marked:
        fs.pipe_file(marker_path(location, name), b"")
    return sent


MARKER_SUFFIX = ".uploaded"


def marker_path(location: S3Location, name: str) -> str:
    """The object (fsspec's bucket/key) that says the store uploaded as ``name`` is whole:
    beside its objects, written after the last of them."""
    return location.path(name) + MARKER_SUFFIX


def classifier(backend: str, local_path: str, dataset_name: str) -> Callable[[str, str, int | None, int | None], str]:
    """What a request for the store uploaded from ``local_path`` fetches: a function of
    (method, key, start, stop) for :class:`h5sweep.storage.objectstore.RequestLog`."""
    if backend == ZARR:
        return _zarr_classifier(local_path)
    if backend == RAW:
        with open(local_path, "rb") as f:
            header = read_header(f)[0]
        return lambda method, key, start, stop: METADATA if stop is not None and stop <= header else DATA
    if backend == HDF5:
        return _hdf5_classifier(_hdf5_extents(local_path, dataset_name), os.path.getsize(local_path))
    raise ValueError(f"no remote reads for the {backend} backend")


def _zarr_classifier(path: str):
    """A Zarr store's requests: its metadata objects, and in a sharded store the ranges inside
    a shard's index (zarr-python reads it apart, a range of its own, before the chunks it
    needs), are metadata; the rest fetches chunks."""
    import json

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
        sizes = {key: os.path.getsize(local) for local, key in objects(path)}

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


class RemoteHdf5(OpenedStore):
    """An HDF5 object opened through an fsspec file object."""

    def __init__(self, fs, path: str, dataset_name: str, read: FileRead, open_kwargs: dict | None = None):
        t0 = time.perf_counter_ns()
        self.handle = fs.open(path, "rb", block_size=read.block_size, cache_type=read.cache_type)
        self._open(self.handle, dataset_name, read, open_kwargs, t0)

    def _open(self, target, dataset_name: str, read: FileRead, open_kwargs: dict | None, t0: int, **driver) -> None:
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


def ros3_url(location: S3Location, name: str) -> str:
    """The URL HDF5's ROS3 driver opens the store uploaded as ``name`` by (path-style, through
    the location's relay)."""
    return f"{objectstore.relay_endpoint(location)}/{location.bucket}/{location.key(name)}"


def ros3_keys() -> dict:
    """The ROS3 driver's region and keys (bytes), from the environment or the profile, as an
    S3 client finds them; a session token is not passed (HDF5 1.10 takes none)."""
    import botocore.session

    found = botocore.session.Session().get_credentials()
    if found is None:
        return {}
    return {
        "aws_region": _region().encode(),
        "secret_id": found.access_key.encode(),
        "secret_key": found.secret_key.encode(),
    }


class RemoteHdf5Ros3(RemoteHdf5):
    """An HDF5 object opened by HDF5's read-only S3 driver: each of HDF5's reads one ranged
    GET, no cache but HDF5's own (its chunk cache, and a paged file's page buffer)."""

    def __init__(self, url: str, keys: dict, dataset_name: str, read: FileRead, open_kwargs: dict | None = None):
        t0 = time.perf_counter_ns()
        self.handle = None
        self._open(url, dataset_name, read, open_kwargs, t0, driver="ros3", **keys)


class RemoteZarr(OpenedStore):
    """A Zarr array opened by zarr-python through a store of an object store's (fsspec's or
    obstore's)."""

    def __init__(self, store):
        import zarr

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


def _region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def _obstore(location: S3Location, name: str):
    """zarr-python's obstore store of the store uploaded as ``name``: a new client (obstore's
    S3 store, its credentials from the environment), through the location's relay."""
    from obstore.store import S3Store
    from zarr.storage import ObjectStore

    endpoint = objectstore.relay_endpoint(location)
    client = S3Store(
        location.bucket,
        prefix=location.key(name),
        endpoint=endpoint,
        region=_region(),
        virtual_hosted_style_request=False,
        client_options={"allow_http": endpoint.startswith("http://")},  # its own limits: 5 s to connect, 30 s a request
    )
    return ObjectStore(client, read_only=True)


def _tensorstore_context():
    """A new tensorstore context (its own connections, no chunk cache): a cold client. An
    attempt that receives nothing for :data:`h5sweep.storage.objectstore.READ_TIMEOUT_S`
    fails (curl's low-speed limit; tensorstore sets none of its own)."""
    os.environ.setdefault("TENSORSTORE_CURL_LOW_SPEED_TIME_SECONDS", f"{objectstore.READ_TIMEOUT_S:.0f}")
    os.environ.setdefault("TENSORSTORE_CURL_LOW_SPEED_LIMIT_BYTES", "1")
    import tensorstore

    return tensorstore.Context({"cache_pool": {"total_bytes_limit": 0}})


class RemoteTensorstore(OpenedStore):
    """A Zarr array opened by tensorstore through its S3 key-value store (chunk cache off)."""

    def __init__(self, location: S3Location, name: str, context):
        import tensorstore

        spec = {
            "driver": "zarr3",
            "kvstore": {
                "driver": "s3",
                "bucket": location.bucket,
                "path": location.key(name) + "/",
                "endpoint": objectstore.relay_endpoint(location),
                "aws_region": _region(),
            },
            "recheck_cached_data": True,
        }
        t0 = time.perf_counter_ns()
        self.array = tensorstore.open(spec, read=True, open=True, context=context).result()
        self.open_s = (time.perf_counter_ns() - t0) / 1e9

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        view = self.array[tuple(slice(a, a + n) for a, n in zip(start, buffer.shape, strict=True))]
        return lambda: view.read().result()

    def close(self) -> None:
        self.array = None


def open_remote(*args, **kwargs) -> OpenedStore:
    """The store uploaded as ``name``, opened for timed reads by a new client (cold: no cache
    and no connection shared with any other), every request it sends counted in ``log``
    (the opened store's ``log``): :func:`remote_opener`'s two steps at once."""
    return remote_opener(*args, **kwargs)()


def remote_opener(
    backend: str,
    location: S3Location,
    name: str,
    dataset_name: str,
    log: RequestLog,
    read: FileRead | None = None,
    open_kwargs: dict | None = None,
    reader=None,
) -> Callable[[], OpenedStore]:
    """The store uploaded as ``name`` on ``location``, in two steps: a new client made now (no
    cache or connection shared with any other; its session and credentials, which a program
    sets up once), the store opened by the function returned (its requests, counted in
    ``log``). ``open_kwargs``: h5py.File's (HDF5's chunk cache); ``reader``: a Zarr reader
    (:class:`h5sweep.backends.zarr_readers.ZarrReader`; zarr-python through fsspec unsaid)."""
    path, read = location.path(name), read or FileRead()
    if backend == ZARR and reader is not None and reader.reader == "tensorstore":
        context = _tensorstore_context()

        def opener() -> OpenedStore:
            return RemoteTensorstore(location, name, context)
    elif backend == ZARR and reader is not None and reader.store == objectstore.OBSTORE:
        import zarr

        zarr.config.set({"async.concurrency": reader.concurrency})  # its chunk reads in flight
        store = _obstore(location, name)

        def opener() -> OpenedStore:
            return RemoteZarr(store)
    elif backend == ZARR:
        import zarr
        from zarr.core.sync import _get_loop, sync

        if reader is not None:  # its chunk reads in flight
            zarr.config.set({"async.concurrency": reader.concurrency})

        # on zarr-python's loop, where its store awaits it (and where it is closed)
        fs = objectstore.client(location, asynchronous=True, loop=_get_loop())
        sync(objectstore.attach_async(fs, log))

        def opener() -> OpenedStore:
            from zarr.storage import FsspecStore

            store = RemoteZarr(FsspecStore(fs, path=path, read_only=True))
            store.close_client = lambda: sync(objectstore.close_async(fs))
            return store
    elif backend == RAW:
        fs = objectstore.client(location, log)

        def opener() -> OpenedStore:
            return RemoteNpy(fs, path)
    elif backend == HDF5 and read.driver == objectstore.ROS3:
        url, keys = ros3_url(location, name), ros3_keys()

        def opener() -> OpenedStore:
            return RemoteHdf5Ros3(url, keys, dataset_name, read, open_kwargs)
    elif backend == HDF5:
        fs = objectstore.client(location, log)

        def opener() -> OpenedStore:
            return RemoteHdf5(fs, path, dataset_name, read, open_kwargs)
    else:
        raise ValueError(f"no remote reads for the {backend} backend")

    def opened_and_logged() -> OpenedStore:
        opened = opener()
        opened.log = log
        return opened

    return opened_and_logged


class OpenedOnFirstRead(OpenedStore):
    """A remote store opened by its first read, inside that read's clock: on an object store
    the open is requests like the read's (a user's program opens, then reads, each time it
    starts cold), so a first access costs both. ``open_s`` and ``open_requests`` say how much
    of the first read was the open."""

    def __init__(self, opener: Callable[[], OpenedStore], log: RequestLog):
        self._opener, self.log, self.inner = opener, log, None

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray):
        if self.inner is not None:
            return self.inner.prepare(start, buffer)

        def open_then_read():
            before = self.log.mark()
            self.inner = self._opener()
            self._open_marks = before, self.log.mark()
            return self.inner.prepare(start, buffer)()

        return open_then_read

    @property
    def meter(self) -> RequestLog:
        return self.log

    @property
    def open_s(self) -> float:
        return float("nan") if self.inner is None else self.inner.open_s

    @property
    def open_requests(self) -> int | None:
        """The requests the open sent (counted after the read, outside its clock)."""
        marks = getattr(self, "_open_marks", None)
        return None if marks is None else self.log.between(*marks)[objectstore.REQUESTS]

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
        if hasattr(self.log, "close"):
            self.log.close()


def refusal(backend: str, option, location: S3Location) -> tuple[str, object, str] | None:
    """Why a read option cannot read a store on ``location``, as (key, value, reason), or
    None: HDF5's ROS3 driver where this h5py lacks it; obstore's, tensorstore's and ROS3's
    requests are counted by the relay, which an https:// endpoint does not pass."""
    if backend == HDF5 and _ros3(option) and not h5py_has_ros3():
        import h5py

        return (
            "s3.reads",
            "{driver: ros3}",
            f"needs an h5py built with HDF5's ROS3 driver; this one (h5py {h5py.__version__}, HDF5 "
            f"{h5py.version.hdf5_version}) has none (h5py.get_config().ros3 is False): h5py built against an "
            "HDF5 with it (conda-forge's; Debian's libhdf5-dev, pip install --no-binary h5py) has it",
        )
    if counted_by_relay(backend, option) and not location.endpoint.startswith("http://"):
        if backend == HDF5:
            key, value = "s3.reads", "{driver: ros3}"
        else:
            key = "zarr.readers" if option.reader == "tensorstore" else "s3.zarr_stores"
            value = option.reader if option.reader == "tensorstore" else option.store
        return key, value, "is counted by the relay, on http:// endpoints only, so far"
    return None


class RemoteBackend(Backend):
    """A backend's stores on an object store: each written where the backend always writes it
    (``path``, the filesystem's staging directory, where it stays for its chunk index), then
    uploaded under its path relative to ``staging``; a write is timed to its last completed
    upload request. Each open for reads is a new client (a cold read: nothing cached, no
    connection kept), made by the first read inside its clock, every request counted.
    Nothing of it is in the page cache to drop."""

    def __init__(
        self, inner: Backend, location: S3Location, staging: str, read: FileRead | None = None, filesystem: str = ""
    ):
        self.inner, self.location, self.staging = inner, location, os.path.abspath(staging)
        self.read, self.filesystem = read or FileRead(), filesystem
        self.name, self.label = inner.name, f"{inner.label} on S3"
        self.call_overhead_column = None
        self.uploaded: set[str] = set()  # local paths of the stores it uploaded
        self.whole: set[str] = set()  # local paths of the stores whose marker was found

    def key(self, path: str) -> str:
        """The store's name under the location's prefix: its path below the staging directory."""
        return os.path.relpath(os.path.abspath(path), self.staging).replace(os.sep, "/")

    def _upload(self, path: str, marked: bool = True) -> None:
        """Upload the store at ``path``; ``marked``: then its marker (a timed write's upload
        sends none: that store is renamed, and so uploaded again, before any job reads it)."""
        self.uploaded.add(os.path.abspath(path))  # removed with the store, whole or not
        upload(objectstore.client(self.location), self.location, self.key(path), path, marked)

    def _housekeeping(self, work):
        return objectstore.housekeeping(self.location, self.filesystem, work)

    def rename(self, path: str, new_path: str) -> None:
        """Rename the local store, upload it under its new name (after the clock) and remove
        the old name's objects."""
        self.remove_remote(new_path)
        self.inner.rename(path, new_path)
        self._upload(new_path)
        self.remove_remote(path)
        self.uploaded.discard(os.path.abspath(path))

    def remove_orphans(self) -> int:
        """Remove from the server every store this backend uploaded whose local store was
        removed since (a write case's repeats, removed together after their rest); the count."""
        gone = [path for path in self.uploaded if not os.path.lexists(path)]
        for path in gone:
            self.remove_remote(path)
            self.uploaded.discard(path)
        return len(gone)

    @property
    def fill_times(self) -> tuple[str, ...]:
        return self.inner.fill_times

    @property
    def default_read_option(self):
        return self.inner.default_read_option

    def write(self, path, stored, layout, compression, dataset_name, strategy, fill_time, option, deadline=None):
        calls = self.inner.write(path, stored, layout, compression, dataset_name, strategy, fill_time, option, deadline)
        self._upload(path, marked=False)
        return calls

    def write_fast(self, path, data, layout, compression, dataset_name, threads) -> str:
        method = self.inner.write_fast(path, data, layout, compression, dataset_name, threads)
        self._upload(path)
        return f"{method}, uploaded"

    def open_for_reads(self, path, dataset_name, option, readahead=True) -> OpenedStore:
        read = self.read
        if isinstance(option, RemoteOption):
            option, read = option.inner, option.read
        # what fetches a file (fsspec or ROS3) decides where its requests are counted
        asked = RemoteOption(option, read) if self.name in FILE_OBJECT_BACKENDS and read is not None else option
        refused = refusal(self.name, asked, self.location)
        if refused is not None:
            raise ValueError(f"{refused[0]}: {refused[1]}: {refused[2]}")
        self.check_whole(path)
        log = request_log(self.name, asked, self.location, classifier(self.name, path, dataset_name))
        # a 404 for one of the store's own keys fails the read, naming the key and the reader
        relay = objectstore.relay(self.location)
        held = {self.location.key(self.key(path), key) for _, key in objects(path)}
        log.watch(relay and relay.log_path, held, f"{self.label} read with {asked.label}")
        kwargs = option.open_kwargs() if hasattr(option, "open_kwargs") else None
        reader = option if self.name == ZARR else None
        opener = remote_opener(self.name, self.location, self.key(path), dataset_name, log, read, kwargs, reader)
        return OpenedOnFirstRead(opener, log)

    def stored_chunks(self, path, layout, dataset_name):
        return self.inner.stored_chunks(path, layout, dataset_name)

    def footprint_bytes(self, path) -> int:
        return self.inner.footprint_bytes(path)

    def store_counts(self, path) -> dict:
        return self.inner.store_counts(path)

    def check_whole(self, path) -> None:
        """Refuse to read the store uploaded from ``path`` where its marker is missing (its
        upload stopped part way: some of its objects may be there, not all); once per store."""
        if os.path.abspath(path) in self.whole:
            return
        marker = marker_path(self.location, self.key(path))
        if not self._housekeeping(lambda fs: fs.exists(marker)):
            raise VerificationError(
                f"{self.location.url(self.key(path))} on {self.location.endpoint}: its upload did not finish (no "
                f"marker s3://{marker}), so it is not read: some of its objects may be missing. Run the sweep "
                "again: the job that writes it uploads it again."
            )
        self.whole.add(os.path.abspath(path))

    def remove_remote(self, path) -> None:
        """The store's objects and its marker removed from the server (its local store left as
        it is)."""
        remote = self.location.path(self.key(path))

        def remove(fs) -> None:
            found = [p for p in (marker_path(self.location, self.key(path)), remote) if fs.exists(p)]
            if found:
                fs.rm(found, recursive=True)

        self._housekeeping(remove)
        self.whole.discard(os.path.abspath(path))

    def remove(self, path) -> None:
        # the local store first: a server gone mid-job leaves no staging copy behind
        if os.path.lexists(path):
            self.inner.remove(path)
        self.remove_remote(path)
        self.uploaded.discard(os.path.abspath(path))

    def paths_to_evict(self, path) -> list[str]:
        return []

    def versions(self) -> dict:
        return self.inner.versions()


def on_target(backend: Backend, location: S3Location, staging: str, filesystem: str) -> Backend:
    """A loaded backend's stores on the object store at ``location`` (the target's hook,
    :func:`h5sweep.backends.on_target`)."""
    return RemoteBackend(backend, location, staging, filesystem=filesystem)


def read_options(backend: str, options: list, fs) -> list:
    """A backend's read options on the object store of filesystem ``fs`` (:func:`remote_options`)."""
    return remote_options(backend, options, fs.s3_reads, fs.s3_zarr_stores)


def read_refusal(backend: str, option, fs) -> tuple[str, object, str] | None:
    """Why a read option cannot read a store on the object store of filesystem ``fs``
    (:func:`refusal`)."""
    return refusal(backend, option, fs.s3)
