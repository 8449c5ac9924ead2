"""Measurement windows: timed sections of concurrent jobs never overlap each other or
untimed heavy work; untimed work may overlap untimed work."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import time

import pytest

from h5sweep.measure import lock


@pytest.fixture(autouse=True)
def own_lock_dir(tmp_path, monkeypatch):
    """Each test its own lock, so a sweep running on this machine is not disturbed."""
    monkeypatch.setenv(lock.LOCK_DIR_ENV, str(tmp_path))


def _worker(kind: str, sections: int, hold_s: float, queue) -> None:
    for _ in range(sections):
        if kind == "timed":  # as a job does: untimed work around its timed window
            with lock.untimed_work():
                time.sleep(hold_s / 2)
                with lock.timed_window() as window:
                    start = time.time()
                    time.sleep(hold_s)
                    end = time.time()
                time.sleep(hold_s / 2)
            queue.put((kind, start, end, window.opened_at, window.closed_at, window.wait_s))
        else:
            with lock.untimed_work():
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


def test_windows_do_not_nest_and_give_up_the_jobs_shared_lock_meanwhile():
    nested = pytest.raises(RuntimeError, match="inside another timed window")
    with lock.timed_window(), nested, lock.timed_window():
        pass
    untimed_inside = pytest.raises(RuntimeError, match="untimed work cannot run inside")
    with lock.timed_window(), untimed_inside, lock.untimed_work():
        pass
    with lock.untimed_work(), lock.untimed_work():  # untimed work nests: one shared lock
        assert len(lock._lock_fds) == 1
        with lock.timed_window() as window:  # the shared lock is given up, the window taken
            assert len(lock._lock_fds) == 2 and window.load_1min >= 0
        assert len(lock._lock_fds) == 1  # and taken back
    assert not lock._lock_fds and window.closed_at >= window.opened_at


def _child_waits(queue, done) -> None:
    queue.put(sorted(lock._lock_fds))
    done.wait(30)


def test_a_forked_child_does_not_keep_the_jobs_lock():
    context = multiprocessing.get_context("fork")
    queue, done = context.Queue(), context.Event()
    with lock.untimed_work():
        child = context.Process(target=_child_waits, args=(queue, done))
        child.start()
        assert queue.get(timeout=30) == []  # the child dropped its copy of the shared lock
    try:
        # the parent released it while the child lives: nobody holds the lock now
        fd = os.open(lock._lock_path("measure"), os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
    finally:
        done.set()
        child.join(timeout=30)


def test_a_writes_rest_gives_up_the_jobs_lock_and_is_checked_again_inside_its_window():
    """A timed write's rest for released space (``timed_io``'s ``settle``): what is due is asked
    with the job's shared lock held (no other window can be open while it syncs), rested with
    the lock given up (the window lock is free for another job meanwhile: taken at once from a
    descriptor of its own), and what is left is waited inside the window (where it is not);
    the row adds both waits, and the job holds its shared lock again after."""
    import threading

    from h5sweep.measure import timing

    def window_lock_free() -> bool:
        fd = os.open(lock._lock_path("measure"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    seen = {}

    class Rest:
        def due(self) -> float:
            seen["due"] = (window_lock_free(), lock._in_window)
            threading.Timer(0.15, lambda: seen.setdefault("resting", window_lock_free())).start()
            return 0.4

        def __call__(self) -> float:
            seen["left"] = (window_lock_free(), lock._in_window)
            return 0.0

    with lock.untimed_work():
        with timing.timed_io(settle=Rest()) as timed:
            pass
        assert len(lock._lock_fds) == 1 and lock._shared_fd is not None
    assert seen == {"due": (False, False), "resting": True, "left": (False, True)}
    assert timed.settle_wait_s == 0.4
    inside = pytest.raises(RuntimeError, match="idle time cannot be taken inside a timed window")
    with lock.timed_window(), inside, lock.idle():
        pass
