"""Metadata overhead (HDF User's Guide, 14.2.1): the same values stored as one dataset or as
N small ones, per filesystem: file size, and the time to write and to read them all back.

The dataset's values are split into N consecutive groups, each one contiguous dataset: groups
of spectra (``split: spectra``), each dataset ``(spectra, z)``; or groups of values in storage
order (``split: values``), each dataset ``1 x 1 x k``, as the chapter's 1,000 ``1 x 1 x 1``
datasets of one 32-bit value each. N = 1 is the consolidated layout: with ``split: values`` the
cube in its own shape, as the chapter's one ``10 x 10 x 10`` dataset.

Its runner, :func:`run_metadata`, writes and reads the datasets on one filesystem in a job
(h5py is imported there only).
"""

from __future__ import annotations

import os

import numpy as np

from h5sweep.cases.metadata import columns as MC
from h5sweep.cases.metadata import columns as metadata_columns  # noqa: F401 - registers the columns it adds
from h5sweep.kit.spec import CaseSpec, Figure
from h5sweep.measure import pagecache, rates, settle
from h5sweep.measure.lock import untimed_work
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.measure.timing import timed_io
from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.filesystems import device_reads_counted
from h5sweep.storage.layouts import Shape

# What each of the N datasets holds: consecutive spectra, or consecutive values in storage order.
SPLITS = ("spectra", "values")


class MetadataCase:
    name = "metadata"
    description = "the same values as N small datasets vs one"
    SETTINGS = Block(
        "metadata",
        "Metadata overhead (HDF User's Guide 14.2.1): the same values as N small datasets vs one, per filesystem.",
        (
            Setting(
                "datasets",
                "array",
                [1, 100],
                "Numbers of datasets N the values are split into (1 = one dataset).",
                {"minItems": 1, "items": {"type": "integer", "minimum": 1}},
            ),
            Setting(
                "split",
                "string",
                "spectra",
                "What each dataset holds: consecutive spectra (spectra: each dataset spectra x z; N at "
                "most the spectra) or consecutive values in storage order (values: each dataset 1 x 1 x k, "
                "as the User's Guide's 1 x 1 x 1 datasets of one value each; N at most the values; N = 1 "
                "the cube in its own shape).",
                {"enum": list(SPLITS)},
            ),
            Setting("repeats", "integer", 3, "Repeats per N.", {"minimum": 1}),
        ),
    )

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.datasets = [int(n) for n in self.settings["datasets"]]
        self.repeats = int(self.settings["repeats"])
        self.split = self.settings["split"]

    def check(self, shape: Shape, itemsize: int = 1) -> None:
        if self.split not in SPLITS:
            raise ConfigError("cases.metadata.split", self.split, f"must be one of {', '.join(SPLITS)}")
        groups = shape[0] * shape[1] * (shape[2] if self.split == "values" else 1)
        if self.repeats < 1:
            raise ConfigError("cases.metadata.repeats", self.repeats, "must be at least 1")
        for i, n in enumerate(self.datasets):
            if not 1 <= n <= groups:
                raise ConfigError(
                    f"cases.metadata.datasets[{i}]", n, f"must be 1 to the number of {self.split} ({groups})"
                )

    def parts(self, shape: Shape, n: int) -> list[tuple[int, int, tuple[int, ...]]]:
        """The N datasets as (first, end, shape): ``first:end`` a range of rows of the values as
        spectra x z (``split: spectra``) or of the values in storage order (``values``), and the
        shape the dataset is written in."""
        if self.split == "spectra":
            return [(a, b, (b - a, shape[2])) for a, b in _groups(shape[0] * shape[1], n)]
        if n == 1:
            return [(0, shape[0] * shape[1] * shape[2], tuple(shape))]
        return [(a, b, (1, 1, b - a)) for a, b in _groups(shape[0] * shape[1] * shape[2], n)]


def timed_seconds(sweep) -> float:
    """Per N and repeat: write everything (fsync included) and read it back cold, checking
    it; all timed."""
    case = sweep.metadata
    raw = sweep.raw_bytes
    per = raw / rates.STANDARD_WRITE_BYTES_PER_S["none"] + raw / rates.DEVICE_READ_BYTES_PER_S
    return sum(case.repeats * (per + 2 * n * rates.SECONDS_PER_DATASET) for n in case.datasets)


