"""Storage backends: how a test store is written, opened for timed reads and measured.

A backend is one module of this package (``hdf5.py``, ``zarr.py``) with a class that has the
methods of :class:`h5sweep.backends.base.Backend`, and one entry in ``BACKENDS`` below. The
entry is all the workflow needs at parse time (the name, which is also the store's suffix,
whether a store is a file or a directory, which layouts and codecs it stores, the config key of
its read options); the module, with its I/O library, is imported only inside the jobs, by
:func:`load`.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass

from h5sweep.backends.zarr_options import ZARR_CODEC_FAMILIES
from h5sweep.errors import ConfigError


@dataclass(frozen=True)
class BackendEntry:
    name: str  # the config's name, the ``backend`` column and the store's suffix
    module: str  # the implementation, imported by jobs only
    store_is_directory: bool  # a directory store (Zarr) or one file (HDF5)
    description: str
    read_options_key: str  # the job setting that holds its read options (one row set each)
    codec_families: tuple[str, ...] | None = None  # codecs of the table it stores (None: all)
    chunked_only: bool = False  # no contiguous layout
    shards: bool = False  # stores sharded layouts (chunks grouped in shard files)

    def stores(self, layout, compression) -> bool:
        """Whether this backend stores a layout with a compression setting."""
        if self.chunked_only and layout.chunk_shape is None:
            return False
        if layout.shard_shape is not None and not self.shards:
            return False
        return self.codec_families is None or compression.family in self.codec_families

    def store_path(self, directory: str, sweep: str, layout_id: str, compression: str) -> str:
        return store_path(directory, sweep, self.name, layout_id, compression)


def store_path(directory: str, sweep: str, backend: str, layout_id: str, compression: str) -> str:
    """Where the test store of one backend, layout and compression lives under a filesystem's
    directory (``<directory>/<sweep>/<layout>/<compression>.<backend>``); the workflow's rules
    pass wildcard patterns for the parts their jobs vary."""
    return os.path.join(directory, sweep, layout_id, f"{compression}.{backend}")


BACKENDS: dict[str, BackendEntry] = {
    "hdf5": BackendEntry(
        "hdf5", "h5sweep.backends.hdf5", False, "HDF5 through h5py (one file per store)", "chunk_cache"
    ),
    "zarr": BackendEntry(
        "zarr",
        "h5sweep.backends.zarr",
        True,
        "Zarr v3 directory stores (one file per chunk), read by zarr-python and tensorstore",
        "zarr_readers",
        codec_families=ZARR_CODEC_FAMILIES,
        chunked_only=True,
        shards=True,
    ),
}
DEFAULT_BACKENDS = ["hdf5"]

# The wildcard a rule's paths use for a backend name.
WILDCARD = "|".join(re.escape(name) for name in BACKENDS)


def backends_from_config(names: list[str]) -> list[BackendEntry]:
    for i, name in enumerate(names):
        if name not in BACKENDS:
            raise ConfigError(f"backends[{i}]", name, f"unknown storage backend (known: {', '.join(BACKENDS)})")
    if not names:
        raise ConfigError("backends", names, "names no storage backend")
    if "hdf5" not in names:
        raise ConfigError(
            "backends",
            names,
            "needs hdf5 beside the others: every ratio is to the contiguous HDF5 file on the same "
            "selections (Zarr has no contiguous layout)",
        )
    return [BACKENDS[name] for name in dict.fromkeys(names)]


def load(name: str):
    """The backend ``name`` (its module imported now, with its I/O library)."""
    return importlib.import_module(BACKENDS[name].module).BACKEND
