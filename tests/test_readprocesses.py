"""A query job's reads shared by fresh processes in turn (h5sweep.readprocesses)."""

import os
import signal
from pathlib import Path

import pytest

from h5sweep.errors import VerificationError
from h5sweep.readprocesses import ReadProcessError, run_shares, share_of
from h5sweep.windows import timed_window, untimed_work

HERE = "test_readprocesses"  # this module, as the read processes import it


@pytest.fixture
def importable_here(monkeypatch):
    """The read processes are new Pythons: they find this module's functions on PYTHONPATH."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))


def who_reads(label, share):
    return {"label": label, "share": share, "pid": os.getpid(), "parent": os.getppid()}


def fails_in_share_one(share):
    if share[0] == 1:
        raise VerificationError("store.h5 case spectra repeat 4: 3 of 12 values differ")
    return share


def dies_in_share_one(share):
    if share[0] == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return share


def opens_a_window(share):
    signal.alarm(60)  # a lock that never came would end this process, not hang the test
    with timed_window() as window:
        pass
    signal.alarm(0)
    return window.opened_at


def test_share_of_hands_blocks_of_copies_to_the_processes_in_turn():
    # 3 copies, 2 processes: selections 0-2 (copies 0, 1, 2) to process 0, 3-5 to process 1 ...
    assert [share_of(r, 3, 2) for r in range(12)] == [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]
    assert [share_of(r, 1, 3) for r in range(6)] == [0, 1, 2, 0, 1, 2]
    assert {share_of(r, 2, 1) for r in range(9)} == {0}


def test_each_share_runs_in_a_fresh_process_one_after_another(importable_here):
    results = run_shares(3, f"{HERE}:who_reads", "spectra")
    assert [r["share"] for r in results] == [(0, 3), (1, 3), (2, 3)]
    assert all(r["label"] == "spectra" for r in results)
    pids = {r["pid"] for r in results}
    assert len(pids) == 3 and os.getpid() not in pids
    assert {r["parent"] for r in results} == {os.getpid()}


def test_one_process_reads_in_the_job_itself():
    (result,) = run_shares(1, f"{HERE}:who_reads", "slice")
    assert result["pid"] == os.getpid() and result["share"] == (0, 1)


def test_a_failing_share_fails_the_job_with_its_own_error(importable_here):
    with pytest.raises(VerificationError, match="store.h5 case spectra repeat 4"):
        run_shares(2, f"{HERE}:fails_in_share_one")


def test_a_process_that_dies_is_named_with_its_share(importable_here):
    with pytest.raises(ReadProcessError, match=r"read process 1 of 2 ended without a result \(exit status -9"):
        run_shares(2, f"{HERE}:dies_in_share_one")
    with pytest.raises(ValueError, match="read_processes must be 1 or more, not 0"):
        run_shares(0, f"{HERE}:who_reads", "x")


def test_a_read_process_opens_timed_windows_while_its_job_holds_untimed_work(importable_here):
    """The job gives up its shared lock while a read process runs; holding it, the process's
    exclusive window would never open."""
    with untimed_work():
        opened = run_shares(2, f"{HERE}:opens_a_window")
    assert len(opened) == 2 and all(t > 0 for t in opened) and opened[0] < opened[1]


def test_a_store_queried_alone_is_read_by_its_read_processes_in_turn(tmp_path):
    """interleave: false, read_processes: 2: the query job of one store hands its reads to two
    fresh processes; the record has every selection once, each read by the process of its
    share, every value checked; a case read from an open file is process 0's."""
    import pandas as pd
    from conftest import tiny_config

    from h5sweep import jobs, stages
    from h5sweep.grid import load_sweep

    config = tiny_config(tmp_path, read_processes=2)
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["cases"] = {
        "spectra": {"repeats": 5, "size": 3, "cold": "every"},
        "subcube": {"repeats": 3, "cold": "first"},
    }
    sweep = load_sweep(config)
    store = next(tf for tf in sweep.test_files() if tf.layout.chunk_shape is not None)
    fs, names = store.filesystem, (store.backend.name, store.layout.id, store.compression.name)
    path = str(tmp_path / "store.h5")
    stages.run_generate(jobs.generate_settings(sweep, fs, *names), path, str(tmp_path / "generate.parquet"))
    stages.run_query(jobs.query_settings(sweep, fs, *names), path, str(tmp_path / "query.parquet"))
    reads = pd.read_parquet(tmp_path / "query.parquet")
    spectra, subcube = reads[reads["case"] == "spectra"], reads[reads["case"] == "subcube"]
    assert sorted(spectra["repeat"]) == list(range(5))
    assert dict(zip(spectra["repeat"], spectra["read_process"], strict=True)) == {0: 0, 1: 1, 2: 0, 3: 1, 4: 0}
    assert list(subcube["repeat"]) == [0, 1, 2] and set(subcube["read_process"]) == {0}
    assert set(spectra["cache_state"]) == {"cold"}
