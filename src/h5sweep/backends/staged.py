"""A backend's stores on a staged storage target (:attr:`h5sweep.storage.targets.StorageTarget.staged`):
each written where the backend always writes it (the filesystem's directory, where it stays
for its chunk index), then sent to the target by the target's own transfer
(:meth:`h5sweep.storage.targets.StorageTarget.upload`), refused for reads where it did not
arrive whole, and removed there with its local store. How a store is then opened for timed
reads is the target's reads module's (:attr:`h5sweep.storage.targets.StorageTarget.reads`):
a subclass of :class:`StagedBackend` there gives :meth:`open_for_reads`."""

from __future__ import annotations

import os

from h5sweep.backends.base import Backend
from h5sweep.storage.errors import VerificationError


class StagedBackend(Backend):
    """``inner``'s stores on ``target`` at ``place``, staged in ``staging``: each uploaded
    under its path relative to ``staging``; a timed write is timed to its last completed
    upload request where the target's transfer is the write's own (a store of a file per chunk
    written there), else uploaded after its clock. Nothing of it is in this node's page cache
    to drop."""

    def __init__(self, inner: Backend, target, place, staging: str, filesystem: str = ""):
        self.inner, self.target, self.place = inner, target, place
        self.staging, self.filesystem = os.path.abspath(staging), filesystem
        self.name, self.label = inner.name, f"{inner.label} on {target.label}"
        self.call_overhead_column = None
        self.uploaded: set[str] = set()  # local paths of the stores it uploaded
        self.whole: set[str] = set()  # local paths of the stores found whole on the target

    def key(self, path: str) -> str:
        """The store's name on the target: its path below the staging directory."""
        return os.path.relpath(os.path.abspath(path), self.staging).replace(os.sep, "/")

    def _upload(self, path: str, marked: bool = True) -> None:
        """Upload the store at ``path``; ``marked``: then what says it arrived whole (a timed
        write's upload sends none: that store is renamed, and so uploaded again, before any
        job reads it)."""
        self.uploaded.add(os.path.abspath(path))  # removed with the store, whole or not
        self.target.upload(self.place, self.key(path), path, marked)

    def rename(self, path: str, new_path: str) -> None:
        """Rename the local store, upload it under its new name (after the clock) and remove
        the old name's copy."""
        self.remove_remote(new_path)
        self.inner.rename(path, new_path)
        self._upload(new_path)
        self.remove_remote(path)
        self.uploaded.discard(os.path.abspath(path))

    def remove_orphans(self) -> int:
        """Remove from the target every store this backend uploaded whose local store was
        removed since (a write case's repeats, removed together after their rest); the count."""
        gone = [path for path in self.uploaded if not os.path.lexists(path)]
        for path in gone:
            self.remove_remote(path)
            self.uploaded.discard(path)
        return len(gone)

    @property
    def fill_times(self) -> tuple[str, ...]:
        return self.inner.fill_times

    @property
    def default_read_option(self):
        return self.inner.default_read_option

    def write(self, path, stored, layout, compression, dataset_name, strategy, fill_time, option, deadline=None):
        calls = self.inner.write(path, stored, layout, compression, dataset_name, strategy, fill_time, option, deadline)
        self._upload(path, marked=False)
        return calls

    def write_fast(self, path, data, layout, compression, dataset_name, threads) -> str:
        method = self.inner.write_fast(path, data, layout, compression, dataset_name, threads)
        self._upload(path)
        return f"{method}, uploaded"

    def open_for_reads(self, path, dataset_name, option, readahead=True):
        raise NotImplementedError(f"the {self.target.name} target's reads module opens its stores")

    def stored_chunks(self, path, layout, dataset_name):
        return self.inner.stored_chunks(path, layout, dataset_name)

    def footprint_bytes(self, path) -> int:
        return self.inner.footprint_bytes(path)

    def store_counts(self, path) -> dict:
        return self.inner.store_counts(path)

    def check_whole(self, path) -> None:
        """Refuse to read the store uploaded from ``path`` where it did not arrive whole (its
        upload stopped part way: some of its objects may be there, not all); asked once per
        store."""
        if os.path.abspath(path) in self.whole:
            return
        if not self.target.uploaded_whole(self.place, self.key(path), self.filesystem):
            raise VerificationError(
                f"{self.target.not_whole(self.place, self.key(path))}, so it is not read: some of its objects may "
                "be missing. Run the sweep again: the job that writes it uploads it again."
            )
        self.whole.add(os.path.abspath(path))

    def remove_remote(self, path) -> None:
        """The store's copy removed from the target (its local store left as it is)."""
        self.target.remove_uploaded(self.place, self.key(path), self.filesystem)
        self.whole.discard(os.path.abspath(path))

    def remove(self, path) -> None:
        # the local store first: a target gone mid-job leaves no staging copy behind
        if os.path.lexists(path):
            self.inner.remove(path)
        self.remove_remote(path)
        self.uploaded.discard(os.path.abspath(path))

    def paths_to_evict(self, path) -> list[str]:
        return []

    def versions(self) -> dict:
        return self.inner.versions()
