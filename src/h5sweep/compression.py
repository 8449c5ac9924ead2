"""The codec table: every compression setting a sweep can name, one ``Codec`` entry each.

A config names a codec by its family, then its parameters: ``none``, ``gzip-4``. Each entry
says, in one place, everything the rest of h5sweep asks of a codec:

- its name grammar (a regular expression with named groups) and how to read its parameters;
- whether this installation can run it (Python modules it needs), checked at validation;
- whether it is lossless (values are checked exactly) or the error bound values are checked
  against;
- the HDF5 pipeline's keywords (``h5py.Group.create_dataset``);
- the fast path's chunk encoder, where one produces exactly the bytes HDF5's filter stores.

Adding a codec is adding one entry to ``CODECS``. The workflow's wildcard for compression
names (:data:`WILDCARD`) is derived from the table.
"""

from __future__ import annotations

import importlib.util
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from h5sweep.errors import ConfigError


@dataclass(frozen=True)
class Codec:
    family: str
    grammar: str  # for humans: "gzip-<level>"
    pattern: str  # the whole name; named groups are its parameters
    description: str
    levels: range | None = None  # the range of a ``level`` parameter
    lossless: bool = True
    tolerance: float = 0.0  # largest absolute error allowed (lossy codecs)
    requires: tuple[str, ...] = ()  # Python modules this codec needs
    hdf5_keywords: Callable[[dict], dict] = field(default=lambda params: {}, repr=False)
    chunk_encoder: Callable[[dict], Callable[[bytes], bytes]] | None = field(default=None, repr=False)

    def parse(self, name: str, key: str) -> dict | None:
        """The parameters of ``name`` if it is this codec's (checked), else None."""
        match = re.fullmatch(self.pattern, name)
        if match is None:
            return None
        params = {k: int(v) if v.isdigit() else v for k, v in match.groupdict().items() if v is not None}
        level = params.get("level")
        if self.levels is not None and level not in self.levels:
            raise ConfigError(
                key, name, f"{self.family} level {level} is out of range {self.levels.start}-{self.levels.stop - 1}"
            )
        return params

    def unavailable(self) -> str | None:
        """Why this installation cannot run the codec, or None."""
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        return f"needs the Python package(s) {', '.join(missing)}, not installed" if missing else None


def _gzip_encoder(params: dict) -> Callable[[bytes], bytes]:
    level = params["level"]
    return lambda raw: zlib.compress(raw, level)  # what HDF5's deflate filter stores


CODECS: dict[str, Codec] = {
    codec.family: codec
    for codec in (
        Codec("none", "none", r"none", "no filter: chunks are stored as they are"),
        Codec(
            "gzip",
            "gzip-<level 0-9>",
            r"gzip-(?P<level>0|[1-9][0-9]*)",
            "deflate (zlib) at a level: the study's filter, in every HDF5 build",
            levels=range(0, 10),
            hdf5_keywords=lambda p: {"compression": "gzip", "compression_opts": p["level"]},
            chunk_encoder=_gzip_encoder,
        ),
    )
}

# The wildcard a rule's paths use for a compression name: any name of the table's grammar.
WILDCARD = "|".join(f"(?:{codec.pattern})" for codec in CODECS.values())
WILDCARD = re.sub(r"\(\?P<\w+>", "(?:", WILDCARD)


@dataclass(frozen=True, order=True)
class Compression:
    """One configured compression setting: a codec and its parameters."""

    name: str
    family: str
    level: int | None = None

    @property
    def codec(self) -> Codec:
        return CODECS[self.family]

    @property
    def params(self) -> dict:
        return {} if self.level is None else {"level": self.level}

    @property
    def is_none(self) -> bool:
        return self.family == "none"

    @property
    def lossless(self) -> bool:
        return self.codec.lossless

    def h5py_kwargs(self) -> dict:
        """Keyword arguments for ``h5py.Group.create_dataset``."""
        return self.codec.hdf5_keywords(self.params)

    def chunk_encoder(self) -> Callable[[bytes], bytes] | None:
        """Encodes one chunk exactly as HDF5's pipeline would, or None (no fast path)."""
        return None if self.codec.chunk_encoder is None else self.codec.chunk_encoder(self.params)


NONE = Compression("none", "none", None)


def parse_compression(name: str, key: str = "compression") -> Compression:
    """Parse a codec name (``none``, ``gzip-4``); an unknown codec, a parameter out of range
    or a codec this installation cannot run is a ConfigError naming ``key``."""
    text = str(name)
    for codec in CODECS.values():
        params = codec.parse(text, key)
        if params is None:
            continue
        reason = codec.unavailable()
        if reason:
            raise ConfigError(key, name, f"codec {codec.family!r} cannot run here: {reason}")
        return Compression(text, codec.family, params.get("level"))
    family = text.split("-", 1)[0]
    if family in CODECS:
        raise ConfigError(key, name, f"does not match the grammar {CODECS[family].grammar!r}")
    known = ", ".join(codec.grammar for codec in CODECS.values())
    raise ConfigError(key, name, f"unknown compression filter (known: {known})")


def compressions_from_config(names: list[str]) -> list[Compression]:
    parsed = [parse_compression(n, f"compression[{i}]") for i, n in enumerate(names)]
    unique = list(dict.fromkeys(parsed))
    if not unique:
        raise ConfigError("compression", names, "names no compression setting (use [none] for none)")
    return unique
