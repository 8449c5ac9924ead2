"""The contract every registered storage backend keeps, run against each of them (as one
store test suite runs against every store): write, open, read, count, evict, remove."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from conftest import read_cases, run_test_config

from h5sweep import backends
from h5sweep.backends.base import Backend, OpenedStore, StoredChunks, WriteStopped
from h5sweep.cases import read_cases_from_config
from h5sweep.measure.pagecache import resident_fraction_of
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout, storage_order
from h5sweep.storage.selections import Selection

SHAPE = (8, 10, 600)
NAMES = list(backends.REGISTRY)


def _layout(spec) -> Layout:
    """The simplest layout the backend stores: contiguous where it can, else chunks."""
    return Layout(None) if spec.capabilities.contiguous else Layout((4, 5, 200))


@pytest.fixture(params=NAMES)
def backend(request) -> Backend:
    return backends.load(request.param)


@pytest.fixture
def source():
    return SyntheticSource(SHAPE, np.uint16, seed=4)


def _written(backend, tmp_path, source, fast: bool):
    spec = backends.spec(backend.name)
    layout, none = _layout(spec), parse_compression("none")
    path = str(tmp_path / f"store.{backend.name}")
    data = source.materialize()
    if fast:
        backend.write_fast(path, data, layout, none, "data", 1)
    else:
        option = backend.default_read_option if spec.capabilities.writes_with_read_option else None
        calls = backend.write(path, storage_order(data, layout), layout, none, "data", "chunk", "ifset", option)
        assert calls >= 1
    return path, layout, data


def test_the_spec_and_the_implementation_agree(backend):
    spec = backends.spec(backend.name)
    assert isinstance(backend, Backend) and backend.label == spec.label
    assert backend.fill_times == spec.capabilities.fill_times and "ifset" in backend.fill_times
    assert spec.stores(_layout(spec), parse_compression("none"))
    assert isinstance(backend.versions(), dict)


@pytest.mark.parametrize("fast", [False, True], ids=["standard", "fast"])
def test_a_store_reads_back_every_value_written(backend, tmp_path, source, fast):
    path, layout, data = _written(backend, tmp_path, source, fast)
    store = backend.open_for_reads(path, "data", backend.default_read_option)
    assert isinstance(store, OpenedStore) and store.open_s >= 0
    try:
        for start, size in [((0, 0, 0), SHAPE), ((1, 2, 3), (3, 4, 100)), ((7, 9, 599), (1, 1, 1))]:
            buffer = np.empty(layout.to_storage(size), dtype=data.dtype)
            result = store.prepare(layout.to_storage(start), buffer)()
            values = buffer if result is None else np.asarray(result)
            region = tuple(slice(s, s + n) for s, n in zip(start, size, strict=True))
            np.testing.assert_array_equal(values, data[region])
    finally:
        store.close()


def test_a_write_past_its_deadline_stops_between_two_calls(backend, tmp_path, source):
    """A deadline already passed stops the standard write after its first call (a backend
    that writes in one call has nothing to stop between), leaving a partial store the
    caller removes."""
    spec = backends.spec(backend.name)
    layout = Layout((4, 5, 200)) if spec.capabilities.chunks else Layout(None)
    strategy = "spectrum" if layout.chunk_shape else "chunk"
    path, data = str(tmp_path / f"stopped.{backend.name}"), source.materialize()
    option = backend.default_read_option if spec.capabilities.writes_with_read_option else None
    args = (storage_order(data, layout), layout, parse_compression("none"), "data", strategy, "ifset", option)
    calls = sum(1 for _ in layout.write_blocks(SHAPE, data.itemsize, strategy))
    if calls == 1:
        assert backend.write(path, *args, deadline=time.perf_counter() - 1) == 1
        return
    with pytest.raises(WriteStopped) as stopped:
        backend.write(path, *args, deadline=time.perf_counter() - 1)
    assert stopped.value.calls == 1 < calls
    assert backend.write(str(tmp_path / "whole"), *args, deadline=time.perf_counter() + 3600) == calls
    backend.remove(path)
    assert not os.path.exists(path)


def test_footprint_counts_and_eviction_cover_the_whole_store(backend, tmp_path, source):
    path, layout, data = _written(backend, tmp_path, source, fast=True)
    files = backend.paths_to_evict(path)
    assert files and all(os.path.isfile(f) for f in files)
    assert backend.footprint_bytes(path) >= data.nbytes  # uncompressed: every value stored
    counts = backend.store_counts(path)
    assert set(counts) == {"store_files", "store_directories"} and counts["store_files"] == len(files)
    stored = backend.stored_chunks(path, layout, "data")
    assert isinstance(stored, StoredChunks)
    whole, one = Selection((0, 0, 0), SHAPE), Selection((0, 0, 0), (1, 1, 1))
    assert stored.touched(whole) == data.nbytes and stored.files_touched(one) >= 1
    assert 0 < stored.touched(one) <= stored.touched(whole)
    backend.remove(path)
    assert not os.path.exists(path)


def test_the_read_engine_reads_each_backend_cold_and_checks_its_values(backend, tmp_path, source):
    path, layout, data = _written(backend, tmp_path, source, fast=True)
    cases = read_cases_from_config({"spectra": {"repeats": 3, "size": 2}}, SHAPE)
    rows = read_cases(backend, path, cases, SHAPE, 5, source, layout)
    assert len(rows) == 3 and {r["cold_mode"] for r in rows} == {"every"}
    assert all(r["bytes_selected"] == 2 * 2 * SHAPE[2] * 2 for r in rows)
    assert all(r["resident_fraction_at_open"] < 0.01 or r["cache_state"] == "memory" for r in rows)
    assert resident_fraction_of(backend.paths_to_evict(path)) >= 0.0


def test_the_raw_store_reads_one_pread_per_contiguous_run(tmp_path, source):
    raw = backends.load(backends.RAW)
    path, layout, data = _written(raw, tmp_path, source, fast=True)
    cases = read_cases_from_config({"spectra": {"repeats": 2, "size": 3}, "slice": {"repeats": 2, "depth": 5}}, SHAPE)
    rows = read_cases(raw, path, cases, SHAPE, 1, source, layout)
    calls = {r["case"]: r["read_calls"] for r in rows}
    assert calls["spectra"] == 3  # x rows of 3 x (all of z): y and z whole join one run per x
    assert calls["slice"] == SHAPE[0] * SHAPE[1]  # 5 values at each (x, y)
    assert {r["reader"] for r in rows} == {"pread"}


@pytest.mark.workflow
def test_a_sweep_of_hdf5_and_raw_runs_end_to_end_and_ranks_the_raw_store(tmp_path):
    config, results, summary = run_test_config(tmp_path, "raw.yaml")
    assert set(summary["backend"]) == {"hdf5", "raw"}
    raw_rows = summary[summary["backend"] == "raw"]
    assert set(raw_rows["layout"]) == {"contiguous"} and set(raw_rows["compression"]) == {"none"}
    # its ratios are to the contiguous HDF5 file's reads of the same selections, not to itself
    raw_reads = raw_rows[raw_rows["case"].isin(["slice", "spectra"])]
    raw_ratios = raw_reads["ratio_to_contiguous"].astype(float)
    assert raw_ratios.notna().all() and (raw_ratios != 1.0).any()
    ranking = (results / "recommendation.md").read_text()
    assert "raw binary" in ranking
    import pandas as pd

    table = pd.read_csv(results / "recommendation.csv")
    assert "raw" in set(table["backend"])
