"""Throughput against I/O size (the HDF5 I/O lab): an amount of data (the dataset's first
bytes, by default all of them) written and read sequentially in requests of each size, through
HDF5 (a contiguous 1-D dataset of that many elements, one hyperslab per request) and as raw
binary (``write``/``pread`` on a plain file), on the same filesystem; reads from an evicted
file (cold) and again (warm). The lab's Figure 1 varies the amount, each written and read in
one request (``data_sizes``, with one request size at least the largest); ``sizes`` alone
varies the request size over the whole dataset.

Its runner, :func:`run_iosize`, measures one filesystem in a job (h5py is imported there
only).
"""

from __future__ import annotations

import math
import os

import numpy as np

from h5sweep.backends import HDF5, RAW
from h5sweep.cases.iosize import columns as IC
from h5sweep.kit.spec import CaseSpec, Figure
from h5sweep.measure import pagecache, rates, settle
from h5sweep.measure.lock import untimed_work
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state
from h5sweep.measure.timing import timed_io
from h5sweep.storage import columns as C
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.filesystems import device_reads_counted


class IOSizeCase:
    name = "iosize"
    description = "sequential throughput against the amount of data and request size, HDF5 and raw binary"
    ranks = (2, 3)  # the data is written and read flat, whatever the dataset's shape
    SETTINGS = Block(
        "iosize",
        "Throughput against I/O size (HDF5 lab): sequential write and cold/warm read of the dataset's bytes "
        "(or of each of data_sizes) in requests of each size, HDF5 and raw binary, per filesystem.",
        (
            Setting(
                "sizes",
                "array",
                [4 * 1024 * 4**k for k in range(9)],  # 4 KiB ... 256 MiB
                "Request sizes in bytes (multiples of the element size); larger than the data means one request.",
                {"minItems": 1, "items": {"type": "integer", "minimum": 1}},
            ),
            Setting(
                "data_sizes",
                "array",
                [],
                "Amounts of data in bytes, each the dataset's first that many bytes written to a new file and read "
                "back in requests of each of sizes (the lab's Figure 1: one request each, a size at least the "
                "largest amount); multiples of the element size, at most the dataset's bytes. Empty: the whole "
                "dataset.",
                {"items": {"type": "integer", "minimum": 1}},
            ),
            Setting("repeats", "integer", 1, "Repeats per size.", {"minimum": 1}),
        ),
    )

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.sizes = [int(s) for s in self.settings["sizes"]]
        self.data_sizes = [int(s) for s in self.settings["data_sizes"]]
        self.repeats = int(self.settings["repeats"])

    def amounts(self, raw_bytes: int) -> list[int]:
        """The amounts of data written and read: ``data_sizes``, or the whole dataset."""
        return list(dict.fromkeys(self.data_sizes)) or [int(raw_bytes)]

    def requests(self, amount: int) -> list[int]:
        """The request sizes of an amount: each of ``sizes``, one request of all of it where larger."""
        return list(dict.fromkeys(min(size, amount) for size in self.sizes))

    def check(self, shape: tuple = (), itemsize: int = 1) -> None:
        if self.repeats < 1:
            raise ConfigError("cases.iosize.repeats", self.repeats, "must be at least 1")
        for key in ("sizes", "data_sizes"):
            for i, size in enumerate(getattr(self, key)):
                if size < itemsize or size % itemsize:
                    raise ConfigError(
                        f"cases.iosize.{key}[{i}]",
                        size,
                        f"must be a positive multiple of the element size ({itemsize} bytes)",
                    )
        dataset_bytes = math.prod(shape) * itemsize if shape else None
        for i, size in enumerate(self.data_sizes):
            if dataset_bytes is not None and size > dataset_bytes:
                raise ConfigError(
                    f"cases.iosize.data_sizes[{i}]",
                    size,
                    f"is more than the dataset's {dataset_bytes} bytes (dataset.shape and dtype)",
                )


def timed_seconds(sweep) -> float:
    """Per amount, request size, API and repeat: a write and two reads (cold, warm) of the
    amount; all timed."""
    case = sweep.iosize
    seconds = 0.0
    for amount in case.amounts(sweep.raw_bytes):
        per_api = (
            amount / rates.STANDARD_WRITE_BYTES_PER_S["none"]
            + amount / rates.DEVICE_READ_BYTES_PER_S
            + amount / rates.READ_BYTES_PER_S["none"]
        )
        for request in case.requests(amount):
            calls = 3 * math.ceil(amount / request)
            seconds += 2 * per_api + 2 * calls * rates.SECONDS_PER_WRITTEN_CHUNK
    return case.repeats * seconds


def timed_writes(sweep) -> int:
    """The case's timed writes (each after the filesystem's rest): per amount, request size,
    repeat and API."""
    case = sweep.iosize
    return 2 * case.repeats * sum(len(case.requests(amount)) for amount in case.amounts(sweep.raw_bytes))


FIGURE = Figure("iosize", "iosize-{filesystem}", "Throughput vs I/O size", module="h5sweep.cases.iosize.figures")

