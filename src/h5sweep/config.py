"""Loading and checking a sweep config: JSON schema first, then what a schema cannot say.

:func:`h5sweep.grid.load_sweep` is what the workflow calls before it plans any job: a config
it accepts can run; one it refuses raises ``ConfigError`` naming the key and the value.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import jsonschema
import yaml

from h5sweep.errors import ConfigError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "config" / "schema.yaml"


def load_schema(path: str | Path | None = None) -> dict:
    with open(path or SCHEMA_PATH, encoding="utf-8") as f:
        return yaml.safe_load(f)


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


def config_hash(config: dict) -> str:
    """Short, stable hash of a config (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def read_config_file(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}
