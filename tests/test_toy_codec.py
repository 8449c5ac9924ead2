"""A new codec is one module and one registry line: a toy codec (deflate with HDF5's Fletcher-32
checksum; plain deflate in Zarr), added to a copy of the project in exactly those two places,
is validated, written and read by a real Snakemake run on HDF5 and Zarr (every value checked),
and listed in the config's description and in config/README.md's codec table."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import ProjectCopy, tiny_config

TOY = '''"""A toy codec: deflate, with HDF5's Fletcher-32 checksum of every chunk."""

from h5sweep.storage.codecs import Codec, HDF5Filter, ZarrCodec


def _zarr(params, itemsize):
    from zarr.codecs import GzipCodec

    return GzipCodec(level=params["level"])


def _numcodec(params):
    import numcodecs

    return numcodecs.GZip(level=params["level"])


CODECS = (
    Codec(
        "toy",
        "toy-<level 1-9>",
        r"toy-(?P<level>[1-9])",
        "deflate with a checksum of every chunk (tests/test_toy_codec.py)",
        codec="gzip",
        levels=range(1, 10),
        hdf5=HDF5Filter(lambda p: {"compression": "gzip", "compression_opts": p["level"], "fletcher32": True}),
        zarr=ZarrCodec(_zarr, _numcodec),
        readme=("`toy-<1-9>`", "deflate with a Fletcher-32 checksum (a test's toy)", "as gzip"),
    ),
)
'''


@pytest.mark.workflow
def test_a_new_codec_is_one_module_and_one_registry_line(tmp_path):
    project = ProjectCopy(tmp_path / "project")
    root = project.root
    package = root / "src" / "h5sweep" / "storage" / "codecs"
    (package / "toy.py").write_text(TOY)
    registry = package / "__init__.py"
    line = '    "bzip2",\n)'
    assert line in registry.read_text()
    registry.write_text(registry.read_text().replace(line, '    "bzip2",\n    "toy",\n)'))
    untouched = project.code()

    config = tiny_config(tmp_path, sweep="toy")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config.update(backends=["hdf5", "zarr"], compression=["none", "toy-1"])
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [512]}}
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 3, "depth": 25}}
    (root / "toy.yaml").write_text(yaml.safe_dump(config))
    run = project.run("snakemake", "--cores", "2", "--configfile", "toy.yaml")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = pd.read_parquet(root / "results" / "toy" / "measurements.parquet")
    toy = rows[rows["compression"] == "toy-1"]
    # written and read (every value checked against the source) by both backends
    assert set(toy["backend"]) == {"hdf5", "zarr"} and set(toy["case"]) == {"write", "slice"}
    assert set(toy.loc[toy["backend"] == "hdf5", "filter_family"]) == {"hdf5"}
    sizes = rows[rows["case"] == "write"].groupby(["backend", "compression"])["file_bytes"].max()
    assert sizes[("hdf5", "toy-1")] < sizes[("hdf5", "none")] and sizes[("zarr", "toy-1")] < sizes[("zarr", "none")]
    docs = project.run("python", "-m", "h5sweep.sweep.config", "config/README.md")
    readme = (root / "config" / "README.md").read_text()
    assert docs.returncode == 0 and "| `toy-<1-9>` | deflate with a Fletcher-32 checksum (a test's toy) |" in readme
    assert "toy-<level 1-9>" in readme  # the compression key's list of names
    assert project.changed_since(untouched) == []
