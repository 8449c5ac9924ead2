"""LZ4 (hdf5plugin): very fast, modest ratio."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, plugin_keywords

CODECS = (
    Codec(
        "lz4",
        "lz4",
        r"lz4",
        "LZ4 (hdf5plugin): very fast, modest ratio",
        write_bytes_per_s=480 * MB,
        read_bytes_per_s=1340 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.LZ4()), plugin=True),
        readme=("`lz4`", "LZ4 (hdf5plugin)", "1.91; 480 / 1340"),
        **PLUGIN,
    ),
)
