"""Zstandard (hdf5plugin); Zarr stores it too."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, ZarrCodec, plugin_keywords


def _zarr_compressor(params: dict, itemsize: int):
    from zarr.codecs import ZstdCodec

    return ZstdCodec(level=params["level"], checksum=False)


def _numcodec(params: dict):
    import numcodecs

    return numcodecs.Zstd(level=params["level"])


def _zarr_donor(codec):
    # level 0 is libzstd's default, 3
    return f"zstd-{codec.level or 3}" if type(codec).__name__ == "ZstdCodec" else None


CODECS = (
    Codec(
        "zstd",
        "zstd-<level 1-22>",
        r"zstd-(?P<level>\d+)",
        "Zstandard (hdf5plugin)",
        levels=range(1, 23),
        write_bytes_per_s=240 * MB,
        read_bytes_per_s=730 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.Zstd(p["level"])), plugin=True),
        zarr=ZarrCodec(_zarr_compressor, _numcodec, _zarr_donor),
        readme=("`zstd-<1-22>`", "Zstandard (hdf5plugin)", "3.26 at 3; 240 / 730"),
        **PLUGIN,
    ),
)
