"""Test stores on a real S3 server (moto's, on the loopback): each backend's store uploaded and
read back through a new client, every value checked, and the requests the client counts equal
to those the server served, split into data and metadata requests."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest

from h5sweep import backends
from h5sweep.backends.remote import classifier, open_remote
from h5sweep.backends.zarr_readers import ZarrReader
from h5sweep.storage import objectstore
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import FileRead, RequestLog, S3Location, parse_range
from h5sweep.storage.targets.s3 import MARKER_SUFFIX, location_from_config, upload

SHAPE = (20, 20, 500)
SMALL = (10, 10, 200)  # through the engine: a raw slice is one ranged GET per element


@pytest.fixture(scope="module")
def s3():
    import s3server

    with s3server.bucket("h5sweep-test", "runs/a") as (record, location):
        yield record, location


def _values() -> np.ndarray:
    return np.random.default_rng(3).integers(0, 60000, SHAPE, dtype=np.uint16)


def _store(tmp_path, s3, backend: str, layout: Layout, compression: str = "none"):
    """The backend's store written locally (its fast path), uploaded; (location, name, classify)."""
    _, location = s3
    local = str(tmp_path / f"store.{backend}")
    backends.load(backend).write_fast(local, _values(), layout, parse_compression(compression), "data", 1)
    name = f"{backend}-{layout.id}-{compression}"
    upload(objectstore.client(location), location, name, local)
    return location, name, classifier(backend, local, "data")


def _read(s3, backend, location, name, classify, start, size, read=None, reader=None):
    """One read of a box through a new client: its values and the client's and the server's
    counts (obstore's and tensorstore's counted by the relay every request passes)."""
    from h5sweep.backends.remote import request_log

    record, _ = s3
    log = request_log(backend, reader, location, classify)
    opened = open_remote(backend, location, name, "data", log, read, None, reader)
    buffer = np.empty(size, np.uint16)
    do = opened.prepare(start, buffer)
    mark, served = log.mark(), record.mark()
    result = do()  # tensorstore returns its values; the others fill the buffer
    counts, on_server = log.since(mark), record.since(served)
    opened.close()
    return (buffer if result is None else np.asarray(result)), counts, on_server


ZARR_READERS = {
    "fsspec": ZarrReader("zarr-python", 10, "fsspec"),
    "obstore": ZarrReader("zarr-python", 10, "obstore"),
    "tensorstore": ZarrReader("tensorstore", 10, "s3"),
}


@pytest.mark.parametrize(
    ("backend", "layout", "reader"),
    [
        ("hdf5", Layout(None), None),
        ("hdf5", Layout((5, 5, 100)), None),
        ("zarr", Layout((5, 5, 100)), "fsspec"),
        ("zarr", Layout((5, 5, 100)), "obstore"),
        ("zarr", Layout((5, 5, 100)), "tensorstore"),
        ("raw", Layout(None), None),
    ],
    ids=lambda v: getattr(v, "id", v),
)
def test_a_read_of_each_backend_counts_the_requests_the_server_served(tmp_path, s3, backend, layout, reader):
    location, name, classify = _store(tmp_path, s3, backend, layout)
    start, size = (3, 4, 120), (6, 2, 150)
    # a block smaller than the file: HDF5's open does not fetch the values with its metadata
    read, reader = FileRead(block_size=65536), ZARR_READERS.get(reader)
    got, counts, served = _read(s3, backend, location, name, classify, start, size, read, reader)
    box = tuple(slice(a, a + n) for a, n in zip(start, size, strict=True))
    assert np.array_equal(got, _values()[box])
    assert counts["requests"] == len(served) > 0
    assert counts["data_requests"] + counts["metadata_requests"] == counts["requests"]
    assert counts["data_requests"] >= 1
    ranged = [s for s in served if s.method == "GET" and s.range]
    asked = sum(b - a for a, b in (parse_range(s.range) for s in ranged))
    assert counts["bytes_requested"] == asked
    if backend == "raw":  # one ranged GET per contiguous run: 6 x 2 runs of 150 values
        assert counts["requests"] == counts["data_requests"] == 12
        assert counts["bytes_requested"] == counts["bytes_received"] == 12 * 150 * 2
    if backend == "zarr":  # the chunks the box touches: 2 x 2 x 2, one whole GET each
        assert counts["data_requests"] == 8 == len([s for s in served if s.method == "GET" and "/c/" in s.path])
        assert counts["bytes_received"] == 8 * 5 * 5 * 100 * 2  # uncompressed chunks


