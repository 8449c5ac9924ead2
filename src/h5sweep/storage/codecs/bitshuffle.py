"""Bitshuffle (hdf5plugin): a bit shuffle, then LZ4 or Zstandard."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, plugin_keywords

CODECS = (
    Codec(
        "bitshuffle",
        "bitshuffle-<lz4|zstd>",
        r"bitshuffle-(?P<cname>lz4|zstd)",
        "Bitshuffle (hdf5plugin): bit shuffle, then LZ4 or Zstandard",
        shuffle=lambda p: "bit",
        write_bytes_per_s=250 * MB,
        read_bytes_per_s=420 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.Bitshuffle(cname=p["cname"])), plugin=True),
        readme=(
            "`bitshuffle-lz4`, `bitshuffle-zstd`",
            "bit shuffle, then LZ4 or Zstandard (hdf5plugin)",
            "3.29, 800 / 1320; 3.70, 250 / 420",
        ),
        **PLUGIN,
    ),
)
