"""The columns the iosize case adds to the tables, registered with h5sweep.storage.columns:
every module names them by these constants."""

from __future__ import annotations

from h5sweep.storage import columns

API = columns.column("api", columns.STRING, "")
DIRECTION = columns.column("direction", columns.STRING, "")
REQUEST_BYTES = columns.column("request_bytes", columns.INTEGER, "bytes")
columns.group(
    columns.MEASUREMENTS,
    (
        API,
        DIRECTION,
        REQUEST_BYTES,
    ),
    ("I/O size case: `hdf5` or `raw`, `write` or `read`, bytes per request."),
)
