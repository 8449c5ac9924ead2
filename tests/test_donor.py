"""Your data as the donor: an HDF5 dataset or a Zarr array of any rank, streamed into every
test store block by block (never read whole), and its own layout measured as ``donor``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml
import zarr

from h5sweep.storage.datasources import DonorSource, StoredValues
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import load_sweep

CONFIGS = Path(__file__).parent / "configs"


def _ramp(shape, dtype=np.uint16) -> np.ndarray:
    return (np.arange(np.prod(shape), dtype=np.int64).reshape(shape) % 9973).astype(dtype)


def test_a_region_of_a_tiled_donor_is_read_in_boxes_that_do_not_wrap(tmp_path):
    donor = _ramp((5, 3, 7, 4))
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f["v"] = donor
    source = DonorSource((12, 3, 9, 10), np.dtype(np.uint16), str(path), "v")
    whole = np.tile(donor, (3, 1, 2, 3))[:12, :3, :9, :10]
    assert np.array_equal(source.materialize(), whole)
    region = (slice(3, 11), slice(1, 3), slice(5, 9), slice(2, 9))
    assert np.array_equal(source.region(region), whole[region])


def test_a_zarr_donor_streams_into_storage_order_and_its_reads_are_kept_off_the_clock(tmp_path):
    donor = _ramp((6, 5, 40))
    array = zarr.create_array(
        store=str(tmp_path / "d.zarr"), name="cube", shape=donor.shape, chunks=(3, 5, 8), dtype="uint16"
    )
    array[...] = donor
    source = DonorSource((6, 5, 40), np.dtype(np.uint16), str(tmp_path / "d.zarr"), "cube")
    stored = StoredValues(source, Layout((2, 2, 8), order="zxy"))
    assert stored.shape == (40, 6, 5)
    block = stored[(slice(8, 16), slice(0, 2), slice(0, 5))]
    assert np.array_equal(block, donor.transpose(2, 0, 1)[8:16, 0:2, 0:5])
    assert stored.take_compute_s() > 0 and stored.take_compute_s() == 0


def _donor_config(tmp_path, donor_path: str, dataset: str, shape) -> dict:
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"].update(shape=list(shape), fill={"donor": {"path": donor_path, "dataset": dataset}})
    config["backends"] = ["hdf5", "zarr", "raw"]
    return config


def test_the_donors_own_chunks_and_codec_are_a_layout_named_donor(tmp_path):
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=_ramp((20, 20, 3000)), chunks=(10, 10, 500), compression="gzip", compression_opts=6)
    sweep = load_sweep(_donor_config(tmp_path, str(path), "v", (20, 20, 3000)))
    donor = [layout for layout in sweep.layouts if layout.name == "donor"]
    assert [layout.chunk_shape for layout in donor] == [(10, 10, 500)]
    stores = {(tf.backend.name, tf.compression.name) for tf in sweep.stores() if tf.layout.name == "donor"}
    assert stores == {("hdf5", "gzip-6"), ("zarr", "gzip-6")}  # the donor's codec only: gzip-6 is not configured
    others = {tf.compression.name for tf in sweep.stores() if tf.layout.name != "donor" and tf.layout.chunk_shape}
    assert others == {"none", "gzip-1"}


# Each store's job in a process of its own, as the workflow runs it, its address space capped
# at what it holds after its imports plus three quarters of the donor: a job that read the
# donor whole could not allocate it. The donor is 64 MiB, so the blocks a job holds at once
# are scaled down with it (a contiguous write's slab, a donor read's slab: 64 and 8 MiB in a
# sweep, here 2 MiB and 512 KiB): a job then takes 25-35 MiB of address space beyond its
# imports, under the cap's 48 MiB, as a sweep's job is far under a donor of gigabytes.
CAPPED = textwrap.dedent(
    """
    import json, resource, sys, threading
    from h5sweep import backends
    from h5sweep.sweep import stages
    from h5sweep.storage import datasources, layouts
    layouts.CONTIGUOUS_WRITE_BLOCK_BYTES = 2 * 2**20
    datasources._SLAB_ELEMENTS = 2**18
    from h5sweep.sweep.model import load_sweep
    from h5sweep.sweep.settings import generate_settings
    config, donor_bytes, index = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    sweep = load_sweep(config)
    fs = sweep.filesystems[0]
    stores = [(tf.backend.name, tf.layout.id, tf.compression.name) for tf in sweep.stores()]
    if index < 0:
        print(json.dumps(stores))
        sys.exit()
    backend, layout, comp = stores[index]
    backends.load(backend)  # everything a job loads, before the cap
    import tensorstore
    threading.stack_size(1 << 20)  # a thread's stack is address space too
    size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + donor_bytes * 3 // 4, resource.RLIM_INFINITY))
    path = f"{fs.directory}/{backend}-{layout}-{comp}"
    stages.run_generate(generate_settings(sweep, fs, backend, layout, comp), path, path + ".csv")
    print(path)
    """
)


@pytest.mark.heavy
def test_a_donor_larger_than_the_memory_cap_is_streamed_into_every_store(tmp_path):
    from conftest import without_rest

    shape = (32, 128, 8192)  # 64 MiB of uint16
    donor = tmp_path / "donor.h5"
    with h5py.File(donor, "w") as f:
        dset = f.create_dataset(
            "v", shape=shape, dtype="uint16", chunks=(16, 16, 2048), compression="gzip", compression_opts=1
        )
        for i in range(0, shape[0], 16):
            dset[i : i + 16] = _ramp((16, *shape[1:])) + i
    config = without_rest(_donor_config(tmp_path, str(donor), "v", shape))
    config["layouts"] = {"contiguous": True, "shapes": [[32, 32, 1024]]}
    config["compression"] = ["none"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 2, "depth": 10}}
    env = {"MALLOC_ARENA_MAX": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def job(index: int) -> str:
        args = [sys.executable, "-c", CAPPED, json.dumps(config), str(int(np.prod(shape)) * 2), str(index)]
        run = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        return run.stdout.strip()

    stores = json.loads(job(-1))
    done = [[*store, job(i)] for i, store in enumerate(stores)]
    kinds = {(backend, layout, comp) for backend, layout, comp, _ in done}
    assert ("hdf5", "chunked-16x16x2048", "gzip-1") in kinds and ("zarr", "chunked-16x16x2048", "gzip-1") in kinds
    assert ("raw", "contiguous", "none") in kinds and ("hdf5", "contiguous", "none") in kinds
    with h5py.File(donor, "r") as f:
        expected = f["v"][20:24, 10:12, :]
    for backend, _, _, path in done:
        if backend == "zarr":
            values = zarr.open_array(path, mode="r")[20:24, 10:12, :]
        elif backend == "raw":
            values = np.load(path, mmap_mode="r")[20:24, 10:12, :]
        else:
            with h5py.File(path, "r") as f:
                values = f["data"][20:24, 10:12, :]
        assert np.array_equal(values, expected), path
        rows = pd.read_csv(path + ".csv")
        assert (rows["query_file_method"] == "write-case").all() and (rows["source_read_s"] > 0).all()


@pytest.mark.workflow
def test_a_4d_zarr_donor_runs_end_to_end_and_its_own_layout_is_ranked_as_donor(tmp_path):
    from conftest import REPO, Workflow

    donor = tmp_path / "climate.zarr"
    values = (np.sin(np.arange(30 * 4 * 20 * 40).reshape(30, 4, 20, 40) / 50.0) * 100).astype("float32")
    array = zarr.create_array(
        store=str(donor),
        name="t2m",
        shape=values.shape,
        chunks=(10, 1, 20, 20),
        dtype="float32",
        compressors=zarr.codecs.GzipCodec(level=3),
    )
    array[...] = values
    config = yaml.safe_load((REPO / "tests" / "configs" / "rank4.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"]["fill"] = {"donor": {"path": str(donor), "dataset": "t2m"}}  # tiled to 48 x 4 x 32 x 64
    config["figures"] = False  # rank 4's figures: test_anyrank
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / config["sweep"]
    ranked = pd.read_csv(results / "recommendation.csv", keep_default_na=False)
    donor_rows = ranked[ranked["layout_name"] == "donor"]
    assert set(zip(donor_rows["backend"], donor_rows["compression"], strict=True)) == {
        ("hdf5", "gzip-3"),
        ("zarr", "gzip-3"),
    }
    assert set(donor_rows["chunk_shape"]) == {"10x1x20x20"}
    measured = pd.read_parquet(results / "measurements.parquet")
    writes = measured[measured["case"] == "write"]
    assert (writes["query_file_method"] == "write-case").all() and (writes["source_read_s"] > 0).all()
    assert "donor" in (results / "recommendation.md").read_text()
