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

from h5sweep.layouts import Region, Shape


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
