"""Throughput against I/O size, HDF5 next to raw binary."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_test_config

from h5sweep.cases.iosize import IOSizeCase, run_iosize
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError


def test_every_size_api_and_operation_is_timed_and_checked(tmp_path):
    data = SyntheticSource((8, 8, 4096), np.uint16, seed=5).materialize()  # 512 KiB
    rows = run_iosize(str(tmp_path), IOSizeCase({"sizes": [4096, 1 << 20], "repeats": 1}), data)
    seen = {(r["api"], r["direction"], r["cache_state"], r["request_bytes"]) for r in rows}
    # a request larger than the data is one request of all of it
    assert seen == {
        (api, d, s, size)
        for api in ("raw", "hdf5")
        for d, s in (("write", ""), ("read", "cold"), ("read", "warm"))
        for size in (4096, data.nbytes)
    }
    assert all(r["seconds"] > 0 and r["bytes_selected"] == data.nbytes for r in rows)
    calls = {
        (r["api"], r["request_bytes"], r["cache_state"]): r["read_calls"] for r in rows if r["direction"] == "read"
    }
    # 128 requests of 4 KiB are 128 read calls of raw binary, one request of all of it one call;
    # HDF5 (opening the file included) reads a contiguous dataset through its sieve buffer:
    # fewer calls than requests, but more than for one request of everything
    assert calls[("raw", 4096, "warm")] == 128 and calls[("raw", data.nbytes, "warm")] == 1
    assert 128 > calls[("hdf5", 4096, "warm")] > calls[("hdf5", data.nbytes, "warm")]
    assert not list(tmp_path.iterdir())
    with pytest.raises(ConfigError, match=r"cases.iosize.sizes\[0\]=3"):
        IOSizeCase({"sizes": [3]}).check(itemsize=2)


def test_amounts_of_data_are_each_written_and_read_in_one_request_as_the_lab_s_figure_1(tmp_path):
    data = SyntheticSource((8, 8, 4096), np.uint16, seed=5).materialize()  # 512 KiB
    amounts = [4096, 65536, data.nbytes]
    case = IOSizeCase({"data_sizes": amounts, "sizes": [data.nbytes], "repeats": 2})
    case.check(data.shape, data.itemsize)
    rows = run_iosize(str(tmp_path), case, data)
    assert len(rows) == len(amounts) * 2 * 2 * 3  # amounts x repeats x APIs x (write, cold, warm)
    # each amount is the data's first bytes, in one request of all of it; its own group (variant)
    assert {(r["bytes_selected"], r["request_bytes"]) for r in rows} == {(n, n) for n in amounts}
    assert len({r["variant"] for r in rows}) == len(amounts) * 2 * 3
    calls = {
        r["bytes_selected"] for r in rows if r["api"] == "raw" and r["cache_state"] == "warm" and r["read_calls"] == 1
    }
    assert calls == set(amounts)
    assert not list(tmp_path.iterdir())
    with pytest.raises(ConfigError, match=r"cases.iosize.data_sizes\[1\]=1048576: is more than the dataset's"):
        IOSizeCase({"data_sizes": [4096, 1 << 20]}).check(data.shape, data.itemsize)
    with pytest.raises(ConfigError, match=r"cases.iosize.data_sizes\[0\]=4097"):
        IOSizeCase({"data_sizes": [4097]}).check(data.shape, data.itemsize)


@pytest.mark.workflow
def test_the_iosize_case_runs_once_per_filesystem_with_a_figure(tmp_path):
    _, results, summary = run_test_config(tmp_path, "iosize.yaml", report=True, figures=["iosize"])
    rows = summary[summary["case"] == "iosize"]
    assert len(rows) == 4 * 2 * 3  # sizes x APIs x (write, cold read, warm read)
    assert set(rows["request_bytes"].astype(int)) == {4096, 65536, 1048576, 2 * 1024 * 1024}
    cold = rows[(rows["cache_state"] == "cold")]
    assert set(cold["api"]) == {"raw", "hdf5"}
    assert (results / "plots" / "iosize-disk.png").exists()
