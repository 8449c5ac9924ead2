"""An S3-compatible object store as a place for test stores: where (endpoint, bucket, prefix),
a client made anew for each cold read, and every request that client sends, counted.

On an object store a read costs its requests times the first-byte latency far more than its
bytes, so a read's evidence is its requests: how many, how many bytes they asked for and
received, and which of them fetched metadata rather than the selection's data.
:class:`RequestLog` counts them at the client, from the S3 client's own events (each request
as it is sent, each response as it is parsed), whatever library reads through it (zarr-python
through fsspec, h5py through an fsspec file, ranged GETs of a raw file); :class:`RelayLog`
counts those of libraries that send their own (obstore, tensorstore) from the log of the relay
every request to an http:// endpoint passes (:mod:`h5sweep.storage.latency`).

Credentials come from where every S3 client finds them (``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE`` and the shared credentials file), never from the
config, and nothing here writes them anywhere. The client libraries are imported only when a
client is made."""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from urllib.parse import unquote, urlsplit

from h5sweep.storage.columns import (
    BOOLEAN,
    FLOAT,
    INTEGER,
    MEASUREMENTS,
    RECOMMENDATION,
    STRING,
    SUMMARY,
    column,
    group,
)
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError, FaultedReadError
from h5sweep.storage.latency import RESET, Faults
from h5sweep.storage.sizes import binary_size, parse_size

