"""Where and with what a measurement was taken; every measurement row carries this."""

from __future__ import annotations

import os
import platform
import socket
import time
from functools import cache

from h5sweep import hostmemory
from h5sweep.filesystems import block_size, mount_info, read_ahead_kb


@cache
def software() -> dict:
    import numpy

    from h5sweep import __version__

    return {"h5sweep_version": __version__, "numpy_version": numpy.__version__}


def provenance(filesystem_dir: str, settings_hash: str, library_versions: dict) -> dict:
    """Columns shared by every row a job writes; ``library_versions`` are the backend's
    (:meth:`h5sweep.backends.base.Backend.versions`), ``settings_hash`` the job's settings'."""
    mount = mount_info(filesystem_dir)
    probe = _existing(filesystem_dir)
    return {
        "host": socket.gethostname(),
        "fs_type": mount.fs_type,
        "fs_path": os.path.realpath(filesystem_dir),
        "fs_mount": mount.mount_point,
        "fs_device": mount.device,
        "fs_mount_options": mount.options,
        "fs_block_bytes": block_size(probe),
        "read_ahead_kb": read_ahead_kb(probe),
        "free_page_reporting_ms": hostmemory.delay_ms(),
        "h5sweep_version": software()["h5sweep_version"],
        **library_versions,
        "numpy_version": software()["numpy_version"],
        "python_version": platform.python_version(),
        "config_hash": settings_hash,
        "slurm_job_id": os.environ.get("SLURM_JOB_ID", ""),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _existing(path: str) -> str:
    """``path`` or its nearest existing ancestor."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path
