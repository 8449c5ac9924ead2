"""Box selections and the seeded sequences of them that every layout is measured with.

A case's sequence depends only on the dataset shape, the seed and the case's name, never on
the layout, compression or filesystem: every layout is measured on the same selections
(a paired comparison).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from h5sweep.storage.layouts import Region, Shape


@dataclass(frozen=True)
class Selection:
    start: Shape
    size: Shape

    @property
    def region(self) -> Region:
        return tuple(slice(s, s + n) for s, n in zip(self.start, self.size, strict=True))

    @property
    def elements(self) -> int:
        return math.prod(self.size)

    def nbytes(self, itemsize: int) -> int:
        return self.elements * itemsize

    @property
    def label(self) -> str:
        """Numpy-style text of the selection, e.g. ``[0:100, 0:100, 512:537]``."""
        return "[" + ", ".join(f"{s}:{s + n}" for s, n in zip(self.start, self.size, strict=True)) + "]"


def case_rng(seed: int, case_name: str) -> np.random.Generator:
    """The generator for one case: seeded by the sweep seed and the case name only."""
    return np.random.default_rng([int(seed), zlib.crc32(case_name.encode("utf-8"))])


def random_boxes(rng: np.random.Generator, shape: Shape, size: Shape, repeats: int) -> list[Selection]:
    """``repeats`` boxes of ``size``, each start uniform over the positions that fit."""
    if any(n > s for n, s in zip(size, shape, strict=True)):
        raise ValueError(f"selection {size} does not fit in dataset {shape}")
    starts = [rng.integers(0, s - n + 1, size=repeats) for s, n in zip(shape, size, strict=True)]
    return [Selection(tuple(int(axis[i]) for axis in starts), tuple(size)) for i in range(repeats)]


POLICIES = ("random", "aligned", "localized", "sweep")


def visit(policy: str, rng: np.random.Generator, shape: Shape, size: Shape, repeats: int, chunk: Shape | None):
    """``repeats`` boxes of ``size`` visited by a policy (the HDF5 lab's visiting policies):

    - ``random``: each start uniform over the positions that fit;
    - ``aligned``: the random starts moved down to the layout's chunk boundaries (the same
      draws for every layout; for contiguous, the random starts);
    - ``localized``: a random walk: each start within one box size of the previous one;
    - ``sweep``: consecutive boxes tiling the dataset in storage order (last axis fastest),
      from the origin, wrapping around: consecutive z-slabs for the slice case.
    """
    if policy == "random":
        return random_boxes(rng, shape, size, repeats)
    if policy == "aligned":
        boxes = random_boxes(rng, shape, size, repeats)
        if chunk is None:
            return boxes
        return [
            Selection(
                tuple((a // c) * c if n < d else 0 for a, c, n, d in zip(b.start, chunk, size, shape, strict=True)),
                b.size,
            )
            for b in boxes
        ]
    if policy == "localized":
        limits = [d - n for d, n in zip(shape, size, strict=True)]
        start = [int(rng.integers(0, lim + 1)) for lim in limits]
        boxes = []
        for _ in range(repeats):
            boxes.append(Selection(tuple(start), tuple(size)))
            start = [
                min(lim, max(0, a + int(rng.integers(-n, n + 1))))
                for a, n, lim in zip(start, size, limits, strict=True)
            ]
        return boxes
    if policy == "sweep":
        counts = [max(1, d // n) for d, n in zip(shape, size, strict=True)]
        boxes = []
        for k in range(repeats):
            index = np.unravel_index(k % math.prod(counts), counts)
            boxes.append(Selection(tuple(int(i) * n for i, n in zip(index, size, strict=True)), tuple(size)))
        return boxes
    raise ValueError(f"unknown visiting policy {policy!r}")
