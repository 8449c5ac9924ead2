"""The sweep grid: filesystems x layouts x compression, each file measured by every case.

``Sweep`` is the validated, expanded config. The workflow asks it for the jobs to run and
the paths they write; nothing here touches the disk except the filesystem probes.
"""

from __future__ import annotations

import copy
import functools
import math
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from h5sweep.backends import REFERENCE, REGISTRY, BackendSpec, read_options_on, read_refusal, specs_from_config
from h5sweep.backends.chunk_cache import caches_from_config
from h5sweep.backends.donor import DONOR_LAYOUT_NAME
from h5sweep.backends.donor import describe as describe_donor
from h5sweep.cases import (
    CASE_SPECS,
    OPTIONAL_CASES,
    ReadCase,
    WriteCase,
    figure_kinds_from_config,
    optional_case_from_config,
    read_cases_from_config,
    write_case_from_config,
)
from h5sweep.measure.engine.race import SETTINGS as RACE_SETTINGS
from h5sweep.measure.objective import OBJECTIVES, read_mix
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import NONE, Compression, compressions_from_config, parse_compression
from h5sweep.storage.datasources import axis_names, check_donor, fill_name
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.filesystems import Filesystem, filesystems_from_config
from h5sweep.storage.layouts import Layout, Shape, layouts_from_config
from h5sweep.storage.selections import POLICIES
from h5sweep.storage.sizes import parse_size
from h5sweep.sweep.config import config_hash, validate_schema, with_defaults

# what the ranking and the race minimize
RECOMMEND_OBJECTIVES = tuple(OBJECTIVES)


def _check_targets(filesystems: list, optional: dict, specs: list, read_options: dict) -> None:
    """What each filesystem's storage target refuses: the cases with jobs of their own it does
    not measure, the backends that cannot read a store through its byte source, and the read
    options its backends cannot read it with; each naming its key."""
    for fs in filesystems:
        target = fs.target
        where = f"filesystems.{fs.name}" + (f".{target.key}" if target.key else "")
        for name, case in optional.items():
            why = target.refuse_case(name) if case is not None else None
            if why is not None:
                raise ConfigError(f"cases.{name}", "set", f"{why} ({where})")
        for i, spec in enumerate(specs):
            why = target.refuse_backend(spec)
            if why is not None:
                raise ConfigError(f"backends[{i}]", spec.name, f"cannot be measured on {where} ({target.label}): {why}")
        for backend, options in read_options.items():
            for option in read_options_on(backend, options, fs):
                found = read_refusal(backend, option, fs)
                if found is not None:
                    key, value, why = found
                    key = f"filesystems.{fs.name}.{key}" if target.key and key.startswith(f"{target.key}.") else key
                    raise ConfigError(key, value, f"{why} ({where}: {target.describe(fs)})")


