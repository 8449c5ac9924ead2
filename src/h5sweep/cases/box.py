"""Boxes: read cases the user names and sizes, e.g. the 2-D studies' column and row-block
selections (Folk & Choi; Kang et al.) on an image stored as ``[rows, 1, columns]``.

Each entry of ``cases.boxes`` is a read case of its own: ``{name, size: [x, y, z], repeats}``,
where a size of ``all`` selects the whole axis. Like every read case, its random positions
depend only on the seed and its name, so every layout reads the same boxes.
"""

from __future__ import annotations

import re

from h5sweep.cases.base import ReadCase
from h5sweep.errors import ConfigError
from h5sweep.storage.layouts import Shape

NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class BoxCase(ReadCase):
    ranks = None  # a box of the dataset's own rank
    description = "a box of a given size at a random position"

    def __init__(self, settings: dict, index: int = 0):
        super().__init__(settings)
        self.name = str(settings.get("name", ""))
        self._key = f"cases.boxes[{index}]"
        if not NAME.match(self.name):
            raise ConfigError(
                f"{self.key}.name", self.name, "a box name is a lowercase letter then letters, digits or _"
            )

    @property
    def key(self) -> str:
        return self._key

    def size(self, shape: Shape) -> Shape:
        return tuple(n if v == "all" else int(v) for v, n in zip(self.settings["size"], shape, strict=True))

    def check(self, shape: Shape) -> None:
        self.check_cold_modes()
        if self.repeats < 1:
            raise ConfigError(f"{self.key}.repeats", self.repeats, "must be at least 1")
        if len(self.settings["size"]) != len(shape):
            raise ConfigError(f"{self.key}.size", self.settings["size"], f"needs {len(shape)} axes like dataset.shape")
        for axis, (n, s) in enumerate(zip(self.size(shape), shape, strict=True)):
            if not 1 <= n <= s:
                raise ConfigError(
                    f"{self.key}.size",
                    self.settings["size"],
                    f"selects {n} along axis {axis} of dataset.shape[{axis}]={s}",
                )
