"""How the HDF5 backend reads a store on an object store, known at parse time without h5py's
I/O: each chunk cache in each of the filesystem's file reads (``filesystems.<name>.s3.reads``,
an fsspec file object or HDF5's ROS3 driver); ROS3 sends its own requests, and needs an h5py
built with it."""

from __future__ import annotations

from h5sweep.backends.base import SourceReads
from h5sweep.backends.file_reads import RemoteOption, in_each_read
from h5sweep.storage.objectstore import ROS3

ROS3_KEY = ("s3.reads", "{driver: ros3}")  # the key and value that ask for ROS3


def _ros3(option) -> bool:
    return isinstance(option, RemoteOption) and option.read.driver == ROS3


def h5py_has_ros3() -> bool:
    """Whether this process's h5py was built with HDF5's read-only S3 driver."""
    import h5py

    return bool(h5py.get_config().ros3)


def _refusal(option) -> tuple[str, object, str] | None:
    if not _ros3(option) or h5py_has_ros3():
        return None
    import h5py

    return (
        *ROS3_KEY,
        f"needs an h5py built with HDF5's ROS3 driver; this one (h5py {h5py.__version__}, HDF5 "
        f"{h5py.version.hdf5_version}) has none (h5py.get_config().ros3 is False): h5py built against an "
        "HDF5 with it (conda-forge's; Debian's libhdf5-dev, pip install --no-binary h5py) has it",
    )


REMOTE = SourceReads(
    options=lambda options, fs: in_each_read(options, fs.s3_reads),
    with_read=RemoteOption,
    own_requests=lambda option: ROS3_KEY if _ros3(option) else None,
    refusal=_refusal,
)
