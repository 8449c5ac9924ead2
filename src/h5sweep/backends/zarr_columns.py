"""The columns the Zarr backend adds to the tables (registered here, light enough for parse
time): the versions of its libraries, and the read options zarr-python's concurrency and, on an
object store, the store a reader fetches through."""

from __future__ import annotations

from h5sweep.storage import columns as C

ZARR_VERSION = C.column("zarr_version", C.STRING)
NUMCODECS_VERSION = C.column("numcodecs_version", C.STRING)
TENSORSTORE_VERSION = C.column("tensorstore_version", C.STRING)
ZARR_CONCURRENCY = C.column("zarr_concurrency", C.FLOAT)
ZARR_STORE = C.column("zarr_store", C.STRING)

VERSIONS = (ZARR_VERSION, NUMCODECS_VERSION, TENSORSTORE_VERSION)
OPTIONS = (ZARR_CONCURRENCY,)
REMOTE_OPTIONS = (ZARR_STORE,)

C.group(
    C.MEASUREMENTS,
    OPTIONS,
    "Zarr stores read by zarr-python: its `async.concurrency`, chunk reads in flight (empty otherwise).",
)
C.group(
    C.MEASUREMENTS,
    REMOTE_OPTIONS,
    "Zarr stores on an object store: what the reader fetched them through, `fsspec` or `obstore` for "
    "zarr-python (`filesystems.<name>.s3.zarr_stores`), `s3` for tensorstore's own S3 key-value store "
    "(empty on a filesystem).",
)
C.group(C.MEASUREMENTS, VERSIONS, "Provenance of Zarr rows: zarr-python, numcodecs and tensorstore.")
C.group(C.SUMMARY, OPTIONS, "Zarr stores read by zarr-python: the variant's `async.concurrency`.")
C.group(C.SUMMARY, REMOTE_OPTIONS, "Zarr stores on an object store: the variant's store (`fsspec`, `obstore`, `s3`).")