@pytest.mark.parametrize("reader", ["fsspec", "obstore", "tensorstore"])
def test_a_sharded_zarr_stores_index_reads_are_counted_as_metadata(tmp_path, s3, reader):
    """A shard's chunks are ranges of its object: a reader fetches the shard's index (a range
    at its end) before the chunks it needs. Every reader's requests equal the server's; the
    index ranges are metadata requests, the chunk ranges data requests, one per chunk."""
    layout = Layout((5, 5, 100), shard_shape=(10, 10, 500))
    location, name, classify = _store(tmp_path, s3, "zarr", layout)
    start, size = (8, 4, 120), (4, 2, 150)  # 2 x 2 x 2 chunks of 5 x 5 x 100, in 2 shards
    got, counts, served = _read(s3, "zarr", location, name, classify, start, size, None, ZARR_READERS[reader])
    box = tuple(slice(a, a + n) for a, n in zip(start, size, strict=True))
    assert np.array_equal(got, _values()[box])
    assert counts["requests"] == len(served)
    shards = Layout(layout.shard_shape).chunks_touched(start, size)
    assert counts["data_requests"] == layout.chunks_touched(start, size) == 8
    # each shard touched: its index, a range at its end, fetched once
    assert counts["metadata_requests"] == shards == 2
    assert all(s.range for s in served if "/c/" in s.path)  # no shard fetched whole


@pytest.mark.heavy
def test_hdf5s_page_buffer_on_a_paged_file_needs_fewer_requests_than_an_unpaged_file(tmp_path, s3):
    """Small chunks of a file read through a small fsspec block: every chunk's index and data
    a request of its own; a file written with paged aggregation and read with a page buffer
    takes its metadata and data pages in fewer (counted, not timed)."""
    import h5py

    _, location = s3
    values = _values()
    fs = objectstore.client(location)
    for name, kwargs in [("unpaged", {}), ("paged", {"fs_strategy": "page", "fs_page_size": 64 * 1024})]:
        path = tmp_path / f"{name}.h5"
        with h5py.File(path, "w", **kwargs) as f:
            f.create_dataset("data", data=values, chunks=(2, 2, 50))
        upload(fs, location, name, str(path))
    starts = [(i, j, 0) for i in range(0, 20, 7) for j in range(0, 20, 6)]
    requests = {}
    for name, page_buffer in [("unpaged", 0), ("paged", 1024 * 1024)]:
        read = FileRead(block_size=4096, cache_type="none", page_buffer=page_buffer)
        classify = classifier("hdf5", str(tmp_path / f"{name}.h5"), "data")
        total = 0
        for start in starts:
            got, counts, served = _read(s3, "hdf5", location, name, classify, start, (2, 2, 500), read)
            assert np.array_equal(got, values[start[0] : start[0] + 2, start[1] : start[1] + 2, :])
            assert counts["requests"] == len(served)
            total += counts["requests"]
        requests[name] = total
    assert requests["paged"] < requests["unpaged"]


def test_clients_share_a_session_per_credentials_and_neither_a_connection_nor_a_count(s3, monkeypatch):
    """A cold client is made from the process's botocore session for the environment's
    credentials (the S3 API's description parsed once), yet opens its own connection, and
    its requests are counted in its own log alone; other credentials, another session."""
    record, location = s3
    objectstore.client(location).pipe(location.path("session-probe"), b"x" * 100)
    logs = [RequestLog(), RequestLog()]
    first, second = (objectstore.client(location, log) for log in logs)
    assert first is not second and first.session is second.session
    assert first.s3 is not second.s3  # each its own botocore client, connections and caches
    served = record.mark()
    for fs in (first, second):
        assert fs.info(location.path("session-probe"))["size"] == 100
    assert [len(log.requests) for log in logs] == [1, 1]
    assert len(record.since(served)) == 2
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "another-key")
    assert objectstore.client(location).session is not first.session


def test_an_s3_location_is_checked_naming_the_key():
    good = location_from_config({"endpoint": "http://127.0.0.1:8333", "bucket": "arrays", "prefix": "a/b"}, "fs.s3")
    assert good.path("x.h5") == "arrays/a/b/x.h5" and good.url() == "s3://arrays/a/b"
    for entry, key in [
        ({"endpoint": "127.0.0.1:8333", "bucket": "arrays"}, "fs.s3.endpoint"),
        ({"endpoint": "http://h", "bucket": "Arrays"}, "fs.s3.bucket"),
        ({"endpoint": "http://h", "bucket": "arrays", "prefix": "/a"}, "fs.s3.prefix"),
    ]:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            location_from_config(entry, "fs.s3")
    assert parse_range("bytes=10-19") == (10, 20) and parse_range(None) == (None, None)


@pytest.fixture(scope="module")
def seaweed(tmp_path_factory):
    """SeaweedFS's weed mini on the loopback (the server of timed runs), for this module."""
    from h5sweep.host import seaweed

    directory = tmp_path_factory.mktemp("seaweedfs")
    server = seaweed.start(directory, port=0, bucket="h5sweep", credentials=("h5sweep", "local-secret"))
    yield server
    seaweed.stop(directory)


def _settled(count, wait_s: float = 0.2, tries: int = 25) -> dict:
    """A server's counts once two readings ``wait_s`` apart agree (SeaweedFS counts a request
    after its answer has gone out)."""
    import time

    last = count()
    for _ in range(tries):
        time.sleep(wait_s)
        now = count()
        if now == last:
            return now
        last = now
    return last


