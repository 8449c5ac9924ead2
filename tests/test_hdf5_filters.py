"""Every filter of the codec table on real HDF5 files: written, read back, checked."""

import zlib
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml

from h5sweep import backends
from h5sweep.backends import hdf5_filters
from h5sweep.backends.chunk_cache import DEFAULT_CACHE
from h5sweep.backends.fastwrite import write_fast
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.measure.engine import verify
from h5sweep.storage.codecs import CODECS, compressions_from_config, parse_compression
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection
from h5sweep.sweep.model import load_sweep

# MSI-like: smooth spectra with a little noise, so that every filter has something to gain
RNG = np.random.default_rng(5)
DATA = (
    200 * np.exp(-(((np.arange(300) - 140) / 30.0) ** 2))[None, None, :] + RNG.integers(0, 8, (12, 10, 300))
).astype(np.uint16)
REPO = Path(__file__).resolve().parents[1]
LAYOUT = Layout((5, 3, 64))  # edge chunks along every axis
# The names users write (the contract of the grammar)
NAMES = [
    "gzip-4",
    "shuffle+gzip-4",
    "lzf",
    "shuffle+lzf",
    "szip-nn-16",
    "szip-ec-16",
    "scaleoffset-0",
    "nbit",
    "blosc-zstd-5-bitshuffle",
    "blosc-lz4-5-shuffle",
    "blosc-blosclz-3",
    "blosc2-zstd-5-shuffle",
    "blosc2-lz4-5",
    "zstd-3",
    "lz4",
    "bitshuffle-lz4",
    "bitshuffle-zstd",
    "bzip2-9",
]


