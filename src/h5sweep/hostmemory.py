"""Whether this machine hands memory it frees back to a hypervisor (free page reporting).

A virtual machine whose balloon device reports free pages gives the host the memory behind
every page that stays free for a while; the next use of such a page waits for the host to
supply it again. Evicting a file frees its page-cache pages, so a cold read that starts
after they were reported pays the host's faults on top of the device's transfer. On the
reference machine (2 cores, a virtio balloon that reports), an 82 MB file read cold took
0.04 s when its evicted pages had not been reported yet and 0.10–0.17 s when they had
(reports came within about 2 s of the eviction); with the report delayed to 100 s, every
read took 0.04 s. Cold reads then fall into two speed modes that the guest's own
counters (device bytes, page faults) cannot tell apart. Writes too: removing a file frees its
page cache, and a 1 GB write with ``fsync`` that followed the removal at once took 0.49-0.71 s,
after 3 s 1.58-1.77 s, after 10 s 2.71-3.11 s; with the report delayed, 0.46-0.63 s after any
of these rests (what earlier runs had put down to the disk releasing space, h5sweep.release).

The kernel reports a freed page only after it has stayed free for a delay: 2 s upstream
(``PAGE_REPORTING_DELAY``), or the ``min_free_ms`` parameter where the kernel has one.
:func:`free_page_reporting` says which applies; every measurement row records the delay
(``free_page_reporting_ms``), and the plan warns where it is shorter than a sweep's reads.

``python -m h5sweep.hostmemory COMMAND...`` (``make sweep-held``) runs a command, a sweep,
with freed pages held (:func:`reporting_delayed`) and puts the machine's delay back when the
command ends, fails or is stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from h5sweep.windows import lock_dir

VIRTIO_BALLOON_DEVICE = 0x0005
VIRTIO_BALLOON_F_REPORTING = 5  # feature bit: the balloon reports free pages
UPSTREAM_DELAY_MS = 2000  # mm/page_reporting.c reports pages free for 2 s
DELAY_PARAMETER = "module/page_reporting/parameters/min_free_ms"
# long enough that the pages a cold read's eviction frees are still the guest's when the
# read that follows allocates page cache again (a sweep reads within milliseconds)
STEADY_DELAY_MS = 100_000


@dataclass(frozen=True)
class FreePageReporting:
    active: bool  # a balloon device reports freed pages to the hypervisor
    delay_ms: int  # how long a page stays free before it is reported; -1 when not active
    setting: str | None  # the file that sets the delay, where the kernel has one

    @property
    def short(self) -> bool:
        """Freed pages go back to the host sooner than the memory of a sweep's evicted files
        is used again (so cold reads fall into two speed modes)."""
        return self.active and self.delay_ms < STEADY_DELAY_MS


def free_page_reporting(sys_root: str = "/sys") -> FreePageReporting:
    """Whether a virtio balloon reports freed pages on this machine, and after how long."""
    if not any(_reports(device) for device in _virtio_devices(sys_root)):
        return FreePageReporting(active=False, delay_ms=-1, setting=None)
    setting = Path(sys_root, DELAY_PARAMETER)
    try:
        return FreePageReporting(True, int(setting.read_text().strip()), str(setting))
    except (OSError, ValueError):
        return FreePageReporting(True, UPSTREAM_DELAY_MS, None)


def delay_ms() -> int:
    """The provenance column ``free_page_reporting_ms``: the delay, or -1 where freed
    memory stays with this machine."""
    return free_page_reporting().delay_ms


def plan_warning(reporting: FreePageReporting, evictable_filesystems: list[str]) -> str | None:
    """What the plan says where cold reads and writes on ``evictable_filesystems`` would fall
    into two speed modes, or None."""
    if not reporting.short or not evictable_filesystems:
        return None
    fix = (
        "as root, run the sweep with freed pages held: `python -m h5sweep.hostmemory snakemake ...` "
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
        "first: the same cold read took 0.04 s or 0.10-0.17 s on the reference machine, the same 1 GB "
        f"write 0.5 s or 1.6-3.1 s. For repeatable reads and writes, {fix}."
    )


def measured_caveat(cold_reads: Iterable[tuple[str, str, int]]) -> str | None:
    """What a result says where its cold reads were measured while freed pages went back to
    the hypervisor sooner than a sweep's reads use them again, or None. ``cold_reads``:
    (filesystem, host, ``free_page_reporting_ms``) of each read that fetched from the device,
    as the node that measured it recorded (under SLURM not the host that planned the sweep)."""
    short: dict[str, set[str]] = {}
    for filesystem, host, delay in cold_reads:
        if 0 <= delay < STEADY_DELAY_MS:
            short.setdefault(filesystem, set()).add(f"{host} ({delay} ms)")
    if not short:
        return None
    where = "; ".join(f"{fs} on {', '.join(sorted(hosts))}" for fs, hosts in sorted(short.items()))
    return (
        "Caveat: cold reads were measured on a virtual machine that hands memory back to its hypervisor "
        f"soon after it is freed (free page reporting: {where}). Such reads fall into two speed modes that "
        "the rows cannot tell apart (the same cold read took 0.04 s or 0.10-0.17 s on the reference machine), "
        "so close rankings may not reproduce. Measure again with freed pages held: as root, "
        "`python -m h5sweep.hostmemory snakemake ...` (`make sweep-held`; README)."
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


@contextlib.contextmanager
def reporting_delayed(
    delay: int = STEADY_DELAY_MS, sys_root: str = "/sys", record: str | Path | None = None
) -> Iterator[dict]:
    """Hold freed pages for ``delay`` ms before they are reported, where this machine reports
    them sooner and the delay can be set (root); the previous delay is restored on exit.

    While it holds, ``record`` (default :func:`held_record`) names the delay to restore, so
    that a holder killed before it could restore (SIGKILL) is mended by the next one: that one
    restores the delay the machine had before the killed holder changed it.
    Yields what was done: ``{"before_ms", "during_ms", "changed"}``, and ``"left_by_pid"``
    where a killed holder's delay was found."""
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
    try:
        yield state
    finally:
        if state["changed"]:
            Path(reporting.setting).write_text(f"{before}\n")
            record.unlink(missing_ok=True)