@pytest.mark.parametrize("backend", ["hdf5", "zarr", "raw"])
def test_on_seaweedfs_the_client_counts_what_the_server_says_it_served(tmp_path, seaweed, backend, monkeypatch):
    from h5sweep.host.seaweed import served

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "h5sweep")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local-secret")
    location = S3Location(seaweed.endpoint, "h5sweep", f"counted/{backend}")
    layout = Layout(None) if backend == "raw" else Layout((5, 5, 100))
    local = str(tmp_path / f"store.{backend}")
    backends.load(backend).write_fast(local, _values(), layout, parse_compression("none"), "data", 1)
    upload(objectstore.client(location), location, "store", local)
    log = RequestLog(classifier(backend, local, "data"))
    before = _settled(lambda: served(seaweed, "h5sweep"))  # the upload's last PUTs counted
    opened = open_remote(backend, location, "store", "data", log, FileRead(block_size=65536))
    buffer = np.empty((6, 2, 150), np.uint16)
    opened.prepare((3, 4, 120), buffer)()
    opened.close()
    after = _settled(lambda: served(seaweed, "h5sweep"))
    assert np.array_equal(buffer, _values()[3:9, 4:6, 120:270])
    # SeaweedFS files a HEAD under GET (or LIST, of a prefix): the totals compare
    on_server = {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after}
    assert len(log.requests) == sum(on_server.values()) > 0 and on_server.get("PUT", 0) == 0
    assert {r.method for r in log.requests} <= {"GET", "HEAD"}


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("backend", "reader"),
    [("hdf5", None), ("zarr", "fsspec"), ("zarr", "obstore"), ("zarr", "tensorstore"), ("raw", None)],
)
def test_the_read_engine_reads_a_remote_store_cold_each_time_and_records_its_requests(tmp_path, s3, backend, reader):
    """Through the workflow's read engine: every read of ``cold: every`` opens a new client, so
    each fetches its data from the server (``cache_state`` cold), and its row carries the
    requests the server served for it."""
    from conftest import read_cases

    from h5sweep.backends.remote import RemoteBackend
    from h5sweep.cases import read_cases_from_config
    from h5sweep.storage import columns as C
    from h5sweep.storage.datasources import SyntheticSource

    record, location = s3
    staging = tmp_path / "staging"
    staging.mkdir()
    # a block smaller than the file: an HDF5 open does not fetch the whole file
    where = S3Location(location.endpoint, location.bucket, "engine")
    remote = RemoteBackend(backends.load(backend), where, staging, FileRead(block_size=4096))
    layout = Layout(None) if backend == "raw" else Layout((5, 5, 100))
    source = SyntheticSource(SMALL, np.uint16, seed=5)
    path = str(staging / f"store.{backend}")
    remote.write_fast(path, source.materialize(), layout, parse_compression("none"), "data", 1)
    cases = read_cases_from_config({"slice": {"repeats": 3}, "spectra": {"repeats": 3, "size": 2}}, SMALL)
    mark = record.mark()
    options = [ZARR_READERS[reader]] if reader else None
    rows = read_cases(remote, path, cases, SMALL, 7, source, layout, options)  # values checked by the engine
    # the HEAD of its upload's marker, once before its first read, is no read's
    served = [s for s in record.since(mark) if not s.path.endswith(MARKER_SUFFIX)]
    assert len(rows) == 6 and {r[C.CACHE_STATE] for r in rows} == {"cold"}
    assert all(r["data_requests"] >= 1 and r["bytes_received"] > 0 for r in rows)
    # every request the server served during the reads' pass is a timed read's (its open's
    # among them: the first read opens the store inside its clock)
    assert sum(r["requests"] for r in rows) == len(served)
    assert all(1 <= r["open_requests"] < r["requests"] for r in rows)
    remote.remove(path)
    assert not objectstore.client(where).exists(where.path(f"store.{backend}"))


def test_under_cold_first_a_case_opens_one_client_and_its_later_reads_use_what_it_fetched(tmp_path, s3):
    """``cold: first`` on an object store: one new client per case, opened by its first read
    (inside its clock); the later reads go through the same client, and with s3fs's default
    5 MiB readahead block, which held this small file whole after the open, they send no
    request (``cache_state`` warm)."""
    import pandas as pd
    from conftest import read_cases

    from h5sweep.backends.remote import RemoteBackend
    from h5sweep.cases import read_cases_from_config
    from h5sweep.storage import columns as C
    from h5sweep.storage.datasources import SyntheticSource

    record, location = s3
    staging = tmp_path / "staging"
    staging.mkdir()
    where = S3Location(location.endpoint, location.bucket, "engine-first")
    remote = RemoteBackend(backends.load("hdf5"), where, staging, FileRead())
    layout = Layout((5, 5, 100))
    source = SyntheticSource(SMALL, np.uint16, seed=5)
    path = str(staging / "store.hdf5")
    remote.write_fast(path, source.materialize(), layout, parse_compression("none"), "data", 1)
    cases = read_cases_from_config({"slice": {"repeats": 3, "cold": "first"}}, SMALL)
    mark = record.mark()
    rows = read_cases(remote, path, cases, SMALL, 7, source, layout)  # values checked by the engine
    served = [s for s in record.since(mark) if not s.path.endswith(MARKER_SUFFIX)]  # its marker's HEAD: no read's
    first, later = rows[0], rows[1:]
    assert len(rows) == 3 and first[C.CACHE_STATE] == "cold" and first["open_requests"] >= 1
    assert first["requests"] == len(served)  # the open's and the read's, nothing after
    assert all(r["requests"] == 0 and r[C.CACHE_STATE] == "warm" and pd.isna(r["open_requests"]) for r in later)
    remote.remove(path)