@pytest.mark.parametrize("name", NAMES)
def test_every_filter_writes_and_reads_back_the_values_exactly(tmp_path, name):
    codec = parse_compression(name)
    path = str(tmp_path / "f.hdf5")
    HDF5.write(path, DATA, LAYOUT, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    with h5py.File(path, "r") as f:
        dset = f["data"]
        assert dset.chunks == LAYOUT.chunk_shape
        assert dset.id.get_create_plist().get_nfilters() >= 1  # the filter is in the pipeline
        np.testing.assert_array_equal(dset[...], DATA)
    stored = HDF5.stored_chunks(path, LAYOUT, "data").touched(Selection((0, 0, 0), DATA.shape))
    allocated = LAYOUT.n_chunks(DATA.shape) * LAYOUT.chunk_bytes(DATA.dtype.itemsize)
    if name != "nbit":  # n-bit packs nothing out of a full-precision type
        assert stored < allocated


def test_every_table_entry_is_exercised():
    lossy = {"sz3", "zfp"}  # on float data, below
    assert {parse_compression(n).family for n in NAMES} == set(CODECS) - {"none"} - lossy


def assert_same_chunks(fast: str, pipeline: str) -> list[tuple[int, bytes]]:
    """Every chunk of ``fast`` has the filter mask and bytes of ``pipeline``'s; returns them."""
    stored = []
    with h5py.File(fast, "r") as a, h5py.File(pipeline, "r") as b:
        ids = a["data"].id, b["data"].id
        assert ids[0].get_num_chunks() == ids[1].get_num_chunks() == LAYOUT.n_chunks(DATA.shape)
        for i in range(ids[1].get_num_chunks()):
            offset = ids[1].get_chunk_info(i).chunk_offset
            expected = ids[1].read_direct_chunk(offset)
            assert ids[0].read_direct_chunk(offset) == expected, offset
            stored.append(expected)
        np.testing.assert_array_equal(a["data"][...], b["data"][...])
    return stored


@pytest.mark.parametrize("level", [1, 4, 9])
def test_the_fast_path_writes_shuffled_gzip_chunks_byte_for_byte_as_hdf5(tmp_path, level):
    codec = parse_compression(f"shuffle+gzip-{level}")
    fast, pipeline = str(tmp_path / "fast.h5"), str(tmp_path / "pipeline.h5")
    assert write_fast(fast, DATA, LAYOUT, codec, "data", threads=2) is not None
    HDF5.write(pipeline, DATA, LAYOUT, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    _, expected = assert_same_chunks(fast, pipeline)[-1]
    # and the encoder is the shuffle filter then deflate: undo both by hand
    raw = zlib.decompress(expected)
    assert len(raw) == 2 * np.prod(LAYOUT.chunk_shape)
    with h5py.File(fast, "r") as f:
        np.testing.assert_array_equal(f["data"][...], DATA)


BLOSC_NAMES = [
    f"blosc-{c}-{lv}{s}"
    for c in ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
    for lv, s in ((5, ""), (5, "-shuffle"), (9, "-bitshuffle"))
]


@pytest.mark.parametrize("name", BLOSC_NAMES + ["blosc-lz4-0", "blosc-zstd-1-shuffle"])
@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_the_fast_path_writes_blosc_chunks_byte_for_byte_as_the_plugin(tmp_path, name, dtype):
    """numcodecs' Blosc in a pool of threads stores what hdf5plugin's filter stores, edge
    chunks included; at level 0 the filter stores each chunk uncompressed in Blosc's frame."""
    codec, data = parse_compression(name), DATA.astype(dtype)
    fast, pipeline = str(tmp_path / "fast.h5"), str(tmp_path / "pipeline.h5")
    assert write_fast(fast, data, LAYOUT, codec, "data", threads=2) == "direct-chunk-2-threads"
    HDF5.write(pipeline, data, LAYOUT, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    assert_same_chunks(fast, pipeline)


def test_where_blosc_cannot_shrink_a_chunk_the_fast_path_stores_it_raw_as_hdf5_does(tmp_path):
    """Noise does not compress: hdf5plugin's Blosc filter gives up on such a chunk and HDF5
    stores it raw with the filter marked skipped. The fast path does the same, chunk by chunk."""
    noise = np.random.default_rng(9).integers(0, 2**16, DATA.shape, dtype=np.uint16)
    mixed = np.where(np.arange(DATA.shape[0])[:, None, None] < 5, noise, DATA).astype(np.uint16)
    codec = parse_compression("blosc-lz4-5")
    fast, pipeline = str(tmp_path / "fast.h5"), str(tmp_path / "pipeline.h5")
    write_fast(fast, mixed, LAYOUT, codec, "data", threads=2)
    HDF5.write(pipeline, mixed, LAYOUT, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    stored = assert_same_chunks(fast, pipeline)
    raw_bytes = int(np.prod(LAYOUT.chunk_shape)) * 2
    assert {mask for mask, payload in stored if len(payload) == raw_bytes} == {1}  # skipped: raw
    assert {mask for mask, payload in stored if len(payload) < raw_bytes} == {0}
    assert 0 < sum(mask for mask, _ in stored) < len(stored)
    with h5py.File(fast, "r") as f:
        np.testing.assert_array_equal(f["data"][...], mixed)


def test_only_filters_whose_chunks_are_reproduced_exactly_have_a_fast_path():
    """Zstd's frames from other encoders differ from the plugin's (they read back equal, but a
    fast file must be the file the pipeline would write), so Zstd and the rest use HDF5's."""
    fast = {n for n in NAMES if hdf5_filters.has_chunk_encoder(parse_compression(n))}
    assert fast == {"gzip-4", "shuffle+gzip-4", "blosc-zstd-5-bitshuffle", "blosc-lz4-5-shuffle", "blosc-blosclz-3"}


@pytest.mark.parametrize(
    "names, dtype, reason",
    [
        (["scaleoffset-0"], "float32", "handles integer data only, not float32"),
        (["nbit"], "float64", "handles integer data only, not float64"),
        (["szip-nn-15"], "uint16", "szip pixels per block must be even, 2 to 32, not 15"),
        (["blosc-zstd-10-shuffle"], "uint16", "blosc level 10 is out of range 0-9"),
        (["blosc-snappy-5"], "uint16", "does not match the grammar"),
        (["zstd-23"], "uint16", "zstd level 23 is out of range 1-22"),
        (["sz3-abs-0.5"], "uint16", "handles floating-point data only, not uint16"),
        (["sperr-2"], "uint16", "unknown compression filter"),
    ],
)
def test_filters_that_cannot_handle_the_data_are_refused_before_any_job(names, dtype, reason):
    with pytest.raises(ConfigError, match=reason) as err:
        compressions_from_config(["none", *names], np.dtype(dtype), 3)
    assert f"compression[1]={names[0]!r}" in str(err.value)


def test_rows_name_the_filter_family_codec_level_and_shuffle():
    hdf5 = backends.spec(backends.HDF5)
    columns = {
        n: {"filter_family": hdf5.filter_family(c), **c.columns()}
        for n, c in ((n, parse_compression(n)) for n in ["none", "shuffle+gzip-4", "blosc-zstd-5-bitshuffle", "lz4"])
    }
    assert columns["none"] == {"filter_family": "none", "codec": "none", "codec_level": None, "shuffle": "none"}
    assert columns["shuffle+gzip-4"] == {"filter_family": "hdf5", "codec": "gzip", "codec_level": 4, "shuffle": "byte"}
    assert columns["blosc-zstd-5-bitshuffle"]["filter_family"] == "hdf5plugin"
    assert columns["blosc-zstd-5-bitshuffle"]["shuffle"] == "bit"
    assert columns["lz4"]["codec_level"] is None


FLOATS = DATA.astype(np.float32) * np.float32(1.37)


@pytest.mark.parametrize(
    "name, dtype", [("sz3-abs-0.5", "float32"), ("zfp-rate-8", "float32"), ("zfp-rate-16", "float64")]
)
def test_lossy_filters_keep_values_within_their_stated_bound(tmp_path, name, dtype):
    codec = parse_compression(name)
    data = FLOATS.astype(dtype)
    assert not codec.lossless and compressions_from_config([name], np.dtype(dtype), 3)
    bound = codec.tolerance(lambda: float(np.abs(data).max()))
    assert bound == pytest.approx(0.5, rel=1e-5) if name.startswith("sz3") else bound > 0
    path = str(tmp_path / "lossy.hdf5")
    HDF5.write(path, data, LAYOUT, codec, "data", "chunk", "ifset", DEFAULT_CACHE)
    with h5py.File(path, "r") as f:
        back = f["data"][...]
    error = np.abs(back.astype(np.float64) - data)
    assert 0 < error.max() <= bound  # lossy indeed, and within what the check allows
    verify(back, data, "lossy", bound)
    with pytest.raises(VerificationError, match="values differ"):
        verify(back + np.float32(2 * bound), data, "shifted", bound)


def test_lossy_filters_are_refused_for_integers_and_with_the_exact_scaling_check():
    with pytest.raises(
        ConfigError, match=r"compression\[0\]='zfp-rate-8': handles floating-point data only, not uint16"
    ):
        compressions_from_config(["zfp-rate-8"], np.dtype("uint16"), 3)
    config = yaml.safe_load((REPO / "tests" / "configs" / "scaling.yaml").read_text())
    config["dataset"]["dtype"] = "float32"
    config["compression"] = ["none", "sz3-abs-0.5"]
    with pytest.raises(ConfigError, match=r"compression\[1\]='sz3-abs-0.5': is lossy, and the scaling case"):
        load_sweep(config)


@pytest.mark.workflow
def test_a_sweep_over_plugin_and_shuffled_filters_runs_end_to_end(workflow, tmp_path):
    """Names with '+' become paths, the plugin filters are registered in every job that
    writes or reads, and every row says which filter it measured."""
    from conftest import tiny_config

    config = tiny_config(tmp_path, sweep="filters")
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [512]}}
    config["compression"] = ["none", "shuffle+gzip-1", "blosc-zstd-3-bitshuffle", "bzip2-1"]
    config["cases"] = {"write": {"repeats": 1}, "spectra": {"repeats": 3, "size": 5}}
    path = workflow.write_config(config, "filters.yaml")
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    summary = pd.read_parquet(workflow.root / "results" / "filters" / "summary.parquet")
    reads = summary[(summary["case"] == "spectra") & (summary["filesystem"] == "disk")]
    found = {row["compression"]: (row["filter_family"], row["codec"], row["shuffle"]) for _, row in reads.iterrows()}
    assert found == {
        "none": ("none", "none", "none"),
        "shuffle+gzip-1": ("hdf5", "gzip", "byte"),
        "blosc-zstd-3-bitshuffle": ("hdf5plugin", "blosc", "bit"),
        "bzip2-1": ("hdf5plugin", "bzip2", "none"),
    }
    assert (reads[reads["compression"] != "none"]["compression_ratio"] > 1).all()
    measured = pd.read_parquet(workflow.root / "results" / "filters" / "measurements.parquet")
    assert set(measured["hdf5plugin_version"]) == {"7.1.0"}
