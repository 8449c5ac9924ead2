"""The column registry (h5sweep.storage.columns): every column of every table h5sweep writes
has one entry (name, type, unit) and a description, from which the tables' typing and the
column tables of config/README.md come; modules name columns by its constants."""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

import h5sweep.cases  # noqa: F401 - the cases register the columns they add
from h5sweep import backends
from h5sweep.storage import columns
from h5sweep.sweep.config import column_markers, with_column_tables

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "tiny-columns.json"
KINDS = {
    "str": {columns.STRING},
    "object": {columns.STRING},
    "float64": {columns.FLOAT},
    "Float64": {columns.FLOAT},
    "int64": {columns.INTEGER, columns.FLOAT},  # a number column whose values are all whole
    "Int64": {columns.INTEGER},
    "bool": {columns.BOOLEAN},
    "boolean": {columns.BOOLEAN},
}


def test_the_column_tables_of_config_readme_are_generated_from_the_registry():
    readme = (REPO / "config" / "README.md").read_text()
    assert with_column_tables(readme) == readme, "config/README.md's column tables are stale: run `make docs`"
    for table in columns.TABLES:
        begin, end = column_markers(table)
        assert readme.count(begin) == 1 and readme.count(end) == 1, table


def test_every_described_column_is_registered_and_every_registered_column_described():
    described = {name for group in columns.GROUPS for name in group.names}
    unregistered = [name for name in described if "<" not in name and name not in columns.COLUMNS]
    assert unregistered == []
    assert [name for name in columns.COLUMNS if name not in described] == []


def test_the_tables_columns_are_registered_with_the_type_they_are_written_in():
    golden = json.loads(GOLDEN.read_text())
    for table in ("measurements.parquet", "summary.parquet"):
        for name, dtype in golden[table].items():
            assert columns.kind(name) in KINDS[dtype], (table, name, dtype, columns.kind(name))
    assert [name for name in golden["summary.csv"] if name not in columns.COLUMNS] == []


def test_typing_makes_whole_numbers_rows_lack_nullable_integers_and_leaves_fractions():
    table = pd.DataFrame(
        {
            columns.DEVICE_READ_BYTES: [4096.0, np.nan],
            columns.OPEN_S: [0.5, np.nan],
            columns.STOPPED: [True, None],
            "not_registered": [1.0, np.nan],
        }
    )
    typed = columns.typed(table)
    assert str(typed[columns.DEVICE_READ_BYTES].dtype) == "Int64" and pd.isna(typed[columns.DEVICE_READ_BYTES][1])
    assert typed[columns.OPEN_S].dtype == "float64" and typed["not_registered"].dtype == "float64"
    assert str(typed[columns.STOPPED].dtype) == "boolean"
    fraction = columns.typed(pd.DataFrame({columns.DEVICE_READ_BYTES: [0.5, np.nan]}))
    assert fraction[columns.DEVICE_READ_BYTES].dtype == "float64"  # not whole: left as it is


def _spellings() -> dict[str, set[str]]:
    """Per registered column, the modules of src/h5sweep that spell its name as a string
    (f-strings' text, config keys' declarations and the registry itself aside)."""
    found = defaultdict(set)
    for path in (REPO / "src" / "h5sweep").rglob("*.py"):
        if path.name == "columns.py" and path.parent.name == "storage":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literal_parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
        # a config key declared (Setting("fill", ...)) is the config's name, not the column's
        literal_parts |= {
            id(node.args[0])
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Setting" and node.args
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in columns.COLUMNS and id(node) not in literal_parts:
                found[node.value].add(str(path.relative_to(REPO)))
    return found


def test_column_names_are_spelled_in_at_most_two_modules_but_for_a_few():
    """A column has one owner: the registry, or the case that adds it. Other modules name it by
    the owner's constant; a name spelled in three or more modules (a config key of the same
    name read where the config is) is allowed for at most 10 columns."""
    many = sorted(name for name, modules in _spellings().items() if len(modules) >= 3)
    assert len(many) <= 10, many


def test_only_the_backends_register_columns_named_after_a_backend_or_its_libraries():
    """A column that names a backend or one of its libraries (``hdf5_version``,
    ``zarr_concurrency``, ``ratio_to_hdf5``) is registered by the backends' package; the core
    and the cases never spell one. ``raw_bytes`` is the uncompressed size, not the raw backend."""
    words = set(backends.REGISTRY) | {
        name.removesuffix("_version") for spec in backends.REGISTRY.values() for name in spec.version_columns
    }
    assert {"hdf5", "h5py", "zarr", "tensorstore"} <= words
    named = {name for name in columns.COLUMNS if set(name.split("_")) & words} - {columns.RAW_BYTES}
    assert {"hdf5_version", "zarr_concurrency", backends.RATIO_TO_REFERENCE} <= named
    outside = sorted(name for name in named if not columns.OWNERS[name].startswith("h5sweep.backends"))
    assert outside == []
    for spec in backends.REGISTRY.values():  # what a backend declares is registered
        for name in (*spec.option_columns, *spec.carried_columns, *spec.version_columns):
            assert name in columns.COLUMNS, (spec.name, name)