@pytest.mark.workflow
def test_a_sweep_on_moto_and_seaweedfs_runs_with_snakemake_and_counts_every_reads_requests(
    workflow, tmp_path, s3, seaweed, monkeypatch
):
    """A real Snakemake sweep with S3 filesystems on both servers (moto's, at 20 ms, and
    SeaweedFS's): every store of each backend written, uploaded and read through new clients;
    each read row carries its requests and says where it ran; at 20 ms the HDF5 file written
    with paged aggregation and read with a page buffer needs fewer requests than the same
    chunks unpaged, for the same selections; the recommendation, and a figure per filesystem,
    are made. One latency: a list of them, each a filesystem, is config's
    (test_the_shipped_cloud_config_measures_each_latency_as_a_filesystem_of_its_own)."""
    import pandas as pd
    from conftest import tiny_config

    record, location = s3
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "h5sweep")  # SeaweedFS's pair (moto takes any)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local-secret")
    config = tiny_config(tmp_path, sweep="cloud", figures=["case_bars"])
    config["dataset"]["shape"] = [8, 8, 400]  # a raw slice: 64 ranged GETs
    config["layouts"] = {"contiguous": True, "shapes": [[2, 2, 50]], "pages": [4096]}
    config["compression"] = ["none"]
    config["backends"] = ["hdf5", "zarr", "raw"]
    config["zarr"] = {"readers": ["zarr-python", "tensorstore"]}
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 2}, "spectra": {"repeats": 2, "size": 2}}
    # HDF5 through 4 KiB blocks, with a page buffer (taken by the paged files), and s3fs's default
    small = {"block_size": 4096, "cache_type": "none", "page_buffer": "64 KiB"}
    config["filesystems"] = {
        "moto": {
            "path": str(tmp_path / "staging"),
            "s3": {
                "endpoint": location.endpoint,
                "bucket": location.bucket,
                "prefix": "sweep",
                "latency_ms": [20],
                "reads": [small, {}],
                "zarr_stores": ["fsspec", "obstore"],
            },
        },
        "weed": {
            "path": str(tmp_path / "weed-staging"),
            "s3": {"endpoint": seaweed.endpoint, "bucket": "h5sweep", "prefix": "sweep", "reads": [small]},
        },
        "disk": {"path": str(tmp_path / "disk")},  # a filesystem beside them, for compare
    }
    workflow.write_config(config)
    workflow.run("--cores", "2", "--configfile", "test.yaml", check=True)
    results = workflow.root / "results" / "cloud"
    rows = pd.read_parquet(results / "measurements.parquet")
    reads = rows[rows["case"].isin(["slice", "spectra"])]
    on_disk = reads["filesystem"] == "disk"
    assert on_disk.any() and reads.loc[on_disk, "requests"].isna().all()
    reads = reads[~on_disk]
    where = set(zip(reads["filesystem"], reads["latency_ms"], reads["fs_path"], reads["fs_device"], strict=True))
    assert where == {
        ("moto", 20.0, "s3://h5sweep-test/sweep", location.endpoint),
        ("weed", 0.0, "s3://h5sweep/sweep", seaweed.endpoint),
    }
    assert (reads["fs_type"] == "s3").all()
    # HDF5: 4 layouts (2 paged) in 2 reads on moto, 1 on SeaweedFS; Zarr one store read by
    # zarr-python through fsspec and obstore on moto (fsspec only on SeaweedFS) and by
    # tensorstore; raw one store
    stores = reads.groupby(["filesystem", "backend"])[["layout_id", "read_option"]].apply(
        lambda g: len(set(zip(g["layout_id"], g["read_option"], strict=True)))
    )
    assert stores.to_dict() == {
        ("moto", "hdf5"): 8,
        ("weed", "hdf5"): 4,
        ("moto", "zarr"): 3,
        ("weed", "zarr"): 2,
        **{(fs, "raw"): 1 for fs in ("moto", "weed")},
    }
    zarr_reads = reads[reads["backend"] == "zarr"]
    assert set(zip(zarr_reads["reader"], zarr_reads["zarr_store"], strict=True)) == {
        ("zarr-python", "fsspec"),
        ("zarr-python", "obstore"),
        ("tensorstore", "s3"),
    }
    # the same selections of the same store take the same chunk requests through every reader
    # (obstore's and tensorstore's counted by the relay, fsspec's by the S3 client)
    data = zarr_reads.groupby(["filesystem", "case", "repeat", "selection", "zarr_store"])["data_requests"].sum()
    assert (data.unstack().nunique(axis=1) == 1).all(), data.unstack()
    assert set(reads.loc[reads["backend"] == "hdf5", "page_size"]) == {0, 4096}
    # each read opens a new client (cold every) inside its clock: its open's requests are
    # among its own, and counted apart; through s3fs's 5 MiB block HDF5's open fetches the
    # whole file, and its read needs no request more
    assert (reads["open_requests"] >= 1).all() and (reads["requests"] >= reads["open_requests"]).all()
    assert (reads["cache_state"] == "cold").all()
    other = reads["backend"] != "hdf5"
    assert (reads.loc[other, "data_requests"] >= 1).all()
    assert (reads.loc[reads["backend"] == "zarr", "open_requests"] <= 2).all()  # its zarr.json, opened as v3
    whole = reads[(reads["backend"] == "hdf5") & (reads["s3_block_size"] == 5 * 2**20)]
    assert len(whole) and (whole["requests"] == whole["open_requests"]).all()
    # at 20 ms, through 4 KiB blocks: the paged file and its page buffer take fewer requests
    # (its open and its read) than the unpaged file, summed over the same selections per case
    small_reads = reads[
        (reads["filesystem"] == "moto") & (reads["backend"] == "hdf5") & (reads["s3_block_size"] == 4096)
    ]
    chunked = small_reads[small_reads["chunk_shape"] == "2x2x50"]
    per_case = chunked.groupby(["case", "page_size"])["requests"].sum().unstack()
    assert (per_case[4096] < per_case[0]).all(), per_case
    # the summary carries each store's request counts and read settings; the finding of the
    # paged file is judged from them: 4 KiB blocks hold a 4 KiB page, the buffer 16 of them
    summary = pd.read_csv(results / "summary.csv")
    mine = summary[(summary["filesystem"] == "moto") & summary["policy"].notna()]
    assert mine["requests_median"].notna().all() and (mine["latency_ms"] == 20).all()
    assert set(mine.loc[mine["backend"] == "hdf5", "s3_block_size"]) == {4096, 5 * 2**20}
    assert summary.loc[summary["filesystem"] == "disk", "requests_median"].isna().all()
    found = pd.read_csv(results / "findings.csv").set_index(["filesystem", "finding"])["verdict"]
    assert found["moto", "paged-file-fewer-requests"] == "holds"
    assert found["disk", "paged-file-fewer-requests"] == "not measured"
    writes = rows[(rows["case"] == "write") & (rows["filesystem"] != "disk")]
    assert len(writes) >= 2 * 6 and (writes["fs_type"] == "s3").all()  # 6 stores on each server
    drawn = {p.name for p in (results / "plots").glob("*.png")}
    for fs in ("moto", "weed"):
        assert any(name.endswith(f"-{fs}.png") for name in drawn), (fs, sorted(drawn))
    said = (results / "recommendation.md").read_text()
    assert "The latency on moto (20 ms) is emulated" in said
    assert re.search(r"in \d+ requests \(\d+ for chunks\) that brought", said)  # why, per read
    assert said.count("| spread | requests / unit | file / raw |") == 2  # the object stores' tables
    # each ranked store's requests per unit of work: its cases' mean requests per read, by the mix
    ranked = pd.read_csv(results / "recommendation.csv")
    assert ranked.loc[ranked["filesystem"] == "disk", "requests_per_unit"].isna().all()
    remote = ranked[ranked["filesystem"] != "disk"]
    assert remote["requests_per_unit"].notna().all()
    for _, store in remote.iterrows():
        mix = {case: float(n) for case, n in (part.split() for part in store["weights"].split(", "))}
        mine = reads[
            (reads["filesystem"] == store["filesystem"])
            & (reads["backend"] == store["backend"])
            & (reads["layout_id"] == store["layout_id"])
            & (reads["read_option"] == store["read_option"])
        ]
        expected = sum(mine.loc[mine["case"] == case, "requests"].mean() * n for case, n in mix.items())
        assert store["requests_per_unit"] == pytest.approx(expected), store["layout_id"]
    decision = (results / "decision.md").read_text()
    assert decision.count("- **Requests:** ") == 2  # moto, weed; none for the disk
    # the page-reporting caveat names the disk at most: an object store's reads come from its server
    caveat = next((line for line in said.splitlines() if line.startswith("Caveat: cold reads")), "")
    assert not any(f"{fs} on " in caveat for fs in ("moto", "weed"))
    # every store was removed from both servers once read: no object is left under the prefix
    assert objectstore.client(location).find(f"{location.bucket}/sweep") == []
    weed = S3Location(seaweed.endpoint, "h5sweep", "sweep")
    assert set(objectstore.client(weed).find(weed.path())) <= {weed.path()}  # SeaweedFS keeps the folder
    _compare_s3_with_posix(results, tmp_path)


