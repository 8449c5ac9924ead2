"""The layers stay apart: what the workflow imports at parse time loads no I/O library, and
no module of the package imports one that imports it back."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "h5sweep"
# What rules/common.smk and the Snakefile import while the workflow is parsed.
PARSE_TIME = [
    "h5sweep.sweep.model",
    "h5sweep.sweep.settings",
    "h5sweep.sweep.plan",
    "h5sweep.sweep.resources",
    "h5sweep.sweep.rules",
    "h5sweep.sweep.resume",
    "h5sweep.sweep.config",
    "h5sweep.measure.engine",
    "h5sweep.backends",
    "h5sweep.kit.spec",
    "h5sweep.kit.read",
    "h5sweep.cases",
]
# The package's layers, bottom up: a module imports only from its own layer or those below,
# imports made for type annotations only (under ``if TYPE_CHECKING:``) included.
LAYERS = [
    ["h5sweep"],
    ["h5sweep.storage"],  # errors, layouts, codecs, selections, filesystems, data sources; recordings (trace)
    ["h5sweep.measure"],  # the lock, the page cache, timing, rates, records, the job log, the read copies
    ["h5sweep.measure.engine"],  # the read engine, over the rest of measure: backends and cases as its contracts say
    ["h5sweep.backends", "h5sweep.host"],  # storage backends; host tuning (a command, imported by none below)
    ["h5sweep.kit"],  # what a case is made with: its spec, the rules of a finding, the read cases' base, figures' style
    ["h5sweep.cases"],  # access cases (each its definition, runner, figures, verdict)
    ["h5sweep.sweep"],  # the sweep's definition and plan (parse time); the stages the workflow's scripts call
    ["h5sweep.analyze"],  # analysis
    ["h5sweep.report"],  # figures
    ["h5sweep.compare"],  # commands over finished sweeps: across sweeps; other read mixes (whatif)
    ["h5sweep.cli"],  # the one command, h5sweep, whose subcommands are the commands' modules
]
# The measuring path never imports host tuning.
MEASURING = ["h5sweep.measure", "h5sweep.backends", "h5sweep.kit", "h5sweep.cases", "h5sweep.sweep.stages"]
IO_LIBRARIES = ["h5py", "zarr", "tensorstore", "hdf5plugin", "numcodecs", "mpi4py"]


def test_parse_time_modules_import_no_io_library():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in PARSE_TIME)
        + f"print(','.join(m for m in {IO_LIBRARIES!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """The h5sweep modules a module imports, anywhere in it (function-level imports too)."""
    found = set()
    tree = _tree(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("h5sweep"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("h5sweep"))
    return frozenset(found)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles_in_the_package():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}

    def cycle_from(start):
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    return [*trail, start]
                # a package's __init__ importing its own submodules is how packages work
                if nxt not in seen and not (start.startswith(nxt + ".") or nxt.startswith(start + ".")):
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
        return None

    cycles = [c for c in (cycle_from(m) for m in sorted(graph)) if c]
    assert cycles == [], " -> ".join(cycles[0]) if cycles else ""


def _layer(module: str) -> int:
    best = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    assert best is not None, f"{module} is in no layer of LAYERS"
    return best[0]


def test_each_layer_imports_only_itself_and_those_below():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    upward = []
    for name, path in sorted(modules.items()):
        for imported in sorted(m for m in _imports(path) if m in modules):
            if _layer(imported) > _layer(name):
                upward.append(f"{name} -> {imported}")
    assert upward == []


def test_the_measuring_path_never_imports_host_tuning():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    offenders = [
        name
        for name, path in modules.items()
        if any(name == m or name.startswith(m + ".") for m in MEASURING)
        and any(i == "h5sweep.host" or i.startswith("h5sweep.host.") for i in _imports(path))
    ]
    assert offenders == []


def test_the_package_top_level_stays_small_and_names_no_backend_outside_backends():
    # the layers' packages (host, sweep and compare are commands too, as storage.trace is) and the one command
    # over them (cli)
    assert len([p for p in PACKAGE.iterdir() if p.name != "__pycache__"]) <= 12
    constants = []
    for path in PACKAGE.rglob("*.py"):
        if "backends" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and node.value in ("hdf5", "zarr", "raw"):
                constants.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert constants == []


def _lines(relative: str) -> int:
    return len((PACKAGE / relative).read_text(encoding="utf-8").splitlines())


def test_each_case_owns_its_figures_and_no_module_outgrows_its_room():
    """A case package draws its own figures (its specs name the module), the report's figure
    module and the recommendation stay small, and no file of a case is over 300 lines."""
    import importlib

    from h5sweep.cases import CASE_SPECS

    assert _lines("report/figures.py") <= 350 and _lines("analyze/recommend.py") <= 480
    too_long = [
        str(p.relative_to(PACKAGE))
        for p in (PACKAGE / "cases").rglob("*.py")
        if _lines(str(p.relative_to(PACKAGE))) > 300
    ]
    assert too_long == []
    own = {spec.name: [f for f in spec.plots if f.module] for spec in CASE_SPECS}
    for case in ("parallel", "scaling", "metadata", "iosize"):
        assert own[case], case
        for figure in own[case]:
            assert figure.module.startswith(f"h5sweep.cases.{case}.")
            assert hasattr(importlib.import_module(figure.module), f"plot_{figure.kind}")


def test_the_race_and_the_ranking_share_one_objective_below_the_engine():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    objective = "h5sweep.measure.objective"
    for user in ("h5sweep.measure.engine.race", "h5sweep.analyze.ranking"):
        assert any(i == objective or i.startswith(objective + ".") for i in _imports(modules[user])), user
    assert _layer(objective) < _layer("h5sweep.measure.engine.race")


# What analysis, report, rules and scripts may import of the cases: the registry (the shared
# parts, a spec, the rules of a finding, the figures' style and check, are the kit's,
# h5sweep.kit); a case itself they reach only through its spec's hooks.
CASE_CORE = ("h5sweep.cases",)
WORKFLOW = PACKAGE.parents[1]


def _case_imports(text: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("h5sweep.cases"):
            found.add(node.module)
    return found


def test_analysis_report_comparison_and_the_workflow_name_no_case_package():
    found = {
        str(p.relative_to(WORKFLOW)): _case_imports(p.read_text(encoding="utf-8"))
        for folder in (PACKAGE / "analyze", PACKAGE / "report", PACKAGE / "compare", WORKFLOW / "workflow" / "scripts")
        for p in folder.rglob("*.py")
    }
    for smk in [*(WORKFLOW / "rules").glob("*.smk"), WORKFLOW / "Snakefile"]:
        text = smk.read_text(encoding="utf-8")
        found[str(smk.relative_to(WORKFLOW))] = set(re.findall(r"^from (h5sweep\.cases[\w.]*) import", text, re.M))
    reaching = sorted(f"{where}: {m}" for where, modules in found.items() for m in modules if m not in CASE_CORE)
    assert reaching == []


def test_the_workflows_rules_stay_declarations():
    """The rules' functions live in the package (h5sweep.sweep.rules): rules/common.smk keeps
    the config's loading and checks, at most 250 lines."""
    assert len((WORKFLOW / "rules" / "common.smk").read_text(encoding="utf-8").splitlines()) <= 250


