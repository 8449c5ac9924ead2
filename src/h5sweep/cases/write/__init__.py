"""Case 4, write: the whole dataset written through the standard HDF5 API, timed.

Strategies (the OpenMSI study's): one spectrum at a time, the m x m spectra of one chunk
column at a time, one chunk at a time. Fill times (HDF5's): whether the storage is first
filled with the fill value when it is allocated. Each repeat writes a new file, fsync
included in the time.

The runner (:func:`h5sweep.cases.write.run.generate`, in jobs only) writes a test store: it
times the write case; the file the read cases query is the write case's own, as a user's
converter would leave it. Where writes race (``race``, :mod:`h5sweep.cases.write.race`), a
store's own job writes each variant ``min_repeats`` times (once by default) and the
filesystem's write race writes the rest, up to ``repeats``, while they matter: every store it
does not race out ends with two writes or more.

The values are computed into memory first (as the study read its donor into memory) and put
into the layout's storage order before the clock starts, so the timed region is only HDF5's
work and the storage's. A donor is not held whole: its values are read block by block as the
write asks for them, and the time those reads take is taken out of the write's clock (each row
says how much, ``source_read_s``); the query file is then written by the same standard path,
untimed (``standard-streamed``). The timed write is: create, write one block per call (HDF5 gathers each block from the
in-memory array itself), flush, fsync, close, inside the node's exclusive measurement
window. The last write of the default variant (one chunk per call, fill time ``ifset``)
becomes the query file; where the write case has no such variant, the query file is written
by the fast path (:mod:`h5sweep.backends.fastwrite`), and each row says which (``query_file_method``).
Stores are written under a temporary name and renamed into place, so a store at the output
path is always complete. Each repeat goes to a new file and meets the disk in one state
(:mod:`h5sweep.measure.settle`): on a filesystem with a rest after removals, a variant's repeats
are kept until its last, and a write after a removal waits for the rest. Everything the
storage format decides is the backend's (:mod:`h5sweep.backends`).
"""

from __future__ import annotations

from h5sweep.cases.write import columns as WC
from h5sweep.kit.spec import VARIANTS, CaseSpec, Figure
from h5sweep.measure import rates, settle
from h5sweep.storage.codecs import Compression
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError, check_limit_s
from h5sweep.storage.layouts import WRITE_STRATEGIES, Layout

FILL_TIMES = ("ifset", "never", "alloc")
# Where ``limit_s`` is not set, a write is stopped at this many times its planned time (the
# reference machine's; storage several times slower still finishes), and never before the
# floor (a tiny write's plan is milliseconds, below a virtual machine's stalls).
LIMIT_FACTOR = 10
LIMIT_FLOOR_S = 60.0
# The variant whose file the read cases query: what a converter writing chunk by chunk, with
# HDF5's default fill time, leaves on disk.
QUERIED_VARIANT = ("chunk", "ifset")


class WriteCase:
    name = "write"
    description = "write the whole dataset with each strategy and fill time"
    SETTINGS = Block(
        "write",
        "Write the whole dataset, one chunk per call; fsync included.",
        (
            Setting(
                "repeats",
                "integer",
                1,
                "Timed writes of each file per strategy and fill time (with race, at most this many).",
                {"minimum": 1},
            ),
            Setting(
                "min_repeats",
                "integer",
                1,
                "With race: the timed writes every store makes; more, up to repeats, only while its write "
                "time is not separated from its competitors' (docs/method.md). With one, a pilot of the "
                "nearest stores writes twice first and every store not raced out ends with two or more.",
                {"minimum": 1},
            ),
            Setting(
                "race",
                "boolean",
                True,
                "Whether the writes take part in the race (top-level race): false writes every store repeats times.",
            ),
            Setting(
                "strategies",
                "array",
                ["chunk"],
                "Write strategies: spectrum (one [x, y, :] per call), block (the m x m spectra of one chunk "
                "column per call), chunk (one chunk per call).",
                {"minItems": 1, "items": {"type": "string"}},
            ),
            Setting(
                "fill_time",
                "array",
                ["ifset"],
                "HDF5 fill times: ifset (no fill values written unless one is set; none is), never, alloc "
                "(storage filled with the fill value when allocated, then overwritten).",
                {"minItems": 1, "items": {"type": "string"}},
            ),
            Setting(
                "limit_s",
                ["number", "null"],
                None,
                "Seconds after which a timed write is stopped between two of its calls and recorded as "
                "stopped at that time (its variant's other repeats are skipped, the fast path writes the "
                "query file, and the recommendation excludes a layout whose first variant was stopped); "
                "null is 10 times the write's planned time, at least 60 s.",
                {"exclusiveMinimum": 0},
            ),
        ),
        optional=False,
    )

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.repeats = int(self.settings["repeats"])
        self.strategies = list(self.settings["strategies"])
        self.fill_times = list(self.settings["fill_time"])
        self.limit_s = self.settings["limit_s"]
        check_limit_s("cases.write.limit_s", self.limit_s)
        self.min_repeats = int(self.settings["min_repeats"])
        self.race = self.settings["race"] is not False
        self.raced = bool(self.settings.get("raced", False))  # set in a job's settings: writes race (write_race)
        if self.repeats < 1:
            raise ConfigError("cases.write.repeats", self.repeats, "must be at least 1")
        if self.min_repeats < 1:
            raise ConfigError("cases.write.min_repeats", self.min_repeats, "must be at least 1")
        for i, strategy in enumerate(self.strategies):
            if strategy not in WRITE_STRATEGIES:
                raise ConfigError(
                    f"cases.write.strategies[{i}]",
                    strategy,
                    f"unknown write strategy (known: {', '.join(WRITE_STRATEGIES)})",
                )
        for i, fill_time in enumerate(self.fill_times):
            if fill_time not in FILL_TIMES:
                raise ConfigError(
                    f"cases.write.fill_time[{i}]", fill_time, f"unknown fill time (known: {', '.join(FILL_TIMES)})"
                )

    def variants(self) -> list[tuple[str, str]]:
        return [(s, f) for s in dict.fromkeys(self.strategies) for f in dict.fromkeys(self.fill_times)]

    @property
    def races(self) -> bool:
        """Whether a store's writes can stop before ``repeats`` (racing on, and room to stop)."""
        return self.race and self.repeats > self.min_repeats

    @property
    def first_repeats(self) -> int:
        """The timed writes of each variant a store's own job makes: all of them, or where the
        writes race, the minimum (the filesystem's race job writes the rest while they matter)."""
        return self.min_repeats if self.raced and self.races else self.repeats

    @property
    def leaves_query_file(self) -> bool:
        """Whether the write case writes the file the read cases query (else the fast path does)."""
        return QUERIED_VARIANT in self.variants()

    @staticmethod
    def variant_label(strategy: str, fill_time: str) -> str:
        return f"{strategy}, fill {fill_time}"

    def limits(self, dataset, layout: Layout, compression: Compression, cache_bytes: int) -> dict[str, float]:
        """Seconds after which a write of each strategy is stopped: ``limit_s`` as set, else
        :data:`LIMIT_FACTOR` times its planned time (:func:`h5sweep.measure.rates.write_seconds`),
        at least :data:`LIMIT_FLOOR_S`. ``dataset``: anything with the dataset's ``shape``
        and ``dtype`` (the sweep, a job's settings)."""
        if self.limit_s is not None:
            return {s: float(self.limit_s) for s in self.strategies}
        return {
            s: max(LIMIT_FLOOR_S, LIMIT_FACTOR * rates.write_seconds(dataset, layout, compression, s, cache_bytes))
            for s in self.strategies
        }


