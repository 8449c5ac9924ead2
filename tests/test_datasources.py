"""Data sources are deterministic, region by region, and look like the study's data."""

import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest

from h5sweep.storage.datasources import ChunkIndexSource, SyntheticSource, make_source
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout


def random_regions(shape, count, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        start = [int(rng.integers(0, n)) for n in shape]
        stop = [int(rng.integers(s + 1, n + 1)) for s, n in zip(start, shape, strict=True)]
        yield tuple(slice(a, b) for a, b in zip(start, stop, strict=True))


def test_synthetic_regions_equal_the_same_part_of_the_whole_cube():
    source = SyntheticSource((17, 23, 3001), np.uint16, seed=5)
    cube = source.materialize()
    for region in random_regions(cube.shape, 200):
        np.testing.assert_array_equal(source.region(region), cube[region])


def test_synthetic_values_depend_only_on_the_seed():
    a = SyntheticSource((8, 8, 2000), np.uint16, seed=1).materialize()
    assert np.array_equal(a, SyntheticSource((8, 8, 2000), np.uint16, seed=1).materialize())
    assert not np.array_equal(a, SyntheticSource((8, 8, 2000), np.uint16, seed=2).materialize())


def test_synthetic_spectra_have_peaks_over_a_noisy_baseline():
    cube = SyntheticSource((20, 20, 20_000), np.uint16, seed=0).materialize()
    spectrum = cube[10, 10].astype(float)
    assert np.median(spectrum) < 20  # mostly baseline noise
    assert spectrum.max() > 20 * np.median(spectrum)  # with strong peaks
    # intensities vary across the image: the brightest pixel of a peak image is far above the dimmest
    peak_z = int(np.argmax(cube.sum(axis=(0, 1))))
    image = cube[:, :, peak_z].astype(float)
    assert image.max() > 2 * image.min()


def test_gzip_4_compresses_the_default_cube_like_the_studys_donor_data():
    """The study saw ratios of 2.9 to 3.8 with gzip-4 on its 4 x 4 x 2048 test cube."""
    cube = SyntheticSource((100, 100, 10_000), np.uint16, seed=0).materialize()
    raw = packed = 0
    for x in range(0, 100, 12):  # a sample of whole 4 x 4 x 2048 chunks, zero padded at the edge
        for y in range(0, 100, 24):
            for z in range(0, 10_000, 2048):
                chunk = np.zeros((4, 4, 2048), np.uint16)
                block = cube[x : x + 4, y : y + 4, z : z + 2048]
                chunk[: block.shape[0], : block.shape[1], : block.shape[2]] = block
                raw += chunk.nbytes
                packed += len(zlib.compress(chunk.tobytes(), 4))
    assert 2.9 <= raw / packed <= 3.8


def test_chunk_index_holds_each_elements_chunk_number():
    source = ChunkIndexSource((10, 10, 100), np.uint16, Layout((4, 4, 32)))
    cube = source.materialize()
    # grid is 3 x 3 x 4 chunks
    assert cube[0, 0, 0] == 0 and cube[0, 0, 32] == 1 and cube[0, 4, 0] == 4 and cube[4, 0, 0] == 12
    assert cube[9, 9, 99] == 3 * 3 * 4 - 1
    assert np.unique(cube).size == 36
    # a contiguous file has no chunks: its values number notional 1 x 1 x 256 blocks, so an
    # unwritten (all-zero) file or a read from the wrong place cannot pass the check
    contiguous = ChunkIndexSource((10, 10, 600), np.uint16, Layout(None)).materialize()
    assert contiguous[0, 0, 255] == 0 and contiguous[0, 0, 256] == 1 and contiguous[0, 1, 0] == 3
    assert contiguous[9, 9, 599] == 10 * 10 * 3 - 1


def test_chunk_index_wraps_at_the_dtype_range():
    cube = ChunkIndexSource((300, 1, 1), np.uint8, Layout((1, 1, 1))).materialize()
    assert cube[256, 0, 0] == 0 and cube[299, 0, 0] == 43


def test_donor_is_tiled_to_the_target_shape(tmp_path):
    donor = np.arange(3 * 4 * 5, dtype=np.uint16).reshape(3, 4, 5)
    path = tmp_path / "donor.h5"
    with h5py.File(path, "w") as f:
        f["msi/cube"] = donor
    cfg = {"shape": [7, 9, 12], "dtype": "uint16", "fill": {"donor": {"path": str(path), "dataset": "msi/cube"}}}
    cube = make_source(cfg, Layout(None)).materialize()
    assert cube.shape == (7, 9, 12)
    assert cube[6, 8, 11] == donor[0, 0, 1]
    assert np.array_equal(cube[:3, :4, :5], donor)
    bad = dict(cfg, fill={"donor": {"path": str(path), "dataset": "nope"}})
    with pytest.raises(ConfigError, match="dataset.fill.donor.dataset='nope'"):
        make_source(bad, Layout(None))


@pytest.mark.parametrize(
    "donor, dataset_dtype, key, reason",
    [
        (None, "uint16", "dataset.fill.donor.path", "does not exist"),
        (np.zeros((4, 5), dtype=np.uint16), "uint16", "dataset.fill.donor.dataset", "non-empty 3-D array"),
        (
            np.full((3, 4, 5), 0.5, dtype=np.float32),
            "uint16",
            "dataset.fill.donor.dataset",
            "holds float32, not integers",
        ),
        (np.full((3, 4, 5), 70000, dtype=np.int32), "uint16", "dataset.fill.donor.dataset", "do not fit uint16"),
    ],
)
def test_a_donor_that_is_missing_or_of_the_wrong_rank_or_type_is_refused_naming_the_key(
    tmp_path, donor, dataset_dtype, key, reason
):
    import yaml

    from h5sweep.sweep.model import load_sweep

    path = tmp_path / "donor.h5"
    if donor is not None:
        with h5py.File(path, "w") as f:
            f["cube"] = donor
    config = yaml.safe_load((Path(__file__).parent / "configs" / "tiny.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"].update(dtype=dataset_dtype, fill={"donor": {"path": str(path), "dataset": "cube"}})
    with pytest.raises(ConfigError) as err:
        load_sweep(config)
    assert err.value.key == key and reason in str(err.value)


def test_kept_values_are_the_synthetic_values_the_writes_took_region_by_region(tmp_path):
    """The values a sweep keeps for its writes, mapped from their file: every region equals the
    synthetic source's, the tolerance's magnitude too, a copy sent to another process maps the
    same file; a file of another shape is refused; missing, the source is made anew."""
    import pickle

    from h5sweep.storage.datasources import KeptValues, kept_or_made, save_values

    dataset = {"shape": [6, 7, 300], "dtype": "uint16", "fill": "synthetic", "seed": 3}
    made = make_source(dataset, Layout(None))
    path = str(tmp_path / "values.npy")
    save_values(made.materialize(), path)
    kept = kept_or_made(dataset, Layout(None), path)
    assert isinstance(kept, KeptValues) and kept.shape == (6, 7, 300) and kept.dtype == np.uint16
    for region in [(slice(0, 6), slice(0, 7), slice(10, 35)), (slice(2, 4), slice(3, 5), slice(0, 300))]:
        assert np.array_equal(kept.region(region), made.region(region))
        assert kept.region(region).flags.writeable  # a copy, not a view of the file
    assert kept.largest_magnitude() == made.largest_magnitude()
    again = pickle.loads(pickle.dumps(kept))
    assert again.path == path and np.array_equal(again.materialize(), made.materialize())
    with pytest.raises(ValueError, match=r"holds uint16\[6, 7, 300\], not the dataset's uint16\[6, 7, 301\]"):
        KeptValues(path, {**dataset, "shape": [6, 7, 301]})
    assert isinstance(kept_or_made(dataset, Layout(None), str(tmp_path / "none.npy")), SyntheticSource)
    assert isinstance(kept_or_made(dataset, Layout(None), None), SyntheticSource)
