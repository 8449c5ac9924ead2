"""Bench goal of the parallel passes: a collective read pass of the contiguous ORIGDOQ image
(7,639 x 6,308 uint8, Folk & Choi) by P = 2 ranks, 525 columns per access, reaches at least
0.7 x the bandwidth of bare MPI-IO (``File.Read_at_all`` through mpi4py) reading the same byte
ranges of the same file with the same deal, both cold. Samples are interleaved (h5sweep, bare,
bare, h5sweep, ...); the ratio of each neighbouring pair is reported as median and range.

Run: ``make bench-mpiio`` (``mpirun -n 2 .venv-mpi/bin/python bench/mpiio.py DIR``).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from h5sweep.backends.chunk_cache import DEFAULT_CACHE
from h5sweep.cases import parallel
from h5sweep.cases.parallel import passes
from h5sweep.measure import pagecache
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import make_source
from h5sweep.storage.layouts import Layout

DATASET = {"shape": [7639, 6308], "dtype": "uint8", "fill": "synthetic", "seed": 0, "name": "data"}
K = 525
SAMPLES = 5
GOAL = 0.7


def _bare_pass(comm, path: str, offset: int, parts, rank: int) -> float:
    """Every access of this rank's part as one ``Read_at_all`` of a subarray view of the image
    (the rows x k bytes of its columns), the ranks with fewer accesses joining with empty reads;
    the seconds from the barrier before the first to the barrier after the last."""
    from mpi4py import MPI

    rows, columns = DATASET["shape"]
    mine = parts[rank]
    most = max(len(p) for p in parts)
    views, buffers = [], []
    for start, count in mine:
        view = MPI.BYTE.Create_subarray([rows, columns], [rows, count], [0, start]).Commit()
        views.append(view)
        buffers.append(np.empty((rows, count), dtype=np.uint8))
    handle = MPI.File.Open(comm, path, MPI.MODE_RDONLY)
    empty = np.empty(0, dtype=np.uint8)
    comm.Barrier()
    t0 = time.perf_counter_ns()
    for i in range(most):
        if i < len(mine):
            handle.Set_view(offset, MPI.BYTE, views[i])
            handle.Read_at_all(0, buffers[i])
        else:
            handle.Set_view(offset, MPI.BYTE, MPI.BYTE)
            handle.Read_at_all(0, empty)
    comm.Barrier()
    elapsed = (time.perf_counter_ns() - t0) / 1e9
    handle.Close()
    for view in views:
        view.Free()
    return comm.allreduce(elapsed, op=MPI.MAX)


def main(directory: str) -> int:
    import h5py
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    layout = Layout(None)
    path = os.path.join(directory, "origdoq-contiguous.h5")
    source = make_source(DATASET, layout)
    if rank == 0 and not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=source.materialize())
    comm.Barrier()
    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        offset = f["data"].id.get_offset()
    from h5sweep import backends

    backend = backends.load("hdf5")
    ctx = {
        "comm": comm,
        "backend": backend,
        "path": path,
        "name": "data",
        "dataset": DATASET,
        "shape": tuple(DATASET["shape"]),
        "axis": 1,
        "units": "columns",
        "remainder": "study",
        "layout": layout,
        "compression": parse_compression("none"),
        "source": source,
        "nodes": 1,
        "versions": backend.versions(),
        "limit_s": None,
        "hints": {},
        "tasks_per_node": None,
    }
    parts = parallel.deal(DATASET["shape"][1], K, size, "collective")
    ours, bare = [], []
    for sample in range(SAMPLES):
        order = ("h5sweep", "bare") if sample % 2 == 0 else ("bare", "h5sweep")
        for which in order:
            if which == "h5sweep":
                row = passes.one_pass(ctx, "read", "collective", K, DEFAULT_CACHE, sample)
                seconds = comm.bcast(row["seconds"] if rank == 0 else None, root=0)
                ours.append(seconds)
            else:
                comm.Barrier()
                pagecache.evict(path)  # cold on every rank's node, as the pass is
                bare.append(_bare_pass(comm, path, offset, parts, rank))
    if rank == 0:
        raw = int(np.prod(DATASET["shape"]))
        ratios = [b / o for o, b in zip(ours, bare, strict=True)]  # bandwidth ours / bare
        result = {
            "goal": f"collective read pass / bare MPI-IO Read_at_all >= {GOAL}",
            "processes": size,
            "h5sweep_bytes_per_s": [raw / s for s in ours],
            "bare_bytes_per_s": [raw / s for s in bare],
            "ratio_median": float(np.median(ratios)),
            "ratio_range": [float(min(ratios)), float(max(ratios))],
            "met": bool(np.median(ratios) >= GOAL),
        }
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results/scratch/bench-mpiio"))
