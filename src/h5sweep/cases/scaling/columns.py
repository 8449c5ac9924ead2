"""The columns the scaling case adds to the tables, registered with h5sweep.storage.columns:
every module names them by these constants."""

from __future__ import annotations

from h5sweep.storage import columns

PROCESSES = columns.column("processes", columns.INTEGER, "")
Z_SLICES = columns.column("z_slices", columns.INTEGER, "")
SCALING_SLICES = columns.column("scaling_slices", columns.STRING, "")
VARIANCE = columns.column("variance", columns.FLOAT, "")
VERIFIED = columns.column("verified", columns.BOOLEAN, "")
CORES = columns.column("cores", columns.INTEGER, "")
columns.group(
    columns.MEASUREMENTS,
    (
        PROCESSES,
        Z_SLICES,
        SCALING_SLICES,
        VARIANCE,
        VERIFIED,
        CORES,
    ),
    (
        "Scaling case: worker processes, slices per block, the block as configured, the variance "
        "computed, whether it was checked (always, with a CRC-32 of every worker's values), and the "
        "cores the job could run on (its CPU affinity: under SLURM the allocation's on its node)."
    ),
)
