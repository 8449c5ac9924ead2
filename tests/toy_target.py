"""A toy storage target: each store written in the filesystem's directory, then copied
through fsspec's local filesystem under another root (``filesystems.<name>.mirror.root``),
and read there by its path, each store it opens listed in ``<root>/opened.txt``
(tests/test_toy_target.py)."""

from __future__ import annotations

import os

from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.targets import StorageTarget

SETTINGS = Block(
    "mirror",
    "A directory the stores are copied to through fsspec, and read from (a test's toy).",
    (Setting("root", "string", "", "Where the copies go."),),
    optional=False,
    required=("root",),
)


class Mirror(StorageTarget):
    name = "mirror"
    key = "mirror"
    settings = SETTINGS
    reads = __name__  # this module opens a store on it (on_target below)
    staged = True
    label = "mirror"

    def variants(self, entry, key, largest_page):
        root = SETTINGS.filled(entry)["root"]
        if not root:
            raise ConfigError(f"{key}.root", root, "names no directory")
        return [("", {"place": os.path.abspath(root)})]

    def describe(self, fs) -> str:
        return fs.place

    def job_settings(self, fs) -> dict:
        return {"mirror": {"root": fs.place}}

    def place_from_settings(self, entry: dict):
        return entry["mirror"]["root"]

    def where(self, place) -> dict:
        return {C.FS_TYPE: "mirror", C.FS_PATH: place}


TARGET = Mirror()


class MirroredBackend:
    """A backend whose stores, once written in the staging directory, are copied under the
    root through fsspec, and read there."""

    def __init__(self, inner, root: str, staging: str):
        import fsspec

        self.inner, self.root, self.staging = inner, root, os.path.abspath(staging)
        self.fs = fsspec.filesystem("file")

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def mirrored(self, path: str) -> str:
        return os.path.join(self.root, os.path.relpath(os.path.abspath(path), self.staging))

    def _copy(self, path: str) -> None:
        self._drop(path)
        self.fs.makedirs(os.path.dirname(self.mirrored(path)), exist_ok=True)
        self.fs.put(path, self.mirrored(path), recursive=os.path.isdir(path))

    def _drop(self, path: str) -> None:
        if self.fs.exists(self.mirrored(path)):
            self.fs.rm(self.mirrored(path), recursive=True)

    def write(self, path, *args, **kwargs):
        calls = self.inner.write(path, *args, **kwargs)
        self._copy(path)
        return calls

    def write_fast(self, path, *args, **kwargs):
        method = self.inner.write_fast(path, *args, **kwargs)
        self._copy(path)
        return f"{method}, mirrored"

    def rename(self, path, new_path) -> None:
        self.inner.rename(path, new_path)
        self._drop(path)
        self._copy(new_path)

    def remove(self, path) -> None:
        self.inner.remove(path)
        self._drop(path)

    def remove_orphans(self) -> int:
        return self.inner.remove_orphans()

    def open_for_reads(self, path, dataset_name, option, readahead=True):
        with open(os.path.join(self.root, "opened.txt"), "a", encoding="utf-8") as f:  # the test's evidence
            f.write(self.mirrored(path) + "\n")
        return self.inner.open_for_reads(self.mirrored(path), dataset_name, option, readahead)

    def paths_to_evict(self, path):
        return self.inner.paths_to_evict(self.mirrored(path))


def on_target(backend, root, staging: str, filesystem: str):
    return MirroredBackend(backend, root, staging)


def read_options(name: str, options: list, fs) -> list:
    return options


def read_refusal(name: str, option, fs):
    return None


def option_from_settings(entry: dict, decode):
    return decode(entry)
