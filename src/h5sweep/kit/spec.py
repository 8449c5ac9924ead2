"""What the workflow needs to know of a case, declared next to the case (``SPEC`` in its
module) and registered in :data:`h5sweep.cases.CASE_SPECS`. The targets, the figure list, the
summary's variant columns, the plan and every job's resources are derived from these.

A case that runs in a job of its own (``runner``) needs no rule or script of its own: the
workflow's ``measure_store_case`` and ``measure_filesystem_case`` rules run any such case by
name, and ``measure_mpi_case`` any MPI case (``mpi_tasks``). Adding one is its module (case,
``SPEC``, runner), its registration, its test config, test and docs. A figure of its own is a
:class:`Figure` in its spec's ``plots``, a function ``plot_<kind>`` in
:mod:`h5sweep.report.figures` and a caption in ``workflow/report/``: the plot rules are
generated from the specs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from h5sweep.storage import columns

# A case runs once per test store (the grid of backends x layouts x compression on every
# filesystem) or once per filesystem.
SCOPES = ("store", "filesystem")


def _one_thread(sweep) -> int:
    return 1


def _no_scratch(sweep) -> int:
    return 0


# What a figure may read (the plot rule's inputs, under results/<sweep>/).
FIGURE_INPUTS = {
    "summary": "summary.parquet",
    "measurements": "measurements.parquet",
    "recommendation": "recommendation.csv",
}


@dataclass(frozen=True)
class Figure:
    """One kind of figure: drawn by ``plot_<kind>`` (in ``module``, else in the report) into
    ``plots/<pattern>.png``, one per value of its wildcards (``{case}``, ``{filesystem}``). Its
    rule's one job draws every figure of the kind, its caption rendered for each."""

    kind: str
    pattern: str
    category: str  # the report's section
    caption: str = ""  # workflow/report/<caption>.rst (the kind if empty)
    inputs: tuple[str, ...] = ("summary",)  # of FIGURE_INPUTS
    labels: tuple[tuple[str, str], ...] = ()  # the report's labels besides its wildcards
    # the module whose plot_<kind> draws it, where a case package draws its own figures
    # (empty: the report's, h5sweep.report)
    module: str = ""

    @property
    def wildcards(self) -> list[str]:
        return [w for w in ("case", "filesystem") if "{" + w + "}" in self.pattern]

    def name(self, **values: str) -> str:
        """The figure's name with the given wildcards filled in (the others kept as ``{w}``)."""
        return self.pattern.format(**{w: values.get(w, "{" + w + "}") for w in self.wildcards})

    def match(self, name: str, filesystems: list[str]) -> dict[str, str] | None:
        """The values of this kind's wildcards if ``name`` is one of its figures, else None
        (a filesystem is one of ``filesystems``; a case a registered case name's form)."""
        import re

        parts = re.split(r"(\{case\}|\{filesystem\})", self.pattern)
        groups = {
            "{case}": r"(?P<case>[a-z][a-z0-9_]*)",
            "{filesystem}": "(?P<filesystem>" + "|".join(map(re.escape, filesystems)) + ")",
        }
        found = re.fullmatch("".join(groups.get(part, re.escape(part)) for part in parts), name)
        return None if found is None else found.groupdict()

    def caption_file(self, report_dir):
        """Its caption: ``<caption or kind>.rst`` beside the module that draws it, where the case
        package keeps it there, else in ``report_dir`` (``workflow/report``)."""
        import importlib.util
        from pathlib import Path

        name = f"{self.caption or self.kind}.rst"
        if self.module:
            spec = importlib.util.find_spec(self.module)
            beside = Path(spec.origin).parent / name if spec and spec.origin else None
            if beside is not None and beside.is_file():
                return beside
        return Path(report_dir) / name

    def report_labels(self, values: dict[str, str]) -> dict:
        """Its labels in the report: its own, and its wildcards' values."""
        return {**dict(self.labels), **values}


# A case's variants side by side (read options and policies, write strategies and fill times).
VARIANTS = Figure("variants", "variants-{case}-{filesystem}", "Variants")


