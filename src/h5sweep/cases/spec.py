"""What the workflow needs to know of a case, declared next to the case (``SPEC`` in its
module) and registered in :data:`h5sweep.cases.CASE_SPECS`: the targets, the figure list and
the summary's variant columns are derived from these, so adding a case is one module (plus
its rule and script if it needs a flow of its own, its test config, test and docs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# A case runs once per test store (the grid of backends x layouts x compression on every
# filesystem) or once per filesystem.
SCOPES = ("store", "filesystem")


@dataclass(frozen=True)
class CaseSpec:
    name: str
    scope: str
    stage: str  # its record: raw/<filesystem>/<backend>/<layout>/<compression>/<stage>.parquet or
    #             raw/<filesystem>/<stage>.parquet
    variant_columns: tuple[str, ...]  # the settings that make a variant, carried into the summary
    enabled: Callable[[object], bool]  # whether a sweep runs it
    figures: Callable[[object], list[str]]  # its figures' names (with {filesystem}) for a sweep

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"case {self.name}: scope must be one of {SCOPES}")
