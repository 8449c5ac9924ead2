"""Metadata overhead (HDF User's Guide, 14.2.1): the same values stored as one dataset or as
N small ones, per filesystem: file size, and the time to write and to read them all back.

The dataset's spectra are split into N consecutive groups; each group is one contiguous 2-D
dataset ``(spectra, z)``. N = 1 is the consolidated layout.
"""

from __future__ import annotations

from h5sweep.cases.spec import CaseSpec
from h5sweep.errors import ConfigError
from h5sweep.measure import rates
from h5sweep.storage.layouts import Shape


class MetadataCase:
    name = "metadata"
    description = "the same values as N small datasets vs one"

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.datasets = [int(n) for n in self.settings.get("datasets", [1, 100])]
        self.repeats = int(self.settings.get("repeats", 3))

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        spectra = shape[0] * shape[1]
        if self.repeats < 1:
            raise ConfigError("cases.metadata.repeats", self.repeats, "must be at least 1")
        for i, n in enumerate(self.datasets):
            if not 1 <= n <= spectra:
                raise ConfigError(f"cases.metadata.datasets[{i}]", n, f"must be 1 to the number of spectra ({spectra})")


def timed_seconds(sweep) -> float:
    """Per N and repeat: write everything (fsync included) and read it back cold, checking
    it; all timed."""
    case = sweep.metadata
    raw = sweep.raw_bytes
    per = raw / rates.STANDARD_WRITE_BYTES_PER_S["none"] + raw / rates.DEVICE_READ_BYTES_PER_S
    return sum(case.repeats * (per + 2 * n * rates.SECONDS_PER_DATASET) for n in case.datasets)


SPEC = CaseSpec(
    name="metadata",
    scope="filesystem",
    stage="metadata",
    variant_columns=("operation", "n_datasets", "metadata_file_bytes"),
    enabled=lambda sweep: sweep.metadata is not None,
    figures=lambda sweep: ["metadata-{filesystem}"],
    job_cost=rates.filesystem_job(timed_seconds, lambda sweep: len(sweep.metadata.datasets) * sweep.metadata.repeats),
    runner="h5sweep.cases.metadata_run:run_metadata",
    mem_mb=rates.cube_and_copy_mb,
    scratch_bytes=lambda sweep: sweep.raw_bytes + 64 * 1024,  # its file, beside the test stores
)
