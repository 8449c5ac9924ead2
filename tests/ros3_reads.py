"""HDF5's ROS3 driver against a file object without a cache, run by tests/test_objectstore.py
in an environment whose h5py has the driver (the MPI environment's, built against Debian's
HDF5 1.10.8), beside a server in the test's process:

    python ros3_reads.py write|read ENDPOINT BUCKET PREFIX FOLDER

``write`` writes a paged and an unpaged HDF5 file of the same chunks into FOLDER and uploads
them (exit 3 where this h5py has no ROS3 driver); ``read`` reads the same boxes of each
through h5sweep's opener, by ROS3 and by an fsspec file object without a cache, each through
a new client whose open is counted with its read (no page buffer: a parallel HDF5 has none),
checks every value, and prints each read's counts as JSON."""

from __future__ import annotations

import json
import sys

import numpy as np

from h5sweep.backends.chunk_cache import DEFAULT_CACHE
from h5sweep.backends.hdf5_remote import h5py_has_ros3
from h5sweep.backends.remote import RemoteOption, classifier, open_remote, request_log
from h5sweep.storage import objectstore
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import FileRead, S3Location
from h5sweep.storage.targets.s3 import upload

SHAPE = (20, 20, 500)
PAGE = 4096
LAYOUTS = {"unpaged": Layout((5, 5, 100)), "paged": Layout((5, 5, 100), page_size=PAGE)}
BOXES = [((3, 4, 120), (6, 2, 150)), ((0, 0, 200), (20, 20, 10))]  # spectra; a slice
# no page buffer: a parallel HDF5 (the MPI environment's) has none
READS = {
    "ros3": FileRead(block_size=0, cache_type="none", driver=objectstore.ROS3),
    "fsspec": FileRead(cache_type="none"),
}


def values() -> np.ndarray:
    return np.random.default_rng(3).integers(0, 60000, SHAPE, dtype=np.uint16)


def write(location: S3Location, folder: str) -> None:
    """h5py's own writes (h5sweep's fast writer needs HDF5 1.12.3's chunk iteration)."""
    import h5py

    for name, layout in LAYOUTS.items():
        local = f"{folder}/{name}.h5"
        pages = {"fs_strategy": "page", "fs_page_size": layout.page_size} if layout.page_size else {}
        with h5py.File(local, "w", **pages) as f:
            f.create_dataset("data", data=values(), chunks=layout.chunk_shape)
        upload(objectstore.client(location), location, name, local)


def read(location: S3Location, folder: str) -> list[dict]:
    rows = []
    for name in LAYOUTS:
        classify = classifier("hdf5", f"{folder}/{name}.h5", "data")
        for how, fetch in READS.items():
            for start, size in BOXES:
                log = request_log("hdf5", RemoteOption(DEFAULT_CACHE, fetch), location, classify)
                mark = log.mark()
                opened = open_remote("hdf5", location, name, "data", log, fetch, DEFAULT_CACHE.open_kwargs())
                buffer = np.empty(size, np.uint16)
                opened.prepare(start, buffer)()
                opened.close()
                counts = log.since(mark)
                box = tuple(slice(a, a + n) for a, n in zip(start, size, strict=True))
                assert np.array_equal(buffer, values()[box]), (name, how, start)
                rows.append({"file": name, "read": how, "start": list(start), **{k: int(v) for k, v in counts.items()}})
    return rows


if __name__ == "__main__":
    step, endpoint, bucket, prefix, folder = sys.argv[1:]
    if not h5py_has_ros3():
        sys.exit(3)
    where = S3Location(endpoint, bucket, prefix)
    if step == "write":
        write(where, folder)
    else:
        print(json.dumps(read(where, folder)))
