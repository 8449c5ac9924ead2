"""Storage layouts of the dataset: contiguous, or chunked with a chunk shape.

A layout knows its own arithmetic (how many chunks, how much padding, which chunks a
selection touches) so that measurements can be checked against a model of the bytes
HDF5 has to move.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from h5sweep.storage.errors import ConfigError
from h5sweep.storage.sizes import binary_size, parse_size

_ID = re.compile(
    r"^(?P<kind>contiguous|chunked)(?:-(?P<order>zxy))?(?:-(?P<chunk>\d+(?:x\d+)*))?"
    r"(?:-shards-(?P<shard>\d+(?:x\d+)*))?(?:-paged-(?P<page>\d+))?$"
)
# Contiguous files are written in slabs along their first stored axis of at most this many bytes.
CONTIGUOUS_WRITE_BLOCK_BYTES = 64 * 2**20
# Storage orders of the axes: which logical axis (x=0, y=1, z=2) each stored axis holds.
# "zxy" is the transposed order the OpenMSI study proposed: ion images stored one after another.
ORDERS = {"xyz": (0, 1, 2), "zxy": (2, 0, 1)}
# The layout every read is compared with, selection by selection, on the same filesystem.
BASELINE_LAYOUT_ID = "contiguous"

Shape = tuple[int, ...]
WRITE_STRATEGIES = ("spectrum", "block", "chunk")
Region = tuple[slice, ...]


@dataclass(frozen=True, order=True)
class Layout:
    """How the dataset is laid out in the file. ``chunk_shape`` is None for contiguous.

    Shapes, selections and regions are always given in the logical order (x, y, z); with the
    ``zxy`` order the file stores the array transposed to (z, x, y), and
    :meth:`to_storage` maps logical tuples to the stored axes.
    """

    chunk_shape: Shape | None = None
    # A name the user gave this chunk shape (e.g. "image-aligned"); not part of its identity.
    name: str = field(default="", compare=False)
    order: str = "xyz"
    # Zarr sharding: chunks stored together, a shard per file (a multiple of the chunk shape)
    shard_shape: Shape | None = None
    # HDF5's paged aggregation: the file's space managed in pages of this many bytes (its
    # metadata gathered in pages of their own, so that a reader fetches it in few requests)
    page_size: int | None = None

    @property
    def axes(self) -> tuple[int, ...]:
        """Which logical axis each stored axis holds (3-D; the natural order of any rank is
        the identity, see :meth:`axes_of`)."""
        return ORDERS[self.order]

    def axes_of(self, rank: int) -> tuple[int, ...]:
        """:attr:`axes` for a dataset of ``rank`` axes (only 3-D datasets are transposed)."""
        return tuple(range(rank)) if self.order == "xyz" else self.axes

    def to_storage(self, values: tuple) -> tuple:
        """A logical (x, y, z) tuple of sizes, starts or slices, in the stored axes' order."""
        if self.order == "xyz":
            return tuple(values)
        return tuple(values[a] for a in self.axes)

    def to_logical(self, values: tuple) -> tuple:
        if self.order == "xyz":
            return tuple(values)
        out = [None] * len(values)
        for stored, logical in enumerate(self.axes):
            out[logical] = values[stored]
        return tuple(out)

    @property
    def storage_chunk_shape(self) -> Shape | None:
        return None if self.chunk_shape is None else self.to_storage(self.chunk_shape)

    @property
    def storage_shard_shape(self) -> Shape | None:
        return None if self.shard_shape is None else self.to_storage(self.shard_shape)

    def storage_layout(self) -> Layout:
        """This layout as seen by the stored array (whose axes are already in storage order)."""
        return Layout(
            self.storage_chunk_shape, self.name, shard_shape=self.storage_shard_shape, page_size=self.page_size
        )

    @property
    def shard_label(self) -> str:
        """``""`` without shards, else ``"16x16x2048"``."""
        return "" if self.shard_shape is None else "x".join(map(str, self.shard_shape))

    @property
    def page_label(self) -> str:
        """``""`` without paged aggregation, else the page size (``"8 MiB"``)."""
        return "" if self.page_size is None else binary_size(self.page_size)

    @property
    def kind(self) -> str:
        return "contiguous" if self.chunk_shape is None else "chunked"

    @property
    def chunk_label(self) -> str:
        """``""`` for contiguous, ``"4x4x2048"`` for a chunked layout."""
        return "" if self.chunk_shape is None else "x".join(map(str, self.chunk_shape))

    @property
    def id(self) -> str:
        """Stable name used in paths and wildcards: ``contiguous``, ``chunked-4x4x2048``, and
        for the transposed order ``contiguous-zxy``, ``chunked-zxy-4x4x2048``."""
        order = "" if self.order == "xyz" else f"-{self.order}"
        paged = "" if self.page_size is None else f"-paged-{self.page_size}"
        if self.chunk_shape is None:
            return f"contiguous{order}{paged}"
        shards = f"-shards-{self.shard_label}" if self.shard_shape else ""
        return f"chunked{order}-{self.chunk_label}{shards}{paged}"

    @classmethod
    def from_id(cls, layout_id: str) -> Layout:
        match = _ID.match(layout_id)
        if not match or (match["kind"] == "chunked") != (match["chunk"] is not None):
            raise ValueError(f"not a layout id: {layout_id!r}")
        chunk = tuple(int(v) for v in match["chunk"].split("x")) if match["chunk"] else None
        shard = tuple(int(v) for v in match["shard"].split("x")) if match["shard"] else None
        page = int(match["page"]) if match["page"] else None
        return cls(chunk, order=match["order"] or "xyz", shard_shape=shard, page_size=page)

    def chunk_grid(self, shape: Shape) -> Shape:
        """Number of chunks along each axis (edge chunks count as whole chunks)."""
        if self.chunk_shape is None:
            return tuple(1 for _ in shape)
        return tuple(math.ceil(s / c) for s, c in zip(shape, self.chunk_shape, strict=True))

    def chunk_box(self, start: Shape, size: Shape) -> tuple[slice, ...]:
        """The chunk indices a box selection ``[start, start + size)`` intersects, per axis
        (in this layout's own axes: a storage layout takes storage-order tuples)."""
        return tuple(slice(s // c, (s + n - 1) // c + 1) for s, n, c in zip(start, size, self.chunk_shape, strict=True))

    def chunk_indices(self, start: Shape, size: Shape) -> list[tuple[int, ...]]:
        """The grid index of every chunk a box selection intersects, in row-major order."""
        return list(itertools.product(*(range(s.start, s.stop) for s in self.chunk_box(start, size))))

    def shards_touched(self, start: Shape, size: Shape) -> int:
        """Shards (files) a box selection intersects (0 without shards)."""
        if self.shard_shape is None:
            return 0
        return Layout(self.shard_shape).chunks_touched(start, size)

    def n_chunks(self, shape: Shape) -> int:
        return math.prod(self.chunk_grid(shape)) if self.chunk_shape is not None else 0

    def chunk_bytes(self, itemsize: int) -> int:
        return 0 if self.chunk_shape is None else math.prod(self.chunk_shape) * itemsize

    def allocated_elements(self, shape: Shape) -> int:
        """Elements HDF5 allocates: whole chunks, so edge chunks are padded."""
        if self.chunk_shape is None:
            return math.prod(shape)
        return math.prod(g * c for g, c in zip(self.chunk_grid(shape), self.chunk_shape, strict=True))

    def padding_bytes(self, shape: Shape, itemsize: int) -> int:
        """Bytes allocated beyond the dataset because chunks do not divide its shape."""
        return (self.allocated_elements(shape) - math.prod(shape)) * itemsize

    def chunks_touched(self, start: Shape, size: Shape) -> int:
        """Chunks a box selection ``[start, start + size)`` intersects (0 for contiguous)."""
        if self.chunk_shape is None:
            return 0
        count = 1
        for s0, n, c in zip(start, size, self.chunk_shape, strict=True):
            count *= (s0 + n - 1) // c - s0 // c + 1
        return count

    def write_blocks(self, shape: Shape, itemsize: int, strategy: str = "chunk") -> Iterator[Region]:
        """The regions written one call each by a write strategy (the OpenMSI study's):

        - ``chunk``: one chunk per call (edge chunks clipped to the dataset), in storage
          order (sharded: one shard per call); contiguous: slabs of whole x-rows of at most
          ``CONTIGUOUS_WRITE_BLOCK_BYTES``;
        - ``block``: the m x m spectra under one chunk column per call (contiguous: as chunk);
        - ``spectrum``: one spectrum ``[x, y, :]`` per call.
        """
        if strategy not in WRITE_STRATEGIES:
            raise ValueError(f"unknown write strategy {strategy!r}")
        if strategy == "spectrum":
            yield from _grid_regions(shape, (1, 1, *shape[2:]))
            return
        if strategy == "block" and self.chunk_shape is not None:
            yield from _grid_regions(shape, (*self.chunk_shape[:2], *shape[2:]))
            return
        if self.chunk_shape is None:  # slabs along the first stored axis
            axis = self.axes_of(len(shape))[0]
            row_bytes = math.prod(shape) // shape[axis] * itemsize
            rows = max(1, CONTIGUOUS_WRITE_BLOCK_BYTES // max(row_bytes, 1))
            for a0 in range(0, shape[axis], rows):
                region = [slice(0, n) for n in shape]
                region[axis] = slice(a0, min(a0 + rows, shape[axis]))
                yield tuple(region)
            return
        # chunks in the order they are stored, as logical regions; sharded: a shard per call
        # (Zarr rewrites a whole shard for a write of one of its chunks)
        block = self.storage_shard_shape or self.storage_chunk_shape
        for stored in _grid_regions(self.to_storage(shape), block):
            yield self.to_logical(stored)

    def check_fits(self, shape: Shape, key: str) -> None:
        if self.chunk_shape is None:
            return
        if len(self.chunk_shape) != len(shape):
            raise ConfigError(key, list(self.chunk_shape), f"needs {len(shape)} dimensions like dataset.shape")
        for axis, (c, s) in enumerate(zip(self.chunk_shape, shape, strict=True)):
            if c < 1:
                raise ConfigError(key, list(self.chunk_shape), "chunk dimensions must be positive")
            if c > s:
                raise ConfigError(
                    key,
                    list(self.chunk_shape),
                    f"chunk is larger than the dataset along axis {axis} ({c} > dataset.shape[{axis}]={s})",
                )


def storage_order(data: np.ndarray, layout: Layout) -> np.ndarray:
    """``data`` (x, y, z) as a C-contiguous array in the layout's storage order (no copy
    where it already is one)."""
    stored = data if layout.order == "xyz" else data.transpose(layout.axes)
    return np.ascontiguousarray(stored)


def _grid_regions(shape: Shape, block: Shape) -> Iterator[Region]:
    def rec(axis: int, prefix: Region) -> Iterator[Region]:
        if axis == len(shape):
            yield prefix
            return
        for start in range(0, shape[axis], block[axis]):
            yield from rec(axis + 1, (*prefix, slice(start, min(start + block[axis], shape[axis]))))

    yield from rec(0, ())


# h5py's auto-chunking (``chunks=True``): a chunk of about 16 KiB times 2 to the power of
# log10 of the dataset's size in MiB, kept between 8 KiB and 1 MiB.
AUTO_CHUNK_BASE_BYTES = 16 * 1024
AUTO_CHUNK_MIN_BYTES = 8 * 1024
AUTO_CHUNK_MAX_BYTES = 1024 * 1024
AUTO_LAYOUT_NAME = "h5py-auto"


def auto_chunk_shape(shape: Shape, itemsize: int) -> Shape:
    """The chunk shape h5py picks for a fixed-size dataset created with ``chunks=True``: start
    from the whole dataset and halve its axes in turn (rounding up), first to last, until the
    chunk is below the target size or within half of it, and below 1 MiB."""
    chunk = [float(n) for n in shape]
    target = AUTO_CHUNK_BASE_BYTES * 2 ** math.log10(math.prod(shape) * itemsize / 2**20)
    target = min(max(target, AUTO_CHUNK_MIN_BYTES), AUTO_CHUNK_MAX_BYTES)
    axis = 0
    while True:
        size = math.prod(chunk) * itemsize
        near = size < target or abs(size - target) / target < 0.5
        if (near and size < AUTO_CHUNK_MAX_BYTES) or math.prod(chunk) == 1:
            return tuple(int(n) for n in chunk)
        chunk[axis % len(chunk)] = math.ceil(chunk[axis % len(chunk)] / 2)
        axis += 1


def layouts_from_config(layouts_cfg: dict, shape: Shape, itemsize: int = 2) -> list[Layout]:
    """Expand ``layouts:`` (contiguous flag, the m x m x n grid, extra shapes, h5py's own
    choice with ``auto``), in every storage order of ``orders``, in a stable order."""
    orders = list(dict.fromkeys(layouts_cfg["orders"]))
    for i, order in enumerate(orders):
        if order not in ORDERS:
            raise ConfigError(f"layouts.orders[{i}]", order, f"unknown storage order (known: {', '.join(ORDERS)})")
        if order != "xyz" and len(shape) != 3:
            raise ConfigError(f"layouts.orders[{i}]", order, "transposes [x, y, z] datasets only")
    if (layouts_cfg.get("chunks") or {}).get("xy") and len(shape) != 3:
        raise ConfigError(
            "layouts.chunks", layouts_cfg["chunks"], "is the m x m x n grid of 3-D datasets: use layouts.shapes"
        )
    base = _base_layouts(layouts_cfg, shape)
    if layouts_cfg["auto"]:
        auto = Layout(auto_chunk_shape(shape, itemsize), AUTO_LAYOUT_NAME)
        base = [lay for lay in base if lay != auto] + [auto]
    base += [lay for lay in _paged_layouts(layouts_cfg, base) if lay not in base]
    base += [lay for lay in _sharded_layouts(layouts_cfg, shape) if lay not in base]
    return [
        Layout(lay.chunk_shape, lay.name, order, lay.shard_shape, lay.page_size) for order in orders for lay in base
    ]


# HDF5's smallest file space page (H5Pset_file_space_page_size)
MIN_PAGE_BYTES = 512


def _paged_layouts(layouts_cfg: dict, base: list[Layout]) -> list[Layout]:
    """``layouts.pages``: every layout of the grid also written with paged aggregation at each
    page size (HDF5 only: stores that hold no paged file skip them)."""
    found = []
    for i, value in enumerate(layouts_cfg["pages"]):
        size = parse_size(f"layouts.pages[{i}]", value)
        if size < MIN_PAGE_BYTES:
            raise ConfigError(f"layouts.pages[{i}]", value, f"is below HDF5's smallest page ({MIN_PAGE_BYTES} bytes)")
        found += [Layout(lay.chunk_shape, lay.name, lay.order, page_size=size) for lay in base]
    return found


def _sharded_layouts(layouts_cfg: dict, shape: Shape) -> list[Layout]:
    """``layouts.shards``: a chunk shape stored in shards of a shape (Zarr only), each a
    multiple of its chunk shape."""
    found = []
    for i, entry in enumerate(layouts_cfg.get("shards") or []):
        key = f"layouts.shards[{i}]"
        chunk, shard = tuple(int(v) for v in entry["chunk"]), tuple(int(v) for v in entry["shard"])
        layout = Layout(chunk, str(entry.get("name", "")), shard_shape=shard)
        layout.check_fits(shape, f"{key}.chunk")
        if len(shard) != len(chunk):
            raise ConfigError(f"{key}.shard", list(shard), f"needs {len(chunk)} dimensions like its chunk")
        for axis, (n, c) in enumerate(zip(shard, chunk, strict=True)):
            if n < c or n % c:
                raise ConfigError(
                    f"{key}.shard", list(shard), f"must be a multiple of the chunk {list(chunk)} (axis {axis})"
                )
        found.append(layout)
    return found


def _base_layouts(layouts_cfg: dict, shape: Shape) -> list[Layout]:
    found: list[Layout] = []
    if layouts_cfg["contiguous"]:
        found.append(Layout(None))
    grid = layouts_cfg.get("chunks") or {}
    for m in grid.get("xy", []):
        for n in grid.get("z", []):
            layout = Layout((int(m), int(m), int(n)))
            layout.check_fits(shape, f"layouts.chunks (xy={m}, z={n})")
            found.append(layout)
    for i, entry in enumerate(layouts_cfg.get("shapes") or []):
        if isinstance(entry, dict):  # {name: image-aligned, chunk: [80, 50, 100]}
            layout = Layout(tuple(int(v) for v in entry["chunk"]), str(entry["name"]))
        else:
            layout = Layout(tuple(int(v) for v in entry))
        layout.check_fits(shape, f"layouts.shapes[{i}]")
        if layout in found and layout.name:
            found[found.index(layout)] = layout  # the grid's shape, now with its name
            continue
        found.append(layout)
    unique = list(dict.fromkeys(found))
    if not unique:
        raise ConfigError("layouts", layouts_cfg, "selects no layout at all")
    return unique
