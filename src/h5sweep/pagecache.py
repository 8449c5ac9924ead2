"""Page-cache control, so that a "first access" really comes from storage.

``evict`` writes a file's dirty pages back and asks the kernel to drop its cached pages;
``resident_fraction`` asks the kernel (mincore) how much of the file is still cached, which
tells whether eviction worked on that filesystem (it does not on tmpfs, where the page cache
*is* the storage). Pages still mapped by a live memory map in some process are not
dropped; this module never keeps a mapping open.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os

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
            return sum(b & 1 for b in bytes(vec)) / pages
        finally:
            _libc.munmap(ctypes.c_void_p(addr), size)
    finally:
        os.close(fd)


_io_fd: tuple[int, int] | None = None  # (pid, fd of /proc/self/io), opened once per process


def process_read_bytes() -> int:
    """Bytes this process has caused to be fetched from storage (``/proc/self/io`` read_bytes).

    Called around every timed read, so it keeps the file open and re-reads it with one
    ``pread`` (-1 where the kernel does not offer it)."""
    global _io_fd
    try:
        if _io_fd is None or _io_fd[0] != os.getpid():
            _io_fd = (os.getpid(), os.open("/proc/self/io", os.O_RDONLY))
        text = os.pread(_io_fd[1], 4096, 0).decode("ascii")
    except OSError:
        return -1
    for line in text.splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    return -1
