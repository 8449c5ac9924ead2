"""Run the metadata-overhead case on one filesystem (see :mod:`h5sweep.cases.metadata`)."""

from __future__ import annotations

import os

import h5py
import numpy as np

from h5sweep.cases.metadata import MetadataCase
from h5sweep.errors import VerificationError
from h5sweep.measure import pagecache, settle
from h5sweep.measure.lock import untimed_work
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.measure.timing import timed_io


def _groups(spectra: int, n: int) -> list[tuple[int, int]]:
    edges = np.linspace(0, spectra, n + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def run_metadata(directory: str, case: MetadataCase, data: np.ndarray, settle_s: float = 0.0) -> list[dict]:
    """Write and read back the data as N datasets for every N; one row per timed operation.
    Each write goes to a new file, after the filesystem's rest (``settle_s``,
    :mod:`h5sweep.measure.settle`) since the previous one was removed."""
    flat = data.reshape(-1, data.shape[2])  # spectra x z
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"metadata-{os.getpid()}.h5")
    rows = []
    try:
        for n in case.datasets:
            groups = _groups(flat.shape[0], n)
            for repeat in range(case.repeats):
                settle.remove_and_mark([path], directory)
                with timed_io(settle=lambda: settle.settle(directory, settle_s)) as written:
                    with h5py.File(path, "w") as f:
                        for k, (a, b) in enumerate(groups):
                            f.create_dataset(f"part{k:07d}", data=flat[a:b])
                    pagecache.fsync_path(path)
                file_bytes = os.stat(path).st_size
                out = np.empty_like(flat)
                pagecache.evict(path)
                evictable = pagecache.resident_fraction(path) < COLD_RESIDENT_FRACTION
                with timed_io() as read, h5py.File(path, "r") as f:
                    for k, (a, b) in enumerate(groups):
                        f[f"part{k:07d}"].read_direct(out[a:b])
                with untimed_work():
                    if not np.array_equal(out, flat):
                        raise VerificationError(f"{path}: values read back from {n} datasets differ from those written")
                timed = (
                    ("write", written.seconds, "", written.window, -1, written.settle_wait_s),
                    (
                        "read",
                        read.seconds,
                        cache_state(read.io.device_read, evictable),
                        read.window,
                        read.io.read_calls,
                        float("nan"),
                    ),
                )
                for operation, seconds, state, window, read_calls, settle_wait_s in timed:
                    rows.append(
                        {
                            "case": "metadata",
                            "repeat": repeat,
                            "seconds": seconds,
                            "operation": operation,
                            "cache_state": state,
                            "read_calls": read_calls,
                            "n_datasets": n,
                            "metadata_file_bytes": file_bytes,
                            "bytes_selected": flat.nbytes,
                            "variant": f"{operation}, {n} datasets",
                            "settle_wait_s": settle_wait_s,
                            **window.columns(),
                        }
                    )
    finally:
        if os.path.exists(path):
            os.remove(path)
    return rows
