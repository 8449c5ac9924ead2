"""ZFP (hdf5plugin), lossy at a fixed rate of bits per value, for float data."""

from h5sweep.storage.codecs import MB, PLUGIN, Codec, HDF5Filter, plugin_keywords

CODECS = (
    Codec(
        "zfp",
        "zfp-rate-<bits per value>",
        r"zfp-rate-(?P<rate>\d+)",
        "ZFP (hdf5plugin), lossy at a fixed rate of bits per value (float data); no error bound "
        "is guaranteed: values are checked within the data's largest magnitude times 2^(4 - rate)",
        lossless=False,
        tolerance=lambda p, magnitude: magnitude * 2.0 ** (4 - p["rate"]),
        needs_magnitude=True,
        check=lambda p: None if 1 <= p["rate"] <= 64 else "the rate must be 1 to 64 bits per value",
        dtypes="float",
        write_bytes_per_s=200 * MB,
        read_bytes_per_s=300 * MB,
        hdf5=HDF5Filter(plugin_keywords(lambda h, p: h.Zfp(rate=p["rate"])), plugin=True),
        readme=(
            "`zfp-rate-<bits>`",
            "ZFP (hdf5plugin), lossy at a fixed rate of bits per value (e.g. `zfp-rate-8`); float data. Fixed-rate "
            "mode guarantees no error bound: values are checked within the data's largest magnitude × 2^(4 − bits)",
            "ratio 32 / bits for float32",
        ),
        **PLUGIN,
    ),
)