def _compare_s3_with_posix(results, tmp_path):
    """``compare`` of the sweep's S3 filesystem at 20 ms with its POSIX one, as two sweeps'
    folders: HDF5's read options differ (on S3 they also say how the file is fetched), so each
    system reads each HDF5 store with its own best option, and the stores are compared by
    layout and codec; one store is chosen for both, and each system's option is named."""
    import shutil
    import subprocess
    import sys

    import pandas as pd

    folders = {}
    for name, keep in (("posix", "disk"), ("s3", "moto")):
        folder = folders[name] = tmp_path / name
        shutil.copytree(results, folder)
        for table in ("measurements", "summary"):
            frame = pd.read_parquet(folder / f"{table}.parquet")
            frame[frame["filesystem"] == keep].to_parquet(folder / f"{table}.parquet")
    out = tmp_path / "compared"
    done = subprocess.run(
        [sys.executable, "-m", "h5sweep.compare", folders["posix"], folders["s3"], "--out", out],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out / "comparison.csv")
    assert set(table["filesystem"]) == {"disk", "moto"}
    hdf5 = table[table["backend"] == "hdf5"]
    assert (hdf5["compared_option"] == "each system's best option").all() and len(hdf5) == 2 * 4
    on_s3 = hdf5.loc[hdf5["filesystem"] == "moto", "read_option"]
    assert on_s3.str.contains("blocks|no fsspec cache").all()  # each store's own S3 read, by name
    assert not hdf5.loc[hdf5["filesystem"] == "disk", "read_option"].str.contains("blocks|fsspec").any()
    # Zarr's options differ too: on S3 they say the store a reader fetches through
    zarr_rows = table[table["backend"] == "zarr"]
    assert (zarr_rows["compared_option"] == "each system's best option").all()
    others = table[table["backend"] == "raw"]
    assert (others["compared_option"] == others["read_option"].fillna("")).all()
    assert table.drop_duplicates(["backend", "layout_id", "compression", "compared_option"])["minimax"].sum() == 1
    text = (out / "comparison.md").read_text()
    assert "each system reads each with its best option there" in text


