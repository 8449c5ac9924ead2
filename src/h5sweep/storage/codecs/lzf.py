"""LZF, h5py's own filter, without or with HDF5's byte shuffle."""

from h5sweep.storage.codecs import MB, Codec, HDF5Filter

_README = (
    "`lzf`, `shuffle+lzf`",
    "h5py's LZF filter (readable where h5py's filter is), without or with shuffle",
    "1.94, 2.73; 210 / 350",
)

CODECS = (
    Codec(
        "lzf",
        "lzf",
        r"lzf",
        "LZF (h5py's own filter): fast, modest ratio; readable only where h5py's filter is",
        write_bytes_per_s=210 * MB,
        read_bytes_per_s=350 * MB,
        hdf5=HDF5Filter(lambda p: {"compression": "lzf"}),
        readme=_README,
    ),
    Codec(
        "shuffle+lzf",
        "shuffle+lzf",
        r"shuffle\+lzf",
        "byte shuffle, then LZF",
        codec="lzf",
        shuffle=lambda p: "byte",
        write_bytes_per_s=200 * MB,
        read_bytes_per_s=320 * MB,
        hdf5=HDF5Filter(lambda p: {"compression": "lzf", "shuffle": True}),
        readme=_README,
    ),
)