FIGURE = Figure("metadata", "metadata-{filesystem}", "Metadata overhead", module="h5sweep.cases.metadata.figures")

SPEC = CaseSpec(
    name="metadata",
    scope=C.FILESYSTEM,
    stage="metadata",
    variant_columns=(MC.OPERATION, MC.N_DATASETS, MC.METADATA_FILE_BYTES),
    enabled=lambda sweep: sweep.metadata is not None,
    figures=lambda sweep: [FIGURE.name()],
    job_cost=rates.filesystem_job(timed_seconds, lambda sweep: len(sweep.metadata.datasets) * sweep.metadata.repeats),
    runner="h5sweep.cases.metadata:run_metadata",
    mem_mb=rates.cube_and_copy_mb,
    scratch_bytes=lambda sweep: sweep.raw_bytes + 64 * 1024,  # its file, beside the test stores
    plots=(FIGURE,),
    findings="h5sweep.cases.metadata.findings:FINDINGS",
    settings_type=MetadataCase,
)


def _groups(count: int, n: int) -> list[tuple[int, int]]:
    """``count`` things (spectra or values) in ``n`` consecutive ranges of sizes within one."""
    edges = np.linspace(0, count, n + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def run_metadata(directory: str, case: MetadataCase, data: np.ndarray, settle_s: float = 0.0) -> list[dict]:
    """Write and read back the data as N datasets for every N; one row per timed operation.
    Each write goes to a new file, after the filesystem's rest (``settle_s``,
    :mod:`h5sweep.measure.settle`) since the previous one was removed."""
    import h5py  # in jobs only

    # spectra x z, or the values in storage order: each dataset a range of its rows
    flat = data.reshape(-1, data.shape[2]) if case.split == "spectra" else data.reshape(-1)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"metadata-{os.getpid()}.h5")
    rows = []
    try:
        for n in case.datasets:
            parts = case.parts(data.shape, n)
            for repeat in range(case.repeats):
                settle.remove_and_mark([path], directory)
                with timed_io(settle=settle.Rest(directory, settle_s)) as written:
                    with h5py.File(path, "w") as f:
                        for k, (a, b, shape) in enumerate(parts):
                            f.create_dataset(f"part{k:07d}", data=flat[a:b].reshape(shape))
                    pagecache.fsync_path(path)
                file_bytes = os.stat(path).st_size
                out = np.empty_like(flat)
                pagecache.evict(path)
                evictable = pagecache.resident_fraction(path) < COLD_RESIDENT_FRACTION
                with timed_io() as read, h5py.File(path, "r") as f:
                    for k, (a, b, shape) in enumerate(parts):
                        f[f"part{k:07d}"].read_direct(out[a:b].reshape(shape))
                with untimed_work():
                    if not np.array_equal(out, flat):
                        raise VerificationError(f"{path}: values read back from {n} datasets differ from those written")
                timed = (
                    ("write", written.seconds, "", written.window, -1, written.settle_wait_s),
                    (
                        "read",
                        read.seconds,
                        cache_state(read.io.device_read, evictable, device_reads_counted(directory)),
                        read.window,
                        read.io.read_calls,
                        float("nan"),
                    ),
                )
                for operation, seconds, state, window, read_calls, settle_wait_s in timed:
                    rows.append(
                        {
                            C.CASE: "metadata",
                            C.REPEAT: repeat,
                            C.SECONDS: seconds,
                            MC.OPERATION: operation,
                            C.CACHE_STATE: state,
                            C.READ_CALLS: read_calls,
                            MC.N_DATASETS: n,
                            MC.METADATA_FILE_BYTES: file_bytes,
                            C.BYTES_SELECTED: flat.nbytes,
                            C.VARIANT: f"{operation}, {n} datasets",
                            settle.SETTLE_WAIT_S: settle_wait_s,
                            **window.columns(),
                        }
                    )
    finally:
        if os.path.exists(path):
            os.remove(path)
    return rows
