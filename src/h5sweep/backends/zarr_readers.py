"""The Zarr backend's settings, without its I/O libraries (the workflow reads these at parse
time): the codecs a Zarr v3 store can hold of the codec table, and the readers a Zarr store is
read with, each its own read option (its own rows)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from h5sweep.backends.base import SourceReads
from h5sweep.backends.zarr_columns import ZARR_CONCURRENCY, ZARR_STORE
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import CODECS
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.objectstore import FSSPEC, OBSTORE

# Codec families of h5sweep's table that Zarr v3 stores too (those whose module has ``zarr``).
ZARR_CODEC_FAMILIES = tuple(family for family, codec in CODECS.items() if codec.zarr is not None)
READERS = ("zarr-python", "tensorstore")
# the config's ``zarr:`` block, declared once (the schema's block comes from here)
SETTINGS = Block(
    "zarr",
    "How Zarr stores are read (backends with zarr): the readers, each its own rows, and zarr-python's number "
    "of chunk reads in flight.",
    (
        Setting(
            "readers",
            "array",
            list(READERS),
            "Zarr readers, each measured separately (column reader).",
            {"minItems": 1, "items": {"type": "string", "enum": list(READERS)}},
        ),
        Setting(
            "concurrency",
            None,
            10,  # zarr-python's own default for ``async.concurrency``
            "zarr-python's async.concurrency, its chunk reads in flight (column zarr_concurrency); a list "
            "(e.g. [1, 10, 64]) measures zarr-python at each, each its own read option (on an object "
            "store its requests in flight, which set how much of the latency a read waits).",
            {
                "oneOf": [
                    {"type": "integer", "minimum": 1},
                    {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
                ]
            },
        ),
    ),
    optional=False,
)
DEFAULT_CONCURRENCY = SETTINGS.setting("concurrency").default


# what a reader fetches an object store's Zarr store through (``store``): zarr-python's fsspec
# or obstore store, tensorstore's own S3 key-value store; "" on a filesystem
STORE_SETTINGS = {
    "": "zarr.open_array(zarr.storage.LocalStore(path, read_only=True), mode='r', zarr_format=3)",
    "fsspec": (
        "zarr.open_array(zarr.storage.FsspecStore(s3fs.S3FileSystem(endpoint_url=url, asynchronous=True), "
        "path=f'{bucket}/{key}', read_only=True), mode='r', zarr_format=3)"
    ),
    "obstore": (
        "zarr.open_array(zarr.storage.ObjectStore(obstore.store.S3Store(bucket, prefix=key, endpoint=url), "
        "read_only=True), mode='r', zarr_format=3)"
    ),
}
TENSORSTORE_SETTINGS = {
    "": "tensorstore.open({'driver': 'zarr3', 'kvstore': {'driver': 'file', 'path': path}}).result()",
    "s3": (
        "tensorstore.open({'driver': 'zarr3', 'kvstore': {'driver': 's3', 'bucket': bucket, 'path': key + '/', "
        "'endpoint': url}}).result()"
    ),
}


@dataclass(frozen=True)
class ZarrReader:
    """How a Zarr store is read: the library, zarr-python's number of chunk reads in flight at
    once (``async.concurrency``) and, on an object store, the store it fetches through."""

    reader: str = "zarr-python"
    concurrency: int = DEFAULT_CONCURRENCY
    store: str = ""

    @property
    def label(self) -> str:
        words = f"zarr-python concurrency {self.concurrency}" if self.reader == "zarr-python" else self.reader
        return words + (f" via {self.store}" if self.store else "")

    @property
    def setting(self) -> str:
        if self.reader == "zarr-python":
            return f"zarr.config.set({{'async.concurrency': {self.concurrency}}}); {STORE_SETTINGS[self.store]}"
        return TENSORSTORE_SETTINGS[self.store]

    def columns(self) -> dict:
        """The columns every row read with this reader carries."""
        concurrency = self.concurrency if self.reader == "zarr-python" else None
        return {C.READER: self.reader, ZARR_CONCURRENCY: concurrency, ZARR_STORE: self.store or None}

    def holds_chunk(self, chunk_bytes: int) -> bool | None:
        """Whether a chunk cache holds one chunk: neither reader keeps chunks between reads."""
        return None

    def settings(self) -> dict:
        return {C.READER: self.reader, "concurrency": self.concurrency, **({"store": self.store} if self.store else {})}

    @classmethod
    def from_settings(cls, entry: dict) -> ZarrReader:
        return cls(entry["reader"], int(entry["concurrency"]), str(entry.get("store", "")))


def readers_from_config(zarr: dict | None) -> list[ZarrReader]:
    """The ``zarr:`` settings (readers and zarr-python's concurrency), checked."""
    entry = SETTINGS.filled(zarr)
    levels = entry["concurrency"] if isinstance(entry["concurrency"], list) else [entry["concurrency"]]
    for value in levels:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError("zarr.concurrency", entry["concurrency"], "must be whole numbers of at least 1")
    if not entry["readers"]:
        raise ConfigError("zarr.readers", entry["readers"], "names no reader")
    for i, reader in enumerate(entry["readers"]):
        if reader not in READERS:
            raise ConfigError(f"zarr.readers[{i}]", reader, f"unknown Zarr reader (known: {', '.join(READERS)})")
    found = []
    for reader in dict.fromkeys(entry["readers"]):  # tensorstore has no concurrency of zarr-python's
        found += (
            [ZarrReader(reader, n) for n in dict.fromkeys(levels)]
            if reader == "zarr-python"
            else [ZarrReader(reader, levels[0])]
        )
    return found


TENSORSTORE_S3 = "s3"  # tensorstore's own S3 key-value store


def _remote_options(options: list, fs) -> list:
    """zarr-python's readers through each of the filesystem's Zarr stores
    (``filesystems.<name>.s3.zarr_stores``), tensorstore's through its own S3 key-value store."""
    stores = fs.s3_zarr_stores or (FSSPEC,)
    return [
        replace(option, store=store)
        for option in options
        for store in (stores if option.reader == "zarr-python" else (TENSORSTORE_S3,))
    ]


def _own_requests(option) -> tuple[str, object] | None:
    """tensorstore's and obstore's requests are their own (the key and value that ask for them)."""
    if option.reader == "tensorstore":
        return "zarr.readers", option.reader
    return ("s3.zarr_stores", option.store) if option.store == OBSTORE else None


# how Zarr's readers read a store on an object store
REMOTE = SourceReads(options=_remote_options, own_requests=_own_requests)
