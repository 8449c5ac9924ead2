"""Measurement windows: no timed section overlaps heavy work of the same sweep on a node.

Every job of a sweep that runs on a node shares one lock file on node-local storage. A timed
section (a read case's selections, a write, a scaling run, the I/O size and metadata cases)
holds it *exclusively*; untimed heavy work (making data, writing query files, checking the
values read) holds it *shared*, so untimed work may overlap other untimed work but never a
timed section. A second lock, the turnstile, gives waiting timed sections priority: a job
that wants a window takes the turnstile first, and untimed work passes through the turnstile
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


@contextlib.contextmanager
def _flock(kind: str, mode: int):
    fd = os.open(_lock_path(kind), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass
class Window:
    """One timed window: when it opened and closed (seconds since the epoch), how long the
    job waited for it, and the node's 1-minute load average when it opened."""

    opened_at: float = float("nan")
    closed_at: float = float("nan")
    wait_s: float = float("nan")
    load_1min: float = float("nan")

    def columns(self) -> dict:
        return {
            "window_opened_at": self.opened_at,
            "window_closed_at": self.closed_at,
            "window_wait_s": self.wait_s,
            "load_1min": self.load_1min,
        }


_held: list[str] = []  # what this process holds now ("timed" or "untimed"), innermost last


@contextlib.contextmanager
def timed_window():
    """Hold the node's measurement lock exclusively; yields the :class:`Window`.

    Not inside another window or untimed section of the same process (it would wait for
    itself). Start worker processes before opening a window, never inside a section: a
    forked child keeps its parent's lock until it exits."""
    if _held:
        raise RuntimeError(f"a timed window cannot open inside another section ({_held[-1]}) of the same process")
    window = Window()
    asked = time.perf_counter()
    with _flock("turnstile", fcntl.LOCK_EX), _flock("measure", fcntl.LOCK_EX):
        window.wait_s = time.perf_counter() - asked
        window.opened_at = time.time()
        window.load_1min = os.getloadavg()[0]
        _held.append("timed")
        try:
            yield window
        finally:
            _held.pop()
            window.closed_at = time.time()


@contextlib.contextmanager
def untimed_work():
    """Hold the node's measurement lock shared: heavy work that no timed window may overlap.
    Inside a section this process already holds, it is that section."""
    if _held:
        yield
        return
    with _flock("turnstile", fcntl.LOCK_SH):
        pass  # wait behind a timed window that is waiting, without blocking other untimed work
    with _flock("measure", fcntl.LOCK_SH):
        _held.append("untimed")
        try:
            yield
        finally:
            _held.pop()
