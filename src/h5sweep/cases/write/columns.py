"""The columns the write case adds to the tables (its rows: how it wrote, what the write did, how the
file the read cases query was made), registered with h5sweep.storage.columns: every module names
them by these constants."""

from __future__ import annotations

from h5sweep.storage import columns as C

WRITE_STRATEGY = C.column("write_strategy", C.STRING, "")
FILL_TIME = C.column("fill_time", C.STRING, "")
QUERY_FILE_METHOD = C.column("query_file_method", C.STRING, "")
QUERY_FILE_WRITE_S = C.column("query_file_write_s", C.FLOAT, "s")
SOURCE_READ_S = C.column("source_read_s", C.FLOAT, "s")

C.group(
    C.MEASUREMENTS,
    (
        WRITE_STRATEGY,
        FILL_TIME,
        C.WRITE_CALLS,
        C.LIBRARY_WRITE_BYTES,
    ),
    (
        "Write case: strategy, HDF5 fill time, number of `H5Dwrite` calls, bytes written by the "
        "process during the write (`wchar`: a chunk evicted and written again counts again)."
    ),
)

C.group(
    C.MEASUREMENTS,
    (
        QUERY_FILE_METHOD,
        QUERY_FILE_WRITE_S,
        C.QUERY_FILE_BYTES,
    ),
    (
        "How the file the read cases query was made (`write-case`: the write case's own last file of "
        "one chunk per call, fill `ifset`; else the fast path: `contiguous-pwrite`, `chunk-pwrite`, "
        "`direct-chunk-N-threads`, `standard`; Zarr: `zarr-chunk-files-N-threads`; a donor's values "
        "without the write case's query variant: `standard-streamed`, the standard path block by "
        "block), the seconds that took, and its size."
    ),
)

C.group(
    C.MEASUREMENTS,
    (SOURCE_READ_S,),
    (
        "Write case with a donor: seconds spent reading the donor's blocks while the write ran, taken"
        " out of `seconds` (0 for values computed in memory before the clock)."
    ),
)
