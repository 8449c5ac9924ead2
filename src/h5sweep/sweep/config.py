"""Loading and checking a sweep config: JSON schema first, then what a schema cannot say.

:func:`h5sweep.sweep.model.load_sweep` is what the workflow calls before it plans any job: a config
it accepts can run; one it refuses raises ``ConfigError`` naming the key and the value.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import yaml

from h5sweep.storage.errors import ConfigError

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "config" / "schema.yaml"


# libyaml's loader where PyYAML has it (the schema is read at every Snakemake start)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_schema(path: str | Path | None = None) -> dict:
    """The config's JSON schema: ``config/schema.yaml`` with, under ``cases``, the block each
    registered case declares beside its code (:func:`h5sweep.cases.config_blocks`), and the
    sweep's own sections declared in :mod:`h5sweep.sweep.sections` in place of their stubs."""
    from h5sweep import backends
    from h5sweep.cases import config_blocks
    from h5sweep.measure.engine.race import SETTINGS as RACE_SETTINGS
    from h5sweep.storage import codecs
    from h5sweep.storage.filesystems import FILESYSTEM
    from h5sweep.sweep.sections import SECTIONS, TOP

    with open(path or SCHEMA_PATH, encoding="utf-8") as f:
        schema = yaml.load(f, Loader=_LOADER)
    for declared in (*TOP, *SECTIONS):  # each in the place of its stub
        schema["properties"][declared.name] = declared.schema()
    cases = schema["properties"]["cases"].setdefault("properties", {})
    for name, block in config_blocks().items():
        cases.setdefault(name, block.schema())
    schema["properties"]["compression"]["description"] = codecs.schema_description()
    blocks = {s.settings.name: s.settings.schema() for s in backends.REGISTRY.values() if s.settings is not None}
    top = schema["properties"]  # a backend's own block (zarr:) after the backends key
    schema["properties"] = {
        k: v for key, node in top.items() for k, v in [(key, node), *(blocks.items() if key == "backends" else [])]
    }
    schema["properties"]["backends"]["items"]["enum"] = list(backends.REGISTRY)
    forms = schema["properties"]["filesystems"]["additionalProperties"]["oneOf"]
    forms[:] = [FILESYSTEM.object_schema() if form.get("type") == "object" else form for form in forms]
    race = next(form for form in schema["properties"]["race"]["oneOf"] if form.get("type") == "object")
    race.setdefault("properties", {}).update(RACE_SETTINGS.schema()["properties"])
    return schema


