"""Goal 1, generation: fast query-file writes against raw sequential writes (uncompressed) and
against HDF5's single-threaded filter pipeline (compressed), and Zarr's."""

from __future__ import annotations

import os
import shutil
import time

import h5py
import numpy as np
from common import SAMPLES, SETTLE_S, _timed, spread

from h5sweep.backends.fastwrite import write_fast
from h5sweep.backends.hdf5 import write_file
from h5sweep.measure import settle
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout


def raw_write_seconds(path: str, data: np.ndarray) -> float:
    """One large sequential write of the same bytes, fsync included."""

    def write():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(np.ascontiguousarray(data)).cast("B")
            while len(view):
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    return _timed(write)


def settled_removal(path: str, settle_s: float) -> None:
    """Remove the previous contender's file or directory (synced), and leave the device
    idle for ``settle_s`` so that the blocks it released are released (see SETTLE_S)."""
    settle.remove_and_mark([path], os.path.dirname(os.path.abspath(path)))
    time.sleep(settle_s)


def bench_generation(
    directory: str, shape: tuple[int, ...], threads: int, samples: int = SAMPLES, settle_s: float = SETTLE_S
) -> dict:
    data = SyntheticSource(shape, np.uint16, seed=0).materialize()
    nbytes = data.nbytes
    path = os.path.join(directory, "bench.h5")
    out: dict = {"bytes": nbytes, "threads": threads, "samples": samples, "settle_s": settle_s}
    none, gzip = parse_compression("none"), parse_compression("gzip-4")
    chunked = Layout((4, 4, 2048))
    # gzip through HDF5's pipeline is slow: its contest runs on the first fifth of z
    gzip_data = np.ascontiguousarray(data[:, :, : min(shape[2], max(2048, shape[2] // 5))])
    contiguous, chunks, pipeline = [], [], []

    def fresh(seconds_of, *args) -> float:
        """Time a write into a new file on a quiet disk: the previous file is removed and
        its blocks released before the clock, not during it."""
        settled_removal(path, settle_s)
        return seconds_of(*args)

    # interleave the contenders so that drifts of the machine hit both; a ratio per round
    for _ in range(samples):
        raw = fresh(raw_write_seconds, path, data)
        contiguous.append(raw / fresh(_timed, write_fast, path, data, Layout(None), none))
        raw = fresh(raw_write_seconds, path, data)
        chunks.append(raw / fresh(_timed, write_fast, path, data, chunked, none))
        standard = fresh(_timed, write_file, path, gzip_data, chunked, gzip)
        pipeline.append(standard / fresh(_timed, write_fast, path, gzip_data, chunked, gzip, "data", threads))
    with h5py.File(path, "r") as f:
        out["fast_gzip4_reads_back_identical"] = bool(np.array_equal(f["data"][...], gzip_data))
    os.remove(path)
    out["ratio_zarr_fast_vs_zarr_python"] = spread(
        bench_zarr_generation(directory, gzip_data, threads, samples, settle_s)
    )
    out["ratio_contiguous_vs_raw"] = spread(contiguous)
    out["ratio_chunked_vs_raw"] = spread(chunks)
    out["ratio_gzip_fast_vs_filter_pipeline"] = spread(pipeline)
    return out


def bench_zarr_generation(
    directory: str, data: np.ndarray, threads: int, samples: int, settle_s: float = SETTLE_S
) -> list[float]:
    """zarr-python's own writer (the whole array in one assignment, its codec pipeline and
    concurrency) against the fast path (chunks encoded once by numcodecs in ``threads``
    threads, files written directly) on the same Blosc store, interleaved: one ratio per
    round."""
    from h5sweep.backends import zarr as zarr_backend

    path = os.path.join(directory, "bench.zarr")
    layout, blosc = Layout((4, 4, 2048)), parse_compression("blosc-lz4-5-shuffle")

    def fresh(write) -> float:
        settled_removal(path, settle_s)
        return _timed(write)

    def by_zarr_python() -> None:
        zarr_backend.create_array(path, data.shape, layout.chunk_shape, data.dtype, blosc)[...] = data
        zarr_backend.fsync_tree(path)

    ratios = []
    for _ in range(samples):
        standard = fresh(by_zarr_python)
        ratios.append(standard / fresh(lambda: zarr_backend.write_fast(path, data, layout, blosc, threads)))
    shutil.rmtree(path)
    return ratios
