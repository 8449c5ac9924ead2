"""Real throttling from a real server: SeaweedFS's S3 circuit breaker, set to one GET at a time,
answers 503 ErrTooManyRequest to the others. A Zarr store read by zarr-python through fsspec
and through obstore by the workflow's read engine: every 503 the server says it sent is in the
rows (``requests_failed``), what the reader did about it too (``requests_retried``), and such a
read is ``disturbed``."""

from __future__ import annotations

import re
import time
import urllib.request

import numpy as np
import pytest

from h5sweep import backends
from h5sweep.backends.remote import RemoteBackend
from h5sweep.backends.zarr_readers import ZarrReader
from h5sweep.storage import objectstore
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import S3Location

KEYS = ("h5sweep", "local-secret")
SHAPE = (10, 10, 200)
LAYOUT = Layout((1, 1, 200))  # a slice touches 100 chunks, 32 fetched at once
READERS = {
    "fsspec": ZarrReader("zarr-python", 32, "fsspec"),
    "obstore": ZarrReader("zarr-python", 32, "obstore"),
}  # tensorstore retries each 503 too, 1 s and more apart: 8 s more, left out of the suite


@pytest.fixture(scope="module")
def breaker(tmp_path_factory):
    """weed mini with its circuit breaker at one GET at a time (a burst of GETs answered
    ErrTooManyRequest but one); a Zarr store of 100 chunks on it."""
    import s3server

    from h5sweep.host import seaweed

    directory = tmp_path_factory.mktemp("breaker")
    server = s3server.seaweed_with_circuit_breaker(directory, {"Read:Count": 1}, KEYS)
    try:
        location = S3Location(server.endpoint, "h5sweep", "breaker")
        staging = tmp_path_factory.mktemp("staging")
        path = str(staging / "store.zarr")
        values = SyntheticSource(SHAPE, np.uint16, seed=5).materialize()
        with pytest.MonkeyPatch.context() as env:
            env.setenv("AWS_ACCESS_KEY_ID", KEYS[0])
            env.setenv("AWS_SECRET_ACCESS_KEY", KEYS[1])
            remote = RemoteBackend(backends.load("zarr"), location, str(staging), filesystem="weed")
            remote.write_fast(path, values, LAYOUT, parse_compression("none"), "data", 1)
            # 8 GETs at once of an object large enough that they overlap: one at a time is
            # served, the others refused
            objectstore.housekeeping_client(location).pipe_file(location.path("burst"), bytes(16 << 20))
        # the server takes up its breaker's settings from its filer a moment after they are
        # written, and a burst's GETs overlap only as the machine lets them: bursts until one
        # is refused (at most 10, a second apart)
        for _ in range(10):
            codes = s3server.burst(server.endpoint, "h5sweep", location.key("burst"), KEYS)
            if "ErrTooManyRequest" in codes:
                break
            time.sleep(1)
        assert "" in codes and set(codes) == {"", "ErrTooManyRequest"}, codes
        yield server, location, staging, path
    finally:
        seaweed.stop(directory)


def _throttled(server) -> int:
    """The GETs the server says it answered 503 (its own count, on its Prometheus port), once
    two readings agree (it counts an answer after sending it)."""
    found = re.compile(r'^SeaweedFS_s3_request_total\{bucket="h5sweep",code="503",type="GET"\} (\S+)$', re.M)

    def count() -> int:
        with urllib.request.urlopen(f"{server.metrics}/metrics", timeout=5) as answer:
            return sum(int(float(n)) for n in found.findall(answer.read().decode()))

    last = count()
    for _ in range(25):
        time.sleep(0.2)
        now = count()
        if now == last:
            return now
        last = now
    return last


@pytest.mark.heavy
@pytest.mark.parametrize("reader", list(READERS))
def test_each_zarr_reader_retries_the_circuit_breakers_503s_and_its_rows_count_them(breaker, reader, monkeypatch):
    """Every read succeeds with every value checked (the engine checks them), so each reader
    retried each 503 it met: per read, ``requests_retried`` equals ``requests_failed``, and
    the read is ``disturbed`` exactly where it met one; the faults column stays 0 (the relay
    injected none: the server refused these). The reads' ``requests_failed`` add up to the
    503s the server says it sent during them, and there were some."""
    from conftest import read_cases

    from h5sweep.cases import read_cases_from_config

    server, location, staging, path = breaker
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEYS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEYS[1])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    remote = RemoteBackend(backends.load("zarr"), location, str(staging), filesystem="weed")
    source = SyntheticSource(SHAPE, np.uint16, seed=5)  # the store's values, each read checked against them
    cases = read_cases_from_config({"slice": {"repeats": 2}}, SHAPE)
    # the breaker refuses requests sent at once: how many of a read's overlap depends on the
    # machine, so the reads go on (at most 5 rounds of 2) until the server has refused some
    before, rows = _throttled(server), []
    for _ in range(5):
        rows += read_cases(remote, path, cases, SHAPE, 7, source, LAYOUT, [READERS[reader]])
        refused = _throttled(server) - before
        if refused > 0:
            break
    assert len(rows) % 2 == 0 and rows
    assert refused > 0 and sum(r["requests_failed"] for r in rows) == refused
    for row in rows:
        assert row["faults"] == 0 and row["requests_retried"] == row["requests_failed"]
        assert row["disturbed"] == (row["requests_failed"] > 0)
