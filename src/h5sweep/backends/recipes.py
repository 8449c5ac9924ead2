"""How to write and read a chosen store yourself: the code the decision sheet prints for it.

Each backend's registry entry (``BackendSpec.recipe``) turns a store (its layout, codec, the
array's shape and dtype, and the read option it was measured with) into a :class:`Recipe`:
the library calls that make the same store from an array ``data`` at ``path``, and open it
the way the sweep read it. The codec's arguments come from its own module (HDF5's
``create_dataset`` keywords, a filter of hdf5plugin by its number; Zarr's codec as JSON);
``tests/test_recipes.py`` runs the code and checks the store it writes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from h5sweep.backends import hdf5_filters
from h5sweep.storage.codecs import Compression
from h5sweep.storage.layouts import Layout
from h5sweep.storage.sizes import binary_size

# HDF5's own chunk cache for a file opened without one: 8 MiB from HDF5 2.0 on, 1 MiB before
HDF5_DEFAULT_CACHE_BYTES = {"2.0": 8 * 2**20, "1.x": 2**20}
# HDF5's filters h5repack names (its -f option); any other is written by the Python above
_REPACK_FILTERS = {"gzip": "GZIP={level}", "shuffle+gzip": "SHUF -f data:GZIP={level}", "szip": None}


@dataclass(frozen=True)
class Store:
    """What a recipe needs of a ranked store."""

    layout: Layout
    compression: Compression
    shape: tuple[int, ...]
    dtype: str
    read_setting: str = ""  # the read option's open call as the ranking names it (``read_option_setting``)


@dataclass(frozen=True)
class Recipe:
    write: str  # Python that writes the array ``data`` to ``path`` as the store
    read: str  # Python that opens it as the sweep read it
    write_notes: tuple[str, ...] = ()  # what else to know to write it (a tool that does it, a file-space setting)
    read_notes: tuple[str, ...] = ()  # and to read it (a library default the measured setting replaces)
    replaces: str = ""  # in a few words, the library default the measured read setting replaces


# the modules a read option's open call names
_MODULES = ("h5py", "hdf5plugin", "s3fs", "zarr", "obstore", "tensorstore")


def _opened(call: str, name: str, plugin: bool = False) -> str:
    """An open call (statements joined by ``; ``, the last one opening) as lines that import
    what it names and bind the opened object to ``name``."""
    *before, last = call.split("; ")
    named = [m for m in _MODULES if re.search(rf"\b{m}\.", call)] + (["hdf5plugin"] if plugin else [])
    return "\n".join([*(f"import {m}" for m in dict.fromkeys(named)), *before, f"{name} = {last}"])


def _tuple(values) -> str:
    return repr(tuple(int(v) for v in values))


def _stored(store: Store) -> str:
    """The array as the layout stores it: its axes reordered where the layout's order says so."""
    axes = tuple(store.layout.axes_of(len(store.shape)))
    return "data" if axes == tuple(range(len(store.shape))) else f"data.transpose({_tuple(axes)})"


def _order_note(store: Store) -> tuple[str, ...]:
    if store.layout.order == "xyz":
        return ()
    return (f"the axes are stored in the order {store.layout.order} (the array transposed before it is written)",)


