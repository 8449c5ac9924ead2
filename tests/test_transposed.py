"""The transposed (z, x, y) storage order: same cases, same selections, the data stored with
z first."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from conftest import read_cases, run_test_config

from h5sweep.backends.fastwrite import write_fast
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases import read_cases_from_config
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout, layouts_from_config
from h5sweep.sweep.config import filled_section

SHAPE = (16, 12, 3000)


@pytest.fixture(scope="session")
def source():
    return SyntheticSource(SHAPE, np.uint16, seed=6)


def test_ids_and_axis_mapping_of_the_transposed_order():
    layout = Layout((4, 2, 500), order="zxy")
    assert layout.id == "chunked-zxy-4x2x500" and Layout(None, order="zxy").id == "contiguous-zxy"
    assert Layout.from_id(layout.id) == layout and Layout.from_id("contiguous-zxy") == Layout(None, order="zxy")
    assert layout.storage_chunk_shape == (500, 4, 2)
    assert layout.to_storage(("x", "y", "z")) == ("z", "x", "y")
    assert layout.to_logical(("z", "x", "y")) == ("x", "y", "z")
    assert layout != Layout((4, 2, 500))
    with pytest.raises(ValueError):
        Layout.from_id("chunked-zxy")
    # every layout in every order
    ids = [
        lay.id
        for lay in layouts_from_config(
            filled_section("layouts", {"orders": ["xyz", "zxy"], "chunks": {"xy": [4], "z": [500]}}), SHAPE
        )
    ]
    assert ids == ["contiguous", "chunked-4x4x500", "contiguous-zxy", "chunked-zxy-4x4x500"]
    with pytest.raises(ConfigError, match=r"layouts.orders\[1\]='yxz'"):
        layouts_from_config(filled_section("layouts", {"orders": ["xyz", "yxz"]}), SHAPE)


def test_a_transposed_contiguous_file_is_written_in_z_slabs():
    blocks = list(Layout(None, order="zxy").write_blocks(SHAPE, 2))
    assert blocks == [(slice(0, 16), slice(0, 12), slice(0, 3000))]  # one slab: it is small
    assert all(
        b[0] == slice(0, 16) and b[1] == slice(0, 12) for b in Layout(None, order="zxy").write_blocks(SHAPE, 10**6)
    )


@pytest.mark.parametrize("chunk, compression", [(None, "none"), ((4, 4, 500), "none"), ((3, 5, 700), "gzip-2")])
def test_transposed_files_store_z_first_and_both_paths_write_the_same_chunks(tmp_path, source, chunk, compression):
    data = source.materialize()
    layout, comp = Layout(chunk, order="zxy"), parse_compression(compression)
    write_fast(str(tmp_path / "fast.h5"), data, layout, comp, threads=2)
    write_file(str(tmp_path / "standard.h5"), data, layout, comp)
    for name in ("fast.h5", "standard.h5"):
        with h5py.File(tmp_path / name, "r") as f:
            assert f["data"].shape == (3000, 16, 12)
            assert f["data"].chunks == layout.storage_chunk_shape
            np.testing.assert_array_equal(f["data"][...], data.transpose(2, 0, 1))
    if chunk is not None:
        with h5py.File(tmp_path / "fast.h5", "r") as a, h5py.File(tmp_path / "standard.h5", "r") as b:
            offsets = []
            a["data"].id.chunk_iter(lambda info: offsets.append(info.chunk_offset))
            for offset in offsets:
                assert a["data"].id.read_direct_chunk(offset) == b["data"].id.read_direct_chunk(offset)


def test_cases_keep_their_meaning_and_selections_in_the_transposed_order(tmp_path, source):
    data = source.materialize()
    cases = read_cases_from_config({"slice": {"repeats": 4}, "spectra": {"repeats": 4, "size": 3}}, SHAPE)
    rows = {}
    for order in ("xyz", "zxy"):
        layout = Layout((4, 4, 500), order=order)
        path = str(tmp_path / f"{order}.h5")
        write_fast(path, data, layout, parse_compression("gzip-2"))
        rows[order] = read_cases(HDF5, path, cases, SHAPE, 0, source, layout)  # values are checked
    for a, b in zip(rows["xyz"], rows["zxy"], strict=True):
        assert (a["case"], a["selection"], a["bytes_selected"]) == (b["case"], b["selection"], b["bytes_selected"])
        assert a["chunks_touched"] == b["chunks_touched"]
        assert a["stored_bytes_touched"] > 0 and b["stored_bytes_touched"] > 0


@pytest.mark.workflow
def test_both_orders_run_in_the_workflow(tmp_path):
    _, results, summary = run_test_config(
        tmp_path, "transposed.yaml", figures=["case_bars", "file_sizes", "scaling", "variants"]
    )
    assert set(summary["order"]) == {"xyz", "zxy"}
    files = summary.drop_duplicates(["layout", "chunk_shape", "order", "compression"])
    assert len(files) == 2 * (1 + 2 * 2)  # orders x (contiguous + 2 shapes x 2 compressions)
    assert set(summary.loc[summary["chunk_shape"] == "16x12x10", "layout_name"]) == {"image-aligned"}
    spectra = summary[(summary["case"] == "spectra") & (summary["primary"].astype(str) == "True")]
    assert set(spectra.groupby("order")["bytes_selected"].first()) == {3 * 3 * 3000 * 2}
    for figure in ["bars-slice-disk.png", "file-sizes.png", "scaling-disk.png", "variants-write-disk.png"]:
        assert (results / "plots" / figure).exists(), figure
