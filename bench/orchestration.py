"""Goals 3 to 5: the DAG of a large grid, the default sweep's timed windows and disk against its
wall time and plan, the sweeps side by side, and the plan against what runs measure."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import SAMPLES, spread


def snakemake_cmd() -> list[str]:
    return [str(Path(sys.executable).parent / "snakemake")]


def bench_dag(repo: Path, samples: int = SAMPLES) -> dict:
    ratios = []
    for _ in range(samples):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [*snakemake_cmd(), "-n", "-q", "--configfile", "bench/grid.yaml"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        ratios.append((time.perf_counter() - t0) / 15.0)
    return {"samples": samples, "ratio_dry_run_vs_15s": spread(ratios)}


def _du(paths: list[Path]) -> int:
    total = 0
    for root in paths:
        for dirpath, _, files in os.walk(root):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.stat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def _copy_of_the_workflow(repo: Path, workdir: Path, config: Path, name: str) -> dict[str, Path]:
    """A fresh copy of the workflow in ``workdir`` whose sweep is called ``name``, with every
    filesystem's directory of its own; returns those directories."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    for part in ["Snakefile", "rules", "workflow", "config", "profiles"]:
        src = repo / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, workdir / part)
    import yaml

    cfg = yaml.safe_load(config.read_text())
    cfg["sweep"] = name
    fs_dirs: dict[str, Path] = {}
    for fs_name, entry in list(cfg["filesystems"].items()):
        path = entry if isinstance(entry, str) else entry["path"]
        path = str(workdir / path) if not os.path.isabs(path) else f"{path}-{name}"
        cfg["filesystems"][fs_name] = path if isinstance(entry, str) else {**entry, "path": path}
        fs_dirs[fs_name] = Path(path)
    (workdir / "bench.yaml").write_text(yaml.safe_dump(cfg))
    return fs_dirs


def bench_sweep(repo: Path, workdir: Path, config: Path, cores: int, name: str = "bench") -> dict:
    """Run a sweep for real in a copy of the workflow; job time, wall time, peak disk, and its
    measurement windows. Keeps the summary and measurements for the reproducibility goal."""
    return bench_sweeps_side_by_side(repo, [(workdir, name)], config, cores)[0]


