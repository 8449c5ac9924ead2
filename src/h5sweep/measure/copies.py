"""Byte-identical copies of a test store, read in turn (a filesystem's ``read_copies``).

Where a store's bytes lie can change how fast it reads: in memory (tmpfs), one copy of a file
may read measurably slower than another copy of the same bytes, for as long as the file
exists, and a second run of a sweep meets other copies. Such a factor belongs to the copy,
not to the layout, and the intervals (taken over the selections of one copy) cannot show it.
With ``read_copies: n`` a query job copies every store n - 1 times before its reads (untimed,
in the job's shared section), reads selection i of a case whose every read starts cold from
copy i mod n, and removes the copies afterwards; a copy's own factor then weighs 1/n on each
median. Every row says which copy it read (column ``store_copy``, 0 being the store itself).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from h5sweep.measure.pagecache import fsync_path


class Backend(Protocol):
    """What copying a store asks of its backend."""

    def paths_to_evict(self, path: str) -> list[str]:
        """Every file of the store at ``path``: each copy's is written to its device."""
        ...

    def remove(self, path: str) -> None:
        """Delete the store at ``path`` (a copy, or what a killed job left of one)."""
        ...


COPY_SUFFIX = ".read-copy-"


def copy_path(path: str, number: int) -> str:
    """Where copy ``number`` (1, 2, ...) of the store at ``path`` goes: beside it."""
    return f"{path}{COPY_SUFFIX}{number}"


def _flushed_copy(backend: Backend, source: str, target: str) -> None:
    """Copy a store (a file or a directory of files) and write it to its device, so that
    evicting it from the page cache before a cold read really empties the cache."""
    _remove(backend, target)  # what a killed job left
    (shutil.copytree if os.path.isdir(source) else shutil.copyfile)(source, target)
    for name in backend.paths_to_evict(target):
        fsync_path(name)


def _remove(backend: Backend, path: str) -> None:
    if os.path.lexists(path):
        backend.remove(path)


@contextlib.contextmanager
def read_copies(backend: Backend, path: str, count: int) -> Iterator[list[str]]:
    """The store at ``path`` and ``count - 1`` copies of it, removed again on leaving."""
    if count < 1:
        raise ValueError(f"read_copies must be 1 or more, not {count}")
    paths = [path]
    try:
        for number in range(1, count):
            paths.append(copy_path(path, number))
            _flushed_copy(backend, path, paths[-1])
        yield paths
    finally:
        for copy in paths[1:]:
            _remove(backend, copy)


@contextlib.contextmanager
def read_copies_of_all(
    stores: list[tuple[Backend, str]], count: int, threads: int | None = None
) -> Iterator[list[list[str]]]:
    """:func:`read_copies` of every store (its backend and path): per store, itself and its
    copies. The copies are made ``threads`` at a time (by default one a core): untimed work,
    which no timed window overlaps, so every core may take part (a copy is the kernel's work)."""
    if count < 1:
        raise ValueError(f"read_copies must be 1 or more, not {count}")
    made = [[path, *(copy_path(path, number) for number in range(1, count))] for _, path in stores]
    copies = [(backend, paths[0], copy) for (backend, _), paths in zip(stores, made, strict=True) for copy in paths[1:]]
    try:
        with ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1) as pool:
            for done in [pool.submit(_flushed_copy, *each) for each in copies]:
                done.result()  # a failed copy fails the job, naming its error
        yield made
    finally:
        for backend, _, copy in copies:
            _remove(backend, copy)
