"""The codec table: every compression setting a sweep can name, one ``Codec`` entry each.

A config names a codec by its family, then its parameters: ``none``, ``gzip-4``. Each entry
says, in one place, everything the rest of h5sweep asks of a codec:

- its name grammar (a regular expression with named groups) and how to read its parameters;
- whether this installation can run it (Python modules it needs), checked at validation;
- whether it is lossless (values are checked exactly) or the error bound values are checked
  against;
- the element types it handles, and the plan's rates.

The table is the same for every backend. How a backend stores a codec (HDF5's filter
keywords, Zarr's codec objects) is the backend's own mapping, in ``h5sweep.backends``; a
backend stores the families its ``Capabilities.codec_families`` name. Adding a codec is one
entry here and one in each mapping that should store it. The workflow's wildcard for
compression names (:data:`WILDCARD`) is derived from the table.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from h5sweep.errors import ConfigError
from h5sweep.storage import columns as C

MB = 1_000_000


@dataclass(frozen=True)
class Codec:
    family: str  # the table's key: the name's head, e.g. "shuffle+gzip", "blosc"
    grammar: str  # for humans: "gzip-<level>"
    pattern: str  # the whole name; named groups are its parameters
    description: str
    codec: str = ""  # the compressor itself (gzip, lzf, zstd, ...); the family if empty
    levels: range | None = None  # the range of a ``level`` parameter
    lossless: bool = True
    # lossy codecs: the largest absolute error allowed, from the parameters and the data's
    # largest magnitude (the bound values are checked against)
    tolerance: Callable[[dict, float], float] = field(default=lambda params, magnitude: 0.0, repr=False)
    needs_magnitude: bool = False  # whether the bound depends on the data's largest magnitude
    requires: tuple[str, ...] = ()  # Python modules this codec needs
    shuffle: Callable[[dict], str] = field(default=lambda params: "none", repr=False)  # none, byte or bit
    dtypes: str = "any"  # the element types it handles: any, integer, float
    check: Callable[[dict], str | None] = field(default=lambda params: None, repr=False)  # parameter limits
    # The plan's rates through HDF5's pipeline, one thread: bytes of raw data a second written
    # and read back (decoded), measured on the default cube (100 x 100 x 5000 synthetic uint16,
    # 16 x 16 x 256 chunks, in memory) on the reference machine; gzip-4's are the defaults.
    write_bytes_per_s: float = 60 * MB
    read_bytes_per_s: float = 190 * MB

    def parse(self, name: str, key: str) -> dict | None:
        """The parameters of ``name`` if it is this codec's (checked), else None."""
        match = re.fullmatch(self.pattern, name)
        if match is None:
            return None
        params = {k: _value(v) for k, v in match.groupdict().items() if v is not None}
        level = params.get("level")
        if self.levels is not None and level not in self.levels:
            raise ConfigError(
                key, name, f"{self.family} level {level} is out of range {self.levels.start}-{self.levels.stop - 1}"
            )
        problem = self.check(params)
        if problem:
            raise ConfigError(key, name, problem)
        return params

    def unavailable(self) -> str | None:
        """Why this installation cannot run the codec, or None."""
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        return f"needs the Python package(s) {', '.join(missing)}, not installed" if missing else None

    def refuses(self, dtype: np.dtype, chunk_rank: int) -> str | None:
        """Why the filter cannot store a dataset of ``dtype`` in chunks of ``chunk_rank``
        dimensions, or None: refused at validation instead of failing (or worse) mid-sweep."""
        kind = np.dtype(dtype).kind
        if self.dtypes == "integer" and kind not in "iu":
            return f"handles integer data only, not {np.dtype(dtype).name}"
        if self.dtypes == "float" and kind != "f":
            return f"handles floating-point data only, not {np.dtype(dtype).name}"
        return None


def _value(text: str):
    if text.isdigit():
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


BLOSC_CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
_BLOSC = rf"(?P<cname>{'|'.join(BLOSC_CODECS)})-(?P<level>\d+)(?:-(?P<shuffle>shuffle|bitshuffle))?"
_SHUFFLES = {None: "none", "shuffle": "byte", "bitshuffle": "bit"}


