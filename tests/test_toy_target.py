"""A new storage target is one module and one registry line: a toy target (each store copied
through fsspec's local filesystem under another root, and read there), added to a copy of the
project in exactly those two places, is validated, written to and read from by a real
Snakemake run on HDF5 and Zarr (every value checked), and its block is in config/README.md."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ProjectCopy, tiny_config

TOY = (Path(__file__).parent / "toy_target.py").read_text()


@pytest.mark.workflow
def test_a_new_storage_target_is_one_module_and_one_registry_line(tmp_path):
    project = ProjectCopy(tmp_path / "project")
    root = project.root
    package = root / "src" / "h5sweep" / "storage" / "targets"
    (package / "mirror.py").write_text(TOY)
    registry = package / "__init__.py"
    line = '    "h5sweep.storage.targets.s3",\n)'
    assert line in registry.read_text()
    registry.write_text(registry.read_text().replace(line, line[:-1] + '    "h5sweep.storage.targets.mirror",\n)'))
    untouched = project.code()

    mirror = tmp_path / "mirror"
    config = tiny_config(tmp_path, sweep="toy")
    config["filesystems"] = {"far": {"path": str(tmp_path / "staging"), "settle_s": 0, "mirror": {"root": ""}}}
    config.update(backends=["hdf5", "zarr"], compression=["none"])
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [512]}}
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 3, "depth": 25}}
    (root / "toy.yaml").write_text(yaml.safe_dump(config))
    refused = project.run("python", "-m", "h5sweep.sweep", "--configfile", "toy.yaml", "-q")
    assert refused.returncode == 2 and "filesystems.far.mirror.root=''" in refused.stderr, refused.stderr

    config["filesystems"]["far"]["mirror"]["root"] = str(mirror)
    (root / "toy.yaml").write_text(yaml.safe_dump(config))
    run = project.run("snakemake", "--cores", "2", "--configfile", "toy.yaml")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = pd.read_parquet(root / "results" / "toy" / "measurements.parquet")
    # written and read (every value checked against the source) by both backends, on the mirror
    assert set(rows["backend"]) == {"hdf5", "zarr"} and set(rows["case"]) == {"write", "slice"}
    assert set(rows["fs_type"]) == {"mirror"} and set(rows["fs_path"]) == {str(mirror)}
    # every store read was opened at its copy under the mirror's root, and only there
    opened = set((mirror / "opened.txt").read_text().split())
    read = rows[rows["case"] == "slice"][["backend", "layout"]].drop_duplicates()
    assert len(opened) == len(read) > 1 and all(Path(p).is_relative_to(mirror) for p in opened)
    assert {Path(p).suffix for p in opened} == {".hdf5", ".zarr"}
    docs = project.run("python", "-m", "h5sweep.sweep.config", "config/README.md")
    readme = (root / "config" / "README.md").read_text()
    assert docs.returncode == 0 and "| `filesystems.<name>.mirror.root` |" in readme
    assert project.changed_since(untouched) == []
