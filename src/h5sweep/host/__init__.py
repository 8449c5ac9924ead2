"""Host tuning for repeatable cold reads: ``python -m h5sweep.host show|tune|reset|run``.

A virtual machine whose balloon reports free pages to its hypervisor (free page reporting)
hands back the memory behind every page that stays free longer than a delay; a cold read,
whose eviction frees pages it then takes again, pays the host's faults whenever a report came
first, so cold reads and writes after a removal fall into two speed modes. Delaying the report
(``min_free_ms``, as root) keeps freed pages with the guest while a sweep runs.

- ``show``: whether this machine reports freed pages, and after how long;
- ``tune``: hold freed pages (:data:`STEADY_DELAY_MS`), noting the delay to restore;
- ``reset``: put back the delay ``tune`` noted;
- ``run COMMAND...`` (``make sweep-held``): tune, run the command, and reset when it ends,
  fails or is stopped.

Nothing on the measuring path imports this module: a measurement only records the delay it
ran under (:func:`h5sweep.measure.provenance.delay_ms`); the plan and the recommendation name
this command where the delay is short.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from h5sweep.measure.lock import lock_dir
from h5sweep.measure.provenance import (
    DELAY_PARAMETER,
    STEADY_DELAY_MS,
    UPSTREAM_DELAY_MS,
    FreePageReporting,
    delay_ms,
    free_page_reporting,
    measured_caveat,
)
from h5sweep.storage import columns as C

__all__ = [
    "DELAY_PARAMETER",
    "STEADY_DELAY_MS",
    "UPSTREAM_DELAY_MS",
    "FreePageReporting",
    "delay_ms",
    "free_page_reporting",
    "main",
    "measured_caveat",
    "plan_warning",
    "reporting_delayed",
    "reset",
    "show",
    "tune",
]


def plan_warning(reporting: FreePageReporting, evictable_filesystems: list[str]) -> str | None:
    """What the plan says where cold reads and writes on ``evictable_filesystems`` would fall
    into two speed modes, or None."""
    if not reporting.short or not evictable_filesystems:
        return None
    fix = (
        "as root, run the sweep with freed pages held: `python -m h5sweep.host run snakemake ...` "
        f"(`make sweep-held`; or `echo {STEADY_DELAY_MS} > {reporting.setting}` for the sweep's duration "
        f"and {reporting.delay_ms} back afterwards)"
        if reporting.setting
        else "run where no balloon reports free pages (this kernel's delay cannot be changed)"
    )
    return (
        "h5sweep: this virtual machine hands memory back to its hypervisor once it has been free for "
        f"{reporting.delay_ms} ms (free page reporting), so cold reads on "
        + ", ".join(evictable_filesystems)
        + " and writes after a removal pay the host for the page cache they fill whenever a report came "
        f"first. For repeatable reads and writes, {fix}."
    )


def held_record() -> Path:
    """Where a holder of the delay notes the value it will restore (node-local memory, like
    the sweep's locks: it is gone after a reboot, as the kernel's setting is)."""
    return Path(lock_dir(), "h5sweep.free-page-reporting-held.json")


def _left_held(record: Path, reporting: FreePageReporting) -> dict | None:
    """The record of a holder that ended without restoring the delay (killed), where the
    machine still has the delay it set; None where there is none, or its holder still runs."""
    try:
        held = json.loads(record.read_text())
        before, during, pid = int(held["before_ms"]), int(held["during_ms"]), int(held["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if during != reporting.delay_ms or held.get("setting") != reporting.setting:
        return None  # the machine was rebooted or set by hand since: the record is stale
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return {"before_ms": before, "pid": pid}
    except PermissionError:
        pass
    return {"before_ms": before, "pid": pid, "running": True}


def tune(delay: int = STEADY_DELAY_MS, sys_root: str = "/sys", record: str | Path | None = None) -> dict:
    """Hold freed pages for ``delay`` ms before they are reported, where this machine reports
    them sooner and the delay can be set (root). ``record`` (default :func:`held_record`) names
    the delay :func:`reset` restores, so that a holder killed before it could restore
    (SIGKILL) is mended by the next one: that one restores the delay the machine had before
    the killed holder changed it. Returns what was done: ``{"before_ms", "during_ms",
    "changed"}``, and ``"left_by_pid"`` where a killed holder's delay was found."""
    record = Path(record) if record is not None else held_record()
    reporting = free_page_reporting(sys_root)
    before = reporting.delay_ms
    state = {"before_ms": before, "during_ms": before, "changed": False}
    left = _left_held(record, reporting) if reporting.setting else None
    if left and left.get("running"):
        state["held_by_pid"] = left["pid"]  # another holder: it restores the delay, not this one
    elif reporting.active and reporting.setting and (before < delay or left):
        if left:
            before = state["before_ms"] = left["before_ms"]
            state["left_by_pid"] = left["pid"]
        try:
            record.write_text(
                json.dumps({"before_ms": before, "during_ms": delay, "pid": os.getpid(), "setting": reporting.setting})
            )
            Path(reporting.setting).write_text(f"{delay}\n")
            state.update(during_ms=delay, changed=True)
        except OSError as err:
            state["error"] = str(err)
            record.unlink(missing_ok=True)
    return state


