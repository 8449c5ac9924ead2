"""The storage backend interface and the codec table, on real HDF5 files."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest

from h5sweep import backends
from h5sweep.backends import hdf5_filters
from h5sweep.backends.chunk_cache import DEFAULT_CACHE
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.storage import codecs
from h5sweep.storage.codecs import CODECS, Codec, HDF5Filter, compressions_from_config, parse_compression
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.storage.selections import Selection

DATA = np.arange(12 * 10 * 300, dtype=np.uint16).reshape(12, 10, 300) % 977


@pytest.mark.parametrize("layout", [Layout(None), Layout((4, 4, 64)), Layout((4, 4, 64), order="zxy")])
def test_hdf5_backend_writes_opens_and_reads_a_store(tmp_path, layout):
    path = str(tmp_path / "store.hdf5")
    gzip = parse_compression("gzip-2")
    codec = gzip if layout.chunk_shape else parse_compression("none")
    writes = HDF5.write(path, storage_order(DATA, layout), layout, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    assert writes == layout.n_chunks(DATA.shape) if layout.chunk_shape else writes >= 1
    assert HDF5.footprint_bytes(path) == (tmp_path / "store.hdf5").stat().st_size
    assert HDF5.paths_to_evict(path) == [path]
    selection = Selection((3, 2, 100), (5, 4, 70))
    buffer = np.empty(layout.to_storage(selection.size), dtype=DATA.dtype)
    store = HDF5.open_for_reads(path, "data", DEFAULT_CACHE)
    try:
        read = store.prepare(layout.to_storage(selection.start), buffer)
        read()
    finally:
        store.close()
    assert store.open_s > 0
    np.testing.assert_array_equal(buffer.transpose(np.argsort(layout.axes)), DATA[selection.region])
    stored = HDF5.stored_chunks(path, layout, "data")
    if layout.chunk_shape is None:
        assert stored.touched(selection) == selection.nbytes(2)
    else:
        with h5py.File(path, "r") as f:
            sizes = [f["data"].id.get_chunk_info(i).size for i in range(f["data"].id.get_num_chunks())]
        everything = Selection((0, 0, 0), DATA.shape)
        assert stored.touched(everything) == sum(sizes)
        assert 0 < stored.touched(selection) < sum(sizes)


def test_the_backend_registry_names_stores_and_refuses_unknown_backends():
    path = backends.store_path("/data", "demo", "hdf5", "chunked-4x4x64", "gzip-2")
    assert path == "/data/demo/chunked-4x4x64/gzip-2.hdf5"
    assert backends.load("hdf5") is HDF5 and set(HDF5.versions()) == {
        "h5py_version",
        "hdf5_version",
        "hdf5plugin_version",
    }
    with pytest.raises(ConfigError, match=r"backends\[1\]='zarr2'.*unknown storage backend"):
        backends.specs_from_config(["hdf5", "zarr2"])


def test_the_compression_wildcard_comes_from_the_codec_table():
    names = ["none", "gzip-0", "gzip-9"]
    assert [c.name for c in compressions_from_config(names)] == names
    for name in names:
        assert re.fullmatch(codecs.WILDCARD, name)
    for name in ["gzip-10x", "gzip-04", "nonex", "gzip"]:
        assert not re.fullmatch(codecs.WILDCARD, name)


def test_a_codec_added_to_the_table_is_parsed_written_and_read_back(tmp_path, monkeypatch):
    """Adding a codec is one entry in the codec table and one in HDF5's mapping: HDF5's
    Fletcher-32 checksum (in every HDF5 build) with no chunk encoder, so the fast path falls
    back to HDF5's own pipeline."""
    monkeypatch.setitem(CODECS, "fletcher32", Codec("fletcher32", "fletcher32", r"fletcher32", "checksum"))
    monkeypatch.setitem(hdf5_filters.FILTERS, "fletcher32", HDF5Filter(lambda p: {"fletcher32": True}))
    codec = parse_compression("fletcher32")
    assert codec.lossless and hdf5_filters.chunk_encoder(codec, 2) is None
    assert not hdf5_filters.has_chunk_encoder(codec)
    path = str(tmp_path / "fletcher32.hdf5")
    method = HDF5.write_fast(path, DATA, Layout((4, 4, 64)), codec, "data", 2)
    assert method == "standard"
    with h5py.File(path, "r") as f:
        assert f["data"].fletcher32
        np.testing.assert_array_equal(f["data"][...], DATA)


def test_a_codec_this_installation_cannot_run_is_refused_naming_the_entry(monkeypatch):
    missing = Codec("nosuch", "nosuch-<level>", r"nosuch-(?P<level>\d)", "x", requires=("h5sweep_no_such_module",))
    monkeypatch.setitem(CODECS, "nosuch", missing)
    with pytest.raises(ConfigError, match=r"compression\[1\]='nosuch-3'.*cannot run here.*h5sweep_no_such_module"):
        compressions_from_config(["none", "nosuch-3"])
