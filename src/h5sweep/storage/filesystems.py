"""Filesystems under test: a name, a directory where its test files go, and what it is.

The same layouts are measured on every filesystem; what differs is the storage below the
directory, which we identify from the mount table so every measurement says where it ran.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from h5sweep.storage import targets
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError

MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")  # no device below: a cold read is a memory read

STRIPE_UNIT = 65536  # Lustre stripe sizes are multiples of 64 KiB

STRIPE = Block(
    "stripe",
    "Lustre striping of the directory, which the test stores created in it take (lfs setstripe): "
    "count, the OSTs a file is striped over (-1: all), and size, the bytes of one stripe (a multiple "
    "of 64 KiB). Refused where the directory is not on Lustre; column fs_stripe records it. null "
    "leaves the directory as it is.",
    (
        Setting("count", "integer", 1, "OSTs per file (-1 all).", {"minimum": -1}),
        Setting("size", "integer", 1 << 20, "Bytes per stripe.", {"minimum": STRIPE_UNIT}),
    ),
)

FILESYSTEM = Block(
    "filesystems",
    "A filesystem as an object: {path, required, ...}.",
    (
        Setting("path", "string", "", "Directory for test files."),
        Setting(
            "required",
            "boolean",
            True,
            "Refuse the config (true) or skip this filesystem (false) when the directory is unusable.",
        ),
        Setting(
            "settle_s",
            ["number", "null"],
            None,
            "Seconds a timed write waits before its clock (at rest, other jobs' windows running meanwhile) "
            "after files were removed on this filesystem, so that every write meets released space; null "
            "means 2 where the filesystem is mounted with discard (a thin-provisioned disk frees space lazily), "
            "else 0.",
            {"minimum": 0},
        ),
        Setting(
            "read_copies",
            "integer",
            1,
            "Byte-identical copies of each store its query job reads in turn: selection i of a case whose "
            "every read starts cold (cold every) is read from copy i mod n, so that the speed a copy owes "
            "to where its bytes lie (measured 5-20% between copies in memory) weighs 1/n on each median "
            "instead of deciding it. The copies are made untimed before the reads, written to the device, "
            "and removed afterwards; the plan counts their space. Column store_copy says which copy a row "
            "read.",
            {"minimum": 1},
        ),
        Setting(
            "stripe",
            ["object", "null"],
            None,
            STRIPE.description,
            {"additionalProperties": False, "properties": STRIPE.schema()["properties"]},
        ),
        *(
            Setting(
                t.key,
                ["object", "null"],
                None,
                t.settings.description
                + " path is then the staging directory: each store is written there, uploaded, and kept there "
                "for its chunk index (never read).",
                {
                    "additionalProperties": False,
                    "required": list(t.settings.required),
                    "properties": t.settings.schema()["properties"],
                },
            )
            for t in targets.KEYED
        ),
    ),
    optional=False,
    required=("path",),
)

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Filesystem:
    name: str
    directory: str  # as configured (may be relative to the working directory)
    required: bool
    settle_s: float | None  # rest of a timed write after a removal; None: by the mount (h5sweep.measure.settle)
    read_copies: int  # byte-identical copies of each store read in turn by its queries (h5sweep.measure.copies)
    stripe: dict | None  # Lustre striping of the directory: {count, size} (lfs setstripe)
    s3: object = None  # on an object store: where the stores go (S3Location; path: their staging)
    s3_reads: tuple = ()  # on an object store: how a store read as one file is fetched (FileRead each)
    s3_zarr_stores: tuple = ()  # on an object store: the stores zarr-python reads through
    kind: str = targets.DIRECTORY.name  # the storage target its stores are on (h5sweep.storage.targets)
    place: object = None  # where on that target its stores are, as the target parsed it (None: its directory)

    @property
    def target(self) -> targets.StorageTarget:
        """Where its stores live: a directory, or the target whose block it sets."""
        return targets.target(self.kind)

    def usable(self) -> str | None:
        """None if test files can be written under ``directory``; otherwise the reason why not.

        Checks without leaving anything behind: the nearest existing ancestor must be a
        directory in which a probe directory can really be created and removed.
        """
        path = Path(self.directory).absolute()
        ancestor = path
        while not ancestor.exists():
            if ancestor.parent == ancestor:
                return "no part of the path exists"
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return f"{ancestor} is not a directory"
        try:
            probe = tempfile.mkdtemp(prefix=".h5sweep-probe-", dir=ancestor)
            os.rmdir(probe)
        except OSError as err:
            return f"cannot create a directory in {ancestor}: {err.strerror or err}"
        return None


def filesystems_from_config(entries: dict, probe: bool = True, largest_page: int = 0) -> list[Filesystem]:
    """Parse ``filesystems:``; drop optional ones that are not usable, refuse required ones
    (``probe=False``: take them as they are, for a process that re-reads a checked sweep).
    ``largest_page``: the largest of ``layouts.pages``, which an object store's page buffers
    must hold."""
    found: list[Filesystem] = []
    seen: dict[str, str] = {}
    for name, entry in entries.items():
        key = f"filesystems.{name}"
        if not _NAME.match(str(name)):
            raise ConfigError(key, name, "a filesystem name is a letter then letters, digits or _")
        entry = FILESYSTEM.filled({"path": entry} if isinstance(entry, str) else entry)
        settle_s = entry["settle_s"]
        number = isinstance(settle_s, int | float) and not isinstance(settle_s, bool)
        if settle_s is not None and (not number or settle_s < 0):
            raise ConfigError(f"{key}.settle_s", settle_s, "must be a number of seconds, 0 or more (or null)")
        copies = entry["read_copies"]
        if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
            raise ConfigError(f"{key}.read_copies", copies, "must be a whole number, 1 or more")
        target = targets.of_entry(entry)
        target.refuse(entry, key)
        block = f"{key}.{target.key}" if target.key else key
        variants = target.variants(entry.get(target.key) if target.key else None, block, largest_page)
        for suffix, place in variants:
            # several latencies or faults: a filesystem each, with its own staging directory
            named = f"{name}_{suffix}" if suffix else name
            directory = os.path.join(entry["path"], *suffix.split("_")) if suffix else entry["path"]
            fs = Filesystem(
                named,
                directory,
                bool(entry["required"]),
                None if settle_s is None else float(settle_s),
                copies,
                stripe_from_config(entry["stripe"], f"{key}.stripe"),
                **place,
                kind=target.name,
            )
            _add_usable(fs, key, probe, found, seen)
    if not found:
        raise ConfigError("filesystems", entries, "no usable filesystem")
    return found


def _add_usable(fs: Filesystem, key: str, probe: bool, found: list, seen: dict) -> None:
    """``fs`` added to ``found`` where it is usable; an optional one that is not is left out,
    a required one refused (``probe=False``: taken as it is)."""
    reason = fs.usable() if probe else None
    if reason is None and probe:
        reason = fs.target.probe(fs, key)
    if reason is None and probe and fs.stripe is not None:
        check_stripe(fs.directory, fs.stripe, f"{key}.stripe")
    if reason is not None:
        if fs.required:
            raise ConfigError(key, fs.directory, f"directory cannot be created or written: {reason}")
        return
    real = os.path.realpath(fs.directory)
    if real in seen:
        raise ConfigError(key, fs.directory, f"is the same directory as filesystems.{seen[real]}")
    seen[real] = fs.name
    found.append(fs)


def stripe_from_config(stripe: dict | None, key: str) -> dict | None:
    """``filesystems.<name>.stripe``: {count, size}: the number of OSTs a file is striped over
    (-1: all) and the bytes per stripe (a multiple of 64 KiB)."""
    if stripe is None:
        return None
    stripe = STRIPE.filled(stripe)
    count, size = stripe["count"], stripe["size"]
    if not isinstance(count, int) or isinstance(count, bool) or count == 0 or count < -1:
        raise ConfigError(f"{key}.count", count, "must be a number of OSTs, 1 or more, or -1 for all")
    if not isinstance(size, int) or isinstance(size, bool) or size < STRIPE_UNIT or size % STRIPE_UNIT:
        raise ConfigError(f"{key}.size", size, f"must be a multiple of {STRIPE_UNIT} bytes (64 KiB)")
    return {"count": count, "size": size}


def check_stripe(directory: str, stripe: dict, key: str) -> None:
    """Refuse a stripe where it cannot be applied: on a filesystem other than Lustre, or
    without Lustre's ``lfs`` command."""
    fs_type = mount_info(str(nearest_existing(directory))).fs_type
    if fs_type != "lustre":
        raise ConfigError(key, stripe, f"striping needs a Lustre filesystem; {directory} is on {fs_type}")
    if shutil.which("lfs") is None:
        raise ConfigError(key, stripe, "needs Lustre's lfs command on the PATH")


