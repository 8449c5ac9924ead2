"""An S3-compatible object store (``filesystems.<name>.s3``): each store written in the
filesystem's directory (its staging), uploaded one object per file, and read by a new client
through the relay that emulates latency and faults (:mod:`h5sweep.storage.objectstore`,
:mod:`h5sweep.storage.latency`); a read's meter is its requests, bytes and faults
(:class:`h5sweep.storage.objectstore.RequestLog`, columns ``requests`` ... ``faults``). The
backends open a store on it in :mod:`h5sweep.backends.remote`."""

from __future__ import annotations

import math
import os
import re
from dataclasses import asdict
from urllib.parse import urlsplit

from h5sweep.storage import columns as C
from h5sweep.storage import objectstore
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.targets import StorageTarget

MB = 1_000_000

# A read besides its requests: reopening the store before each read (a client, the store's
# metadata; inside the read's window) and, outside the window, checking its values, whose own
# requests wait for the latency again (bench/README.md, The plan: 68-76 ms a read inside the
# windows at 0 and 20 ms, 34 ms and 137 ms outside)
REMOTE_REOPEN_S = 0.07
REMOTE_CHECK_S = 0.034
REMOTE_CHECK_REQUESTS = 5
# A request's own time on a local server (besides its emulated latency), the requests of an
# open (HEAD, the metadata's first ranges), how many requests a reader keeps in flight at once
# (zarr-python's default concurrency; s3fs's ranged GETs alike), and the bytes a response
# brings per second through the relay (bench/README.md, Object storage: a slice of the paged
# 4x4x256 file, 1.8 GB in 355 requests, 12.3 s at 20 ms)
SECONDS_PER_REQUEST = 0.002
OPEN_REQUESTS = 3
REQUESTS_IN_FLIGHT = 10
S3_BYTES_PER_S = 400 * MB
# fsspec's file caches that keep the blocks they fetched (a block serves every piece inside
# it); the others keep one span at most, which HDF5's index lookups between its chunk reads
# move away, so every piece is a request of a block of its own
KEEPS_BLOCKS = ("blockcache", "all", "mmap", "parts", "background")
# The others keep one span: the pieces inside it are served from it but for about one in ten,
# read after HDF5's chunk index moved the span away (bench/README.md, Object storage: 21 GETs
# for the 169 chunks of a slice of 4x4x256 chunks through s3fs's 5 MiB readahead, 7 for 16)
SPAN_MISSES = 0.1
# A store of a file per chunk (Zarr) writes its objects in its timed write, about one at a
# time: each object's own time on a local server besides its latency (6.5 ms: 1,352 objects
# of 4x4x256 chunks in 8.7 s at 0 ms and 38 s at 20 ms, bench/README.md)
SECONDS_PER_WRITTEN_OBJECT = 0.0065