@dataclass(frozen=True)
class CaseSpec:
    name: str
    scope: str
    stage: str  # its record: raw/<filesystem>/<backend>/<layout>/<compression>/<stage>.parquet or
    #             raw/<filesystem>/<stage>.parquet
    variant_columns: tuple[str, ...]  # the settings that make a variant, carried into the summary
    enabled: Callable[[object], bool]  # whether a sweep runs it
    # its figures' names (Figure.name, with {filesystem}) for a sweep, of the kinds in ``plots``
    figures: Callable[[object], list[str]]
    # (job seconds, timed seconds) of one of its jobs, for a test store (store scope: an object
    # with .layout and .compression) or a filesystem; from_device is false on a filesystem that
    # keeps its files in memory. Built from h5sweep.measure.rates.
    job_cost: Callable[[object, object, bool], tuple[float, float]]
    # Cases with a job of their own: "module:function" that measures, imported only in the job;
    # store scope: function(job, backend, store_path, source) -> rows; filesystem scope:
    # function(directory, case, data, settle_s) -> rows (settle_s: the filesystem's rest before a
    # timed write, h5sweep.measure.settle). None: the case runs inside generate or query.
    runner: str | None = None
    mem_mb: Callable[[object], int] | None = None  # its job's memory at the first attempt
    threads: Callable[[object], int] = _one_thread  # its job's threads
    scratch_bytes: Callable[[object], int] = _no_scratch  # files it writes beside the test stores
    backends: tuple[str, ...] | None = None  # store scope: the backends whose stores it runs on (None: all)
    # An MPI case: its job is an allocation of its own (not grouped with its store's
    # generation) of this many tasks, one CPU and mem_mb / tasks each; the job starts its
    # ranks itself (srun inside SLURM, mpirun locally). None: an ordinary job.
    mpi_tasks: Callable[[object], int] | None = None
    # an MPI case's ranks per node (None: as the scheduler places them)
    mpi_tasks_per_node: Callable[[object], int | None] = field(default=lambda sweep: None, repr=False)
    plots: tuple[Figure, ...] = ()  # the kinds of figure it draws (each gets a plot rule)
    # store scope: which stores it runs on besides ``backends`` (an object with .backend, .layout)
    applies: Callable[[object], bool] = field(default=lambda store: True, repr=False)
    read_options: str = "first"  # store scope, a job of its own: the backend's first read option, or "all"
    # A case that runs only where the config names it (``cases.<name>``): the class built from
    # that entry (its ``ranks``: the dataset ranks it measures; ``check(shape, itemsize)``);
    # the sweep holds it by name (``sweep.<name>``, None where not configured).
    settings_type: type | None = None
    # Its refusals that need the whole grid, before any job: ``check_grid(case, grid)`` with
    # ``grid.shape``, ``grid.compressions`` (the config's order) and ``grid.stores`` (every
    # test store: ``.backend``, ``.layout``, ``.compression``).
    check_grid: Callable[[object, object], None] | None = field(default=None, repr=False)
    # Its blocks under ``cases`` in the config (h5sweep.storage.declared: each setting's type, default,
    # bounds and description, beside the code that reads it; the schema and config/README.md
    # take them from here). None: its ``settings_type``'s ``SETTINGS``, where it has one.
    settings: Callable[[], tuple] | None = field(default=None, repr=False)
    # What it adds to the sweep's outputs, each "module:name", imported only by the analysis
    # that uses it (:meth:`hook`):
    # - findings: a tuple of h5sweep.kit.claims.Finding, checked on every filesystem's summary;
    # - verdict: function(summary, measurements) -> its section of recommendation.md ("## Title"
    #   then text; "" where it has nothing to say);
    # - summary: function(rows, keys) -> its summary columns, one row per group of ``keys``
    #   (merged into summary.parquet; None where its rows are not in ``rows``);
    # - compare: function(runs, out, roles) -> its section of ``python -m h5sweep.compare``'s
    #   comparison.md (lines; [] where the sweeps hold nothing of it to compare), its own tables
    #   and figures written to ``out`` (each run: ``.summary``, ``.shape``, ``.sweep``, ``.path``),
    #   given the roles the user named (``--role``: role -> party name);
    # - compared_findings: a tuple of h5sweep.kit.claims.Comparative, judged across sweeps.
    findings: str | None = None
    verdict: str | None = None
    summary: str | None = None
    compare: str | None = None
    compared_findings: str | None = None
    # What stops a run of a sweep that has it (not a dry run) before any job starts, in words
    # (the MPI environment its jobs need), or None
    run_check: Callable[[object], str | None] | None = field(default=None, repr=False)

    def hook(self, name: str):
        """The object one of its hooks names (``findings``, ``verdict``, ``summary``, ``compare``,
        ``compared_findings``), or None; checked against the hook's kind (:data:`HOOKS`): a
        hook of the wrong kind is a TypeError naming the case and the hook."""
        import importlib

        target = getattr(self, name)
        if target is None:
            return None
        module, attr = target.split(":")
        found = getattr(importlib.import_module(module), attr)
        HOOKS[name].check(self.name, target, found)
        return found

    def config_blocks(self) -> tuple:
        """The config blocks it declares (:class:`h5sweep.storage.declared.Block`)."""
        if self.settings is not None:
            return tuple(self.settings())
        declared = getattr(self.settings_type, "SETTINGS", None)
        return () if declared is None else (declared,)

    def runs_on(self, store) -> bool:
        """Whether a store-scope case runs on this test store (an object with ``.backend``)."""
        return (self.backends is None or store.backend.name in self.backends) and self.applies(store)

    def __post_init__(self):
        for name in HOOKS:  # each "module:name"; its object is checked where it is first asked
            target = getattr(self, name)
            if target is not None and (target.count(":") != 1 or not all(target.split(":"))):
                raise ValueError(f"case {self.name}: hook {name}={target!r} is not 'module:name'")
        if self.scope not in SCOPES:
            raise ValueError(f"case {self.name}: scope must be one of {SCOPES}")
        if self.runner is not None and (self.stage != self.name or self.mem_mb is None):
            raise ValueError(f"case {self.name}: a case with its own job records as its name and declares mem_mb")
        unregistered = [c for c in self.variant_columns if columns.kind(c) is None]
        if unregistered:  # their types and meanings come from the registry (h5sweep.storage.columns)
            raise ValueError(f"case {self.name}: variant columns {unregistered} are not registered columns")
        if self.mpi_tasks is not None and (self.runner is None or self.scope != "store"):
            raise ValueError(f"case {self.name}: an MPI case has a job of its own per test store")

    @property
    def has_own_job(self) -> bool:
        return self.runner is not None


@dataclass(frozen=True)
class HookKind:
    """What a case's hook must be: a function of these parameters, or a tuple of these claims
    (``claims``: the name of the class in :mod:`h5sweep.kit.claims` its items are)."""

    parameters: tuple[str, ...] = ()
    claims: str = ""

    def check(self, case: str, target: str, found) -> None:
        import inspect

        if self.claims:
            from h5sweep.kit import claims

            kind = getattr(claims, self.claims)
            if not isinstance(found, tuple) or not all(isinstance(item, kind) for item in found):
                raise TypeError(f"case {case}: hook {target} must be a tuple of {self.claims}, not {found!r:.80}")
            return
        try:
            inspect.signature(found).bind(*self.parameters)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"case {case}: hook {target} must be a function of ({', '.join(self.parameters)}): {err}"
            ) from err


# A case's hooks by kind, as :class:`CaseSpec` describes each
HOOKS = {
    "findings": HookKind(claims="Finding"),
    "verdict": HookKind(("summary", "measurements")),
    "summary": HookKind(("rows", "keys")),
    "compare": HookKind(("runs", "out", "roles")),
    "compared_findings": HookKind(claims="Comparative"),
}
