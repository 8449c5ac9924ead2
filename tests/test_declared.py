"""Settings declared once (h5sweep.storage.declared): every case's block under ``cases`` comes from its
declaration, the schema and config/README.md show it, and no default it declares is written
again in the code."""

import ast
from pathlib import Path

import jsonschema
import pytest
import yaml

from h5sweep.cases import CASE_NAMES, config_blocks
from h5sweep.storage.declared import Block, Setting
from h5sweep.sweep.config import SCHEMA_PATH, key_table, load_schema, validate_schema

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "h5sweep"


def _schema_defaults(node: dict, path: str, out: list[tuple[str, str, object]]) -> None:
    """(key, dotted path, default) of every key of the loaded schema that has a default."""
    if not isinstance(node, dict):
        return
    if "default" in node and path:
        out.append((path.rsplit(".", 1)[-1], path, node["default"]))
    for name, sub in (node.get("properties") or {}).items():
        _schema_defaults(sub, f"{path}.{name}" if path else name, out)
    for sub in (node.get("items"), node.get("additionalProperties"), *(node.get("oneOf") or [])):
        _schema_defaults(sub, f"{path}.<name>" if sub is node.get("additionalProperties") else path, out)


def _declared() -> list[tuple[str, str, object]]:
    """Every default the config has: each declared block's (the cases', the backends', the
    race's, a filesystem's) and each key of the sweep's own sections, as the loaded schema
    holds them."""
    out: list[tuple[str, str, object]] = []
    _schema_defaults(load_schema(), "", out)
    return out


def test_every_case_of_the_config_has_its_block_from_its_declaration_and_none_in_the_schema_file():
    raw = yaml.safe_load(SCHEMA_PATH.read_text())
    assert raw["properties"]["cases"]["properties"] == {}  # nothing written there
    for own in ("zarr", "chunk_cache"):  # a backend's own block, declared beside its code
        assert own not in raw["properties"] and own in load_schema()["properties"]
    blocks = config_blocks()
    assert set(blocks) == set(CASE_NAMES)
    cases = load_schema()["properties"]["cases"]["properties"]
    for name, block in blocks.items():
        assert cases[name] == block.schema()
        jsonschema.Draft202012Validator.check_schema(block.schema())
        if not block.required:  # its defaults are a valid entry (a required key has none to give)
            jsonschema.validate(block.defaults(), block.schema())
    table = key_table()
    assert "| `cases.parallel.repeats` | `6` | Whole passes per operation, mode and k" in table


def test_a_case_reads_the_default_its_block_declares():
    from h5sweep.cases import read_cases_from_config
    from h5sweep.cases.parallel.core import ParallelCase
    from h5sweep.cases.write import WriteCase

    (spectra,) = read_cases_from_config({"spectra": {}}, (10, 10, 100))
    assert spectra.repeats == spectra.SETTINGS.setting("repeats").default == 50
    assert spectra.size((10, 10, 100)) == (5, 5, 100)
    assert WriteCase({}).strategies == ["chunk"] and ParallelCase({}).repeats == 6
    from conftest import REPO

    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["cases"] = {"slice": {}}
    config = validate_schema(config, load_schema())
    assert config["cases"]["slice"] == {"repeats": 50, "depth": 25, "race": True, "cold": "every"}


def _literal(node):
    """The value of a constant expression (``1 << 20`` too), else its source text."""
    if all(isinstance(n, ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop) for n in ast.walk(node)):
        return eval(compile(ast.Expression(node), "<default>", "eval"))  # constants and operators only
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def test_no_default_of_the_config_is_written_again_in_the_code():
    """A setting read as ``x.get("name", <its default>)`` or ``x.get("name") or <its default>``,
    or put in front of an entry as ``{"name": <its default>, **entry}``, writes its default a
    second time: the code reads the config with its defaults filled in from their one
    declaration (a block's, or the schema's for the sweep's own sections)."""
    defaults: dict[str, list] = {}
    for name, where, default in _declared():
        defaults.setdefault(name, []).append((where, default))
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                if len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
                    pairs.append((node.args[0].value, node.args[1]))
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
                first, second = node.values
                if (
                    isinstance(first, ast.Call)
                    and isinstance(first.func, ast.Attribute)
                    and first.func.attr == "get"
                    and len(first.args) == 1
                    and isinstance(first.args[0], ast.Constant)
                ):
                    pairs.append((first.args[0].value, second))
            elif isinstance(node, ast.Dict) and None in node.keys:  # {"key": value, **entry}
                pairs += [
                    (k.value, v) for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)
                ]
            for name, value in pairs:
                for where, default in defaults.get(name, []):
                    if default not in (None, "", [], {}) and _literal(value) == default:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}={default!r} ({where})")
    assert found == [], "\n".join(found)


def test_the_sweeps_own_sections_and_a_filesystem_have_their_defaults_filled():
    from h5sweep.storage.filesystems import FILESYSTEM, filesystems_from_config
    from h5sweep.sweep.config import filled_section

    assert filled_section("layouts")["orders"] == ["xyz"] and filled_section("layouts")["contiguous"] is True
    assert filled_section("recommend")["objective"] == "time"
    assert filled_section("score", {"figure": True})["scale_to_selection"] is True
    schema = load_schema()["properties"]["filesystems"]["additionalProperties"]["oneOf"]
    assert FILESYSTEM.object_schema() in schema
    (fs,) = filesystems_from_config({"disk": "/tmp"}, probe=False)
    assert (fs.required, fs.read_copies, fs.settle_s, fs.stripe) == (True, 1, None, None)


def test_a_block_refuses_a_setting_declared_twice_or_an_unknown_schema_word():
    with pytest.raises(ValueError, match="declared twice"):
        Block("b", "", (Setting("a", "integer", 1), Setting("a", "integer", 2)))
    with pytest.raises(ValueError, match="unknown schema words"):
        Setting("a", "integer", 1, bounds={"minimun": 1})