REQUESTS = column("requests", INTEGER, "")
DATA_REQUESTS = column("data_requests", INTEGER, "")
METADATA_REQUESTS = column("metadata_requests", INTEGER, "")
BYTES_REQUESTED = column("bytes_requested", INTEGER, "bytes")
BYTES_RECEIVED = column("bytes_received", INTEGER, "bytes")
OPEN_REQUESTS = column("open_requests", INTEGER, "")
LATENCY_MS = column("latency_ms", FLOAT, "ms")
group(
    MEASUREMENTS,
    (REQUESTS, DATA_REQUESTS, METADATA_REQUESTS, BYTES_REQUESTED, BYTES_RECEIVED),
    (
        "Reads of a store on an object store: the requests the read's client sent during the timed "
        "read (counted at the client, from the S3 client's own events; obstore's and tensorstore's, which "
        "send their own, by the relay on the loopback that every request passes), those that fetched bytes of the "
        "selection's chunks and those that fetched anything else (the library's metadata, a listing, a "
        "HEAD), the bytes their ranges asked for and the bytes of the responses. Empty for stores on a "
        "filesystem."
    ),
)
group(
    MEASUREMENTS,
    (LATENCY_MS,),
    (
        "Stores on an object store: the latency emulated on every request of the row's job (each held "
        "this long by a relay on the loopback before it went on to the server, `filesystems.<name>.s3."
        "latency_ms`); 0 where none was added. Empty for stores on a filesystem."
    ),
)
REQUESTS_RETRIED = column("requests_retried", INTEGER, "")
REQUESTS_FAILED = column("requests_failed", INTEGER, "")
FAULTS_MET = column("faults", INTEGER, "")
DISTURBED = column("disturbed", BOOLEAN, "")
FAULTS_EMULATED = column("faults_emulated", STRING, "")
FAULT_COUNTS = (REQUESTS_RETRIED, REQUESTS_FAILED, FAULTS_MET, DISTURBED)
group(
    MEASUREMENTS,
    FAULT_COUNTS,
    (
        "Reads of a store on an object store, from the log of the relay on the loopback that every request "
        "passes: the requests sent again after a failed answer to the same request (the same method, key and "
        "Range) in the same read, the answers that failed (a status of 429 or 500 and above, or a body cut "
        "short by a reset connection), the faults the relay injected in the read's answers "
        "(`filesystems.<name>.s3.faults`), and whether the read was disturbed: it met a fault, a failed "
        "answer or a retry, so its time is not the layout's alone. Empty for stores on a filesystem and on "
        "an https:// endpoint (no relay)."
    ),
)
READ_FAILED = column("read_failed", STRING, "")
group(
    MEASUREMENTS,
    (READ_FAILED,),
    (
        "Reads of a store on an object store with emulated faults: why the read failed where the relay "
        "injected a fault in its requests (a 404 for a key the store holds, a client that gave up "
        "retrying); the row has no time, and its store was read no further in that read option. Empty "
        "for a read that succeeded; a read that failed without an injected fault fails its job."
    ),
)
group(
    MEASUREMENTS,
    (FAULTS_EMULATED,),
    (
        "Stores on an object store: the faults the relay emulated on the row's job's requests "
        "(`filesystems.<name>.s3.faults`: the shares of 503 SlowDown, 404 for a held key, reset bodies and "
        "stalled bodies, a rate limit, and the seed), `none` where none. Empty for stores on a filesystem."
    ),
)
group(
    SUMMARY,
    (FAULTS_EMULATED,),
    "Stores on an object store: the faults emulated on the row's requests (`none`: none).",
)
REQUESTS_RETRIED_MEDIAN = column("requests_retried_median", FLOAT, "")
REQUESTS_FAILED_MEDIAN = column("requests_failed_median", FLOAT, "")
FAULTS_MEDIAN = column("faults_median", FLOAT, "")
REQUESTS_RETRIED_SUM = column("requests_retried_sum", INTEGER, "")
REQUESTS_FAILED_SUM = column("requests_failed_sum", INTEGER, "")
FAULTS_SUM = column("faults_sum", INTEGER, "")
DISTURBED_SHARE = column("disturbed_share", FLOAT, "fraction")
READS_FAILED = column("reads_failed", INTEGER, "")
FAULT_SUMMARY = (
    REQUESTS_RETRIED_MEDIAN,
    REQUESTS_FAILED_MEDIAN,
    FAULTS_MEDIAN,
    REQUESTS_RETRIED_SUM,
    REQUESTS_FAILED_SUM,
    FAULTS_SUM,
    DISTURBED_SHARE,
    READS_FAILED,
)
group(
    SUMMARY,
    FAULT_SUMMARY,
    (
        "Reads of a store on an object store through the relay: the medians and the sums over the row's "
        "reads of `requests_retried`, `requests_failed` and `faults`, the share of its reads that were "
        "`disturbed`, and how many of its reads failed on an emulated fault (`read_failed`; they count in "
        "the sums and the share, not in the times). Absent from a sweep without an object store."
    ),
)
# The counts a summary row gives the median of
REQUEST_COUNTS = (REQUESTS, DATA_REQUESTS, METADATA_REQUESTS, BYTES_REQUESTED, BYTES_RECEIVED)
REQUESTS_MEDIAN = column("requests_median", FLOAT, "")
DATA_REQUESTS_MEDIAN = column("data_requests_median", FLOAT, "")
METADATA_REQUESTS_MEDIAN = column("metadata_requests_median", FLOAT, "")
BYTES_REQUESTED_MEDIAN = column("bytes_requested_median", FLOAT, "bytes")
BYTES_RECEIVED_MEDIAN = column("bytes_received_median", FLOAT, "bytes")
REQUEST_MEDIANS = (
    REQUESTS_MEDIAN,
    DATA_REQUESTS_MEDIAN,
    METADATA_REQUESTS_MEDIAN,
    BYTES_REQUESTED_MEDIAN,
    BYTES_RECEIVED_MEDIAN,
)
group(
    SUMMARY,
    REQUEST_MEDIANS,
    (
        "Reads of a store on an object store: the medians of the read's `requests`, `data_requests`, "
        "`metadata_requests`, `bytes_requested` and `bytes_received` (counted, not timed). Empty for "
        "stores on a filesystem; absent from a sweep without an object store."
    ),
)
REQUESTS_PER_UNIT = column("requests_per_unit", FLOAT, "")
group(
    RECOMMENDATION,
    (REQUESTS_PER_UNIT,),
    (
        "Stores on an object store: the requests one unit of work of the mix sends (each case's mean "
        "`requests` per read times its reads per unit). Absent from a sweep without an object store."
    ),
)
READS_DISTURBED = column("reads_disturbed", INTEGER, "")
RETRIES_PER_READ = column("retries_per_read", FLOAT, "")
NOT_RANKED = column("not_ranked", STRING, "")
group(
    RECOMMENDATION,
    (READS_DISTURBED, RETRIES_PER_READ, READS_FAILED, FAULTS_EMULATED, NOT_RANKED),
    (
        "Stores on an object store through the relay: how many of the store's reads of the mix were "
        "`disturbed` (left out: the stores are compared on the selections every store read undisturbed), "
        "its mean `requests_retried` per read (all its reads of the mix), how many of its reads failed on "
        "an emulated fault, the faults emulated (`none`: none), and why the store is not ranked (its reads "
        "failed; too few selections read undisturbed by every store), empty where it is. Absent from a "
        "sweep without an object store."
    ),
)
FAULT_FREE_FILESYSTEM = column("fault_free_filesystem", STRING, "")
ADDED_S_PER_UNIT = column("added_s_per_unit", FLOAT, "s")
ADDED_S_PER_UNIT_CI_LOW = column("added_s_per_unit_ci_low", FLOAT, "s")
ADDED_S_PER_UNIT_CI_HIGH = column("added_s_per_unit_ci_high", FLOAT, "s")
ADDED_PAIRS = column("added_pairs", INTEGER, "")
FAULT_COST = (FAULT_FREE_FILESYSTEM, ADDED_S_PER_UNIT, ADDED_S_PER_UNIT_CI_LOW, ADDED_S_PER_UNIT_CI_HIGH, ADDED_PAIRS)
group(
    RECOMMENDATION,
    FAULT_COST,
    (
        "Stores on a filesystem with emulated faults (`filesystems.<name>.s3.faults`): the variant of the "
        "same filesystem without faults, and the time the faults add to one unit of work of the mix "
        "against the same store and read option there (every read of the store's that did not fail, "
        "disturbed ones too: each case's mean per-selection difference times its reads per unit), its "
        "95% interval (a paired bootstrap over the selections both read; empty where fewer than two "
        "pairs: a point estimate) and the selections paired. Absent where no variant has faults."
    ),
)
group(
    SUMMARY,
    (LATENCY_MS,),
    "Stores on an object store: the latency emulated on each of the row's requests (ms; 0: none added).",
)
group(
    MEASUREMENTS,
    (OPEN_REQUESTS,),
    (
        "Reads of a store on an object store: the requests its open sent (a new client's: the library's "
        "metadata, and with fsspec's readahead the first block of the file), on the first read after "
        "each open (as `open_s`); they are among that read's `requests`, and the open among its "
        "`seconds`: on an object store a store is opened by its first read, inside its clock. Empty for "
        "the other reads and for stores on a filesystem."
    ),
)

