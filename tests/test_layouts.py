"""Chunk arithmetic, checked against the numbers of the OpenMSI study."""

import math

import pytest

from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout, layouts_from_config
from h5sweep.sweep.config import filled_section

REFERENCE = (100, 100, 100_000)  # the study's test cube, uint16
UINT16 = 2


def test_1x1x128_has_the_studys_chunk_count_and_z_padding():
    layout = Layout((1, 1, 128))
    assert layout.chunk_grid(REFERENCE) == (100, 100, 782)
    assert layout.n_chunks(REFERENCE) == 7_820_000
    # 96 empty 100 x 100 slices = 1.92 MB
    assert layout.padding_bytes(REFERENCE, UINT16) == 96 * 100 * 100 * UINT16 == 1_920_000


def test_1x1x2048_pads_352_slices():
    assert Layout((1, 1, 2048)).padding_bytes(REFERENCE, UINT16) == 352 * 100 * 100 * UINT16 == 7_040_000


def test_32x32_chunks_allocate_1276_8_mb_extra_in_x_and_y():
    # n = 1000 divides z, so all padding is spatial: 128 x 128 x 100,000 allocated.
    layout = Layout((32, 32, 1000))
    assert layout.allocated_elements(REFERENCE) == 128 * 128 * 100_000
    assert layout.padding_bytes(REFERENCE, UINT16) == 1_276_800_000
    # with a z chunk that does not divide, z padding comes on top
    assert Layout((32, 32, 2048)).padding_bytes(REFERENCE, UINT16) > 1_276_800_000


def test_4x4x2048_chunk_and_the_chunks_a_query_touches():
    layout = Layout((4, 4, 2048))
    assert layout.chunk_bytes(UINT16) == 65_536
    # a 5 x 5 set of full spectra always touches 2 x 2 x 49 = 196 chunks (12.25 MiB)
    for x0 in range(0, 8):
        assert layout.chunks_touched((x0, 3, 0), (5, 5, 100_000)) == 196
    assert 196 * layout.chunk_bytes(UINT16) == 12.25 * 2**20
    # 25 slices inside one z-chunk: 25 x 25 chunks (39.0625 MiB)
    assert layout.chunks_touched((0, 0, 2048), (100, 100, 25)) == 625
    assert 625 * layout.chunk_bytes(UINT16) == 39.0625 * 2**20
    # ... and twice as many when the 25 slices cross a z-chunk boundary
    assert layout.chunks_touched((0, 0, 2040), (100, 100, 25)) == 1250


def test_image_aligned_chunks_need_10_chunks_per_ion_image():
    layout = Layout((80, 50, 100))
    assert layout.chunks_touched((0, 0, 500), (160, 250, 1)) == 10
    assert Layout((4, 4, 2048)).chunks_touched((0, 0, 500), (160, 250, 1)) == 40 * 63


@pytest.mark.parametrize("chunk", [None, (3, 7, 100), (1, 1, 64), (20, 20, 3000)])
def test_write_blocks_cover_the_dataset_exactly_once(chunk):
    shape = (20, 20, 3000)
    seen = set()
    total = 0
    for region in Layout(chunk).write_blocks(shape, UINT16):
        key = tuple((s.start, s.stop) for s in region)
        assert key not in seen
        seen.add(key)
        total += math.prod(s.stop - s.start for s in region)
        assert all(0 <= s.start < s.stop <= n for s, n in zip(region, shape, strict=True))
    assert total == math.prod(shape)


def test_layout_ids_round_trip_and_name_the_layout():
    for layout in [Layout(None), Layout((4, 4, 2048))]:
        assert Layout.from_id(layout.id) == layout
    assert Layout((4, 4, 2048)).id == "chunked-4x4x2048"
    assert Layout((4, 4, 2048)).chunk_label == "4x4x2048"
    assert Layout(None).chunk_label == "" and Layout(None).kind == "contiguous"
    with pytest.raises(ValueError):
        Layout.from_id("chunked-4xx4")


def test_grid_expansion_is_every_m_by_m_by_n_plus_extra_shapes_without_duplicates():
    cfg = {"contiguous": True, "chunks": {"xy": [1, 4], "z": [256, 2048]}, "shapes": [[4, 4, 2048], [50, 80, 100]]}
    ids = [layout.id for layout in layouts_from_config(filled_section("layouts", cfg), (100, 100, 20_000))]
    assert ids == [
        "contiguous",
        "chunked-1x1x256",
        "chunked-1x1x2048",
        "chunked-4x4x256",
        "chunked-4x4x2048",
        "chunked-50x80x100",
    ]


def test_a_chunk_larger_than_the_dataset_is_refused_with_its_key():
    with pytest.raises(ConfigError, match=r"layouts.shapes\[0\].*larger than the dataset along axis 2"):
        layouts_from_config(
            filled_section("layouts", {"contiguous": True, "shapes": [[4, 4, 30_000]]}), (100, 100, 20_000)
        )
    with pytest.raises(ConfigError, match=r"layouts.chunks \(xy=128, z=256\)"):
        layouts_from_config(filled_section("layouts", {"chunks": {"xy": [128], "z": [256]}}), (100, 100, 20_000))