def recommend_from_config(recommend: dict, read_cases: list) -> dict:
    """The ``recommend:`` settings (their defaults filled in by the schema) checked against the
    read cases: the weights name read cases of the sweep and one is positive; ``sustained``
    needs a weighted case read under ``cold: first`` (an open file read again). ``weights``
    comes out as the read mix, filled (:func:`h5sweep.measure.objective.read_mix`): what the
    ranking, the race and the pages read."""
    # a case that sets its own share of the work (a recorded trace: all of its reads)
    own = {case.name: case.default_weight for case in read_cases if hasattr(case, "default_weight")}
    out = copy.deepcopy(recommend)
    out["target_bytes"] = parse_size("recommend.target_size", out["target_size"])
    known = {case.name: case for case in read_cases}
    for name, weight in out["weights"].items():
        if name not in known:
            raise ConfigError(
                f"recommend.weights.{name}", weight, f"is not a read case of this sweep (known: {', '.join(known)})"
            )
    if out["weights"] and not any(w > 0 for w in out["weights"].values()):
        raise ConfigError("recommend.weights", out["weights"], "needs at least one positive weight")
    # the read mix, filled here once: the weights given, else one read of each case (a trace: its own)
    out["weights"] = read_mix(out["weights"], [case.name for case in read_cases], own)
    for mix, weights in (out["mixes"] or {}).items():
        for name, weight in (weights or {}).items():
            if name not in known:
                known_cases = ", ".join(known)
                raise ConfigError(
                    f"recommend.mixes.{mix}.{name}", weight, f"is not a read case of this sweep (known: {known_cases})"
                )
        if not any(w > 0 for w in (weights or {}).values()):
            raise ConfigError(f"recommend.mixes.{mix}", weights, "needs at least one positive weight")
    if out["objective"] not in RECOMMEND_OBJECTIVES:
        raise ConfigError("recommend.objective", out["objective"], f"must be one of {', '.join(RECOMMEND_OBJECTIVES)}")
    weighted = [known[n] for n, w in out["weights"].items() if w > 0]
    if out["statistic"] == "sustained" and not any("first" in case.cold_modes for case in weighted):
        raise ConfigError(
            "recommend.statistic",
            "sustained",
            "no weighted read case reads an open file again: add `first` to the cases' `cold` setting",
        )
    return out


def policies_from_config(names: list[str]) -> list[str]:
    for i, name in enumerate(names):
        if name not in POLICIES:
            raise ConfigError(f"policies[{i}]", name, f"unknown visiting policy (known: {', '.join(POLICIES)})")
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class SweptStore:
    """One store of the sweep's grid: a backend, layout and compression on a filesystem."""

    filesystem: Filesystem
    layout: Layout
    compression: Compression
    backend: BackendSpec