def test_what_an_object_store_does_not_measure_yet_is_refused_naming_the_key(tmp_path, s3, monkeypatch):
    from conftest import tiny_config

    from h5sweep.sweep.model import load_sweep

    _, location = s3
    config = tiny_config(tmp_path)
    cloud = {"endpoint": location.endpoint, "bucket": location.bucket}
    config["filesystems"] = {"cloud": {"path": str(tmp_path / "staging"), "s3": cloud}}
    config["backends"] = ["hdf5", "zarr"]
    # obstore's and tensorstore's requests are counted by the relay, which https:// does not pass
    far = {"endpoint": "https://s3.example.org", "bucket": location.bucket, "zarr_stores": ["fsspec", "obstore"]}
    faraway = {**config, "filesystems": {"cloud": {"path": str(tmp_path / "staging"), "s3": far}}}
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.zarr_stores='obstore'.*http://"):
        load_sweep(faraway, probe=False)
    far["zarr_stores"] = ["fsspec"]
    with pytest.raises(ConfigError, match=r"zarr\.readers='tensorstore'.*filesystems\.cloud\.s3"):
        load_sweep(faraway, probe=False)
    load_sweep({**faraway, "zarr": {"readers": ["zarr-python"]}}, probe=False)
    # HDF5's ROS3 driver: where this h5py has none (the wheels'), refused naming the key; its
    # requests are counted by the relay too, so not on https:// either
    ros3 = {**cloud, "reads": [{"driver": "ros3", "page_buffer": "1 MiB"}]}
    with_ros3 = {**config, "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": ros3}}}
    if not h5py.get_config().ros3:
        with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.reads=.*ros3.*h5py\.get_config\(\)\.ros3"):
            load_sweep(with_ros3, probe=False)
    unsure = {**cloud, "reads": [{"driver": "ros3", "cache_type": "none"}]}
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.reads\[0\]=.*leave them out"):
        load_sweep({**config, "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": unsure}}}, probe=False)
    bad = {**far, "zarr_stores": ["fsspec", "boto"]}
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.zarr_stores"):
        load_sweep({**config, "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": bad}}}, probe=False)
    sweep = load_sweep(
        {
            **config,
            "filesystems": {
                "cloud": {"path": str(tmp_path / "staging"), "s3": {**cloud, "zarr_stores": ["fsspec", "obstore"]}}
            },
        }
    )
    assert sweep.filesystems[0].s3.bucket == location.bucket  # reachable, credentials found
    labels = [option.label for option in sweep.read_options("zarr", sweep.filesystems[0])]
    assert labels == [
        "zarr-python concurrency 10 via fsspec",
        "zarr-python concurrency 10 via obstore",
        "tensorstore via s3",
    ]
    with pytest.raises(ConfigError, match=r"cases\.metadata"):
        load_sweep({**config, "cases": {**config["cases"], "metadata": {}}})
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.read_copies"):
        load_sweep({**config, "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": cloud, "read_copies": 2}}})
    missing = {**config, "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": {**cloud, "bucket": "nobucket"}}}}
    with pytest.raises(ConfigError, match="bucket nobucket does not exist"):
        load_sweep(missing)
    nobody = {
        **config,
        "filesystems": {"cloud": {"path": str(tmp_path / "s"), "s3": {**cloud, "endpoint": "http://127.0.0.1:9"}}},
    }
    with pytest.raises(ConfigError, match=r"cloud\.s3\.endpoint=.*no S3 server answers at http://127\.0\.0\.1:9"):
        load_sweep(nobody)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigError, match="no S3 credentials"):
        load_sweep(config)


