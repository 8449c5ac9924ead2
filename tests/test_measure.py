"""Generating and querying real HDF5 files on real filesystems."""

import os
import tempfile
import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest

from h5sweep.cases import WriteCase, read_cases_from_config
from h5sweep.compression import parse_compression
from h5sweep.datasources import SyntheticSource
from h5sweep.errors import VerificationError
from h5sweep.generate import generate
from h5sweep.layouts import Layout
from h5sweep.plan import CHUNK_INDEX_BYTES
from h5sweep.query import run_case, run_queries

SHAPE = (12, 10, 4000)
CASES = {"slice": {"repeats": 4, "depth": 25}, "spectra": {"repeats": 4, "size": 5}, "subcube": {"repeats": 4}}


@pytest.fixture(scope="module")
def source():
    return SyntheticSource(SHAPE, np.uint16, seed=11)


@pytest.fixture(scope="module")
def data(source):
    return source.materialize()


def make_file(directory, data, layout, compression="none", repeats=1):
    path = os.path.join(directory, f"{layout.id}-{compression}.h5")
    rows = generate(path, data, layout, parse_compression(compression), WriteCase({"repeats": repeats}))
    return path, rows


LAYOUTS = [(Layout(None), "none")] + [(Layout(c), z) for c in [(5, 3, 700), (1, 1, 64)] for z in ["none", "gzip-4"]]


@pytest.mark.parametrize("layout, compression", LAYOUTS, ids=[f"{lay.id}-{z}" for lay, z in LAYOUTS])
def test_generated_files_hold_the_data_with_the_requested_layout(tmp_path, data, layout, compression):
    path, rows = make_file(tmp_path, data, layout, compression, repeats=2)
    assert [r["repeat"] for r in rows] == [0, 1] and all(r["seconds"] > 0 for r in rows)
    assert not [p for p in os.listdir(tmp_path) if ".partial" in p]
    with h5py.File(path, "r") as f:
        dset = f["data"]
        assert dset.chunks == layout.chunk_shape
        assert dset.compression == (None if compression == "none" else "gzip")
        np.testing.assert_array_equal(dset[...], data)
    assert rows[-1]["query_file_bytes"] == os.stat(path).st_size
    # the write case's file (standard API) differs from the query file at most in metadata
    # (the chunk index, whose layout depends on the order chunks were allocated in)
    metadata = layout.n_chunks(SHAPE) * CHUNK_INDEX_BYTES + 64 * 1024
    assert abs(rows[-1]["file_bytes"] - os.stat(path).st_size) < metadata


def test_gzip_chunks_are_what_zlib_makes_of_each_padded_chunk(tmp_path, data):
    layout = Layout((5, 3, 700))
    path, _ = make_file(tmp_path, data, layout, "gzip-4")
    with h5py.File(path, "r") as f:
        dset = f["data"]
        _, stored = dset.id.read_direct_chunk((10, 9, 3500))  # an edge chunk in every axis
    chunk = np.zeros(layout.chunk_shape, np.uint16)
    edge = data[10:15, 9:12, 3500:4200]
    chunk[: edge.shape[0], : edge.shape[1], : edge.shape[2]] = edge
    assert zlib.decompress(stored) == chunk.tobytes()


def test_every_layout_is_queried_with_the_same_selections(tmp_path, data, source):
    cases = read_cases_from_config(CASES, SHAPE)
    seen = []
    for layout, comp in [(Layout(None), "none"), (Layout((4, 4, 512)), "gzip-1"), (Layout((1, 1, 64)), "none")]:
        path, _ = make_file(tmp_path, data, layout, comp)
        rows = run_queries(path, cases, SHAPE, 42, source, layout)
        seen.append([(r["case"], r["selection"]) for r in rows])
        assert len(rows) == 12
    assert seen[0] == seen[1] == seen[2]


def test_a_flipped_value_fails_the_query_with_a_clear_message(tmp_path, data, source):
    layout = Layout((4, 4, 512))
    path, _ = make_file(tmp_path, data, layout)
    case = read_cases_from_config({"subcube": {"repeats": 3, "size": list(SHAPE)}}, SHAPE)[0]  # all of it
    with h5py.File(path, "r+") as f:
        f["data"][3, 2, 1234] += 1
    with pytest.raises(VerificationError, match=r"case subcube repeat 0 \[0:12, 0:10, 0:4000\]: 1 of 480000 values"):
        run_case(path, case, case.selections(SHAPE, 0), source, layout)


def test_first_access_is_cold_on_a_disk_and_reads_from_the_device(tmp_path, data, source):
    disk_dir = Path(tempfile.mkdtemp(dir=Path(__file__).parent))  # the checkout's own disk, not tmpfs
    try:
        layout = Layout((4, 4, 512))
        path, _ = make_file(disk_dir, data, layout)
        with h5py.File(path, "r") as f:  # warm the whole file
            f["data"][...]
        case = read_cases_from_config({"slice": {"repeats": 3}}, SHAPE)[0]
        rows = run_case(path, case, case.selections(SHAPE, 0), source, layout)
        from h5sweep.filesystems import mount_info

        if mount_info(str(disk_dir)).fs_type in ("tmpfs", "ramfs", "overlay"):
            pytest.skip("the checkout is not on a block device")
        assert rows[0]["cold_start"] and rows[0]["resident_fraction_at_open"] < 0.01
        assert rows[0]["device_read_bytes"] >= rows[0]["chunk_bytes_touched"] * 0.9
        assert rows[0]["open_s"] > 0 and np.isnan(rows[1]["open_s"])
    finally:
        for p in sorted(disk_dir.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        disk_dir.rmdir()


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this machine")
def test_tmpfs_cannot_be_evicted_and_the_record_says_so(data, source):
    directory = tempfile.mkdtemp(dir="/dev/shm")
    try:
        layout = Layout((4, 4, 512))
        path, _ = make_file(directory, data, layout)
        case = read_cases_from_config({"slice": {"repeats": 2}}, SHAPE)[0]
        rows = run_case(path, case, case.selections(SHAPE, 0), source, layout)
        assert not rows[0]["cold_start"] and rows[0]["resident_fraction_at_open"] > 0.99
        assert rows[0]["device_read_bytes"] == 0
    finally:
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
        os.rmdir(directory)
