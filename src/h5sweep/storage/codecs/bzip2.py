"""bzip2 (hdf5plugin): high ratio, slow both ways."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, plugin_keywords

CODECS = (
    Codec(
        "bzip2",
        "bzip2-<block size 1-9>",
        r"bzip2-(?P<level>\d+)",
        "bzip2 (hdf5plugin): high ratio, slow both ways",
        levels=range(1, 10),
        write_bytes_per_s=15 * MB,
        read_bytes_per_s=50 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.BZip2(p["level"])), plugin=True),
        readme=("`bzip2-<1-9>`", "bzip2 with that block size (hdf5plugin)", "4.31 at 9; 15 / 52: slow both ways"),
        **PLUGIN,
    ),
)
