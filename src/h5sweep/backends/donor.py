"""A donor's own layout, in the terms of a sweep: its chunk shape and the compression setting
of the codec table (:mod:`h5sweep.storage.codecs`) that stores what its filters or codecs do.

The sweep measures that layout beside the configured ones, named ``donor``, so that the
recommendation says what changing the donor's layout would gain. Only the donor's metadata is
read (no values). h5py and zarr are imported inside the functions: the sweep asks at parse time.
"""

from __future__ import annotations

from dataclasses import dataclass

DONOR_LAYOUT_NAME = "donor"
# HDF5's filter ids of the codecs the table names from a donor's own pipeline
_SHUFFLE, _DEFLATE = 2, 1


@dataclass(frozen=True)
class DonorLayout:
    chunks: tuple[int, ...] | None  # None: contiguous
    compression: str | None  # a name of the codec table; None where it has no such setting
    described: str  # the donor's filters or codecs as found, for a message


def describe(array) -> DonorLayout:
    """The layout of an opened donor (:func:`h5sweep.storage.datasources.open_donor`)."""
    import h5py

    if isinstance(array, h5py.Dataset):
        return _hdf5_layout(array)
    return _zarr_layout(array)


def _hdf5_layout(dset) -> DonorLayout:
    plist = dset.id.get_create_plist()
    filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
    ids = [f[0] for f in filters]
    described = ", ".join(f"filter {f[0]} ({f[3].decode(errors='replace') or '?'}) {list(f[2])}" for f in filters)
    name = None
    if not ids:
        name = "none"
    elif ids == [_DEFLATE]:
        name = f"gzip-{filters[0][2][0]}"
    elif ids == [_SHUFFLE, _DEFLATE]:
        name = f"shuffle+gzip-{filters[1][2][0]}"
    return DonorLayout(tuple(dset.chunks) if dset.chunks else None, name, described or "no filters")


def _zarr_layout(array) -> DonorLayout:
    compressors = tuple(getattr(array, "compressors", ()) or ())
    filters = tuple(getattr(array, "filters", ()) or ())
    described = ", ".join(repr(c) for c in filters + compressors) or "no codecs"
    name = None
    if filters or len(compressors) > 1:
        name = None
    elif not compressors:
        name = "none"
    else:
        codec = compressors[0]
        kind = type(codec).__name__
        if kind == "GzipCodec":
            name = f"gzip-{codec.level}"
        elif kind == "ZstdCodec":
            name = f"zstd-{codec.level or 3}"  # level 0 is libzstd's default, 3
        elif kind == "BloscCodec":
            shuffle = {"noshuffle": "", "shuffle": "-shuffle", "bitshuffle": "-bitshuffle"}[str(codec.shuffle.value)]
            name = f"blosc-{codec.cname.value}-{codec.clevel}{shuffle}"
    chunks = tuple(array.chunks)
    return DonorLayout(None if chunks == tuple(array.shape) and not name else chunks, name, described)
