"""No codec: chunks are stored as they are."""

from h5sweep.storage.codecs import Codec, HDF5Filter, ZarrCodec

CODECS = (
    Codec(
        "none",
        "none",
        r"none",
        "no filter: chunks are stored as they are",
        hdf5=HDF5Filter(lambda p: {}, donor=lambda filters: "none" if not filters else None),
        zarr=ZarrCodec(lambda p, itemsize: None, lambda p: None),
        readme=("`none`", "chunks stored as they are (padding of edge chunks included)", "0.78; 1400 / 450"),
    ),
)
