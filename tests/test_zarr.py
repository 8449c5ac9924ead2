"""The Zarr backend on real Zarr v3 stores on the disk the tests run on: written by zarr-python
and by the fast path (byte for byte the same), read cold by zarr-python and tensorstore, values
checked, counted evidence per read and per store."""

import copy
import os
from pathlib import Path

import numpy as np
import pytest
import zarr
from conftest import read_cases, read_config_file

from h5sweep.backends import REGISTRY, load
from h5sweep.backends.chunk_cache import DEFAULT_CACHE as HDF5_CACHE
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.zarr import BACKEND as ZARR
from h5sweep.backends.zarr import chunk_file, store_files
from h5sweep.backends.zarr_readers import ZarrReader
from h5sweep.cases import WriteCase, read_cases_from_config
from h5sweep.cases.write.run import generate
from h5sweep.measure import pagecache
from h5sweep.measure.engine import OpenedForReads, ReadPlan, StoreUnderTest, run_reads
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.sweep.model import load_sweep

SHAPE = (23, 17, 301)  # edge chunks along every axis of the layouts below
LAYOUT = Layout((5, 4, 64))
READERS = [ZarrReader("zarr-python", 10), ZarrReader("tensorstore")]


@pytest.fixture(scope="session")
def source():
    return SyntheticSource(SHAPE, np.uint16, seed=4)


@pytest.fixture(scope="session")
def data(source):
    return source.materialize()


def chunk_bytes_of(path: str, layout: Layout) -> dict:
    grid = layout.storage_layout().chunk_grid(zarr.open_array(path, mode="r").shape)
    return {index: Path(chunk_file(path, index)).read_bytes() for index in np.ndindex(*grid)}


@pytest.mark.parametrize(
    "compression",
    ["none", "blosc-lz4-5-shuffle", "blosc-zstd-3-bitshuffle", "blosc-blosclz-5", "gzip-4", "zstd-3"],
)
@pytest.mark.parametrize("layout", [LAYOUT, Layout((5, 4, 64), order="zxy")], ids=["xyz", "zxy"])
def test_the_fast_path_writes_zarr_pythons_store_byte_for_byte(tmp_path, data, compression, layout):
    comp = parse_compression(compression)
    fast, standard = str(tmp_path / "fast.zarr"), str(tmp_path / "standard.zarr")
    assert ZARR.write_fast(fast, data, layout, comp, "data", 2) == "zarr-chunk-files-2-threads"
    ZARR.write(standard, storage_order(data, layout), layout, comp, "data", "chunk", "ifset", None)
    fast_chunks, standard_chunks = chunk_bytes_of(fast, layout), chunk_bytes_of(standard, layout)
    assert len(fast_chunks) == layout.n_chunks(SHAPE)
    if comp.family == "gzip":  # a gzip member's header holds its write time (bytes 4-7): as
        # between two of zarr-python's own writes a second apart, only that may differ
        fast_chunks, standard_chunks = (
            {k: v[:4] + v[8:] for k, v in c.items()} for c in (fast_chunks, standard_chunks)
        )
    assert fast_chunks == standard_chunks  # every chunk, edge chunks included
    assert Path(fast, "zarr.json").read_text() == Path(standard, "zarr.json").read_text()
    np.testing.assert_array_equal(zarr.open_array(fast, mode="r")[...], storage_order(data, layout))


def test_a_store_counts_its_files_directories_and_bytes(tmp_path, data):
    path = str(tmp_path / "s.zarr")
    ZARR.write_fast(path, data, LAYOUT, parse_compression("blosc-lz4-5"), "data", 1)
    grid = LAYOUT.chunk_grid(SHAPE)  # 5 x 5 x 5
    counts = ZARR.store_counts(path)
    # zarr.json and one file per chunk; the store, c/, c/i and c/i/j directories
    assert counts == {"store_files": 1 + 125, "store_directories": 1 + 1 + grid[0] + grid[0] * grid[1]}
    assert ZARR.footprint_bytes(path) == sum(os.path.getsize(f) for f in store_files(path))
    stored = ZARR.stored_chunks(path, LAYOUT, "data")
    assert int(stored.sizes.sum()) == ZARR.footprint_bytes(path) - os.path.getsize(os.path.join(path, "zarr.json"))


