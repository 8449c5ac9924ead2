"""Measurement windows: timed sections of concurrent jobs never overlap each other or
untimed heavy work; untimed work may overlap untimed work."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from h5sweep import windows


@pytest.fixture(autouse=True)
def own_lock_dir(tmp_path, monkeypatch):
    """Each test its own lock, so a sweep running on this machine is not disturbed."""
    monkeypatch.setenv(windows.LOCK_DIR_ENV, str(tmp_path))


def _worker(kind: str, sections: int, hold_s: float, queue) -> None:
    for _ in range(sections):
        if kind == "timed":
            with windows.timed_window() as window:
                start = time.time()
                time.sleep(hold_s)
                end = time.time()
            queue.put((kind, start, end, window.opened_at, window.closed_at, window.wait_s))
        else:
            with windows.untimed_work():
                start = time.time()
                time.sleep(hold_s)
                end = time.time()
            queue.put((kind, start, end, start, end, 0.0))


def _run(kinds: list[str], sections: int = 4, hold_s: float = 0.02) -> list[tuple]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    procs = [context.Process(target=_worker, args=(k, sections, hold_s, queue)) for k in kinds]
    for p in procs:
        p.start()
    found = [queue.get(timeout=60) for _ in range(sections * len(kinds))]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return found


def _overlap(a: tuple, b: tuple) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_timed_windows_of_concurrent_jobs_never_overlap_anything():
    sections = _run(["timed", "timed", "untimed", "untimed"])
    timed = [s for s in sections if s[0] == "timed"]
    assert len(timed) == 8
    for i, a in enumerate(sections):
        for b in sections[i + 1 :]:
            if "timed" in (a[0], b[0]):
                assert not _overlap(a, b), (a, b)
    for _, start, end, opened, closed, wait in timed:  # the record brackets the section
        assert opened <= start <= end <= closed and wait >= 0


def test_untimed_work_may_run_side_by_side():
    sections = _run(["untimed", "untimed"], sections=3, hold_s=0.3)
    first = [s for s in sections][:6]
    assert any(_overlap(a, b) for i, a in enumerate(first) for b in first[i + 1 :])


def test_a_window_inside_a_section_of_the_same_process_is_refused():
    refused = pytest.raises(RuntimeError, match=r"inside another section \(untimed\)")
    with windows.untimed_work(), refused, windows.timed_window():
        pass
    with windows.untimed_work(), windows.untimed_work():  # untimed work nests
        pass
    with windows.timed_window() as window:
        assert window.load_1min >= 0
    assert window.closed_at >= window.opened_at
