"""SZ3 (hdf5plugin), lossy within an absolute error bound, for float data."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, plugin_keywords

CODECS = (
    Codec(
        "sz3",
        "sz3-abs-<error bound>",
        r"sz3-abs-(?P<bound>\d+(?:\.\d+)?(?:e-?\d+)?)",
        "SZ3 (hdf5plugin), lossy: every value within the absolute error bound (float data)",
        lossless=False,
        tolerance=lambda p, magnitude: float(p["bound"]) * (1 + 1e-6),
        check=lambda p: None if float(p["bound"]) > 0 else "the error bound must be positive",
        dtypes="float",
        write_bytes_per_s=80 * MB,
        read_bytes_per_s=150 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.SZ3(absolute=float(p["bound"]))), plugin=True),
        readme=(
            "`sz3-abs-<bound>`",
            "SZ3 (hdf5plugin), lossy: every value within the absolute error `bound` (e.g. `sz3-abs-0.5`); float data",
            "checked within the bound",
        ),
        **PLUGIN,
    ),
)
