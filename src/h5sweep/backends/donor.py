"""A donor's own layout, in the terms of a sweep: its chunk shape and the compression setting
of the codec table (:mod:`h5sweep.storage.codecs`) that stores what its filters or codecs do.

The sweep measures that layout beside the configured ones, named ``donor``, so that the
recommendation says what changing the donor's layout would gain. Only the donor's metadata is
read (no values). h5py and zarr are imported inside the functions: the sweep asks at parse time.
"""

from __future__ import annotations

from dataclasses import dataclass

from h5sweep.backends import hdf5_filters
from h5sweep.storage.codecs import CODECS

DONOR_LAYOUT_NAME = "donor"


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
    described = ", ".join(f"filter {f[0]} ({f[3].decode(errors='replace') or '?'}) {list(f[2])}" for f in filters)
    # each codec's module reads the pipeline as its own name, where it is (h5sweep.storage.codecs)
    name = hdf5_filters.donor_name([(f[0], tuple(f[2])) for f in filters])
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
    else:  # the codec whose module reads this compressor as its own (h5sweep.storage.codecs)
        found = (c.zarr.donor(compressors[0]) for c in CODECS.values() if c.zarr and c.zarr.donor)
        name = next((n for n in found if n), None)
    chunks = tuple(array.chunks)
    return DonorLayout(None if chunks == tuple(array.shape) and not name else chunks, name, described)
