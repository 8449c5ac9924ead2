"""Test stores on an S3-compatible object store (:mod:`h5sweep.storage.targets.s3`): each
backend's store, staged and uploaded by the target (:class:`RemoteBackend`, a
:class:`h5sweep.backends.staged.StagedBackend`), then opened for timed reads through a client
of its own, every request counted.

The store's objects are handed to its backend as an :class:`S3Source` (a file-object
factory, an asynchronous filesystem, a key-value store, a URL with a driver's keys), wrapped
by the relay that emulates its location's latency and faults (:func:`relayed`: its clients
connect there), and the backend opens its own format on it
(:meth:`h5sweep.backends.base.Backend.open_remote`).
Before a store is read, its backend says which bytes of it are data and which metadata
(:meth:`h5sweep.backends.base.Backend.byte_kinds`): a request that fetches bytes of a chunk
is a data request, any other a metadata request. fsspec's requests are counted from the S3
client's events; obstore's, tensorstore's and ROS3's, which send their own, by the relay every
request passes (:func:`h5sweep.storage.objectstore.relay_log`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from h5sweep import backends
from h5sweep.backends import file_reads
from h5sweep.backends.base import Backend, OpenedStore
from h5sweep.backends.file_reads import RemoteOption
from h5sweep.backends.staged import StagedBackend
from h5sweep.storage import objectstore
from h5sweep.storage.objectstore import FileRead, RequestLog, S3Location
from h5sweep.storage.targets.s3 import TARGET as S3
from h5sweep.storage.targets.s3 import objects


def remote_options(backend: str, options: list, fs) -> list:
    """A backend's read options on the object store of filesystem ``fs``: as its spec's
    ``remote`` says (a store read through a file object: each option in each of the
    filesystem's reads; Zarr's through each of its stores)."""
    return backends.spec(backend).remote.options(options, fs)


def counted_by_relay(backend: str, option) -> bool:
    """Whether a read option's requests are counted by the relay: its reader sends its own,
    without an S3 client whose events can be counted (the backend's spec says which)."""
    return option is not None and backends.spec(backend).remote.own_requests(option) is not None


def request_log(backend: str, option, location: S3Location, classify) -> RequestLog:
    """Where a read option's requests on ``location`` are counted: the relay's log for
    obstore, tensorstore and ROS3, the S3 client's events for the others (and what went wrong
    with them, in the relay's log for every one)."""
    if option is not None and counted_by_relay(backend, option):
        return objectstore.relay_log(location, classify)
    log, relay = RequestLog(classify), objectstore.relay(location)
    log.relay_path = relay and relay.log_path  # what went wrong is counted by the relay for all
    return log


@dataclass
class S3Source:
    """The byte source a backend opens a store on an object store through: the store's
    objects uploaded as ``name`` on ``location``, every request counted in ``log``, a file
    read as ``read`` says. Each accessor hands a new client (cold: no cache or connection
    shared with any other); the backend opens its own format on it
    (:meth:`h5sweep.backends.base.Backend.open_remote`)."""

    location: S3Location
    name: str
    log: RequestLog
    read: FileRead = FileRead()
    read_timeout_s: float = objectstore.READ_TIMEOUT_S  # an attempt that receives nothing this long fails
    endpoint: str = ""  # where its clients connect ("": the location's server; :func:`relayed`)

    @property
    def connects_to(self) -> str:
        return self.endpoint or self.location.endpoint

    @property
    def path(self) -> str:
        """The store as fsspec names it (``bucket/key``)."""
        return self.location.path(self.name)

    def filesystem(self):
        """A new fsspec S3 filesystem, its requests counted in the log (a file object
        factory: ``open(path, "rb", block_size=..., cache_type=...)``, ranged ``cat``)."""
        return objectstore.client(self.location, self.log, endpoint=self.connects_to)

    def async_filesystem(self, loop, run):
        """A new asynchronous fsspec S3 filesystem on ``loop`` (``run``: how a coroutine is run
        there), its requests counted in the log; and the call that closes it there."""
        fs = objectstore.client(self.location, asynchronous=True, loop=loop, endpoint=self.connects_to)
        run(objectstore.attach_async(fs, self.log))
        return fs, lambda: run(objectstore.close_async(fs))

    def url(self) -> str:
        """The store's URL where its clients connect (path-style), for a driver that sends its
        own requests (HDF5's ROS3)."""
        return f"{self.connects_to}/{self.location.bucket}/{self.location.key(self.name)}"

    def driver_keys(self) -> dict:
        """The region and keys (bytes) a driver that sends its own requests signs them with,
        from the environment or the profile, as an S3 client finds them; a session token is
        not passed (HDF5 1.10's ROS3 takes none)."""
        import botocore.session

        found = botocore.session.Session().get_credentials()
        if found is None:
            return {}
        return {
            "aws_region": _region().encode(),
            "secret_id": found.access_key.encode(),
            "secret_key": found.secret_key.encode(),
        }

    def key_value_store(self):
        """A new obstore S3 store of the store's objects (a key-value getter; its credentials
        from the environment), connecting where the source's clients do."""
        from obstore.store import S3Store

        endpoint = self.connects_to
        return S3Store(
            self.location.bucket,
            prefix=self.location.key(self.name),
            endpoint=endpoint,
            region=_region(),
            virtual_hosted_style_request=False,
            # its own limits: 5 s to connect, 30 s a request
            client_options={"allow_http": endpoint.startswith("http://")},
        )

    def key_value_spec(self) -> dict:
        """The store's objects as tensorstore's S3 key-value store names them, connecting where
        the source's clients do."""
        return {
            "driver": "s3",
            "bucket": self.location.bucket,
            "path": self.location.key(self.name) + "/",
            "endpoint": self.connects_to,
            "aws_region": _region(),
        }


def relayed(source: S3Source) -> S3Source:
    """``source`` with its clients connecting through the relay that emulates its location's
    latency and faults and logs each request (:func:`h5sweep.storage.objectstore.relay`), as
    zarr's latency store wraps a store: the same objects, another endpoint (an https://
    location passes no relay: its own server)."""
    return dataclasses.replace(source, endpoint=objectstore.relay_endpoint(source.location))


def _region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def classifier(backend: str, local_path: str, dataset_name: str) -> Callable[[str, str, int | None, int | None], str]:
    """What a request for the store uploaded from ``local_path`` fetches: the backend's
    :meth:`h5sweep.backends.base.Backend.byte_kinds`."""
    return backends.load(backend).byte_kinds(local_path, dataset_name)


class _OpenKwargs:
    """A read option that is only h5py.File's arguments (a caller that names them alone)."""

    def __init__(self, kwargs: dict | None):
        self.kwargs = kwargs

    def open_kwargs(self) -> dict | None:
        return self.kwargs


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
    ``log``). ``open_kwargs``: h5py.File's (HDF5's chunk cache); ``reader``: a read option of
    the backend's own (a Zarr reader). The backend opens its format on the source
    (:meth:`h5sweep.backends.base.Backend.open_remote`)."""
    source = relayed(S3Source(location, name, log, read or FileRead()))
    option = reader if reader is not None else _OpenKwargs(open_kwargs) if open_kwargs is not None else None
    opener = backends.load(backend).open_remote(source, dataset_name, option)

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
    None: the backend's own refusal (a driver this process lacks); a reader that sends its own
    requests is counted by the relay, which an https:// endpoint does not pass."""
    reads = backends.spec(backend).remote
    refused = reads.refusal(option)
    if refused is not None:
        return refused
    own = reads.own_requests(option)
    if own is not None and not location.endpoint.startswith("http://"):
        return *own, "is counted by the relay, on http:// endpoints only, so far"
    return None


