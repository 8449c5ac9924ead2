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


def _declared() -> list[tuple[str, Setting]]:
    from h5sweep.backends import REGISTRY
    from h5sweep.cases.engine.race import SETTINGS as RACE

    blocks = [*config_blocks().values(), RACE, *(spec.settings for spec in REGISTRY.values() if spec.settings)]
    return [(block.name, setting) for block in blocks for setting in block.settings]


def test_every_case_of_the_config_has_its_block_from_its_declaration_and_none_in_the_schema_file():
    raw = yaml.safe_load(SCHEMA_PATH.read_text())
    assert raw["properties"]["cases"]["properties"] == {}  # nothing written there
    assert "zarr" not in raw["properties"] and "zarr" in load_schema()["properties"]  # the backend's own
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
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def test_no_declared_default_is_written_again_in_the_code():
    """A declared setting read as ``x.get("name", <its default>)``, or put in front of an entry as
    ``{"name": <its default>, **entry}``, writes its default a second time."""
    defaults: dict[str, list] = {}
    for block, setting in _declared():
        defaults.setdefault(setting.name, []).append((block, setting.default))
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                if len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
                    pairs.append((node.args[0].value, node.args[1]))
            elif isinstance(node, ast.Dict) and None in node.keys:  # {"key": value, **entry}
                pairs += [
                    (k.value, v) for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)
                ]
            for name, value in pairs:
                for block, default in defaults.get(name, []):
                    if default not in (None, "", [], {}) and _literal(value) == default:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}={default!r} ({block})")
    assert found == [], "\n".join(found)


def test_a_block_refuses_a_setting_declared_twice_or_an_unknown_schema_word():
    with pytest.raises(ValueError, match="declared twice"):
        Block("b", "", (Setting("a", "integer", 1), Setting("a", "integer", 2)))
    with pytest.raises(ValueError, match="unknown schema words"):
        Setting("a", "integer", 1, bounds={"minimun": 1})