@pytest.mark.heavy
def test_hdf5s_ros3_driver_sends_the_requests_of_a_file_object_without_a_cache(tmp_path, s3):
    """Where h5py has HDF5's ROS3 driver (the MPI environment's, built against Debian's HDF5
    1.10.8), h5sweep reads a store with it: every value right, its requests counted by the
    relay and equal to what the server served, each read of HDF5 one ranged GET, so the same
    chunk requests and bytes as an fsspec file object without a cache (config/cloud.yaml's
    stand-in for ROS3 where h5py lacks it), for a paged and an unpaged file."""
    import json
    import os
    import subprocess
    from pathlib import Path

    from h5sweep.cases.parallel.core import mpi_python

    if not mpi_python().exists():
        pytest.skip("no MPI environment (make install-mpi), whose h5py has the ROS3 driver")
    record, location = s3
    script = str(Path(__file__).with_name("ros3_reads.py"))

    # this checkout's h5sweep, whichever the environment was installed from
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}

    def run(step: str) -> subprocess.CompletedProcess:
        where = [record.endpoint, location.bucket, "ros3", str(tmp_path)]
        return subprocess.run([str(mpi_python()), script, step, *where], capture_output=True, text=True, env=env)

    written = run("write")
    if written.returncode == 3:
        pytest.skip(f"{mpi_python()}'s h5py has no ROS3 driver")
    assert written.returncode == 0, written.stderr
    mark = record.mark()
    done = run("read")
    assert done.returncode == 0, done.stderr
    served = record.since(mark)
    rows = {(r["file"], r["read"], tuple(r["start"])): r for r in json.loads(done.stdout)}
    assert len(rows) == 2 * 2 * 2 and sum(r["requests"] for r in rows.values()) == len(served)
    assert all(r["requests"] == r["data_requests"] + r["metadata_requests"] for r in rows.values())
    for (file, how, start), ros3 in rows.items():
        if how != "ros3":
            continue
        assert ros3 | {"read": "fsspec"} == rows[file, "fsspec", start], (file, start)  # request for request
        assert ros3["data_requests"] >= 1 and ros3["bytes_received"] == ros3["bytes_requested"]


def test_the_latency_relay_delays_every_request_the_client_sends_once(s3):
    """Requests through the relay (20 ms) reach the server, each delayed once: as many as
    the client counted, a PUT's body after the server's "100 Continue" not delayed again."""
    from h5sweep.storage.latency import Relay

    record, location = s3
    with Relay(location.endpoint, 20) as relay:
        far = S3Location(relay.endpoint, location.bucket, "relayed")
        log = RequestLog()
        fs = objectstore.client(far, log)
        mark = record.mark()
        for i in range(5):
            fs.pipe_file(far.path(f"k{i}"), b"x" * 10_000)
            assert fs.cat_file(far.path(f"k{i}"), start=100, end=200) == b"x" * 100
        delayed = relay.stop()
    assert delayed == len(log.requests) == len(record.since(mark)) >= 10