def test_cold_first_access_evicts_every_chunk_file(tmp_path, data):
    path = str(tmp_path / "cold.zarr")
    ZARR.write_fast(path, data, LAYOUT, parse_compression("none"), "data", 1)
    for f in store_files(path):  # warm every file
        Path(f).read_bytes()
    assert pagecache.resident_fraction_of(store_files(path)) > 0.9
    opened = OpenedForReads(ZARR, path, "data", READERS[0], True, True, LAYOUT)
    try:
        assert opened.evictable and opened.resident < 0.05
        chunk_files = [f for f in store_files(path) if not f.endswith("zarr.json")]  # the open read zarr.json
        assert len(chunk_files) == LAYOUT.n_chunks(SHAPE)
        assert max(pagecache.resident_fraction(f) for f in chunk_files) == 0
    finally:
        opened.close()


@pytest.fixture(scope="session")
def stores(tmp_path_factory, data):
    """A contiguous HDF5 file, and the same chunked layout as HDF5 and as Zarr (gzip-1)."""
    directory = tmp_path_factory.mktemp("zarr-vs-hdf5")
    gzip = parse_compression("gzip-1")
    made = {}
    for backend, layout, comp in [
        (HDF5, Layout(None), parse_compression("none")),
        (HDF5, LAYOUT, gzip),
        (ZARR, LAYOUT, gzip),
    ]:
        path = os.path.join(directory, f"{layout.id}.{backend.name}")
        cache = None if backend is ZARR else HDF5_CACHE
        generate(backend, path, data, layout, comp, WriteCase({"repeats": 1}), "data", 2, cache)
        made[(backend.name, layout.id)] = path
    return made


def test_each_zarr_reader_reads_cold_checks_values_and_counts_evidence(stores, source):
    cases = read_cases_from_config(
        {"spectra": {"repeats": 4, "size": 3, "cold": "every"}, "slice": {"repeats": 2, "cold": "first"}}, SHAPE
    )
    path = stores[("zarr", LAYOUT.id)]
    rows = read_cases(ZARR, path, cases, SHAPE, 7, source, LAYOUT, options=READERS)
    assert {r["reader"] for r in rows} == {"zarr-python", "tensorstore"}
    assert {r["zarr_concurrency"] for r in rows if r["reader"] == "tensorstore"} == {None}
    assert {r["variant"].split(", ")[1] for r in rows} == {"zarr-python concurrency 10", "tensorstore"}
    for reader in ("zarr-python", "tensorstore"):
        mine = [r for r in rows if r["reader"] == reader]
        assert len(mine) == 4 + 2
        every = [r for r in mine if r["cold_mode"] == "every"]
        # every first access came from the device, and read at least the chunk files it touches
        assert {r["cache_state"] for r in every} == {"cold"}
        assert min(r["device_read_bytes"] - r["stored_bytes_touched"] for r in every) >= 0
        assert all(r["chunks_touched"] == LAYOUT.chunks_touched(*_start_size(r["selection"])) for r in mine)
        assert {r["cache_holds_chunk"] for r in mine} == {None}
    # the same selections for both readers (paired)
    assert [r["selection"] for r in rows if r["reader"] == "tensorstore"] == [
        r["selection"] for r in rows if r["reader"] == "zarr-python"
    ]


def _start_size(label: str):
    parts = [p.split(":") for p in label.strip("[]").split(", ")]
    return tuple(int(a) for a, _ in parts), tuple(int(b) - int(a) for a, b in parts)


def test_a_corrupt_zarr_chunk_is_named_by_store_case_and_selection(tmp_path, data, source):
    path = str(tmp_path / "bad.zarr")
    ZARR.write_fast(path, data, LAYOUT, parse_compression("gzip-1"), "data", 1)
    for index in np.ndindex(*LAYOUT.chunk_grid(SHAPE)):
        with open(chunk_file(path, index), "r+b") as f:
            f.seek(12)
            f.write(b"\xff" * 16)
    cases = read_cases_from_config({"slice": {"repeats": 1}}, SHAPE)
    for reader in READERS:
        with pytest.raises(VerificationError, match=r"bad\.zarr case slice repeat 0 .*Zarr could not read"):
            read_cases(ZARR, path, cases, SHAPE, 1, source, LAYOUT, options=[reader])