# the ``filesystems.<name>.s3`` block, declared once (the schema's block comes from here)
SETTINGS = Block(
    "s3",
    "An S3-compatible object store instead of a directory: the test stores are objects under "
    "s3://<bucket>/<prefix>/ on the server at endpoint. Credentials come from the environment "
    "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), never from the config.",
    (
        Setting("endpoint", "string", "", "The server's URL, http:// or https:// (e.g. http://127.0.0.1:8333)."),
        Setting("bucket", "string", "", "The bucket (it must exist and be writable)."),
        Setting("prefix", "string", "", "The keys' prefix inside the bucket (no leading or trailing /)."),
        Setting(
            "latency_ms",
            "array",
            [0],
            "Emulated first-byte latency: each request held this many milliseconds on its way to the "
            "server (by the relay on the loopback every request to an http:// endpoint passes, at 0 ms "
            "too; http endpoints only), each value a filesystem of its own "
            "named <name>_<ms>ms, its stores under <prefix>/<ms>ms (e.g. [0, 20, 50]; one value keeps "
            "the name and the prefix). Rows say it (latency_ms).",
            {"items": {"type": "number", "minimum": 0}, "minItems": 1},
        ),
        Setting(
            "faults",
            "array",
            [{}],
            "Emulated faults, injected by the same relay (http endpoints only), each entry a variant "
            "of its own as latency_ms values are (with several, a filesystem each, named <name>_f<i> by its "
            "place in the list, its stores under <prefix>/f<i>): slowdown, the share of requests answered "
            "503 SlowDown; not_found, the share of GETs of objects the server holds answered 404 (a read "
            "that meets one fails its value check, naming the key); reset, the share of such GETs whose "
            "connection is reset after half of the body; stall, the share of such GETs whose body is held "
            "back stall_s seconds after the header; rate, requests per second above which a request is "
            "answered 503 SlowDown (0: none); seed, what they are drawn from (0). Shares from 0 to 1; {} "
            "for none (e.g. [{}, {slowdown: 0.05}]). Rows say them (faults_emulated) and count what each "
            "read met (requests_retried, requests_failed, faults, disturbed).",
            {"items": {"type": "object"}, "minItems": 1},
        ),
        Setting(
            "zarr_stores",
            "array",
            ["fsspec"],
            "The stores zarr-python reads a Zarr store through, each a read option of its own (column "
            "zarr_store): fsspec (s3fs, its requests counted by the S3 client's events) or obstore (its "
            "requests counted by the relay, on http:// endpoints only). tensorstore reads through its own "
            "s3 key-value store, also counted by the relay.",
            {"items": {"enum": list(objectstore.ZARR_STORES)}, "minItems": 1},
        ),
        Setting(
            "reads",
            "array",
            [objectstore.READS.defaults()],
            objectstore.READS.description
            + " Stores read through a file object only (a backend that fetches whole objects or ranges of "
            "its own ignores them); every such store is read in each. The recommendation names the one "
            "it chose.",
            {"items": objectstore.READS.object_schema(), "minItems": 1},
        ),
    ),
    optional=False,
    required=("endpoint", "bucket"),
)


def variants_from_config(entry: dict, key: str) -> list[tuple[str, objectstore.S3Location]]:
    """``filesystems.<name>.s3``: checked, each refusal naming its key; one location per
    emulated latency and faults, each with the suffix of its filesystem's name (``20ms``,
    ``f1``, ``20ms_f1``; "" for the only one)."""
    entry = SETTINGS.filled(entry)
    base = location_from_config(
        {k: v for k, v in entry.items() if k not in ("latency_ms", "faults", "reads", "zarr_stores")}, key
    )
    latencies = list(dict.fromkeys(float(ms) for ms in entry["latency_ms"]))
    if any(ms > 0 for ms in latencies) and not base.endpoint.startswith("http://"):
        raise ConfigError(f"{key}.latency_ms", entry["latency_ms"], "is emulated on http:// endpoints only")
    faults = objectstore.faults_from_config(entry["faults"], f"{key}.faults")
    if any(faults) and not base.endpoint.startswith("http://"):
        raise ConfigError(f"{key}.faults", entry["faults"], "are emulated on http:// endpoints only")
    found = []
    for ms in latencies:
        for i, emulated in enumerate(faults):
            parts = ([f"{ms:g}ms"] if len(latencies) > 1 else []) + ([f"f{i}"] if len(faults) > 1 else [])
            # a prefix each: the stores of two variants never share a key
            prefix = "/".join(filter(None, (base.prefix, *parts)))
            found.append(("_".join(parts), objectstore.S3Location(base.endpoint, base.bucket, prefix, ms, emulated)))
    return found


_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def location_from_config(entry: dict, key: str) -> objectstore.S3Location:
    """``filesystems.<name>.s3`` without its latencies: checked, each refusal naming its key."""
    entry = SETTINGS.filled(entry)
    endpoint, bucket, prefix = str(entry["endpoint"]), str(entry["bucket"]), str(entry["prefix"])
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{key}.endpoint", endpoint, "must be a server's URL, http://host:port or https://host")
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise ConfigError(
            f"{key}.bucket", bucket, "is not a bucket name (3-63 lowercase letters, digits, dots and hyphens)"
        )
    if prefix.startswith("/") or prefix.endswith("/") or "//" in prefix:
        raise ConfigError(f"{key}.prefix", prefix, "must be a key prefix without a leading, trailing or double /")
    return objectstore.S3Location(endpoint.rstrip("/"), bucket, prefix)


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


