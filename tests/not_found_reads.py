"""Reads of a store on an object store whose relay answers a seeded share of the GETs of the
store's objects 404 Not Found, one selection at a time through the read engine: what each
read said (its error, or None) and the keys the relay answered 404 for during it. Used by
tests/test_faults.py in its own process, and run by it in the MPI environment, whose h5py has
HDF5's ROS3 driver, beside a server in the test's process:

    python not_found_reads.py ENDPOINT BUCKET PREFIX FOLDER

prints the reads of an HDF5 store read by ROS3 as JSON (exit 3 where this h5py has no ROS3
driver)."""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import unquote, urlsplit

import numpy as np

from h5sweep import backends
from h5sweep.backends.hdf5_remote import h5py_has_ros3
from h5sweep.backends.remote import RemoteBackend
from h5sweep.cases import read_cases_from_config
from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store
from h5sweep.storage import objectstore
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.latency import NOT_FOUND, Faults
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import FileRead, S3Location

SHAPE = (10, 10, 200)
ROS3 = FileRead(block_size=0, cache_type="none", driver=objectstore.ROS3)


def _write(backend: str, clean: S3Location, staging: str, read, layout: Layout, source) -> str:
    path = os.path.join(staging, f"store.{backend}")
    remote = RemoteBackend(backends.load(backend), clean, staging, read)
    if backend == "hdf5":  # h5py's own write: h5sweep's fast writer needs HDF5 1.12.3
        import h5py

        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=source.materialize(), chunks=layout.chunk_shape)
        remote._upload(path)
    else:
        remote.write_fast(path, source.materialize(), layout, parse_compression("none"), "data", 1)
    return path


def reads(backend: str, clean: S3Location, staging: str, share: float, option=None, read=None, layout=None):
    """The store written on ``clean`` and uploaded (``layout``: raw's contiguous, the others'
    chunks of 5 x 5 x 100 unsaid), then read 12 times through a relay that answers ``share``
    of the GETs of its objects 404: the backend's label, and (said, keys) per read."""
    layout = layout or (Layout(None) if backend == "raw" else Layout((5, 5, 100)))
    source = SyntheticSource(SHAPE, np.uint16, seed=5)
    path = _write(backend, clean, staging, read, layout, source)
    faulty = S3Location(clean.endpoint, clean.bucket, clean.prefix, 0.0, Faults(not_found=share, seed=1))
    remote = RemoteBackend(backends.load(backend), faulty, staging, read)
    (case,) = read_cases_from_config({"slice": {"repeats": 12}}, SHAPE)
    selections = ReadPlan([case], SHAPE, 3).selections_of(case, "random", layout.chunk_shape)
    log = objectstore.relay(faulty).log_path
    found = []
    for selection in selections:
        mark = os.path.getsize(log)
        plan = ReadPlan([case], SHAPE, 0, selections={case.name: [selection]})
        store = StoreUnderTest(remote, path, layout, source, read_options=[option] if option else None)
        try:
            read_store(store, plan)  # every value checked against the source
            said = None
        except VerificationError as err:
            said = str(err)
        with open(log, encoding="latin-1") as f:
            f.seek(mark)
            lines = [line.rstrip("\n").split("\t") for line in f]
        injected = [line for line in lines if line[5] == NOT_FOUND]
        assert all(line[3] == "404" for line in injected)
        keys = sorted({unquote(urlsplit(line[1]).path).split("/", 2)[2] for line in injected})
        found.append((said, keys))
    return remote.label, found


if __name__ == "__main__":
    endpoint, bucket, prefix, folder = sys.argv[1:]
    if not h5py_has_ros3():
        sys.exit(3)
    # contiguous: the engine's count of a chunked file's stored bytes needs HDF5 1.12.3, and
    # this h5py's HDF5 is older
    label, found = reads("hdf5", S3Location(endpoint, bucket, prefix), folder, 0.05, read=ROS3, layout=Layout(None))
    print(json.dumps({"label": label, "reads": found}))
