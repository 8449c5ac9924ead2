"""Storage targets: where a filesystem's test stores live, and everything that follows from it.

A target is a plug-in kind, as a backend, a codec and a case are: one module per target, one
entry in :data:`TARGET_MODULES`. A filesystem (``filesystems.<name>``) is on the target whose
settings block it sets (``s3:``), else on a POSIX directory. A target gives:

- its settings block and its parse-time checks and refusals (the backends it cannot serve, the
  cases it does not measure, the other filesystem keys it takes no part in);
- how a store gets there (:attr:`StorageTarget.staged`: written in place, or written in the
  filesystem's directory, then uploaded, checked whole and removed by the target's
  :meth:`StorageTarget.upload`, :meth:`StorageTarget.uploaded_whole` and
  :meth:`StorageTarget.remove_uploaded`) and the byte source a backend reads it through
  (:attr:`StorageTarget.source`, which a backend's ``Capabilities.sources`` lists where the
  backend reads it; :attr:`StorageTarget.reads` names the module of the backends' layer that
  opens a store on it);
- the columns where a row was measured and whether a read may meet emulated faults;
- the plan's price of a read and of a timed write besides the device's.

Nothing here imports a client library: a target's transport is loaded inside jobs.
"""

from __future__ import annotations

import contextlib
import importlib

from h5sweep.storage.declared import Block

# the byte source a backend reads a store on a POSIX directory through: the store's path
PATH = "path"


class StorageTarget:
    """Where a filesystem's stores live; this base is a POSIX directory's behaviour, which a
    target overrides where it differs."""

    name: str = ""  # the registry's name
    key: str | None = None  # the key of ``filesystems.<name>`` that puts a filesystem on it
    settings: Block | None = None  # that key's declared block
    source: str = PATH  # the byte source a backend reads a store through
    reads: str | None = None  # the backends' module that opens a store on it (None: the backend's own)
    staged: bool = False  # a store is written in the filesystem's directory, then uploaded
    fills_page_cache: bool = True  # its reads fill this node's page cache (an eviction is meaningful)
    label: str = "directory"

    def variants(self, entry: dict | None, key: str, largest_page: int) -> list[tuple[str, dict]]:
        """The filesystems one ``filesystems.<name>`` entry makes on this target, as (suffix of
        the name, the :class:`h5sweep.storage.filesystems.Filesystem` fields this target sets);
        ``entry``: the target's own block (None on a directory)."""
        return [("", {})]

    # How a staged store gets there and goes (``staged``): written in the filesystem's
    # directory, then uploaded, checked whole before it is read, and removed; a directory's
    # stores are written in place and never call these.
    def upload(self, place, name: str, local_path: str, marked: bool = True) -> int:
        """Send the store written at ``local_path`` to ``place`` as ``name``, then (``marked``)
        what says it arrived whole; the bytes sent."""
        raise NotImplementedError(f"a store on a {self.label} is written in place")

    def uploaded_whole(self, place, name: str, filesystem: str) -> bool:
        """Whether the store uploaded as ``name`` arrived whole (its upload finished)."""
        raise NotImplementedError(f"a store on a {self.label} is written in place")

    def not_whole(self, place, name: str) -> str:
        """Where the store uploaded as ``name`` is, and that its upload did not finish, in words."""
        return f"{name} on {self.label} {place}: its upload did not finish"

    def remove_uploaded(self, place, name: str, filesystem: str) -> None:
        """Remove the store uploaded as ``name`` from ``place`` (``filesystem``: named where the
        target is gone)."""
        raise NotImplementedError(f"a store on a {self.label} is written in place")

    def refuse(self, filesystem: dict, key: str) -> None:
        """Refuse, naming the key, a filesystem key this target takes no part in."""

    def probe(self, fs, key: str) -> str | None:
        """Why the filesystem ``fs`` cannot be used now (besides its directory), or None;
        ``key``: its config key, named where the refusal is the config's."""
        return None

    def refuse_backend(self, spec) -> str | None:
        """Why a backend (its :class:`h5sweep.backends.base.BackendSpec`) cannot store and read
        on this target, or None."""
        if self.source in spec.capabilities.sources:
            return None
        sources = ", ".join(spec.capabilities.sources)
        return f"it reads no store through {self.source!r} (its capabilities' sources: {sources})"

    def refuse_case(self, name: str) -> str | None:
        """Why a case with a job of its own is not measured on this target, or None."""
        return None

    def describe(self, fs) -> str:
        """The filesystem's place in words, for a refusal."""
        return fs.directory

    def job_settings(self, fs) -> dict:
        """What a job's settings carry of the filesystem's place (a key only where set)."""
        return {}

    def place_from_settings(self, entry: dict):
        """The place a job's filesystem settings carry (:meth:`job_settings`)."""
        return None

    def where(self, place) -> dict:
        """The columns that say where a row was measured, over those of the directory."""
        return {}

    def faulty(self, place) -> bool:
        """Whether reads on ``place`` may meet emulated faults (each then recorded)."""
        return False

    def guarded(self, place, filesystem: str):
        """A job's work on ``place``: an error where the target is gone named as such."""
        return contextlib.nullcontext()

    def read_seconds(self, sweep, store) -> tuple[float, float]:
        """(inside the windows, outside) seconds of a query job's reads besides the device's."""
        return 0.0, 0.0

    def request_seconds(self, sweep, store) -> float:
        """A query job's requests to the target, priced."""
        return 0.0

    def read_requests(self, sweep, store) -> tuple[float, float]:
        """A query job's (requests, bytes they bring) on the target."""
        return 0.0, 0.0

    def write_seconds(self, sweep, store) -> float:
        """A timed write's cost on the target besides the device's."""
        return 0.0


# one module per target, each with its TARGET
TARGET_MODULES = (
    "h5sweep.storage.targets.posix",
    "h5sweep.storage.targets.s3",
)

REGISTRY: dict[str, StorageTarget] = {
    target.name: target for target in (importlib.import_module(m).TARGET for m in TARGET_MODULES)
}
DIRECTORY = next(t for t in REGISTRY.values() if t.key is None)
KEYED = tuple(t for t in REGISTRY.values() if t.key is not None)


def of_entry(entry: dict) -> StorageTarget:
    """The target a ``filesystems.<name>`` entry (or a job's filesystem settings) is on: the
    one whose key it sets, else a directory."""
    return next((t for t in KEYED if entry.get(t.key) is not None), DIRECTORY)


def target(name: str) -> StorageTarget:
    return REGISTRY[name]
