"""The replay's goal: a program's recorded reads (h5sweep.storage.trace), replayed by the read engine
on the layout the program itself read, take the time the program's own reads took.

The program is a small analysis of an MSI-like cube in HDF5 (16 x 16 x 256 chunks, gzip-1):
spectra at random pixels, slices of 25 planes and sub-cubes, through h5py's ``dset[...]`` as
a user's script reads. Each sample runs the program under the recorder and replays its
recording, in turn (the order alternates), cold (the file's pages dropped before the first
read, the rest as they come: ``cold: first``) and warm (the file read whole before). The
program's read time is the sum of its recorded calls' seconds; the replay's, the sum of its
timed reads.
"""

from __future__ import annotations

import os

import h5py
import numpy as np
from common import SAMPLES, spread
from harness import _read

from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases.trace import TraceCase
from h5sweep.measure.pagecache import evict
from h5sweep.storage import trace
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout

LAYOUT = Layout((16, 16, 256))
COMPRESSION = "gzip-1"


def analysis(path: str, seed: int = 3) -> float:
    """The program: what a user's script reads (the same reads every run); returns a value so
    that nothing read is left unused."""
    rng = np.random.default_rng(seed)
    total = 0.0
    with h5py.File(path, "r") as f:
        data = f["data"]
        nx, ny, nz = data.shape
        for _ in range(40):  # spectra at random pixels
            total += float(data[rng.integers(nx), rng.integers(ny), :].max())
        for _ in range(5):  # ion images: slices of 25 planes
            z = int(rng.integers(nz - 25))
            total += float(data[:, :, z : z + 25].mean())
        for _ in range(10):  # sub-cubes
            x, y, z = (int(rng.integers(n - s)) for n, s in zip(data.shape, (10, 10, 500), strict=True))
            total += float(data[x : x + 10, y : y + 10, z : z + 500].sum())
    return total


def _warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(16 * 2**20):
            pass


def bench_replay(directory: str, shape: tuple[int, ...], samples: int = SAMPLES) -> dict:
    source = SyntheticSource(shape, np.uint16, seed=0)
    path = os.path.join(directory, "replay.h5")
    write_file(path, source.materialize(), LAYOUT, parse_compression(COMPRESSION))
    recording, timed = os.path.join(directory, "replay.jsonl"), os.path.join(directory, "program.jsonl")
    with trace.record(recording):  # the recording replayed: the program's reads are the same every run
        analysis(path)
    case = TraceCase({"file": recording, "cold": "first"})
    ratios: dict[str, list[float]] = {"cold": [], "warm": []}
    for sample in range(samples):
        for mode in ("cold", "warm"):
            prepare = (lambda: evict(path)) if mode == "cold" else (lambda: _warm(path))
            times = {}
            for who in ("program", "replay") if sample % 2 == 0 else ("replay", "program"):
                prepare()
                if who == "program":
                    if os.path.exists(timed):
                        os.remove(timed)
                    with trace.record(timed):
                        analysis(path)
                    times[who] = sum(r["seconds"] for r in trace.load(timed))
                else:
                    rows = _read(HDF5, path, case, case.boxes(), source, LAYOUT, evict=mode == "cold")
                    times[who] = sum(r["seconds"] for r in rows)
            ratios[mode].append(times["replay"] / times["program"])
    reads = len(case.reads)
    for done in (path, recording, timed):
        os.remove(done)
    return {
        "samples": samples,
        "reads": reads,
        "layout": LAYOUT.id,
        "compression": COMPRESSION,
        "ratio_replay_vs_program_cold": spread(ratios["cold"]),
        "ratio_replay_vs_program_warm": spread(ratios["warm"]),
    }
