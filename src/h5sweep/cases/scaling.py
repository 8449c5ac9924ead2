"""Local parallel scaling (the OpenMSI study's): ``numpy.var`` over a block of z-slices,
split along x across 1...N processes, each reading its part of the file.

Settings: ``processes`` (process counts), ``slices`` (each a fraction of z such as 0.2, or a
number of slices such as 25), ``repeats``. The z position of each repeat is drawn from the
seed, the same for every layout.
"""

from __future__ import annotations

from h5sweep.backends import HDF5
from h5sweep.cases.spec import CaseSpec
from h5sweep.errors import ConfigError
from h5sweep.measure import rates
from h5sweep.storage.layouts import Shape
from h5sweep.storage.selections import Selection, case_rng, random_boxes


class ScalingCase:
    name = "scaling"
    description = "numpy.var over z-slices, split along x across processes"

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.repeats = int(self.settings.get("repeats", 10))
        self.processes = [int(p) for p in self.settings.get("processes", [1, 2])]
        self.slices = list(self.settings.get("slices", [0.2, 25]))

    @staticmethod
    def is_fraction(slices) -> bool:
        return isinstance(slices, float) and 0 < slices <= 1

    def depth(self, slices, shape: Shape) -> int:
        """Number of z-slices of a ``slices`` setting (a fraction of z, or a count)."""
        if self.is_fraction(slices):
            return max(1, round(slices * shape[2]))
        return int(slices)

    @classmethod
    def label(cls, slices) -> str:
        return f"{slices:g} of z" if cls.is_fraction(slices) else f"{int(slices)} slices"

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        key = "cases.scaling"
        if self.repeats < 1:
            raise ConfigError(f"{key}.repeats", self.repeats, "must be at least 1")
        for i, p in enumerate(self.processes):
            if not 1 <= p <= shape[0]:
                raise ConfigError(
                    f"{key}.processes[{i}]", p, f"must be 1 to dataset.shape[0]={shape[0]} (work is split along x)"
                )
        for i, s in enumerate(self.slices):
            depth = self.depth(s, shape)
            if isinstance(s, float) and s > 1 and s != int(s):
                raise ConfigError(f"{key}.slices[{i}]", s, "a fraction of z must be at most 1, a count whole")
            if not 1 <= depth <= shape[2]:
                raise ConfigError(f"{key}.slices[{i}]", s, f"selects {depth} z-slices of dataset.shape[2]={shape[2]}")

    def selections(self, shape: Shape, seed: int, slices) -> list[Selection]:
        size = (shape[0], shape[1], self.depth(slices, shape))
        return random_boxes(case_rng(seed, f"{self.name}/{slices}"), shape, size, self.repeats)


def timed_seconds(sweep, layout, compression, from_device: bool = True) -> float:
    """Per block, process count and repeat: reading the block (from the device first: each
    process count starts cold) and its variance; timed."""
    case = sweep.scaling
    seconds = 0.0
    for slices in case.slices:
        block = sweep.shape[0] * sweep.shape[1] * case.depth(slices, sweep.shape) * sweep.dtype.itemsize
        read = block / rates.read_rate(compression) + block / rates.MAKE_DATA_BYTES_PER_S
        cold = block / rates.DEVICE_READ_BYTES_PER_S if from_device else 0.0
        seconds += len(case.processes) * (case.repeats * read + cold)
    return seconds


def memory_mb(sweep) -> int:
    """The largest block in the workers (as read and as float64) and in the parent (the data
    source's copy and its float64 for the variance), and each worker's interpreter."""
    case = sweep.scaling
    itemsize = sweep.dtype.itemsize
    block = max(sweep.shape[0] * sweep.shape[1] * case.depth(s, sweep.shape) for s in case.slices) * itemsize
    return -(-2 * block * (1 + 8 // itemsize) // rates.MB) + 64 * max(case.processes) + 256


SPEC = CaseSpec(
    name="scaling",
    scope="store",
    stage="scaling",
    variant_columns=("processes", "scaling_slices", "z_slices"),
    enabled=lambda sweep: sweep.scaling is not None,
    figures=lambda sweep: ["scaling-{filesystem}"],
    job_cost=rates.store_job(timed_seconds),
    runner="h5sweep.cases.scaling_run:measure",
    mem_mb=memory_mb,
    threads=lambda sweep: max(sweep.scaling.processes),
    backends=(HDF5,),  # its workers read through h5py
)
