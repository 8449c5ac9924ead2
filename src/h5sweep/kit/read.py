"""The read cases' kit and their spec: what every read case has (:class:`ReadCase`: a name, a
repeat count, cold modes, a box size for a dataset shape), the settings each one's block
carries (repeats, race, cold), and :func:`read_cases_spec`, the read cases' entry in the
registry: their figures, the query job's cost and the findings the registry names. Their
blocks are listed by the registry (:func:`h5sweep.cases.config_blocks`), which knows every read
case."""

from __future__ import annotations

from typing import ClassVar

from h5sweep.backends import OPTION_COLUMNS
from h5sweep.kit.spec import VARIANTS, CaseSpec, Figure
from h5sweep.measure import rates
from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Shape
from h5sweep.storage.selections import Selection, case_rng, visit

# How a read case meets the page cache: ``first`` evicts and reopens the file before the
# case (the study's: a first access, then sustained reads of an open file); ``every`` before
# every selection, outside the timer (all reads are first accesses).
COLD_MODES = ("first", "every")
COLD_FORMS = {
    "oneOf": [
        {"type": "string", "enum": list(COLD_MODES)},
        {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(COLD_MODES)}},
    ]
}


def cold_setting(default: str = "every", description: str = "") -> Setting:
    """A read case's ``cold``: one mode or a list, each measured as a variant."""
    return Setting(
        "cold",
        None,
        default,
        description
        or "When the file is dropped from the page cache and reopened: first (before the case; the first "
        "read is a first access, the rest sustained reads of an open file; the study's protocol) or every "
        "(before every selection, outside the timer: all reads are first accesses). A list measures each, "
        "as a variant.",
        COLD_FORMS,
    )


def repeats_setting(default: int, description: str = "Randomized selections per file.") -> Setting:
    return Setting("repeats", "integer", default, description, {"minimum": 1})


RACE_SETTING = Setting(
    "race",
    "boolean",
    True,
    "Whether this case takes part in the race (top-level race): false reads every store to the end.",
)


def read_case_block(name: str, description: str, *own: Setting, repeats: Setting | None = None) -> Block:
    """The config block of a read case: its repeats (50 selections unless given), its own
    settings, race and cold."""
    return Block(name, description, (repeats or repeats_setting(50), *own, RACE_SETTING, cold_setting()))


class ReadCase:
    name: ClassVar[str]
    description: ClassVar[str]
    SETTINGS: ClassVar[Block]  # its block under cases (h5sweep.storage.declared), defaults included
    # The dataset ranks it reads (the OpenMSI cases: [x, y, z]; the neuroscience cases:
    # [time, channels]); None: any rank
    ranks: ClassVar[tuple[int, ...] | None] = (3,)
    RANK_WORDS: ClassVar[dict] = {2: "[time, channels]", 3: "[x, y, z]"}

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        # a case without the setting (a recording: its reads) counts its own
        self.repeats = int(self.settings["repeats"]) if "repeats" in self.settings else 0
        cold = self.settings["cold"]
        self.cold_modes = list(dict.fromkeys([cold] if isinstance(cold, str) else cold))

    @property
    def key(self) -> str:
        """The case's key in the config, for messages."""
        return f"cases.{self.name}"

    def check_cold_modes(self) -> None:
        if not self.cold_modes:
            raise ConfigError(f"{self.key}.cold", self.settings["cold"], "names no cold mode")
        for i, mode in enumerate(self.cold_modes):
            if mode not in COLD_MODES:
                raise ConfigError(
                    f"{self.key}.cold" + (f"[{i}]" if not isinstance(self.settings["cold"], str) else ""),
                    mode,
                    f"unknown cold mode (known: {', '.join(COLD_MODES)})",
                )

    def size(self, shape: Shape) -> Shape:
        """The box every selection of this case reads, for a dataset of ``shape``."""
        raise NotImplementedError

    def check_rank(self, shape: Shape) -> None:
        if self.ranks is not None and len(shape) not in self.ranks:
            wanted = " or ".join(self.RANK_WORDS.get(r, f"{r}-D") for r in self.ranks)
            raise ConfigError(
                self.key,
                self.settings,
                f"reads {wanted} datasets, and dataset.shape has {len(shape)} axes "
                "(2-D: whole, rows, column; 3-D: slice, spectra, subcube; any: whole, boxes)",
            )

    def check(self, shape: Shape) -> None:
        self.check_cold_modes()
        self.check_rank(shape)
        if self.repeats < 1:
            raise ConfigError(f"cases.{self.name}.repeats", self.repeats, "must be at least 1")
        for axis, (n, s) in enumerate(zip(self.size(shape), shape, strict=True)):
            if n < 1:
                raise ConfigError(f"cases.{self.name}", self.settings, f"selects {n} elements along axis {axis}")
            if n > s:
                raise ConfigError(
                    f"cases.{self.name}",
                    self.settings,
                    f"selection is larger than the dataset along axis {axis} ({n} > dataset.shape[{axis}]={s})",
                )

    def selections(
        self, shape: Shape, seed: int, policy: str = "random", chunk: Shape | None = None
    ) -> list[Selection]:
        """The case's selections for a visiting policy; the random draws depend only on the
        seed, the case and the policy (``aligned`` then snaps them to ``chunk``)."""
        rng = case_rng(seed, self.name if policy in ("random", "aligned") else f"{self.name}/{policy}")
        return visit(policy, rng, shape, self.size(shape), self.repeats, chunk)


