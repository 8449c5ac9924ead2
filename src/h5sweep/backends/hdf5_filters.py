"""HDF5's mapping of the codec table (:mod:`h5sweep.storage.codecs`): for each codec family,
the keywords of ``h5py.Group.create_dataset`` that store it, where its filter comes from, and,
where one exists, a chunk encoder that produces exactly the bytes HDF5's filter stores (tested
byte for byte, edge chunks included), which the fast write uses instead of the pipeline.

Imported at parse time (the plan asks which codecs have an encoder): h5py, hdf5plugin and
numcodecs are imported inside the functions that need them, in jobs only.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from h5sweep.storage.codecs import Compression, blosc_shuffle

BUILT_IN, PLUGIN, NO_FILTER = "hdf5", "hdf5plugin", "none"  # the ``filter_family`` column
SKIPPED_FIRST_FILTER = 0b1  # a chunk's filter mask: the pipeline's first filter was not applied


@dataclass(frozen=True)
class Filter:
    """How HDF5 stores one codec family."""

    keywords: Callable[[dict], dict] = field(repr=False)  # params -> create_dataset keywords
    source: str = BUILT_IN  # where the filter comes from: built into HDF5/h5py, or hdf5plugin
    # (params, itemsize) -> a function from one chunk (an array, zero-padded to the full chunk)
    # to the bytes HDF5's filter stores, or None where the filter gives up on that chunk (an
    # optional filter: HDF5 then stores the chunk as it is and marks the filter skipped)
    encoder: Callable[[dict, int], Callable[[np.ndarray], bytes | None]] | None = field(default=None, repr=False)


def _gzip_encoder(params: dict, itemsize: int) -> Callable[[np.ndarray], bytes]:
    level = params["level"]
    return lambda chunk: zlib.compress(chunk, level)  # what HDF5's deflate filter stores


def _shuffled_gzip_encoder(params: dict, itemsize: int) -> Callable[[np.ndarray], bytes]:
    """HDF5's shuffle filter (byte k of every element together, k = 0..itemsize-1), then
    deflate: exactly the bytes HDF5's pipeline stores for a full or an edge chunk."""
    level = params["level"]

    def encode(chunk: np.ndarray) -> bytes:
        elements = np.frombuffer(chunk, dtype=np.uint8).reshape(-1, itemsize)
        return zlib.compress(np.ascontiguousarray(elements.T).tobytes(), level)

    return encode


def _blosc_encoder(params: dict, itemsize: int) -> Callable[[np.ndarray], bytes | None]:
    """numcodecs' Blosc with the filter's settings (element size as type size, automatic
    block size): the bytes hdf5plugin's Blosc filter stores. Where the result would not fit
    in the chunk's own size the filter fails (it is optional): None."""
    from numcodecs import Blosc  # only in a job

    mode = {"none": Blosc.NOSHUFFLE, "byte": Blosc.SHUFFLE, "bit": Blosc.BITSHUFFLE}[blosc_shuffle(params)]
    codec = Blosc(cname=params["cname"], clevel=params["level"], shuffle=mode, blocksize=0)

    def encode(chunk: np.ndarray) -> bytes | None:
        payload = bytes(codec.encode(np.ascontiguousarray(chunk)))
        return payload if len(payload) <= chunk.nbytes else None

    return encode


def _nbit_keywords(params: dict) -> dict:
    from h5py import h5p, h5z  # only in a job: a creation property list with the n-bit filter

    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_filter(h5z.FILTER_NBIT)
    return {"dcpl": dcpl}


def _plugin(make: Callable[[object, dict], object]) -> Callable[[dict], dict]:
    """HDF5 keywords from an hdf5plugin filter, imported only in a job."""

    def keywords(params: dict) -> dict:
        import hdf5plugin

        return dict(make(hdf5plugin, params))

    return keywords


def _blosc_keywords(version: str) -> Callable[[dict], dict]:
    def make(hdf5plugin, params):
        cls = hdf5plugin.Blosc if version == "blosc" else hdf5plugin.Blosc2
        mode = {
            "none": cls.NOSHUFFLE if version == "blosc" else cls.NOFILTER,
            "byte": cls.SHUFFLE,
            "bit": cls.BITSHUFFLE,
        }
        return cls(params["cname"], params["level"], mode[blosc_shuffle(params)])

    return _plugin(make)


FILTERS: dict[str, Filter] = {
    "none": Filter(lambda p: {}, source=NO_FILTER),
    "gzip": Filter(lambda p: {"compression": "gzip", "compression_opts": p["level"]}, encoder=_gzip_encoder),
    "shuffle+gzip": Filter(
        lambda p: {"compression": "gzip", "compression_opts": p["level"], "shuffle": True},
        encoder=_shuffled_gzip_encoder,
    ),
    "lzf": Filter(lambda p: {"compression": "lzf"}),
    "shuffle+lzf": Filter(lambda p: {"compression": "lzf", "shuffle": True}),
    "szip": Filter(lambda p: {"compression": "szip", "compression_opts": (p["method"], p["pixels"])}),
    "scaleoffset": Filter(lambda p: {"scaleoffset": 0}),
    "nbit": Filter(_nbit_keywords),
    "blosc": Filter(_blosc_keywords("blosc"), PLUGIN, _blosc_encoder),
    "blosc2": Filter(_blosc_keywords("blosc2"), PLUGIN),
    "zstd": Filter(_plugin(lambda h, p: h.Zstd(p["level"])), PLUGIN),
    "lz4": Filter(_plugin(lambda h, p: h.LZ4()), PLUGIN),
    "bitshuffle": Filter(_plugin(lambda h, p: h.Bitshuffle(cname=p["cname"])), PLUGIN),
    "sz3": Filter(_plugin(lambda h, p: h.SZ3(absolute=float(p["bound"]))), PLUGIN),
    "zfp": Filter(_plugin(lambda h, p: h.Zfp(rate=p["rate"])), PLUGIN),
    "bzip2": Filter(_plugin(lambda h, p: h.BZip2(p["level"])), PLUGIN),
}


def families() -> tuple[str, ...]:
    """The codec families HDF5 stores (its ``Capabilities.codec_families``)."""
    return tuple(FILTERS)


def create_keywords(compression: Compression) -> dict:
    """Keyword arguments of ``h5py.Group.create_dataset`` for a compression setting."""
    return FILTERS[compression.family].keywords(compression.params)


def filter_family(compression: Compression) -> str:
    """The ``filter_family`` column: no filter, one built into HDF5, or one from hdf5plugin."""
    return FILTERS[compression.family].source


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