def hdf5(store: Store, keywords: dict, plugin: bool) -> Recipe:
    """h5py: one dataset with the chunks and the codec's ``create_dataset`` ``keywords``
    (``plugin``: its filter comes from hdf5plugin), in a file with paged aggregation where the
    layout has a page size; read with the measured chunk cache."""
    layout = store.layout
    paged = "" if layout.page_size is None else f", fs_strategy='page', fs_page_size={layout.page_size}"
    args = [f"data={_stored(store)}"]
    if layout.chunk_shape is not None:
        args.append(f"chunks={_tuple(layout.storage_chunk_shape)}")
        args += [f"{key}={value!r}" for key, value in keywords.items()]
    imports = ["import h5py"] + (["import hdf5plugin  # registers the codec's filter"] if plugin else [])
    write = "\n".join(
        [*imports, f"with h5py.File(path, 'w'{paged}) as f:", f"    f.create_dataset('data', {', '.join(args)})"]
    )
    read = _opened(store.read_setting or "h5py.File(path, 'r')", "f", plugin) + "\ndata = f['data']"
    notes, read_notes, replaces = list(_order_note(store)), [], ""
    cache = re.search(r"rdcc_nbytes=(\d+)", store.read_setting)
    if cache and layout.chunk_shape is not None:
        replaces = (
            f"read with a {binary_size(int(cache[1]))} chunk cache, not HDF5's own default "
            f"({binary_size(HDF5_DEFAULT_CACHE_BYTES['2.0'])} in HDF5 2.0, not measured)"
        )
        read_notes.append(
            f"open it with the chunk cache measured ({binary_size(int(cache[1]))}): opened without one, HDF5 "
            f"uses its own default ({binary_size(HDF5_DEFAULT_CACHE_BYTES['2.0'])} in HDF5 2.0, "
            f"{binary_size(HDF5_DEFAULT_CACHE_BYTES['1.x'])} before), which this sweep did not measure"
        )
    if layout.page_size is not None:
        notes.append(
            f"paged aggregation: the file's space in pages of {binary_size(layout.page_size)} (fs_strategy 'page'); "
            "HDF5 1.10.1 or later reads it"
        )
    repack = _h5repack(store)
    if repack:
        notes.append(f"an existing HDF5 file rewritten in this layout: `{repack}`")
    return Recipe(write, read, tuple(notes), tuple(read_notes), replaces)


def _h5repack(store: Store) -> str | None:
    """The h5repack command that rewrites a file's dataset ``data`` in this layout (where
    h5repack names the codec and the axes keep their order)."""
    layout = store.layout
    if layout.order != "xyz" or layout.shard_shape is not None:
        return None
    if layout.chunk_shape is None:
        parts = ["-l data:CONTI"]
    else:
        parts = ["-l data:CHUNK=" + "x".join(str(n) for n in layout.chunk_shape)]
        if not store.compression.is_none:
            pattern = _REPACK_FILTERS.get(store.compression.family)
            if pattern is None:
                return None
            parts.append("-f data:" + pattern.format(**store.compression.params))
    if layout.page_size is not None:
        parts.append(f"-S PAGE -G {layout.page_size}")
    return "h5repack " + " ".join(parts) + " in.h5 out.h5"


def zarr(store: Store, compressor: dict | None) -> Recipe:
    """zarr-python 3: a v3 array of the chunks (and shards) with the codec as a JSON codec
    (``compressor``: its ``to_dict()``, None for none), every chunk stored as the sweep wrote
    them; read with the reader measured."""
    layout = store.layout
    args = [
        "path",
        f"shape={_tuple(layout.to_storage(tuple(store.shape)))}",
        f"chunks={_tuple(layout.storage_chunk_shape)}",
    ]
    if layout.shard_shape is not None:
        args.append(f"shards={_tuple(layout.storage_shard_shape)}")
    args += [
        f"dtype={store.dtype!r}",
        f"compressors={'None' if compressor is None else repr([compressor])}",
        "fill_value=0",
        "zarr_format=3",
    ]
    write = "\n".join(
        ["import zarr", f"array = zarr.create_array({', '.join(args)})", f"array[...] = {_stored(store)}"]
    )
    read = _opened(store.read_setting or "zarr.open_array(path, mode='r')", "data")
    return Recipe(write, read, _order_note(store))


def raw(store: Store) -> Recipe:
    """A plain ``.npy`` file (numpy's format: a header, then the array in C order)."""
    write = f"import numpy as np\nnp.save(path, {_stored(store)})"
    read = "import numpy as np\ndata = np.load(path, mmap_mode='r')"
    return Recipe(write, read, _order_note(store))


def hdf5_recipe(store: Store) -> Recipe:
    """The HDF5 backend's recipe (its registry entry's ``recipe``)."""
    chunked = store.layout.chunk_shape is not None
    keywords = hdf5_filters.create_keywords(store.compression) if chunked and not store.compression.is_none else {}
    plugin = chunked and hdf5_filters.filter_family(store.compression) == hdf5_filters.PLUGIN
    return hdf5(store, keywords, plugin)


def zarr_recipe(store: Store) -> Recipe:
    """The Zarr backend's recipe: its codec as zarr-python's JSON form (zarr imported here)."""
    compressor = None
    if not store.compression.is_none:
        import numpy as np

        made = store.compression.codec.zarr.compressor(store.compression.params, np.dtype(store.dtype).itemsize)
        compressor = None if made is None else made.to_dict()
    return zarr(store, compressor)