# test files named after what they test run for real, not after a module
BEHAVIOUR_TESTS = {
    "anyrank",
    "backend_contract",
    "boxes",
    "degenerate",
    "examples",
    "faults",
    "fault_analysis",  # faults in the summary, the ranking, the decision and the findings (issue 69)
    "s3_outage",  # an object store's server gone mid-sweep, an upload cut short
    "toy_target",  # a storage target added as one module and one registry line
    "circuit_breaker",  # SeaweedFS's own 503s and what each client does about them
    "findings_guide",  # the User's Guide ch. 14 findings (h5sweep.cases.studies.guide, cases.metadata.findings)
    "findings_iolab",  # the HDF5 I/O lab's findings (h5sweep.cases.studies.iolab, cases.iosize.findings)
    "findings_kang",  # Kang et al.'s findings (h5sweep.cases.studies.kang)
    "findings_openmsi",  # the OpenMSI study's findings (h5sweep.cases.studies.openmsi)
    "findings_parallel",  # Folk & Choi's and the local-scaling findings (cases.parallel and cases.scaling findings)
    "fuse",
    "generated_configs",
    "layering",
    "lint",
    "recording",
    "slurm",
    "suite",  # the suite's own rules (which tests start Snakemake)
    "toy_case",
    "toy_codec",
    "transposed",
    "variants",
    "workflow",
}


def test_every_test_file_is_named_after_a_module_that_exists_or_a_behaviour():
    """``tests/test_<name>.py`` tests the module or package ``<name>`` of h5sweep (or the
    bench), or a behaviour named in BEHAVIOUR_TESTS: a module renamed or removed leaves no test
    file under its old name."""
    package = PACKAGE
    modules = {p.stem for p in package.rglob("*.py")} | {p.name for p in package.rglob("*") if p.is_dir()}
    names = {p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")}
    assert names - modules - {"bench"} - BEHAVIOUR_TESTS == set()
    assert names >= BEHAVIOUR_TESTS  # the list names only test files that exist


# The smallest plug-in of each kind whose files docs/architecture.md counts ("Adding a plug-in",
# 2 files each), with the one file of its registry that names it.
SMALLEST_PLUG_INS = {
    "cases/column.py": "cases/__init__.py",  # a read case
    "backends/raw.py": "backends/__init__.py",  # a storage backend
    "storage/codecs/bzip2.py": "storage/codecs/__init__.py",  # a codec
    "storage/targets/posix.py": "storage/targets/__init__.py",  # a storage target
}


def _names_it(path: Path, module: str, own: set[str]) -> bool:
    """Whether a file imports ``module``, names it (its dotted name, or its last part in a
    ``*_MODULES`` registry), or uses a class or function it defines."""
    tree = _tree(path)
    if module in _imports(path):
        return True
    stem = module.rpartition(".")[2]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == module:
            return True
        registry = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.endswith("_MODULES") for t in node.targets
        )
        if registry and any(isinstance(c, ast.Constant) and c.value == stem for c in ast.walk(node.value)):
            return True
        if isinstance(node, ast.Name) and node.id in own or isinstance(node, ast.Attribute) and node.attr in own:
            return True
    return False


def test_the_smallest_plug_in_of_each_kind_is_its_module_and_its_registry_file():
    """No other file of the package or the workflow's scripts names it: a plug-in of its kind
    touches the two files docs/architecture.md counts."""
    others = [*PACKAGE.rglob("*.py"), *(WORKFLOW / "workflow" / "scripts").glob("*.py")]
    for relative, registry in SMALLEST_PLUG_INS.items():
        path = PACKAGE / relative
        tree = _tree(path)
        own = {
            n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and not n.name.startswith("_")
        }
        naming = {
            p.relative_to(PACKAGE).as_posix() for p in others if p != path and _names_it(p, _module_name(path), own)
        }
        assert naming == {registry}, relative
