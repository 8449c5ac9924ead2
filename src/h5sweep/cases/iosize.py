"""Throughput against I/O size (the HDF5 I/O lab): the dataset's bytes written and read
sequentially in requests of each size, through HDF5 (a contiguous 1-D dataset, one hyperslab
per request) and as raw binary (``write``/``pread`` on a plain file), on the same filesystem;
reads from an evicted file (cold) and again (warm).
"""

from __future__ import annotations

import math

from h5sweep.cases.spec import CaseSpec
from h5sweep.errors import ConfigError
from h5sweep.measure import rates

DEFAULT_SIZES = [4 * 1024 * 4**k for k in range(9)]  # 4 KiB ... 256 MiB


class IOSizeCase:
    name = "iosize"
    description = "sequential throughput against request size, HDF5 and raw binary"

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.sizes = [int(s) for s in self.settings.get("sizes", DEFAULT_SIZES)]
        self.repeats = int(self.settings.get("repeats", 1))

    def check(self, shape: tuple = (), itemsize: int = 1) -> None:
        if self.repeats < 1:
            raise ConfigError("cases.iosize.repeats", self.repeats, "must be at least 1")
        for i, size in enumerate(self.sizes):
            if size < itemsize or size % itemsize:
                raise ConfigError(
                    f"cases.iosize.sizes[{i}]",
                    size,
                    f"must be a positive multiple of the element size ({itemsize} bytes)",
                )


def timed_seconds(sweep) -> float:
    """Per request size, API and repeat: a write and two reads (cold, warm) of the dataset's
    bytes; all timed."""
    case = sweep.iosize
    raw = sweep.raw_bytes
    per_api = (
        raw / rates.STANDARD_WRITE_BYTES_PER_S["none"]
        + raw / rates.DEVICE_READ_BYTES_PER_S
        + raw / rates.READ_BYTES_PER_S["none"]
    )
    calls = sum(3 * math.ceil(raw / min(size, raw)) for size in case.sizes)
    return case.repeats * (2 * len(case.sizes) * per_api + 2 * calls * rates.SECONDS_PER_WRITTEN_CHUNK)


SPEC = CaseSpec(
    name="iosize",
    scope="filesystem",
    stage="iosize",
    variant_columns=("api", "direction", "request_bytes"),
    enabled=lambda sweep: sweep.iosize is not None,
    figures=lambda sweep: ["iosize-{filesystem}"],
    job_cost=rates.filesystem_job(timed_seconds, lambda sweep: 2 * len(sweep.iosize.sizes) * sweep.iosize.repeats),
    runner="h5sweep.cases.iosize_run:run_iosize",
    mem_mb=rates.cube_and_copy_mb,
    scratch_bytes=lambda sweep: 2 * sweep.raw_bytes,  # its HDF5 and raw files
)
