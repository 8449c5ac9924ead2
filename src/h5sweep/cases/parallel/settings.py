"""The parallel case's settings (``cases.parallel``), declared once (h5sweep.storage.declared)."""

from __future__ import annotations

from h5sweep.cases.parallel import columns as PC
from h5sweep.storage.declared import Block, Setting

MODES = ("serial", "independent", "collective")
OPERATIONS = ("read", "write")
# the remainder dealt as the study dealt it (Folk & Choi): the default
STUDY_REMAINDER = "study"
REMAINDERS = (STUDY_REMAINDER, "first", "last", "spread")
LAYOUT_KINDS = ("contiguous", "chunked")
# what an access takes k of: (the dataset's rank, the axis)
UNITS = {"columns": (2, 1), "rows": (2, 0), "z_slabs": (3, 2), "x_planes": (3, 0)}

SETTINGS = Block(
    "parallel",
    "Parallel passes (Folk & Choi; Kang et al. Fig. 3): P ranks read or write the entire dataset in "
    "accesses of k units along one axis, dealt among the ranks in contiguous blocks; serial, "
    "independent and collective modes (each backend those it has: HDF5 all three through parallel "
    "HDF5, Zarr serial and independent); each pass timed from the barrier before its first access to "
    "the barrier after its last, cold on every node; one MPI run per process count (mpirun, or srun "
    "--mpi=pmix in a SLURM job) with .venv-mpi (make install-mpi).",
    (
        Setting(
            PC.PROCESSES,
            "array",
            [1, 2],
            "MPI ranks of each run (serial passes run once, recorded as 1 process).",
            {"minItems": 1, "items": {"type": "integer", "minimum": 1}},
        ),
        Setting(
            PC.UNITS_COLUMN,
            "string",
            "auto",
            "What an access takes k of: columns or rows of a 2-D array (rows: blocks of time steps of a "
            "[time, channels] recording); z_slabs (ion images [:, :, z]) or x_planes (blocks of spectra "
            "[x, :, :]) of a 3-D cube; auto: columns for 2-D, z_slabs for 3-D.",
            {"enum": ["auto", *UNITS]},
        ),
        Setting(
            PC.UNITS_PER_ACCESS,
            None,
            [1, 32],
            "Units per access (k), for every layout, or per layout kind as {contiguous: [...], chunked: "
            "[...]} (the study took 525 columns of both and 1 column of chunked images only), optionally "
            "with writes: [...], the k of those that write passes use (all unless given).",
            {
                "oneOf": [
                    {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {
                            kind: {"type": "array", "items": {"type": "integer", "minimum": 1}}
                            for kind in (*LAYOUT_KINDS, "writes")
                        },
                    },
                ]
            },
        ),
        Setting(
            "modes",
            "array",
            list(MODES),
            "serial (rank 0 does the whole pass), independent, collective (MPI-IO collective calls).",
            {"minItems": 1, "items": {"type": "string", "enum": list(MODES)}},
        ),
        Setting(
            "operations",
            "array",
            list(OPERATIONS),
            "Read passes (of the test store) and write passes (of a new store beside it).",
            {"minItems": 1, "items": {"type": "string", "enum": list(OPERATIONS)}},
        ),
        Setting(
            "remainder",
            "string",
            STUDY_REMAINDER,
            "Which rank takes the accesses left after the even deal (and the short last one): study (the "
            "last rank in independent mode, rank 0 in collective mode, as Folk & Choi did), first (rank "
            "0) or last; spread deals every access, the short one included, in contiguous blocks that "
            "differ by at most one access (an even partition, as Kang et al.'s).",
            {"enum": list(REMAINDERS)},
        ),
        Setting(
            "repeats",
            "integer",
            6,
            "Whole passes per operation, mode and k (the study's best of 6).",
            {"minimum": 1},
        ),
        Setting(
            "limit_s",
            ["number", "null"],
            None,
            "Seconds after which a pass stops (checked after each access; in collective mode the ranks "
            "agree after each call, so they stop at the same one); it is recorded as stopped (stopped, "
            "limit_s) with no bandwidth, and its later repeats are not run. null: no limit.",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            PC.TASKS_PER_NODE,
            ["integer", "null"],
            None,
            "Ranks per node: the SLURM job asks for --ntasks-per-node (and as many nodes as the largest "
            "process count needs) and each run's srun places its ranks so; recorded per row "
            "(tasks_per_node, with rank_nodes, the nodes the ranks ran on). Locally, every rank is on "
            "this node. null: as the scheduler places them.",
            {"minimum": 1},
        ),
        Setting(
            "hints",
            "object",
            {},
            "MPI-IO hints the parallel passes open their files with, e.g. {romio_cb_read: enable, "
            "cb_buffer_size: 16777216, striping_factor: 4} (backends that open through MPI-IO: HDF5's "
            "mpio driver; Zarr has none). Recorded per row as mpi_hints, and as mpi_hints_in_effect what "
            "the MPI-IO layer reports back for the same keys.",
            {"additionalProperties": {"type": ["string", "integer", "number", "boolean"]}},
        ),
    ),
)
