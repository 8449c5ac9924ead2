"""Benchmarks behind `make bench`: each goal is a ratio of two things measured in one run.

Absolute times vary between machines and runs; ratios measured side by side do not (much).

1. generation: fast query-file writes against raw sequential writes (uncompressed) and
   against HDF5's single-threaded filter pipeline (compressed);
2. harness: the timed region of a query against a bare ``read_direct`` of the same
   selections, and bytes read from the device on a cold query against stored chunk bytes;
3. orchestration: building the DAG of the paper grid, and Snakemake's share of a sweep's
   wall time;
4. disk: measured peak disk use of a sweep against the plan's bound.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np

from h5sweep.cases import read_cases_from_config
from h5sweep.compression import parse_compression
from h5sweep.datasources import SyntheticSource
from h5sweep.fastwrite import write_fast
from h5sweep.filesystems import mount_info
from h5sweep.generate import write_file
from h5sweep.layouts import Layout
from h5sweep.query import run_case

MB = 1_000_000


def _timed(fn, *args, **kwargs) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def raw_write_seconds(path: str, data: np.ndarray) -> float:
    """One large sequential write of the same bytes, fsync included."""

    def write():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(np.ascontiguousarray(data)).cast("B")
            while len(view):
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    return _timed(write)


def bench_generation(directory: str, shape: tuple[int, ...], threads: int) -> dict:
    data = SyntheticSource(shape, np.uint16, seed=0).materialize()
    nbytes = data.nbytes
    path = os.path.join(directory, "bench.h5")
    out: dict = {"bytes": nbytes, "threads": threads}
    none, gzip = parse_compression("none"), parse_compression("gzip-4")
    chunked = Layout((4, 4, 2048))
    # interleave the contenders so that drifts of the machine hit both
    raw, contiguous, chunks = [], [], []
    for _ in range(3):
        raw.append(raw_write_seconds(path, data))
        contiguous.append(_timed(write_fast, path, data, Layout(None), none))
        chunks.append(_timed(write_fast, path, data, chunked, none))
    out["raw_write_s"] = min(raw)
    out["fast_contiguous_s"] = min(contiguous)
    out["fast_chunked_none_s"] = min(chunks)
    out["standard_chunked_none_s"] = _timed(write_file, path, data, chunked, none)
    out["standard_gzip4_s"] = _timed(write_file, path, data, chunked, gzip)
    out["fast_gzip4_s"] = _timed(write_fast, path, data, chunked, gzip, "data", threads)
    with h5py.File(path, "r") as f:
        out["fast_gzip4_reads_back_identical"] = bool(np.array_equal(f["data"][...], data))
    os.remove(path)
    out["ratio_contiguous_vs_raw"] = out["raw_write_s"] / out["fast_contiguous_s"]
    out["ratio_chunked_vs_raw"] = out["raw_write_s"] / out["fast_chunked_none_s"]
    out["ratio_gzip_fast_vs_filter_pipeline"] = out["standard_gzip4_s"] / out["fast_gzip4_s"]
    return out


def bench_harness(directory: str, shape: tuple[int, ...], repeats: int = 200) -> dict:
    source = SyntheticSource(shape, np.uint16, seed=0)
    data = source.materialize()
    layout = Layout((4, 4, 2048))
    path = os.path.join(directory, "harness.h5")
    write_fast(path, data, layout, parse_compression("gzip-4"), threads=os.cpu_count() or 1)
    cases = read_cases_from_config({"subcube": {"repeats": repeats}, "spectra": {"repeats": 20}}, shape)
    subcube, spectra = cases[1], cases[0]
    selections = subcube.selections(shape, 0)
    # warm the file, then time the harness and a bare loop of the same reads, alternating
    with h5py.File(path, "r") as f:
        f["data"][...]
    harness_medians, bare_medians = [], []
    for _ in range(5):
        rows = run_case(path, subcube, selections, source, layout, evict=False)
        harness_medians.append(statistics.median(r["seconds"] for r in rows[1:]))
        with h5py.File(path, "r") as f:
            dset = f["data"]
            buffer = np.empty(selections[0].size, dtype=dset.dtype)
            times = []
            for sel in selections:
                t0 = time.perf_counter_ns()
                dset.read_direct(buffer, source_sel=sel.region)
                times.append((time.perf_counter_ns() - t0) / 1e9)
        bare_medians.append(statistics.median(times[1:]))
    out = {
        "harness_median_s": min(harness_medians),
        "bare_read_direct_median_s": min(bare_medians),
        "fs_type": mount_info(directory).fs_type,
    }
    out["ratio_harness_vs_bare"] = out["harness_median_s"] / out["bare_read_direct_median_s"]
    # a cold query: bytes from the device against the stored bytes of the chunks it touches
    cold = run_case(path, spectra, spectra.selections(shape, 1), source, layout)[0]
    out["cold_device_read_bytes"] = cold["device_read_bytes"]
    out["cold_stored_bytes_touched"] = cold["stored_bytes_touched"]
    out["cold_start"] = bool(cold["cold_start"])
    out["ratio_cold_device_vs_stored"] = cold["device_read_bytes"] / max(1, cold["stored_bytes_touched"])
    os.remove(path)
    return out


def snakemake_cmd() -> list[str]:
    return [str(Path(sys.executable).parent / "snakemake")]


def bench_dag(repo: Path) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*snakemake_cmd(), "-n", "-q", "--configfile", "config/paper.yaml"], cwd=repo, capture_output=True, text=True
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return {"paper_dry_run_s": seconds, "ratio_dry_run_vs_15s": seconds / 15.0}


def _du(paths: list[Path]) -> int:
    total = 0
    for root in paths:
        for dirpath, _, files in os.walk(root):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.stat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def bench_sweep(repo: Path, workdir: Path, config: Path, cores: int) -> dict:
    """Run a sweep for real in a copy of the workflow; job time, wall time, peak disk."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    for part in ["Snakefile", "rules", "workflow", "config", "profiles"]:
        src = repo / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, workdir / part)
    import yaml

    cfg = yaml.safe_load(config.read_text())
    cfg["sweep"] = "bench"
    fs_dirs = []
    for name, entry in list(cfg["filesystems"].items()):
        path = entry if isinstance(entry, str) else entry["path"]
        path = str(workdir / path) if not os.path.isabs(path) else f"{path}-bench"
        cfg["filesystems"][name] = path if isinstance(entry, str) else {**entry, "path": path}
        fs_dirs.append(Path(path))
    (workdir / "bench.yaml").write_text(yaml.safe_dump(cfg))
    peak = 0
    done = threading.Event()

    def watch():
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _du(fs_dirs))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*snakemake_cmd(), "--cores", str(cores), "--configfile", "bench.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout[-3000:] + proc.stderr[-3000:])
    plan_line = re.findall(r"peak disk ([\d.]+) (\w+)", proc.stdout + proc.stderr)
    units = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
    planned = max((float(v) * units[u] for v, u in plan_line), default=float("nan"))
    job_seconds = 0.0
    jobs = 0
    for log in (workdir / "results" / "bench" / "logs").rglob("*.log"):
        found = re.findall(r"h5sweep job seconds: ([\d.]+)", log.read_text())
        if found:
            job_seconds += float(found[-1])
            jobs += 1
    for path in fs_dirs:
        shutil.rmtree(path, ignore_errors=True)
    busy = job_seconds / (wall * cores)
    return {
        "sweep_wall_s": wall,
        "sweep_cores": cores,
        "sweep_jobs": jobs,
        "sweep_job_seconds": job_seconds,
        "snakemake_overhead_share": 1 - busy,
        "peak_disk_bytes": peak,
        "planned_peak_disk_bytes": planned,
        "ratio_peak_disk_vs_plan": peak / planned if planned else float("nan"),
    }


