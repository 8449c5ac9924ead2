"""A server that goes away (SeaweedFS's weed mini, killed by its pid): the job that meets it
fails naming the filesystem, the endpoint and the request, after its reader's own retries;
the same command, once the server is back, finishes the sweep without redoing a finished job.
An upload cut off part way leaves a store no reader takes as whole, and no staging copy."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from h5sweep import backends
from h5sweep.backends.remote import RemoteBackend
from h5sweep.storage import objectstore
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import S3Location
from h5sweep.storage.targets.s3 import marker_path

KEYS = ("h5sweep", "local-secret")  # the test server's identity
S3FS_ROUNDS = 5  # s3fs's own retries of a request whose connection closed (S3FileSystem.retries)
# aiohttp (under s3fs) sends an idempotent request once more itself where the connection closed
# without an answer (RFC 9112's retry of a request)
AIOHTTP_TRIES = 2


def _start(directory: Path, port: int = 0):
    from h5sweep.host import seaweed

    return seaweed.start(directory, port=port, bucket="h5sweep", credentials=KEYS)


def _kill(server) -> None:
    os.killpg(server.pid, signal.SIGKILL)
    while os.waitpid(server.pid, os.WNOHANG) == (0, 0):
        time.sleep(0.05)


@pytest.fixture
def one_attempt(monkeypatch):
    """SeaweedFS's key pair, and botocore's attempts at one per s3fs round (AWS_MAX_ATTEMPTS,
    as a user sets it): a request to a dead server is sent s3fs's 5 rounds, without botocore's
    own backoff of up to 15 s inside each."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEYS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEYS[1])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")