def stripe_words(stripe: dict | None) -> str:
    """The stripe as the rows record it (column ``fs_stripe``; empty: not set)."""
    return "" if not stripe else f"count={stripe['count']} size={stripe['size']}"


def apply_stripe(directory: str, stripe: dict | None) -> None:
    """Set the directory's default Lustre layout, which the test stores created in it take."""
    if not stripe:
        return
    import subprocess

    os.makedirs(directory, exist_ok=True)
    subprocess.run(
        ["lfs", "setstripe", "-c", str(stripe["count"]), "-S", str(stripe["size"]), directory],
        check=True,
        capture_output=True,
    )


def nearest_existing(directory: str) -> Path:
    """``directory``, or its nearest ancestor that exists (a sweep's directories may not yet)."""
    path = Path(directory).absolute()
    while not path.exists():
        path = path.parent
    return path


def free_bytes(directory: str) -> int:
    """Bytes free for this user on the filesystem that holds (or will hold) ``directory``."""
    return shutil.disk_usage(nearest_existing(directory)).free


def device_of(directory: str) -> int:
    """The device number of the filesystem that holds (or will hold) ``directory``."""
    return os.stat(nearest_existing(directory)).st_dev


@dataclass(frozen=True)
class MountInfo:
    mount_point: str
    fs_type: str
    device: str
    options: str = ""