def bench_sweeps_side_by_side(repo: Path, runs: list[tuple[Path, str]], config: Path, cores: int) -> list[dict]:
    """Run several sweeps at once, each in its own copy of the workflow (``runs``: its
    directory and sweep name), each Snakemake with ``cores``; per sweep, what
    :func:`bench_sweep` gives. Their timed windows share the node's lock, so they take turns:
    every timed window of one sweep is as quiet as if it ran alone, and the sweeps meet the
    machine in the same minutes."""
    dirs = [_copy_of_the_workflow(repo, workdir, config, name) for workdir, name in runs]
    peaks = [dict.fromkeys(fs_dirs, 0) for fs_dirs in dirs]  # per filesystem: the plan bounds each
    done = threading.Event()

    def watch():
        while not done.is_set():
            for fs_dirs, peak in zip(dirs, peaks, strict=True):
                for fs_name, directory in fs_dirs.items():
                    peak[fs_name] = max(peak[fs_name], _du([directory]))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    launched = []  # per sweep: its process, and when it started (clock, epoch)
    for workdir, _ in runs:
        t0, started_at = time.perf_counter(), time.time()
        proc = subprocess.Popen(
            [*snakemake_cmd(), "--cores", str(cores), "--configfile", "bench.yaml"],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        launched.append((proc, t0, started_at))
    finished = []  # per sweep: wall time and output (both streams)
    for proc, t0, _ in launched:
        output, _ = proc.communicate()
        finished.append((time.perf_counter() - t0, output))
    done.set()
    watcher.join()
    for (proc, _, _), (_, output), (workdir, _) in zip(launched, finished, runs, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"{workdir}: {output[-6000:]}")
    return [
        _sweep_figures(workdir / "results" / name, fs_dirs, peak, started_at, wall, output, cores)
        for (workdir, name), fs_dirs, peak, (_, _, started_at), (wall, output) in zip(
            runs, dirs, peaks, launched, finished, strict=True
        )
    ]


# The configs whose plan the bench checks beside the default sweep's: a test config that writes
# in every strategy and fill time (the write pricing), one that reads in every policy, chunk
# cache and cold mode (the read pricing), and a study config as shipped (the User's Guide
# chapter's rows and columns, read cold); all small, so per-job costs weigh most.
PLAN_CONFIGS = (
    "tests/configs/write-variants.yaml",
    "tests/configs/read-variants.yaml",
    "config/studies/users-guide/subsetting.yaml",
)


def planned(workdir: Path, cores: int) -> dict:
    """What the plan a dry run prints says of the sweep in ``workdir`` (its ``bench.yaml``),
    with ``cores`` jobs at once."""
    import yaml

    from h5sweep.sweep.model import load_sweep
    from h5sweep.sweep.plan import make_plan

    with contextlib.chdir(workdir):
        the_plan = make_plan(load_sweep(yaml.safe_load(Path("bench.yaml").read_text())), cores)
    return {"planned_wall_s": the_plan.wall_seconds, "planned_job_s": the_plan.total_job_seconds}


def plan_figures(run: dict, plan: dict) -> dict:
    """Planned over measured: the wall time of the whole sweep, and the time of its jobs: each
    job's own from its log, less the time it waited for another job's timed window (the plan
    counts that wait in the wall time, where the windows run one at a time)."""
    work = run["sweep_job_seconds"] - run["window_wait_s_total"]
    return {
        **plan,
        "measured_wall_s": run["sweep_wall_s"],
        "measured_job_s": work,
        "lock_wait_s": run["window_wait_s_total"],
        "ratio_plan_wall": plan["planned_wall_s"] / run["sweep_wall_s"],
        "ratio_plan_job": plan["planned_job_s"] / work,
    }


# The config on an object store whose plan the bench checks too: a local SeaweedFS server the
# bench starts for it, read as it is and through the relay's 20 ms.
S3_PLAN_CONFIG = "bench/s3-plan.yaml"
BENCH_KEYS = ("h5sweepbench", "h5sweepbenchsecret")


def bench_plans(repo: Path, directory: Path, cores: int, configs=(*PLAN_CONFIGS, S3_PLAN_CONFIG)) -> dict:
    """Each config run for real in a copy of the workflow, its plan beside it (one entry per
    config, by its file's stem). A config on an object store runs against a SeaweedFS server
    of its own, started here and stopped after."""
    out = {}
    for config in configs:
        stem = Path(config).stem
        workdir = directory / f"plan-{stem}"
        with _s3_server_for(repo / config, directory / f"plan-{stem}-s3") as path:
            run = bench_sweep(repo, workdir, path, cores, f"bench-plan-{stem}")
            out[stem] = plan_figures(run, planned(workdir, cores))
    return out


@contextlib.contextmanager
def _s3_server_for(config: Path, directory: Path):
    """``config`` as it is where it names no object store; else a copy of it whose endpoints
    name a SeaweedFS server started for it (its key pair set in the environment meanwhile)."""
    import yaml

    from h5sweep.host import seaweed

    cfg = yaml.safe_load(config.read_text())
    remote = [e for e in cfg["filesystems"].values() if isinstance(e, dict) and e.get("s3")]
    if not remote:
        yield config
        return
    shutil.rmtree(directory, ignore_errors=True)
    before = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID=BENCH_KEYS[0], AWS_SECRET_ACCESS_KEY=BENCH_KEYS[1])
    server = seaweed.start(directory, port=0, credentials=BENCH_KEYS)
    try:
        for entry in remote:
            entry["s3"]["endpoint"] = server.endpoint
        copy = directory / config.name
        copy.write_text(yaml.safe_dump(cfg))
        yield copy
    finally:
        seaweed.stop(directory)
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def plan_ratios(by_config: dict) -> dict:
    """The goals' flat view of :func:`bench_plans`: ``ratio_plan_wall_<stem>``, ``ratio_plan_job_<stem>``."""
    return {
        f"{ratio}_{stem.replace('-', '_')}": figures[ratio]
        for stem, figures in by_config.items()
        for ratio in ("ratio_plan_wall", "ratio_plan_job")
    }


