"""Deflate (zlib), alone or after HDF5's byte shuffle: the study's filter, in every HDF5 build.
The fast write makes HDF5's chunks itself, byte for byte (tested, edge chunks included)."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np

from h5sweep.storage.codecs import MB, Codec, HDF5Filter, ZarrCodec

DEFLATE, SHUFFLE = 1, 2  # HDF5's filter ids


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


def _donor(filters: list) -> str | None:
    ids = [f[0] for f in filters]
    if ids == [DEFLATE]:
        return f"gzip-{filters[0][1][0]}"
    return None


def _shuffled_donor(filters: list) -> str | None:
    ids = [f[0] for f in filters]
    if ids == [SHUFFLE, DEFLATE]:
        return f"shuffle+gzip-{filters[1][1][0]}"
    return None


def _zarr_compressor(params: dict, itemsize: int):
    from zarr.codecs import GzipCodec

    return GzipCodec(level=params["level"])


def _numcodec(params: dict):
    import numcodecs

    return numcodecs.GZip(level=params["level"])


def _zarr_donor(codec) -> str | None:
    return f"gzip-{codec.level}" if type(codec).__name__ == "GzipCodec" else None


CODECS = (
    Codec(
        "gzip",
        "gzip-<level 0-9>",
        r"gzip-(?P<level>0|[1-9][0-9]*)",
        "deflate (zlib) at a level: the study's filter, in every HDF5 build",
        levels=range(0, 10),
        hdf5=HDF5Filter(
            lambda p: {"compression": "gzip", "compression_opts": p["level"]}, encoder=_gzip_encoder, donor=_donor
        ),
        zarr=ZarrCodec(_zarr_compressor, _numcodec, _zarr_donor),
        readme=(
            "`gzip-<0-9>`",
            "deflate (zlib) at a level; the study's filter, in every HDF5 build. The fast path writes its chunks "
            "with zlib in threads, byte for byte HDF5's",
            "3.15 at 4; 62 / 190",
        ),
    ),
    Codec(
        "shuffle+gzip",
        "shuffle+gzip-<level 0-9>",
        r"shuffle\+gzip-(?P<level>0|[1-9][0-9]*)",
        "HDF5's byte shuffle, then deflate: high and low bytes apart compress better",
        codec="gzip",
        levels=range(0, 10),
        shuffle=lambda p: "byte",
        write_bytes_per_s=80 * MB,
        read_bytes_per_s=250 * MB,
        hdf5=HDF5Filter(
            lambda p: {"compression": "gzip", "compression_opts": p["level"], "shuffle": True},
            encoder=_shuffled_gzip_encoder,
            donor=_shuffled_donor,
        ),
        readme=(
            "`shuffle+gzip-<0-9>`",
            "HDF5's byte shuffle (high and low bytes apart), then deflate; fast path as gzip (shuffled in numpy, "
            "byte for byte HDF5's)",
            "3.72 at 4; 79 / 250",
        ),
    ),
)
