"""The columns of every table h5sweep writes: one entry per column (its name, its type and its
unit) and, grouped as ``config/README.md`` shows them, what each means.

Every module names a column through its constant here (``columns.SECONDS``), not by spelling
it. From this registry come the typing of the tables (:func:`typed`: whole numbers a row may
lack as nullable integers, flags as nullable booleans) and the column tables of
``config/README.md`` (``make docs``, :func:`markdown_table`). A column is registered where it is
computed: a case registers the columns it adds from its own package (:func:`column`,
:func:`group`), a backend those that carry its name or its libraries' (their versions, its read
options), and their groups appear in the tables after the core ones of their table (a group may
name core columns beside its own). The core here holds the columns every case shares and those
the analysis, the report and ``compare`` compute or read by name: they reach a case only
through its spec, so a column they name is not a case's.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

# a column's type in the tables
STRING, FLOAT, INTEGER, BOOLEAN = "string", "float", "integer", "boolean"
# the tables, as config/README.md names them
MEASUREMENTS, SUMMARY, RECOMMENDATION, FINDINGS, COMPARISON = (
    "measurements",
    "summary",
    "recommendation",
    "findings",
    "comparison",
)
TABLES = (MEASUREMENTS, RECOMMENDATION, FINDINGS, COMPARISON, SUMMARY)


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # STRING, FLOAT, INTEGER or BOOLEAN
    unit: str = ""  # s, bytes, B/s, ms, ratio, fraction, ... ("" for none)


@dataclass(frozen=True)
class Group:
    """Columns described together, one row of a table of ``config/README.md``."""

    table: str
    names: tuple[str, ...]  # a name with <...> is a family (``seconds_<case>``)
    description: str
    label: str | None = None  # the row's first cell where it is not the names
    owner: str = field(default=__name__, compare=False)  # the module that described them


COLUMNS: dict[str, Column] = {}
GROUPS: list[Group] = []
OWNERS: dict[str, str] = {}  # per column, the module that registered it


def column(name: str, kind: str, unit: str = "") -> str:
    """Register a column; returns its name (bound to the module's constant)."""
    if kind not in (STRING, FLOAT, INTEGER, BOOLEAN):
        raise ValueError(f"column {name!r}: unknown type {kind!r}")
    known = COLUMNS.get(name)
    if known is not None and known != Column(name, kind, unit):
        raise ValueError(f"column {name!r} registered twice, as {known} and as {kind} {unit}")
    COLUMNS[name] = Column(name, kind, unit)
    OWNERS.setdefault(name, sys._getframe(1).f_globals.get("__name__", ""))
    return name


def group(table: str, names: tuple[str, ...], description: str, label: str | None = None) -> None:
    """Describe columns together in ``table`` (each registered, by the registry or by the case
    that adds it, or a family with ``<...>``: tests/test_columns.py checks every name)."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    entry = Group(table, tuple(names), description, label, sys._getframe(1).f_globals.get("__name__", ""))
    if entry not in GROUPS:
        GROUPS.append(entry)


def kind(name: str) -> str | None:
    found = COLUMNS.get(name)
    return found.kind if found else None


def typed(table, settings: tuple[str, ...] = ()):
    """A copy with the registry's types where rows lack values: whole numbers as nullable
    integers (``Int64``, empty where a row has none; a column holding a fraction stays as it
    is) and flags as nullable booleans. ``table``: a pandas DataFrame. ``settings``: whole-number
    columns typed nullable even where every row has a value (a case's settings, which the rows
    of other cases lack in other tables), so that a table's types do not depend on its rows."""
    import pandas as pd

    table = table.copy()
    for name in table.columns:
        wanted, values = kind(name), table[name]
        if wanted == INTEGER and name in settings and pd.api.types.is_integer_dtype(values):
            table[name] = values.astype("Int64")
        elif wanted == INTEGER and pd.api.types.is_float_dtype(values):
            present = values.dropna()
            if (present == present.round()).all():
                table[name] = values.astype("Int64")
        elif wanted == BOOLEAN and values.dtype == object:
            table[name] = values.astype("boolean")
    return table


def _by_owner(entry: Group) -> tuple[bool, str]:
    """The core's groups first, then each owner's by its module's name: the tables' order does
    not depend on which module a process imported first."""
    return entry.owner != __name__, entry.owner


def markdown_table(table: str) -> str:
    """The column table of ``table`` as ``config/README.md`` shows it: the core's groups, then
    each owner's (a case's, a backend's, ...), every owner's in the order it describes them."""
    lines = ["| column | meaning |", "| --- | --- |"]
    for entry in sorted(GROUPS, key=_by_owner):
        if entry.table == table:
            first = entry.label or ", ".join(f"`{name}`" for name in entry.names)
            lines.append(f"| {first} | {entry.description} |")
    return "\n".join(lines)


SWEEP = column("sweep", STRING, "")
FILESYSTEM = column("filesystem", STRING, "")
BACKEND = column("backend", STRING, "")
LAYOUT = column("layout", STRING, "")
CHUNK_SHAPE = column("chunk_shape", STRING, "")
SHARD_SHAPE = column("shard_shape", STRING, "")
PAGE_SIZE = column("page_size", INTEGER, "bytes")
LAYOUT_ID = column("layout_id", STRING, "")
LAYOUT_NAME = column("layout_name", STRING, "")
ORDER = column("order", STRING, "")
COMPRESSION = column("compression", STRING, "")
FILTER_FAMILY = column("filter_family", STRING, "")
CODEC = column("codec", STRING, "")
CODEC_LEVEL = column("codec_level", INTEGER, "")
SHUFFLE = column("shuffle", STRING, "")
DATASET_SHAPE = column("dataset_shape", STRING, "")
DTYPE = column("dtype", STRING, "")
FILL = column("fill", STRING, "")
SEED = column("seed", INTEGER, "")
JUDGE_SYNTHETIC_VALUES = column("judge_synthetic_values", BOOLEAN, "")
RAW_BYTES = column("raw_bytes", INTEGER, "bytes")
N_CHUNKS = column("n_chunks", INTEGER, "")
PADDING_BYTES = column("padding_bytes", INTEGER, "bytes")
CASE = column("case", STRING, "")
REPEAT = column("repeat", INTEGER, "")
SELECTION = column("selection", STRING, "")
BYTES_SELECTED = column("bytes_selected", INTEGER, "bytes")
SECONDS = column("seconds", FLOAT, "s")
VARIANT = column("variant", STRING, "")
POLICY = column("policy", STRING, "")
COLD_MODE = column("cold_mode", STRING, "")
FILES_TOUCHED = column("files_touched", INTEGER, "")
STORAGE_S = column("storage_s", FLOAT, "s")
DECODE_COPY_S = column("decode_copy_s", FLOAT, "s")
READER = column("reader", STRING, "")
READ_OPTION = column("read_option", STRING, "")
READ_OPTION_INDEX = column("read_option_index", INTEGER, "")
READ_OPTION_SETTING = column("read_option_setting", STRING, "")
STORE_FILES = column("store_files", INTEGER, "")
STORE_DIRECTORIES = column("store_directories", INTEGER, "")
CACHE_HOLDS_CHUNK = column("cache_holds_chunk", BOOLEAN, "")
INTERLEAVED_STORES = column("interleaved_stores", INTEGER, "")
VISIT_POSITION = column("visit_position", INTEGER, "")
CHUNKS_TOUCHED = column("chunks_touched", INTEGER, "")
CHUNK_BYTES_TOUCHED = column("chunk_bytes_touched", INTEGER, "bytes")
STORED_BYTES_TOUCHED = column("stored_bytes_touched", INTEGER, "bytes")
CACHE_STATE = column("cache_state", STRING, "")
DEVICE_READ_BYTES = column("device_read_bytes", INTEGER, "bytes")
LIBRARY_READ_BYTES = column("library_read_bytes", INTEGER, "bytes")
READ_CALLS = column("read_calls", INTEGER, "")
PAGE_FAULTS = column("page_faults", INTEGER, "")
READS_SINCE_OPEN = column("reads_since_open", INTEGER, "")
OPEN_S = column("open_s", FLOAT, "s")
RESIDENT_FRACTION_AT_OPEN = column("resident_fraction_at_open", FLOAT, "fraction")
RESIDENT_FRACTION_BEFORE_EVICT = column("resident_fraction_before_evict", FLOAT, "fraction")
FILE_BYTES = column("file_bytes", INTEGER, "bytes")
WRITE_CALLS = column("write_calls", INTEGER, "")
LIBRARY_WRITE_BYTES = column("library_write_bytes", INTEGER, "bytes")
STOPPED = column("stopped", BOOLEAN, "")
LIMIT_S = column("limit_s", FLOAT, "s")
STORE_COPY = column("store_copy", INTEGER, "")
QUERY_FILE_BYTES = column("query_file_bytes", INTEGER, "bytes")
HOST = column("host", STRING, "")
FS_TYPE = column("fs_type", STRING, "")
FS_PATH = column("fs_path", STRING, "")
FS_MOUNT = column("fs_mount", STRING, "")
FS_DEVICE = column("fs_device", STRING, "")
FS_MOUNT_OPTIONS = column("fs_mount_options", STRING, "")
FS_BLOCK_BYTES = column("fs_block_bytes", INTEGER, "bytes")
READ_AHEAD_KB = column("read_ahead_kb", INTEGER, "KiB")
FS_STRIPE = column("fs_stripe", STRING, "")
FREE_PAGE_REPORTING_MS = column("free_page_reporting_ms", INTEGER, "ms")
H5SWEEP_VERSION = column("h5sweep_version", STRING, "")
NUMPY_VERSION = column("numpy_version", STRING, "")
PYTHON_VERSION = column("python_version", STRING, "")
CONFIG_HASH = column("config_hash", STRING, "")
SLURM_JOB_ID = column("slurm_job_id", STRING, "")
MEASURED_AT = column("measured_at", STRING, "")
RANK = column("rank", INTEGER, "")
OBJECTIVE = column("objective", STRING, "")
SCORE = column("score", FLOAT, "")
SCORE_CI_LOW = column("score_ci_low", FLOAT, "ratio")
SCORE_CI_HIGH = column("score_ci_high", FLOAT, "ratio")
TIED_WITH_BEST = column("tied_with_best", BOOLEAN, "")
RECOMMENDED = column("recommended", BOOLEAN, "")
MEETS_LIMITS = column("meets_limits", BOOLEAN, "")
EXCLUDED_BY = column("excluded_by", STRING, "")
FILE_RATIO = column("file_ratio", FLOAT, "ratio")
WRITE_MEDIAN_S = column("write_median_s", FLOAT, "s")
WRITE_STOPPED = column("write_stopped", BOOLEAN, "")
REFERENCE_STORE = column("reference_store", STRING, "")
IS_REFERENCE = column("is_reference", BOOLEAN, "")
STATISTIC = column("statistic", STRING, "")
WEIGHTS = column("weights", STRING, "")
SELECTIONS = column("selections", INTEGER, "")
FINDING = column("finding", STRING, "")
STUDY = column("study", STRING, "")
SECTION = column("section", STRING, "")
STATEMENT = column("statement", STRING, "")
DOCUMENT = column("document", STRING, "")
QUOTE = column("quote", STRING, "")
CLAIM = column("claim", STRING, "")
STUDY_CONFIG = column("study_config", STRING, "")
VERDICT = column("verdict", STRING, "")
EVIDENCE = column("evidence", STRING, "")
NEEDS = column("needs", STRING, "")
SYSTEM = column("system", STRING, "")
RUN = column("run", STRING, "")
REGRET = column("regret", FLOAT, "ratio")
REGRET_CI_LOW = column("regret_ci_low", FLOAT, "ratio")
REGRET_CI_HIGH = column("regret_ci_high", FLOAT, "ratio")
BEST_ON_SYSTEM = column("best_on_system", BOOLEAN, "")
MAX_REGRET = column("max_regret", FLOAT, "ratio")
MAX_REGRET_CI_LOW = column("max_regret_ci_low", FLOAT, "ratio")
MAX_REGRET_CI_HIGH = column("max_regret_ci_high", FLOAT, "ratio")
MINIMAX = column("minimax", BOOLEAN, "")
COMPARED_OPTION = column("compared_option", STRING, "")
REPEATS = column("repeats", INTEGER, "")
MIN_S = column("min_s", FLOAT, "s")
MEDIAN_S = column("median_s", FLOAT, "s")
MEAN_S = column("mean_s", FLOAT, "s")
MAX_S = column("max_s", FLOAT, "s")
STD_S = column("std_s", FLOAT, "s")
FIRST_S = column("first_s", FLOAT, "s")
MEDIAN_CI_LOW_S = column("median_ci_low_s", FLOAT, "s")
MEDIAN_CI_HIGH_S = column("median_ci_high_s", FLOAT, "s")
MEDIAN_CI_LEVEL = column("median_ci_level", FLOAT, "")
P90_S = column("p90_s", FLOAT, "s")
RATIO_TO_CONTIGUOUS = column("ratio_to_contiguous", FLOAT, "ratio")
RATIO_CI_LOW = column("ratio_ci_low", FLOAT, "ratio")
RATIO_CI_HIGH = column("ratio_ci_high", FLOAT, "ratio")
RATIO_PAIRS = column("ratio_pairs", FLOAT, "count")
RATIO_REFERENCE = column("ratio_reference", STRING, "")
CHUNKS_TOUCHED_MEAN = column("chunks_touched_mean", FLOAT, "")
DEVICE_READ_BYTES_MEDIAN = column("device_read_bytes_median", FLOAT, "bytes")
LIBRARY_READ_BYTES_MEDIAN = column("library_read_bytes_median", FLOAT, "bytes")
READ_CALLS_MEDIAN = column("read_calls_median", FLOAT, "")
PAGE_FAULTS_MEDIAN = column("page_faults_median", FLOAT, "")
LIBRARY_WRITE_BYTES_MEDIAN = column("library_write_bytes_median", FLOAT, "bytes")
WRITE_CALLS_MEDIAN = column("write_calls_median", FLOAT, "")
CHUNK_BYTES_TOUCHED_MEDIAN = column("chunk_bytes_touched_median", FLOAT, "bytes")
STORED_BYTES_TOUCHED_MEDIAN = column("stored_bytes_touched_median", FLOAT, "bytes")
STORAGE_S_CI_LOW = column("storage_s_ci_low", FLOAT, "s")
STORAGE_S_CI_HIGH = column("storage_s_ci_high", FLOAT, "s")
READ_AMPLIFICATION = column("read_amplification", FLOAT, "ratio")
COMPRESSION_RATIO = column("compression_ratio", FLOAT, "ratio")
WRITES_STOPPED = column("writes_stopped", INTEGER, "")
SCORE_MAX = column("score_max", INTEGER, "")
SCORE_THRESHOLD_S = column("score_threshold_s", FLOAT, "s")
PRIMARY = column("primary", BOOLEAN, "")
RACED_OUT_ROUND = column("raced_out_round", INTEGER, "")
RACED_OUT_AT_LEAST = column("raced_out_at_least", FLOAT, "ratio")
RESUMED = column("resumed", BOOLEAN, "")

group(
    MEASUREMENTS,
    (
        SWEEP,
        FILESYSTEM,
        BACKEND,
        LAYOUT,
        CHUNK_SHAPE,
        SHARD_SHAPE,
        PAGE_SIZE,
        LAYOUT_ID,
        LAYOUT_NAME,
        ORDER,
        COMPRESSION,
    ),
    (
        "The test store: sweep name, filesystem name, storage backend (`hdf5`, `zarr`), `contiguous` "
        "or `chunked`, chunk shape `x×y×z` (empty for contiguous), shard shape (empty without "
        "`layouts.shards`), HDF5's file space page size (0 without `layouts.pages`), layout id (as in "
        "paths), the shape's name (if given), storage order, "
        "compression name."
    ),
)
group(
    MEASUREMENTS,
    (
        FILTER_FAMILY,
        CODEC,
        CODEC_LEVEL,
        SHUFFLE,
    ),
    (
        "The compression's filter: where it comes from (`none`; `hdf5` built into HDF5 or "
        "`hdf5plugin`; `zarr` for a Zarr store's codec), the compressor, its level (empty where it "
        "has none) and the shuffle before it (`none`, `byte`, `bit`)."
    ),
)
group(
    MEASUREMENTS,
    (
        DATASET_SHAPE,
        DTYPE,
        FILL,
        SEED,
        JUDGE_SYNTHETIC_VALUES,
        RAW_BYTES,
    ),
    (
        "The dataset: shape `x×y×z` (or `time×channels`), element type, where the values come from, "
        "seed, whether the findings that depend on the values judge synthetic ones "
        "(`dataset.judge_synthetic_values`), bytes of the raw array."
    ),
)
group(
    MEASUREMENTS,
    (
        N_CHUNKS,
        PADDING_BYTES,
    ),
    ("Chunks of the layout, and bytes allocated beyond the dataset's edge by partial chunks."),
)
group(
    MEASUREMENTS,
    (
        CASE,
        REPEAT,
        SELECTION,
        BYTES_SELECTED,
    ),
    ("The case, the repeat number (selection index), the selection (`[x0:x1, y0:y1, z0:z1]`), its bytes."),
)
group(
    MEASUREMENTS,
    (SECONDS,),
    (
        "The timed operation: `H5Dread` of one selection (read cases), one whole write with fsync "
        "(write), one parallel computation (scaling), one operation (metadata, iosize)."
    ),
)
group(
    MEASUREMENTS,
    (VARIANT,),
    (
        "The case's variant, in words: visiting policy, chunk cache and cold mode (read cases), "
        "strategy and fill time (write), blocks and processes (scaling), and so on."
    ),
)
group(
    MEASUREMENTS,
    (
        POLICY,
        COLD_MODE,
    ),
    ("Read cases: visiting policy; `first` or `every` (see `cases.<case>.cold`)."),
)
group(
    MEASUREMENTS,
    (FILES_TOUCHED,),
    (
        "Read cases: files of the store the read opens (HDF5: 1, its one file, opened before the "
        "read; Zarr: one per chunk it touches, or per shard with `layouts.shards`)."
    ),
)
group(
    MEASUREMENTS,
    (
        STORAGE_S,
        DECODE_COPY_S,
    ),
    (
        "Read cases with `split_read_time`: the storage part of the read timed on its own, and the "
        "rest of `seconds` (decode, assemble, copy); empty otherwise. Summary: `storage_s_median`, "
        "`decode_copy_s_median`."
    ),
)
group(
    MEASUREMENTS,
    (READER,),
    ("Read cases: the library that read (`h5py` for HDF5; `zarr-python` or `tensorstore` for Zarr)."),
)
group(
    MEASUREMENTS,
    (READ_OPTION, READ_OPTION_INDEX, READ_OPTION_SETTING),
    (
        "Read cases: the read option the store was read with (a backend's chunk cache or reader, "
        "e.g. `cache 4 MiB/521/0.75`), its place in the backend's configured options (0: the first, "
        "the one every ratio's reference store is read with) and how a user sets it in their own "
        "code (e.g. `h5py.File(path, 'r', rdcc_nbytes=4194304, rdcc_nslots=521, rdcc_w0=0.75)`)."
    ),
)
group(
    MEASUREMENTS,
    (
        STORE_FILES,
        STORE_DIRECTORIES,
    ),
    (
        "The test store's files and directories (HDF5: 1 and 0; Zarr: `zarr.json` and one file per "
        "chunk, the store's own directory and those under `c/`). `file_bytes` is the sum of all its "
        "files' sizes."
    ),
)
group(
    MEASUREMENTS,
    (
        INTERLEAVED_STORES,
        VISIT_POSITION,
    ),
    (
        "How many test stores the read was interleaved with (1: one store at a time; with "
        "`interleave: true`, every store of the filesystem) and the read's place in the seeded "
        "visiting order of its selection (0 is first)."
    ),
)
group(
    MEASUREMENTS,
    (
        CHUNKS_TOUCHED,
        CHUNK_BYTES_TOUCHED,
        STORED_BYTES_TOUCHED,
    ),
    ("Chunks the selection intersects, their uncompressed bytes, and their stored (filtered) bytes in the file."),
)
group(
    MEASUREMENTS,
    (CACHE_STATE,),
    (
        "Where the read's bytes came from: `cold` (some from the device), `warm` (none: page cache or"
        " chunk cache), `memory` (the filesystem cannot drop its pages, e.g. tmpfs), `unverified` (a "
        "filesystem not on a block device, such as NFS, Lustre, GPFS or a FUSE mount: the kernel's "
        "device counter cannot see its reads, so a first access cannot be checked as cold), `unknown`"
        " (the kernel does not count device reads). On an object store, `cold` is some from the server"
        " (requests made) and `warm` none (all from the client's caches). Metadata and I/O size reads"
        " too; empty for "
        "writes."
    ),
)
group(
    MEASUREMENTS,
    (DEVICE_READ_BYTES,),
    (
        "Bytes the process fetched from the device during the timed read (`/proc/self/io` "
        "`read_bytes`; readahead included)."
    ),
)
group(
    MEASUREMENTS,
    (
        LIBRARY_READ_BYTES,
        READ_CALLS,
    ),
    (
        "Bytes HDF5 (or the raw reader) asked of the file during the timed read, page cache or not "
        "(`rchar`), and the number of read calls (`syscr`)."
    ),
)
group(
    MEASUREMENTS,
    (PAGE_FAULTS,),
    (
        "Read cases: minor page faults of the process during the timed read (`ru_minflt`, from before"
        " the read's preparation, its dataspace selection, to just after it; the system call is kept "
        "off the clock): memory the library mapped on the clock, such as a decompression buffer (Zarr"
        " readers: the new array they return, too). 0 when everything it used was mapped before."
    ),
)
group(
    MEASUREMENTS,
    (
        READS_SINCE_OPEN,
        OPEN_S,
        RESIDENT_FRACTION_AT_OPEN,
    ),
    (
        "Reads of this file handle before this one (0: a first access); seconds the open took (on the"
        " first read after each open; outside `seconds`, except on an object store, where the first "
        "read opens the store inside its clock); share of the file's pages still cached after eviction "
        "(`mincore`)."
    ),
)
group(
    MEASUREMENTS,
    (RESIDENT_FRACTION_BEFORE_EVICT,),
    (
        "Read, scaling and parallel cases: share of the store's pages in the page cache just before "
        "the eviction that preceded this read's open (scaling: this process count's first read; "
        "parallel: on rank 0's node) (`mincore`): 1.0 where the store was primed (its first eviction;"
        " stores beyond priming's memory budget are not), else what the store's previous reads pulled"
        " in; empty where nothing was evicted."
    ),
)
group(
    MEASUREMENTS,
    (FILE_BYTES,),
    ("Size of the test file (write rows: the file the write case wrote)."),
)
group(
    MEASUREMENTS,
    (
        STOPPED,
        LIMIT_S,
    ),
    (
        "Write case: whether the write ran past its limit and was stopped between two calls "
        "(`seconds` is then the time it ran, `write_calls` the calls it made, `file_bytes` empty), "
        "and the limit in seconds (`cases.write.limit_s`, or 10 times its planned time, at least 60 "
        "s). Parallel case: whether the pass ran past `cases.parallel.limit_s` and was stopped after "
        "an access (`seconds` the time it ran, `units_accessed` the units it covered, `bytes_per_s` "
        "empty), and the limit (empty: none). Empty for other cases."
    ),
)
group(
    MEASUREMENTS,
    (STORE_COPY,),
    (
        "Reads: which byte-identical copy of the store the read opened (0: the store itself, 1 … n−1:"
        " the copies made for `filesystems.<name>.read_copies`); 0 for every read of an open file "
        "(`cold: first`) and wherever `read_copies` is 1; empty for rows of cases that read no test "
        "store."
    ),
)
group(
    MEASUREMENTS,
    (
        HOST,
        FS_TYPE,
        FS_PATH,
        FS_MOUNT,
        FS_DEVICE,
        FS_MOUNT_OPTIONS,
        FS_BLOCK_BYTES,
        READ_AHEAD_KB,
    ),
    (
        "Provenance: the machine, the filesystem's type, directory, mount point, device, mount "
        "options, block size, and the block device's readahead in KiB (-1: no block device)."
    ),
)
group(
    MEASUREMENTS,
    (FS_STRIPE,),
    (
        "Provenance: the Lustre striping the test store's directory was given "
        "(`filesystems.<name>.stripe`: `count=N size=B`); empty where none was set."
    ),
)
group(
    MEASUREMENTS,
    (FREE_PAGE_REPORTING_MS,),
    (
        "Provenance: on a virtual machine whose balloon device hands freed memory back to the "
        "hypervisor (free page reporting), how long a freed page stays free before it goes "
        "(`min_free_ms`, or the kernel's fixed 2,000 ms); -1 where freed memory stays with the "
        "machine. Below 100,000 ms a cold read that follows a report pays the host for the page cache"
        " it fills, and the plan warns (`h5sweep.host`, README)."
    ),
)
group(
    MEASUREMENTS,
    (
        H5SWEEP_VERSION,
        NUMPY_VERSION,
        PYTHON_VERSION,
        CONFIG_HASH,
        SLURM_JOB_ID,
        MEASURED_AT,
    ),
    (
        "Provenance: software versions (each backend adds its libraries'), hash of the settings"
        " the job ran with (its `params.settings`: rows with the same hash were measured with the "
        "same dataset, layout, codec and case settings), the SLURM job (empty locally), time of the "
        "measurement."
    ),
)
group(
    RECOMMENDATION,
    (
        FILESYSTEM,
        FS_TYPE,
        BACKEND,
    ),
    (
        "Where the ranking holds (each filesystem on its own, every backend's stores together), and "
        "the candidate's backend."
    ),
)
group(
    RECOMMENDATION,
    (RANK,),
    ("1 is the best by the objective; layouts beyond the limits are ranked after those within."),
)
group(
    RECOMMENDATION,
    (
        LAYOUT_ID,
        LAYOUT_NAME,
        CHUNK_SHAPE,
        COMPRESSION,
        READ_OPTION,
        READ_OPTION_INDEX,
        READ_OPTION_SETTING,
    ),
    (
        "The candidate: a store read with one read option (`layout_name` `h5py-auto` for "
        "`layouts.auto`); every read option a sweep measured is ranked as its own row (each chunk "
        "cache, each Zarr reader), with its place among its backend's options (0: the first) and "
        "how to set it."
    ),
)
group(
    RECOMMENDATION,
    (
        OBJECTIVE,
        SCORE,
        SCORE_CI_LOW,
        SCORE_CI_HIGH,
    ),
    (
        "The objective ranked by (`time`, `worst-case`, `geometric`) and its value for this store "
        "with its 95% interval: `mix_ratio`, `worst_slowdown` or `weighted_ratio`. Lower is better."
    ),
)
group(
    RECOMMENDATION,
    (TIED_WITH_BEST,),
    ("`to_best_ci_low` is at most 1: the measurements cannot tell the store apart from the best."),
)
group(
    RECOMMENDATION,
    (RECOMMENDED,),
    (
        "The choice: of the layouts tied with the best, the one with the smallest file (files within "
        "5% of the smallest count as the same size, and of those the best score is chosen)."
    ),
)
group(
    RECOMMENDATION,
    (
        MEETS_LIMITS,
        EXCLUDED_BY,
    ),
    (
        "Whether the layout is within `recommend.max_file_ratio` and `recommend.max_write_s`, and if "
        "not, which limit it exceeds by how much."
    ),
)
group(
    RECOMMENDATION,
    (
        FILE_BYTES,
        FILE_RATIO,
    ),
    ("The test file's size, and that over the raw data's."),
)
group(
    RECOMMENDATION,
    (
        WRITE_MEDIAN_S,
        WRITE_STOPPED,
    ),
    (
        "The write case's median time (its first variant), and whether that write was stopped at its "
        "limit (`cases.write.limit_s`): the time is then a lower bound (`>` in `recommendation.md`) "
        "and the layout is excluded (`excluded_by`)."
    ),
)
group(
    RECOMMENDATION,
    (
        REFERENCE_STORE,
        IS_REFERENCE,
    ),
    (
        "The store every ratio is to (`contiguous` unless the sweep has none or `layouts.reference` "
        "names another), and whether this row is it."
    ),
)
group(
    RECOMMENDATION,
    (
        STATISTIC,
        WEIGHTS,
        SELECTIONS,
    ),
    (
        "The reads compared (`recommend.statistic`), the reads of each case per unit of work, and the"
        " number of reads ranked."
    ),
)
group(
    RECOMMENDATION,
    ("seconds_<case>",),
    ("One column per read case of the mix: the store's mean read time of the case, in seconds."),
)
group(
    RECOMMENDATION,
    ("weight_<case>",),
    (
        "One column per read case of the mix: its reads per unit of work, as ranked (`weights` says "
        "the same in words); empty for a case not in this filesystem's mix."
    ),
)
group(
    RECOMMENDATION,
    ("ratio_<case>",),
    ("One column per read case of the mix: the median of its per-selection ratios to the reference store."),
)
group(
    FINDINGS,
    (FILESYSTEM,),
    ("The filesystem the finding was checked on (`compare` adds `run`, the sweep's folder)."),
)
group(
    FINDINGS,
    (
        FINDING,
        STUDY,
        SECTION,
        DOCUMENT,
        QUOTE,
        CLAIM,
        STATEMENT,
    ),
    (
        "The finding's id in `h5sweep.analyze.findings.FINDINGS`, the study, its section, the seed "
        "document, the seed's own sentence (verbatim) and what is tested: the sentence with its "
        "conditions and thresholds. A publication that is not among the seeds has its address as "
        "`document`, no `quote`, and a `claim`: what it reports, in h5sweep's words."
    ),
)
group(
    FINDINGS,
    (VERDICT,),
    (
        "`holds` or `does not hold` (the 95% intervals wholly on one side of the statement), "
        "`inconclusive` (they admit both, or part of the sentence was not measured) or `not measured` "
        "(the sweep lacks what the sentence needs, under its conditions)."
    ),
)
group(
    FINDINGS,
    (EVIDENCE,),
    ("The numbers the verdict rests on, or for `not measured` the keys that would measure it."),
)
group(
    FINDINGS,
    (NEEDS, STUDY_CONFIG),
    ("The config keys the finding needs, and the study config built to measure it."),
)
group(
    COMPARISON,
    (
        SYSTEM,
        RUN,
        SWEEP,
        HOST,
        FILESYSTEM,
        FS_TYPE,
        DATASET_SHAPE,
    ),
    (
        "The system (named `host/filesystem`, prefixed with the results folder's name where two are "
        "named alike) and where it comes from."
    ),
)
group(
    COMPARISON,
    (
        BACKEND,
        LAYOUT_ID,
        COMPRESSION,
        READ_OPTION,
        COMPARED_OPTION,
    ),
    (
        "The store, the read option it was read with on the system, and the option as compared across "
        "systems: the same as `read_option`, each a choice of its own, or `each system's best option` "
        "where the backend's options differ between the systems (an object store's also say how the "
        "file is fetched): each system then reads the store with its own best option, and the store is "
        "compared by its layout and codec."
    ),
)
group(
    COMPARISON,
    (
        REGRET,
        REGRET_CI_LOW,
        REGRET_CI_HIGH,
        BEST_ON_SYSTEM,
    ),
    ("Its mix time over the system's best store's (paired), and whether it is that best."),
)
group(
    COMPARISON,
    (
        MAX_REGRET,
        MAX_REGRET_CI_LOW,
        MAX_REGRET_CI_HIGH,
        MINIMAX,
    ),
    (
        "Its largest regret over the systems, with the interval of the systems' bootstraps drawn side"
        " by side, and whether it is the choice (the smallest largest regret)."
    ),
)
group(
    COMPARISON,
    (
        FILE_BYTES,
        WEIGHTS,
    ),
    ("The store's file size on the system, and the read mix compared (the first sweep's)."),
)
group(
    SUMMARY,
    (
        FILESYSTEM,
        BACKEND,
        LAYOUT,
        CHUNK_SHAPE,
        SHARD_SHAPE,
        PAGE_SIZE,
        ORDER,
        COMPRESSION,
        CASE,
        VARIANT,
        CACHE_STATE,
    ),
    (
        "The row's group (as above). A case whose reads were partly `cold` and partly `warm` (`cold: "
        "first`) has one row for each."
    ),
)
group(
    SUMMARY,
    (REPEATS,),
    ("n: timed operations in the group."),
)
group(
    SUMMARY,
    (
        MIN_S,
        MEDIAN_S,
        MEAN_S,
        MAX_S,
        STD_S,
        FIRST_S,
    ),
    ("Statistics of `seconds`; `first_s` is the first repeat's (a first access with `cold: first`)."),
)
group(
    SUMMARY,
    (
        MEDIAN_CI_LOW_S,
        MEDIAN_CI_HIGH_S,
        MEDIAN_CI_LEVEL,
    ),
    (
        "95% confidence interval of the median from order statistics (distribution-free), and the "
        "confidence it really has (`median_ci_level`: at least 0.95 from n = 6; with n ≤ 5 the interval "
        "is the whole range, of level 1 - 2 x 0.5^n, 0.75 for 3 values; with n = 1 empty: one value "
        "has no interval). Empty, with every other two-sided interval of the row (`ratio_ci_*`, "
        "`storage_s_ci_*`, the backend ratio's), for a store raced out of its pass or of the write "
        "race: its reads or writes stop at the round it lost, so they sample the pass's start only "
        "and another run's value falls inside such an interval far less often than 95%; the row "
        "says what is known instead, its one-sided bound `raced_out_at_least`."
    ),
)
group(
    SUMMARY,
    (P90_S,),
    ("90th percentile of `seconds`."),
)
group(
    SUMMARY,
    (
        RATIO_TO_CONTIGUOUS,
        RATIO_CI_LOW,
        RATIO_CI_HIGH,
        RATIO_PAIRS,
        RATIO_REFERENCE,
    ),
    (
        "Read cases: the median of the per-selection ratios of this row's reads to the reference "
        "store's reads of the same selections (same filesystem, backend, case, variant and cache "
        "state), its 95% interval, and the number of pairs; `ratio_reference` names the reference "
        "store: the contiguous layout, or where the sweep has none (or `layouts.reference` names "
        "another) that layout with the first compression. 1 for the reference. Other backends' rows "
        "are paired with the reference backend's reference store's reads in its first read option, "
        "same visiting policy and cold mode."
    ),
)
group(
    SUMMARY,
    (
        LAYOUT_ID,
        LAYOUT_NAME,
        BYTES_SELECTED,
        RAW_BYTES,
        FS_TYPE,
        FS_DEVICE,
        CHUNKS_TOUCHED_MEAN,
    ),
    ("Carried from the measurements."),
)
group(
    SUMMARY,
    (
        DEVICE_READ_BYTES_MEDIAN,
        LIBRARY_READ_BYTES_MEDIAN,
        READ_CALLS_MEDIAN,
        PAGE_FAULTS_MEDIAN,
        LIBRARY_WRITE_BYTES_MEDIAN,
        WRITE_CALLS_MEDIAN,
        CHUNK_BYTES_TOUCHED_MEDIAN,
        STORED_BYTES_TOUCHED_MEDIAN,
    ),
    (
        "Medians of the counted evidence: what the device and the library read, and what the model "
        "says a read needs (the uncompressed and the stored bytes of the chunks it touches)."
    ),
)
group(
    SUMMARY,
    (
        STORAGE_S_CI_LOW,
        STORAGE_S_CI_HIGH,
    ),
    (
        "Read cases with `split_read_time`: the 95% confidence interval of `storage_s_median` (the "
        "storage part's median), from order statistics as `median_ci_low_s`; empty where the reads "
        "were not split."
    ),
)
group(
    SUMMARY,
    (READ_AMPLIFICATION,),
    (
        "Cold reads: `device_read_bytes_median` over what the model says the read needs "
        "(`stored_bytes_touched_median`, or `bytes_selected` for contiguous). Above 1 the storage "
        "read more than the chunks (readahead, index metadata); empty for warm and memory reads."
    ),
)
group(
    SUMMARY,
    (
        "write_strategy",
        "fill_time",
        POLICY,
        COLD_MODE,
        READER,
        "chunk_cache_bytes",
        "chunk_cache_slots",
        "chunk_cache_w0",
        CACHE_HOLDS_CHUNK,
        "processes",
        "scaling_slices",
        "z_slices",
        "operation",
        "n_datasets",
        "metadata_file_bytes",
        "api",
        "direction",
        "request_bytes",
    ),
    (
        "`write_strategy`, `fill_time`, `policy`, `cold_mode`, `reader`, "
        "`chunk_cache_bytes`, `chunk_cache_slots`, `chunk_cache_w0`, `cache_holds_chunk`, "
        "`processes`, `scaling_slices`, `z_slices`, `operation`, `n_datasets`, `metadata_file_bytes`,"
        " `api`, `direction`, `request_bytes`."
    ),
    label="the variant's settings",
)
group(
    SUMMARY,
    (
        FILE_BYTES,
        COMPRESSION_RATIO,
    ),
    ("The file's size as the write case wrote it, and `raw_bytes / file_bytes`."),
)
group(
    SUMMARY,
    (
        WRITES_STOPPED,
        LIMIT_S,
    ),
    (
        "Write case: how many of the group's writes were stopped at their limit (then its times are "
        "lower bounds), and the limit; parallel case: how many of the group's passes were stopped at "
        "`cases.parallel.limit_s` (they have no bandwidth; a group with every pass stopped has none);"
        " empty for other cases."
    ),
)
group(
    SUMMARY,
    (
        SCORE,
        SCORE_MAX,
        SCORE_THRESHOLD_S,
    ),
    (
        "The study's score of the file for this read variant (from each case's median over all its "
        "reads) and the criteria available; the median time under which this row's case earns its "
        "point (scaled to `bytes_selected` unless `score.scale_to_selection` is false)."
    ),
)
group(
    SUMMARY,
    (PRIMARY,),
    (
        "The row the study's figures show: the config's first variant of each case and, where reads "
        "split into cache states, the state most were in."
    ),
)

group(
    MEASUREMENTS,
    (RACED_OUT_ROUND, RACED_OUT_AT_LEAST),
    (
        "Reads of a store raced out of its pass (`race`): the rounds of selections it read before it "
        "stopped, and the lower bound then of its objective's ratio to the best store's (it is at "
        "least that much slower); empty for a store read to the end. Writes of a store raced out of "
        "the write race: the timed writes of its variant it made, and the lower bound of its write "
        "time's ratio to the best store's of the variant."
    ),
)
group(
    MEASUREMENTS,
    (RESUMED,),
    (
        "Reads of a store that was raced out and then read to the end in a pass of its own "
        "(`python -m h5sweep.compare.whatif RUN --weights ... --resume`): on the same seeded selections as "
        "the other stores' reads it is paired with, but not interleaved in time with them; they "
        "replace its reads before it stopped. Empty for every other read."
    ),
)
group(
    SUMMARY,
    (RACED_OUT_ROUND, RACED_OUT_AT_LEAST),
    "As in the measurements: the group's store was raced out at that round, at least that much slower.",
)
group(
    RECOMMENDATION,
    (RACED_OUT_ROUND, RACED_OUT_AT_LEAST),
    (
        "A store raced out of the read pass: not ranked by its partial reads, listed after the "
        "others with the round it stopped at and how much slower than the best it was at least."
    ),
)