class RemoteBackend(StagedBackend):
    """A backend's stores on an object store: staged and uploaded by the S3 target
    (:class:`h5sweep.backends.staged.StagedBackend`); each open for reads is a new client (a
    cold read: nothing cached, no connection kept), made by the first read inside its clock,
    every request counted."""

    def __init__(
        self, inner: Backend, location: S3Location, staging: str, read: FileRead | None = None, filesystem: str = ""
    ):
        super().__init__(inner, S3, location, staging, filesystem)
        self.location, self.read = location, read or FileRead()
        self.label = f"{inner.label} on S3"

    def open_for_reads(self, path, dataset_name, option, readahead=True) -> OpenedStore:
        read = self.read
        if isinstance(option, RemoteOption):
            option, read = option.inner, option.read
        # what fetches a file (fsspec or ROS3) decides where its requests are counted
        asked = backends.spec(self.name).remote.with_read(option, read)
        refused = refusal(self.name, asked, self.location)
        if refused is not None:
            raise ValueError(f"{refused[0]}: {refused[1]}: {refused[2]}")
        self.check_whole(path)
        log = request_log(self.name, asked, self.location, self.inner.byte_kinds(path, dataset_name))
        # a 404 for one of the store's own keys fails the read, naming the key and the reader
        relay = objectstore.relay(self.location)
        held = {self.location.key(self.key(path), key) for _, key in objects(path)}
        log.watch(relay and relay.log_path, held, f"{self.label} read with {asked.label}")
        source = relayed(S3Source(self.location, self.key(path), log, read))
        opener = self.inner.open_remote(source, dataset_name, option)
        return OpenedOnFirstRead(opener, log)


def on_target(backend: Backend, location: S3Location, staging: str, filesystem: str) -> Backend:
    """A loaded backend's stores on the object store at ``location`` (the target's hook,
    :func:`h5sweep.backends.on_target`)."""
    return RemoteBackend(backend, location, staging, filesystem=filesystem)


def option_from_settings(entry: dict, decode) -> object:
    """A read option from a job's settings, with how its file is fetched where they carry it
    (the target's hook, :func:`h5sweep.backends.option_on_target`)."""
    return file_reads.option_from_settings(entry, decode)


def read_options(backend: str, options: list, fs) -> list:
    """A backend's read options on the object store of filesystem ``fs`` (:func:`remote_options`)."""
    return remote_options(backend, options, fs)


def read_refusal(backend: str, option, fs) -> tuple[str, object, str] | None:
    """Why a read option cannot read a store on the object store of filesystem ``fs``
    (:func:`refusal`)."""
    return refusal(backend, option, fs.s3)
