"""Free page reporting: read from a sysfs tree laid out as the kernel lays it out (a copy
under tmp_path, since the real one's answer depends on the machine), and from the real one."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from h5sweep import host
from h5sweep.host import STEADY_DELAY_MS, free_page_reporting, plan_warning, reporting_delayed

BALLOON_REPORTING = "01100101" + "0" * 56  # bits 1, 2, 5 (reporting) and 7, as a balloon here shows them
BALLOON_NO_REPORTING = "01100001" + "0" * 56


def sysfs(root: Path, devices: dict[str, tuple[str, str]], delay_ms: str | None = None) -> str:
    for name, (kind, features) in devices.items():
        device = root / "bus" / "virtio" / "devices" / name
        device.mkdir(parents=True)
        (device / "device").write_text(kind + "\n")
        (device / "features").write_text(features + "\n")
    if delay_ms is not None:
        parameter = root / host.DELAY_PARAMETER
        parameter.parent.mkdir(parents=True)
        parameter.write_text(delay_ms + "\n")
    return str(root)


def test_a_reporting_balloon_is_found_by_its_feature_bit(tmp_path):
    network = ("0x0001", "1" * 64)  # every bit set, but not a balloon
    root = sysfs(tmp_path / "a", {"virtio0": ("0x0005", BALLOON_REPORTING), "virtio1": network}, "0")
    assert free_page_reporting(root) == host.FreePageReporting(True, 0, f"{root}/{host.DELAY_PARAMETER}")
    assert free_page_reporting(root).short
    # a balloon without the reporting feature, or only other devices: nothing goes back
    quiet = sysfs(tmp_path / "b", {"virtio0": ("0x0005", BALLOON_NO_REPORTING), "virtio1": network}, "0")
    assert free_page_reporting(quiet) == host.FreePageReporting(False, -1, None)
    assert not free_page_reporting(quiet).short
    assert free_page_reporting(str(tmp_path / "no-sysfs")).delay_ms == -1


def test_a_kernel_without_the_delay_setting_reports_after_two_seconds(tmp_path):
    root = sysfs(tmp_path, {"virtio0": ("0x0005", BALLOON_REPORTING)})
    reporting = free_page_reporting(root)
    assert (reporting.delay_ms, reporting.setting, reporting.short) == (2000, None, True)
    assert "cannot be changed" in plan_warning(reporting, ["disk"])


def test_the_plan_warns_only_for_filesystems_read_from_a_device(tmp_path):
    root = sysfs(tmp_path / "a", {"virtio0": ("0x0005", BALLOON_REPORTING)}, "0")
    warning = plan_warning(free_page_reporting(root), ["disk", "scratch"])
    assert "disk, scratch" in warning and f"echo {STEADY_DELAY_MS} > {root}/{host.DELAY_PARAMETER}" in warning
    assert plan_warning(free_page_reporting(root), []) is None  # tmpfs only: nothing is evicted
    held = sysfs(tmp_path / "b", {"virtio0": ("0x0005", BALLOON_REPORTING)}, str(STEADY_DELAY_MS))
    assert plan_warning(free_page_reporting(held), ["disk"]) is None


def test_the_bench_holds_freed_pages_and_restores_the_delay(tmp_path):
    root = sysfs(tmp_path, {"virtio0": ("0x0005", BALLOON_REPORTING)}, "0")
    parameter = Path(root, host.DELAY_PARAMETER)
    record = tmp_path / "held.json"
    with reporting_delayed(sys_root=root, record=record) as state:
        assert parameter.read_text().strip() == str(STEADY_DELAY_MS)
        assert state == {"before_ms": 0, "during_ms": STEADY_DELAY_MS, "changed": True}
        assert json.loads(record.read_text())["before_ms"] == 0
    assert parameter.read_text().strip() == "0" and not record.exists()
    # already long enough, or not writable: left as it is
    parameter.write_text("200000\n")
    with reporting_delayed(sys_root=root, record=record) as state:
        assert not state["changed"]
    parameter.write_text("0\n")
    parameter.chmod(0o444)
    parameter.parent.chmod(0o555)
    try:
        with reporting_delayed(sys_root=root, record=record) as state:
            writable = state["changed"]  # root may write anyway
        assert parameter.read_text().strip() == "0"
        assert writable or "error" in state
    finally:
        parameter.parent.chmod(0o755)
        parameter.chmod(0o644)


HOLD_AND_WAIT = """
import sys, time
from h5sweep.host import reporting_delayed
with reporting_delayed(sys_root=sys.argv[1], record=sys.argv[2]) as state:
    print(state["changed"], flush=True)
    time.sleep(600)