def test_named_shapes_carry_their_name_and_name_a_grid_shape_too():
    cfg = {
        "contiguous": False,
        "chunks": {"xy": [4], "z": [2048]},
        "shapes": [{"name": "image-aligned", "chunk": [50, 80, 100]}, {"name": "openmsi", "chunk": [4, 4, 2048]}],
    }
    layouts = layouts_from_config(filled_section("layouts", cfg), (100, 100, 20_000))
    assert [(lay.id, lay.name) for lay in layouts] == [
        ("chunked-4x4x2048", "openmsi"),
        ("chunked-50x80x100", "image-aligned"),
    ]
    assert Layout((50, 80, 100), "x") == Layout((50, 80, 100))  # the name is not its identity


def test_auto_layout_is_the_chunk_shape_h5py_picks_itself(tmp_path):
    import h5py
    import numpy as np

    from h5sweep.storage.layouts import AUTO_LAYOUT_NAME, auto_chunk_shape

    for shape, dtype in [
        ((100, 100, 2000), "uint16"),
        ((160, 250, 5000), "uint16"),
        ((100, 100, 100_000), "uint16"),
        ((7, 3, 11), "float64"),
        ((4096, 4096), "uint16"),
        ((35_660, 64), "int16"),
        ((1, 1, 1), "uint8"),
    ]:
        with h5py.File(tmp_path / "auto.h5", "w") as f:
            made = f.create_dataset("d", shape=shape, dtype=dtype, chunks=True)
            assert auto_chunk_shape(shape, np.dtype(dtype).itemsize) == made.chunks, shape
    layouts = layouts_from_config(
        filled_section("layouts", {"auto": True, "chunks": {"xy": [4], "z": [256]}}), (100, 100, 2000), 2
    )
    auto = layouts[-1]
    assert auto.name == AUTO_LAYOUT_NAME and auto.chunk_shape == auto_chunk_shape((100, 100, 2000), 2)
    assert [lay.id for lay in layouts][:2] == ["contiguous", "chunked-4x4x256"]


def test_chunk_indices_are_the_grid_cells_a_box_touches():
    layout = Layout((4, 4, 10))
    assert layout.chunk_indices((3, 0, 9), (2, 4, 2)) == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1)]
    assert len(layout.chunk_indices((0, 0, 0), (8, 8, 20))) == layout.chunks_touched((0, 0, 0), (8, 8, 20)) == 8
    assert Layout((100, 1)).chunk_indices((0, 5), (100, 1)) == [(0, 5)]  # 2-D: one column chunk


def test_paged_layouts_are_every_layout_again_with_paged_aggregation_and_hdf5_writes_them(tmp_path):
    """``layouts.pages``: each layout of the grid also paged at each size; its id round-trips;
    HDF5 writes the file with the page strategy at that size (its own pipeline: the fast path
    places no page), Zarr and raw store none."""
    import copy
    from pathlib import Path

    import h5py
    import numpy as np
    from conftest import read_config_file

    from h5sweep.backends import load
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.sweep.model import load_sweep

    layouts = layouts_from_config(
        filled_section("layouts", {"contiguous": True, "chunks": {"xy": [4], "z": [256]}, "pages": ["64 KiB"]}),
        (8, 8, 512),
    )
    assert [lay.id for lay in layouts] == [
        "contiguous",
        "chunked-4x4x256",
        "contiguous-paged-65536",
        "chunked-4x4x256-paged-65536",
    ]
    assert all(Layout.from_id(lay.id) == lay for lay in layouts) and layouts[-1].page_label == "64 KiB"
    with pytest.raises(ConfigError, match=r"layouts\.pages\[0\]=256: is below HDF5's smallest page"):
        layouts_from_config(filled_section("layouts", {"contiguous": True, "pages": [256]}), (8, 8, 512))
    values = np.arange(8 * 8 * 512, dtype=np.uint16).reshape(8, 8, 512)
    hdf5 = load("hdf5")
    for layout in layouts[2:]:
        path = str(tmp_path / f"{layout.id}.h5")
        assert hdf5.write_fast(path, values, layout, parse_compression("none"), "data", 1) == "standard"
        with h5py.File(path, "r") as f:
            plist = f.id.get_create_plist()
            assert plist.get_file_space_strategy()[0] == h5py.h5f.FSPACE_STRATEGY_PAGE
            assert plist.get_file_space_page_size() == 65536
            assert np.array_equal(f["data"][...], values)
    config = copy.deepcopy(read_config_file(Path(__file__).parent / "configs" / "tiny.yaml"))
    config["layouts"] = {"contiguous": True, "shapes": [[2, 5, 64]], "pages": [4096]}
    config["backends"] = ["hdf5", "zarr", "raw"]
    config["zarr"] = {"readers": ["zarr-python"]}
    sweep = load_sweep(config, probe=False)
    paged = {(tf.backend.name, tf.layout.id) for tf in sweep.stores() if tf.layout.page_size}
    assert paged == {("hdf5", "contiguous-paged-4096"), ("hdf5", "chunked-2x5x64-paged-4096")}
