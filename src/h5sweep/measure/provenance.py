"""Where and with what a measurement was taken; every measurement row carries this.

Among it, whether the machine hands memory it frees back to a hypervisor (free page
reporting, column ``free_page_reporting_ms``): a virtual machine whose balloon device reports
free pages gives the host the memory behind every page that stays free for a while, and the
next use of such a page waits for the host to supply it again. Cold reads, whose eviction
frees pages that the read then takes again, then fall into two speed modes that the guest's
own counters cannot tell apart. Holding freed pages is a setting of the machine, not of a
sweep: ``python -m h5sweep.host`` shows and changes it."""

from __future__ import annotations

import os
import platform
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from h5sweep.storage import columns as C
from h5sweep.storage.filesystems import block_size, mount_info, read_ahead_kb

VIRTIO_BALLOON_DEVICE = 0x0005
VIRTIO_BALLOON_F_REPORTING = 5  # feature bit: the balloon reports free pages
UPSTREAM_DELAY_MS = 2000  # mm/page_reporting.c reports pages free for 2 s
DELAY_PARAMETER = "module/page_reporting/parameters/min_free_ms"
# long enough that the pages a cold read's eviction frees are still the guest's when the
# read that follows allocates page cache again (a sweep reads within milliseconds)
STEADY_DELAY_MS = 100_000


@dataclass(frozen=True)
class FreePageReporting:
    active: bool  # a balloon device reports freed pages to the hypervisor
    delay_ms: int  # how long a page stays free before it is reported; -1 when not active
    setting: str | None  # the file that sets the delay, where the kernel has one

    @property
    def short(self) -> bool:
        """Freed pages go back to the host sooner than the memory of a sweep's evicted files
        is used again (so cold reads fall into two speed modes)."""
        return self.active and self.delay_ms < STEADY_DELAY_MS


def free_page_reporting(sys_root: str = "/sys") -> FreePageReporting:
    """Whether a virtio balloon reports freed pages on this machine, and after how long."""
    if not any(_reports(device) for device in _virtio_devices(sys_root)):
        return FreePageReporting(active=False, delay_ms=-1, setting=None)
    setting = Path(sys_root, DELAY_PARAMETER)
    try:
        return FreePageReporting(True, int(setting.read_text().strip()), str(setting))
    except (OSError, ValueError):
        return FreePageReporting(True, UPSTREAM_DELAY_MS, None)


def delay_ms() -> int:
    """The provenance column ``free_page_reporting_ms``: the delay, or -1 where freed
    memory stays with this machine."""
    return free_page_reporting().delay_ms


def measured_caveat(cold_reads: Iterable[tuple[str, str, int]]) -> str | None:
    """What a result says where its cold reads were measured while freed pages went back to
    the hypervisor sooner than a sweep's reads use them again, or None. ``cold_reads``:
    (filesystem, host, ``free_page_reporting_ms``) of each read that fetched from the device,
    as the node that measured it recorded (under SLURM not the host that planned the sweep)."""
    short: dict[str, set[str]] = {}
    for filesystem, host, delay in cold_reads:
        if 0 <= delay < STEADY_DELAY_MS:
            short.setdefault(filesystem, set()).add(f"{host} ({delay} ms)")
    if not short:
        return None
    where = "; ".join(f"{fs} on {', '.join(sorted(hosts))}" for fs, hosts in sorted(short.items()))
    return (
        "Caveat: cold reads were measured on a virtual machine that hands memory back to its hypervisor "
        f"soon after it is freed (free page reporting: {where}). Such reads fall into two speed modes that "
        "the rows cannot tell apart, "
        "so close rankings may not reproduce. Measure again with freed pages held: as root, "
        "`python -m h5sweep.host run snakemake ...` (`make sweep-held`; README)."
    )


def _virtio_devices(sys_root: str) -> list[Path]:
    root = Path(sys_root, "bus", "virtio", "devices")
    try:
        return sorted(root.iterdir())
    except OSError:
        return []


def _reports(device: Path) -> bool:
    try:
        kind = int((device / "device").read_text().strip(), 16)
        features = (device / "features").read_text().strip()
    except (OSError, ValueError):
        return False
    bit = VIRTIO_BALLOON_F_REPORTING
    return kind == VIRTIO_BALLOON_DEVICE and len(features) > bit and features[bit] == "1"


@cache
def software() -> dict:
    import numpy

    from h5sweep import __version__

    return {C.H5SWEEP_VERSION: __version__, C.NUMPY_VERSION: numpy.__version__}


def provenance(filesystem_dir: str, settings_hash: str, library_versions: dict) -> dict:
    """Columns shared by every row a job writes; ``library_versions`` are the backend's
    (:meth:`h5sweep.backends.base.Backend.versions`), ``settings_hash`` the job's settings'."""
    mount = mount_info(filesystem_dir)
    probe = _existing(filesystem_dir)
    return {
        C.HOST: socket.gethostname(),
        C.FS_TYPE: mount.fs_type,
        C.FS_PATH: os.path.realpath(filesystem_dir),
        C.FS_MOUNT: mount.mount_point,
        C.FS_DEVICE: mount.device,
        C.FS_MOUNT_OPTIONS: mount.options,
        C.FS_BLOCK_BYTES: block_size(probe),
        C.READ_AHEAD_KB: read_ahead_kb(probe),
        C.FREE_PAGE_REPORTING_MS: delay_ms(),
        C.H5SWEEP_VERSION: software()[C.H5SWEEP_VERSION],
        **library_versions,
        C.NUMPY_VERSION: software()[C.NUMPY_VERSION],
        C.PYTHON_VERSION: platform.python_version(),
        C.CONFIG_HASH: settings_hash,
        C.SLURM_JOB_ID: os.environ.get("SLURM_JOB_ID", ""),
        C.MEASURED_AT: time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _existing(path: str) -> str:
    """``path`` or its nearest existing ancestor."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path