def test_a_server_that_resets_its_connection_mid_request_resets_the_clients_through_the_relay():
    """A server that reads a request's header and resets the connection (as a server killed
    under an upload does): the relay resets the client's connection at once instead of
    leaving it open, so that a client waiting for an answer (one whose wait has no bound of its
    own, a PUT waiting for "100 Continue") is not held forever; the request is logged unanswered."""
    import socket
    import struct
    import threading

    from h5sweep.storage.latency import NO_ANSWER, Relay

    listener = socket.create_server(("127.0.0.1", 0))

    def reset_after_the_header() -> None:
        connection, _ = listener.accept()
        received = b""
        while b"\r\n\r\n" not in received:
            received += connection.recv(4096)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()  # with unsent data dropped: a reset

    server = threading.Thread(target=reset_after_the_header, daemon=True)
    server.start()
    with Relay(f"http://127.0.0.1:{listener.getsockname()[1]}", 0) as relay:
        port = int(relay.endpoint.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port), timeout=30)
        client.sendall(b"PUT /b/k HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
        try:
            answer = client.recv(4096)  # the reset, or the end of the connection: no answer
        except ConnectionResetError:
            answer = b""
        client.close()
        relay.stop()
        with open(relay.log_path, encoding="latin-1") as f:
            lines = [line.rstrip("\n").split("\t") for line in f]
    server.join(timeout=10)
    listener.close()
    assert answer == b""
    assert lines == [["PUT", "/b/k", "", str(NO_ANSWER), "", ""]]


def test_the_shipped_cloud_config_measures_each_latency_as_a_filesystem_of_its_own():
    from conftest import REPO, read_config_file

    from h5sweep.sweep.config import validate_schema
    from h5sweep.sweep.model import load_sweep

    config = read_config_file(REPO / "config" / "cloud.yaml")
    validate_schema(config)  # every key as the schema declares it
    sweep = load_sweep(config, probe=False)  # no server needed to plan it
    assert [(fs.name, fs.s3.latency_ms) for fs in sweep.filesystems] == [("cloud_0ms", 0.0), ("cloud_20ms", 20.0)]
    assert len({fs.directory for fs in sweep.filesystems}) == 2
    paged = [tf for tf in sweep.stores() if tf.layout.page_size == 8 * 2**20]
    assert paged and {tf.backend.name for tf in paged} == {"hdf5"}
    for fs in sweep.filesystems:  # HDF5 in both of the filesystem's reads; Zarr as it is
        reads = [(o.read.cache_type, o.read.page_buffer) for o in sweep.read_options("hdf5", fs)]
        assert reads == [("readahead", 0), ("none", 16 * 2**20)]  # s3fs's default; ROS3-like


def test_an_object_stores_reads_are_read_options_of_the_stores_read_as_one_file():
    """``filesystems.<name>.s3.reads``: each HDF5 chunk cache in each read (its label and
    setting name both, a job's settings carry both back), Zarr's and raw's options unchanged,
    a filesystem on a directory untouched; a bad entry refused naming its key."""
    import copy
    from pathlib import Path

    from conftest import read_config_file

    from h5sweep.backends.remote import RemoteOption, option_from_settings
    from h5sweep.storage.filesystems import filesystems_from_config
    from h5sweep.sweep.model import load_sweep

    config = copy.deepcopy(read_config_file(Path(__file__).parent / "configs" / "tiny.yaml"))
    config["backends"] = ["hdf5", "zarr", "raw"]
    config["zarr"] = {"readers": ["zarr-python"]}
    config["chunk_cache"] = [{"bytes": 2**20, "slots": 521, "w0": 0.75}, {"bytes": 2**24, "slots": 8191, "w0": 0.75}]
    reads = [{"block_size": "64 KiB", "cache_type": "none", "page_buffer": "1 MiB"}, {}]
    s3 = {"endpoint": "http://127.0.0.1:9", "bucket": "arrays", "reads": reads}
    config["filesystems"] = {"cloud": {"path": "staging", "s3": s3}, "disk": {"path": "scratch"}}
    config["zarr"] = {"readers": ["zarr-python", "tensorstore"]}
    sweep = load_sweep(config, probe=False)
    cloud, disk = sweep.filesystem("cloud"), sweep.filesystem("disk")
    options = sweep.read_options("hdf5", cloud)
    assert len(options) == 4 and all(isinstance(o, RemoteOption) for o in options)
    assert [o.label for o in options[:2]] == [
        "cache 1 MiB/521/0.75, no fsspec cache, page buffer 1 MiB",
        "cache 1 MiB/521/0.75, 5 MiB readahead blocks",
    ]
    assert "block_size=65536, cache_type='none'" in options[0].setting and "page_buf_size=1048576" in options[0].setting
    assert options[0].columns()["page_buffer_bytes"] == 2**20 and options[0].nbytes == 2**20
    spec = backends.spec("hdf5")
    back = [option_from_settings(o.settings(), spec.option_from_settings) for o in options]
    assert back == options
    assert sweep.read_options("hdf5", disk) == sweep.read_options("hdf5") and len(sweep.read_options("hdf5")) == 2
    assert sweep.read_options("raw", cloud) == sweep.read_options("raw")
    # zarr-python through fsspec (s3.zarr_stores unsaid), tensorstore through its own s3 store
    zarr_options = sweep.read_options("zarr", cloud)
    assert [(o.reader, o.store) for o in zarr_options] == [("zarr-python", "fsspec"), ("tensorstore", "s3")]
    decode = backends.spec("zarr").option_from_settings
    assert [option_from_settings(o.settings(), decode) for o in zarr_options] == zarr_options
    assert zarr_options[0].columns()["zarr_store"] == "fsspec"
    assert sweep.read_options("zarr")[0].columns()["zarr_store"] is None
    for entry, key in [
        ({"cache_type": "lru"}, r"filesystems\.cloud\.s3\.reads\[0\]\.cache_type='lru'"),
        ({"block_size": "5 parsecs"}, r"filesystems\.cloud\.s3\.reads\[0\]\.block_size"),
    ]:
        with pytest.raises(ConfigError, match=key):
            filesystems_from_config({"cloud": {"path": "staging", "s3": {**s3, "reads": [entry]}}}, probe=False)
    # a page buffer holds whole pages: one smaller than a page of layouts.pages holds none
    paged = {**config, "layouts": {**config["layouts"], "pages": ["64 KiB"]}}
    small = [{}, {"block_size": 4096, "cache_type": "none", "page_buffer": "16 KiB"}]
    paged["filesystems"] = {"cloud": {"path": "staging", "s3": {**s3, "reads": small}}}
    with pytest.raises(ConfigError, match=r"filesystems\.cloud\.s3\.reads\[1\]\.page_buffer='16 KiB'.*64 KiB"):
        load_sweep(paged, probe=False)
    paged["filesystems"]["cloud"]["s3"]["reads"][1]["page_buffer"] = "64 KiB"
    assert load_sweep(paged, probe=False).filesystem("cloud").s3_reads[1].page_buffer == 65536
    # a range from an offset to the end, and a suffix range (the last n bytes)
    assert parse_range("bytes=10-") == (10, None) and parse_range("bytes=-16") == (-16, None)
