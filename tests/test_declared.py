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
    assert raw["properties"]["cases"] == {}  # nothing written there
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


# top-level keys load_schema completes from registries: the codecs' names, the backends', a
# filesystem's keys, the cases' blocks, the race's keys
COMPLETED = {"compression", "backends", "filesystems", "cases", "race"}


def test_the_sweeps_own_sections_declared_in_code_have_an_empty_stub_in_the_schema_file():
    from h5sweep.sweep.sections import SECTIONS, TOP

    raw = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]
    loaded = load_schema()["properties"]
    assert [k for k in loaded if k in raw] == list(raw)  # each in its stub's place: the key table's order
    for declared in (*TOP, *SECTIONS):
        assert raw[declared.name] == {}, declared.name  # nothing written there
        if declared.name in COMPLETED:  # what their registries declare is added in
            assert loaded[declared.name]["default"] == declared.default
        else:
            assert loaded[declared.name] == declared.schema()
        jsonschema.Draft202012Validator.check_schema(declared.schema())
    for block in SECTIONS:  # a section left out of a config is filled with its declared defaults
        jsonschema.validate(block.defaults(), block.schema())
    table = key_table()
    assert '| `recommend.statistic` | `"first-access"` | Which reads matter: first-access' in table
    assert '| `sweep` | `"demo"` | Name of the sweep; all outputs go to results/<sweep>/. |' in table


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


# Keys named like a declared one that are not it, each with why.
NOT_THE_SETTING = {
    ("cases/write/race.py", "seed"): "the write race's own resampling seed, not dataset.seed",
    ("storage/latency.py", "seed"): "a fault schedule's own seed, not dataset.seed",
    ("storage/declared.py", "default"): "a block's schema, where its default is declared",
}


def _declaration_read(node) -> bool:
    """``X.default``, ``X.defaults()``, ``X.setting("k").default``: a declared default read."""
    return (isinstance(node, ast.Attribute) and node.attr == "default") or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "defaults"
    )


def _default_constants(declared: set) -> dict[str, bool]:
    """The package's module-level constants named as defaults (``DEFAULT_...``) that hold a
    declared default: by name -> whether they read it from its declaration (also one built
    from it: ``ChunkCache.from_config(SETTINGS.defaults())``), else they write its value again."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if "DEFAULT" not in name.upper():
                    continue
                if any(_declaration_read(sub) for sub in ast.walk(node.value)):
                    out[name] = True
                elif repr(_literal(node.value)) in declared:
                    out[name] = False
    return out


NOT_A_VALUE = object()


def _value(node):
    """The value of a literal or a constant expression, else :data:`NOT_A_VALUE`."""
    try:
        found = _literal(node)
    except Exception:  # an expression of names: not a literal
        return NOT_A_VALUE
    return NOT_A_VALUE if isinstance(found, str) and not isinstance(node, ast.Constant) else found


def _named_values() -> dict[str, list]:
    """Every module-level constant of the package (an upper-case name bound to a literal): by
    name -> the values it holds (a name may be bound in more than one module)."""
    out: dict[str, list] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name.isupper() and (found := _value(node.value)) is not NOT_A_VALUE:
                    out.setdefault(name, []).append(found)
    return out


def _same(a, b) -> bool:
    """Equal and of the same type (``True`` is not the declared ``1``)."""
    return type(a) is type(b) and a == b


def _get_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"


def _read_key(node) -> str | None:
    """The key an expression reads: ``x.get("k")``, ``x["k"]`` or ``x.k``."""
    if _get_call(node) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        return node.args[0].value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value
    return node.attr if isinstance(node, ast.Attribute) else None


def _defaults_written(node) -> list[tuple[str | None, ast.AST, bool]]:
    """(key, the default the code gives it, whether it is a dataclass field's) of ``node``:
    ``x.get("k", V)``; ``A or V`` (A reading key k); ``B if A else V``; ``{"k": V, **entry}``; a dataclass's
    ``k: T = V`` (or ``field(default=V)``)."""
    if _get_call(node) and len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
        return [(node.args[0].value, node.args[1], False)]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return [(_read_key(a), b, False) for a, b in zip(node.values, node.values[1:], strict=False)]
    if isinstance(node, ast.IfExp):  # read(A) if A else V
        return [(_read_key(node.test), node.orelse, False)]
    if isinstance(node, ast.Dict) and None in node.keys:  # {"key": value, **entry}
        return [(k.value, v, False) for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)]
    out = []
    if isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                value = item.value
                if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
                    value = next((kw.value for kw in value.keywords if kw.arg == "default"), None)
                if value is not None:
                    out.append((item.target.id, value, True))
    return out


def _declared_default_in(value: ast.AST, constants: dict) -> str | None:
    """The default constant or the read of a declaration a fallback is computed from
    (``[DEFAULT_CACHE.settings()]``, ``SETTINGS.defaults()["margin"]``), else None."""
    for sub in ast.walk(value):
        name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
        if name in constants or _declaration_read(sub):
            return ast.unparse(sub)
    return None


def _restated(tree: ast.AST, where: str, defaults: dict, constants: dict, named: dict | None = None) -> list[str]:
    """Each default of the config written again in one module: by value (the declared
    default's literal), by the name of a default constant (a fallback with one, or a
    dataclass field with one that writes the value again), by a fallback computed from a
    default constant or a declaration (``x.get("k") or [DEFAULT_CACHE.settings()]``), or by
    the name of any constant that holds the key's declared default (``named``:
    :func:`_named_values`)."""
    found = []
    for node in ast.walk(tree):
        for name, value, is_field in _defaults_written(node):
            constant = value.id if isinstance(value, ast.Name) else getattr(value, "attr", None)
            if constant in constants and not (is_field and constants[constant]):
                found.append(f"{where}:{value.lineno}: {name} defaults to {constant}, a declared default")
                continue
            used = None if is_field or (where, name) in NOT_THE_SETTING else _declared_default_in(value, constants)
            if used is not None:
                found.append(f"{where}:{value.lineno}: {name or 'a value'} falls back to {used}, a declared default")
                continue
            if name is None or (where, name) in NOT_THE_SETTING:
                continue
            for declared, default in defaults.get(name, []):
                if default in (None, "", [], {}):
                    continue
                if _literal(value) == default:
                    found.append(f"{where}:{value.lineno}: {name}={default!r} ({declared})")
                elif constant in (named or {}) and any(_same(v, default) for v in named[constant]):
                    found.append(f"{where}:{value.lineno}: {name} defaults to {constant} = {default!r} ({declared})")
    return found


def _config_defaults() -> dict[str, list]:
    defaults: dict[str, list] = {}
    for name, where, default in _declared():
        defaults.setdefault(name, []).append((where, default))
    return defaults


def test_no_default_of_the_config_is_written_again_in_the_code():
    """A setting read as ``x.get("name", <its default>)`` or ``x.get("name") or <its default>``,
    put in front of an entry as ``{"name": <its default>, **entry}``, or given as a dataclass
    field's default, writes its default a second time: the code reads the config with its
    defaults filled in from their one declaration (a block's, or the schema's for the sweep's
    own sections). So does a fallback to a constant that holds a declared default
    (``x.get("objective", DEFAULT_OBJECTIVE)``): a dataclass field may take the declared
    default from its declaration (``SETTINGS.setting("k").default``), never its value again."""
    defaults = _config_defaults()
    constants = _default_constants({repr(d) for each in defaults.values() for _, d in each if d not in (None, "")})
    assert constants["DEFAULT_OBJECTIVE"] is True  # recommend.objective's, read from its declaration
    named = _named_values()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += _restated(tree, str(path.relative_to(PACKAGE)), defaults, constants, named)
    assert found == [], "\n".join(found)


def test_the_check_finds_a_default_restated_by_value_or_by_the_name_of_its_constant():
    defaults = _config_defaults()
    constants = {"DEFAULT_OBJECTIVE": True, "WRITTEN_DEFAULT": False, "DEFAULT_CACHE": True}
    code = """