@dataclass
class Sweep:
    name: str
    dataset: dict
    shape: Shape
    dtype: np.dtype
    layouts: list[Layout]
    compressions: list[Compression]
    filesystems: list[Filesystem]
    backends: list[BackendSpec]
    options_by_backend: dict[str, list]  # each backend's read options, in the config's order
    write_case: WriteCase
    read_cases: list[ReadCase]
    score: dict
    policies: list[str]
    chunk_caches: list
    # the cases that run only where the config names them, by name (None where not named):
    # ``sweep.<name>`` reads them (e.g. ``sweep.parallel``)
    optional_cases: dict[str, object]
    reference: dict  # the store every read ratio is to: {"layout_id", "compression"}
    recommend: dict
    interleave: bool
    race: dict | None  # the rule racing the stores of an interleaved pass (None: every store read to the end)
    write_race: dict | None  # the rule racing the stores' timed writes (None: every store writes every repeat)
    split_read_time: bool
    config: dict = field(repr=False)
    # the compressions the donor's own layout is stored with (None: the configured ones)
    donor_compressions: list[Compression] | None = None

    def __getattr__(self, name: str):
        """An optional case by name (``sweep.parallel``): the case, or None where the config
        does not name it."""
        if name in OPTIONAL_CASES:
            return self.__dict__.get("optional_cases", {}).get(name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @classmethod
    def from_config(cls, config: dict, probe: bool = True) -> Sweep:
        """Semantic checks and expansion of a schema-valid config with defaults filled in.

        ``probe=False`` skips what touches the disk (filesystem probes, reading a donor file):
        for a process that only needs the grid of a sweep checked already."""
        dataset = config["dataset"]
        shape = tuple(int(v) for v in dataset["shape"])
        itemsize = np.dtype(dataset["dtype"]).itemsize
        read_cases = read_cases_from_config(config["cases"], shape, axis_names(dataset))
        for case in read_cases:  # a recording's content in the jobs' settings: a new one reruns them
            if hasattr(case, "digest"):
                config["cases"][case.name]["digest"] = case.digest()
        compressions = compressions_from_config(config["compression"], np.dtype(dataset["dtype"]), len(shape))
        donor_compressions = None
        layouts = layouts_from_config(config["layouts"], shape, itemsize)
        if isinstance(dataset["fill"], dict):  # the donor's own layout, measured as "donor"
            layouts, donor_compressions = with_donor_layout(dataset, layouts, compressions, config["backends"])
        write_case = write_case_from_config(config["cases"])
        if len(shape) != 3 and set(write_case.strategies) - {"chunk"}:
            raise ConfigError(
                "cases.write.strategies",
                write_case.strategies,
                "spectrum and block write [x, y, z] datasets; other ranks are written chunk by chunk",
            )
        backends = specs_from_config(config["backends"])
        read_options = {backend.name: backend.options_from_config(config) for backend in backends}  # checked now
        _check_every_setting_is_stored(backends, layouts, compressions)
        reference = reference_from_config(config["layouts"], layouts, compressions, backends)
        optional = {name: optional_case_from_config(config["cases"], name, shape, itemsize) for name in OPTIONAL_CASES}
        stores = [
            SweptStore(None, layout, comp, backend)
            for backend in backends
            for layout in layouts
            for comp in _compressions_for(layout, compressions, donor_compressions)
            if backend.stores(layout, comp)
        ]
        figure_kinds_from_config(config["figures"])  # checked now
        grid = SimpleNamespace(shape=shape, compressions=compressions, stores=stores)
        for spec in CASE_SPECS:  # each case's refusals that need the grid
            if optional.get(spec.name) is not None and spec.check_grid is not None:
                spec.check_grid(optional[spec.name], grid)
        largest_page = max((layout.page_size or 0 for layout in layouts), default=0)
        filesystems = filesystems_from_config(config["filesystems"], probe, largest_page)
        _check_targets(filesystems, optional, backends, read_options)
        return cls(
            name=config["sweep"],
            dataset=dataset,
            shape=shape,
            dtype=np.dtype(dataset["dtype"]),
            layouts=layouts,
            compressions=compressions,
            filesystems=filesystems,
            backends=backends,
            options_by_backend=read_options,
            write_case=write_case,
            read_cases=read_cases,
            score=config["score"],
            policies=policies_from_config(config["policies"]),
            chunk_caches=caches_from_config(config["chunk_cache"]),
            optional_cases=optional,
            reference=reference,
            recommend=recommend_from_config(config["recommend"], read_cases),
            interleave=bool(config["interleave"]),
            race=race_from_config(config["race"], bool(config["interleave"])),
            write_race=write_race_from_config(config["race"], write_case, config.get("recommend") or {}),
            split_read_time=bool(config["split_read_time"]),
            config=config,
            donor_compressions=donor_compressions,
        )

    @property
    def raw_bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def fill(self) -> str:
        return fill_name(self.dataset)

    @property
    def hash(self) -> str:
        return config_hash(self.config)

    def compressions_for(self, layout: Layout) -> list[Compression]:
        """Filters need chunks: contiguous is measured uncompressed only; the donor's own
        layout with the donor's codec."""
        return _compressions_for(layout, self.compressions, self.donor_compressions)

    def stores(self) -> list[SweptStore]:
        """Every store of the grid: each backend stores the layouts and codecs it can (Zarr:
        chunked layouts, the codecs it shares with HDF5)."""
        return [
            SweptStore(fs, layout, comp, backend)
            for fs in self.filesystems
            for backend in self.backends
            for layout in self.layouts
            for comp in self.compressions_for(layout)
            if backend.stores(layout, comp)
        ]

    def read_options(self, backend: str, filesystem=None) -> list:
        """A backend's read options, each measured separately: HDF5's chunk caches, Zarr's
        readers; on an object store (``filesystem``), a store read as one file in each of the
        filesystem's reads (``filesystems.<name>.s3.reads``), zarr-python through each of its
        Zarr stores (``zarr_stores``)."""
        options = self.options_by_backend[backend]
        return options if filesystem is None else read_options_on(backend, options, filesystem)

    def layout(self, layout_id: str) -> Layout:
        """The configured layout with this id (carrying its name, if it was given one)."""
        found = self._layouts_by_id.get(layout_id)
        return found if found is not None else Layout.from_id(layout_id)

    @functools.cached_property
    def _layouts_by_id(self) -> dict[str, Layout]:
        return {lay.id: lay for lay in reversed(self.layouts)}  # the first of an id, as a search finds

    def filesystem(self, name: str) -> Filesystem:
        return next(fs for fs in self.filesystems if fs.name == name)

    def largest_file_bytes(self) -> int:
        """Upper bound of one test file's size: all allocated chunks, uncompressed."""
        return max(layout.allocated_elements(self.shape) for layout in self.layouts) * self.dtype.itemsize


def _compressions_for(layout: Layout, compressions: list, donor_compressions: list | None) -> list:
    if layout.chunk_shape is None:
        return [NONE]
    if layout.name == DONOR_LAYOUT_NAME and donor_compressions is not None:
        return donor_compressions
    return compressions


def reference_from_config(layouts_cfg: dict, layouts: list[Layout], compressions, backends) -> dict:
    """The store every read ratio is to: ``layouts.reference`` (a layout id or a shape's
    name), else the first layout; stored by the reference backend, contiguous uncompressed or
    chunked with the config's first compression."""
    owner = REGISTRY[REFERENCE]
    stored = [lay for lay in layouts if owner.stores(lay, compressions[0] if lay.chunk_shape else NONE)]
    wanted = layouts_cfg.get("reference")
    if wanted in (None, "first"):
        if not stored:
            raise ConfigError("layouts", layouts_cfg, f"has no layout that {owner.label} stores")
        layout = stored[0]
    else:
        found = [lay for lay in stored if wanted in (lay.id, lay.name)]
        if not found:
            known = ", ".join(dict.fromkeys(lay.name or lay.id for lay in stored))
            raise ConfigError("layouts.reference", wanted, f"names no layout {owner.label} stores (known: {known})")
        layout = found[0]
    return {C.LAYOUT_ID: layout.id, C.COMPRESSION: "none" if layout.chunk_shape is None else compressions[0].name}


def _check_every_setting_is_stored(backends: list[BackendSpec], layouts: list[Layout], compressions) -> None:
    """Each compression setting and each layout is stored by at least one configured backend."""
    for i, comp in enumerate(compressions):
        families = [b.capabilities.codec_families for b in backends]
        if not any(f is None or comp.family in f for f in families):
            takers = "; ".join(f"{b.name}: {', '.join(f)}" for b, f in zip(backends, families, strict=True) if f)
            raise ConfigError(f"compression[{i}]", comp.name, f"no configured backend stores it ({takers})")
    for backend in backends:
        if not any(backend.stores(layout, NONE) for layout in layouts):
            kinds = "chunked" if backend.capabilities.chunks else "contiguous"
            raise ConfigError("backends", backend.name, f"stores {kinds} layouts only, and none is configured")
    paged = [layout.id for layout in layouts if layout.page_size]
    if paged and not any(backend.capabilities.pages for backend in backends):
        takers = [name for name, entry in REGISTRY.items() if entry.capabilities.pages]
        why = f"no configured backend writes paged files (add one of {', '.join(takers)})"
        raise ConfigError("layouts.pages", paged, why)
    sharded = [layout.id for layout in layouts if layout.shard_shape]
    if sharded and not any(backend.capabilities.shards for backend in backends):
        takers = [name for name, entry in REGISTRY.items() if entry.capabilities.shards]
        raise ConfigError(
            "layouts.shards", sharded, f"no configured backend stores shards (add one of {', '.join(takers)})"
        )


def load_sweep(config: dict, schema: dict | None = None, probe: bool = True) -> Sweep:
    """Validate ``config`` (schema, then semantics) and expand it into a :class:`Sweep`.

    ``probe=False``: the config was checked by the main process already; only its defaults
    are filled in and the grid expanded, without the schema check, the filesystem probes or
    reading a donor file (each cluster job re-reads the workflow)."""
    checked = validate_schema(with_axes(config), schema) if probe else with_defaults(with_axes(config), schema)
    return Sweep.from_config(checked, probe)


def with_axes(config: dict) -> dict:
    """The config with ``dataset.shape`` set from ``dataset.axes`` where the axes are given
    (a shape given too must agree); axis names must differ."""
    dataset = config.get("dataset") or {}
    axes = dataset.get("axes")
    if not isinstance(axes, list) or not all(isinstance(a, dict) and "size" in a and "name" in a for a in axes):
        return config  # none, or malformed: the schema says what is wrong
    sizes = [a["size"] for a in axes]
    if "shape" in dataset and list(dataset["shape"]) != sizes:
        raise ConfigError("dataset.shape", dataset["shape"], f"differs from the sizes of dataset.axes {sizes}")
    names = [a["name"] for a in axes]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ConfigError(f"dataset.axes[{i}].name", name, "names an axis twice")
    return {**config, "dataset": {**dataset, "shape": sizes}}


def with_donor_layout(dataset: dict, layouts: list[Layout], compressions: list, backend_names: list[str]):
    """The layouts with the donor's own layout added, named ``donor`` (its chunk shape, clipped
    to the dataset's shape, or contiguous), and the compressions that layout is stored with:
    the donor's codec (with the configured ones too where the chunk shape was configured), or
    None where the codec table has no such codec or no configured backend stores it: then the
    donor's chunk shape is measured with the configured compressions, and a warning says why.
    Reads the donor's metadata only."""
    shape, donor_cfg = tuple(dataset["shape"]), dataset["fill"]["donor"]
    donor = check_donor(donor_cfg["path"], donor_cfg["dataset"], "dataset.fill.donor", len(shape), dataset["dtype"])
    found = describe_donor(donor)
    chunks = None if found.chunks is None else tuple(min(c, n) for c, n in zip(found.chunks, shape, strict=True))
    layout = Layout(chunks, DONOR_LAYOUT_NAME)
    configured = layout in layouts
    layouts = [lay for lay in layouts if lay != layout] + [layout]
    if chunks is None:
        return layouts, None
    compression = None
    try:
        if found.compression is not None:
            compression = parse_compression(found.compression, "dataset.fill.donor")
    except ConfigError:
        compression = None
    families = [REGISTRY[name].capabilities.codec_families for name in backend_names if name in REGISTRY]
    if compression is None or not any(f is None or compression.family in f for f in families):
        print(
            f"h5sweep: the donor's codec ({found.described}) is not one the configured backends store; "
            "its chunk shape is measured with the configured compressions",
            file=sys.stderr,
        )
        return layouts, None
    return layouts, list(dict.fromkeys([*compressions, compression] if configured else [compression]))


def race_from_config(race, interleave: bool) -> dict | None:
    """``race:`` as a rule (:class:`h5sweep.measure.engine.race.RaceRule`'s settings), or None
    where it is off or there is no interleaved pass to race in."""
    if race is False or not interleave:
        return None
    return _race_rule(race)


def _race_rule(race) -> dict:
    """``race:`` (true or an object) with the defaults of the keys it does not set."""
    return RACE_SETTINGS.filled(race if isinstance(race, dict) else {})


def write_race_from_config(race, write_case, recommend: dict) -> dict | None:
    """The rule racing the timed writes (:class:`h5sweep.cases.write.race.WriteRace`'s
    settings), interleaved or not; None where racing is off, for the write case too, or its
    repeats leave nothing to stop (``repeats`` at most ``min_repeats``)."""
    if race is False or not write_case.races:
        return None
    rule = _race_rule(race)
    return {
        "margin": rule["margin"],
        "alpha": rule["alpha"],
        "min_repeats": write_case.min_repeats,
        "max_repeats": write_case.repeats,
        "limit_s": recommend.get("max_write_s"),
    }
