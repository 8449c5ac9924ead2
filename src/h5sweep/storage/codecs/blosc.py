"""Blosc and Blosc2 (hdf5plugin): a fast meta-compressor with its own byte or bit shuffle. The
fast write makes Blosc's chunks with numcodecs, byte for byte the plugin's; Zarr stores Blosc
too."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, ZarrCodec, plugin_keywords

BLOSC_CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
_NAME = rf"(?P<cname>{'|'.join(BLOSC_CODECS)})-(?P<level>\d+)(?:-(?P<shuffle>shuffle|bitshuffle))?"
_SHUFFLES = {None: "none", "shuffle": "byte", "bitshuffle": "bit"}


def blosc_shuffle(params: dict) -> str:
    """A Blosc name's shuffle: none, byte or bit."""
    return _SHUFFLES[params.get("shuffle")]


def _keywords(version: str) -> Callable[[dict], dict]:
    def make(hdf5plugin, params):
        cls = hdf5plugin.Blosc if version == "blosc" else hdf5plugin.Blosc2
        mode = {
            "none": cls.NOSHUFFLE if version == "blosc" else cls.NOFILTER,
            "byte": cls.SHUFFLE,
            "bit": cls.BITSHUFFLE,
        }
        return cls(params["cname"], params["level"], mode[blosc_shuffle(params)])

    return plugin_keywords(make)


def _encoder(params: dict, itemsize: int) -> Callable[[np.ndarray], bytes | None]:
    """numcodecs' Blosc with the filter's settings (element size as type size, automatic
    block size): the bytes hdf5plugin's Blosc filter stores. Where the result would not fit
    in the chunk's own size the filter fails (it is optional): None."""
    codec = _numcodec(params)

    def encode(chunk: np.ndarray) -> bytes | None:
        payload = bytes(codec.encode(np.ascontiguousarray(chunk)))
        return payload if len(payload) <= chunk.nbytes else None

    return encode


def _numcodec(params: dict):
    from numcodecs import Blosc  # only in a job

    mode = {"none": Blosc.NOSHUFFLE, "byte": Blosc.SHUFFLE, "bit": Blosc.BITSHUFFLE}[blosc_shuffle(params)]
    return Blosc(cname=params["cname"], clevel=params["level"], shuffle=mode, blocksize=0)


def _zarr_compressor(params: dict, itemsize: int):
    from zarr.codecs import BloscCodec, BloscShuffle

    shuffle = {"none": BloscShuffle.noshuffle, "byte": BloscShuffle.shuffle, "bit": BloscShuffle.bitshuffle}
    return BloscCodec(
        cname=params["cname"],
        clevel=params["level"],
        shuffle=shuffle[blosc_shuffle(params)],
        typesize=itemsize,
        blocksize=0,
    )


def _zarr_donor(codec) -> str | None:
    if type(codec).__name__ != "BloscCodec":
        return None
    shuffle = {"noshuffle": "", "shuffle": "-shuffle", "bitshuffle": "-bitshuffle"}[str(codec.shuffle.value)]
    return f"blosc-{codec.cname.value}-{codec.clevel}{shuffle}"


CODECS = (
    Codec(
        "blosc",
        "blosc-<blosclz|lz4|lz4hc|zlib|zstd>-<level 0-9>[-shuffle|-bitshuffle]",
        rf"blosc-{_NAME}",
        "Blosc (hdf5plugin): a fast meta-compressor with its own byte or bit shuffle",
        levels=range(0, 10),
        shuffle=blosc_shuffle,
        write_bytes_per_s=200 * MB,
        read_bytes_per_s=1000 * MB,
        hdf5=HDF5Filter(_keywords("blosc"), plugin=True, encoder=_encoder),
        zarr=ZarrCodec(_zarr_compressor, _numcodec, _zarr_donor),
        readme=(
            "`blosc-<codec>-<0-9>[-shuffle\\|-bitshuffle]`",
            "Blosc (hdf5plugin) with `blosclz`, `lz4`, `lz4hc`, `zlib` or `zstd`, without shuffle, byte or bit "
            "shuffle. The fast path encodes its chunks with numcodecs' Blosc in threads, byte for byte the "
            "plugin's (a chunk Blosc cannot shrink is stored raw with the filter marked skipped, as the plugin "
            "does)",
            "lz4-5-shuffle 2.45, 600 / 1500; zstd-5-bitshuffle 3.99, 200 / 1030",
        ),
        **PLUGIN,
    ),
    Codec(
        "blosc2",
        "blosc2-<blosclz|lz4|lz4hc|zlib|zstd>-<level 0-9>[-shuffle|-bitshuffle]",
        rf"blosc2-{_NAME}",
        "Blosc2 (hdf5plugin): Blosc's successor, the same codecs and shuffles",
        levels=range(0, 10),
        shuffle=blosc_shuffle,
        write_bytes_per_s=55 * MB,
        read_bytes_per_s=290 * MB,
        hdf5=HDF5Filter(_keywords("blosc2"), plugin=True),
        readme=(
            "`blosc2-<codec>-<0-9>[-shuffle\\|-bitshuffle]`",
            "Blosc2 (hdf5plugin), the same codecs",
            "zstd-5-shuffle 3.89; 56 / 290",
        ),
        **PLUGIN,
    ),
)