def mount_info(path: str) -> MountInfo:
    """The mount that holds ``path`` (the longest mount point that prefixes its real path)."""
    real = os.path.realpath(path)
    best = MountInfo("/", "unknown", "unknown")
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            lines = mounts.read().splitlines()
    except OSError:
        return best
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        device, point, fs_type = fields[0], _unescape(fields[1]), fields[2]
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best.mount_point):
            best = MountInfo(point, fs_type, device, fields[3] if len(fields) > 3 else "")
    return best


@functools.lru_cache(maxsize=64)
def device_reads_counted(directory: str) -> bool:
    """Whether the kernel counts the device reads of files under ``directory`` in a process's
    ``read_bytes`` (``/proc/self/io``): only where the filesystem sits on a block device. A
    network filesystem (NFS, Lustre, GPFS), a FUSE mount or another filesystem without one
    fetches its bytes past that counter, so a read there cannot be told cold or warm."""
    device = mount_info(nearest_existing(directory)).device
    try:
        return device.startswith("/dev/") and stat.S_ISBLK(os.stat(device).st_mode)
    except OSError:
        return False


def read_ahead_kb(path: str) -> int:
    """The readahead of the block device below ``path`` in KiB (its queue's
    ``read_ahead_kb``; a partition's disk's), or -1 where there is no block device (tmpfs,
    network filesystems)."""
    try:
        dev = os.stat(path).st_dev
        sysfs = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    except OSError:
        return -1
    for directory in (sysfs, os.path.dirname(sysfs)):  # a partition's queue is its disk's
        try:
            with open(os.path.join(directory, "queue", "read_ahead_kb"), encoding="ascii") as f:
                return int(f.read())
        except (OSError, ValueError):
            continue
    return -1


def block_size(path: str) -> int:
    """The filesystem's block size in bytes (``statvfs``)."""
    return os.statvfs(path).f_bsize


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)
