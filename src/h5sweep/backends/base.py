"""What a storage backend is: everything the rest of h5sweep may ask of one.

A backend has two parts, so that the workflow can plan a sweep without loading any I/O
library:

- its :class:`BackendSpec`, read at parse time: name and label, :class:`Capabilities`
  (layouts, codecs, store kind, parallel I/O), and how its read options are configured;
- its :class:`Backend`, loaded inside jobs only (:func:`h5sweep.backends.load`): the
  standard and the fast write, opening for timed reads, the stored bytes a selection
  touches, the footprint, the paths to evict, and the library versions.

A new backend is one module with a :class:`Backend` subclass bound to ``BACKEND``, and one
:class:`BackendSpec` entry in :data:`h5sweep.backends.REGISTRY`. Every backend passes the
shared contract suite in ``tests/test_backend_contract.py``. Nothing here imports an I/O
library.
"""

from __future__ import annotations

import abc
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from h5sweep.storage import columns as C
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection


class WriteStopped(Exception):
    """A timed write stopped at its deadline (``cases.write.limit_s``) after ``calls`` calls."""

    def __init__(self, calls: int):
        super().__init__(f"write stopped at its deadline after {calls} calls")
        self.calls = calls


def stop_at(deadline: float | None, calls: int) -> None:
    """Before a write call after the first: stop the write (:class:`WriteStopped`) if ``deadline`` has passed."""
    if deadline is not None and time.perf_counter() > deadline:
        raise WriteStopped(calls)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can store and how (validation and the plan ask these, never a name)."""

    contiguous: bool  # stores a contiguous (unchunked) layout
    chunks: bool  # stores chunked layouts
    shards: bool = False  # stores chunks grouped in shard files
    pages: bool = False  # writes files with paged aggregation (layouts.pages)
    codec_families: tuple[str, ...] | None = None  # the codec table's families it stores (None: all)
    directory_store: bool = False  # a store is a directory (else one file)
    file_per_chunk: bool = False  # a read opens one file per chunk it touches
    # the modes of the parallel passes it runs (h5sweep.cases.parallel): serial (one rank),
    # independent (each rank its part), collective (MPI-IO collective calls); and those in which
    # it writes a filtered (compressed) store in parallel
    parallel_modes: tuple[str, ...] = ()
    parallel_filtered_write_modes: tuple[str, ...] = ()
    fill_times: tuple[str, ...] = ("ifset",)  # the write case's fill times it has (others are skipped)
    writes_with_read_option: bool = False  # the write case opens the store with the first read option
    # the byte sources it reads a store through (h5sweep.storage.targets: a directory's path,
    # an object store's objects); a filesystem on a target whose source is not among them is refused
    sources: tuple[str, ...] = ("path",)

    def stores(self, layout: Layout, compression: Compression) -> bool:
        """Whether a layout with a compression setting can be stored."""
        if layout.chunk_shape is None and not self.contiguous:
            return False
        if layout.chunk_shape is not None and not self.chunks:
            return False
        if layout.shard_shape is not None and not self.shards:
            return False
        if layout.page_size is not None and not self.pages:
            return False
        return self.codec_families is None or compression.family in self.codec_families


class ReadOption(Protocol):
    """One way a store is read, measured as its own rows (HDF5: a chunk cache; Zarr: a reader)."""

    @property
    def label(self) -> str: ...

    def columns(self) -> dict:
        """The columns every row read with this option carries."""

    @property
    def setting(self) -> str:
        """How a user sets it in their own code ("" where there is nothing to set)."""

    def holds_chunk(self, chunk_bytes: int) -> bool | None:
        """Whether a cache of this option holds one chunk (None: no chunk cache)."""

    def settings(self) -> dict:
        """The option as a job's settings carry it (see :attr:`BackendSpec.option_from_settings`)."""


@dataclass(frozen=True)
class PlainRead:
    """The read option of a backend that has none to vary."""

    reader: str = "pread"  # the ``reader`` column

    @property
    def label(self) -> str:
        return self.reader

    @property
    def setting(self) -> str:
        return ""

    def columns(self) -> dict:
        return {C.READER: self.reader}

    def holds_chunk(self, chunk_bytes: int) -> bool | None:
        return None

    def settings(self) -> dict:
        return {}


def _no_options(config: dict) -> list:
    return [PlainRead()]


def _plain_option(entry: dict) -> PlainRead:
    return PlainRead()


def _no_filter(compression: Compression) -> str:
    return "none"


def _as_they_are(options: list, filesystem) -> list:
    return list(options)


@dataclass(frozen=True)
class SourceReads:
    """How a backend's read options read a store through an object store's byte source, known
    at parse time without its I/O library: the options measured there (``options(options,
    filesystem)``), an option with how its file is fetched (``with_read(option, read)``), the
    config key and value of an option whose reader sends its own requests (``own_requests``:
    counted by the relay every request passes, not by an S3 client's events) and why this
    process cannot read with an option (``refusal``: (key, value, reason))."""

    options: Callable[[list, object], list] = _as_they_are
    with_read: Callable[[object, object], object] = lambda option, read: option
    own_requests: Callable[[object], tuple[str, object] | None] = lambda option: None
    refusal: Callable[[object], tuple[str, object, str] | None] = lambda option: None