# S3's bucket names: 3 to 63 lowercase letters, digits, dots and hyphens, a letter or digit at
# each end

S3_DRIVER = column("s3_driver", STRING, "")
S3_BLOCK_SIZE = column("s3_block_size", INTEGER, "bytes")
S3_CACHE_TYPE = column("s3_cache_type", STRING, "")
PAGE_BUFFER_BYTES = column("page_buffer_bytes", INTEGER, "bytes")
FILE_READ_COLUMNS = (S3_DRIVER, S3_BLOCK_SIZE, S3_CACHE_TYPE, PAGE_BUFFER_BYTES)
group(
    MEASUREMENTS,
    FILE_READ_COLUMNS,
    (
        "Stores read as one file on an object store (`filesystems.<name>.s3.reads`): what fetches the "
        "file (`fsspec`: a file object; `ros3`: HDF5's read-only S3 driver), the file object's block size "
        "and cache type (fsspec's; ROS3: 0 and `none`, it fetches each of HDF5's reads as it is) and the "
        "library's page buffer for a paged file (0: none). Empty for the others."
    ),
)
group(
    SUMMARY,
    FILE_READ_COLUMNS,
    "Stores read as one file on an object store: the variant's driver, block size, cache type and page buffer.",
)
# Carried into the summary (each the same in all of a row's reads: part of its variant)
CARRIED = (*FILE_READ_COLUMNS, LATENCY_MS, FAULTS_EMULATED)

# fsspec's cache types of a file object (fsspec.caching.caches); without a cache, each of the
# library's reads is one request (as HDF5's ROS3 driver sends them)
NO_CACHE = "none"
CACHE_TYPES = (NO_CACHE, "readahead", "bytes", "mmap", "blockcache", "first", "all", "parts", "background", "adaptive")

# what fetches a store read as one file: an fsspec file object, or HDF5's read-only S3 driver
FSSPEC_FILE, ROS3 = "fsspec", "ros3"
DRIVERS = (FSSPEC_FILE, ROS3)

READS = Block(
    "reads",
    "How a store read as one file (through a file object) is fetched, each a read option of its own.",
    (
        Setting(
            "driver",
            "string",
            FSSPEC_FILE,
            "What fetches the file: fsspec (an s3fs file object, of block_size and cache_type) or ros3 "
            "(HDF5's read-only S3 driver: each of HDF5's reads one ranged GET, no cache; HDF5 only, "
            "where h5py was built with it, h5py.get_config().ros3; not with block_size or cache_type).",
            {"enum": list(DRIVERS)},
        ),
        Setting(
            "block_size",
            None,
            5 * 2**20,
            "The file object's block: the least a request asks for (bytes, or a size such as 1 MiB; "
            "s3fs's default 5 MiB).",
            {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]},
        ),
        Setting(
            "cache_type",
            "string",
            "readahead",
            "The file object's cache (fsspec's: readahead keeps the last block and reads ahead, "
            "blockcache keeps blocks, none asks for each read's bytes).",
            {"enum": list(CACHE_TYPES)},
        ),
        Setting(
            "page_buffer",
            None,
            0,
            "The library's page buffer for a file written with paged aggregation (layouts.pages), in "
            "bytes or a size, at least the largest page (it holds whole pages); 0 sets none. Files "
            "written without pages ignore it.",
            {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]},
        ),
    ),
    optional=False,
    many=True,
    at_least_one=True,
)


@dataclass(frozen=True)
class FileRead:
    """How a store read as one file is fetched from an object store: the file object's block
    size and cache type, and the library's page buffer (0: none)."""

    block_size: int = READS.setting("block_size").default
    cache_type: str = READS.setting("cache_type").default
    page_buffer: int = READS.setting("page_buffer").default
    driver: str = READS.setting("driver").default

    @property
    def label(self) -> str:
        # without a cache each of the library's reads is one request: the block size is unused
        if self.driver == ROS3:
            words = "ROS3"
        elif self.cache_type == NO_CACHE:
            words = "no fsspec cache"
        else:
            words = f"{binary_size(self.block_size)} {self.cache_type} blocks"
        return words + (f", page buffer {binary_size(self.page_buffer)}" if self.page_buffer else "")

    def columns(self) -> dict:
        return {
            S3_DRIVER: self.driver,
            S3_BLOCK_SIZE: self.block_size,
            S3_CACHE_TYPE: self.cache_type,
            PAGE_BUFFER_BYTES: self.page_buffer,
        }

    def settings(self) -> dict:
        return {
            "block_size": self.block_size,
            "cache_type": self.cache_type,
            "page_buffer": self.page_buffer,
            "driver": self.driver,
        }