def upload(fs, location: objectstore.S3Location, name: str, local_path: str, marked: bool = True) -> int:
    """Put the store at ``local_path`` under ``name`` through the fsspec filesystem ``fs``
    (one object per file), then (``marked``) its marker (:func:`marker_path`): a store without
    one was not uploaded whole, and is not read. The bytes sent."""
    sent = 0
    for path, key in objects(local_path):
        fs.put_file(path, location.path(name, key))
        sent += os.path.getsize(path)
    if marked:
        fs.pipe_file(marker_path(location, name), b"")
    return sent


MARKER_SUFFIX = ".uploaded"


def marker_path(location: objectstore.S3Location, name: str) -> str:
    """The object (fsspec's bucket/key) that says the store uploaded as ``name`` is whole:
    beside its objects, written after the last of them."""
    return location.path(name) + MARKER_SUFFIX


class ObjectStore(StorageTarget):
    name = "s3"
    key = "s3"
    settings = SETTINGS
    source = "s3"
    reads = "h5sweep.backends.remote"
    staged = True
    fills_page_cache = False
    label = "object store"

    def variants(self, entry, key, largest_page):
        reads = objectstore.file_reads_from_config(SETTINGS.filled(entry)["reads"], f"{key}.reads", largest_page)
        stores = objectstore.zarr_stores_from_config(SETTINGS.filled(entry)["zarr_stores"], f"{key}.zarr_stores")
        return [
            (suffix, {"place": location, "s3": location, "s3_reads": reads, "s3_zarr_stores": stores})
            for suffix, location in variants_from_config(entry, key)
        ]

    def upload(self, place, name, local_path, marked=True) -> int:
        """One object per file, through the relay of ``place`` (its latency and faults apply
        to uploads too), then the marker."""
        return upload(objectstore.client(place), place, name, local_path, marked)

    def uploaded_whole(self, place, name, filesystem) -> bool:
        """Whether the store's marker is on the server (h5sweep's own request, sent directly)."""
        marker = marker_path(place, name)
        return bool(objectstore.housekeeping(place, filesystem, lambda fs: fs.exists(marker)))

    def not_whole(self, place, name) -> str:
        return (
            f"{place.url(name)} on {place.endpoint}: its upload did not finish (no marker "
            f"s3://{marker_path(place, name)})"
        )

    def remove_uploaded(self, place, name, filesystem) -> None:
        """The store's objects and its marker removed from the server (h5sweep's own requests)."""
        found_at = (marker_path(place, name), place.path(name))

        def remove(fs) -> None:
            found = [p for p in found_at if fs.exists(p)]
            if found:
                fs.rm(found, recursive=True)

        objectstore.housekeeping(place, filesystem, remove)

    def refuse(self, filesystem: dict, key: str) -> None:
        if filesystem["read_copies"] != 1:
            raise ConfigError(
                f"{key}.read_copies", filesystem["read_copies"], "is 1 on an object store (a cold read is a new client)"
            )
        if filesystem["stripe"] is not None:
            raise ConfigError(f"{key}.stripe", filesystem["stripe"], "stripes a Lustre directory, not an object store")

    def probe(self, fs, key: str) -> str | None:
        silent = objectstore.endpoint_silent(fs.s3.endpoint)
        if silent is not None and fs.required:
            raise ConfigError(f"{key}.s3.endpoint", fs.s3.endpoint, silent)
        return silent or objectstore.unreachable(fs.s3)

    def refuse_case(self, name: str) -> str | None:
        return "is not measured on an object store yet"

    def describe(self, fs) -> str:
        return fs.s3.endpoint

    def job_settings(self, fs) -> dict:
        return {"s3": asdict(fs.s3)}

    def place_from_settings(self, entry: dict):
        return objectstore.S3Location(**entry["s3"])

    def where(self, place) -> dict:
        # the bucket and prefix as fs_path, the server as fs_device; fs_mount stays the staging directory's
        return {
            C.FS_TYPE: "s3",
            C.FS_PATH: place.url(),
            C.FS_DEVICE: place.endpoint,
            objectstore.LATENCY_MS: place.latency_ms,
            objectstore.FAULTS_EMULATED: place.faults.label,
            C.FS_MOUNT_OPTIONS: "",
            C.FS_BLOCK_BYTES: None,
            C.READ_AHEAD_KB: None,
        }

    def faulty(self, place) -> bool:
        return bool(place.faults)

    def guarded(self, place, filesystem: str):
        return objectstore.named_if_gone(place, filesystem)

    def read_seconds(self, sweep, store) -> tuple[float, float]:
        """Each read's reopen (inside its window) and the check of what it read (outside)."""
        fs = store.filesystem
        options = len(sweep.read_options(store.backend.name, fs))
        reads = sum(len(sweep.policies) * case.repeats * len(case.cold_modes) for case in sweep.read_cases) * options
        check = REMOTE_CHECK_S + REMOTE_CHECK_REQUESTS * fs.s3.latency_ms / 1e3
        return reads * REMOTE_REOPEN_S, reads * check

    def request_seconds(self, sweep, store) -> float:
        """The requests at the latency plus :data:`SECONDS_PER_REQUEST` each, the bytes they
        bring at :data:`S3_BYTES_PER_S`."""
        requests, received = self.read_requests(sweep, store)
        return requests * (store.filesystem.s3.latency_ms / 1e3 + SECONDS_PER_REQUEST) + received / S3_BYTES_PER_S

    def read_requests(self, sweep, store) -> tuple[float, float]:
        """A rough model of the requests, waited for one after another: per read, an open,
        then for a store read as one file through blocks (HDF5) the chunks or runs its selection
        touches, at most the blocks their span covers where the file object keeps its blocks
        (:data:`KEEPS_BLOCKS`), for a store of objects (Zarr) its chunks touched and for raw its
        runs, each :data:`REQUESTS_IN_FLIGHT` at a time; every case, read option and cold mode.
        The bytes: a block per request where the file object fetches blocks, else the pieces'."""
        reads = [getattr(option, "read", None) for option in sweep.read_options(store.backend.name, store.filesystem)]
        itemsize, layout, shape = sweep.dtype.itemsize, store.layout, sweep.shape
        row_bytes = math.prod(shape[1:]) * itemsize  # one index of the first axis, stored
        requests_total = bytes_total = 0.0
        for case in sweep.read_cases:
            size = case.size(shape)
            if layout.chunk_shape is None:
                pieces, rows = _runs(shape, size), size[0]
                piece_bytes = math.prod(size) * itemsize / pieces
            else:
                pieces = layout.chunks_touched(tuple(0 for _ in size), size)
                rows = min(shape[0], (math.ceil(size[0] / layout.chunk_shape[0]) + 1) * layout.chunk_shape[0])
                piece_bytes = layout.chunk_bytes(itemsize)
            requests = received = 0.0
            for read in reads:  # each read option
                if read is None or read.cache_type == objectstore.NO_CACHE:
                    n = pieces if read is not None else pieces / REQUESTS_IN_FLIGHT
                    requests += n
                    received += pieces * piece_bytes
                elif read.cache_type in KEEPS_BLOCKS:
                    n = min(pieces, math.ceil(rows * row_bytes / read.block_size))
                    requests += n
                    received += n * read.block_size
                else:  # one span kept: a piece inside it is served, one after the chunk index moved it is not
                    n = min(pieces, math.ceil(rows * row_bytes / read.block_size) + SPAN_MISSES * pieces)
                    requests += n
                    received += n * max(read.block_size, piece_bytes)
            n = len(sweep.policies) * case.repeats * len(case.cold_modes)
            requests_total += n * (len(reads) * OPEN_REQUESTS + requests)
            bytes_total += n * received
        return requests_total, bytes_total

    def write_seconds(self, sweep, store) -> float:
        """A store of a file per chunk writes its objects (a shard each where sharded, else a
        chunk each) at the latency and :data:`SECONDS_PER_WRITTEN_OBJECT` each; a store written
        whole is uploaded after its clock."""
        if not store.backend.capabilities.file_per_chunk:
            return 0.0
        layout = store.layout
        grid = layout if layout.shard_shape is None else type(layout)(layout.shard_shape)
        return grid.n_chunks(sweep.shape) * (SECONDS_PER_WRITTEN_OBJECT + store.filesystem.s3.latency_ms / 1e3)


def _runs(shape: tuple[int, ...], size: tuple[int, ...]) -> int:
    """Contiguous runs of a box in a C-ordered array: the trailing axes it spans whole and the
    first one it does not merge into one run."""
    k = len(shape) - 1
    while k > 0 and size[k] == shape[k]:
        k -= 1
    return math.prod(size[:k])


TARGET = ObjectStore()