@dataclass(frozen=True)
class BackendSpec:
    """A backend as the workflow sees it at parse time (its registry entry)."""

    name: str  # the config's name, the ``backend`` column and the store's suffix
    label: str  # in messages, figures and the recommendation
    module: str  # the implementation, imported by jobs only
    description: str
    capabilities: Capabilities
    # the job setting that carries its read options, and how they are read from the sweep's
    # config and from a job's settings (each option is measured as its own rows)
    options_key: str = "read_options"
    options_from_config: Callable[[dict], list] = field(default=_no_options, repr=False)
    option_from_settings: Callable[[dict], ReadOption] = field(default=_plain_option, repr=False)
    # its own mapping of the codec table: the ``filter_family`` column of a store with a
    # compression setting (where the library's filter or codec for it comes from), and whether
    # the fast write encodes its chunks itself, in threads (else the library's pipeline writes)
    filter_family: Callable[[Compression], str] = field(default=_no_filter, repr=False)
    encodes_chunks: Callable[[Compression], bool] = field(default=lambda compression: False, repr=False)
    # the columns it adds, each registered by its own module: the settings of its read options
    # (variant columns of the read case), what the summary carries per store from its
    # measurements, and its libraries' versions, the first that of the library that stores
    # the data (named by the label in the notes that compare versions)
    option_columns: tuple[str, ...] = ()
    carried_columns: tuple[str, ...] = ()
    version_columns: tuple[str, ...] = ()
    # its top-level config block (h5sweep.storage.declared.Block, e.g. ``zarr:``), declared
    # beside it; the schema takes it from here
    settings: object = None
    # how a user writes and reads the store it chose (h5sweep.backends.recipes.Store -> Recipe)
    recipe: Callable | None = field(default=None, repr=False)
    # how its read options read a store on an object store (at parse time)
    remote: SourceReads = field(default=SourceReads(), repr=False)

    def stores(self, layout: Layout, compression: Compression) -> bool:
        return self.capabilities.stores(layout, compression)


class OpenedStore(abc.ABC):
    """A test store opened for timed reads (after the engine evicted it)."""

    open_s: float  # seconds the open took
    # the meter of its reads where its target counts them itself (an object store: requests,
    # bytes and faults; see h5sweep.storage.objectstore.RequestLog): mark(), since(mark) (the
    # read's columns), cache_state(counts), open_columns(requests), not_found_said(mark),
    # faulted(message, mark) (a FaultedReadError, or None) and disturbed(counts); None: the
    # page cache's and the device's counters, which the engine reads itself
    meter = None
    open_requests: int | None = None  # where a meter counts them: the requests of the open

    @abc.abstractmethod
    def prepare(self, start: tuple[int, ...], buffer: np.ndarray) -> Callable[[], object]:
        """Everything a read of ``buffer.shape`` elements at ``start`` (storage axes) needs,
        built now; returns the call the clock covers, which fills ``buffer`` (returning None)
        or returns the values read as a new array."""

    def prepare_storage(self, start: tuple[int, ...], shape: tuple[int, ...]) -> Callable[[], object] | None:
        """The storage part of a read of ``shape`` at ``start`` (stored chunk bytes fetched,
        nothing decoded), built now; None where the library cannot fetch it on its own."""
        return None

    @abc.abstractmethod
    def close(self) -> None: ...


class PassFile(abc.ABC):
    """One rank's handle on a store during a parallel pass (:mod:`h5sweep.cases.parallel`):
    opened (or created, for a write) before the clock; each access reads or writes one region."""

    @abc.abstractmethod
    def prepare(self, region: tuple[slice, ...], buffer: np.ndarray) -> Callable[[], object]:
        """The access of ``region``, built now: a read fills ``buffer`` (returning None) or
        returns the values; a write stores ``buffer``."""

    def prepare_empty(self) -> Callable[[], object] | None:
        """A collective call that selects nothing, made by a rank with fewer accesses than the
        others so that every collective access has all ranks; None outside collective mode."""
        return None

    @abc.abstractmethod
    def close(self) -> None:
        """Close; after a write, flush what this rank wrote and put it on storage (inside the
        pass's clock)."""

    def hints_in_effect(self) -> dict[str, str]:
        """The MPI-IO hints the file was opened with, as the MPI-IO layer reports them
        (``cases.parallel.hints``); empty where the backend does not open through MPI-IO."""
        return {}


class StoredChunks(abc.ABC):
    """The stored bytes of a store, by what a selection touches."""

    @abc.abstractmethod
    def touched(self, selection: Selection) -> int:
        """Stored (after the codec) bytes of the chunks a selection touches."""

    @abc.abstractmethod
    def files_touched(self, selection: Selection) -> int:
        """Files of the store a read of the selection opens."""