def file_reads_from_config(entries: list, key: str, largest_page: int = 0) -> tuple[FileRead, ...]:
    """``filesystems.<name>.s3.reads``: each entry checked (a refusal names its key), in order,
    without repeats. A page buffer holds whole pages: one smaller than ``largest_page`` (the
    largest of ``layouts.pages``) would hold none of that file's pages."""
    found = []
    for i, entry in enumerate(entries):
        if entry.get("driver") == ROS3 and {"block_size", "cache_type"} & set(entry):
            raise ConfigError(
                f"{key}[{i}]",
                entry,
                "sets block_size or cache_type for the ros3 driver, which has neither (it fetches each of "
                "HDF5's reads as it is): leave them out",
            )
        if entry.get("driver", FSSPEC_FILE) not in DRIVERS:
            raise ConfigError(f"{key}[{i}].driver", entry["driver"], f"is not one of {', '.join(DRIVERS)}")
        if entry.get("driver") == ROS3:
            entry = {**entry, "block_size": 0, "cache_type": NO_CACHE}
        entry = READS.filled(entry)
        block = entry["block_size"] and parse_size(f"{key}[{i}].block_size", entry["block_size"])
        page = entry["page_buffer"]
        page = 0 if page == 0 else parse_size(f"{key}[{i}].page_buffer", page)
        if 0 < page < largest_page:
            raise ConfigError(
                f"{key}[{i}].page_buffer",
                entry["page_buffer"],
                f"holds no {binary_size(largest_page)} page of layouts.pages (a page buffer holds whole pages: "
                "make it at least one page, or 0 for none)",
            )
        if entry["cache_type"] not in CACHE_TYPES:
            raise ConfigError(f"{key}[{i}].cache_type", entry["cache_type"], f"is not one of {', '.join(CACHE_TYPES)}")
        found.append(FileRead(block, str(entry["cache_type"]), page, str(entry["driver"])))
    return tuple(dict.fromkeys(found))


# the stores zarr-python reads an object store's Zarr store through
FSSPEC, OBSTORE = "fsspec", "obstore"
ZARR_STORES = (FSSPEC, OBSTORE)


def zarr_stores_from_config(entries: list, key: str) -> tuple[str, ...]:
    """``filesystems.<name>.s3.zarr_stores``, checked, in order, without repeats."""
    for i, entry in enumerate(entries):
        if entry not in ZARR_STORES:
            raise ConfigError(f"{key}[{i}]", entry, f"is not one of {', '.join(ZARR_STORES)}")
    return tuple(dict.fromkeys(entries))


@dataclass(frozen=True)
class S3Location:
    """Where test stores go on an object store (``latency_ms``: the delay emulated on each
    request, ``faults``: the faults injected in the server's answers, both by the relay,
    :mod:`h5sweep.storage.latency`)."""

    endpoint: str
    bucket: str
    prefix: str
    latency_ms: float = 0.0
    faults: Faults = Faults()

    def __post_init__(self) -> None:
        if isinstance(self.faults, dict):  # as a job's settings carry it
            object.__setattr__(self, "faults", Faults(**self.faults))

    def key(self, *parts: str) -> str:
        """The object key of ``parts`` under the prefix."""
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p)

    def path(self, *parts: str) -> str:
        """``bucket/key``, as fsspec names an object."""
        return f"{self.bucket}/{self.key(*parts)}".rstrip("/")

    def url(self, *parts: str) -> str:
        return f"s3://{self.path(*parts)}"


FAULT_SHARES = ("slowdown", "not_found", "reset", "stall")


def faults_from_config(entries: list, key: str) -> tuple[Faults, ...]:
    """``filesystems.<name>.s3.faults``: each entry checked (a refusal names its key), in
    order; a repeat is refused (its filesystem would measure the same as another)."""
    found = []
    allowed = tuple(f.name for f in fields(Faults))
    whole = {f.name for f in fields(Faults) if type(f.default) is int}  # the seed
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(where, entry, "must be a mapping of faults, e.g. {slowdown: 0.05} ({} for none)")
        for name, value in entry.items():
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if name not in allowed:
                raise ConfigError(f"{where}.{name}", value, f"is not a fault setting: one of {', '.join(allowed)}")
            if name in FAULT_SHARES and not (number and 0 <= value <= 1):
                raise ConfigError(f"{where}.{name}", value, "must be a share of requests, from 0 to 1")
            if name in whole and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                raise ConfigError(f"{where}.{name}", value, "must be a whole number, 0 or more")
            if not (number and value >= 0):  # a time or a rate
                raise ConfigError(f"{where}.{name}", value, "must be a number, 0 or more")
        if bool(entry.get("stall")) != bool(entry.get("stall_s")):
            raise ConfigError(
                where, entry, "sets stall without stall_s or stall_s without stall: a stall is a share and a time"
            )
        faults = Faults(**{name: value for name, value in entry.items()})
        if faults in found:
            raise ConfigError(where, entry, f"repeats {key}[{found.index(faults)}]")
        found.append(faults)
    return tuple(found)


def credentials_missing() -> str | None:
    """None where an S3 client finds credentials in this environment, else what to set."""
    import botocore.session

    if botocore.session.Session().get_credentials() is None:
        return (
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE with a "
            "profile in ~/.aws/credentials) in the environment the sweep runs in"
        )
    return None


# What a request fetched: the selection's data, or what the library needs to find it
DATA, METADATA = "data", "metadata"


@dataclass
class Request:
    """One request as the client sent it: its method, object key, the bytes its Range asked
    for (None: the whole object, or none for a HEAD or a listing) and what it fetched."""

    method: str
    key: str
    start: int | None  # negative: the object's last -start bytes (a suffix range)
    stop: int | None  # exclusive; None: to the object's end
    kind: str

    @property
    def asked(self) -> int | None:
        if self.start is None:
            return None
        if self.stop is None:
            return -self.start if self.start < 0 else None
        return self.stop - self.start