def _key(path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _fill_defaults(instance, schema) -> None:
    """Fill the schema's defaults into ``instance`` in place (objects only, recursively)."""
    if not isinstance(instance, dict) or schema.get("type") != "object":
        return
    for name, sub in schema.get("properties", {}).items():
        if name not in instance and "default" in sub and not sub.get("x-optional"):
            instance[name] = copy.deepcopy(sub["default"])
        if name in instance:
            _fill_defaults(instance[name], sub)


def validate_schema(config: dict, schema: dict | None = None) -> dict:
    """Check ``config`` against the JSON schema; return a copy with defaults filled in."""
    import jsonschema  # here, not at the top: a job rebuilds its settings without the schema

    schema = schema or load_schema()
    config = copy.deepcopy(config)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        err = jsonschema.exceptions.best_match(errors)
        raise ConfigError(_key(err.absolute_path), err.instance, err.message)
    _fill_defaults(config, schema)
    return config


def with_defaults(config: dict, schema: dict | None = None) -> dict:
    """A copy of an already checked ``config`` with the schema's defaults filled in, without
    checking it again (a process that re-reads a sweep the main process checked)."""
    config = copy.deepcopy(config)
    _fill_defaults(config, schema or load_schema())
    return config


def filled_section(name: str, entry: dict | None = None, schema: dict | None = None) -> dict:
    """The top-level section ``name`` of a config (``layouts``, ``recommend``, ...) with the
    schema's defaults filled in where ``entry`` leaves them out."""
    section = copy.deepcopy(entry or {})
    _fill_defaults(section, (schema or load_schema())["properties"][name])
    return section


def config_hash(config: dict) -> str:
    """Short, stable hash of a config (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


KEY_TABLE_BEGIN = (
    "<!-- key table: generated from config/schema.yaml by `make docs`; edit the schema, not this table -->"
)
KEY_TABLE_END = "<!-- end of key table -->"


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(node: dict) -> str:
    if "default" not in node or node.get("type") == "object":
        return ""
    return f"`{json.dumps(node['default'])}`"


def _keys(node: dict, key: str):
    """(key, node) of every documented key below ``node``, depth first in schema order."""
    if not isinstance(node, dict):
        return
    if key and "description" in node:
        yield key, node
    for name, sub in (node.get("properties") or {}).items():
        yield from _keys(sub, f"{key}.{name}" if key else name)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or extra.get("description") or extra.get("oneOf")):
        yield from _keys(extra, f"{key}.<name>")
    items = node.get("items")
    if isinstance(items, dict) and items.get("properties"):
        yield from ((k, n) for k, n in _keys(items, f"{key}[]") if k != f"{key}[]")
    for alternative in node.get("oneOf") or []:
        if isinstance(alternative, dict) and alternative.get("type") == "object":
            yield from ((k, n) for k, n in _keys(alternative, key) if k != key)


def key_table(schema: dict | None = None) -> str:
    """The README's table of config keys, from the schema's descriptions and defaults (each
    description is written once, in the schema)."""
    rows = ["| key | default | meaning |", "| --- | --- | --- |"]
    seen = set()
    for key, node in _keys(schema or load_schema(), ""):
        if key not in seen:
            seen.add(key)
            rows.append(f"| `{key}` | {_default(node)} | {_cell(node['description'])} |")
    return "\n".join([KEY_TABLE_BEGIN, *rows, KEY_TABLE_END])


def with_key_table(readme: str, schema: dict | None = None) -> str:
    """``readme`` with its key table (between the markers) generated anew."""
    start, end = readme.index(KEY_TABLE_BEGIN), readme.index(KEY_TABLE_END) + len(KEY_TABLE_END)
    return readme[:start] + key_table(schema) + readme[end:]


def column_markers(table: str) -> tuple[str, str]:
    return (
        f"<!-- columns of {table}: generated from h5sweep.storage.columns by `make docs`; edit the registry -->",
        f"<!-- end of columns of {table} -->",
    )


def with_column_tables(readme: str) -> str:
    """``readme`` with each output table's column table (between its markers) generated anew
    from the column registry, the cases' own columns included."""
    from h5sweep import cases  # noqa: F401 - each case registers the columns it adds
    from h5sweep.measure import objective  # noqa: F401 - and the objectives the scores they compute
    from h5sweep.storage import columns

    for table in columns.TABLES:
        begin, end = column_markers(table)
        start, stop = readme.index(begin), readme.index(end) + len(end)
        readme = readme[:start] + "\n".join([begin, columns.markdown_table(table), end]) + readme[stop:]
    return readme


CODEC_TABLE = (
    "<!-- codec table: generated from h5sweep.storage.codecs by `make docs`; edit the codec's module -->",
    "<!-- end of codec table -->",
)


def with_codec_table(readme: str) -> str:
    """``readme`` with its table of compression names (between the markers) generated anew
    from the codec modules."""
    from h5sweep.storage import codecs

    begin, end = CODEC_TABLE
    start, stop = readme.index(begin), readme.index(end) + len(end)
    return readme[:start] + "\n".join([begin, codecs.readme_table(), end]) + readme[stop:]


if __name__ == "__main__":  # python -m h5sweep.sweep.config config/README.md: its generated tables
    import sys

    for readme_path in sys.argv[1:]:
        text = Path(readme_path).read_text(encoding="utf-8")
        Path(readme_path).write_text(with_codec_table(with_column_tables(with_key_table(text))), encoding="utf-8")
