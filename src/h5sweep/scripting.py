"""Glue for the thin ``workflow/scripts``: logging to the rule's log, clear failures."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import traceback


def _process_start() -> float:
    import psutil

    return psutil.Process().create_time()


@contextlib.contextmanager
def logged(log_path: str):
    """Send the job's messages to its log; on failure, also say why on the console."""
    console = sys.stderr
    with open(log_path, "w", encoding="utf-8") as log:
        sys.stderr = log
        logging.basicConfig(stream=log, level=logging.INFO, format="%(asctime)s %(message)s", force=True)
        try:
            yield logging.getLogger("h5sweep")
            # read by the benchmark that compares job time with the workflow's wall time
            print(f"h5sweep job seconds: {time.time() - _process_start():.3f}", file=log)
        except BaseException as err:
            traceback.print_exc(file=log)
            print(f"h5sweep: {type(err).__name__}: {err}", file=console)
            raise
        finally:
            sys.stderr = console