def parse_range(header: str | bytes | None) -> tuple[int | None, int | None]:
    """``bytes=a-b`` as [a, b + 1), ``bytes=a-`` as [a, None), the suffix ``bytes=-n`` as
    (-n, None); None, None without a Range (or one not of these forms)."""
    if not header:
        return None, None
    if isinstance(header, bytes):
        header = header.decode("ascii", "replace")
    found = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not found or not (found[1] or found[2]):
        return None, None
    if not found[1]:
        return -int(found[2]), None
    return int(found[1]), (int(found[2]) + 1 if found[2] else None)


def _default_kind(method: str, key: str, start: int | None, stop: int | None) -> str:
    return DATA if method in ("GET", "PUT") and key and not key.endswith("/") else METADATA


@dataclass
class RequestLog:
    """Every request a client sends and every GET response it parses, counted as they happen.

    ``classify(method, key, start, stop) -> "data" | "metadata"`` says what a request
    fetched; the store's backend knows (a Zarr chunk key, a range inside an HDF5 chunk). A
    listing, a HEAD and any request without a key are metadata."""

    classify: Callable[[str, str, int | None, int | None], str] = _default_kind
    requests: list[Request] = field(default_factory=list)
    received: int = 0  # bytes of the GET responses' bodies
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # what the reads' answers are checked against (:meth:`watch`): the log of the relay every
    # request passes, the keys of the store's objects and the reader's name
    relay_path: str | None = None
    held: frozenset[str] = frozenset()
    reader: str = ""

    def watch(self, relay_path: str | None, held, reader: str) -> None:
        """Check the answers to the requests of a reader (named ``reader``) of a store whose
        objects are ``held`` (keys under the bucket), in the log at ``relay_path``
        (:meth:`not_found`)."""
        self.relay_path, self.held, self.reader = relay_path, frozenset(held), reader

    def attach(self, client) -> None:
        """Count the requests of a botocore (or aiobotocore) S3 client."""
        client.meta.events.register("before-send.s3", self._sent)
        client.meta.events.register("after-call.s3.GetObject", self._got)

    def _sent(self, request, **_) -> None:
        self._add(request.method, request.url, request.headers.get("Range"))

    def _add(self, method: str, url: str, range_header) -> Request:
        parts = urlsplit(url)
        path = unquote(parts.path).lstrip("/")
        key = path.split("/", 1)[1] if "/" in path else ""  # path-style: /bucket/key
        start, stop = parse_range(range_header)
        if method not in ("GET", "PUT") or parts.query and not key:
            kind = METADATA  # a HEAD, a listing, a bucket's location
        else:
            kind = self.classify(method, key, start, stop)
        request = Request(method, key, start, stop, kind)
        with self._lock:
            self.requests.append(request)
        return request

    def _got(self, http_response=None, parsed=None, **_) -> None:
        size = (parsed or {}).get("ContentLength")
        if size is not None and getattr(http_response, "status_code", 200) < 300:
            with self._lock:
                self.received += int(size)

    def mark(self) -> tuple[int, ...]:
        """Where the log stands now (cheap enough to take inside a clock): pass it to
        :meth:`since`, :meth:`between` or :meth:`not_found`."""
        relayed = (os.stat(self.relay_path).st_size,) if self.relay_path else ()
        with self._lock:
            return len(self.requests), self.received, *relayed

    def relay_offset(self, mark) -> int | None:
        """Where the relay's log stood at ``mark`` (None: no relay is watched)."""
        return mark[2] if self.relay_path and len(mark) > 2 else None

    def not_found(self, mark) -> list[str]:
        """The keys of the store's objects (``held``) that were answered 404 Not Found since
        ``mark``, in the relay's log (every reader's requests pass the relay, whatever counts
        them): a reader that takes a missing key for an empty chunk fills its place with the
        fill value and says nothing."""
        start = self.relay_offset(mark)
        if start is None or not self.held:
            return []
        with open(self.relay_path, "rb") as f:
            f.seek(start)
            lines = f.read().decode("latin-1").splitlines()
        found = []
        for line in lines:
            fields = line.split("\t")
            if len(fields) >= 4 and fields[3] == "404":
                path = unquote(urlsplit(fields[1]).path).lstrip("/")
                key = path.split("/", 1)[1] if "/" in path else ""
                if key in self.held and key not in found:
                    found.append(key)
        return found

    def not_found_said(self, mark) -> str:
        """What :meth:`not_found` found since ``mark``, in words ("" for nothing)."""
        keys = self.not_found(mark)
        if not keys:
            return ""
        more = f" (and {len(keys) - 1} more of its keys)" if len(keys) > 1 else ""
        return (
            f"{self.reader or 'the reader'} asked for {keys[0]}{more}: the store answered not found for a key it "
            "holds, so the read's values there are not the store's (a reader that takes a missing key for an "
            "empty chunk returns fill values in their place)"
        )

    def since(self, mark: tuple[int, int]) -> dict:
        """The counts of the requests sent after ``mark``: a read row's request columns."""
        return self.between(mark, self.mark())

    def between(self, first: tuple[int, ...], last: tuple[int, ...]) -> dict:
        """The counts of the requests sent between two marks (and, where the relay's log is
        watched, what went wrong with them: :func:`fault_counts`)."""
        with self._lock:
            new, received = self.requests[first[0] : last[0]], last[1] - first[1]
        data = [r for r in new if r.kind == DATA]
        counts = {
            REQUESTS: len(new),
            DATA_REQUESTS: len(data),
            METADATA_REQUESTS: len(new) - len(data),
            BYTES_REQUESTED: sum(r.asked or 0 for r in new if r.method == "GET"),
            BYTES_RECEIVED: received,
        }
        if self.relay_path and len(first) > 2 and len(last) > 2:
            counts.update(fault_counts(self.relay_lines(first[2], last[2])))
        return counts

    # the meter of a read (h5sweep.backends.base.OpenedStore.meter), as the read engine asks it

    def cache_state(self, counts: dict) -> str:
        """Where a read with these counts got its bytes (:func:`cache_state`)."""
        return cache_state(counts)

    def open_columns(self, requests: int | None) -> dict:
        """The columns of a first read's open: the requests it sent (None: not a first read)."""
        return {OPEN_REQUESTS: requests}

    def faulted(self, message: str, mark) -> FaultedReadError | None:
        """A read failed since ``mark`` as a :class:`h5sweep.storage.errors.FaultedReadError` where the
        relay injected a fault in its requests and every failed answer it met could be an
        injected one (an emulated fault's failure; a server that answers 5xx itself, or has
        gone, is not); else None."""
        counts = self.since(mark)
        met = counts.get(FAULTS_MET) or 0
        if not met or (counts.get(REQUESTS_FAILED) or 0) > met:
            return None
        state = cache_state(counts) if REQUESTS in counts else "cold"
        return FaultedReadError(message, counts, state, {READ_FAILED: message})

    def disturbed(self, counts: dict) -> bool:
        """Whether a read with these counts met a failed answer or a fault."""
        return bool(counts.get(DISTURBED))

    def relay_lines(self, start: int, stop: int) -> list[list[str]]:
        """The fields of the relay log's lines between two of its offsets."""
        with open(self.relay_path, "rb") as f:
            f.seek(start)
            text = f.read(max(0, stop - start)).decode("latin-1")
        return [line.split("\t") for line in text.splitlines()]


