"""The machine probe: a fixed piece of work (memory copy, inflate, cold disk read) timed before,
between and after the sweeps, so a run-wide shift of the medians can be set beside the
machine's own."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import zlib

import numpy as np

from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state, evict, io_counters, resident_fraction
from h5sweep.measure.timing import gc_paused, touched_empty
from h5sweep.storage.datasources import SyntheticSource

PROBE_BYTES = 64 * 2**20


PROBE_SAMPLES = 60  # about 4 s per probe on the reference machine


PROBES_PER_POINT = 3  # back to back, to show how far the machine moves within seconds


PROBE_READ_BYTES = 64 * 1024  # one call of the cold read, as HDF5 reads a contiguous file


def machine_probe(directory: str, samples: int = PROBE_SAMPLES) -> dict:
    """Not a goal: one fixed piece of work, timed before, between and after the two runs of
    the default sweep, so that a shift of their medians can be set beside the machine's own.
    Medians of ``samples``: a 64 MiB copy in memory (what an in-memory read costs), inflating
    8 MiB of gzip-4 data (what a compressed read costs on top) and a cold read of a 64 MiB file
    in the directory under test, evicted before each read, in 64 KiB ``preadv`` calls (what a
    cold read from the disk costs); with the device bytes each cold read fetched and its cache
    state. The file is written once and kept for the next probe."""
    path = _probe_path(directory)
    if not os.path.exists(path) or os.path.getsize(path) != PROBE_BYTES:
        with open(path, "wb") as f:
            f.write(np.random.default_rng(0).integers(0, 256, PROBE_BYTES, dtype=np.uint8).tobytes())
            f.flush()
            os.fsync(f.fileno())
    source = np.ones(PROBE_BYTES, dtype=np.uint8)
    target = touched_empty(PROBE_BYTES, np.uint8)
    deflated = zlib.compress(SyntheticSource((16, 16, 16384), np.uint16, seed=0).materialize().tobytes(), 4)
    pieces = [(at, memoryview(target)[at : at + PROBE_READ_BYTES]) for at in range(0, PROBE_BYTES, PROBE_READ_BYTES)]
    copies, inflations, reads, device, states = [], [], [], [], set()
    for _ in range(samples):
        with gc_paused():
            t0 = time.perf_counter()
            np.copyto(target, source)
            copies.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            zlib.decompress(deflated)
            inflations.append(time.perf_counter() - t0)
        evict(path)
        evictable = resident_fraction(path) < COLD_RESIDENT_FRACTION  # not on tmpfs
        fd = os.open(path, os.O_RDONLY)
        try:
            before = io_counters()
            with gc_paused():
                t0 = time.perf_counter()
                for at, piece in pieces:
                    os.preadv(fd, [piece], at)
                reads.append(time.perf_counter() - t0)
            fetched = (io_counters() - before).device_read
        finally:
            os.close(fd)
        device.append(fetched)
        states.add(cache_state(fetched, evictable))
    return {
        "samples": samples,
        "memory_copy_s": statistics.median(copies),
        "inflate_s": statistics.median(inflations),
        "cold_read_s": statistics.median(reads),
        "cold_read_device_bytes": int(statistics.median(device)),
        "cold_read_cache_states": sorted(states),
        "probe_bytes": PROBE_BYTES,
    }


def _probe_path(directory: str) -> str:
    return os.path.join(directory, "machine-probe.bin")


def remove_probe_file(directory: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(_probe_path(directory))


PROBE_POINTS = ("before_first_run", "between_runs", "after_second_run")


PROBE_METRICS = (("memory copy", "memory_copy_s"), ("inflate", "inflate_s"), ("disk cold read", "cold_read_s"))


def probe_figures(probes: dict[str, list[dict]]) -> dict:
    """From the probes at the three points (several back to back at each): the probe's second
    run / first per metric, a run taken to see the mean of the points on either side of it
    (comparable with each filesystem's run shift), and the widest max / min of the probes
    taken back to back at one point (how far the machine moves within seconds)."""
    level = {
        point: {key: statistics.median(p[key] for p in probes[point]) for _, key in PROBE_METRICS}
        for point in PROBE_POINTS
    }
    before, between, after = (level[point] for point in PROBE_POINTS)
    return {
        "probe_second_over_first": {
            name: (between[key] + after[key]) / (before[key] + between[key]) for name, key in PROBE_METRICS
        },
        "probe_back_to_back_spread": {
            name: max(max(p[key] for p in probes[point]) / min(p[key] for p in probes[point]) for point in PROBE_POINTS)
            for name, key in PROBE_METRICS
        },
    }
