"""Boxes: read cases the user names and sizes, e.g. the 2-D studies' column and row-block
selections (Folk & Choi; Kang et al.) on an image stored as ``[rows, 1, columns]``.

Each entry of ``cases.boxes`` is a read case of its own: ``{name, size: [x, y, z], repeats}``
(one size per axis, any rank), or with the size by axis name (``{time: all, lat: 1, lon: 1}``,
an axis not named whole), where a size of ``all`` selects the whole axis. Like every read case, its random positions
depend only on the seed and its name, so every layout reads the same boxes.
"""

from __future__ import annotations

import re

from h5sweep.kit.read import RACE_SETTING, ReadCase, cold_setting, repeats_setting
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Shape

NAME = re.compile(r"^[a-z][a-z0-9_]*$")


_EXTENT = {"oneOf": [{"type": "integer", "minimum": 1}, {"const": "all"}]}


class BoxCase(ReadCase):
    ranks = None  # a box of the dataset's own rank
    description = "a box of a given size at a random position"
    SETTINGS = Block(
        "boxes",
        "Read cases of your own: boxes of a given size at random positions, each a case named by its name "
        "(e.g. the 2-D studies' one column, k columns and row blocks of an image stored as [rows, 1, columns]).",
        (
            Setting("name", "string", "", "The case's name (lowercase letters, digits, _)."),
            Setting(
                "size",
                None,
                [],
                "Box size, one entry per axis of the dataset, or by axis name ({time: all, lat: 1, lon: 1}; an "
                'axis not named is whole); "all" selects the whole axis.',
                {
                    "oneOf": [
                        {"type": "array", "minItems": 1, "maxItems": 5, "items": _EXTENT},
                        {"type": "object", "minProperties": 1, "additionalProperties": _EXTENT},
                    ]
                },
            ),
            repeats_setting(50),
            RACE_SETTING,
            cold_setting(),
        ),
        required=("name", "size"),
        many=True,
    )

    def __init__(self, settings: dict, index: int = 0, axes: list[str] | None = None):
        super().__init__(settings)
        self.axes = list(axes) if axes else None  # the dataset's axis names, for sizes by name
        self.name = str(self.settings["name"])
        self._key = f"cases.boxes[{index}]"
        if not NAME.match(self.name):
            raise ConfigError(
                f"{self.key}.name", self.name, "a box name is a lowercase letter then letters, digits or _"
            )

    @property
    def key(self) -> str:
        return self._key

    def size(self, shape: Shape) -> Shape:
        return tuple(n if v == "all" else int(v) for v, n in zip(self.per_axis(len(shape)), shape, strict=True))

    def per_axis(self, rank: int) -> list:
        """The size as one entry per axis: a list as given, or by axis name (an axis not named
        is whole; the names are the dataset's, :attr:`axes`)."""
        size = self.settings["size"]
        if not isinstance(size, dict):
            return list(size)
        names = self.axes or [f"axis{i}" for i in range(rank)]
        return [size.get(name, "all") for name in names]

    def check(self, shape: Shape) -> None:
        self.check_cold_modes()
        if self.repeats < 1:
            raise ConfigError(f"{self.key}.repeats", self.repeats, "must be at least 1")
        size = self.settings["size"]
        if isinstance(size, dict):
            unknown = sorted(set(size) - set(self.axes or []))
            if unknown:
                raise ConfigError(
                    f"{self.key}.size.{unknown[0]}",
                    size[unknown[0]],
                    f"names no axis of the dataset (axes: {', '.join(self.axes or [])})",
                )
        elif len(size) != len(shape):
            raise ConfigError(f"{self.key}.size", size, f"needs {len(shape)} axes like dataset.shape")
        for axis, (n, s) in enumerate(zip(self.size(shape), shape, strict=True)):
            if not 1 <= n <= s:
                raise ConfigError(
                    f"{self.key}.size",
                    self.settings["size"],
                    f"selects {n} along axis {axis} of dataset.shape[{axis}]={s}",
                )
