"""The columns the parallel case adds to the tables, registered with h5sweep.storage.columns:
every module names them by these constants."""

from __future__ import annotations

from h5sweep.storage import columns

OPERATION = columns.column("operation", columns.STRING, "")
MODE = columns.column("mode", columns.STRING, "")
PROCESSES = columns.column("processes", columns.INTEGER, "")
UNITS_COLUMN = columns.column("units", columns.STRING, "")
UNITS_PER_ACCESS = columns.column("units_per_access", columns.INTEGER, "")
REMAINDER_RANK = columns.column("remainder_rank", columns.INTEGER, "")
ACCESSES = columns.column("accesses", columns.INTEGER, "")
UNITS_ACCESSED = columns.column("units_accessed", columns.INTEGER, "")
BYTES_PER_S = columns.column("bytes_per_s", columns.FLOAT, "B/s")
FASTEST_RANK_S = columns.column("fastest_rank_s", columns.FLOAT, "s")
RANK_NODES = columns.column("rank_nodes", columns.INTEGER, "")
SLURM_TASKS = columns.column("slurm_tasks", columns.INTEGER, "")
MPI_LIBRARY = columns.column("mpi_library", columns.STRING, "")
TASKS_PER_NODE = columns.column("tasks_per_node", columns.INTEGER, "")
MPI_HINTS = columns.column("mpi_hints", columns.STRING, "")
MPI_HINTS_IN_EFFECT = columns.column("mpi_hints_in_effect", columns.STRING, "")
BYTES_PER_S_MAX = columns.column("bytes_per_s_max", columns.FLOAT, "B/s")
BYTES_PER_S_MEDIAN = columns.column("bytes_per_s_median", columns.FLOAT, "B/s")
BYTES_PER_S_CI_LOW = columns.column("bytes_per_s_ci_low", columns.FLOAT, "B/s")
BYTES_PER_S_CI_HIGH = columns.column("bytes_per_s_ci_high", columns.FLOAT, "B/s")
columns.group(
    columns.MEASUREMENTS,
    (
        OPERATION,
        MODE,
        PROCESSES,
        UNITS_COLUMN,
        UNITS_PER_ACCESS,
        REMAINDER_RANK,
        ACCESSES,
        UNITS_ACCESSED,
        BYTES_PER_S,
        FASTEST_RANK_S,
        RANK_NODES,
        SLURM_TASKS,
        MPI_LIBRARY,
    ),
    (
        "Parallel case, one row per pass: `read` or `write`; `serial`, `independent` or `collective`;"
        " the ranks (1 for serial); what an access takes (`columns`, `z_slabs`, `x_planes`) and how "
        "many (k); the rank that took the accesses left after the even deal; the accesses of the pass"
        " and the units they covered (the whole axis, counted over the ranks); `seconds` the pass "
        "from the barrier before its first access to the barrier after its last (a write's flush, "
        "close and fsync included), `bytes_per_s` the dataset's bytes over it; `fastest_rank_s` the "
        "rank that finished its own accesses first; `rank_nodes` the nodes the ranks ran on; "
        "`slurm_tasks` the tasks of the SLURM allocation (empty locally); `device_read_bytes` summed "
        "over the ranks; `reader` the library (`h5py`, `zarr-python`, `tensorstore`; the versions the "
        "ranks ran on are the backend's provenance columns); `mpi_library` the MPI library."
    ),
)
columns.group(
    columns.MEASUREMENTS,
    (
        TASKS_PER_NODE,
        MPI_HINTS,
        MPI_HINTS_IN_EFFECT,
    ),
    (
        "Parallel case: the ranks per node asked for (`cases.parallel.tasks_per_node`; empty: as the "
        "scheduler placed them; `rank_nodes` says how many nodes they ran on); the MPI-IO hints the "
        "pass's files were opened with (`cases.parallel.hints`, `key=value` pairs joined by `;` in "
        "key order), and those of them the MPI-IO layer reports back for the open file (empty for a "
        "serial pass and for backends without MPI-IO)."
    ),
)
columns.group(
    columns.SUMMARY,
    (
        BYTES_PER_S_MAX,
        BYTES_PER_S_MEDIAN,
        BYTES_PER_S_CI_LOW,
        BYTES_PER_S_CI_HIGH,
    ),
    (
        "Parallel case: the best bandwidth of the group's passes (the study's statistic: best of the "
        "repeats) and the median bandwidth with its 95% interval (order statistics, as for "
        "`median_s`)."
    ),
)