def test_values_that_differ_from_the_source_fail_the_check(tmp_path, data, source):
    path = str(tmp_path / "wrong.zarr")
    ZARR.write_fast(path, data + 1, LAYOUT, parse_compression("none"), "data", 1)
    cases = read_cases_from_config({"spectra": {"repeats": 1, "size": 2}}, SHAPE)
    with pytest.raises(VerificationError, match="values differ from the data source"):
        read_cases(ZARR, path, cases, SHAPE, 1, source, LAYOUT, options=READERS[1:])


def test_interleaved_reads_pair_zarr_readers_with_hdf5_stores(stores, source):
    under_test = [
        StoreUnderTest(load(name), path, Layout.from_id(layout_id), source, read_options=options)
        for (name, layout_id), path in stores.items()
        for options in [READERS if name == "zarr" else [HDF5_CACHE]]
    ]
    cases = read_cases_from_config({"spectra": {"repeats": 3, "size": 2, "cold": "every"}}, SHAPE)
    run_reads(under_test, ReadPlan(cases, SHAPE, 2))
    hdf5, zarr_store = under_test[0], under_test[2]
    assert [r["reader"] for r in hdf5.rows] == ["h5py"] * 3
    assert [r["reader"] for r in zarr_store.rows] == ["zarr-python"] * 3 + ["tensorstore"] * 3
    assert [r["read_option_index"] for r in zarr_store.rows] == [0] * 3 + [1] * 3
    # one pass interleaves the three stores, the Zarr store once per reader: four readers
    assert [r["interleaved_stores"] for r in zarr_store.rows] == [4] * 6
    assert {r["selection"] for r in zarr_store.rows} == {r["selection"] for r in hdf5.rows}


def config_with(**changes):
    config = copy.deepcopy(read_config_file(Path(__file__).parent / "configs" / "tiny.yaml"))
    config.update(changes)
    return config


def test_a_zarr_sweep_stores_chunked_layouts_in_the_codecs_zarr_shares():
    config = config_with(backends=["hdf5", "zarr"], compression=["none", "gzip-1", "lzf", "blosc-lz4-5"])
    sweep = load_sweep(config, probe=False)
    zarr_stores = [tf for tf in sweep.stores() if tf.backend.name == "zarr"]
    assert zarr_stores and all(tf.layout.chunk_shape is not None for tf in zarr_stores)
    assert {tf.compression.name for tf in zarr_stores} == {"none", "gzip-1", "blosc-lz4-5"}
    hdf5_stores = [tf for tf in sweep.stores() if tf.backend.name == "hdf5"]
    assert "lzf" in {tf.compression.name for tf in hdf5_stores}
    assert [r.label for r in sweep.read_options("zarr")] == ["zarr-python concurrency 10", "tensorstore"]
    assert REGISTRY["zarr"].capabilities.directory_store and not REGISTRY["hdf5"].capabilities.directory_store


@pytest.mark.parametrize(
    "changes, key, reason",
    [
        ({"backends": ["zarr"]}, "backends", "needs hdf5 beside the others"),
        ({"backends": ["hdf5", "zarr"], "zarr": {"readers": ["n5"]}}, "zarr.readers", "n5"),
        ({"backends": ["hdf5", "zarr"], "zarr": {"concurrency": 0}}, "zarr.concurrency", "0"),
        ({"backends": ["hdf5", "parquet"]}, "backends", "parquet"),
    ],
)
def test_bad_zarr_settings_are_refused_naming_the_key(changes, key, reason):
    with pytest.raises(ConfigError) as err:
        load_sweep(config_with(**changes), probe=False)
    assert key in str(err.value) and reason in str(err.value)