def _finished(results: Path) -> dict[str, tuple[int, int]]:
    """Every record the sweep finished, with its inode and modification time."""
    return {str(p.relative_to(results)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in results.rglob("*.parquet")}


@pytest.mark.workflow
def test_a_sweep_whose_server_is_killed_fails_naming_it_and_the_same_command_then_finishes_it(
    workflow, tmp_path, one_attempt
):
    """Two HDF5 stores on SeaweedFS, one job after the other: the server killed once the first
    store's reads are recorded. The second job fails naming the filesystem, the endpoint and
    the first request left without an answer, sent exactly as often as its client's own
    retries send it: the reader gave up by its own policy, and the job sent that request no
    more through the relay. The server restarted on the same port and data, the same command
    finishes the sweep; the first job's records are the same files, untouched."""
    from conftest import tiny_config

    directory = tmp_path / "weed"
    server = _start(directory)
    port = int(server.endpoint.rsplit(":", 1)[1])
    config = tiny_config(tmp_path, sweep="outage")
    config["dataset"]["shape"] = [8, 8, 400]
    config["layouts"] = {"contiguous": True, "shapes": [[4, 4, 100]]}
    config["compression"] = ["none"]
    config["backends"] = ["hdf5"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 2}}
    config["score"] = {"slice_median_s": 0.1}
    s3 = {"endpoint": server.endpoint, "bucket": "h5sweep", "prefix": "outage"}
    config["filesystems"] = {"weed": {"path": str(tmp_path / "staging"), "s3": s3}}
    workflow.write_config(config)
    command = ("--cores", "1", "--configfile", "test.yaml")
    results = workflow.root / "results" / "outage"
    proc = workflow.popen(*command)
    try:
        while not list((results / "raw").rglob("query.parquet")) and proc.poll() is None:
            time.sleep(0.1)
        _kill(server)
        # the bound the product states, far beyond what it should take: a hang detector
        out, _ = proc.communicate(timeout=objectstore.GONE_BOUND_S + 120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0, out
    said = re.search(r"ServerGoneError: (.*)", out)
    assert said, out
    said = said[1]
    assert said.startswith(f"filesystems.weed: the S3 server at {server.endpoint} stopped answering"), said
    request = re.search(r": (GET|PUT|HEAD) (/h5sweep/outage/\S+).* had no answer \((\d+) attempts\)", said)
    # s3fs's 5 rounds of one botocore attempt, each sent twice by aiohttp; a GET of a body,
    # which s3fs retries around its 5 rounds, 5 times that
    rounds = S3FS_ROUNDS**2 if request and request[1] == "GET" else S3FS_ROUNDS
    assert request and int(request[3]) == AIOHTTP_TRIES * rounds, said
    finished = _finished(results)
    assert len([p for p in finished if p.endswith("query.parquet")]) == 1, finished

    server = _start(directory, port)
    try:
        workflow.run(*command, check=True, timeout=300)
    finally:
        from h5sweep.host import seaweed

        seaweed.stop(directory)
    now = _finished(results)
    assert {p: now[p] for p in finished} == finished  # 0 finished outputs redone
    assert len([p for p in now if p.endswith("query.parquet")]) == 2
    assert (results / "summary.csv").is_file() and (results / "recommendation.csv").is_file()


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


@pytest.mark.heavy
def test_an_upload_cut_off_part_way_is_never_read_as_whole_and_leaves_no_staging_copy(tmp_path, one_attempt):
    """A Zarr store of 60 chunk objects uploaded while SeaweedFS is killed part way: the
    write fails; the clean-up a failed write runs removes the staging copy at once and says the
    server is gone (its own requests stop there). With the server back, some of the store's
    objects are on it and its marker is not, and a read of it is refused naming the upload;
    written again, it is uploaded whole with its marker and reads back every value."""
    directory = tmp_path / "weed"
    server = _start(directory)
    port = int(server.endpoint.rsplit(":", 1)[1])
    location = S3Location(server.endpoint, "h5sweep", "cut")
    staging = tmp_path / "staging"
    store = str(staging / "zarr" / "store.zarr")
    os.makedirs(os.path.dirname(store))
    values = np.arange(6 * 10 * 400, dtype=np.uint16).reshape(6, 10, 400)
    layout = Layout((1, 1, 400))  # 60 chunks, an object each
    none = parse_compression("none")
    remote = RemoteBackend(backends.load("zarr"), location, str(staging), filesystem="weed")
    direct = objectstore.housekeeping_client(location)
    prefix = location.path(remote.key(store))
    failed: list[BaseException] = []

    def write() -> None:
        try:
            remote.write_fast(store, values, layout, none, "data", 1)
        except Exception as err:  # the server killed under it
            failed.append(err)

    try:
        writer = threading.Thread(target=write)
        writer.start()
        while writer.is_alive() and len(direct.find(prefix) if direct.exists(prefix) else []) < 10:
            time.sleep(0.02)
        _kill(server)
        writer.join()
        assert failed, "the upload finished before the server was killed"
        with pytest.raises(objectstore.ServerGoneError, match=re.escape(f"the S3 server at {server.endpoint}")):
            remote.remove(store)  # what a failed write's clean-up calls
        assert _size(staging) == 0  # the staging copy is gone with the job

        server = _start(directory, port)
        direct = objectstore.housekeeping_client(location)
        left = [p for p in direct.find(prefix) if not p.endswith("zarr.json")]
        assert 1 <= len(left) < 60  # some chunks, not all: the 10 objects seen before the kill can include metadata
        assert not direct.exists(marker_path(location, remote.key(store)))
        again = RemoteBackend(backends.load("zarr"), location, str(staging), filesystem="weed")
        with pytest.raises(VerificationError, match="its upload did not finish"):
            again.open_for_reads(store, "data", again.default_read_option)

        again.write_fast(store, values, layout, none, "data", 1)  # the job run again
        assert len([p for p in direct.find(prefix) if not p.endswith("zarr.json")]) == 60
        assert direct.exists(marker_path(location, remote.key(store)))
        opened = again.open_for_reads(store, "data", again.default_read_option)
        buffer = np.zeros((6, 10, 400), np.uint16)
        result = opened.prepare((0, 0, 0), buffer)()
        assert np.array_equal(buffer if result is None else result, values)
        opened.close()
        again.remove(store)
        assert _size(staging) == 0 and set(direct.find(prefix)) <= {prefix}  # SeaweedFS keeps the folder
    finally:
        from h5sweep.host import seaweed

        seaweed.stop(directory)
