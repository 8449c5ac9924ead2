"""Goal 2, the harness: the timed region of a query against a bare ``H5Dread`` of the same
selections, and the bytes cold reads fetch from the device against the stored bytes of the
chunks they touch."""

from __future__ import annotations

import os
import statistics
import time

import h5py
import numpy as np
from common import SAMPLES, spread
from h5py import h5s

from h5sweep.backends.fastwrite import write_fast
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.cases import read_cases_from_config
from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store
from h5sweep.measure.timing import gc_paused, touched_empty
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.filesystems import mount_info
from h5sweep.storage.layouts import Layout


def _bare_reads(path: str, selections, repeats_dtype) -> float:
    """Median of bare ``H5Dread`` calls of the selections (dataspaces built beforehand)."""
    with h5py.File(path, "r") as f:
        dset = f["data"]
        buffer = touched_empty(selections[0].size, repeats_dtype)
        mem_space, space = h5s.create_simple(buffer.shape), dset.id.get_space()
        times = []
        with gc_paused():
            for sel in selections:
                space.select_hyperslab(sel.start, buffer.shape)
                t0 = time.perf_counter_ns()
                dset.id.read(mem_space, space, buffer)
                times.append(time.perf_counter_ns() - t0)
    return statistics.median(times[1:]) / 1e9


def _read(backend, path, case, selections, source, layout, evict=True, readahead=True) -> list[dict]:
    """The case's chosen selections read from one store by the workflow's read engine."""
    plan = ReadPlan([case], source.shape, 0, selections={case.name: selections}, evict=evict, readahead=readahead)
    return read_store(StoreUnderTest(backend, path, layout, source), plan)


def bench_harness(directory: str, shape: tuple[int, ...], repeats: int = 200, samples: int = SAMPLES) -> dict:
    """The harness against bare reads on the smallest uncompressed read (128 values, warm),
    and cold device bytes against stored chunk bytes with readahead off."""
    source = SyntheticSource(shape, np.uint16, seed=0)
    data = source.materialize()
    layout = Layout((4, 4, 2048))  # 64 KiB chunks
    path = os.path.join(directory, "harness.h5")
    write_fast(path, data, layout, parse_compression("none"))
    small, spectra = read_cases_from_config(
        {
            "subcube": {"repeats": repeats, "size": [1, 1, 128], "cold": "first"},
            "spectra": {"repeats": 10, "size": 5, "cold": "every"},
        },
        shape,
    )[::-1]
    selections = small.selections(shape, 0)
    with h5py.File(path, "r") as f:  # warm the file
        f["data"][...]
    overhead = []
    for _ in range(samples):
        rows = _read(HDF5, path, small, selections, source, layout, evict=False)
        harness = statistics.median(r["seconds"] for r in rows[1:])
        overhead.append(harness / _bare_reads(path, selections, data.dtype))
    out = {"samples": samples, "selection_bytes": 128 * 2, "fs_type": mount_info(directory).fs_type}
    out["ratio_harness_vs_bare"] = spread(overhead)
    # cold reads of whole 5 x 5 spectra: every read from an evicted, reopened file
    amplification, stored_total = [], 0
    spectra_selections = spectra.selections(shape, 1)
    for _ in range(samples):
        rows = _read(HDF5, path, spectra, spectra_selections, source, layout, readahead=False)
        device = sum(r["device_read_bytes"] for r in rows)
        stored_total = sum(r["stored_bytes_touched"] for r in rows)
        amplification.append(device / max(1, stored_total))
        out["cold_cache_states"] = sorted({r["cache_state"] for r in rows})
    out["cold_stored_bytes_touched"] = stored_total
    out["ratio_cold_device_vs_stored"] = spread(amplification)
    os.remove(path)
    return out