def rest_seconds(sweep, filesystem) -> float:
    """The rests a store's write case waits on ``filesystem`` (h5sweep.measure.settle): each
    variant after the first waits for it (its job removed the one before); the first only where
    another job's removal came within the rest, which the plan leaves out. A filesystem's write
    race rests as often: it removes a variant's files before the next variant's writes."""
    return settle.settle_seconds(filesystem) * (len(sweep.write_case.variants()) - 1)


def _generate_job(sweep, store, from_device):
    """The generate job: making the data, the timed writes, the query file, and the rest
    before each variant's first write (h5sweep.measure.settle: taken with the node's lock
    given up, so job time but no window's)."""
    layout, compression = store.layout, store.compression
    settle_s = rest_seconds(sweep, store.filesystem)
    encodes = store.backend.encodes_chunks(compression)
    cache = write_cache_bytes(sweep, store.backend)
    # on an object store, the objects a timed write sends there (a store of a file per chunk),
    # and as many read back to check them
    remote = sweep.write_case.repeats * len(sweep.write_case.variants()) * rates.object_write_seconds(sweep, store)
    job = rates.generate_seconds(sweep, layout, compression, encodes_chunks=encodes, cache_bytes=cache) + settle_s
    return job + 2 * remote, rates.write_case_seconds(sweep, layout, compression, cache) + remote


def write_cache_bytes(sweep, backend) -> int:
    """The chunk cache the write case writes with: HDF5's first chunk cache; none for a
    backend that rewrites a chunk's file on every write of a part of it (Zarr)."""
    if not backend.capabilities.writes_with_read_option:
        return 0
    return int(getattr(sweep.read_options(backend.name)[0], "nbytes", 0))


FILE_SIZES = Figure("file_sizes", "file-sizes", "File size", "file-sizes")  # every store's, one figure
WRITE = Figure("write", "write-{filesystem}", "Write")
# the OpenMSI study's compression ratio over (m, n): with compressed m x m x n chunkings
COMPRESSION_GRID = Figure("compression_grid", "compression-grid", "File size", "compression-grid")


def _compressed_square_chunks(sweep) -> bool:
    square = len(sweep.shape) == 3 and any(
        lay.chunk_shape and lay.chunk_shape[0] == lay.chunk_shape[1] for lay in sweep.layouts
    )
    return square and any(not c.is_none for c in sweep.compressions)


SPEC = CaseSpec(
    name="write",
    scope="store",
    stage="write",
    variant_columns=(WC.WRITE_STRATEGY, WC.FILL_TIME),  # and the chunk cache it wrote with (the read spec's)
    enabled=lambda sweep: True,
    figures=lambda sweep: (
        [FILE_SIZES.name(), WRITE.name()]
        + ([COMPRESSION_GRID.name()] if _compressed_square_chunks(sweep) else [])
        + ([VARIANTS.name(case="write")] if len(sweep.write_case.variants()) > 1 else [])
    ),
    job_cost=_generate_job,
    plots=(FILE_SIZES, WRITE, COMPRESSION_GRID, VARIANTS),
    settings=lambda: (WriteCase.SETTINGS,),
    findings="h5sweep.cases.write.findings:FINDINGS",
)