from dataclasses import dataclass, field
a = settings.get("objective", DEFAULT_OBJECTIVE)
b = recommend.get("objective") or objectives.DEFAULT_OBJECTIVE
c = race["margin"] or 1.25
d = settings.get("statistic", "first-access")
@dataclass
class Rule:
    margin: float = 1.25
    alpha: float = field(default=0.05)
    statistic: str = WRITTEN_DEFAULT
    objective: str = DEFAULT_OBJECTIVE
    w0: float = SETTINGS.setting("w0").default
e = config.get("chunk_cache") or [DEFAULT_CACHE.settings()]
f = race.get("margin", SETTINGS.defaults()["margin"])
g = config.get("zarr") or ZARR.setting("readers").default
h = [ChunkCache.from_config(e) for e in entries] if entries else [DEFAULT_CACHE]
"""
    found = _restated(ast.parse(code), "x.py", defaults, constants)
    assert sorted(int(line.split(":")[1]) for line in found) == [3, 4, 5, 6, 9, 10, 11, 14, 15, 16, 17], found
    fine = 'a = settings.get("objective")\nb = settings["recommend"]["objective"]\nc = race.get("margin") or 2.5\n'
    assert _restated(ast.parse(fine), "x.py", defaults, constants) == []


def test_the_check_finds_a_default_restated_through_a_constant_of_any_name():
    """``x.get(key, NAME)``, ``x[key] or NAME`` and a dataclass field ``= NAME``, where NAME is
    a constant that holds the key's declared default, whatever it is called."""
    defaults = _config_defaults()
    code = """
from dataclasses import dataclass
MARGIN = 1.25
STAT = "first-access"
OTHER = 2.5
a = race.get("margin", MARGIN)
b = recommend["statistic"] or STAT
c = race.get("margin", OTHER)
@dataclass
class Rule:
    margin: float = rules.MARGIN
    statistic: str = OTHER
"""
    tree = ast.parse(code)
    named = {name: [v] for name, v in (("MARGIN", 1.25), ("STAT", "first-access"), ("OTHER", 2.5))}
    found = _restated(tree, "x.py", defaults, {}, named)
    assert sorted(int(line.split(":")[1]) for line in found) == [6, 7, 11], found
    assert _named_values()["SAME_SIZE"] == [1.05]  # the package's constants are read


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
