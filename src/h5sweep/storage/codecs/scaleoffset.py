"""HDF5's scale-offset filter for integers, lossless with the bits found per chunk."""

from h5sweep.storage.codecs import MB, Codec, HDF5Filter

CODECS = (
    Codec(
        "scaleoffset",
        "scaleoffset-0",
        r"scaleoffset-(?P<bits>0)",
        "HDF5's scale-offset for integers with the minimum bits found per chunk (0): lossless",
        dtypes="integer",
        write_bytes_per_s=380 * MB,
        read_bytes_per_s=370 * MB,
        hdf5=HDF5Filter(lambda p: {"scaleoffset": 0}),
        readme=(
            "`scaleoffset-0`",
            "HDF5's scale-offset for integers, minimum bits found per chunk (integer data only)",
            "1.49; 380 / 370",
        ),
    ),
)