def _virtio_devices(sys_root: str) -> list[Path]:
    root = Path(sys_root, "bus", "virtio", "devices")
    try:
        return sorted(root.iterdir())
    except OSError:
        return []


def _reports(device: Path) -> bool:
    try:
        kind = int((device / "device").read_text().strip(), 16)
        features = (device / "features").read_text().strip()
    except (OSError, ValueError):
        return False
    bit = VIRTIO_BALLOON_F_REPORTING
    return kind == VIRTIO_BALLOON_DEVICE and len(features) > bit and features[bit] == "1"


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


def main(argv: list[str] | None = None) -> int:
    """Run a command with freed pages held (where that is needed and possible) and return its
    exit status; SIGTERM is passed on to the command, and the delay is put back after it."""
    parser = argparse.ArgumentParser(
        prog="python -m h5sweep.hostmemory",
        description="Run COMMAND (a sweep) with this machine's freed pages held for "
        f"{STEADY_DELAY_MS} ms, and put the machine's delay back when it ends or is stopped.",
    )
    parser.add_argument("--sys-root", default="/sys", help=argparse.SUPPRESS)  # a copy of sysfs, for tests
    parser.add_argument("command", nargs=argparse.REMAINDER, help="e.g. snakemake --cores all")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run, e.g. snakemake --cores all")
    child: subprocess.Popen | None = None
    stopped: list[int] = []  # a SIGTERM that came before the command started

    def pass_on(signum, frame) -> None:  # the command stops; this process waits for it, then restores
        stopped.append(signum)
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, pass_on)
    signal.signal(signal.SIGINT, lambda signum, frame: None)  # Ctrl-C reaches the command from the terminal
    with reporting_delayed(sys_root=args.sys_root) as state:
        print(_said(state, free_page_reporting(args.sys_root)), file=sys.stderr, flush=True)
        if stopped:  # stopped while holding: the command never starts
            return 128 + stopped[0]
        child = subprocess.Popen(command)
        status = child.wait()
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())
