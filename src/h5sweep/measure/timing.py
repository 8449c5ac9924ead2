"""The timed region of a measurement: inside the node's exclusive window (see
:mod:`h5sweep.measure.lock`), with Python's garbage collector paused, the clock and the process's
I/O counters read around the library call and nothing else."""

from __future__ import annotations

import gc
import resource
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from h5sweep.measure.lock import Window, idle, timed_window
from h5sweep.measure.pagecache import IOCounters, io_counters

if TYPE_CHECKING:
    from h5sweep.measure.settle import Rest


def touched_empty(shape, dtype) -> np.ndarray:
    """An array for a timed read to land in, every page of it written once: the kernel maps
    a new array's pages at their first write, which would otherwise happen inside the read's
    clock (on a virtual machine that reports free pages to its host, at the host's cost too)."""
    buffer = np.empty(shape, dtype=dtype)
    buffer.fill(0)
    return buffer


def minor_faults() -> int:
    """Page faults this process has taken that needed no device read (``ru_minflt``): memory
    mapped at its first touch. Read around a timed read, it counts the pages the library's
    own allocations mapped on the clock (on a virtual machine that reports free pages to its
    host, each may cost the host a fresh page)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@contextmanager
def gc_paused():
    """Python's garbage collector off (a collection inside a timed call is not the library's time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Timed:
    """What one timed operation measured: its seconds, the I/O it did, and its window."""

    window: Window
    seconds: float = float("nan")
    io: IOCounters = field(default_factory=IOCounters)
    settle_wait_s: float = 0.0  # waited for released space before the clock (h5sweep.measure.settle)


@contextmanager
def timed_io(settle: Rest | None = None):
    """Time the block: a window of its own, the garbage collector paused, the clock and
    the I/O counters read just around it. Yields a :class:`Timed`, filled in on exit.
    ``settle``: a write's rest for released space (:class:`h5sweep.measure.settle.Rest`): what
    is due, asked under the job's lock, is rested with the node's lock given up
    (:func:`h5sweep.measure.lock.idle`: other jobs' windows run meanwhile; nothing is done), then
    what is left is waited in the window, before the clock starts (a release meanwhile)."""
    rested = settle.due() if settle is not None else 0.0
    if rested > 0:
        with idle():
            time.sleep(rested)
    with timed_window() as window, gc_paused():
        timed = Timed(window)
        if settle is not None:
            timed.settle_wait_s = rested + settle()
        before = io_counters()
        start = time.perf_counter_ns()
        yield timed
        timed.seconds = (time.perf_counter_ns() - start) / 1e9
        timed.io = io_counters() - before