class RelayLog(RequestLog):
    """The requests a relay (:mod:`h5sweep.storage.latency`) passed on, read from its log: for
    a library that sends its own requests, without an S3 client whose events can be counted
    (obstore, tensorstore). A mark is where the log file ends (one ``fstat``); the lines after
    it are read when the counts are asked for. Every request through the relay is counted, so
    one reader at a time may use it (the sweep reads one store at a time)."""

    def __init__(self, path: str, classify: Callable[[str, str, int | None, int | None], str] = _default_kind):
        super().__init__(classify)
        self.path, self._fd = path, os.open(path, os.O_RDONLY)
        self.relay_path = path
        self._start = self.mark()  # the lines before it are other readers'
        self._ends: list[int] = []  # where each line read ends in the file
        self._received: list[int] = []  # the bytes received through each line read

    def mark(self) -> int:
        return os.fstat(self._fd).st_size

    def relay_offset(self, mark) -> int:
        return mark

    def _at(self, offset: int) -> tuple[int, int]:
        """The log read up to ``offset``; (requests, bytes received) there, as RequestLog's mark."""
        read = self._ends[-1] if self._ends else self._start
        if offset > read:
            for line in os.pread(self._fd, offset - read, read).splitlines(keepends=True):
                read += len(line)
                method, target, asked, status, length = line.decode("latin-1").rstrip("\n").split("\t")[:5]
                request = self._add(method, target, asked or None)
                if method == "GET" and request.key and length and 200 <= int(status) < 300:
                    self.received += int(length)
                self._ends.append(read)
                self._received.append(self.received)
        n = bisect.bisect_right(self._ends, offset)
        return n, self._received[n - 1] if n else 0

    def between(self, first: int, last: int) -> dict:
        last_mark = self._at(last)
        counts = super().between(self._at(first), last_mark)
        return {**counts, **fault_counts(self.relay_lines(first, last))}

    def close(self) -> None:
        os.close(self._fd)


def fault_counts(lines: list[list[str]]) -> dict:
    """What went wrong with the requests of the relay log's ``lines`` (one read's): the
    requests sent again after a failed answer to the same one (method and target, and a Range
    inside the failed one's: a client may ask again for only the rest of a body cut short),
    the failed answers (429, 500 and above, a body cut short by a reset), the faults the relay
    injected, and whether any of these happened (the read is disturbed)."""
    failed_before: list[tuple[str, str, str]] = []
    retried = failed = met = 0
    for line in lines:
        method, target, asked = (line + ["", "", ""])[:3]
        status, fault = (line[3] if len(line) > 3 else ""), (line[5] if len(line) > 5 else "")
        retried += any(m == method and t == target and _inside(asked, a) for m, t, a in failed_before)
        if fault == RESET or status.isdigit() and (int(status) == 429 or int(status) >= 500):
            failed += 1
            failed_before.append((method, target, asked))
        met += bool(fault)
    return {
        REQUESTS_RETRIED: retried,
        REQUESTS_FAILED: failed,
        FAULTS_MET: met,
        DISTURBED: bool(retried or failed or met),
    }


def _inside(asked: str, outer: str) -> bool:
    """Whether the Range ``asked`` lies inside the Range ``outer`` ("": the whole object)."""
    if asked == outer or not outer:
        return True
    (start, stop), (first, last) = parse_range(asked), parse_range(outer)
    if None in (start, first) or start < 0 or first < 0:  # a suffix range, or none: only the same
        return False
    return start >= first and (last is None or stop is not None and stop <= last)


def cache_state(counts: dict) -> str:
    """Where a read of a remote store got its bytes: ``cold`` (some from the server, the
    store's storage as the reader sees it), ``warm`` (none: all from the client's caches,
    fsspec's blocks or the library's)."""
    return "cold" if counts[REQUESTS] else "warm"


