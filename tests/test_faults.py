"""Faults lose nothing: each with real files and a real mount, and a real Snakemake run."""

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import tiny_config


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)


def _can_mount() -> bool:
    return os.geteuid() == 0 and subprocess.run(["which", "mount"], capture_output=True).returncode == 0


@pytest.mark.workflow
@pytest.mark.skipif(not _can_mount(), reason="mounting a size-limited tmpfs needs root")
def test_a_filesystem_that_fills_during_generation_is_named_and_a_rerun_completes(workflow, tmp_path):
    """A 12 MB tmpfs mount and 16 MB stores, the disk check off: the generate job fails naming
    the filesystem, its free space and the need; the other filesystem's finished records are
    untouched; after the mount grows, a rerun completes and redoes only what failed."""
    small = tmp_path / "small"
    _mount_tmpfs(small, "12m")
    try:
        config = tiny_config(tmp_path, sweep="full")
        config["dataset"]["shape"] = [40, 40, 5000]  # 16 MB of uint16
        config["filesystems"] = {"disk": str(tmp_path / "disk"), "small": str(small / "stores")}
        config["layouts"] = {"contiguous": True, "shapes": []}
        config["compression"] = ["none"]
        config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 2, "depth": 5}}
        config["check_disk"] = False
        cfg = workflow.write_config(config)
        failed = workflow.run("--cores", "1", "--keep-going", "--configfile", str(cfg))
        assert failed.returncode != 0
        said = failed.stdout + failed.stderr
        log = next((workflow.root / "results" / "full" / "logs" / "generate" / "small").rglob("*.log")).read_text()
        assert "filesystem small (" in log and "is full" in log and "MB are free now" in log
        assert "this store needs about 16.0 MB" in log and "StorageFullError" in said + log
        raw = workflow.root / "results" / "full" / "raw"
        done = {p: p.stat().st_mtime_ns for p in (raw / "disk").rglob("*.parquet")}
        assert done and not list((raw / "small").rglob("write.parquet"))
        assert not [p for p in (small / "stores").rglob("*") if p.is_file()]  # no partial file left
        subprocess.run(["mount", "-o", "remount,size=200m", str(small)], check=True)
        workflow.run("--cores", "1", "--configfile", str(cfg), check=True)
        for path, mtime in done.items():
            assert path.stat().st_mtime_ns == mtime, f"{path} was redone"
        assert (workflow.root / "results" / "full" / "recommendation.md").exists()
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def _small_config(tmp_path: Path, sweep: str, repeats: int = 6) -> dict:
    config = tiny_config(tmp_path, sweep=sweep)
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [100]}, "shapes": []}
    config["compression"] = ["none"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": repeats, "depth": 25}}
    return config


def _query_processes(root: Path) -> list[int]:
    """The processes of the jobs that read stores in the workflow at ``root`` (locally a
    store's job writes it and reads it, generate_query.py; their script runs there)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if entry.name.isdigit() and "query.py" in command and (entry / "cwd").resolve() == root.resolve():
                found.append(int(entry.name))
        except OSError:  # a process that ended meanwhile
            continue
    return found


@pytest.mark.workflow
def test_a_store_job_killed_with_sigkill_while_reading_is_the_only_job_a_rerun_redoes(workflow, tmp_path):
    import signal
    import time

    config = _small_config(tmp_path, "killed", repeats=400)  # long enough to be caught running
    cfg = workflow.write_config(config)
    proc = workflow.popen("--cores", "1", "--keep-going", "--configfile", str(cfg))
    deadline = time.monotonic() + 300
    victims: list[int] = []
    reading = workflow.root / "results" / "killed" / "logs" / "query"
    while time.monotonic() < deadline and not victims:
        # a store's job that has written its store and begun its reads
        victims = _query_processes(workflow.root) if reading.exists() and any(reading.rglob("*.log")) else []
        time.sleep(0.1)
    assert victims, "no store's reads started"
    os.kill(victims[0], signal.SIGKILL)
    proc.wait(timeout=600)
    assert proc.returncode != 0
    raw = workflow.root / "results" / "killed" / "raw" / "disk"
    done = {p: p.stat().st_mtime_ns for p in raw.rglob("*.parquet")}
    queries = {p for p in done if p.name == "query.parquet"}
    assert len(queries) == 1  # the other store's query ran to the end
    rerun = workflow.run("--cores", "1", "--configfile", str(cfg), check=True)
    for path, mtime in done.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was redone"
    assert len(list(raw.rglob("query.parquet"))) == 2 and "query" in rerun.stdout + rerun.stderr


def test_a_store_truncated_between_generation_and_query_fails_naming_store_case_and_selection(tmp_path):
    """A store damaged after its write (on SLURM its write and reads are two jobs; any store
    case reads it again later): its read fails naming the store, the case and the selection."""
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep import stages
    from h5sweep.sweep.model import load_sweep

    config = _small_config(tmp_path, "truncated")
    config["layouts"] = {"contiguous": False, "chunks": {"xy": [5], "z": [100]}, "shapes": []}
    sweep = load_sweep(config)
    (store_file,) = sweep.stores()
    fs, where = store_file.filesystem, (store_file.backend.name, store_file.layout.id, store_file.compression.name)
    store = str(tmp_path / "store.hdf5")
    stages.run_generate(job_settings.generate_settings(sweep, fs, *where), store, str(tmp_path / "write.parquet"))
    with open(store, "r+b") as f:
        f.truncate(os.path.getsize(store) // 2)
    with pytest.raises(Exception) as failed:
        stages.run_query(job_settings.query_settings(sweep, fs, *where), store, str(tmp_path / "query.parquet"))
    said = str(failed.value)
    assert store in said and "slice" in said and "selection" in said
    assert not (tmp_path / "query.parquet").exists()


def _first_store_measured(workflow, tmp_path, sweep: str, directory: Path):
    """A sweep of two stores on ``directory``, run until the first is generated and queried;
    its config, and its records with their modification times."""
    config = {**_small_config(tmp_path, sweep, repeats=3), "interleave": False}
    config["filesystems"] = {"disk": str(directory)}
    cfg = workflow.write_config(config)
    raw = workflow.root / "results" / sweep / "raw" / "disk"
    first = raw / "hdf5" / "contiguous" / "none" / "query.parquet"
    workflow.run(str(first.relative_to(workflow.root)), "--cores", "1", "--configfile", str(cfg), check=True)
    done = {p: p.stat().st_mtime_ns for p in raw.rglob("*.parquet")}
    assert len(done) == 2  # the contiguous store's write and query records
    return cfg, done


def _untouched(done: dict) -> None:
    for path, mtime in done.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was redone"


@pytest.mark.workflow
def test_a_filesystem_directory_removed_mid_sweep_is_made_again_and_nothing_finished_is_redone(workflow, tmp_path):
    """A plain directory removed between two stores (Snakemake itself removes one a temporary
    store leaves empty): the next job makes it again on the same filesystem."""
    import shutil

    (tmp_path / "disk").mkdir()
    (tmp_path / "disk" / "notes.txt").write_text("the user's own file: Snakemake leaves this directory")
    cfg, done = _first_store_measured(workflow, tmp_path, "removed", tmp_path / "disk" / "stores")
    shutil.rmtree(tmp_path / "disk")
    workflow.run("--cores", "1", "--configfile", str(cfg), check=True)
    _untouched(done)
    assert (workflow.root / "results" / "removed" / "recommendation.md").exists()


@pytest.mark.workflow
@pytest.mark.skipif(not _can_mount(), reason="mounting a tmpfs needs root")
def test_a_filesystem_whose_mount_is_removed_mid_sweep_is_refused_naming_the_key(workflow, tmp_path):
    """The filesystem's mount removed between two stores: its path now falls on the disk below.
    The next job stops before any work, naming the key and both mounts; mounted again, the
    sweep completes without redoing the finished store."""
    mount = tmp_path / "mnt"
    _mount_tmpfs(mount, "64m")
    try:
        cfg, done = _first_store_measured(workflow, tmp_path, "unmounted", mount / "stores")
        subprocess.run(["umount", str(mount)], check=True)
        failed = workflow.run("--cores", "1", "--configfile", str(cfg))
        assert failed.returncode != 0
        said = failed.stdout + failed.stderr
        assert f"filesystems.disk: the directory {mount / 'stores'} now lies on /" in said
        assert f"but this sweep measured it on {mount} (tmpfs)" in said
        assert not (mount / "stores").exists()  # nothing was written on the disk below
        _mount_tmpfs(mount, "64m")
        workflow.run("--cores", "1", "--configfile", str(cfg), check=True)
        _untouched(done)
        rows = pd.read_parquet(workflow.root / "results" / "unmounted" / "measurements.parquet")
        assert set(rows["fs_type"]) == {"tmpfs"}
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_directory_removed_during_a_job_turns_its_error_into_one_naming_the_key(tmp_path):
    from h5sweep.storage.errors import DirectoryRemovedError
    from h5sweep.sweep.settings import JobSettings
    from h5sweep.sweep.stages import in_its_directory

    directory = tmp_path / "disk"
    directory.mkdir()
    job = JobSettings({"sweep": "s", "filesystem": {"name": "disk", "directory": str(directory), "settle_s": None}})
    record = str(tmp_path / "results" / "s" / "raw" / "disk" / "hdf5" / "write.parquet")
    with pytest.raises(DirectoryRemovedError, match="filesystems.disk: the directory"), in_its_directory(job, record):
        directory.rmdir()
        (directory / "store.h5").write_bytes(b"")  # fails: the directory is gone
    directory.mkdir()
    # where the directory stands, the job's own error is kept
    with pytest.raises(FileNotFoundError), in_its_directory(job, record):
        (tmp_path / "missing" / "file").read_bytes()


class _Listener:
    """A TCP server on the loopback that counts the connections it accepts and then closes
    each (``close=False``: keeps each open, silent, until it stops)."""

    def __init__(self, close: bool):
        import socket
        import threading

        self.close, self.accepted, self.held = close, 0, []
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:  # stopped
                return
            self.accepted += 1
            if self.close:
                connection.close()
            else:
                self.held.append(connection)

    def stop(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


def _cloud_config(tmp_path: Path, endpoint: str) -> dict:
    config = tiny_config(tmp_path)
    s3 = {"endpoint": endpoint, "bucket": "h5sweep", "latency_ms": [0, 20]}  # two filesystems, one endpoint
    config["filesystems"] = {"cloud": {"path": str(tmp_path / "staging"), "s3": s3}}
    return config


@pytest.mark.parametrize("close", [True, False], ids=["closes-at-once", "never-answers"])
def test_the_plan_refuses_an_endpoint_that_does_not_answer_after_one_connection(tmp_path, close):
    """A server that accepts a connection and closes it, or keeps it and never answers: the
    plan command refuses the config naming the key, the endpoint and the error, after one
    connection (an S3 client would retry it for most of a minute), for the two filesystems
    the config's two latencies make of the one endpoint."""
    import sys

    import yaml

    server = _Listener(close)
    try:
        config = tmp_path / "cloud.yaml"
        config.write_text(yaml.safe_dump(_cloud_config(tmp_path, server.endpoint)))
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
        plan = [sys.executable, "-m", "h5sweep.sweep", "--configfile", str(config), "--cores", "2", "-q"]
        refused = subprocess.run(plan, capture_output=True, text=True, env=env, timeout=120)
    finally:
        server.stop()
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"filesystems.cloud.s3.endpoint='{server.endpoint}'" in said
    assert f"no S3 server answers at {server.endpoint} (one connection, 2 s to answer)" in said
    errors = ("Remote end closed connection", "Connection reset by peer") if close else ("timed out",)
    assert any(error in said for error in errors), said
    assert server.accepted == 1


def test_a_closed_port_is_refused_naming_the_key_and_an_optional_filesystem_is_left_out(tmp_path):
    import socket

    from h5sweep.storage.errors import ConfigError
    from h5sweep.sweep.model import load_sweep

    with socket.socket() as unused:  # a port bound and closed: nothing listens there
        unused.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{unused.getsockname()[1]}"
    config = _cloud_config(tmp_path, endpoint)
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.endpoint=.*at http://127\.0\.0\.1:\d+.*refused"):
        load_sweep(config)
    config["filesystems"]["cloud"]["required"] = False
    config["filesystems"]["disk"] = str(tmp_path / "disk")
    assert [fs.name for fs in load_sweep(config).filesystems] == ["disk"]


@pytest.fixture(scope="module")
def s3():
    import s3server

    with s3server.bucket("h5sweep-faults") as (_, location):
        yield location


NOT_FOUND_READERS = [
    ("zarr", "zarr-python via fsspec"),
    ("zarr", "zarr-python via obstore"),
    ("zarr", "tensorstore"),
    ("hdf5", "fsspec"),
    ("hdf5", "ros3"),
    ("raw", "ranged GETs"),
]


def _reader(backend: str, reader: str):
    """The read option and how a file is fetched, of a reader of ``NOT_FOUND_READERS``."""
    from h5sweep.backends.zarr_readers import ZarrReader
    from h5sweep.storage.objectstore import FileRead

    if backend == "zarr":
        store = {"zarr-python via fsspec": "fsspec", "zarr-python via obstore": "obstore"}.get(reader, "s3")
        return ZarrReader(reader.split()[0], 10, store), None
    return None, FileRead(block_size=4096)  # smaller than the file: its chunks are GETs of their own


def _ros3_reads(s3, tmp_path) -> tuple[str, list]:
    """The reads of tests/not_found_reads.py by HDF5's ROS3 driver, in the MPI environment
    (whose h5py has it), beside this process's server."""
    import json
    import sys

    from h5sweep.backends.hdf5_remote import h5py_has_ros3
    from h5sweep.cases.parallel.core import mpi_python
    from h5sweep.storage.layouts import Layout

    if h5py_has_ros3():
        import not_found_reads

        return not_found_reads.reads("hdf5", s3, str(tmp_path), 0.05, read=not_found_reads.ROS3, layout=Layout(None))
    if not mpi_python().exists():
        pytest.skip("no MPI environment (make install-mpi), whose h5py has the ROS3 driver")
    script = str(Path(__file__).with_name("not_found_reads.py"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    where = [s3.endpoint, s3.bucket, s3.prefix, str(tmp_path)]
    done = subprocess.run([str(mpi_python()), script, *where], capture_output=True, text=True, env=env)
    if done.returncode == 3:
        pytest.skip(f"{mpi_python()}'s h5py has no ROS3 driver")
    assert done.returncode == 0, done.stderr[-3000:] or sys.stderr
    said = json.loads(done.stdout)
    return said["label"], said["reads"]


@pytest.mark.heavy
@pytest.mark.parametrize(("backend", "reader"), NOT_FOUND_READERS, ids=[f"{b}-{r}" for b, r in NOT_FOUND_READERS])
def test_every_404_for_a_key_the_store_holds_fails_its_read_naming_the_key_and_the_reader(
    tmp_path, s3, backend, reader
):
    """The relay answers a seeded share of the GETs of the store's objects 404 Not Found (the
    server holds them: it answered with their bytes). Read through the engine one selection
    at a time (tests/not_found_reads.py), every read that met an injected 404 fails, naming a
    key it injected on, the reader and "the store answered not found for a key it holds";
    every other read passes its value check. zarr-python (through fsspec and obstore) and
    tensorstore take a missing chunk for an empty one and return fill values without a word:
    those reads fail after the read, at its check. HDF5's ROS3 driver is read in the MPI
    environment, whose h5py has it."""
    import not_found_reads

    from h5sweep.storage import objectstore

    staging = tmp_path / "staging"
    staging.mkdir()
    clean = objectstore.S3Location(s3.endpoint, s3.bucket, f"{backend}-{reader}".replace(" ", "-"))
    if reader == "ros3":
        label, found = _ros3_reads(clean, staging)
    else:
        share = 0.01 if backend == "raw" else 0.1  # a raw slice of it is 100 GETs: some pass untouched
        option, read = _reader(backend, reader)
        label, found = not_found_reads.reads(backend, clean, str(staging), share, option, read)
    met = [(said, keys) for said, keys in found if keys]
    assert all(said is None for said, keys in found if not keys), "a read that met no fault failed"
    assert met and len(met) < len(found)  # some reads met a 404, some none
    for said, keys in met:
        assert said is not None, f"a read that was answered 404 for {keys} passed"
        assert "the store answered not found for a key it holds" in said
        assert f"{label} read with " in said
        assert any(f"asked for {key}" in said for key in keys), said
    if backend == "zarr":  # a missing chunk read as fill values: caught after the read, by its check
        assert any("could not read the selection" not in said for said, _ in met)


def test_faults_are_variants_of_a_filesystem_and_a_malformed_entry_is_refused_naming_its_key(tmp_path):
    from h5sweep.storage.errors import ConfigError
    from h5sweep.storage.latency import Faults
    from h5sweep.sweep.model import load_sweep

    config = _cloud_config(tmp_path, "http://127.0.0.1:8333")
    config["filesystems"]["cloud"]["s3"]["faults"] = [{}, {"slowdown": 0.05, "seed": 2}]
    sweep = load_sweep(config, probe=False)
    found = {fs.name: (fs.s3.prefix, fs.s3.latency_ms, fs.s3.faults) for fs in sweep.filesystems}
    assert found == {
        "cloud_0ms_f0": ("0ms/f0", 0.0, Faults()),
        "cloud_0ms_f1": ("0ms/f1", 0.0, Faults(slowdown=0.05, seed=2)),
        "cloud_20ms_f0": ("20ms/f0", 20.0, Faults()),
        "cloud_20ms_f1": ("20ms/f1", 20.0, Faults(slowdown=0.05, seed=2)),
    }
    assert Faults(slowdown=0.05, seed=2).label == "slowdown 0.05 (seed 2)" and Faults().label == "none"
    refused = [
        ([{"slowdown": 1.5}], r"s3\.faults\[0\]\.slowdown=1\.5.*share of requests, from 0 to 1"),
        ([{}, {"throttle": 0.1}], r"s3\.faults\[1\]\.throttle=0\.1.*not a fault setting: one of slowdown"),
        ([{"stall": 0.1}], r"s3\.faults\[0\]=.*stall without stall_s"),
        ([{"rate": -1}], r"s3\.faults\[0\]\.rate=-1.*a number, 0 or more"),
        ([{"seed": 1.5}], r"s3\.faults\[0\]\.seed=1\.5.*a whole number"),
        (["slowdown"], r"s3\.faults\[0\]='slowdown'.*must be a mapping"),
        ([{"reset": 0.1}, {"reset": 0.1}], r"s3\.faults\[1\]=.*repeats filesystems\.cloud\.s3\.faults\[0\]"),
    ]
    for faults, said in refused:
        config["filesystems"]["cloud"]["s3"]["faults"] = faults
        with pytest.raises(ConfigError, match=r"filesystems\.cloud\." + said):
            load_sweep(config, probe=False)
    config["filesystems"]["cloud"]["s3"].update(endpoint="https://s3.example.org", latency_ms=[0])
    config["filesystems"]["cloud"]["s3"]["faults"] = [{"slowdown": 0.1}]
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.faults=.*http:// endpoints only"):
        load_sweep(config, probe=False)


# the faults drawn per request; the rate limit, which depends on when requests arrive, is
# tested apart (below) on arrivals it is given and on a burst certain to pass it; its answer is
# the slowdown's, counted by the same code
FAULTS = {
    "slowdown": {"slowdown": 0.2},
    "reset": {"reset": 0.2},
    "stall": {"stall": 0.2, "stall_s": 0.2},
}


def test_the_rate_limit_throttles_each_request_beyond_its_count_in_the_second_up_to_it():
    """Arrival times given, not measured: a request is beyond a limit of 3 where 3 others
    arrived in the second before it; a request answered 503 counts too; none beyond 0."""
    from h5sweep.storage.latency import RateLimit

    limit = RateLimit(3)
    arrivals = [0.0, 0.1, 0.2, 0.3, 0.9, 1.05, 1.25, 2.5, 2.6, 2.7, 2.8]
    beyond = [limit.beyond(t) for t in arrivals]
    # 0.3 and 0.9: the 4th and 5th in a second; 1.05: 0.1-0.9 before it; 1.25: 0.3-1.05
    assert beyond == [False, False, False, True, True, True, True, False, False, False, True]
    assert not any(RateLimit(0).beyond(t) for t in arrivals)


def test_a_burst_past_the_relays_rate_limit_is_answered_503_slowdown_and_logged_so():
    """Eight HEADs sent at once on eight open connections to a relay limited to 3 requests a
    second (a burst of milliseconds, far inside its second whatever the machine's load): the
    5 beyond the limit are answered 503 SlowDown in the server's place, and logged with the
    fault; the first 3 get the server's own answer (an HTTP server of the test's, 200)."""
    import http.server
    import socket
    import threading
    from urllib.parse import urlsplit

    from h5sweep.storage.latency import Faults, Relay

    class Found(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = 64  # every connection of the burst accepted by the kernel at once

    server = Server(("127.0.0.1", 0), Found)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with Relay(f"http://127.0.0.1:{server.server_address[1]}", 0, Faults(rate=3)) as relay:
        parts = urlsplit(relay.endpoint)
        connections = [socket.create_connection((parts.hostname, parts.port), timeout=30) for _ in range(8)]
        for k, connection in enumerate(connections):
            connection.sendall(f"HEAD /bucket/burst-{k} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
        statuses = []
        for connection in connections:
            with connection:
                answer = b""
                while b"\r\n\r\n" not in answer:
                    answer += connection.recv(4096)
                statuses.append(int(answer.split(b" ", 2)[1]))
        relay.stop()
        with open(relay.log_path, encoding="latin-1") as f:
            lines = [line.rstrip("\n").split("\t") for line in f]
    server.shutdown()
    assert sorted(statuses) == [200, 200, 200, 503, 503, 503, 503, 503], statuses
    assert len(lines) == 8 and sorted(line[5] for line in lines) == ["", "", "", "rate", "rate", "rate", "rate", "rate"]
    assert all(line[3] == "503" for line in lines if line[5] == "rate")


@pytest.mark.heavy
@pytest.mark.parametrize("store", ["fsspec", "obstore"])
@pytest.mark.parametrize("kind", list(FAULTS))
def test_every_fault_the_relay_injects_is_counted_in_its_reads_row_and_disturbs_it(tmp_path, s3, kind, store):
    """Each kind of fault injected in a Zarr store's reads (zarr-python through fsspec, its
    requests counted by the S3 client, and through obstore, counted by the relay): the
    clients retry them and read every value right; the faults the rows count are the faults
    the relay's log holds, each read that met one is disturbed, and a read that met none,
    no failed answer and no retry is not."""
    import numpy as np
    from conftest import read_cases

    from h5sweep import backends
    from h5sweep.backends.remote import RemoteBackend
    from h5sweep.backends.zarr_readers import ZarrReader
    from h5sweep.cases import read_cases_from_config
    from h5sweep.storage import objectstore
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.datasources import SyntheticSource
    from h5sweep.storage.latency import Faults
    from h5sweep.storage.layouts import Layout

    shape, layout = (10, 10, 200), Layout((5, 5, 100))
    clean = objectstore.S3Location(s3.endpoint, s3.bucket, f"counted-{kind}-{store}")
    faulty = objectstore.S3Location(clean.endpoint, clean.bucket, clean.prefix, 0.0, Faults(**FAULTS[kind]))
    staging = tmp_path / "staging"
    staging.mkdir()
    source = SyntheticSource(shape, np.uint16, seed=5)
    path = str(staging / "store.zarr")
    RemoteBackend(backends.load("zarr"), clean, staging).write_fast(
        path, source.materialize(), layout, parse_compression("none"), "data", 1
    )
    remote = RemoteBackend(backends.load("zarr"), faulty, staging)
    log = objectstore.relay(faulty).log_path
    mark = os.path.getsize(log)
    cases = read_cases_from_config({"slice": {"repeats": 6}, "spectra": {"repeats": 6, "size": 2}}, shape)
    option = ZarrReader("zarr-python", 10, store)
    rows = read_cases(remote, path, cases, shape, 7, source, layout, [option])  # every value checked
    with open(log, encoding="latin-1") as f:
        f.seek(mark)
        lines = [line.rstrip("\n").split("\t") for line in f]
    injected = [line for line in lines if line[5]]
    assert injected and {line[5] for line in injected} == {kind}
    assert sum(r["faults"] for r in rows) == len(injected)
    assert sum(r["requests_failed"] for r in rows) == len(
        [line for line in lines if line[5] == "reset" or line[3] == "429" or int(line[3]) >= 500]
    )
    for row in rows:
        assert row["disturbed"] == bool(row["faults"] or row["requests_failed"] or row["requests_retried"])
    assert any(row["disturbed"] for row in rows)
    if kind != "stall":  # a failed answer is sent again
        assert sum(r["requests_retried"] for r in rows) >= 1
    assert not all(row["disturbed"] for row in rows)  # drawn per request: some reads meet none


@pytest.mark.heavy
def test_a_query_job_on_a_filesystem_with_faults_says_them_and_counts_what_each_read_met(tmp_path, s3):
    """The generate and query jobs of a Zarr store on the faulty variant of a filesystem (its
    settings as a job receives them): every row says the faults emulated, every read row
    counts the faults it met (at most the relay log's during the job) and is disturbed where
    it met one, and every value read is checked; the fault-free variant's rows say none and
    met none."""
    import pandas as pd

    from h5sweep.storage import objectstore
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep import stages
    from h5sweep.sweep.model import load_sweep

    config = tiny_config(tmp_path, sweep="faulty")
    s3_entry = {"endpoint": s3.endpoint, "bucket": s3.bucket, "prefix": "jobs", "faults": [{}, {"slowdown": 0.2}]}
    config["filesystems"] = {"cloud": {"path": str(tmp_path / "staging"), "s3": s3_entry}}
    config["dataset"]["shape"] = [10, 10, 400]  # 16 chunks: few uploads
    config["backends"] = ["hdf5", "zarr"]
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [100]}, "shapes": []}
    config["compression"] = ["none"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 3, "depth": 5}}
    sweep = load_sweep(config)
    for fs in sweep.filesystems:
        (store_file,) = [f for f in sweep.stores() if f.filesystem is fs and f.backend.name == "zarr"]
        where = (store_file.backend.name, store_file.layout.id, store_file.compression.name)
        store = os.path.join(fs.directory, "zarr", "store.zarr")
        out = tmp_path / fs.name
        stages.run_generate(job_settings.generate_settings(sweep, fs, *where), store, str(out / "write.parquet"))
        log = objectstore.relay(fs.s3).log_path
        mark = os.path.getsize(log)
        stages.run_query(job_settings.query_settings(sweep, fs, *where), store, str(out / "query.parquet"))
        with open(log, encoding="latin-1") as f:
            f.seek(mark)
            injected = [line for line in f if line.rstrip("\n").split("\t")[5]]
        written, read = pd.read_parquet(out / "write.parquet"), pd.read_parquet(out / "query.parquet")
        assert set(written["faults_emulated"]) == set(read["faults_emulated"]) == {fs.s3.faults.label}
        # the job's requests outside its timed reads (the store's checks around them) may meet some too
        assert read["faults"].sum() <= len(injected)
        assert list(read["disturbed"]) == list((read["faults"] > 0) | (read["requests_failed"] > 0))
        if fs.name == "cloud_f1":
            assert fs.s3.faults.label == "slowdown 0.2 (seed 0)" and read["disturbed"].any()
        else:
            assert fs.s3.faults.label == "none" and not injected and not read["disturbed"].any()