def test_a_zarr_write_case_skips_hdf5s_fill_times(tmp_path, data):
    rows = generate(
        ZARR,
        str(tmp_path / "w.zarr"),
        data,
        LAYOUT,
        parse_compression("none"),
        WriteCase({"repeats": 1, "strategies": ["chunk", "spectrum"], "fill_time": ["ifset", "alloc"]}),
        "data",
        1,
        None,
    )
    assert [(r["write_strategy"], r["fill_time"]) for r in rows] == [("chunk", "ifset"), ("spectrum", "ifset")]
    assert rows[0]["write_calls"] == LAYOUT.n_chunks(SHAPE) and rows[1]["write_calls"] == SHAPE[0] * SHAPE[1]
    assert {r["query_file_method"] for r in rows} == {"write-case"}
    assert "chunk_cache_bytes" not in rows[0]


@pytest.mark.workflow
@pytest.mark.parametrize("interleave", [False, True], ids=["store-by-store", "interleaved"])
def test_a_sweep_of_hdf5_and_zarr_runs_end_to_end_and_compares_them(workflow, tmp_path, interleave):
    """Zarr stores are directories (temp outputs, removed once read), read by both readers;
    the summary pairs each Zarr read with the contiguous HDF5 file's and with HDF5's same
    layout; the recommendation ranks both backends' stores."""
    import pandas as pd
    from conftest import job_counts, tiny_config

    config = tiny_config(tmp_path, sweep="zarr", figures=["backends"])
    config["backends"] = ["hdf5", "zarr"]
    config["interleave"] = interleave
    config["layouts"] = {
        "contiguous": True,
        "chunks": {"xy": [5], "z": [512]},
        "shards": [{"chunk": [5, 5, 512], "shard": [10, 10, 1024]}],
    }
    config["compression"] = ["none", "blosc-lz4-5-shuffle", "lzf"]
    config["cases"] = {"write": {"repeats": 1}, "spectra": {"repeats": 4, "size": 5, "cold": "every"}}
    path = workflow.write_config(config, "zarr.yaml")
    dry = workflow.run("-n", "--cores", "2", "--configfile", str(path), check=True)
    counts = job_counts(dry.stdout)
    disks = len(config["filesystems"])
    # HDF5: contiguous, chunked none/blosc/lzf; Zarr: chunked and sharded none/blosc (no
    # contiguous, no lzf; HDF5 has no shards)
    # one at a time, a store's job reads it too (generate_query_...)
    # interleaved, one job per filesystem writes every store of both backends
    if interleave:
        assert counts["generate_on_disk"] == 1 and not [k for k in counts if k.startswith("generate_zarr")]
    else:
        assert sum(v for k, v in counts.items() if k.startswith("generate_query_on_")) == 4 * disks
        assert sum(v for k, v in counts.items() if k.startswith("generate_query_zarr_on_")) == 4 * disks
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    results = workflow.root / "results" / "zarr"
    measured = pd.read_parquet(results / "measurements.parquet")
    zarr_reads = measured[(measured["backend"] == "zarr") & (measured["case"] == "spectra")]
    assert set(zarr_reads["reader"]) == {"zarr-python", "tensorstore"}
    unsharded = zarr_reads["shard_shape"] == ""
    assert set(zarr_reads[unsharded]["store_files"]) == {1 + 4 * 4 * 6}  # zarr.json and 96 chunk files
    assert set(zarr_reads[~unsharded]["store_files"]) == {1 + 2 * 2 * 3}  # and 12 shard files
    assert (zarr_reads[~unsharded]["files_touched"] < zarr_reads[~unsharded]["chunks_touched"]).all()
    assert set(measured[measured["backend"] == "hdf5"]["store_files"]) == {1}
    assert set(zarr_reads["zarr_version"]) == {zarr.__version__}
    summary = pd.read_parquet(results / "summary.parquet")
    rows = summary[(summary["backend"] == "zarr") & (summary["case"] == "spectra")]
    assert len(rows[rows["primary"]]) >= 4  # each store's first reader is a primary row
    assert rows["ratio_to_contiguous"].notna().all() and rows["ratio_to_hdf5"].notna().all()
    assert (rows["ratio_pairs"] == 4).all() and (rows["ratio_to_hdf5_pairs"] == 4).all()
    assert (rows["ratio_to_hdf5_ci_low"] <= rows["ratio_to_hdf5"]).all()
    for fs in config["filesystems"]:  # HDF5 against Zarr, layout by layout, per filesystem
        assert (results / "plots" / f"backends-{fs}.png").stat().st_size > 10_000
    recommended = pd.read_csv(results / "recommendation.csv")
    assert {"hdf5", "zarr"} <= set(recommended["backend"])
    for entry in config["filesystems"].values():  # the temporary stores are gone
        directory = Path(entry["path"] if isinstance(entry, dict) else entry)
        assert not list(directory.rglob("*.zarr")) and not list(directory.rglob("*.hdf5"))


