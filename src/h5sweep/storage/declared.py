"""Settings declared once: each config block a plug-in adds (a case's ``cases.<name>``, and in
time a backend's, a codec family's and a config section's) is a :class:`Block` of
:class:`Setting` s, each with its type, its one default, its bounds and its description, beside
the code that reads it. The config schema takes its blocks from them
(:func:`h5sweep.sweep.config.load_schema`), so do ``config/README.md``'s key table and the
defaults the code reads (:meth:`Block.filled`): no default is written anywhere else (a test in
``tests/test_declared.py`` finds any). Nothing here imports more than the standard library."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

# JSON-schema words a setting may carry besides its type, default and description, in the
# order the schema shows them
BOUNDS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "enum",
    "pattern",
    "items",
    "oneOf",
)


@dataclass(frozen=True)
class Setting:
    """One key of a block: its JSON-schema ``type`` (None where ``oneOf`` gives the forms),
    its default, its description and its bounds (JSON-schema words: ``minimum``, ``items``,
    ``enum``, ``oneOf``, ...)."""

    name: str
    type: str | list | None
    default: object
    description: str = ""
    bounds: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(
            set(self.bounds) - set(BOUNDS) - {"properties", "additionalProperties", "minProperties", "required"}
        )
        if unknown:
            raise ValueError(f"setting {self.name}: unknown schema words {unknown}")

    def schema(self) -> dict:
        out: dict = {} if self.type is None else {"type": self.type}
        out.update(copy.deepcopy(self.bounds))
        if self.description:
            out["description"] = self.description
        out["default"] = copy.deepcopy(self.default)
        return out


@dataclass(frozen=True)
class Block:
    """A config block of settings: an object (``cases.<name>: {...}``) or, with ``many``, a
    list of such objects (``cases.boxes: [{...}, ...]``). ``optional``: left out of a config,
    it is not filled in (a read case left out is not run)."""

    name: str
    description: str
    settings: tuple[Setting, ...]
    optional: bool = True
    required: tuple[str, ...] = ()
    many: bool = False
    at_least_one: bool = False  # with many: a list of one entry or more, by default one at its defaults

    def __post_init__(self) -> None:
        names = [s.name for s in self.settings]
        if len(set(names)) != len(names):
            raise ValueError(f"block {self.name}: a setting is declared twice")

    def setting(self, name: str) -> Setting:
        return next(s for s in self.settings if s.name == name)

    def object_schema(self) -> dict:
        out: dict = {"type": "object", "additionalProperties": False}
        if self.required:
            out["required"] = list(self.required)
        out["properties"] = {s.name: s.schema() for s in self.settings}
        return out

    def schema(self) -> dict:
        """The block's JSON schema, as the config schema holds it."""
        head: dict = {"x-optional": True} if self.optional else {}
        head["description"] = self.description
        default = self.section_default()
        if self.many and self.at_least_one:
            items = self.object_schema()
            return {**head, "type": "array", "minItems": 1, "default": default, "items": items}
        if self.many:
            return {**head, "type": "array", "default": default, "items": self.object_schema()}
        body = self.object_schema()
        return {**head, "type": "object", "additionalProperties": False, "default": default, **body}

    def section_default(self) -> dict | list:
        """What a config that leaves the block out holds: with ``many``, a list (of one entry
        at its defaults, with ``at_least_one``), else an object (each setting at its default)."""
        if self.many:
            return [self.defaults()] if self.at_least_one else []
        return {}

    def filled_section(self, section: dict | list | None) -> dict | list:
        """The block's section of a config (``chunk_cache: [...]``; the declared one where it
        is left out or empty), each entry with every setting it leaves out at its default."""
        section = section or self.section_default()
        return [self.filled(entry) for entry in section] if self.many else self.filled(section)

    def defaults(self) -> dict:
        return {s.name: copy.deepcopy(s.default) for s in self.settings}

    def filled(self, entry: dict | None) -> dict:
        """One entry of the block (one object) with every setting it leaves out at its default."""
        return {**self.defaults(), **(entry or {})}