"""


def test_a_holder_killed_before_it_restored_is_mended_by_the_next(tmp_path):
    root = sysfs(tmp_path, {"virtio0": ("0x0005", BALLOON_REPORTING)}, "1500")
    parameter = Path(root, host.DELAY_PARAMETER)
    record = tmp_path / "held.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_WAIT, root, str(record)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "True"
        # while it runs, a second holder leaves the delay to it
        with reporting_delayed(sys_root=root, record=record) as state:
            assert not state["changed"] and state["held_by_pid"] == holder.pid
        assert parameter.read_text().strip() == str(STEADY_DELAY_MS)
    finally:
        holder.send_signal(signal.SIGKILL)  # no `finally` runs: the delay stays held
        holder.wait()
    assert parameter.read_text().strip() == str(STEADY_DELAY_MS) and record.exists()
    with reporting_delayed(sys_root=root, record=record) as state:
        assert state["changed"] and state["left_by_pid"] == holder.pid and state["before_ms"] == 1500
    assert parameter.read_text().strip() == "1500" and not record.exists()
    # a record the machine no longer matches (rebooted, or set by hand since) is ignored
    record.write_text(json.dumps({"before_ms": 7, "during_ms": STEADY_DELAY_MS, "pid": holder.pid, "setting": root}))
    with reporting_delayed(sys_root=root, record=record) as state:
        assert state["before_ms"] == 1500
    assert parameter.read_text().strip() == "1500"


def test_on_this_machine_the_delay_is_held_and_restored(machine_delay):
    before = free_page_reporting()
    assert host.delay_ms() == before.delay_ms and (before.delay_ms == -1) == (not before.active)
    with reporting_delayed() as state:
        during = free_page_reporting().delay_ms
    assert free_page_reporting() == before
    if state["changed"]:  # a reporting balloon, a delay to set, and root
        assert during == STEADY_DELAY_MS > before.delay_ms
    else:
        assert during == before.delay_ms


WAIT_STOPPED = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(7))  # a sweep stopping cleanly
print(open(sys.argv[1]).read().strip(), flush=True)
time.sleep(600)
"""


def test_a_command_run_with_freed_pages_held_sees_them_held_and_the_machine_gets_its_delay_back(tmp_path):
    """`python -m h5sweep.host COMMAND`: a real command run under the holder, with a
    copy of sysfs; its exit status is the command's, also when the holder is stopped."""
    root = sysfs(tmp_path / "sys", {"virtio0": ("0x0005", BALLOON_REPORTING)}, "0")
    parameter = Path(root, host.DELAY_PARAMETER)
    env = {**os.environ, "H5SWEEP_LOCK_DIR": str(tmp_path)}  # the holder's record goes there
    holder = [sys.executable, "-m", "h5sweep.host", "--sys-root", root, "run", "--"]
    seen = "import sys; print(open(sys.argv[1]).read().strip()); sys.exit(3)"
    done = subprocess.run(
        [*holder, sys.executable, "-c", seen, str(parameter)], env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout.strip()) == (3, str(STEADY_DELAY_MS))
    assert "held for 100000 ms" in done.stderr and parameter.read_text().strip() == "0"
    assert list(tmp_path.glob("*.json")) == []
    # stopped (SIGTERM, as a batch system's time limit stops it): passed on, then put back
    running = subprocess.Popen(
        [*holder, sys.executable, "-c", WAIT_STOPPED, str(parameter)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert running.stdout.readline().strip() == str(STEADY_DELAY_MS)
        running.send_signal(signal.SIGTERM)
        assert running.wait(timeout=60) == 7
    finally:
        running.kill()
    assert parameter.read_text().strip() == "0"
    # nothing to hold: the command runs all the same, and the holder says why
    quiet = sysfs(tmp_path / "quiet", {"virtio0": ("0x0005", BALLOON_NO_REPORTING)}, "0")
    done = subprocess.run(
        [sys.executable, "-m", "h5sweep.host", "--sys-root", quiet, "run", "true"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "nothing to hold" in done.stderr


def test_show_tune_and_reset_as_separate_commands(tmp_path):
    """`python -m h5sweep.host show|tune|reset` on a copy of sysfs: tune holds the pages and
    notes the delay, reset puts that delay back and forgets the note."""
    root = sysfs(tmp_path / "sys", {"virtio0": ("0x0005", BALLOON_REPORTING)}, "0")
    parameter = Path(root, host.DELAY_PARAMETER)
    env = {**os.environ, "H5SWEEP_LOCK_DIR": str(tmp_path)}

    def command(*words):
        return subprocess.run(
            [sys.executable, "-m", "h5sweep.host", "--sys-root", root, *words], env=env, capture_output=True, text=True
        )

    shown = command("show")
    assert shown.returncode == 0 and "after 0 ms" in shown.stdout and "short" in shown.stdout
    assert command("tune").returncode == 0
    assert parameter.read_text().strip() == str(STEADY_DELAY_MS)
    assert "long enough" in command("show").stdout
    assert len(list(tmp_path.glob("*.json"))) == 1
    reset = command("reset")
    assert reset.returncode == 0 and "put back to 0 ms" in reset.stdout
    assert parameter.read_text().strip() == "0" and list(tmp_path.glob("*.json")) == []
    assert "nothing was held" in command("reset").stdout
    quiet = sysfs(tmp_path / "quiet", {"virtio0": ("0x0005", BALLOON_NO_REPORTING)}, "0")
    shown = subprocess.run(
        [sys.executable, "-m", "h5sweep.host", "--sys-root", quiet, "show"], env=env, capture_output=True, text=True
    )
    assert "nothing to tune" in shown.stdout