def test_figures_put_each_backends_store_of_a_shape_side_by_side():
    import pandas as pd

    from h5sweep.report.figures import _layout_order

    rows = pd.DataFrame(
        [
            {"backend": b, "chunk_shape": c, "layout_name": "", "order": "xyz"}
            for b, c in [("zarr", "5x5x512"), ("hdf5", "5x5x512"), ("hdf5", ""), ("zarr", "2x2x64"), ("hdf5", "2x2x64")]
        ]
    )
    assert _layout_order(rows) == ["contiguous", "2x2x64", "Zarr 2x2x64", "5x5x512", "Zarr 5x5x512"]


SHARDED = Layout((5, 4, 64), shard_shape=(10, 8, 128))


def test_sharded_layouts_come_from_the_config_and_are_checked():
    config = config_with(
        backends=["hdf5", "zarr"],
        layouts={"contiguous": True, "shards": [{"chunk": [2, 5, 64], "shard": [4, 10, 512]}]},
    )
    sweep = load_sweep(config, probe=False)
    (sharded,) = [lay for lay in sweep.layouts if lay.shard_shape]
    assert sharded.id == "chunked-2x5x64-shards-4x10x512" and Layout.from_id(sharded.id) == sharded
    assert {tf.backend.name for tf in sweep.stores() if tf.layout == sharded} == {"zarr"}  # HDF5 has none
    bad = config_with(backends=["hdf5", "zarr"], layouts={"shards": [{"chunk": [2, 5, 64], "shard": [3, 10, 512]}]})
    with pytest.raises(ConfigError, match=r"layouts.shards\[0\].shard=\[3, 10, 512\]: must be a multiple"):
        load_sweep(bad, probe=False)
    hdf5_only = config_with(layouts={"contiguous": True, "shards": [{"chunk": [2, 5, 64], "shard": [4, 10, 512]}]})
    with pytest.raises(ConfigError, match="no configured backend stores shards"):
        load_sweep(hdf5_only, probe=False)