SPEC = CaseSpec(
    name="iosize",
    scope=C.FILESYSTEM,
    stage="iosize",
    variant_columns=(IC.API, IC.DIRECTION, IC.REQUEST_BYTES),
    enabled=lambda sweep: sweep.iosize is not None,
    figures=lambda sweep: [FIGURE.name()],
    job_cost=rates.filesystem_job(timed_seconds, timed_writes),
    runner="h5sweep.cases.iosize:run_iosize",
    mem_mb=rates.cube_and_copy_mb,
    scratch_bytes=lambda sweep: 2 * max(sweep.iosize.amounts(sweep.raw_bytes)),  # its HDF5 and raw files
    plots=(FIGURE,),
    findings="h5sweep.cases.iosize.findings:FINDINGS",
    settings_type=IOSizeCase,
)


def _raw_write(path: str, raw: memoryview, request: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, len(raw), request):
            piece = raw[start : start + request]
            while len(piece):
                piece = piece[os.write(fd, piece) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _raw_read(path: str, out: memoryview, request: int) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        for start in range(0, len(out), request):
            os.preadv(fd, [out[start : start + request]], start)
    finally:
        os.close(fd)


def _requests(n: int, per_request: int):
    for start in range(0, n, per_request):
        yield start, min(per_request, n - start)


def _hdf5_write(path: str, flat: np.ndarray, per_request: int) -> None:
    import h5py  # in jobs only
    from h5py import h5s  # in jobs only

    with h5py.File(path, "w") as f:
        dset = f.create_dataset("data", shape=flat.shape, dtype=flat.dtype)
        space = dset.id.get_space()
        for start, count in _requests(flat.size, per_request):
            space.select_hyperslab((start,), (count,))
            dset.id.write(h5s.create_simple((count,)), space, flat[start : start + count])
    pagecache.fsync_path(path)


def _hdf5_read(path: str, out: np.ndarray, per_request: int) -> None:
    import h5py  # in jobs only
    from h5py import h5s  # in jobs only

    with h5py.File(path, "r") as f:
        dset = f["data"]
        space = dset.id.get_space()
        for start, count in _requests(out.size, per_request):
            space.select_hyperslab((start,), (count,))
            dset.id.read(h5s.create_simple((count,)), space, out[start : start + count])


def run_iosize(directory: str, case: IOSizeCase, data: np.ndarray, settle_s: float = 0.0) -> list[dict]:
    """Write and read each amount of the data in requests of each size, raw and HDF5; one row
    per timed operation. Each write goes to a new file, after the filesystem's rest
    (``settle_s``, :mod:`h5sweep.measure.settle`) since the previous one was removed."""
    whole = np.ascontiguousarray(data).reshape(-1)
    os.makedirs(directory, exist_ok=True)
    paths = {
        RAW: os.path.join(directory, f"iosize-{os.getpid()}.bin"),
        HDF5: os.path.join(directory, f"iosize-{os.getpid()}.h5"),
    }
    rows = []

    def record(api, direction, state, flat, request, seconds, repeat, window, **extra):
        state_words = f" {state}" if state else ""
        rows.append(
            {
                C.CASE: "iosize",
                C.REPEAT: repeat,
                C.SECONDS: seconds,
                IC.API: api,
                IC.DIRECTION: direction,
                C.CACHE_STATE: state,
                IC.REQUEST_BYTES: request,
                C.BYTES_SELECTED: flat.nbytes,
                C.RESIDENT_FRACTION_AT_OPEN: extra.pop("resident", float("nan")),
                C.READ_CALLS: extra.pop("read_calls", -1),
                C.VARIANT: f"{api} {direction}{state_words}, {flat.nbytes} B in {request} B requests",
                **extra,
                **window.columns(),
            }
        )

    try:
        for amount in case.amounts(whole.nbytes):
            flat = whole[: amount // whole.itemsize]
            raw = memoryview(flat).cast("B")
            out = np.empty_like(flat)
            for request in case.requests(flat.nbytes):
                per_request = request // flat.itemsize
                for repeat in range(case.repeats):
                    for api in (RAW, HDF5):
                        path = paths[api]
                        settle.remove_and_mark([path], directory)
                        with timed_io(settle=settle.Rest(directory, settle_s)) as written:
                            _raw_write(path, raw, request) if api == RAW else _hdf5_write(path, flat, per_request)
                        waited = written.settle_wait_s
                        record(
                            api,
                            "write",
                            "",
                            flat,
                            request,
                            written.seconds,
                            repeat,
                            written.window,
                            settle_wait_s=waited,
                        )
                        pagecache.evict(path)
                        for attempt in ("first", "again"):
                            resident = pagecache.resident_fraction(path)
                            out.fill(0)
                            with timed_io() as read:
                                if api == RAW:
                                    _raw_read(path, memoryview(out).cast("B"), request)
                                else:
                                    _hdf5_read(path, out, per_request)
                            evictable = attempt == "again" or resident < COLD_RESIDENT_FRACTION
                            state = cache_state(read.io.device_read, evictable, device_reads_counted(directory))
                            record(
                                api,
                                "read",
                                state,
                                flat,
                                request,
                                read.seconds,
                                repeat,
                                read.window,
                                resident=resident,
                                read_calls=read.io.read_calls,
                            )
                            with untimed_work():
                                if not np.array_equal(out, flat):
                                    raise VerificationError(
                                        f"{path}: {api} read of {flat.nbytes} bytes in {request}-byte requests "
                                        "differs from what was written"
                                    )
    finally:
        for path in paths.values():
            if os.path.exists(path):
                os.remove(path)
    return rows