def windows_across(runs: list[dict]) -> dict:
    """The timed windows of sweeps run side by side, taken together: how many overlapped a
    window of any of them (the node's lock is shared by every sweep), and the share of the
    time from the first start to the last end spent inside one."""
    started_at = min(run["sweep_started_at"] for run in runs)
    ended_at = max(run["sweep_started_at"] + run["sweep_wall_s"] for run in runs)
    measurements = pd.concat([pd.read_parquet(run["measurements_parquet"]) for run in runs], ignore_index=True)
    return {
        "sweeps": len(runs),
        "wall_s": ended_at - started_at,
        **window_figures(measurements, started_at, ended_at - started_at),
    }


def _sweep_figures(
    results: Path, fs_dirs: dict[str, Path], peaks: dict, started_at: float, wall: float, output: str, cores: int
) -> dict:
    units = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
    planned = {
        fs_name: float(v) * units[u]
        for fs_name, v, u in re.findall(r"^\s+(\w+) \(.*peak disk ([\d.]+) (\w+)", output, re.M)
    }
    ratios = {fs_name: peaks[fs_name] / planned[fs_name] for fs_name in peaks if planned.get(fs_name)}
    job_seconds = 0.0
    jobs = 0
    for log in (results / "logs").rglob("*.log"):
        found = re.findall(r"h5sweep job seconds: ([\d.]+)", log.read_text())
        if found:
            job_seconds += float(found[-1])
            jobs += 1
    for path in fs_dirs.values():
        shutil.rmtree(path, ignore_errors=True)
    busy = job_seconds / (wall * cores)
    windows = window_figures(pd.read_parquet(results / "measurements.parquet"), started_at, wall)
    return {
        "sweep_wall_s": wall,
        "sweep_cores": cores,
        "sweep_jobs": jobs,
        "sweep_job_seconds": job_seconds,
        "snakemake_overhead_share": 1 - busy,
        "peak_disk_bytes": peaks,
        "planned_peak_disk_bytes": planned,
        # the filesystem closest to (or beyond) its planned bound
        "ratio_peak_disk_vs_plan": max(ratios.values(), default=float("nan")),
        **windows,
        "summary_csv": str(results / "summary.csv"),
        "measurements_parquet": str(results / "measurements.parquet"),
        "recommendation_csv": str(results / "recommendation.csv"),
    }


def window_figures(measurements: pd.DataFrame, started_at: float, wall_s: float) -> dict:
    """From the windows every row recorded: how many timed windows overlapped another, and the
    share of the sweep's wall time spent inside timed windows."""
    spans = (
        measurements[["window_opened_at", "window_closed_at"]]
        .dropna()
        .drop_duplicates()
        .sort_values("window_opened_at")
    )
    overlapping, inside, reach = 0, 0.0, -np.inf
    for opened, closed in spans.itertuples(index=False):
        if opened < reach:
            overlapping += 1
        inside += max(0.0, closed - max(opened, reach))
        reach = max(reach, closed)
    return {
        "timed_windows": len(spans),
        "overlapping_timed_windows": overlapping,
        "timed_window_share_of_wall": inside / wall_s if wall_s else float("nan"),
        "window_wait_s_total": float(measurements.drop_duplicates(["window_opened_at"])["window_wait_s"].sum()),
        # CPU time a hypervisor took from the machine inside timed windows (drift between runs)
        "window_steal_s_total": float(
            measurements.drop_duplicates(["window_opened_at"]).get("window_steal_s", pd.Series(dtype=float)).sum()
        ),
        "sweep_started_at": started_at,
    }
