"""A POSIX directory: each store written in place and read through its path; a read's meter
is the page cache's and the device's bytes (:mod:`h5sweep.measure.pagecache`)."""

from __future__ import annotations

from h5sweep.storage.targets import StorageTarget


class Directory(StorageTarget):
    name = "posix"


TARGET = Directory()
