"""HDF5's n-bit packing of the bits an integer type's precision uses."""

from h5sweep.storage.codecs import MB, Codec, HDF5Filter


def _keywords(params: dict) -> dict:
    from h5py import h5p, h5z  # only in a job: a creation property list with the n-bit filter

    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_filter(h5z.FILTER_NBIT)
    return {"dcpl": dcpl}


CODECS = (
    Codec(
        "nbit",
        "nbit",
        r"nbit",
        "HDF5's n-bit packing: drops the bits an integer type's precision does not use",
        dtypes="integer",
        write_bytes_per_s=1400 * MB,
        read_bytes_per_s=1900 * MB,
        hdf5=HDF5Filter(_keywords),
        readme=(
            "`nbit`",
            "HDF5's n-bit packing of the bits a type's precision uses (integer data only; gains nothing on "
            "full-precision types)",
            "0.78; 1460 / 1900",
        ),
    ),
)