def client(
    location: S3Location, log: RequestLog | None = None, asynchronous: bool = False, endpoint: str = "", **options
):
    """A new fsspec S3 filesystem on ``location``'s server, sharing no cache or connection with
    any made before (a cold client), its requests counted in ``log``; it connects to
    ``endpoint`` where given (a byte source's, :func:`h5sweep.backends.remote.relayed`), else
    through the location's relay. ``options``: s3fs's own (``default_block_size``,
    ``default_cache_type``, ...)."""
    import s3fs

    fs = s3fs.S3FileSystem(
        endpoint_url=endpoint or relay_endpoint(location),
        skip_instance_cache=True,
        use_listings_cache=False,
        asynchronous=asynchronous,
        session=_session(),
        config_kwargs={"s3": {"addressing_style": "path"}, **ATTEMPT_LIMITS},
        **options,
    )
    if log is not None and not asynchronous:
        log.attach(_connected(fs))
    return fs


# what an S3 client's credentials and region come from in the environment
_CREDENTIAL_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)
_SESSIONS: dict[tuple, object] = {}


def _session():
    """The botocore session (aiobotocore's) this process makes its S3 clients from, one per
    set of credentials in the environment. It holds the S3 API's description, parsed once (a
    new session parses it again for each client: about 0.1 s of CPU a client, which a program
    pays once), and the credentials found; no data and no connection: each client still opens
    its own connections and keeps its own caches."""
    from aiobotocore.session import AioSession

    key = tuple(os.environ.get(name) for name in _CREDENTIAL_ENV)
    if key not in _SESSIONS:
        _SESSIONS[key] = AioSession()
    return _SESSIONS[key]


# every request of a client h5sweep makes waits at most this long for the server to accept
# its connection, and for the next bytes of the answer; then the attempt fails (and the
# client's own policy retries it or gives up)
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 20.0
ATTEMPT_LIMITS = {"connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": READ_TIMEOUT_S}


_RELAYS: dict[tuple, object] = {}  # this process's relays, by (endpoint, delay, faults)


def relay(location: S3Location):
    """The relay every client of ``location`` connects through (an http:// endpoint's; started
    once per process, delay and faults, stopped when the process ends): it holds each request
    for the emulated latency (none at 0 ms), injects the location's faults and logs it. None
    for an https:// endpoint, reached directly."""
    if not location.endpoint.startswith("http://"):
        return None
    key = (location.endpoint, location.latency_ms, location.faults)
    if key not in _RELAYS:
        import atexit

        from h5sweep.storage.latency import Relay

        found = _RELAYS[key] = Relay(location.endpoint, location.latency_ms, location.faults)
        atexit.register(found.__exit__)
    return _RELAYS[key]


def relay_endpoint(location: S3Location) -> str:
    """Where a client of ``location`` connects: its relay, or the server itself (https://)."""
    found = relay(location)
    return location.endpoint if found is None else found.endpoint


def relay_log(location: S3Location, classify=_default_kind) -> RelayLog:
    """A count of the requests the relay of ``location`` passes on from now (for a library
    without an S3 client of botocore's: obstore, tensorstore)."""
    found = relay(location)
    if found is None:
        raise ValueError(f"requests to {location.endpoint} pass no relay to count them (http:// endpoints only)")
    return RelayLog(found.log_path, classify)


def _connected(fs):
    """The botocore client of a synchronous s3fs filesystem (made on first use)."""
    fs.connect()
    return fs.s3


async def attach_async(fs, log: RequestLog) -> None:
    """Count the requests of an asynchronous s3fs filesystem (its client made here)."""
    await fs.set_session()
    log.attach(fs.s3)


async def close_async(fs) -> None:
    """Close an asynchronous s3fs filesystem's client (its connections) on the loop it runs on:
    left to the garbage collector, it is closed from no loop, with warnings."""
    creator = getattr(fs, "_s3creator", None)
    if creator is not None:
        await creator.__aexit__(None, None, None)
        fs._s3creator = fs._s3 = None


# how long the check before any job runs waits for a server to accept a connection and answer
ENDPOINT_TIMEOUT_S = 2.0


@functools.cache
def endpoint_silent(endpoint: str, timeout: float = ENDPOINT_TIMEOUT_S) -> str | None:
    """None where an HTTP server at ``endpoint`` answers a request (any status: the question
    is only whether one answers) within ``timeout`` seconds, else why not. One connection and
    one request, never retried: an S3 client would retry a refused or closed connection for
    most of a minute before it gave up. The answer is kept for the process (the filesystems of
    several latencies share an endpoint, and are checked once)."""
    import http.client
    import ssl

    parts = urlsplit(endpoint)
    try:
        if parts.scheme == "https":
            # whether the certificate is trusted is for the S3 client to say: this asks only
            # whether a server answers
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=context)
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            connection.request("HEAD", "/")
            connection.getresponse()
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as err:
        said = str(err) or type(err).__name__
        return f"no S3 server answers at {endpoint} (one connection, {timeout:g} s to answer): {said}"
    return None


