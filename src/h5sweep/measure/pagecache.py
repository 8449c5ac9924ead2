"""Page-cache control, so that a "first access" really comes from storage.

``evict`` writes a file's dirty pages back and asks the kernel to drop its cached pages;
``resident_fraction`` asks the kernel (mincore) how much of the file is still cached, which
tells whether eviction worked on that filesystem (it does not on tmpfs, where the page cache
*is* the storage). Pages still mapped by a live memory map in some process are not
dropped; this module never keeps a mapping open. ``io_counters`` reads the process's own I/O
counters around every timed read: bytes from the device, bytes asked of files, read calls.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from dataclasses import dataclass

import numpy as np

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
_MAP_FAILED = ctypes.c_void_p(-1).value
PAGE = mmap.PAGESIZE


def fsync_path(path: str) -> None:
    """Write a file's (or a directory's) dirty pages to storage and wait for it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def evict(path: str) -> None:
    """Flush ``path`` to storage and drop its pages from the page cache (best effort)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident_fraction(path: str) -> float:
    """Fraction of the file's pages that are in the page cache now (0.0 to 1.0)."""
    size = os.stat(path).st_size
    if size == 0:
        return 0.0
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, _MAP_FAILED):
            raise OSError(ctypes.get_errno(), f"mmap of {path} failed")
        try:
            pages = (size + PAGE - 1) // PAGE
            vec = (ctypes.c_ubyte * pages)()
            if _libc.mincore(ctypes.c_void_p(addr), size, vec) != 0:
                raise OSError(ctypes.get_errno(), f"mincore of {path} failed")
            return int(np.count_nonzero(np.frombuffer(vec, dtype=np.uint8) & 1)) / pages
        finally:
            _libc.munmap(ctypes.c_void_p(addr), size)
    finally:
        os.close(fd)


def resident_fraction_of(paths: list[str]) -> float:
    """Fraction of the bytes of several files (a store's) that are in the page cache now."""
    sizes = [os.stat(p).st_size for p in paths]
    total = sum(sizes)
    if total == 0:
        return 0.0
    return sum(resident_fraction(p) * n for p, n in zip(paths, sizes, strict=True) if n) / total


# Pages still cached after eviction below this fraction count as a cold file.
COLD_RESIDENT_FRACTION = 0.01

_PRIME_BLOCK = 8 << 20  # bytes per read call while priming


def memory_available() -> int:
    """Bytes the kernel estimates can be allocated without swapping (``MemAvailable``)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise OSError("/proc/meminfo has no MemAvailable line")


# Priming reads stores into the page cache while they add up to at most this share of the
# memory available when it starts: beyond it the later files would push out the earlier ones
# before their reads, so priming would cost a whole read of every store and achieve nothing.
PRIME_MEMORY_SHARE = 0.5


def prime(paths: list[str], budget_bytes: int | None = None) -> int:
    """Bring every page of ``paths`` (a store's files) into the page cache, by reading each file
    that is not wholly cached from start to end; returns the bytes read (0 on tmpfs, whose
    files always are). Untimed work before a store's first cold read: that read's eviction then
    frees the store's own pages just before the read takes pages again, as the eviction before
    every later read does. Without it the first round of cold reads takes pages that have lain
    free for long, and a virtual machine whose balloon handed those to its host waits for the
    host to back each one (slower reads of the same bytes, in the first round only).

    Files are primed in order while their sizes (cached or not) add up to at most
    ``budget_bytes``, by default :data:`PRIME_MEMORY_SHARE` of :func:`memory_available`; the
    rest are left as they are (stores that do not fit in memory together gain nothing from
    it), and their first read's ``resident_fraction_before_evict`` shows it."""
    if budget_bytes is None:
        budget_bytes = int(memory_available() * PRIME_MEMORY_SHARE)
    read, counted = 0, 0
    block = bytearray(_PRIME_BLOCK)
    for path in paths:
        size = os.stat(path).st_size
        counted += size
        if counted > budget_bytes:
            break
        if size == 0 or resident_fraction(path) >= 1.0:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            while n := os.readv(fd, [block]):
                read += n
        finally:
            os.close(fd)
    return read


def cache_state(device_read_bytes: int, evictable: bool, counted: bool = True) -> str:
    """Where a read's bytes came from: ``cold`` (some from the device), ``warm`` (all from
    the page cache), ``memory`` (a filesystem whose pages cannot be dropped, such as tmpfs),
    ``unverified`` (a filesystem whose reads the kernel's device counter cannot see: network
    filesystems, FUSE; ``counted`` false), ``unknown`` (the kernel does not count the
    process's device reads at all)."""
    if not evictable:
        return "memory"
    if not counted:
        return "unverified"
    if device_read_bytes < 0:
        return "unknown"
    return "cold" if device_read_bytes > 0 else "warm"


_io_fd: tuple[int, int] | None = None  # (pid, fd of /proc/self/io), opened once per process


@dataclass(frozen=True)
class IOCounters:
    """This process's I/O so far (``/proc/self/io``): ``device_read`` bytes fetched from
    storage (``read_bytes``), ``requested_read`` and ``requested_write`` bytes passed through
    read and write calls, page cache or not (``rchar``, ``wchar``: what the library asked
    of the file), and the number of ``read_calls`` (``syscr``). -1 where the kernel does
    not say. The difference of two snapshots leaves out the read that took the first."""

    device_read: int = -1
    requested_read: int = -1
    requested_write: int = -1
    read_calls: int = -1
    own_read_bytes: int = 0  # the snapshot's own read of /proc/self/io (counted by the next)

    def __sub__(self, before: IOCounters) -> IOCounters:
        def delta(a: int, b: int, own: int = 0) -> int:
            return a - b - own if a >= 0 and b >= 0 else -1

        return IOCounters(
            delta(self.device_read, before.device_read),
            delta(self.requested_read, before.requested_read, before.own_read_bytes),
            delta(self.requested_write, before.requested_write),
            delta(self.read_calls, before.read_calls, 1),
        )


def io_counters() -> IOCounters:
    """The process's I/O counters now. Called around every timed read, so it keeps
    ``/proc/self/io`` open and re-reads it with one ``pread``."""
    global _io_fd
    try:
        if _io_fd is None or _io_fd[0] != os.getpid():
            _io_fd = (os.getpid(), os.open("/proc/self/io", os.O_RDONLY))
        raw = os.pread(_io_fd[1], 4096, 0)
    except OSError:
        return IOCounters()
    fields = {}
    for line in raw.decode("ascii").splitlines():
        name, _, value = line.partition(":")
        fields[name] = int(value)
    return IOCounters(
        fields.get("read_bytes", -1),
        fields.get("rchar", -1),
        fields.get("wchar", -1),
        fields.get("syscr", -1),
        len(raw),
    )
