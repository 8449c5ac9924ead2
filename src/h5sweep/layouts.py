"""Storage layouts of the dataset: contiguous, or chunked with a chunk shape.

A layout knows its own arithmetic (how many chunks, how much padding, which chunks a
selection touches) so that measurements can be checked against a model of the bytes
HDF5 has to move.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from h5sweep.errors import ConfigError

_CHUNKED_ID = re.compile(r"^chunked-(\d+(?:x\d+)*)$")
# Contiguous files are written in slabs of whole x-rows of at most this many bytes.
CONTIGUOUS_WRITE_BLOCK_BYTES = 64 * 2**20

Shape = tuple[int, ...]
WRITE_STRATEGIES = ("spectrum", "block", "chunk")
Region = tuple[slice, ...]


@dataclass(frozen=True, order=True)
class Layout:
    """How the dataset is laid out in the file. ``chunk_shape`` is None for contiguous."""

    chunk_shape: Shape | None = None
    # A name the user gave this chunk shape (e.g. "image-aligned"); not part of its identity.
    name: str = field(default="", compare=False)

    @property
    def kind(self) -> str:
        return "contiguous" if self.chunk_shape is None else "chunked"

    @property
    def chunk_label(self) -> str:
        """``""`` for contiguous, ``"4x4x2048"`` for a chunked layout."""
        return "" if self.chunk_shape is None else "x".join(map(str, self.chunk_shape))

    @property
    def id(self) -> str:
        """Stable name used in paths and wildcards: ``contiguous`` or ``chunked-4x4x2048``."""
        return "contiguous" if self.chunk_shape is None else f"chunked-{self.chunk_label}"

    @classmethod
    def from_id(cls, layout_id: str) -> Layout:
        if layout_id == "contiguous":
            return cls(None)
        match = _CHUNKED_ID.match(layout_id)
        if not match:
            raise ValueError(f"not a layout id: {layout_id!r}")
        return cls(tuple(int(v) for v in match.group(1).split("x")))

    def chunk_grid(self, shape: Shape) -> Shape:
        """Number of chunks along each axis (edge chunks count as whole chunks)."""
        if self.chunk_shape is None:
            return tuple(1 for _ in shape)
        return tuple(math.ceil(s / c) for s, c in zip(shape, self.chunk_shape, strict=True))

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
          order; contiguous: slabs of whole x-rows of at most ``CONTIGUOUS_WRITE_BLOCK_BYTES``;
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
        if self.chunk_shape is None:
            row_bytes = math.prod(shape[1:]) * itemsize
            rows = max(1, CONTIGUOUS_WRITE_BLOCK_BYTES // max(row_bytes, 1))
            rest = tuple(slice(0, s) for s in shape[1:])
            for x0 in range(0, shape[0], rows):
                yield (slice(x0, min(x0 + rows, shape[0])), *rest)
            return
        yield from _grid_regions(shape, self.chunk_shape)

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


def _grid_regions(shape: Shape, block: Shape) -> Iterator[Region]:
    def rec(axis: int, prefix: Region) -> Iterator[Region]:
        if axis == len(shape):
            yield prefix
            return
        for start in range(0, shape[axis], block[axis]):
            yield from rec(axis + 1, (*prefix, slice(start, min(start + block[axis], shape[axis]))))

    yield from rec(0, ())


def layouts_from_config(layouts_cfg: dict, shape: Shape) -> list[Layout]:
    """Expand ``layouts:`` (contiguous flag, the m x m x n grid, extra shapes) in a stable order."""
    found: list[Layout] = []
    if layouts_cfg.get("contiguous", True):
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
