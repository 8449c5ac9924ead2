"""The layers stay apart: what the workflow imports at parse time loads no I/O library, and
no module of the package imports one that imports it back."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "h5sweep"
# What rules/common.smk and the Snakefile import while the workflow is parsed.
PARSE_TIME = ["h5sweep.grid", "h5sweep.jobs", "h5sweep.plan", "h5sweep.resources", "h5sweep.config"]
IO_LIBRARIES = ["h5py", "zarr", "tensorstore", "hdf5plugin", "numcodecs", "mpi4py"]


def test_parse_time_modules_import_no_io_library():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in PARSE_TIME)
        + f"print(','.join(m for m in {IO_LIBRARIES!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""


def _imports(path: Path) -> set[str]:
    """The h5sweep modules a module imports, anywhere in it (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("h5sweep"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("h5sweep"))
    return found


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
