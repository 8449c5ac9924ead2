"""Access cases, all registered here by name.

A read case turns its config entry into a seeded sequence of selections; the query stage
times reading each one (to add one: a module with a ``ReadCase`` subclass, added to
``READ_CASES``). The write case times writing the whole dataset. A case with a job of its
own is a package with its ``SPEC`` (definition, time model, runner, figures, verdict), added
to ``CASE_MODULES``.
"""

from __future__ import annotations

import importlib

from h5sweep.cases.box import BoxCase
from h5sweep.cases.column import ColumnCase
from h5sweep.cases.rows import RowsCase
from h5sweep.cases.slice import SliceCase
from h5sweep.cases.spectra import SpectraCase
from h5sweep.cases.subcube import SubcubeCase
from h5sweep.cases.trace import TraceCase
from h5sweep.cases.whole import WholeCase
from h5sweep.cases.write import WriteCase
from h5sweep.kit.read import ReadCase, read_cases_spec
from h5sweep.kit.spec import FIGURE_INPUTS, SCOPES, CaseSpec, Figure
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Shape

READ_CASES: dict[str, type[ReadCase]] = {
    case.name: case for case in (SliceCase, SpectraCase, SubcubeCase, WholeCase, RowsCase, ColumnCase, TraceCase)
}
# The read cases' entry: the kit's spec of them all, with the seeds' findings on their rows.
READ_SPEC = read_cases_spec(findings="h5sweep.cases.studies:READ_FINDINGS")
# The registry: each entry a module or package of h5sweep.cases whose SPEC (h5sweep.kit.spec)
# the workflow derives its targets, jobs, figures and summary columns from ("read": the read
# cases above, whose entry is READ_SPEC). A new case is its package (its settings declared
# there, h5sweep.storage.declared) and one entry here.
CASE_MODULES = ("write", "read", "scaling", "metadata", "iosize", "parallel")
CASE_SPECS: tuple[CaseSpec, ...] = tuple(
    READ_SPEC if m == "read" else importlib.import_module(f"h5sweep.cases.{m}").SPEC for m in CASE_MODULES
)
# Cases that run only where the config names them, each checked against the dataset when built.
OPTIONAL_CASES: dict[str, type] = {spec.name: spec.settings_type for spec in CASE_SPECS if spec.settings_type}
# The names a config's cases may have: the write case, the read cases, boxes, the optional cases.
CASE_NAMES = ("write", *READ_CASES, "boxes", *OPTIONAL_CASES)


def config_blocks() -> dict:
    """Every block under ``cases`` in the config, by name, in the registry's order: each
    registered case's own (:class:`h5sweep.storage.declared.Block`), and in the read cases'
    place every read case's, then the boxes' (``READ_CASES``)."""
    read_blocks = (*(case.SETTINGS for case in READ_CASES.values()), BoxCase.SETTINGS)
    return {
        block.name: block
        for spec in CASE_SPECS
        for block in (read_blocks if spec is READ_SPEC else spec.config_blocks())
    }


# Every kind of figure, by kind (rules/plot.smk draws them, a job per set of tables they read).
FIGURES: dict[str, Figure] = {figure.kind: figure for spec in CASE_SPECS for figure in spec.plots}
# Every setting that makes a variant of some case.
VARIANT_COLUMNS = list(dict.fromkeys(column for spec in CASE_SPECS for column in spec.variant_columns))
# The cases that run in a job of their own, by scope (the workflow's generic measuring rules),
# and the MPI cases, whose per-store job is a multi-task allocation of its own.
_ORDINARY_JOB_CASES = [s for s in CASE_SPECS if s.has_own_job and not s.mpi_tasks]
OWN_JOB_CASES = {
    **{scope: [s.name for s in _ORDINARY_JOB_CASES if s.scope == scope] for scope in SCOPES},
    "mpi": [s.name for s in CASE_SPECS if s.mpi_tasks],
}


def figure_kinds_from_config(value) -> frozenset[str] | None:
    """The kinds of figure the config's ``figures`` asks for: None for every kind (true), an
    empty set for none (false), else the listed kinds, each checked against the registry."""
    if value is True:
        return None
    if value is False:
        return frozenset()
    unknown = [kind for kind in value if kind not in FIGURES]
    if unknown:
        raise ConfigError("figures", unknown[0], f"not a kind of figure (known: {', '.join(sorted(FIGURES))})")
    return frozenset(value)


