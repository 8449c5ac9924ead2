"""The fast path writes the same chunks HDF5's standard path writes, and reads back the same."""

import os

import h5py
import numpy as np
import pytest

from h5sweep.backends.fastwrite import chunk_rows, write_fast
from h5sweep.backends.hdf5 import write_file
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout

SHAPE = (23, 17, 3001)  # divisible by none of the chunk shapes below: edge chunks everywhere


@pytest.fixture(scope="session")
def data():
    return SyntheticSource(SHAPE, np.uint16, seed=1).materialize()


def stored_chunks(path):
    with h5py.File(path, "r") as f:
        dsid = f["data"].id
        offsets = []
        dsid.chunk_iter(lambda info: offsets.append(info.chunk_offset))
        return {offset: dsid.read_direct_chunk(offset) for offset in offsets}


CASES = [
    (None, "none"),
    ((4, 4, 512), "none"),
    ((5, 3, 700), "none"),
    ((1, 1, 64), "none"),
    ((4, 4, 512), "gzip-1"),
    ((5, 3, 700), "gzip-4"),
    ((1, 1, 64), "gzip-6"),
    ((23, 17, 3001), "gzip-9"),
]


@pytest.mark.parametrize("chunk, compression", CASES, ids=[f"{c}-{z}" for c, z in CASES])
def test_fast_files_read_back_identical_with_the_standard_paths_chunk_bytes(tmp_path, data, chunk, compression):
    layout, comp = Layout(chunk), parse_compression(compression)
    fast, standard = str(tmp_path / "fast.h5"), str(tmp_path / "standard.h5")
    method = write_fast(fast, data, layout, comp, threads=2)
    write_file(standard, data, layout, comp)
    with h5py.File(fast, "r") as f:
        np.testing.assert_array_equal(f["data"][...], data)
        assert f["data"].chunks == chunk
        assert f["data"].compression == (None if comp.is_none else "gzip")
    if chunk is None:
        assert method == "contiguous-pwrite"
        assert os.stat(fast).st_size == os.stat(standard).st_size
        return
    assert method == ("chunk-pwrite" if comp.is_none else "direct-chunk-2-threads")
    fast_chunks, standard_chunks = stored_chunks(fast), stored_chunks(standard)
    assert fast_chunks.keys() == standard_chunks.keys()
    assert len(fast_chunks) == layout.n_chunks(SHAPE)
    for offset, stored in standard_chunks.items():
        assert fast_chunks[offset] == stored, f"chunk at {offset} differs"


def test_chunk_rows_lay_out_padded_chunks_in_storage_order():
    data = np.arange(5 * 3 * 7, dtype=np.uint16).reshape(5, 3, 7)
    rows = dict(chunk_rows(data, (2, 2, 4)))
    assert sorted(rows) == [0, 1, 2]
    # row 2 (x = 4..5): chunk (2, 1, 1) covers x 4, y 2, z 4..6 and is zero elsewhere
    chunk = rows[2][1 * 2 + 1]
    assert chunk.shape == (2, 2, 4)
    np.testing.assert_array_equal(chunk[0, 0, :3], data[4, 2, 4:7])
    assert not chunk[1].any() and not chunk[0, 1].any() and chunk[0, 0, 3] == 0


def test_more_threads_write_the_same_file_contents(tmp_path, data):
    layout, comp = Layout((4, 4, 512)), parse_compression("gzip-4")
    write_fast(str(tmp_path / "one.h5"), data, layout, comp, threads=1)
    write_fast(str(tmp_path / "four.h5"), data, layout, comp, threads=4)
    assert stored_chunks(str(tmp_path / "one.h5")) == stored_chunks(str(tmp_path / "four.h5"))
