"""Storage whose device reads the kernel cannot count: a real FUSE mount (bindfs over a
directory of the disk). Its reads go past the block layer, so ``/proc/self/io`` shows no
device bytes even for a first access after eviction: each is recorded ``unverified``, never
``warm`` or ``cold``, and the plan and the recommendation say so."""

import os
import shutil
import subprocess

import pandas as pd
import pytest
from conftest import Workflow, tiny_config

from h5sweep.storage.filesystems import device_reads_counted, mount_info

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(
        shutil.which("bindfs") is None or not os.path.exists("/dev/fuse") or os.geteuid() != 0,
        reason="needs bindfs, /dev/fuse and root (.ci/run installs bindfs)",
    ),
]


@pytest.fixture
def fuse_mount(tmp_path):
    source, mount = tmp_path / "source", tmp_path / "mount"
    source.mkdir()
    mount.mkdir()
    subprocess.run(["bindfs", "--no-allow-other", str(source), str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_reads_on_a_fuse_mount_are_recorded_unverified_and_said_so(fuse_mount, tmp_path):
    assert mount_info(str(fuse_mount)).fs_type.startswith("fuse")
    assert not device_reads_counted(str(fuse_mount))
    config = tiny_config(tmp_path / "sweep", sweep="fuse")
    config["filesystems"] = {"fuse": str(fuse_mount / "stores")}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [512]}}
    config["compression"] = ["none"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 4}, "spectra": {"repeats": 4}}
    wf = Workflow(tmp_path / "wf")
    path = wf.write_config(config)
    dry = wf.run("-n", "--configfile", str(path), check=True)
    assert "fuse (a network filesystem or a FUSE mount): their reads are recorded as unverified" in (
        dry.stdout + dry.stderr
    ).replace("\n", " ")
    wf.run("--cores", "2", "--configfile", str(path), check=True)
    results = wf.root / "results" / "fuse"
    reads = pd.read_parquet(results / "measurements.parquet")
    reads = reads[reads["case"].isin(["slice", "spectra"])]
    assert len(reads) == 2 * 2 * 4 and set(reads["cache_state"]) == {"unverified"}
    assert (reads["resident_fraction_at_open"] >= 0).all()  # the reads ran, evicted before each
    assert "The reads ranked on fuse are unverified" in (results / "recommendation.md").read_text()