def figures_by_kind(sweep) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """Every figure the sweep draws, by kind (each kind is drawn in one job): its name (the
    file name without ``.png``) and the values of its pattern's wildcards (``case``,
    ``filesystem``), which its caption is rendered with."""
    wanted = figure_kinds_from_config(sweep.config["figures"])
    filesystems = [fs.name for fs in sweep.filesystems]
    names = [
        name.format(filesystem=fs)
        for fs in filesystems
        for spec in CASE_SPECS
        if spec.enabled(sweep)
        for name in spec.figures(sweep)
    ]
    drawn: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for name in dict.fromkeys(names):
        matches = [
            (kind, values)
            for kind, figure in FIGURES.items()
            if (values := figure.match(name, filesystems)) is not None
        ]
        if len(matches) != 1:
            raise ValueError(f"figure {name!r} is of {len(matches)} kinds: {[kind for kind, _ in matches]}")
        kind, values = matches[0]
        if wanted is None or kind in wanted:
            drawn.setdefault(kind, []).append((name, values))
    return drawn


def plot_jobs(sweep) -> dict[str, dict[str, list[tuple[str, dict[str, str]]]]]:
    """The sweep's plot jobs: one per set of tables its figures read (their ``inputs``), named
    by those tables (``summary``, ``summary_measurements``, ``recommendation``), each with the
    figures it draws by kind (:func:`figures_by_kind`). A change of one table redraws only the
    figures that read it; every figure of a job is drawn in one Python."""
    jobs: dict[str, dict[str, list[tuple[str, dict[str, str]]]]] = {}
    for kind, drawn in figures_by_kind(sweep).items():
        jobs.setdefault("_".join(FIGURES[kind].inputs), {})[kind] = drawn
    return jobs


def figure_names(sweep) -> list[str]:
    """Every figure the sweep draws (file names without ``.png``)."""
    return [name for drawn in figures_by_kind(sweep).values() for name, _ in drawn]


def case_spec(name: str) -> CaseSpec:
    """The spec of the case ``name``."""
    for spec in CASE_SPECS:
        if spec.name == name:
            return spec
    raise KeyError(f"no case spec named {name!r} (known: {', '.join(s.name for s in CASE_SPECS)})")


def read_cases_from_config(cases_cfg: dict, shape: Shape, axes: list[str] | None = None) -> list[ReadCase]:
    """The read cases the config enables, in registry order, each checked against ``shape``
    (``axes``: the dataset's axis names, for boxes sized by axis name)."""
    unknown = sorted(set(cases_cfg) - set(CASE_NAMES))
    if unknown:
        raise ConfigError(
            f"cases.{unknown[0]}", cases_cfg[unknown[0]], f"unknown case (known: {', '.join(CASE_NAMES)})"
        )
    found = []
    for name, case_type in READ_CASES.items():
        if name in cases_cfg:
            case = case_type(cases_cfg[name])
            case.check(shape)
            found.append(case)
    for i, entry in enumerate(cases_cfg.get("boxes") or []):
        box = BoxCase(entry, i, axes)
        if box.name in CASE_NAMES or box.name in {c.name for c in found}:
            raise ConfigError(f"cases.boxes[{i}].name", box.name, "is already the name of a case")
        box.check(shape)
        found.append(box)
    return found


def write_case_from_config(cases_cfg: dict) -> WriteCase:
    return WriteCase(cases_cfg.get("write") or {})


def optional_case_from_config(cases_cfg: dict, name: str, dataset_shape: Shape, itemsize: int):
    """The case ``name`` if the config enables it (checked), else None."""
    if name not in cases_cfg:
        return None
    ranks = getattr(OPTIONAL_CASES[name], "ranks", (3,))
    if len(dataset_shape) not in ranks:
        words = {2: "[rows, columns] (2-D)", 3: "[x, y, z]"}
        wanted = " or ".join(words[r] for r in ranks)
        raise ConfigError(f"cases.{name}", cases_cfg[name], f"measures {wanted} datasets only")
    case = OPTIONAL_CASES[name](cases_cfg[name] or {})
    case.check(dataset_shape, itemsize)
    return case


__all__ = [
    "BoxCase",
    "CASE_SPECS",
    "FIGURES",
    "FIGURE_INPUTS",
    "Figure",
    "OWN_JOB_CASES",
    "case_spec",
    "figure_kinds_from_config",
    "figure_names",
    "figures_by_kind",
    "CaseSpec",
    "VARIANT_COLUMNS",
    "CASE_NAMES",
    "READ_CASES",
    "ReadCase",
    "WriteCase",
    "OPTIONAL_CASES",
    "optional_case_from_config",
    "read_cases_from_config",
    "write_case_from_config",
]
