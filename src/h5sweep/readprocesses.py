"""A query job's reads split over several fresh processes (the config's ``read_processes``).

A process reads faster or slower than another for its whole life: the same selections of the
same files, read in turn by processes started seconds apart, took 3-7% longer in one process
than in another on this project's test machines (a virtual machine of 2 cores), and once 20-25%
longer in one process of five. Every read of a query job is one process's, so two runs of a
sweep differed by their query jobs' factors, on all layouts of a filesystem at once: second run
/ first 1.05 on disk and 1.07 in memory in bench ``vm-20261124-120542``, whose two sweeps took
turns window by window. The intervals, taken over one process's reads, cannot show such a factor.

With ``read_processes: n`` a query job hands its reads to n fresh Python processes, one after
another: process k reads share k of the selections of every case whose every read starts cold
(:func:`share_of`), each from every store (the interleaved protocol is unchanged within a
share), so a median pools n processes' factors. A ``cold: first`` case (the first read a first
access, the rest sustained reading of one open file) stays whole, in process 0. Every row says
which process read it (column ``read_process``). Each process takes the node's measurement
locks itself while the job that started it gives up its own (:func:`h5sweep.windows.handed_over`);
a process that fails or dies fails the job, naming its share.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import traceback

from h5sweep.windows import handed_over, untimed_work


class ReadProcessError(RuntimeError):
    """A read process ended without a result (killed, or crashed in native code)."""


def share_of(repeat: int, copies: int, processes: int) -> int:
    """Which read process reads selection ``repeat`` of a case whose every read starts cold:
    blocks of ``copies`` consecutive selections (one from each read copy, h5sweep.readcopies)
    in turn, so that every process reads every copy."""
    return (repeat // max(1, copies)) % processes


def _function(spec: str):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def run_shares(processes: int, work: str, *args) -> list:
    """``work(*args, share=(k, processes))`` for every share k, each in a fresh process, one
    after another; with one process, in this one. ``work`` is ``"module:function"``; its
    arguments and result are pickled. Returns the results in share order."""
    if processes < 1:
        raise ValueError(f"read_processes must be 1 or more, not {processes}")
    if processes == 1:
        return [_function(work)(*args, share=(0, 1))]
    results = []
    with tempfile.TemporaryDirectory(prefix="h5sweep-read-processes-") as exchange, handed_over():
        for k in range(processes):
            task, result = os.path.join(exchange, f"task-{k}"), os.path.join(exchange, f"result-{k}")
            with open(task, "wb") as f:
                pickle.dump({"work": work, "args": args, "share": (k, processes)}, f)
            results.append(_run_one(task, result, k, processes))
    return results


def _run_one(task: str, result: str, k: int, processes: int):
    sys.stderr.flush()
    try:  # the process writes to the job's log where the job has one
        log = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        log = None
    done = subprocess.run([sys.executable, "-m", "h5sweep.readprocesses", task, result], stderr=log, check=False)
    if not os.path.exists(result):
        raise ReadProcessError(
            f"read process {k} of {processes} ended without a result (exit status {done.returncode}; "
            "negative: killed by that signal)"
        )
    with open(result, "rb") as f:
        outcome, value = pickle.load(f)
    if outcome == "error":
        raise value
    return value


def _main(task_path: str, result_path: str) -> None:
    with open(task_path, "rb") as f:
        task = pickle.load(f)
    try:
        with untimed_work():  # like the job that started it: untimed except in its windows
            outcome = ("ok", _function(task["work"])(*task["args"], share=task["share"]))
    except Exception as err:  # handed back and raised by the job
        traceback.print_exc()
        try:
            pickle.loads(pickle.dumps(err))
        except Exception:
            err = RuntimeError(f"{type(err).__name__}: {err}")
        outcome = ("error", err)
    with open(result_path + ".part", "wb") as f:
        pickle.dump(outcome, f)
    os.replace(result_path + ".part", result_path)


if __name__ == "__main__":
    _main(*sys.argv[1:])
