"""What every storage backend provides (a new backend implements these and registers an
entry in :data:`h5sweep.backends.BACKENDS`). Nothing here imports an I/O library."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from h5sweep.compression import Compression
from h5sweep.layouts import Layout
from h5sweep.selections import Selection


class OpenedStore(Protocol):
    """A test store opened for timed reads (after the caller evicted it)."""

    open_s: float  # seconds the open took

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray) -> Callable[[], object]:
        """Everything a read of ``buffer.shape`` elements at ``start`` (storage axes) needs,
        built now; returns the call the clock covers, which fills ``buffer`` (returning None)
        or returns the values read as a new array."""

    def prepare_storage(self, start: tuple[int, ...], shape: tuple[int, ...]) -> Callable[[], object] | None:
        """The storage part of a read of ``shape`` at ``start`` (stored chunk bytes fetched,
        nothing decoded), built now; None where the library cannot fetch it on its own."""

    def close(self) -> None: ...


class StoredChunks(Protocol):
    def touched(self, selection: Selection) -> int:
        """Stored (after the codec) bytes of the chunks a selection touches."""

    def files_touched(self, selection: Selection) -> int:
        """Files of the store a read of the selection opens (HDF5: its one file)."""


class Backend(Protocol):
    name: str  # as in the config and the backend column
    label: str  # as in messages
    fill_times: tuple[str, ...]  # the write case's fill times it has (others are skipped)

    def write(
        self,
        path: str,
        stored: np.ndarray,
        layout: Layout,
        compression: Compression,
        dataset_name: str,
        strategy: str,
        fill_time: str,
        options,
    ) -> int:
        """The standard write path (what a user's converter does); ``stored`` is the array in
        the layout's storage order; returns the number of write calls."""

    def write_fast(
        self, path: str, data: np.ndarray, layout: Layout, compression: Compression, dataset_name: str, threads: int
    ) -> str:
        """A store with the same bytes, at the storage's speed; returns the method used."""

    def open_for_reads(self, path: str, dataset_name: str, options, readahead: bool = True) -> OpenedStore: ...

    def stored_chunks(self, path: str, layout: Layout, dataset_name: str) -> StoredChunks: ...

    def footprint_bytes(self, path: str) -> int:
        """Bytes the store takes on disk, metadata included."""

    def store_counts(self, path: str) -> dict:
        """``store_files`` and ``store_directories`` of the store."""

    def remove(self, path: str) -> None:
        """Delete a (partial) store."""

    def paths_to_evict(self, path: str) -> list[str]:
        """Every file of the store, to drop from the page cache before a cold read."""

    def call_overhead_s(self, path: str, dataset_name: str) -> float:
        """The Python binding's own cost per read call, outside the timed region."""

    def versions(self) -> dict:
        """The library versions every row records."""
