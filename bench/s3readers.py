"""Zarr's readers on an object store, side by side: zarr-python through s3fs (fsspec) and
through obstore, and tensorstore's own S3 key-value store, reading the same selections of the
same stores through the same relay (emulated latency), each read a new client opened inside
its clock, as the sweep reads ``cold: every``.

Each sample reads every selection once per reader, the readers' order rotating from sample
to sample; a sample's ratio is a reader's total seconds over fsspec's. Requests are counted
as the sweep counts them (the S3 client's events for fsspec, the relay's log for the others),
so that a ratio can be read against the requests behind it.

Run: ``make s3-start`` (SeaweedFS, with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set to
its pair), then ``.venv/bin/python bench/s3readers.py [--endpoint URL] [--latency-ms 0 20]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from common import SAMPLES, spread

from h5sweep.backends.remote import classifier, remote_opener, request_log
from h5sweep.backends.zarr import write_fast
from h5sweep.backends.zarr_readers import ZarrReader
from h5sweep.storage import objectstore
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import REQUESTS, S3Location
from h5sweep.storage.targets.s3 import upload

SHAPE = (100, 100, 4096)  # the default cube, uint16
CHUNKS = ((8, 8, 512), (16, 16, 2048))
READERS = {
    "fsspec": ZarrReader("zarr-python", 10, "fsspec"),
    "obstore": ZarrReader("zarr-python", 10, "obstore"),
    "tensorstore": ZarrReader("tensorstore", 10, "s3"),
}


def selections(seed: int = 7) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(start, size): 3 slices of 25 planes and 5 spectra of 5 x 5 pixels, the same for every
    reader and sample."""
    rng = np.random.default_rng(seed)
    found = [((0, 0, int(rng.integers(SHAPE[2] - 25))), (SHAPE[0], SHAPE[1], 25)) for _ in range(3)]
    for _ in range(5):
        found.append(((int(rng.integers(SHAPE[0] - 5)), int(rng.integers(SHAPE[1] - 5)), 0), (5, 5, SHAPE[2])))
    return found


def one_read(location: S3Location, name: str, local: str, reader: ZarrReader, start, size, values) -> tuple[float, int]:
    """A new client's open and read of one selection, timed together; (seconds, requests)."""
    log = request_log("zarr", reader, location, classifier("zarr", local, "data"))
    opener = remote_opener("zarr", location, name, "data", log, reader=reader)  # the client, before the clock
    buffer = np.empty(size, values.dtype)
    mark = log.mark()
    t0 = time.perf_counter()
    opened = opener()
    result = opened.prepare(start, buffer)()
    seconds = time.perf_counter() - t0
    requests = log.since(mark)[REQUESTS]
    got = buffer if result is None else np.asarray(result)
    box = tuple(slice(a, a + n) for a, n in zip(start, size, strict=True))
    if not np.array_equal(got, values[box]):
        raise AssertionError(f"{reader.label} read other values at {start}")
    opened.close()
    if hasattr(log, "close"):
        log.close()
    return seconds, requests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="http://127.0.0.1:8333")
    parser.add_argument("--bucket", default="h5sweep")
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 20.0])
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--out", default=None, help="JSON of every sample (default: print only)")
    args = parser.parse_args(argv)
    values = np.random.default_rng(0).integers(0, 60000, SHAPE, dtype=np.uint16)
    picks = selections()
    scratch = tempfile.mkdtemp(prefix="h5sweep-s3readers-")
    report = {}
    try:
        for chunk in CHUNKS:
            name = "x".join(map(str, chunk))
            local = os.path.join(scratch, f"{name}.zarr")
            write_fast(local, values, Layout(chunk), parse_compression("none"))
            near = S3Location(args.endpoint, args.bucket, "bench-s3readers")
            upload(objectstore.client(near), near, name, local)
            for latency in args.latency_ms:
                location = S3Location(args.endpoint, args.bucket, "bench-s3readers", latency)
                order = list(READERS)
                totals = {reader: [] for reader in READERS}
                requests = {reader: 0 for reader in READERS}
                for sample in range(args.samples):
                    turn = order[sample % len(order) :] + order[: sample % len(order)]
                    spent = dict.fromkeys(READERS, 0.0)
                    for start, size in picks:
                        for reader in turn:
                            seconds, n = one_read(location, name, local, READERS[reader], start, size, values)
                            spent[reader] += seconds
                            requests[reader] += n if sample == 0 else 0
                    for reader in READERS:
                        totals[reader].append(spent[reader])
                key = f"{name} at {latency:g} ms"
                report[key] = {
                    "seconds": {r: spread(t) for r, t in totals.items()},
                    "requests_per_sample": requests,
                    "ratio_to_fsspec": {
                        r: spread([a / b for a, b in zip(totals[r], totals["fsspec"], strict=True)])
                        for r in READERS
                        if r != "fsspec"
                    },
                }
                line = ", ".join(
                    f"{r} {v['median']:.2f}x ({v['min']:.2f}-{v['max']:.2f})"
                    for r, v in report[key]["ratio_to_fsspec"].items()
                )
                fsspec_s = report[key]["seconds"]["fsspec"]["median"]
                print(f"{key}: fsspec {fsspec_s:.2f} s per sample; {line}; requests per sample {requests}", flush=True)
            objectstore.client(near).rm(near.path(name), recursive=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