class Backend(abc.ABC):
    """A backend's I/O, loaded in jobs only."""

    name: ClassVar[str]  # as in its spec
    label: ClassVar[str]

    @property
    def fill_times(self) -> tuple[str, ...]:
        from h5sweep.backends import spec

        return spec(self.name).capabilities.fill_times

    @property
    def default_read_option(self) -> ReadOption:
        """The read option a store is read with where none is given."""
        from h5sweep.backends import spec

        return spec(self.name).options_from_config({})[0]

    @abc.abstractmethod
    def write(
        self,
        path: str,
        stored: np.ndarray,
        layout: Layout,
        compression: Compression,
        dataset_name: str,
        strategy: str,
        fill_time: str,
        option: ReadOption | None,
        deadline: float | None = None,
    ) -> int:
        """The standard write path (what a user's converter does); ``stored`` is the array in
        the layout's storage order; returns the number of write calls. ``deadline``: a
        ``time.perf_counter()`` value; a write still running then stops between two calls
        (:func:`stop_at`), its partial store left for the caller to remove."""

    @abc.abstractmethod
    def write_fast(
        self, path: str, data: np.ndarray, layout: Layout, compression: Compression, dataset_name: str, threads: int
    ) -> str:
        """A store with the same bytes, at the storage's speed; returns the method used."""

    @abc.abstractmethod
    def open_for_reads(self, path: str, dataset_name: str, option: ReadOption, readahead: bool = True) -> OpenedStore:
        """The store opened for timed reads with a read option (``readahead=False``: the
        kernel is told the reads are random)."""

    @abc.abstractmethod
    def stored_chunks(self, path: str, layout: Layout, dataset_name: str) -> StoredChunks: ...

    def open_pass(
        self,
        path: str,
        dataset_name: str,
        mode: str,
        comm,
        option: ReadOption,
        create: tuple | None = None,
        hints: dict[str, str] | None = None,
    ) -> PassFile:
        """This rank's handle for a parallel pass in ``mode`` on communicator ``comm`` (every
        rank that takes part calls it; in ``serial`` mode only rank 0 does). ``create``:
        ``(shape, dtype, layout, compression)`` of a store to create for a write pass (the
        ranks create it together where the mode is collective or independent). ``hints``:
        MPI-IO hints for a backend that opens through MPI-IO (others ignore them)."""
        raise NotImplementedError(f"the {self.label} backend has no parallel passes")

    @abc.abstractmethod
    def footprint_bytes(self, path: str) -> int:
        """Bytes the store takes on disk, metadata included."""

    @abc.abstractmethod
    def store_counts(self, path: str) -> dict:
        """``store_files`` and ``store_directories`` of the store."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Delete a (partial) store."""

    @abc.abstractmethod
    def paths_to_evict(self, path: str) -> list[str]:
        """Every file of the store, to drop from the page cache before a cold read."""

    def byte_kinds(self, path: str, dataset_name: str) -> Callable[[str, str, int | None, int | None], str]:
        """What a request for a range of the store at ``path`` fetches once the store is kept
        elsewhere (an object store): a function of (method, key, start, stop) that says
        ``data`` (bytes of the values) or ``metadata``."""
        raise NotImplementedError(f"the {self.name} backend tells no data bytes from metadata bytes")

    def open_remote(self, source, dataset_name: str, option) -> Callable[[], OpenedStore]:
        """The store kept at ``source`` (a target's byte source, e.g.
        :class:`h5sweep.backends.remote.S3Source`) opened for timed reads with ``option``, in
        two steps: its client made now from the source, the store opened by the function
        returned."""
        raise NotImplementedError(f"the {self.name} backend reads no store through {type(source).__name__}")

    def remove_remote(self, path: str) -> None:
        """Remove the store's copy kept elsewhere than its path (an object store's objects); a
        backend whose stores are only where they are written keeps none."""
        return None

    def remove_orphans(self) -> int:
        """Remove the copies kept elsewhere of stores removed from their paths since; the count."""
        return 0

    def rename(self, path: str, new_path: str) -> None:
        """Make the store at ``path`` the one at ``new_path`` (a partial store becomes the query
        store), replacing what was there."""
        os.replace(path, new_path)

    # the column of the binding's own cost per read call (None: nothing to separate)
    call_overhead_column: ClassVar[str | None] = None

    def call_overhead_s(self, path: str, dataset_name: str) -> float:
        """The Python binding's own cost per read call, outside the timed region (NaN: the
        binding is the library, nothing to separate)."""
        return float("nan")

    @abc.abstractmethod
    def versions(self) -> dict:
        """The library versions every row records."""


class SingleFileStore:
    """What a backend whose store is one file (HDF5, raw) has in common: its footprint is the
    file's size, it is the one file to evict and to remove."""

    def footprint_bytes(self, path: str) -> int:
        return os.stat(path).st_size

    def store_counts(self, path: str) -> dict:
        return {C.STORE_FILES: 1, C.STORE_DIRECTORIES: 0}

    def remove(self, path: str) -> None:
        os.remove(path)

    def paths_to_evict(self, path: str) -> list[str]:
        return [path]