def reset(record: str | Path | None = None) -> int | None:
    """Put back the delay :func:`tune` noted in ``record``; the delay restored, or None where
    nothing was held."""
    record = Path(record) if record is not None else held_record()
    try:
        held = json.loads(record.read_text())
        before, setting = int(held["before_ms"]), held["setting"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    Path(setting).write_text(f"{before}\n")
    record.unlink(missing_ok=True)
    return before


@contextlib.contextmanager
def reporting_delayed(
    delay: int = STEADY_DELAY_MS, sys_root: str = "/sys", record: str | Path | None = None
) -> Iterator[dict]:
    """:func:`tune` for the duration of the block, then :func:`reset` (only what this holder
    changed)."""
    record = Path(record) if record is not None else held_record()
    state = tune(delay, sys_root, record)
    try:
        yield state
    finally:
        if state["changed"]:
            reset(record)


def _said(state: dict, reporting: FreePageReporting) -> str:
    """What the holder says before it runs the command."""
    if state["changed"]:
        return (
            f"h5sweep: freed pages held for {state['during_ms']} ms while the command runs "
            f"(the machine had {state['before_ms']} ms; put back when it ends)"
        )
    if "held_by_pid" in state:
        return f"h5sweep: freed pages are already held by process {state['held_by_pid']}, which puts them back"
    if "error" in state:
        return f"h5sweep: could not hold freed pages ({state['error']}); as root it can"
    if not reporting.short:
        return "h5sweep: this machine keeps freed memory long enough (no free page reporting sooner): nothing to hold"
    return (
        "h5sweep: this kernel's free page reporting delay cannot be changed: cold reads may fall into two speed modes"
    )


def show(sys_root: str = "/sys") -> str:
    """What ``show`` prints: the machine's free page reporting and whether a sweep needs it held."""
    reporting = free_page_reporting(sys_root)
    if not reporting.active:
        return "free page reporting: off (freed memory stays with this machine): nothing to tune"
    where = reporting.setting or "fixed by the kernel"
    verdict = (
        "short: cold reads may fall into two speed modes; "
        f"`python -m h5sweep.host tune` holds them for {STEADY_DELAY_MS} ms"
        if reporting.short
        else "long enough for repeatable cold reads"
    )
    return f"free page reporting: on, after {reporting.delay_ms} ms ({where}); {verdict}"


def _run(command: list[str], sys_root: str) -> int:
    """Run a command with freed pages held (where that is needed and possible) and return its
    exit status; SIGTERM is passed on to the command, and the delay is put back after it."""
    child: subprocess.Popen | None = None
    stopped: list[int] = []  # a SIGTERM that came before the command started

    def pass_on(signum, frame) -> None:  # the command stops; this process waits for it, then restores
        stopped.append(signum)
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, pass_on)
    signal.signal(signal.SIGINT, lambda signum, frame: None)  # Ctrl-C reaches the command from the terminal
    with reporting_delayed(sys_root=sys_root) as state:
        print(_said(state, free_page_reporting(sys_root)), file=sys.stderr, flush=True)
        if stopped:  # stopped while holding: the command never starts
            return 128 + stopped[0]
        child = subprocess.Popen(command)
        status = child.wait()
    return 128 - status if status < 0 else status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m h5sweep.host",
        description="Show or tune this machine's free page reporting, which makes cold reads on a "
        "virtual machine fall into two speed modes.",
    )
    parser.add_argument("--sys-root", default="/sys", help=argparse.SUPPRESS)  # a copy of sysfs, for tests
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("show", help="whether freed pages go back to the hypervisor, and after how long")
    sub.add_parser("tune", help=f"hold freed pages for {STEADY_DELAY_MS} ms (root)")
    sub.add_parser("reset", help="put back the delay `tune` changed")
    run = sub.add_parser(C.RUN, help="tune, run COMMAND (a sweep), then reset, also when it fails or is stopped")
    run.add_argument("command", nargs=argparse.REMAINDER, help="e.g. snakemake --cores all")
    args = parser.parse_args(argv)
    if args.action == "show":
        print(show(args.sys_root))
        return 0
    if args.action == "tune":
        state = tune(sys_root=args.sys_root)
        print(_said(state, free_page_reporting(args.sys_root)).replace("while the command runs", "until reset"))
        return 1 if "error" in state else 0
    if args.action == "reset":
        restored = reset()
        print(f"free page reporting delay put back to {restored} ms" if restored is not None else "nothing was held")
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run, e.g. snakemake --cores all")
    return _run(command, args.sys_root)
