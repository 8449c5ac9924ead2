"""Compression filters applied to chunked layouts.

Each filter family is one entry of ``FILTERS``; a config names a filter as ``<family>`` or
``<family>-<level>`` (``none``, ``gzip-4``). Adding a filter (lzf, shuffle, ...) is adding
one ``FilterFamily`` here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from h5sweep.errors import ConfigError

_NAME = re.compile(r"^(?P<family>[a-z][a-z0-9]*)(?:-(?P<level>\d+))?$")


@dataclass(frozen=True)
class FilterFamily:
    name: str
    levels: range | None  # None: the filter takes no level
    h5py_name: str | None

    def kwargs(self, level: int | None) -> dict:
        if self.h5py_name is None:
            return {}
        if level is None:
            return {"compression": self.h5py_name}
        return {"compression": self.h5py_name, "compression_opts": level}


FILTERS: dict[str, FilterFamily] = {
    "none": FilterFamily("none", None, None),
    "gzip": FilterFamily("gzip", range(0, 10), "gzip"),
}


@dataclass(frozen=True, order=True)
class Compression:
    name: str
    family: str
    level: int | None

    @property
    def is_none(self) -> bool:
        return self.family == "none"

    def h5py_kwargs(self) -> dict:
        """Keyword arguments for ``h5py.Group.create_dataset``."""
        return FILTERS[self.family].kwargs(self.level)


NONE = Compression("none", "none", None)


def parse_compression(name: str, key: str = "compression") -> Compression:
    """Parse ``none`` or ``gzip-4``; an unknown filter or level is a ConfigError naming ``key``."""
    match = _NAME.match(str(name))
    if not match or match.group("family") not in FILTERS:
        known = ", ".join(f"{f.name}" + ("-<level>" if f.levels else "") for f in FILTERS.values())
        raise ConfigError(key, name, f"unknown compression filter (known: {known})")
    family = FILTERS[match.group("family")]
    level = match.group("level")
    if family.levels is None:
        if level is not None:
            raise ConfigError(key, name, f"filter {family.name!r} takes no level")
        return Compression(str(name), family.name, None)
    if level is None:
        raise ConfigError(
            key, name, f"filter {family.name!r} needs a level {family.levels.start}-{family.levels.stop - 1}"
        )
    if int(level) not in family.levels:
        raise ConfigError(
            key, name, f"{family.name} level {level} is out of range {family.levels.start}-{family.levels.stop - 1}"
        )
    return Compression(f"{family.name}-{int(level)}", family.name, int(level))


def compressions_from_config(names: list[str]) -> list[Compression]:
    parsed = [parse_compression(n, f"compression[{i}]") for i, n in enumerate(names)]
    unique = list(dict.fromkeys(parsed))
    if not unique:
        raise ConfigError("compression", names, "names no compression setting (use [none] for none)")
    return unique
