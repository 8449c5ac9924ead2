"""Exactly the settings each job uses, and nothing else.

The workflow validates and expands the config once (:class:`h5sweep.sweep.model.Sweep`), then gives
each job its own settings as the rule's ``params.settings``: the same object is Snakemake's
rerun trigger and the job's only input besides its files, so what a job depends on and what it
uses cannot drift apart. A change of a setting reruns exactly the jobs that use it.

:class:`JobSettings` is the job's side: it rebuilds the few objects a job needs from its
settings, without validating the whole config or probing any filesystem again. Nothing here
imports an I/O library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace

import numpy as np

from h5sweep import backends
from h5sweep.backends.chunk_cache import ChunkCache, caches_from_config
from h5sweep.cases import (
    READ_CASES,
    case_spec,
    optional_case_from_config,
    read_cases_from_config,
    write_case_from_config,
)
from h5sweep.measure import settle
from h5sweep.storage import columns as C
from h5sweep.storage import targets
from h5sweep.storage.codecs import Compression, parse_compression
from h5sweep.storage.datasources import axis_names, fill_name
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.config import config_hash

# The config keys of the cases a query job runs.
READ_CASE_KEYS = (*READ_CASES, "boxes")


def _filesystem(filesystem) -> dict:
    # a key only where it is set: no rerun of the jobs of others
    stripe = {"stripe": filesystem.stripe} if filesystem.stripe else {}
    return {
        "name": filesystem.name,
        "directory": filesystem.directory,
        "settle_s": filesystem.settle_s,
        **stripe,
        **filesystem.target.job_settings(filesystem),
    }


def _store(sweep, filesystem, backend: str, layout: Layout, compression: str) -> dict:
    return {
        C.SWEEP: sweep.name,
        C.FILESYSTEM: _filesystem(filesystem),
        C.BACKEND: backend,
        "dataset": sweep.dataset,
        C.LAYOUT: {"id": layout.id, "name": layout.name},
        C.COMPRESSION: compression,
    }


def _read_options(sweep, backend: str, first_only: bool = False, filesystem=None) -> dict:
    """A backend's read options on ``filesystem`` as a job receives them, under its spec's
    ``options_key`` (HDF5's chunk caches, Zarr's readers)."""
    options = sweep.read_options(backend, filesystem)[: 1 if first_only else None]
    return {backends.spec(backend).options_key: [option.settings() for option in options]}


def generate_settings(sweep, filesystem, backend: str, layout_id: str, compression: str) -> dict:
    """A generate job: its store and the write case (with the read option it writes with, for
    a backend that writes with one: HDF5's chunk cache)."""
    return {
        **_store(sweep, filesystem, backend, sweep.layout(layout_id), compression),
        "cases": {"write": {**(sweep.config["cases"].get("write") or {}), "raced": sweep.write_race is not None}},
        **(_read_options(sweep, backend, True) if backends.spec(backend).capabilities.writes_with_read_option else {}),
    }


def write_race_settings(sweep, filesystem) -> dict:
    """The write race of a filesystem: every store's generate settings, in the order of its
    input records, and the rule (h5sweep.cases.write.race)."""
    stores = [tf for tf in sweep.stores() if tf.filesystem.name == filesystem.name]
    return {
        "stores": [
            generate_settings(sweep, filesystem, tf.backend.name, tf.layout.id, tf.compression.name) for tf in stores
        ],
        "race": sweep.write_race,
    }


def query_settings(sweep, filesystem, backend: str, layout_id: str, compression: str) -> dict:
    """A query job: its store, the read cases, visiting policies and the backend's read options."""
    cases = {name: entry for name, entry in sweep.config["cases"].items() if name in READ_CASE_KEYS}
    return {
        **_store(sweep, filesystem, backend, sweep.layout(layout_id), compression),
        "cases": cases,
        "policies": list(sweep.policies),
        **_read_options(sweep, backend, filesystem=filesystem),
        "split_read_time": sweep.split_read_time,
        "read_copies": filesystem.read_copies,
    }


def interleaved_query_settings(sweep, filesystem) -> dict:
    """The interleaved query job of a filesystem: every store's query settings, in the
    order of its input stores (the reference store marked ``protected``: never raced out; a
    compressed store ``kept_best_of`` its group: the best of them is read to the end), and the
    race's rule (None: every store read to the end)."""
    stores = [tf for tf in sweep.stores() if tf.filesystem.name == filesystem.name]
    return {
        "stores": [
            {
                **query_settings(sweep, filesystem, tf.backend.name, tf.layout.id, tf.compression.name),
                "protected": is_reference(sweep, tf),
                "kept_best_of": "" if tf.compression.is_none else "compressed",
            }
            for tf in stores
        ],
        "race": race_settings(sweep),
    }


def resumed_query_settings(sweep, filesystem, entries: list[dict]) -> dict:
    """The job that reads a filesystem's resumed stores to the end (:mod:`h5sweep.sweep.resume`):
    each requested store's query settings with only the requested read options (and where each
    stands among its backend's, ``option_indexes``), its generate settings to write it again,
    and no race."""
    stores = []
    for tf in sweep.stores():
        if tf.filesystem.name != filesystem.name:
            continue
        key = (tf.backend.name, tf.layout.id, tf.compression.name)
        wanted = {e[C.READ_OPTION] for e in entries if (e[C.BACKEND], e[C.LAYOUT_ID], e[C.COMPRESSION]) == key}
        if not wanted:
            continue
        options = sweep.read_options(tf.backend.name, filesystem)
        indexes = [k for k, option in enumerate(options) if option.label in wanted]
        query = query_settings(sweep, filesystem, *key)
        spec = backends.spec(tf.backend.name)
        query[spec.options_key] = [options[k].settings() for k in indexes]
        stores.append({**query, "option_indexes": indexes, "generate": generate_settings(sweep, filesystem, *key)})
    return {"stores": stores, "race": None}


def is_reference(sweep, store) -> bool:
    """Whether ``store`` is the sweep's reference store (the one every ratio is to)."""
    ref = sweep.reference
    return (store.backend.name, store.layout.id, store.compression.name) == (
        backends.REFERENCE,
        ref[C.LAYOUT_ID],
        ref[C.COMPRESSION],
    )


def race_settings(sweep) -> dict | None:
    """The race's rule and the cases read to the end (``cases.<c>.race: false``). The read mix
    and objective it scores by are the run's ``recommend:`` section, resolved, at the time the
    job runs (:func:`with_race_scoring`): not a setting of the job, so that changing
    ``recommend:`` after a sweep reruns the recommendation and never the reads."""
    if sweep.race is None:
        return None
    unraced = [case.name for case in sweep.read_cases if case.settings.get("race") is False]
    return {**sweep.race, "unraced": unraced}


def with_race_scoring(settings: dict, recommend: dict) -> dict:
    """A read job's settings with its race scoring by ``recommend`` (the run's ``recommend:``
    section as the sweep resolved it, :attr:`Sweep.recommend`: its filled read mix
    ``weights`` and its ``objective``)."""
    race = settings.get("race")
    if not race:
        return settings
    return {**settings, "race": {**race, "weights": dict(recommend["weights"]), "objective": recommend["objective"]}}


def store_case_settings(sweep, filesystem, backend: str, layout_id: str, compression: str, case: str) -> dict:
    """The job of a case run on one test store in a job of its own (scaling, parallel): its
    store, its case entry and the read options it reads with (its spec says: the first, or all)."""
    first_only = case_spec(case).read_options == "first"
    return {
        **_store(sweep, filesystem, backend, sweep.layout(layout_id), compression),
        "cases": {case: sweep.config["cases"][case] or {}},
        **_read_options(sweep, backend, first_only),
    }


def filesystem_case_settings(sweep, filesystem, case: str) -> dict:
    """The job of a case run once per filesystem (metadata, iosize): no store of the grid."""
    return {
        C.SWEEP: sweep.name,
        C.FILESYSTEM: _filesystem(filesystem),
        C.BACKEND: backends.REFERENCE,
        "dataset": sweep.dataset,
        C.LAYOUT: {"id": "contiguous", "name": ""},
        C.COMPRESSION: "none",
        "cases": {case: sweep.config["cases"][case] or {}},
    }


def recommend_settings(sweep) -> dict:
    """The recommend job: the read mix and limits, the visiting policy it ranks (the sweep's
    first) and the reference store (every read option of every store is ranked)."""
    return {
        "recommend": sweep.recommend,
        "read_cases": [case.name for case in sweep.read_cases],
        C.POLICY: sweep.policies[0],
        "reference": sweep.reference,
        "race_margin": sweep.race["margin"] if sweep.race else None,
        C.SWEEP: sweep.name,
        "dataset": {
            "shape": [int(n) for n in sweep.shape],
            "dtype": str(sweep.dtype),
            "raw_bytes": int(sweep.raw_bytes),
            "fill": sweep.dataset["fill"],  # the outputs say which values were measured
            "seed": sweep.dataset.get("seed"),
        },
    }


@dataclass
class JobSettings:
    """What a job rebuilds from its ``params.settings``."""

    settings: dict

    @property
    def sweep(self) -> str:
        return self.settings[C.SWEEP]

    @property
    def filesystem(self) -> str:
        return self.settings[C.FILESYSTEM]["name"]

    @property
    def directory(self) -> str:
        return self.settings[C.FILESYSTEM]["directory"]

    @property
    def settle_s(self) -> float:
        """The filesystem's rest after a removal before a timed write, as configured or
        else by how it is mounted on the node the job runs on (:mod:`h5sweep.measure.settle`)."""
        fs = self.settings[C.FILESYSTEM]
        return settle.settle_seconds(SimpleNamespace(directory=fs["directory"], settle_s=fs["settle_s"]))

    @property
    def stripe(self) -> dict | None:
        """The filesystem's Lustre striping (``filesystems.<name>.stripe``), or None."""
        return self.settings[C.FILESYSTEM].get("stripe")

    @property
    def target(self) -> targets.StorageTarget:
        """The storage target the filesystem's stores are on (h5sweep.storage.targets)."""
        return targets.of_entry(self.settings[C.FILESYSTEM])

    @property
    def place(self):
        """Where on its target the filesystem's stores are (``filesystems.<name>.s3``: an
        S3Location), or None on a directory."""
        return self.target.place_from_settings(self.settings[C.FILESYSTEM])

    def backend_io(self):
        """The job's backend, loaded now (with its I/O library), on the filesystem's target
        (on an object store, its stores uploaded from the job's directory and read back
        through new clients)."""
        return backends.on_target(backends.load(self.backend), self.target, self.place, self.directory, self.filesystem)

    @property
    def read_copies(self) -> int:
        """How many byte-identical copies of the store a query reads in turn (h5sweep.measure.copies)."""
        return int(self.settings["read_copies"])

    @property
    def backend(self) -> str:
        return self.settings[C.BACKEND]

    @property
    def dataset(self) -> dict:
        return self.settings["dataset"]

    @property
    def dataset_name(self) -> str:
        return self.dataset["name"]

    @cached_property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.dataset["shape"])

    @cached_property
    def dtype(self) -> np.dtype:
        return np.dtype(self.dataset[C.DTYPE])

    @property
    def seed(self) -> int:
        return int(self.dataset[C.SEED])

    @property
    def raw_bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @cached_property
    def layout(self) -> Layout:
        entry = self.settings[C.LAYOUT]
        found = Layout.from_id(entry["id"])
        return Layout(found.chunk_shape, entry["name"], found.order, found.shard_shape, found.page_size)

    @cached_property
    def compression(self) -> Compression:
        return parse_compression(self.settings[C.COMPRESSION])

    @cached_property
    def chunk_caches(self) -> list[ChunkCache]:
        return caches_from_config(self.settings.get("chunk_cache"))

    @cached_property
    def read_options(self) -> list:
        """The backend's read options, each measured separately (HDF5: chunk caches)."""
        spec = backends.spec(self.backend)
        entries = self.settings.get(spec.options_key)
        if not entries:
            return spec.options_from_config({})
        return [backends.option_on_target(entry, spec.option_from_settings, self.target) for entry in entries]

    @property
    def write_option(self):
        """The read option the write case writes with (HDF5's chunk cache; None: a backend
        that writes with none)."""
        return self.read_options[0] if backends.spec(self.backend).capabilities.writes_with_read_option else None

    @property
    def split_read_time(self) -> bool:
        return bool(self.settings["split_read_time"])

    @property
    def policies(self) -> list[str]:
        return self.settings["policies"]

    @cached_property
    def read_cases(self):
        return read_cases_from_config(self.settings["cases"], self.shape, axis_names(self.dataset))

    @cached_property
    def write_case(self):
        return write_case_from_config(self.settings["cases"])

    def optional_case(self, name: str):
        return optional_case_from_config(self.settings["cases"], name, self.shape, self.dtype.itemsize)

    @property
    def hash(self) -> str:
        """The settings' hash: rows with the same hash were measured with the same settings."""
        return config_hash(self.settings)

    def store_columns(self) -> dict:
        """The columns that say which store of the grid a row measured."""
        layout = self.layout
        return {
            C.SWEEP: self.sweep,
            C.FILESYSTEM: self.filesystem,
            C.BACKEND: self.backend,
            C.LAYOUT: layout.kind,
            C.CHUNK_SHAPE: layout.chunk_label,
            C.SHARD_SHAPE: layout.shard_label,
            C.PAGE_SIZE: layout.page_size or 0,
            C.LAYOUT_ID: layout.id,
            C.LAYOUT_NAME: layout.name,
            C.ORDER: layout.order,
            C.COMPRESSION: self.compression.name,
            C.FILTER_FAMILY: backends.spec(self.backend).filter_family(self.compression),
            **self.compression.columns(),
            C.DATASET_SHAPE: "x".join(map(str, self.shape)),
            C.DTYPE: self.dtype.name,
            C.FILL: fill_name(self.dataset),
            C.SEED: self.seed,
            C.JUDGE_SYNTHETIC_VALUES: bool(self.dataset["judge_synthetic_values"]),
            C.RAW_BYTES: self.raw_bytes,
            C.N_CHUNKS: layout.n_chunks(self.shape),
            C.PADDING_BYTES: layout.padding_bytes(self.shape, self.dtype.itemsize),
        }
