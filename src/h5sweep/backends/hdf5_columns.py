"""The columns the HDF5 backend adds to the tables (registered here, light enough for parse
time): the versions of its libraries and h5py's own cost per read call."""

from __future__ import annotations

from h5sweep.storage import columns as C

HDF5_VERSION = C.column("hdf5_version", C.STRING)
H5PY_VERSION = C.column("h5py_version", C.STRING)
HDF5PLUGIN_VERSION = C.column("hdf5plugin_version", C.STRING)
H5PY_CALL_OVERHEAD_S = C.column("h5py_call_overhead_s", C.FLOAT, "s")

VERSIONS = (HDF5_VERSION, H5PY_VERSION, HDF5PLUGIN_VERSION)
CARRIED = (H5PY_CALL_OVERHEAD_S,)

C.group(
    C.MEASUREMENTS,
    (H5PY_CALL_OVERHEAD_S,),
    (
        "HDF5 stores: h5py's own cost per `read_direct` call over `H5Dread` (parsing the selection, "
        "building dataspaces), measured once per file on a warm one-element read; not in `seconds`."
    ),
)
C.group(
    C.MEASUREMENTS,
    VERSIONS,
    (
        "Provenance of HDF5 rows: the HDF5 library (in the parallel case the parallel HDF5 the ranks "
        "ran on, 1.10 with Debian's Open MPI build), h5py, and hdf5plugin (empty without it)."
    ),
)
C.group(C.SUMMARY, CARRIED, "HDF5 stores: carried from the measurements.")
