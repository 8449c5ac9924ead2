"""Glue for the thin ``workflow/scripts``: logging to the rule's log, clear failures."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback

from h5sweep.measure.lock import untimed_work


def process_age_s() -> float:
    """Seconds since this process started, from the kernel's own clock ticks (psutil's
    create_time is anchored to a boot time rounded to whole seconds)."""
    with open("/proc/self/stat", encoding="ascii") as f:
        started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime", encoding="ascii") as f:
        uptime = float(f.read().split()[0])
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


_logged_s = 0.0  # seconds of this process the logs written so far have counted


@contextlib.contextmanager
def logged(log_path: str):
    """Send the job's messages to its log; on failure, also say why on the console.

    The whole job is untimed work of the node (:mod:`h5sweep.measure.lock`): it holds the
    measurement lock shared, except inside its own timed windows, so importing the
    packages, making data and writing records never overlap another job's timed read.
    Scripts import the heavy modules inside this block. A job of several stages (one log
    each, one block each) says in each log the seconds since the previous block ended, so
    that its logs' seconds add up to the job's."""
    global _logged_s
    console = sys.stderr
    with untimed_work(), open(log_path, "w", encoding="utf-8") as log:
        sys.stderr = log
        logging.basicConfig(stream=log, level=logging.INFO, format="%(asctime)s %(message)s", force=True)
        try:
            yield logging.getLogger("h5sweep")
            # read by the benchmark that compares job time with the workflow's wall time
            age = process_age_s()
            print(f"h5sweep job seconds: {age - _logged_s:.3f}", file=log)
            _logged_s = age
        except BaseException as err:
            traceback.print_exc(file=log)
            print(f"h5sweep: {type(err).__name__}: {err}", file=console)
            raise
        finally:
            sys.stderr = console