GOALS = [
    ("generation", "ratio_contiguous_vs_raw", ">=", 0.7, "fast contiguous write vs raw sequential write"),
    ("generation", "ratio_chunked_vs_raw", ">=", 0.7, "fast chunked (uncompressed) write vs raw sequential write"),
    ("generation", "ratio_gzip_fast_vs_filter_pipeline", ">=", 1.8, "threaded gzip-4 vs HDF5 filter pipeline"),
    ("harness", "ratio_harness_vs_bare", "<=", 1.05, "timed query vs bare read_direct (warm, subcube)"),
    ("harness", "ratio_cold_device_vs_stored", ">=", 0.9, "cold query: device bytes vs stored chunk bytes"),
    ("dag", "ratio_dry_run_vs_15s", "<=", 1.0, "paper.yaml dry run vs 15 s"),
    ("sweep", "snakemake_overhead_share", "<=", 0.15, "Snakemake's share of the default sweep's wall time"),
    ("sweep", "ratio_peak_disk_vs_plan", "<=", 1.0, "measured peak disk vs planned bound"),
]


def verdicts(results: dict) -> list[str]:
    lines = []
    for section, key, op, target, what in GOALS:
        value = results.get(section, {}).get(key)
        if value is None:
            continue
        ok = value >= target if op == ">=" else value <= target
        lines.append(f"{'PASS' if ok else 'MISS'}  {what}: {value:.3f} (goal {op} {target})")
    return lines


def environment() -> dict:
    return {
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "h5py": h5py.version.version,
        "hdf5": h5py.version.hdf5_version,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
