"""Storage targets (:mod:`h5sweep.storage.targets`): each declares its block, and what it
cannot serve is refused when the config is read, naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import read_config_file

from h5sweep import backends
from h5sweep.backends.base import Capabilities
from h5sweep.storage import targets
from h5sweep.storage.errors import ConfigError
from h5sweep.sweep.config import load_schema
from h5sweep.sweep.model import load_sweep

CLOUD = Path(__file__).parents[1] / "config" / "cloud.yaml"


def test_each_target_with_a_key_declares_its_block_in_the_schema():
    schema = load_schema()
    found = str(schema)
    for target in targets.KEYED:
        assert target.settings is not None and target.settings.description in found
    assert targets.DIRECTORY.key is None and targets.DIRECTORY.reads is None


def test_a_filesystem_is_on_the_target_whose_block_it_sets(tmp_path):
    config = read_config_file(CLOUD)
    config["filesystems"]["disk"] = {"path": str(tmp_path / "disk")}
    sweep = load_sweep(config, probe=False)
    kinds = {fs.name: fs.target.name for fs in sweep.filesystems}
    assert kinds["disk"] == "posix" and {kinds[n] for n in kinds if n != "disk"} == {"s3"}
    assert not sweep.filesystem("cloud_0ms").target.fills_page_cache


def test_a_backend_that_reads_no_object_store_is_refused_on_one_naming_the_key(tmp_path, monkeypatch):
    """A backend whose capabilities do not list an object store's source is refused before any
    job runs, naming its place in ``backends`` and the filesystem, not left to fail in a job;
    on a directory it is measured."""
    toy = dataclasses.replace(
        backends.REGISTRY[backends.RAW],
        name="toy",
        capabilities=Capabilities(contiguous=True, chunks=False, codec_families=("none",)),
    )
    monkeypatch.setitem(backends.REGISTRY, "toy", toy)
    config = read_config_file(CLOUD)
    config["backends"] = [backends.HDF5, "toy"]
    with pytest.raises(ConfigError, match=r"backends\[1\]='toy'.*filesystems\.cloud_0ms\.s3.*'s3'"):
        load_sweep(config, probe=False)
    config["filesystems"] = {"disk": {"path": str(tmp_path / "disk")}}
    assert [b.name for b in load_sweep(config, probe=False).backends] == [backends.HDF5, "toy"]
