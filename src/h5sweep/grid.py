"""The sweep grid: filesystems x layouts x compression, each file measured by every case.

``Sweep`` is the validated, expanded config. The workflow asks it for the jobs to run and
the paths they write; nothing here touches the disk except the filesystem probes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from h5sweep.cases import (
    IOSizeCase,
    MetadataCase,
    ReadCase,
    ScalingCase,
    WriteCase,
    optional_case_from_config,
    read_cases_from_config,
    write_case_from_config,
)
from h5sweep.compression import NONE, Compression, compressions_from_config
from h5sweep.config import config_hash
from h5sweep.datasources import fill_name, read_donor
from h5sweep.errors import ConfigError
from h5sweep.filesystems import Filesystem, filesystems_from_config
from h5sweep.layouts import Layout, Shape, layouts_from_config
from h5sweep.query import ChunkCache
from h5sweep.selections import POLICIES


def policies_from_config(names: list[str]) -> list[str]:
    for i, name in enumerate(names):
        if name not in POLICIES:
            raise ConfigError(f"policies[{i}]", name, f"unknown visiting policy (known: {', '.join(POLICIES)})")
    return list(dict.fromkeys(names))


def caches_from_config(entries: list[dict]) -> list[ChunkCache]:
    caches = []
    for i, entry in enumerate(entries):
        if int(entry["slots"]) < 1:
            raise ConfigError(f"chunk_cache[{i}].slots", entry["slots"], "must be at least 1")
        if not 0 <= float(entry["w0"]) <= 1:
            raise ConfigError(f"chunk_cache[{i}].w0", entry["w0"], "must be between 0 and 1")
        caches.append(ChunkCache.from_config(entry))
    return list(dict.fromkeys(caches))


@dataclass(frozen=True)
class TestFile:
    """One generated file: a layout and compression on a filesystem."""

    filesystem: Filesystem
    layout: Layout
    compression: Compression


@dataclass
class Sweep:
    name: str
    dataset: dict
    shape: Shape
    dtype: np.dtype
    layouts: list[Layout]
    compressions: list[Compression]
    filesystems: list[Filesystem]
    write_case: WriteCase
    read_cases: list[ReadCase]
    score: dict
    policies: list[str]
    chunk_caches: list
    scaling: ScalingCase | None
    metadata: MetadataCase | None
    iosize: IOSizeCase | None
    config: dict = field(repr=False)

    @classmethod
    def from_config(cls, config: dict) -> Sweep:
        """Semantic checks and expansion of a schema-valid config with defaults filled in."""
        dataset = config["dataset"]
        shape = tuple(int(v) for v in dataset["shape"])
        itemsize = np.dtype(dataset["dtype"]).itemsize
        fill = dataset["fill"]
        if isinstance(fill, dict):
            read_donor(fill["donor"]["path"], fill["donor"]["dataset"])
        return cls(
            name=config["sweep"],
            dataset=dataset,
            shape=shape,
            dtype=np.dtype(dataset["dtype"]),
            layouts=layouts_from_config(config["layouts"], shape),
            compressions=compressions_from_config(config["compression"]),
            filesystems=filesystems_from_config(config["filesystems"]),
            write_case=write_case_from_config(config["cases"]),
            read_cases=read_cases_from_config(config["cases"], shape),
            score=config["score"],
            policies=policies_from_config(config["policies"]),
            chunk_caches=caches_from_config(config["chunk_cache"]),
            scaling=optional_case_from_config(config["cases"], "scaling", shape, itemsize),
            metadata=optional_case_from_config(config["cases"], "metadata", shape, itemsize),
            iosize=optional_case_from_config(config["cases"], "iosize", shape, itemsize),
            config=config,
        )

    @property
    def raw_bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def fill(self) -> str:
        return fill_name(self.dataset)

    @property
    def hash(self) -> str:
        return config_hash(self.config)

    def compressions_for(self, layout: Layout) -> list[Compression]:
        """Filters need chunks: contiguous is measured uncompressed only."""
        return [NONE] if layout.chunk_shape is None else self.compressions

    def test_files(self) -> list[TestFile]:
        return [
            TestFile(fs, layout, comp)
            for fs in self.filesystems
            for layout in self.layouts
            for comp in self.compressions_for(layout)
        ]

    def layout(self, layout_id: str) -> Layout:
        """The configured layout with this id (carrying its name, if it was given one)."""
        return next((lay for lay in self.layouts if lay.id == layout_id), Layout.from_id(layout_id))

    def filesystem(self, name: str) -> Filesystem:
        return next(fs for fs in self.filesystems if fs.name == name)

    def largest_file_bytes(self) -> int:
        """Upper bound of one test file's size: all allocated chunks, uncompressed."""
        return max(layout.allocated_elements(self.shape) for layout in self.layouts) * self.dtype.itemsize
