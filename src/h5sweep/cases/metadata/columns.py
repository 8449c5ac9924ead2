"""The columns the metadata case adds to the tables, registered with h5sweep.storage.columns:
every module names them by these constants."""

from __future__ import annotations

from h5sweep.storage import columns

OPERATION = columns.column("operation", columns.STRING, "")
N_DATASETS = columns.column("n_datasets", columns.INTEGER, "")
METADATA_FILE_BYTES = columns.column("metadata_file_bytes", columns.INTEGER, "bytes")
columns.group(
    columns.MEASUREMENTS,
    (
        OPERATION,
        N_DATASETS,
        METADATA_FILE_BYTES,
    ),
    ("Metadata case: `write` or `read`, number of datasets, file size."),
)
