"""Measurement windows: no timed section overlaps heavy work of the same sweep on a node.

Every job of a sweep that runs on a node shares one lock file on node-local storage. A timed
section (a read case's selections, a write, a scaling run, the I/O size and metadata cases)
holds it *exclusively*; untimed heavy work (making data, writing query files, checking the
values read) holds it *shared*, so untimed work may overlap other untimed work but never a
timed section. A job holds the shared lock for its whole life (from before its heavy imports
to its exit, see :func:`h5sweep.measure.joblog.logged`) and gives it up only for its own timed
windows. A second lock, the turnstile, gives waiting timed sections priority: a job that
wants a window takes the turnstile first, and untimed work passes through the turnstile
before it takes its shared lock, so a stream of untimed work cannot starve a measurement.

The locks are ``flock`` locks: the kernel drops them when a process dies, so a killed job
never leaves the node locked. Each window records when it opened and closed, how long its
job waited for it, and the 1-minute load average when it opened; every measurement row
carries these (``window_*`` and ``load_1min`` columns).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from dataclasses import dataclass

from h5sweep.storage import columns as C

# The window each timed operation ran in, in its row (Window.columns)
WINDOW_OPENED_AT = C.column("window_opened_at", C.FLOAT, "s since the epoch")
WINDOW_CLOSED_AT = C.column("window_closed_at", C.FLOAT, "s since the epoch")
WINDOW_WAIT_S = C.column("window_wait_s", C.FLOAT, "s")
WINDOW_STEAL_S = C.column("window_steal_s", C.FLOAT, "s")
LOAD_1MIN = C.column("load_1min", C.FLOAT, "")

C.group(
    C.MEASUREMENTS,
    (
        WINDOW_OPENED_AT,
        WINDOW_CLOSED_AT,
        WINDOW_WAIT_S,
        WINDOW_STEAL_S,
        LOAD_1MIN,
    ),
    (
        "The timed window the operation ran in (seconds since the epoch), how long its job waited for"
        " the node's measurement lock, the CPU time a hypervisor took from the node while the window "
        "was open (`steal` of `/proc/stat`, summed over the node's CPUs; 0 on bare metal, NaN where "
        "the kernel does not say; divide by the window's length × CPUs for the share), and the "
        "1-minute load average when the window opened."
    ),
)

# Where the lock files live: node-local memory where there is one, else the temp dir.
LOCK_DIR_ENV = "H5SWEEP_LOCK_DIR"


def lock_dir() -> str:
    """The node-local directory of the lock files (``$H5SWEEP_LOCK_DIR`` overrides).

    Not ``$TMPDIR``: a batch system may give every job its own, and the jobs on one node
    must share the lock."""
    configured = os.environ.get(LOCK_DIR_ENV)
    if configured:
        return configured
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def _lock_path(kind: str) -> str:
    return os.path.join(lock_dir(), f"h5sweep-{os.getuid()}.{kind}.lock")


_lock_fds: set[int] = set()  # descriptors of the locks this process holds now


def _lock(kind: str, mode: int) -> int:
    fd = os.open(_lock_path(kind), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    _lock_fds.add(fd)
    try:
        fcntl.flock(fd, mode)
    except BaseException:
        _unlock(fd)
        raise
    return fd


def _unlock(fd: int) -> None:
    _lock_fds.discard(fd)
    os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _flock(kind: str, mode: int):
    fd = _lock(kind, mode)
    try:
        yield
    finally:
        _unlock(fd)


def _forget_inherited_locks() -> None:
    """In a forked child: drop the parent's lock descriptors, so that the parent's release
    is a release (a lock lives while any descriptor of it is open)."""
    global _shared_fd, _untimed_depth, _in_window
    for fd in list(_lock_fds):
        with contextlib.suppress(OSError):
            os.close(fd)
    _lock_fds.clear()
    _shared_fd, _untimed_depth, _in_window = None, 0, False


os.register_at_fork(after_in_child=_forget_inherited_locks)


def steal_seconds() -> float:
    """CPU time the hypervisor has taken from this (virtual) machine since it booted, summed
    over its CPUs: the ``steal`` field of ``/proc/stat``; NaN where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


@dataclass
class Window:
    """One timed window: when it opened and closed (seconds since the epoch), how long the
    job waited for it, the node's 1-minute load average when it opened, and the CPU time a
    hypervisor took from the node while it was open."""

    opened_at: float = float("nan")
    closed_at: float = float("nan")
    wait_s: float = float("nan")
    load_1min: float = float("nan")
    steal_s: float = float("nan")

    def columns(self) -> dict:
        return {
            WINDOW_OPENED_AT: self.opened_at,
            WINDOW_CLOSED_AT: self.closed_at,
            WINDOW_WAIT_S: self.wait_s,
            WINDOW_STEAL_S: self.steal_s,
            LOAD_1MIN: self.load_1min,
        }


_shared_fd: int | None = None  # the shared lock of this process's untimed work
_untimed_depth = 0  # nesting of untimed sections
_in_window = False


def _take_shared() -> int:
    with _flock("turnstile", fcntl.LOCK_SH):
        pass  # wait behind a timed window that is waiting, without blocking other untimed work
    return _lock("measure", fcntl.LOCK_SH)


@contextlib.contextmanager
def timed_window():
    """Hold the node's measurement lock exclusively; yields the :class:`Window`.

    Inside untimed work of the same process (a whole job is untimed work, see
    :func:`h5sweep.measure.joblog.logged`), the shared lock is given up for the window and taken
    back after it. Windows do not nest."""
    global _shared_fd, _in_window
    if _in_window:
        raise RuntimeError("a timed window cannot open inside another timed window")
    resume = _shared_fd is not None
    if resume:
        _unlock(_shared_fd)
        _shared_fd = None
    window = Window()
    asked = time.perf_counter()
    try:
        with _flock("turnstile", fcntl.LOCK_EX), _flock("measure", fcntl.LOCK_EX):
            window.wait_s = time.perf_counter() - asked
            window.opened_at = time.time()
            window.load_1min = os.getloadavg()[0]
            stolen_before = steal_seconds()
            _in_window = True
            try:
                yield window
            finally:
                _in_window = False
                window.closed_at = time.time()
                window.steal_s = steal_seconds() - stolen_before
    finally:
        if resume:
            _shared_fd = _take_shared()


@contextlib.contextmanager
def idle():
    """Time in which the job does nothing (a rest): its shared lock, where it holds one, given
    up meanwhile, so that other jobs' timed windows may open, and taken back after (behind the
    turnstile, as any untimed work). Not inside a timed window."""
    global _shared_fd
    if _in_window:
        raise RuntimeError("idle time cannot be taken inside a timed window")
    resume = _shared_fd is not None
    if resume:
        _unlock(_shared_fd)
        _shared_fd = None
    try:
        yield
    finally:
        if resume:
            _shared_fd = _take_shared()


@contextlib.contextmanager
def untimed_work():
    """Hold the node's measurement lock shared: heavy work that no timed window may overlap.
    Sections nest (the outermost holds the lock); none may open inside a timed window."""
    global _shared_fd, _untimed_depth
    if _in_window:
        raise RuntimeError("untimed work cannot run inside a timed window")
    if _untimed_depth == 0:
        _shared_fd = _take_shared()
    _untimed_depth += 1
    try:
        yield
    finally:
        _untimed_depth -= 1
        if _untimed_depth == 0 and _shared_fd is not None:
            _unlock(_shared_fd)
            _shared_fd = None