def blosc_shuffle(params: dict) -> str:
    """A Blosc name's shuffle: none, byte or bit."""
    return _SHUFFLES[params.get("shuffle")]


def _szip_check(params: dict) -> str | None:
    block = params["pixels"]
    if block % 2 or not 2 <= block <= 32:
        return f"szip pixels per block must be even, 2 to 32, not {block}"
    return None


_PLUGIN = {"requires": ("hdf5plugin",)}


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
        ),
        Codec(
            "shuffle+gzip",
            "shuffle+gzip-<level 0-9>",
            r"shuffle\+gzip-(?P<level>0|[1-9][0-9]*)",
            "HDF5's byte shuffle, then deflate: high and low bytes apart compress better",
            codec="gzip",
            levels=range(0, 10),
            shuffle=lambda p: "byte",
            write_bytes_per_s=80 * MB,
            read_bytes_per_s=250 * MB,
        ),
        Codec(
            "lzf",
            "lzf",
            r"lzf",
            "LZF (h5py's own filter): fast, modest ratio; readable only where h5py's filter is",
            write_bytes_per_s=210 * MB,
            read_bytes_per_s=350 * MB,
        ),
        Codec(
            "shuffle+lzf",
            "shuffle+lzf",
            r"shuffle\+lzf",
            "byte shuffle, then LZF",
            codec="lzf",
            shuffle=lambda p: "byte",
            write_bytes_per_s=200 * MB,
            read_bytes_per_s=320 * MB,
        ),
        Codec(
            "szip",
            "szip-<nn|ec>-<pixels per block>",
            r"szip-(?P<method>nn|ec)-(?P<pixels>\d+)",
            "szip (libaec): nearest-neighbour (nn) or entropy (ec) coding, lossless",
            check=_szip_check,
            write_bytes_per_s=300 * MB,
            read_bytes_per_s=290 * MB,
        ),
        Codec(
            "scaleoffset",
            "scaleoffset-0",
            r"scaleoffset-(?P<bits>0)",
            "HDF5's scale-offset for integers with the minimum bits found per chunk (0): lossless",
            dtypes="integer",
            write_bytes_per_s=380 * MB,
            read_bytes_per_s=370 * MB,
        ),
        Codec(
            "nbit",
            "nbit",
            r"nbit",
            "HDF5's n-bit packing: drops the bits an integer type's precision does not use",
            dtypes="integer",
            write_bytes_per_s=1400 * MB,
            read_bytes_per_s=1900 * MB,
        ),
        Codec(
            "blosc",
            "blosc-<blosclz|lz4|lz4hc|zlib|zstd>-<level 0-9>[-shuffle|-bitshuffle]",
            rf"blosc-{_BLOSC}",
            "Blosc (hdf5plugin): a fast meta-compressor with its own byte or bit shuffle",
            levels=range(0, 10),
            shuffle=blosc_shuffle,
            write_bytes_per_s=200 * MB,
            read_bytes_per_s=1000 * MB,
            **_PLUGIN,
        ),
        Codec(
            "blosc2",
            "blosc2-<blosclz|lz4|lz4hc|zlib|zstd>-<level 0-9>[-shuffle|-bitshuffle]",
            rf"blosc2-{_BLOSC}",
            "Blosc2 (hdf5plugin): Blosc's successor, the same codecs and shuffles",
            levels=range(0, 10),
            shuffle=blosc_shuffle,
            write_bytes_per_s=55 * MB,
            read_bytes_per_s=290 * MB,
            **_PLUGIN,
        ),
        Codec(
            "zstd",
            "zstd-<level 1-22>",
            r"zstd-(?P<level>\d+)",
            "Zstandard (hdf5plugin)",
            levels=range(1, 23),
            write_bytes_per_s=240 * MB,
            read_bytes_per_s=730 * MB,
            **_PLUGIN,
        ),
        Codec(
            "lz4",
            "lz4",
            r"lz4",
            "LZ4 (hdf5plugin): very fast, modest ratio",
            write_bytes_per_s=480 * MB,
            read_bytes_per_s=1340 * MB,
            **_PLUGIN,
        ),
        Codec(
            "bitshuffle",
            "bitshuffle-<lz4|zstd>",
            r"bitshuffle-(?P<cname>lz4|zstd)",
            "Bitshuffle (hdf5plugin): bit shuffle, then LZ4 or Zstandard",
            shuffle=lambda p: "bit",
            write_bytes_per_s=250 * MB,
            read_bytes_per_s=420 * MB,
            **_PLUGIN,
        ),
        Codec(
            "sz3",
            "sz3-abs-<error bound>",
            r"sz3-abs-(?P<bound>\d+(?:\.\d+)?(?:e-?\d+)?)",
            "SZ3 (hdf5plugin), lossy: every value within the absolute error bound (float data)",
            lossless=False,
            tolerance=lambda p, magnitude: float(p["bound"]) * (1 + 1e-6),
            check=lambda p: None if float(p["bound"]) > 0 else "the error bound must be positive",
            dtypes="float",
            write_bytes_per_s=80 * MB,
            read_bytes_per_s=150 * MB,
            **_PLUGIN,
        ),
        Codec(
            "zfp",
            "zfp-rate-<bits per value>",
            r"zfp-rate-(?P<rate>\d+)",
            "ZFP (hdf5plugin), lossy at a fixed rate of bits per value (float data); no error bound "
            "is guaranteed: values are checked within the data's largest magnitude times 2^(4 - rate)",
            lossless=False,
            tolerance=lambda p, magnitude: magnitude * 2.0 ** (4 - p["rate"]),
            needs_magnitude=True,
            check=lambda p: None if 1 <= p["rate"] <= 64 else "the rate must be 1 to 64 bits per value",
            dtypes="float",
            write_bytes_per_s=200 * MB,
            read_bytes_per_s=300 * MB,
            **_PLUGIN,
        ),
        Codec(
            "bzip2",
            "bzip2-<block size 1-9>",
            r"bzip2-(?P<level>\d+)",
            "bzip2 (hdf5plugin): high ratio, slow both ways",
            levels=range(1, 10),
            write_bytes_per_s=15 * MB,
            read_bytes_per_s=50 * MB,
            **_PLUGIN,
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
    parameters: tuple = ()  # (name, value) pairs, as the name gave them

    @property
    def codec(self) -> Codec:
        return CODECS[self.family]

    @property
    def params(self) -> dict:
        return dict(self.parameters)

    @property
    def level(self) -> int | None:
        return self.params.get("level")

    @property
    def is_none(self) -> bool:
        return self.family == "none"

    @property
    def lossless(self) -> bool:
        return self.codec.lossless

    def tolerance(self, magnitude: Callable[[], float] = lambda: 0.0) -> float:
        """The largest absolute error values may have (0: checked exactly); ``magnitude``
        gives the data's largest absolute value, asked only by codecs whose bound needs it."""
        if self.lossless:
            return 0.0
        return self.codec.tolerance(self.params, magnitude() if self.codec.needs_magnitude else 0.0)

    def columns(self) -> dict:
        """What every row of a store with this compression says about its codec (the backend
        adds where its filter comes from, see :attr:`h5sweep.backends.base.BackendSpec`)."""
        return {
            C.CODEC: self.codec.codec or self.family,
            C.CODEC_LEVEL: self.level,
            C.SHUFFLE: self.codec.shuffle(self.params),
        }


NONE = Compression("none", "none")


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
        return Compression(text, codec.family, tuple(params.items()))
    family = text.split("-", 1)[0]
    if family in CODECS:
        raise ConfigError(key, name, f"does not match the grammar {CODECS[family].grammar!r}")
    known = ", ".join(codec.grammar for codec in CODECS.values())
    raise ConfigError(key, name, f"unknown compression filter (known: {known})")


def compressions_from_config(names: list[str], dtype=None, chunk_rank: int = 3) -> list[Compression]:
    """The configured settings, each checked: its grammar and parameters, that this
    installation can run it and, given the dataset's ``dtype``, that the filter handles it."""
    parsed = [parse_compression(n, f"compression[{i}]") for i, n in enumerate(names)]
    for i, comp in enumerate(parsed):
        problem = comp.codec.refuses(dtype, chunk_rank) if dtype is not None else None
        if problem:
            raise ConfigError(f"compression[{i}]", comp.name, problem)
    unique = list(dict.fromkeys(parsed))
    if not unique:
        raise ConfigError("compression", names, "names no compression setting (use [none] for none)")
    return unique
