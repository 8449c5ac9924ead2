"""szip (libaec), lossless, in HDF5 builds that have it."""

from h5sweep.storage.codecs import MB, Codec, HDF5Filter


def _check(params: dict) -> str | None:
    block = params["pixels"]
    if block % 2 or not 2 <= block <= 32:
        return f"szip pixels per block must be even, 2 to 32, not {block}"
    return None


CODECS = (
    Codec(
        "szip",
        "szip-<nn|ec>-<pixels per block>",
        r"szip-(?P<method>nn|ec)-(?P<pixels>\d+)",
        "szip (libaec): nearest-neighbour (nn) or entropy (ec) coding, lossless",
        check=_check,
        write_bytes_per_s=300 * MB,
        read_bytes_per_s=290 * MB,
        hdf5=HDF5Filter(lambda p: {"compression": "szip", "compression_opts": (p["method"], p["pixels"])}),
        readme=(
            "`szip-nn-<n>`, `szip-ec-<n>`",
            "szip (libaec), nearest-neighbour or entropy coding, `n` pixels per block (even, 2–32)",
            "3.75 (nn-16); 310 / 290",
        ),
    ),
)
