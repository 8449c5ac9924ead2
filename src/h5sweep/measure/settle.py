"""Released space: every timed write meets its disk in the same state.

On a thin-provisioned virtual disk mounted with ``discard``, what a write costs can depend on
where its blocks come from: blocks a removed file freed a moment ago, or space the device has
already released. A write case that removes one repeat's file and writes the next at once
would measure one state for some writes and the other for the rest, while a converter
writing a new file meets the second.

So the sweep's own removals on a filesystem are dated (a node-local file holds the moment of
the last removal, after a ``sync`` that makes the filesystem issue its discards now, and the
free bytes then; removals by others show as free space that grew), and a timed write first
waits until the filesystem's ``settle_s`` has passed since then: at rest, with the node's
measurement lock given up so that other jobs' windows run meanwhile, and once more inside its
window, before its clock, for a release made during the rest. Each write row records the
wait (``settle_wait_s``). ``settle_s`` is a filesystem setting; by default 2 s where the
filesystem is mounted with ``discard`` and 0 elsewhere (tmpfs, network and parallel filesystems: nothing to wait for).

The rest makes every write wait the same; it does not hold a virtual machine's freed pages,
whose hand-back to the host can also make writes after a removal slower (see
:mod:`h5sweep.host` and ``docs/method.md``). The trials behind both are in ``docs/notes/``.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass

from h5sweep.measure.lock import lock_dir
from h5sweep.storage import columns as C
from h5sweep.storage.filesystems import Filesystem, device_of, free_bytes, mount_info

# The wait of a timed write for released space, in its row (timing.Timed.settle_wait_s)
SETTLE_WAIT_S = C.column("settle_wait_s", C.FLOAT, "s")

C.group(
    C.MEASUREMENTS,
    (SETTLE_WAIT_S,),
    (
        "Timed writes (write case; writes of the metadata and I/O size cases): seconds the write "
        "waited for released space before its clock started (see `filesystems.<name>.settle_s`; 0 "
        "when the sweep had removed nothing on the filesystem within the rest); empty for reads."
    ),
)

DISCARD_SETTLE_S = 2.0
# Free space that grew by more than this between two looks was released by someone.
UNSEEN_RELEASE_BYTES = 64 * 2**20


@functools.lru_cache(maxsize=256)
def default_settle_s(directory: str) -> float:
    """The rest a timed write on ``directory`` takes after a removal, where none is configured
    (by its mount options, read once per process)."""
    options = mount_info(directory).options.split(",")
    return DISCARD_SETTLE_S if "discard" in options else 0.0


def settle_seconds(filesystem: Filesystem) -> float:
    """A filesystem's rest: as configured (its ``settle_s``), else by how it is mounted on
    this node (``filesystem``: anything with its ``directory`` and ``settle_s``)."""
    return default_settle_s(filesystem.directory) if filesystem.settle_s is None else float(filesystem.settle_s)


def marker_path(directory: str) -> str:
    """The node-local file that dates the last release of space seen on ``directory``'s
    device, with the device's free bytes then."""
    return os.path.join(lock_dir(), f"h5sweep-{os.getuid()}.released-{device_of(directory)}")


def _read_marker(directory: str) -> tuple[float, int] | None:
    try:
        with open(marker_path(directory), encoding="ascii") as marker:
            released_at, free = marker.read().split()
        return float(released_at), int(free)
    except (FileNotFoundError, ValueError):
        return None


def _write_marker(directory: str, released_at: float, free: int) -> None:
    path = marker_path(directory)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "w", encoding="ascii") as marker:
        marker.write(f"{released_at!r} {free}\n")
    os.replace(partial, path)  # another job reads it whole or not at all


def remove_and_mark(paths: Iterable[str], directory: str) -> None:
    """Remove files or store directories under ``directory``; sync, so that the filesystem
    releases their blocks now; and date the release for :func:`settle`."""
    removed = False
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
            removed = True
        elif os.path.lexists(path):
            os.remove(path)
            removed = True
    if removed:
        os.sync()
        _write_marker(directory, time.time(), free_bytes(directory))


def due(directory: str, settle_s: float) -> float:
    """The seconds still to wait until ``settle_s`` has passed since space was last released
    on ``directory``'s device (0: none). A release the sweep's code did not date (Snakemake
    removing a temporary store, another program) shows as free space that grew by more than
    ``UNSEEN_RELEASE_BYTES`` since the last look, after a ``sync`` that makes the
    filesystem free it now; it counts as a release at this moment. The ``sync`` writes
    back dirty pages: called where no other timed window may be open (the job's lock held)."""
    if settle_s <= 0:
        return 0.0
    os.sync()
    now, free = time.time(), free_bytes(directory)
    marker = _read_marker(directory)
    released_at, seen_free = (0.0, free) if marker is None else marker  # none seen: the epoch
    if free > seen_free + UNSEEN_RELEASE_BYTES:
        released_at = now
    _write_marker(directory, released_at, free)
    return max(0.0, min(settle_s, released_at + settle_s - now))


def settle(directory: str, settle_s: float) -> float:
    """Wait until ``settle_s`` has passed since space was last released on ``directory``'s
    device (:func:`due`); return the seconds waited."""
    wait = due(directory, settle_s)
    if wait > 0:
        time.sleep(wait)
    return wait


@dataclass(frozen=True)
class Rest:
    """A timed write's rest on ``directory`` (:func:`h5sweep.measure.timing.timed_io`):
    :meth:`due` tells, under the job's lock, how long is still to wait, which the write then
    rests with the node's lock given up; calling it waits whatever is left, inside the write's
    window, before its clock (a release made during the rest)."""

    directory: str
    settle_s: float

    def due(self) -> float:
        return due(self.directory, self.settle_s)

    def __call__(self) -> float:
        return settle(self.directory, self.settle_s)
