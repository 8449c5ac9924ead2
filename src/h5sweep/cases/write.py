"""Case 4, write: the whole dataset written through the standard HDF5 API, timed.

Strategies (the OpenMSI study's): one spectrum at a time, the m x m spectra of one chunk
column at a time, one chunk at a time. Fill times (HDF5's): whether the storage is first
filled with the fill value when it is allocated. Each repeat writes a new file, fsync
included in the time.
"""

from __future__ import annotations

from h5sweep.cases.spec import CaseSpec
from h5sweep.errors import ConfigError
from h5sweep.measure import rates, settle
from h5sweep.storage.layouts import WRITE_STRATEGIES

FILL_TIMES = ("ifset", "never", "alloc")
# The variant whose file the read cases query: what a converter writing chunk by chunk, with
# HDF5's default fill time, leaves on disk.
QUERIED_VARIANT = ("chunk", "ifset")


class WriteCase:
    name = "write"
    description = "write the whole dataset with each strategy and fill time"

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.repeats = int(self.settings.get("repeats", 1))
        self.strategies = list(self.settings.get("strategies") or ["chunk"])
        self.fill_times = list(self.settings.get("fill_time") or ["ifset"])
        if self.repeats < 1:
            raise ConfigError("cases.write.repeats", self.repeats, "must be at least 1")
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
    def leaves_query_file(self) -> bool:
        """Whether the write case writes the file the read cases query (else the fast path does)."""
        return QUERIED_VARIANT in self.variants()

    @staticmethod
    def variant_label(strategy: str, fill_time: str) -> str:
        return f"{strategy}, fill {fill_time}"


def _generate_job(sweep, store, from_device):
    """The generate job: making the data, the timed writes, the query file, and the rest
    before each variant's first write (inside its window, h5sweep.measure.settle)."""
    layout, compression = store.layout, store.compression
    settle_s = settle.settle_seconds(store.filesystem) * len(sweep.write_case.variants())
    encodes = store.backend.encodes_chunks(compression)
    job = rates.generate_seconds(sweep, layout, compression, encodes_chunks=encodes) + settle_s
    return job, rates.write_case_seconds(sweep, layout, compression) + settle_s


SPEC = CaseSpec(
    name="write",
    scope="store",
    stage="write",
    variant_columns=("write_strategy", "fill_time"),  # and the chunk cache it wrote with (the read spec's)
    enabled=lambda sweep: True,
    figures=lambda sweep: (
        ["write-{filesystem}"] + (["variants-write-{filesystem}"] if len(sweep.write_case.variants()) > 1 else [])
    ),
    job_cost=_generate_job,
)
