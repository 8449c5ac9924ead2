"""HDF5's side of the codec table (:mod:`h5sweep.storage.codecs`): each codec module's
:class:`~h5sweep.storage.codecs.HDF5Filter` gives the keywords of ``h5py.Group.create_dataset``
that store it, whether its filter comes from hdf5plugin, and, where one exists, a chunk encoder
that produces exactly the bytes HDF5's filter stores (tested byte for byte, edge chunks
included), which the fast write uses instead of the pipeline.

Imported at parse time (the plan asks which codecs have an encoder): h5py, hdf5plugin and
numcodecs are imported inside the codecs' functions, in jobs only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from h5sweep.storage.codecs import CODECS, Compression, HDF5Filter

BUILT_IN, PLUGIN, NO_FILTER = "hdf5", "hdf5plugin", "none"  # the ``filter_family`` column
SKIPPED_FIRST_FILTER = 0b1  # a chunk's filter mask: the pipeline's first filter was not applied
# How HDF5 stores each codec family it stores (a codec module's ``hdf5``)
FILTERS: dict[str, HDF5Filter] = {family: codec.hdf5 for family, codec in CODECS.items() if codec.hdf5}


def families() -> tuple[str, ...]:
    """The codec families HDF5 stores (its ``Capabilities.codec_families``)."""
    return tuple(FILTERS)


def create_keywords(compression: Compression) -> dict:
    """Keyword arguments of ``h5py.Group.create_dataset`` for a compression setting."""
    return FILTERS[compression.family].keywords(compression.params)


def filter_family(compression: Compression) -> str:
    """The ``filter_family`` column: no filter, one built into HDF5, or one from hdf5plugin."""
    if compression.is_none:
        return NO_FILTER
    return PLUGIN if FILTERS[compression.family].plugin else BUILT_IN


def donor_name(filters: list) -> str | None:
    """A donor's own HDF5 pipeline (``[(filter id, values), ...]``) as a name of the codec
    table, where one codec's module reads it as its own; None otherwise."""
    for hdf5 in FILTERS.values():
        name = hdf5.donor(filters) if hdf5.donor else None
        if name:
            return name
    return None


def has_chunk_encoder(compression: Compression) -> bool:
    """Whether the fast write can produce HDF5's chunks for this setting itself."""
    return FILTERS[compression.family].encoder is not None


def chunk_encoder(compression: Compression, itemsize: int) -> Callable[[np.ndarray], tuple[int, bytes]] | None:
    """Encodes one chunk (an array, zero-padded to the full chunk) exactly as HDF5's pipeline
    would: (filter mask, stored bytes) for a direct chunk write; None if this setting has no
    encoder (no fast path)."""
    make = FILTERS[compression.family].encoder
    if make is None:
        return None
    encoder = make(compression.params, itemsize)

    def encode(chunk: np.ndarray) -> tuple[int, bytes]:
        payload = encoder(chunk)
        if payload is None:  # the (single, optional) filter gave up: stored raw, marked skipped
            return SKIPPED_FIRST_FILTER, np.ascontiguousarray(chunk).tobytes()
        return 0, payload

    return encode
