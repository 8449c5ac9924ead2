"""The codec table: every compression setting a sweep can name, one ``Codec`` entry each.

A config names a codec by its family, then its parameters: ``none``, ``gzip-4``. Each entry
says, in one place, everything the rest of h5sweep asks of a codec:

- its name grammar (a regular expression with named groups) and how to read its parameters;
- whether this installation can run it (Python modules it needs), checked at validation;
- whether it is lossless (values are checked exactly) or the error bound values are checked
  against;
- the element types it handles, and the plan's rates.

- how each backend stores it: HDF5's filter keywords and chunk encoder (:class:`HDF5Filter`),
  Zarr's codec objects (:class:`ZarrCodec`), and how a donor's own filters or codecs are read
  as one of its names;
- what ``config/README.md`` says of it.

A codec family is one module of this package, registered in :data:`CODEC_MODULES`; the
backends read its hooks (a backend stores the families that have its hook), and the
workflow's wildcard for compression names (:data:`WILDCARD`), the schema's and the README's
lists come from the registry. The libraries a hook needs (h5py, hdf5plugin, numcodecs, zarr)
are imported inside it, in jobs only.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from h5sweep.storage import columns as C
from h5sweep.storage.errors import ConfigError

MB = 1_000_000


@dataclass(frozen=True)
class HDF5Filter:
    """How HDF5 stores a codec: ``keywords`` (params -> ``h5py.Group.create_dataset``
    keywords), whether the filter comes from hdf5plugin, and, where the fast write can produce
    HDF5's chunks itself, ``encoder``: (params, itemsize) -> a function from one chunk (an
    array, zero-padded to the full chunk) to the bytes the filter stores, or None where the
    filter gives up on that chunk (an optional filter: HDF5 stores it as it is, marked skipped).
    ``donor``: a donor's pipeline (``[(filter id, values), ...]``) -> this codec's name, or None."""

    keywords: Callable[[dict], dict] = field(repr=False)
    plugin: bool = False
    encoder: Callable[[dict, int], Callable[[np.ndarray], bytes | None]] | None = field(default=None, repr=False)
    donor: Callable[[list], str | None] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ZarrCodec:
    """How Zarr v3 stores a codec: ``compressor`` ((params, itemsize) -> zarr-python's codec,
    None for no compressor), ``numcodec`` (params -> the numcodecs codec that makes the same
    chunk bytes, for the fast write; None for none), ``donor`` (a Zarr array's one compressor
    -> this codec's name, or None)."""

    compressor: Callable[[dict, int], object] = field(repr=False)
    numcodec: Callable[[dict], object] = field(repr=False)
    donor: Callable[[object], str | None] | None = field(default=None, repr=False)


def plugin_keywords(make: Callable[[object, dict], object]) -> Callable[[dict], dict]:
    """HDF5 keywords from an hdf5plugin filter (``make(hdf5plugin, params)``), imported only in a job."""

    def keywords(params: dict) -> dict:
        import hdf5plugin

        return dict(make(hdf5plugin, params))

    return keywords


PLUGIN = {"requires": ("hdf5plugin",)}


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
    hdf5: HDF5Filter | None = None  # how HDF5 stores it (None: it does not)
    zarr: ZarrCodec | None = None  # how Zarr stores it (None: it does not)
    # config/README.md's row: its names, what it does, and its measured ratio and rates
    readme: tuple[str, str, str] = ("", "", "")

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


# The registry: each entry a module of h5sweep.storage.codecs holding one codec family (or two
# close ones) whole: its name grammar and parameters, how HDF5 stores it (and its chunk
# encoder, where the fast write has one), how Zarr does, how a donor's own filters are read as
# it, and the numbers config/README.md shows. A new codec is its module and one entry here.
CODEC_MODULES = (
    "none",
    "gzip",
    "lzf",
    "szip",
    "scaleoffset",
    "nbit",
    "blosc",
    "zstd",
    "lz4",
    "bitshuffle",
    "sz3",
    "zfp",
    "bzip2",
)
CODECS: dict[str, Codec] = {
    codec.family: codec
    for module in CODEC_MODULES
    for codec in importlib.import_module(f"h5sweep.storage.codecs.{module}").CODECS
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


def schema_description() -> str:
    """The config key ``compression``'s description, its lists of names from the registry."""
    built_in = [c.grammar for c in CODECS.values() if c.hdf5 and not c.hdf5.plugin and c.lossless]
    plugin = [c.grammar for c in CODECS.values() if c.hdf5 and c.hdf5.plugin and c.lossless]
    lossy = [c.grammar for c in CODECS.values() if not c.lossless]
    return (
        "Codecs applied to every chunked layout (contiguous is always stored uncompressed), by the names of the "
        "codec table (h5sweep.storage.codecs, a module per codec family). In every HDF5 build: "
        + ", ".join(built_in)
        + ". Through hdf5plugin: "
        + ", ".join(plugin)
        + "; lossy, for float data: "
        + ", ".join(lossy)
        + ". Zarr stores "
        + ", ".join(f for f, c in CODECS.items() if c.zarr)
        + ". config/README.md says what each does and costs. A codec this installation cannot run, or one "
        "that cannot store the dataset's type, is refused before any job."
    )


def readme_table() -> str:
    """config/README.md's table of compression names: each codec module's row (a row shared
    by two families of one module once)."""
    rows = ["| name | what it does | ratio; write / read MB/s |", "| --- | --- | --- |"]
    for row in dict.fromkeys(c.readme for c in CODECS.values() if c.readme[0]):
        rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)