BARS = Figure("case_bars", "bars-{case}-{filesystem}", "Access cases", "bars", ("summary", "measurements"))
HEATMAP = Figure("heatmaps", "heatmap-{case}-{filesystem}", "Chunk shape heat maps", "heatmap")
SCORE = Figure("score", "score-{filesystem}", "Performance score")
TRADEOFF = Figure(
    "tradeoff",
    "tradeoff-{filesystem}",
    "1. Recommendation",
    inputs=("recommendation",),
    labels=(("figure", "trade-off"),),
)
MIX = Figure(
    "mix",
    "mix-{filesystem}",
    "1. Recommendation",
    inputs=("recommendation",),
    labels=(("figure", "read mix"),),
)
SPLIT = Figure("split", "split-{filesystem}", "Model and device")
CACHE = Figure("cache", "cache-{filesystem}", "Variants")
LEVELS = Figure("levels", "levels-{filesystem}", "Compression levels")
STATS = Figure("stats", "stats-{case}-{filesystem}", "Access cases")
AMPLIFICATION = Figure("amplification", "amplification-{filesystem}", "Model and device")
BACKENDS = Figure("backends", "backends-{filesystem}", "HDF5 against Zarr")


def _read_figures(sweep) -> list[str]:
    cases = [case.name for case in sweep.read_cases]
    square = len(sweep.shape) == 3 and any(
        lay.chunk_shape and lay.chunk_shape[0] == lay.chunk_shape[1] for lay in sweep.layouts
    )
    names = [BARS.name(case=case) for case in cases]
    names += [HEATMAP.name(case=case) for case in cases] if square else []
    names += [TRADEOFF.name(), MIX.name(), AMPLIFICATION.name()] if cases else []
    # the OpenMSI study's score counts thresholds met; the ranking does not use it: drawn where asked
    names += [SCORE.name()] if cases and sweep.config.get("score", {}).get("figure") else []
    names += [BACKENDS.name()] if cases and len(sweep.backends) > 1 else []
    # the studies' forms: Kang's split of a read, the lab's cache lines, OpenMSI's gzip levels
    names += [SPLIT.name()] if cases and sweep.split_read_time else []
    names += [CACHE.name()] if cases and len(sweep.chunk_caches) > 1 else []
    levels = {c.name for c in sweep.compressions if c.name.rpartition("-")[0] == "gzip"}
    names += [LEVELS.name()] if cases and len(levels) > 1 else []
    # OpenMSI's min/median/mean/max bars, for the cases read under its protocol (cold: first)
    names += [STATS.name(case=c.name) for c in sweep.read_cases if "first" in c.cold_modes]
    options = len(sweep.policies) * max(
        len(sweep.read_options(b.name, fs)) for b in sweep.backends for fs in sweep.filesystems
    )
    # a variants figure per case measured in more than one way (options, policies, cold modes)
    names += [VARIANTS.name(case=c.name) for c in sweep.read_cases if options * len(c.cold_modes) > 1]
    return names


# Every read case (built in or a box) runs in the query job of each test store.
def _query_job(sweep, store, from_device):
    """The query job: its read copies, every read case's timed reads and their checking."""
    layout, compression, backend = store.layout, store.compression, store.backend.name
    requests = rates.request_seconds(sweep, store)  # on an object store: requests x latency
    # and each read's reopen (inside its window) and check (under the node's lock held shared:
    # no window overlaps it, so it counts with them)
    reopen, check = rates.remote_read_seconds(sweep, store)
    timed = rates.read_seconds(sweep, layout, compression, from_device, backend)[0] + requests + reopen + check
    copies = rates.read_copies_seconds(sweep, layout, store.filesystem.read_copies, from_device)
    job = rates.query_seconds(sweep, layout, compression, from_device, backend) + requests + reopen + check
    return job + copies, timed


def read_cases_spec(findings: str | None = None) -> CaseSpec:
    """The read cases' entry in the registry, all of them in one query job per test store, with
    ``findings``: the hook (``"module:name"``) of the findings judged on their rows, which the
    registry names."""
    return CaseSpec(
        name="read",
        scope="store",
        stage="query",
        variant_columns=(
            C.POLICY,
            C.COLD_MODE,
            C.READER,
            *OPTION_COLUMNS,
        ),
        enabled=lambda sweep: True,
        figures=_read_figures,
        job_cost=_query_job,
        plots=(BARS, HEATMAP, SCORE, TRADEOFF, MIX, AMPLIFICATION, BACKENDS, VARIANTS, SPLIT, CACHE, LEVELS, STATS),
        findings=findings,
    )
