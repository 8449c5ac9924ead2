"""Released space: timed writes wait for the filesystem's rest after the sweep removed files,
and the write case keeps a variant's repeats so that none reuses the blocks of the one before."""

import os
import time
from pathlib import Path

import numpy as np
import pytest

from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.cases import WriteCase
from h5sweep.cases.write.run import generate
from h5sweep.measure import lock, settle
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.filesystems import filesystems_from_config, mount_info
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.settings import JobSettings

# Whether a write waits depends on the device's free space, which grows whenever any other
# test removes files from the same disk: these run alone (make test's serial phase).
pytestmark = pytest.mark.serial


@pytest.fixture(autouse=True)
def own_lock_dir(tmp_path, monkeypatch):
    """The marker lives beside the window locks: a directory of this test's own."""
    locks = tmp_path / "locks"
    locks.mkdir()
    monkeypatch.setenv(lock.LOCK_DIR_ENV, str(locks))


def test_a_removal_is_dated_and_a_write_after_it_waits_for_the_rest(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "chunk").write_bytes(b"x")
    old = tmp_path / "old.h5"
    old.write_bytes(b"y")
    assert settle.settle(str(tmp_path), 5.0) == 0  # nothing released yet
    settle.remove_and_mark([str(old), str(store), str(tmp_path / "never-written")], str(tmp_path))
    assert not old.exists() and not store.exists()
    marker = Path(settle.marker_path(str(tmp_path)))
    released_at, _ = marker.read_text().split()
    assert abs(float(released_at) - time.time()) < 60
    assert settle.settle(str(tmp_path), 0) == 0  # no rest configured: no wait
    waited = settle.settle(str(tmp_path), 0.2)
    assert 0 < waited <= 0.2
    _, free = marker.read_text().split()
    marker.write_text(f"{time.time() - 60} {free}\n")  # a removal a minute ago
    assert settle.settle(str(tmp_path), 5.0) == 0
    before = marker.read_text()
    settle.remove_and_mark([str(tmp_path / "absent")], str(tmp_path))  # nothing removed: not dated
    assert marker.read_text() == before


def test_space_released_by_others_counts_as_a_release(tmp_path):
    """Snakemake removing a temporary store does not date it: the grown free space does."""
    big = tmp_path / "other.bin"
    big.write_bytes(np.ones(3 * settle.UNSEEN_RELEASE_BYTES // 8, dtype=np.float64).tobytes())
    os.sync()
    assert settle.settle(str(tmp_path), 0.2) == 0  # first look: free bytes noted, nothing released
    os.remove(big)  # not through remove_and_mark
    assert 0 < settle.settle(str(tmp_path), 0.2) <= 0.2
    # the release is dated now, so a later look without one finds the rest already over
    marker = Path(settle.marker_path(str(tmp_path)))
    _, free = marker.read_text().split()
    marker.write_text(f"{time.time() - 60} {free}\n")
    assert settle.settle(str(tmp_path), 0.2) == 0


def test_the_rest_by_default_follows_the_discard_mount_option(tmp_path):
    discards = "discard" in mount_info(str(tmp_path)).options.split(",")
    assert settle.default_settle_s(str(tmp_path)) == (settle.DISCARD_SETTLE_S if discards else 0.0)
    if os.path.isdir("/dev/shm") and mount_info("/dev/shm").fs_type == "tmpfs":
        assert settle.default_settle_s("/dev/shm") == 0.0


def test_a_filesystem_may_set_its_rest_and_a_job_receives_it(tmp_path):
    entries = {"disk": {"path": str(tmp_path / "a"), "settle_s": 0.5}, "other": str(tmp_path / "b")}
    disk, other = filesystems_from_config(entries)
    assert (disk.settle_s, other.settle_s) == (0.5, None)
    assert settle.settle_seconds(disk) == 0.5
    assert settle.settle_seconds(other) == settle.default_settle_s(str(tmp_path))
    job = JobSettings.__new__(JobSettings)
    job.settings = {"filesystem": {"name": "other", "directory": str(tmp_path / "b"), "settle_s": None}}
    assert job.settle_s == settle.default_settle_s(str(tmp_path))
    job.settings["filesystem"]["settle_s"] = 0
    assert job.settle_s == 0.0
    for bad in (-1, "long", True):
        with pytest.raises(ConfigError, match=r"filesystems\.disk\.settle_s"):
            filesystems_from_config({"disk": {"path": str(tmp_path / "a"), "settle_s": bad}})


def test_write_repeats_are_kept_until_the_last_so_only_a_variants_first_write_waits(tmp_path):
    data = SyntheticSource((8, 8, 600), np.uint16, seed=3).materialize()
    directory = tmp_path / "fs"
    directory.mkdir()
    (directory / "earlier.h5").write_bytes(b"z")
    settle.remove_and_mark([str(directory / "earlier.h5")], str(directory))  # as another job would
    case = WriteCase({"repeats": 3, "strategies": ["chunk", "block"]})
    path = str(directory / "store.h5")
    rows = generate(HDF5, path, data, Layout((4, 4, 100)), parse_compression("none"), case, settle_s=0.3)
    waits = [(r["write_strategy"], r["repeat"], r["settle_wait_s"] > 0) for r in rows]
    # the first write waits for the other job's removal, the second variant's first write for
    # the removal of the first variant's repeats; no repeat follows a removal
    assert waits == [
        ("chunk", 0, True),
        ("chunk", 1, False),
        ("chunk", 2, False),
        ("block", 0, True),
        ("block", 1, False),
        ("block", 2, False),
    ]
    # only the first writes wait (how long is settle.settle's own test); the others not at all
    assert [r["settle_wait_s"] for r in rows if r["repeat"] > 0] == [0.0] * 4
    assert sorted(os.listdir(directory)) == ["store.h5"]  # the kept repeats are gone
    assert {r["query_file_method"] for r in rows} == {"write-case"}