def unreachable(location: S3Location) -> str | None:
    """None where this environment's credentials can list ``location``'s bucket on its
    server, else why not (before any job runs)."""
    from botocore.exceptions import BotoCoreError

    silent = endpoint_silent(location.endpoint)
    if silent:
        return silent
    missing = credentials_missing()
    if missing:
        return missing
    try:
        client(S3Location(location.endpoint, location.bucket, location.prefix)).ls(location.bucket, refresh=True)
    except FileNotFoundError:
        return f"bucket {location.bucket} does not exist on {location.endpoint}"
    except PermissionError as err:
        return f"the credentials in the environment may not list bucket {location.bucket}: {err}"
    except (OSError, BotoCoreError) as err:  # a refused connection is botocore's own error
        return f"no S3 server answers at {location.endpoint}: {err}"
    return None


# A server that goes away during a job: the job fails within its reader's own retries and
# GONE_BOUND_S more, naming the filesystem, the endpoint and the request (docs/method.md)
GONE_BOUND_S = 30
# h5sweep's own requests (removing a store, its upload's marker): sent to the server directly
# (no emulated latency or faults: they are not measured), each at most HOUSEKEEPING_ATTEMPTS
# attempts of HOUSEKEEPING_TIMEOUT_S to connect and to answer, one s3fs round; where they fail
# on a silent server, the next are not sent (:func:`housekeeping`)
HOUSEKEEPING_ATTEMPTS = 3
HOUSEKEEPING_TIMEOUT_S = 7.0
_GONE: dict[str, str] = {}  # endpoint: why its server is taken as gone in this process


class ServerGoneError(RuntimeError):
    """The S3 server of a job's filesystem stopped answering while the job worked there."""


def housekeeping_client(location: S3Location):
    """An s3fs filesystem on ``location``'s server itself (not its relay) for h5sweep's own
    requests: few attempts, short limits (:data:`HOUSEKEEPING_ATTEMPTS`)."""
    import s3fs

    limits = {"connect_timeout": HOUSEKEEPING_TIMEOUT_S, "read_timeout": HOUSEKEEPING_TIMEOUT_S}
    retries = {"max_attempts": HOUSEKEEPING_ATTEMPTS, "mode": "standard"}
    fs = s3fs.S3FileSystem(
        endpoint_url=location.endpoint,
        skip_instance_cache=True,
        use_listings_cache=False,
        session=_session(),
        config_kwargs={"s3": {"addressing_style": "path"}, "retries": retries, **limits},
    )
    fs.retries = 1  # s3fs's own round: one (botocore's attempts above are the retries)
    return fs


def housekeeping(location: S3Location, filesystem: str, work: Callable):
    """``work(fs)`` on a :func:`housekeeping_client`; where it fails and the server is silent,
    a :class:`ServerGoneError`, and every later call on the same endpoint fails so after one
    HEAD of :data:`ENDPOINT_TIMEOUT_S` (a failed job's clean-up sends no more requests to a
    server that is gone)."""
    if location.endpoint in _GONE:
        if endpoint_silent.__wrapped__(location.endpoint):
            raise ServerGoneError(_GONE[location.endpoint])
        del _GONE[location.endpoint]  # it answers again
    try:
        return work(housekeeping_client(location))
    except (FileNotFoundError, PermissionError):
        raise
    except Exception as err:
        said = gone(location, filesystem, err)
        if said is None:
            raise
        raise ServerGoneError(said) from err


def unanswered(location: S3Location) -> tuple[tuple[str, str, str], int] | None:
    """The first request to ``location``'s server that its relays logged without an answer
    (method, target, Range) and how many times it was sent without one; None where none was
    (or no relay passes its requests)."""
    first, count = None, 0
    for (endpoint, *_), found in list(_RELAYS.items()):
        if endpoint != location.endpoint:
            continue
        with open(found.log_path, "rb") as f:
            lines = f.read().decode("latin-1").splitlines()
        for line in lines:
            fields = line.split("\t")
            if len(fields) < 4 or fields[3] != "0":
                continue
            request = tuple(fields[:3])
            first = first or request
            count += request == first
    return None if first is None else (first, count)


def gone(location: S3Location, filesystem: str, err: BaseException | None = None) -> str | None:
    """Where ``location``'s server no longer answers (one HEAD, :data:`ENDPOINT_TIMEOUT_S`),
    what to tell the user: the filesystem, the endpoint, the first request left without an
    answer (from the relay's log; else the client's error), and what to do. None where it
    answers."""
    silent = endpoint_silent.__wrapped__(location.endpoint)
    if silent is None:
        return None
    if location.endpoint in _GONE:
        return _GONE[location.endpoint]
    found = unanswered(location)
    if found is not None:
        (method, target, asked), count = found
        what = f"{method} {target}{f' ({asked})' if asked else ''} had no answer ({count} attempts)"
    else:
        what = f"the last request failed: {str(err)[:300] if err is not None else 'no answer'}"
    said = (
        f"filesystems.{filesystem}: the S3 server at {location.endpoint} stopped answering while this job "
        f"worked there: {what}; {silent}. Start the server again and run the same command: finished jobs "
        "are kept, this one is done again."
    )
    _GONE[location.endpoint] = said
    return said


@contextlib.contextmanager
def named_if_gone(location: S3Location | None, filesystem: str):
    """A job's work on ``location`` (None: not an object store): an error met where the
    server no longer answers becomes a :class:`ServerGoneError` that says so (:func:`gone`)."""
    if location is None:
        yield
        return
    try:
        yield
    except ServerGoneError:
        raise
    except Exception as err:
        said = gone(location, filesystem, err)
        if said is None:
            raise
        raise ServerGoneError(said) from err
