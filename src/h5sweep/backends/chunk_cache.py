"""HDF5's chunk cache as a read option of the HDF5 backend (a plain value: no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass

from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError

# The chunk cache a read's file handle had, in its row (its read option's columns)
CHUNK_CACHE_BYTES = C.column("chunk_cache_bytes", C.INTEGER, "bytes")
CHUNK_CACHE_SLOTS = C.column("chunk_cache_slots", C.INTEGER, "")
CHUNK_CACHE_W0 = C.column("chunk_cache_w0", C.FLOAT, "")

C.group(
    C.MEASUREMENTS,
    (
        CHUNK_CACHE_BYTES,
        CHUNK_CACHE_SLOTS,
        CHUNK_CACHE_W0,
        C.CACHE_HOLDS_CHUNK,
    ),
    ("HDF5 chunk cache setting of the file handle; whether it holds one chunk."),
)

SETTINGS = Block(
    "chunk_cache",
    "HDF5 chunk cache settings the read cases are measured with, each separately. The default is "
    "HDF5 1.x's (1 MiB, 521 slots, w0 0.75), the cache of the studies; HDF5 2.0's own default is "
    "8 MiB and 8191 slots. The first setting is also used by the write case.",
    (
        Setting("bytes", "integer", 1024**2, "Cache size in bytes per open dataset.", {"minimum": 0}),
        Setting(
            "slots",
            "integer",
            521,
            "Hash table slots (a prime about 100 x the chunks the cache holds).",
            {"minimum": 1},
        ),
        Setting("w0", "number", 0.75, "Eviction weight of fully read chunks, 0 to 1.", {"minimum": 0, "maximum": 1}),
    ),
    optional=False,
    required=("bytes", "slots", "w0"),
    many=True,
    at_least_one=True,
)


@dataclass(frozen=True)
class ChunkCache:
    """HDF5's per-dataset chunk cache, set when the file is opened. The default is HDF5
    1.x's (1 MiB, 521 slots, w0 0.75), the cache of the studies; HDF5 2.0 raised its own
    default to 8 MiB and 8191 slots. h5sweep always sets the cache explicitly."""

    nbytes: int
    slots: int
    w0: float = SETTINGS.setting("w0").default

    def open_kwargs(self) -> dict:
        return {"rdcc_nbytes": self.nbytes, "rdcc_nslots": self.slots, "rdcc_w0": self.w0}

    @property
    def label(self) -> str:
        size = f"{self.nbytes / 2**20:g} MiB" if self.nbytes >= 2**20 else f"{self.nbytes / 2**10:g} KiB"
        return f"cache {size}/{self.slots}/{self.w0:g}"

    @property
    def setting(self) -> str:
        return f"h5py.File(path, 'r', rdcc_nbytes={self.nbytes}, rdcc_nslots={self.slots}, rdcc_w0={self.w0:g})"

    def columns(self) -> dict:
        """The columns every row measured with this cache carries."""
        return {
            C.READER: "h5py",
            CHUNK_CACHE_BYTES: self.nbytes,
            CHUNK_CACHE_SLOTS: self.slots,
            CHUNK_CACHE_W0: self.w0,
        }

    def holds_chunk(self, chunk_bytes: int) -> bool:
        return self.nbytes >= chunk_bytes

    def settings(self) -> dict:
        """As in the config (``chunk_cache[]``): what a job receives."""
        return {"bytes": self.nbytes, "slots": self.slots, "w0": self.w0}

    @classmethod
    def from_config(cls, entry: dict) -> ChunkCache:
        return cls(int(entry["bytes"]), int(entry["slots"]), float(entry["w0"]))


DEFAULT_CACHE = ChunkCache.from_config(SETTINGS.defaults())


def caches_from_config(entries: list[dict] | None) -> list[ChunkCache]:
    """The ``chunk_cache:`` settings (the declared one where none is given), checked."""
    caches = []
    for i, entry in enumerate(SETTINGS.filled_section(entries)):
        if int(entry["slots"]) < 1:
            raise ConfigError(f"chunk_cache[{i}].slots", entry["slots"], "must be at least 1")
        if not 0 <= float(entry["w0"]) <= 1:
            raise ConfigError(f"chunk_cache[{i}].w0", entry["w0"], "must be between 0 and 1")
        caches.append(ChunkCache.from_config(entry))
    return list(dict.fromkeys(caches))
