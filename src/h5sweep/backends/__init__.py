"""Storage backends: the registry that maps a config's backend name to its implementation.

Each entry is a :class:`h5sweep.backends.base.BackendSpec`: what the workflow needs at parse
time (name, label, capabilities, how read options are configured). The implementation module,
with its I/O library, is imported only inside jobs, by :func:`load`. Validation, the plan, the
figures and the recommendation ask the registry, never a backend's name.
"""

from __future__ import annotations

import importlib
import os
import re

from h5sweep.backends import chunk_cache as CC
from h5sweep.backends import hdf5_columns, hdf5_filters, hdf5_remote, recipes, zarr_columns
from h5sweep.backends.base import BackendSpec, Capabilities
from h5sweep.backends.chunk_cache import SETTINGS as CHUNK_CACHE_SETTINGS
from h5sweep.backends.chunk_cache import ChunkCache, caches_from_config
from h5sweep.backends.zarr_readers import REMOTE as ZARR_REMOTE
from h5sweep.backends.zarr_readers import SETTINGS as ZARR_SETTINGS
from h5sweep.backends.zarr_readers import ZARR_CODEC_FAMILIES, ZarrReader, readers_from_config
from h5sweep.storage import columns as C
from h5sweep.storage import (
    objectstore,  # noqa: F401 - registers the columns of reads of remote stores
    targets,
)
from h5sweep.storage.errors import ConfigError

# The byte sources the built-in backends read a store through: its path, and an object
# store's objects (each opened by h5sweep.backends.remote)
REMOTE_SOURCES = (targets.PATH, "s3")
# The names of the built-in backends, for the cases that measure one library's own API.
HDF5, ZARR, RAW = "hdf5", "zarr", "raw"

REGISTRY: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec(
            HDF5,
            "HDF5",
            "h5sweep.backends.hdf5",
            "HDF5 through h5py (one file per store)",
            Capabilities(
                contiguous=True,
                chunks=True,
                pages=True,
                codec_families=hdf5_filters.families(),
                parallel_modes=("serial", "independent", "collective"),
                parallel_filtered_write_modes=("serial", "collective"),  # parallel HDF5 filters collectively only
                fill_times=("ifset", "never", "alloc"),
                writes_with_read_option=True,
                sources=REMOTE_SOURCES,
            ),
            options_key="chunk_cache",
            options_from_config=lambda config: caches_from_config(config.get("chunk_cache")),
            option_from_settings=ChunkCache.from_config,
            settings=CHUNK_CACHE_SETTINGS,
            filter_family=hdf5_filters.filter_family,
            encodes_chunks=hdf5_filters.has_chunk_encoder,
            option_columns=(CC.CHUNK_CACHE_BYTES, CC.CHUNK_CACHE_SLOTS, CC.CHUNK_CACHE_W0),
            carried_columns=hdf5_columns.CARRIED,
            version_columns=hdf5_columns.VERSIONS,
            recipe=recipes.hdf5_recipe,
            remote=hdf5_remote.REMOTE,
        ),
        BackendSpec(
            ZARR,
            "Zarr",
            "h5sweep.backends.zarr",
            "Zarr v3 directory stores (one file per chunk), read by zarr-python and tensorstore",
            Capabilities(
                contiguous=False,
                chunks=True,
                shards=True,
                codec_families=ZARR_CODEC_FAMILIES,
                directory_store=True,
                file_per_chunk=True,
                parallel_modes=("serial", "independent"),  # each rank its own chunk files; no MPI-IO
                parallel_filtered_write_modes=("serial", "independent"),
                sources=REMOTE_SOURCES,
            ),
            options_key="zarr_readers",
            options_from_config=lambda config: readers_from_config(config.get("zarr")),
            option_from_settings=ZarrReader.from_settings,
            settings=ZARR_SETTINGS,
            filter_family=lambda compression: "none" if compression.is_none else "zarr",
            encodes_chunks=lambda compression: True,
            option_columns=zarr_columns.OPTIONS,
            carried_columns=zarr_columns.REMOTE_OPTIONS,
            version_columns=zarr_columns.VERSIONS,
            recipe=recipes.zarr_recipe,
            remote=ZARR_REMOTE,
        ),
        BackendSpec(
            RAW,
            "raw binary",
            "h5sweep.backends.raw",
            "the array as a plain .npy file, read with one pread per contiguous run (no library)",
            Capabilities(contiguous=True, chunks=False, codec_families=("none",), sources=REMOTE_SOURCES),
            recipe=recipes.raw,
        ),
    )
}
# Every ratio of a sweep is to this backend's contiguous store, on the same selections.
REFERENCE = HDF5
# The columns the backends add (each registered by the backend's own module).
OPTION_COLUMNS = tuple(dict.fromkeys(c for s in REGISTRY.values() for c in s.option_columns))
CARRIED_COLUMNS = tuple(dict.fromkeys(c for s in REGISTRY.values() for c in s.carried_columns))
# Another backend's store against the reference backend's of the same chunk shape, storage
# order, compression and selections (h5sweep.analyze.aggregate.backend_ratios).
RATIO_TO_REFERENCE = C.column(f"ratio_to_{REFERENCE}", C.FLOAT, "ratio")
RATIO_TO_REFERENCE_CI_LOW = C.column(f"{RATIO_TO_REFERENCE}_ci_low", C.FLOAT, "ratio")
RATIO_TO_REFERENCE_CI_HIGH = C.column(f"{RATIO_TO_REFERENCE}_ci_high", C.FLOAT, "ratio")
RATIO_TO_REFERENCE_PAIRS = C.column(f"{RATIO_TO_REFERENCE}_pairs", C.FLOAT, "count")
_reference = REGISTRY[REFERENCE].label
C.group(
    C.SUMMARY,
    (RATIO_TO_REFERENCE, RATIO_TO_REFERENCE_CI_LOW, RATIO_TO_REFERENCE_CI_HIGH, RATIO_TO_REFERENCE_PAIRS),
    (
        f"Sweeps with more than one backend, the other backends' rows: the median of the per-selection "
        f"ratios of this row's reads to {_reference}'s reads of the same chunk shape, storage order, "
        f"compression and selections (a sharded store's twin is the {_reference} store of its chunk "
        f"shape) ({_reference}'s first read option, same policy, cold mode and cache state), its 95% "
        f"interval and pairs: below 1 this row's backend (with its reader) is faster."
    ),
)
# The wildcard a rule's paths use for a backend name.
WILDCARD = "|".join(re.escape(name) for name in REGISTRY)


