"""The suite's own rules: `make test-fast` starts no Snakemake (every test that does is marked
``workflow`` or ``slurm``, which it deselects)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
# What starts Snakemake in a test: the harness's copies of the workflow (tests/conftest.py),
# the runner of a test config, the command itself
STARTERS = {"Workflow", "ProjectCopy", "run_test_config", "SNAKEMAKE"}
RUNS = {"run", "Popen", "popen", "call", "check_call", "check_output"}
MARKS = ("mark.workflow", "mark.slurm")


def _is_snakemake(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and node.value == "snakemake") or (
        isinstance(node, ast.List | ast.Tuple) and bool(node.elts) and _is_snakemake(node.elts[0])
    )


def _direct(function: ast.AST) -> set[str]:
    """What in ``function`` may start Snakemake: the starters it names, ``"snakemake"`` as the
    command of a call that runs one, and every other name it uses (a helper, a fixture)."""
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in RUNS and node.args and _is_snakemake(node.args[0]):
                found.add("SNAKEMAKE")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not function:
            found.add(node.name)
    if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        found.update(arg.arg for arg in function.args.args)  # its fixtures
    return found


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def starting_snakemake(path: Path, shared: dict[str, ast.AST]) -> list[str]:
    """The test functions of a test module that start Snakemake, themselves or through a
    helper or fixture of the module or of conftest.py (``shared``), and are not marked
    ``workflow`` or ``slurm``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module_marked = any(
        any(mark in ast.unparse(node) for mark in MARKS)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
    )
    functions = {**shared, **_functions(tree)}
    uses = {name: _direct(node) for name, node in functions.items()}
    memo: dict[str, bool] = {}

    def starts(name: str, seen: frozenset = frozenset()) -> bool:
        if name in STARTERS:
            return True
        if name not in uses or name in seen:
            return False
        if name not in memo:
            memo[name] = any(starts(used, seen | {name}) for used in uses[name])
        return memo[name]

    tests = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    return [
        node.name
        for node in tests
        if not module_marked
        and not any(mark in ast.unparse(d) for d in node.decorator_list for mark in MARKS)
        and any(starts(used) for used in _direct(node) - {node.name})
    ]


def test_every_test_that_starts_snakemake_is_marked_workflow_or_slurm():
    shared = _functions(ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8")))
    # this module's test of the harness's own check names a starter, which stops it
    paths = [path for path in sorted(TESTS.glob("test_*.py")) if path.name != Path(__file__).name]
    found = {path.name: starting_snakemake(path, shared) for path in paths}
    unmarked = {name: tests for name, tests in found.items() if tests}
    assert unmarked == {}, "mark these @pytest.mark.workflow: `make test-fast` runs no Snakemake"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("def test_a(workflow):\n    workflow.run('-n')\n", ["test_a"]),  # conftest's fixture
        (
            "from conftest import run_test_config\ndef test_a(tmp_path):\n    run_test_config(tmp_path, 'x')\n",
            ["test_a"],
        ),
        ("def _sweep(p):\n    return Workflow(p)\ndef test_a(tmp_path):\n    _sweep(tmp_path)\n", ["test_a"]),
        (
            "@pytest.fixture\ndef done(tmp_path):\n    Workflow(tmp_path).run()\ndef test_a(done):\n    pass\n",
            ["test_a"],
        ),
        ("def test_a(project):\n    project.run('snakemake', '--cores', '1')\n", ["test_a"]),
        ("import subprocess\ndef test_a():\n    subprocess.run(['snakemake', '--lint'])\n", ["test_a"]),
        ("import pytest\n@pytest.mark.workflow\ndef test_a(workflow):\n    workflow.run()\n", []),
        ("import pytest\npytestmark = [pytest.mark.slurm]\ndef test_a(workflow):\n    workflow.run()\n", []),
        ("def test_a():\n    assert executor_of(['snakemake', '-n']) == 'local'\n", []),  # not a run
        ("def test_a(tmp_path):\n    assert tmp_path\n", []),
    ],
)
def test_the_check_finds_a_start_of_snakemake_however_a_test_reaches_it(tmp_path, source, found):
    shared = _functions(ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8")))
    path = tmp_path / "test_x.py"
    path.write_text(source, encoding="utf-8")
    assert starting_snakemake(path, shared) == found


def test_a_test_not_marked_workflow_that_starts_snakemake_fails_naming_the_mark(tmp_path):
    from conftest import ProjectCopy, Workflow

    with pytest.raises(
        pytest.fail.Exception, match=r"test_suite\.py::.* starts Snakemake: mark it @pytest\.mark\.workflow"
    ):
        Workflow(tmp_path / "wf").run("--version")
    with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.workflow"):
        ProjectCopy(tmp_path / "copy").run("snakemake", "--version")
    assert ProjectCopy(tmp_path / "other").run("python", "-c", "print(1)").stdout == "1\n"  # not Snakemake: runs


def test_a_serial_mark_is_put_only_where_the_makefile_finds_it():
    """make test's serial phase collects the test modules whose text says ``mark.serial``
    (SERIAL_MODULES): a serial mark made anywhere else (a helper module's or conftest's mark
    handed to tests, ``add_marker``) would leave its tests out of both phases."""
    elsewhere = [
        p.name
        for p in TESTS.rglob("*.py")
        if not p.name.startswith("test_") and re.search(r"mark\.serial|add_marker\([^)]*serial", p.read_text())
    ]
    assert elsewhere == []
    added = [p.name for p in TESTS.glob("test_*.py") if re.search(r"add_marker\([^)]*serial", p.read_text())]
    assert added == []
