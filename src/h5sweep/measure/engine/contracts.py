"""What the read engine asks of what it reads, and nothing more: a backend (and the store it
opens), a read option, a store's stored chunks and a read case, each as a
:class:`typing.Protocol`. The backends (:mod:`h5sweep.backends.base`) and the read cases
(:mod:`h5sweep.kit.read`) have these by their shape; the engine imports neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from h5sweep.storage.errors import FaultedReadError
    from h5sweep.storage.layouts import Layout, Shape
    from h5sweep.storage.selections import Selection


class ReadOption(Protocol):
    """One way a store is read, measured as its own rows (HDF5: a chunk cache; Zarr: a reader)."""

    @property
    def label(self) -> str:
        """Its name: the rows' ``read_option`` and part of their ``variant``."""
        ...

    @property
    def setting(self) -> str:
        """How a user sets it in their own code ("" where there is nothing to set): the rows'
        ``read_option_setting``."""
        ...

    def columns(self) -> dict:
        """The columns every row read with it carries."""
        ...

    def holds_chunk(self, chunk_bytes: int) -> bool | None:
        """Whether its cache holds one chunk of ``chunk_bytes`` (None: no chunk cache)."""
        ...


class StoredChunks(Protocol):
    """A store's stored bytes, by what a selection touches (a row's ``stored_bytes_touched``
    and ``files_touched``)."""

    def touched(self, selection: Selection) -> int:
        """Stored (after the codec) bytes of the chunks the selection touches."""
        ...

    def files_touched(self, selection: Selection) -> int:
        """Files of the store a read of the selection opens."""
        ...


class ReadMeter(Protocol):
    """The meter of an opened store whose target counts its reads itself (an object store's
    requests, bytes and faults: :class:`h5sweep.storage.objectstore.RequestLog`)."""

    def mark(self) -> object:
        """Where the count stands now, cheap enough to take inside the clock."""
        ...

    def since(self, mark) -> dict:
        """The counts since ``mark``: a read row's request columns."""
        ...

    def cache_state(self, counts: dict) -> str:
        """Where a read with these counts got its bytes (the row's ``cache_state``)."""
        ...

    def open_columns(self, requests: int | None) -> dict:
        """The columns of a first read's open, given the open's requests (None: not a first read)."""
        ...

    def not_found_said(self, mark) -> str:
        """In words, the keys the store holds that were answered "not found" since ``mark``
        ("" for none): such a read fails, its values not the store's."""
        ...

    def faulted(self, message: str, mark) -> FaultedReadError | None:
        """A read failed since ``mark`` as the error of an emulated fault, or None where the
        failure is not one."""
        ...

    def disturbed(self, counts: dict) -> bool:
        """Whether a read with these counts met a failed answer or a fault (the race skips it)."""
        ...


class OpenedStore(Protocol):
    """A store opened for timed reads (after the engine dropped it from the page cache)."""

    @property
    def open_s(self) -> float:
        """Seconds the open took (on an object store: the part of the first read it took)."""
        ...

    @property
    def open_requests(self) -> int | None:
        """Where a meter counts them, the requests of the open."""
        ...

    @property
    def meter(self) -> ReadMeter | None:
        """The meter of its reads where its target counts them itself; None: the engine reads
        the page cache's and the device's counters."""
        ...

    def prepare(self, start: tuple[int, ...], buffer: np.ndarray) -> Callable[[], object]:
        """Everything a read of ``buffer.shape`` elements at ``start`` (storage axes) needs,
        built now; returns the call the clock covers, which fills ``buffer`` (returning None)
        or returns the values read."""
        ...

    def prepare_storage(self, start: tuple[int, ...], shape: tuple[int, ...]) -> Callable[[], object] | None:
        """The storage part of that read alone (stored chunk bytes fetched, nothing decoded),
        built now; None where the library cannot fetch it on its own."""
        ...

    def close(self) -> None: ...


# A backend's own kind of read option: the engine hands each store's back to its backend as it is
Option = TypeVar("Option", bound=ReadOption)


class Backend(Protocol[Option]):
    """A storage backend, as the engine reads its stores (with read options of its own kind)."""

    @property
    def label(self) -> str:
        """Its name in messages."""
        ...

    @property
    def default_read_option(self) -> Option:
        """The read option of a store given none."""
        ...

    @property
    def call_overhead_column(self) -> str | None:
        """The column of the binding's own cost per read call (None: nothing to separate)."""
        ...

    def call_overhead_s(self, path: str, dataset_name: str) -> float:
        """That cost, measured on the store before its reads (NaN: nothing to separate)."""
        ...

    def stored_chunks(self, path: str, layout: Layout, dataset_name: str) -> StoredChunks:
        """The store's stored bytes, found before its reads."""
        ...

    def paths_to_evict(self, path: str) -> list[str]:
        """Every file of the store, to prime and to drop from the page cache."""
        ...

    def open_for_reads(self, path: str, dataset_name: str, option: Option, readahead: bool = True) -> OpenedStore:
        """The store opened for timed reads with a read option (``readahead=False``: the
        kernel is told the reads are random)."""
        ...


class ReadCase(Protocol):
    """A read case, as the engine reads it: its selections, drawn from a seed, and its cold modes."""

    @property
    def name(self) -> str:
        """Its name: the rows' ``case``, and part of every seed its selections and visiting
        orders are drawn from."""
        ...

    @property
    def cold_modes(self) -> list[str]:
        """When its store is dropped and reopened (``first``: before the case; ``every``:
        before every selection), each measured as a variant."""
        ...

    def selections(
        self, shape: Shape, seed: int, policy: str = "random", chunk: Shape | None = None
    ) -> list[Selection]:
        """Its selections of a dataset of ``shape`` for a visiting policy (``chunk``: the
        layout's chunk shape, which ``aligned`` snaps them to)."""
        ...