def spec(name: str) -> BackendSpec:
    return REGISTRY[name]


def label(name: str) -> str:
    """A backend's label for a name found in a table (the name itself if unknown)."""
    return REGISTRY[name].label if name in REGISTRY else str(name)


def specs_from_config(names: list[str]) -> list[BackendSpec]:
    for i, name in enumerate(names):
        if name not in REGISTRY:
            raise ConfigError(f"backends[{i}]", name, f"unknown storage backend (known: {', '.join(REGISTRY)})")
    if not names:
        raise ConfigError("backends", names, "names no storage backend")
    if REFERENCE not in names:
        raise ConfigError(
            "backends",
            names,
            f"needs {REFERENCE} beside the others: every ratio is to the contiguous {label(REFERENCE)} store "
            "on the same selections",
        )
    return [REGISTRY[name] for name in dict.fromkeys(names)]


def store_path(directory: str, sweep: str, backend: str, layout_id: str, compression: str) -> str:
    """Where the test store of one backend, layout and compression lives under a filesystem's
    directory (``<directory>/<sweep>/<layout>/<compression>.<backend>``); the workflow's rules
    pass wildcard patterns for the parts their jobs vary."""
    return os.path.join(directory, sweep, layout_id, f"{compression}.{backend}")


def load(name: str):
    """The backend ``name`` (its module imported now, with its I/O library)."""
    return importlib.import_module(REGISTRY[name].module).BACKEND


def target_reads(target):
    """The module that opens the backends' stores on a storage target
    (:attr:`h5sweep.storage.targets.StorageTarget.reads`), or None where each backend opens its
    own by its path (a directory)."""
    return None if target.reads is None else importlib.import_module(target.reads)


def on_target(backend, target, place, directory: str, filesystem: str):
    """A loaded backend as it writes and reads stores on ``target`` at ``place`` (the
    filesystem's directory: where a staged store is written first)."""
    module = target_reads(target)
    return backend if module is None else module.on_target(backend, place, directory, filesystem)


def option_on_target(entry: dict, decode, target):
    """A read option from a job's settings (``decode``: the backend's), with what the target
    adds to it."""
    module = target_reads(target)
    return decode(entry) if module is None else module.option_from_settings(entry, decode)


def read_options_on(name: str, options: list, filesystem) -> list:
    """A backend's read options on a filesystem: its own, or each as its target reads it."""
    module = target_reads(filesystem.target)
    return options if module is None else module.read_options(name, options, filesystem)


def read_refusal(name: str, option, filesystem) -> tuple[str, object, str] | None:
    """Why a backend's read option cannot read a store on the filesystem, as (key, value,
    reason), or None."""
    module = target_reads(filesystem.target)
    return None if module is None else module.read_refusal(name, option, filesystem)