def test_a_sharded_store_opens_a_file_per_shard_and_knows_each_chunks_bytes(tmp_path, data, source):
    path = str(tmp_path / "sharded.zarr")
    method = ZARR.write_fast(path, data, SHARDED, parse_compression("blosc-lz4-5-shuffle"), "data", 2)
    assert method == "zarr-python-shards"
    shards = SHARDED.shard_shape
    shard_grid = tuple(-(-n // s) for n, s in zip(SHAPE, shards, strict=True))  # 3 x 3 x 3
    assert ZARR.store_counts(path)["store_files"] == 1 + int(np.prod(shard_grid))
    stored = ZARR.stored_chunks(path, SHARDED, "data")
    assert stored.sizes.shape == SHARDED.chunk_grid(SHAPE) and (stored.sizes > 0).all()
    index_bytes = 2 * 2 * 2 * 16 + 4  # 8 chunks per shard, (offset, size) each, and a CRC-32C
    shard_files = [f for f in store_files(path) if not f.endswith("zarr.json")]
    assert int(stored.sizes.sum()) == sum(os.path.getsize(f) - index_bytes for f in shard_files)
    cases = read_cases_from_config({"spectra": {"repeats": 3, "size": 3, "cold": "every"}}, SHAPE)
    rows = read_cases(ZARR, path, cases, SHAPE, 5, source, SHARDED, options=READERS)
    for row in rows:  # values checked by run_queries; files opened per shard, not per chunk
        start, size = _start_size(row["selection"])
        assert row["files_touched"] == SHARDED.shards_touched(start, size) < row["chunks_touched"]
        assert row["cache_state"] == "cold"


def test_a_split_read_times_its_storage_part_alone_from_the_same_cache_state(stores, source):
    """split: each read's stored chunk bytes are fetched again on their own, after the store
    was evicted again for a first access; the counted device bytes of that pass are its own
    (the read's row keeps the read's), and contiguous has nothing to split."""
    cases = read_cases_from_config({"spectra": {"repeats": 3, "size": 3, "cold": ["every", "first"]}}, SHAPE)
    for (name, layout_id), path in stores.items():
        layout = Layout.from_id(layout_id)
        options = READERS if name == "zarr" else [HDF5_CACHE]
        rows = read_cases(load(name), path, cases, SHAPE, 3, source, layout, options=options, split=True)
        if layout.chunk_shape is None:
            assert all(np.isnan(r["storage_s"]) and np.isnan(r["decode_copy_s"]) for r in rows)
            continue
        for row in rows:
            assert row["storage_s"] > 0
            assert row["decode_copy_s"] == pytest.approx(row["seconds"] - row["storage_s"])
        every = [r for r in rows if r["cold_mode"] == "every"]
        assert {r["cache_state"] for r in every} == {"cold"}  # the storage pass did not warm the next read
        assert min(r["device_read_bytes"] for r in every) >= min(r["stored_bytes_touched"] for r in every)
    unsplit = read_cases(ZARR, stores[("zarr", LAYOUT.id)], cases, SHAPE, 3, source, LAYOUT, options=READERS[:1])
    assert all(np.isnan(r["storage_s"]) for r in unsplit)
    split = read_cases(
        ZARR, stores[("zarr", LAYOUT.id)], cases, SHAPE, 3, source, LAYOUT, options=READERS[:1], split=True
    )
    assert [r["read_calls"] for r in split] == [r["read_calls"] for r in unsplit]  # the fetch is not the read's


@pytest.mark.parametrize("layout", [Layout((1, 1, 64)), LAYOUT, SHARDED], ids=["tiny-chunks", "chunks", "shards"])
def test_the_plans_disk_bound_holds_a_zarr_stores_blocks(tmp_path, data, layout):
    """Tiny chunks cost a filesystem block per file: the plan's bound counts blocks, not bytes."""
    from types import SimpleNamespace

    from h5sweep.sweep.plan import file_bytes_bound

    path = str(tmp_path / "bound.zarr")
    ZARR.write_fast(path, data, layout, parse_compression("none"), "data", 2)
    allocated = sum(os.stat(d).st_blocks * 512 for d, _, _ in os.walk(path))
    allocated += sum(os.stat(f).st_blocks * 512 for f in store_files(path))
    sweep = SimpleNamespace(shape=SHAPE, dtype=np.dtype("uint16"))
    assert allocated <= file_bytes_bound(sweep, layout, "zarr")
    if layout.chunk_shape == (1, 1, 64):  # 23 x 17 x 5 files of 128 bytes: blocks dominate
        assert allocated > 10 * data.nbytes and file_bytes_bound(sweep, layout, "hdf5") < allocated


def test_each_zarr_python_concurrency_of_a_list_is_a_read_option_of_its_own():
    from h5sweep.backends.zarr_readers import ZarrReader, readers_from_config

    found = readers_from_config({"readers": ["zarr-python", "tensorstore"], "concurrency": [1, 64, 1]})
    assert found == [ZarrReader("zarr-python", 1), ZarrReader("zarr-python", 64), ZarrReader("tensorstore", 1)]
    assert [r.label for r in found[:2]] == ["zarr-python concurrency 1", "zarr-python concurrency 64"]
    assert readers_from_config({"concurrency": 32})[0].concurrency == 32
    with pytest.raises(ConfigError, match=r"zarr\.concurrency"):
        readers_from_config({"concurrency": [4, 0]})
    sweep = load_sweep(config_with(backends=["hdf5", "zarr"], zarr={"concurrency": [1, 64]}), probe=False)
    assert [o.label for o in sweep.read_options("zarr")][:2] == [
        "zarr-python concurrency 1",
        "zarr-python concurrency 64",
    ]
