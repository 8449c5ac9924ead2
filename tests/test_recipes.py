"""The code the decision sheet prints for the chosen store: run as printed, it writes a store
of the chosen layout, codec and file-space strategy, and its read code opens it with the
measured setting and reads the same values."""

import h5py
import numpy as np
import pytest
import zarr

from h5sweep.backends import REGISTRY
from h5sweep.backends.chunk_cache import ChunkCache
from h5sweep.backends.recipes import Store
from h5sweep.backends.zarr_readers import STORE_SETTINGS
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.layouts import Layout

SHAPE = (12, 10, 300)
CACHE = ChunkCache(3 * 2**20, 1009, 0.5)


def data() -> np.ndarray:
    return (np.arange(np.prod(SHAPE), dtype=np.uint16) % 251).reshape(SHAPE)


def run(backend: str, layout_id: str, compression: str, path, setting: str = ""):
    """The recipe's write and read code run as printed: the values read back, and the recipe."""
    store = Store(Layout.from_id(layout_id), parse_compression(compression), SHAPE, "uint16", setting)
    recipe = REGISTRY[backend].recipe(store)
    exec(recipe.write, {"data": data(), "path": str(path)})  # noqa: S102 - the printed code, as a user runs it
    opened = {"path": str(path)}
    exec(recipe.read, opened)  # noqa: S102
    values = np.asarray(opened["data"][...])
    if "f" in opened:
        opened["f"].close()
    return values, recipe


def test_hdf5_the_printed_code_writes_the_chunks_and_codec_and_reads_with_the_measured_cache(tmp_path):
    path = tmp_path / "store.h5"
    values, recipe = run("hdf5", "chunked-4x5x100", "shuffle+gzip-6", path, CACHE.setting)
    assert np.array_equal(values, data())
    with h5py.File(path, "r") as f:
        dset = f["data"]
        assert dset.chunks == (4, 5, 100) and dset.compression == "gzip" and dset.compression_opts == 6
        assert dset.shuffle
        strategy = f.id.get_create_plist().get_file_space_strategy()[0]
        assert strategy != h5py.h5f.FSPACE_STRATEGY_PAGE
    assert "rdcc_nbytes=3145728, rdcc_nslots=1009, rdcc_w0=0.5" in recipe.read
    assert any("8 MiB in HDF5 2.0" in note for note in recipe.read_notes)
    assert recipe.replaces == "read with a 3 MiB chunk cache, not HDF5's own default (8 MiB in HDF5 2.0, not measured)"
    assert any("h5repack -l data:CHUNK=4x5x100 -f data:SHUF -f data:GZIP=6" in n for n in recipe.write_notes)


def test_hdf5_paged_the_printed_code_writes_paged_aggregation_at_the_page_size(tmp_path):
    path = tmp_path / "paged.h5"
    values, recipe = run("hdf5", f"chunked-4x5x100-paged-{2**16}", "gzip-4", path, CACHE.setting)
    assert np.array_equal(values, data())
    with h5py.File(path, "r") as f:
        plist = f.id.get_create_plist()
        assert plist.get_file_space_strategy()[0] == h5py.h5f.FSPACE_STRATEGY_PAGE
        assert plist.get_file_space_page_size() == 2**16
        assert f["data"].chunks == (4, 5, 100) and f["data"].compression_opts == 4
    assert any("paged aggregation" in note and "64 KiB" in note for note in recipe.write_notes)
    assert any("-S PAGE -G 65536" in note for note in recipe.write_notes)


def test_hdf5_contiguous_and_a_plugin_codec(tmp_path):
    values, recipe = run("hdf5", "contiguous", "none", tmp_path / "c.h5", CACHE.setting)
    assert np.array_equal(values, data()) and not recipe.read_notes and not recipe.replaces  # no chunk cache
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert f["data"].chunks is None
    values, recipe = run("hdf5", "chunked-4x5x100", "zstd-3", tmp_path / "z.h5")
    assert np.array_equal(values, data()) and "import hdf5plugin" in recipe.write
    with h5py.File(tmp_path / "z.h5", "r") as f:
        assert "32015" in f["data"]._filters  # Zstandard's filter id
    assert not any("h5repack" in note for note in recipe.write_notes)  # h5repack does not name it


def test_hdf5_a_transposed_layout_is_written_in_its_storage_order(tmp_path):
    values, recipe = run("hdf5", "chunked-zxy-4x5x100", "none", tmp_path / "t.h5")
    layout = Layout.from_id("chunked-zxy-4x5x100")
    assert values.shape == layout.to_storage(SHAPE)
    assert np.array_equal(values, data().transpose(layout.axes_of(3)))
    assert any("order zxy" in note for note in recipe.write_notes)


@pytest.mark.parametrize("layout_id", ["chunked-4x5x100", "chunked-2x5x100-shards-4x10x300"])
def test_zarr_the_printed_code_writes_the_chunks_shards_and_codec(tmp_path, layout_id):
    path = tmp_path / "store.zarr"
    setting = f"zarr.config.set({{'async.concurrency': 4}}); {STORE_SETTINGS['']}"
    values, recipe = run("zarr", layout_id, "gzip-5", path, setting)
    assert np.array_equal(values, data())
    array = zarr.open_array(str(path), mode="r")
    layout = Layout.from_id(layout_id)
    if layout.shard_shape:
        assert array.shards == layout.shard_shape and array.chunks == layout.chunk_shape
    else:
        assert array.chunks == layout.chunk_shape and array.shards is None
    codecs = [c.to_dict() for c in array.metadata.codecs]
    found = codecs if not layout.shard_shape else codecs[0]["configuration"]["codecs"]
    assert {"name": "gzip", "configuration": {"level": 5}} in found
    assert "zarr.config.set({'async.concurrency': 4})" in recipe.read


def test_raw_the_printed_code_writes_a_npy_file(tmp_path):
    values, _ = run("raw", "contiguous", "none", tmp_path / "a.npy")
    assert np.array_equal(values, data())
