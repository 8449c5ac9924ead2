"""Benchmarks behind `make bench`: each goal is a ratio of two things measured side by side
in one run, from several interleaved samples (median and range printed).

Absolute times vary between machines and runs; ratios measured side by side do not (much).

1. generation: fast query-file writes against raw sequential writes (uncompressed) and
   against HDF5's single-threaded filter pipeline (compressed);
2. harness: the timed region of a query against a bare ``H5Dread`` of the same selections
   (the smallest uncompressed read, where any overhead shows), and bytes read from the
   device by cold reads against the stored bytes of the chunks they touch (readahead off on
   HDF5's descriptor, so the band is two-sided: over-reading fails as under-reading does);
3. orchestration: building the DAG of a 379-store grid (bench/grid.yaml), and Snakemake's share of a sweep's
   wall time;
4. the default sweep alone: its timed windows never overlap and fill most of the wall time,
   and its peak disk stays within the plan; then the default sweep twice side by side (their
   timed windows take turns under the node's lock, so none overlaps another and the two runs
   meet the machine in the same minutes): the two runs agree on the best layout, its medians
   and its rankings (reproducibility). Not goals: the run alone against one of the pair, and a
   fixed piece of work (memory copy, inflate, cold disk read) timed before, between and after,
   so a run-wide shift of the medians can be set beside the machine's own;
5. the plan: the wall time and the job time a dry run plans, over what the default sweep
   (its run alone) and two small test configs measure.
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
import zlib
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
from h5py import h5s

from h5sweep.backends.fastwrite import write_fast
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases import read_cases_from_config
from h5sweep.cases.engine import ReadPlan, StoreUnderTest, read_store
from h5sweep.measure import settle
from h5sweep.measure.pagecache import COLD_RESIDENT_FRACTION, cache_state, evict, io_counters, resident_fraction
from h5sweep.measure.stats import intervals_overlap, spearman
from h5sweep.measure.timing import gc_paused, touched_empty
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.filesystems import mount_info
from h5sweep.storage.layouts import Layout

MB = 1_000_000
SAMPLES = 5  # interleaved samples behind every ratio
# Seconds a disk is left idle between removing one contender's file and the next write. On
# a thin-provisioned virtual disk mounted with `discard` (the reference machine), a 1 GB
# write with fsync took 0.45 s when it reused blocks freed less than a second before and
# 2.0-2.9 s when it went to released space; with 0.5 s or 1 s of rest both happened, with 2 s
# every write went to released space. So every contender meets the same device state.
SETTLE_S = 3.0


def _timed(fn, *args, **kwargs) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def spread(ratios: list[float]) -> dict:
    """A ratio's samples as median, min and max (what the bench prints and judges)."""
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios), "samples": ratios}


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


def settled_removal(path: str, settle_s: float) -> None:
    """Remove the previous contender's file or directory (synced), and leave the device
    idle for ``settle_s`` so that the blocks it released are released (see SETTLE_S)."""
    settle.remove_and_mark([path], os.path.dirname(os.path.abspath(path)))
    time.sleep(settle_s)


def bench_generation(
    directory: str, shape: tuple[int, ...], threads: int, samples: int = SAMPLES, settle_s: float = SETTLE_S
) -> dict:
    data = SyntheticSource(shape, np.uint16, seed=0).materialize()
    nbytes = data.nbytes
    path = os.path.join(directory, "bench.h5")
    out: dict = {"bytes": nbytes, "threads": threads, "samples": samples, "settle_s": settle_s}
    none, gzip = parse_compression("none"), parse_compression("gzip-4")
    chunked = Layout((4, 4, 2048))
    # gzip through HDF5's pipeline is slow: its contest runs on the first fifth of z
    gzip_data = np.ascontiguousarray(data[:, :, : min(shape[2], max(2048, shape[2] // 5))])
    contiguous, chunks, pipeline = [], [], []

    def fresh(seconds_of, *args) -> float:
        """Time a write into a new file on a quiet disk: the previous file is removed and
        its blocks released before the clock, not during it."""
        settled_removal(path, settle_s)
        return seconds_of(*args)

    # interleave the contenders so that drifts of the machine hit both; a ratio per round
    for _ in range(samples):
        raw = fresh(raw_write_seconds, path, data)
        contiguous.append(raw / fresh(_timed, write_fast, path, data, Layout(None), none))
        raw = fresh(raw_write_seconds, path, data)
        chunks.append(raw / fresh(_timed, write_fast, path, data, chunked, none))
        standard = fresh(_timed, write_file, path, gzip_data, chunked, gzip)
        pipeline.append(standard / fresh(_timed, write_fast, path, gzip_data, chunked, gzip, "data", threads))
    with h5py.File(path, "r") as f:
        out["fast_gzip4_reads_back_identical"] = bool(np.array_equal(f["data"][...], gzip_data))
    os.remove(path)
    out["ratio_zarr_fast_vs_zarr_python"] = spread(
        bench_zarr_generation(directory, gzip_data, threads, samples, settle_s)
    )
    out["ratio_contiguous_vs_raw"] = spread(contiguous)
    out["ratio_chunked_vs_raw"] = spread(chunks)
    out["ratio_gzip_fast_vs_filter_pipeline"] = spread(pipeline)
    return out


def bench_zarr_generation(
    directory: str, data: np.ndarray, threads: int, samples: int, settle_s: float = SETTLE_S
) -> list[float]:
    """zarr-python's own writer (the whole array in one assignment, its codec pipeline and
    concurrency) against the fast path (chunks encoded once by numcodecs in ``threads``
    threads, files written directly) on the same Blosc store, interleaved: one ratio per
    round."""
    from h5sweep.backends import zarr as zarr_backend

    path = os.path.join(directory, "bench.zarr")
    layout, blosc = Layout((4, 4, 2048)), parse_compression("blosc-lz4-5-shuffle")

    def fresh(write) -> float:
        settled_removal(path, settle_s)
        return _timed(write)

    def by_zarr_python() -> None:
        zarr_backend.create_array(path, data.shape, layout.chunk_shape, data.dtype, blosc)[...] = data
        zarr_backend.fsync_tree(path)

    ratios = []
    for _ in range(samples):
        standard = fresh(by_zarr_python)
        ratios.append(standard / fresh(lambda: zarr_backend.write_fast(path, data, layout, blosc, threads)))
    shutil.rmtree(path)
    return ratios


def _bare_reads(path: str, selections, repeats_dtype) -> float:
    """Median of bare ``H5Dread`` calls of the selections (dataspaces built beforehand)."""
    with h5py.File(path, "r") as f:
        dset = f["data"]
        buffer = touched_empty(selections[0].size, repeats_dtype)
        mem_space, space = h5s.create_simple(buffer.shape), dset.id.get_space()
        times = []
        with gc_paused():
            for sel in selections:
                space.select_hyperslab(sel.start, buffer.shape)
                t0 = time.perf_counter_ns()
                dset.id.read(mem_space, space, buffer)
                times.append(time.perf_counter_ns() - t0)
    return statistics.median(times[1:]) / 1e9


def _read(backend, path, case, selections, source, layout, evict=True, readahead=True) -> list[dict]:
    """The case's chosen selections read from one store by the workflow's read engine."""
    plan = ReadPlan([case], source.shape, 0, selections={case.name: selections}, evict=evict, readahead=readahead)
    return read_store(StoreUnderTest(backend, path, layout, source), plan)


def bench_harness(directory: str, shape: tuple[int, ...], repeats: int = 200, samples: int = SAMPLES) -> dict:
    """The harness against bare reads on the smallest uncompressed read (128 values, warm),
    and cold device bytes against stored chunk bytes with readahead off."""
    source = SyntheticSource(shape, np.uint16, seed=0)
    data = source.materialize()
    layout = Layout((4, 4, 2048))  # 64 KiB chunks
    path = os.path.join(directory, "harness.h5")
    write_fast(path, data, layout, parse_compression("none"))
    small, spectra = read_cases_from_config(
        {
            "subcube": {"repeats": repeats, "size": [1, 1, 128], "cold": "first"},
            "spectra": {"repeats": 10, "size": 5, "cold": "every"},
        },
        shape,
    )[::-1]
    selections = small.selections(shape, 0)
    with h5py.File(path, "r") as f:  # warm the file
        f["data"][...]
    overhead = []
    for _ in range(samples):
        rows = _read(HDF5, path, small, selections, source, layout, evict=False)
        harness = statistics.median(r["seconds"] for r in rows[1:])
        overhead.append(harness / _bare_reads(path, selections, data.dtype))
    out = {"samples": samples, "selection_bytes": 128 * 2, "fs_type": mount_info(directory).fs_type}
    out["ratio_harness_vs_bare"] = spread(overhead)
    # cold reads of whole 5 x 5 spectra: every read from an evicted, reopened file
    amplification, stored_total = [], 0
    spectra_selections = spectra.selections(shape, 1)
    for _ in range(samples):
        rows = _read(HDF5, path, spectra, spectra_selections, source, layout, readahead=False)
        device = sum(r["device_read_bytes"] for r in rows)
        stored_total = sum(r["stored_bytes_touched"] for r in rows)
        amplification.append(device / max(1, stored_total))
        out["cold_cache_states"] = sorted({r["cache_state"] for r in rows})
    out["cold_stored_bytes_touched"] = stored_total
    out["ratio_cold_device_vs_stored"] = spread(amplification)
    os.remove(path)
    return out


PROBE_BYTES = 64 * 2**20
PROBE_SAMPLES = 60  # about 4 s per probe on the reference machine
PROBES_PER_POINT = 3  # back to back, to show how far the machine moves within seconds
PROBE_READ_BYTES = 64 * 1024  # one call of the cold read, as HDF5 reads a contiguous file


def machine_probe(directory: str, samples: int = PROBE_SAMPLES) -> dict:
    """Not a goal: one fixed piece of work, timed before, between and after the two runs of
    the default sweep, so that a shift of their medians can be set beside the machine's own.
    Medians of ``samples``: a 64 MiB copy in memory (what an in-memory read costs), inflating
    8 MiB of gzip-4 data (what a compressed read costs on top) and a cold read of a 64 MiB file
    in the directory under test, evicted before each read, in 64 KiB ``preadv`` calls (what a
    cold read from the disk costs); with the device bytes each cold read fetched and its cache
    state. The file is written once and kept for the next probe."""
    path = _probe_path(directory)
    if not os.path.exists(path) or os.path.getsize(path) != PROBE_BYTES:
        with open(path, "wb") as f:
            f.write(np.random.default_rng(0).integers(0, 256, PROBE_BYTES, dtype=np.uint8).tobytes())
            f.flush()
            os.fsync(f.fileno())
    source = np.ones(PROBE_BYTES, dtype=np.uint8)
    target = touched_empty(PROBE_BYTES, np.uint8)
    deflated = zlib.compress(SyntheticSource((16, 16, 16384), np.uint16, seed=0).materialize().tobytes(), 4)
    pieces = [(at, memoryview(target)[at : at + PROBE_READ_BYTES]) for at in range(0, PROBE_BYTES, PROBE_READ_BYTES)]
    copies, inflations, reads, device, states = [], [], [], [], set()
    for _ in range(samples):
        with gc_paused():
            t0 = time.perf_counter()
            np.copyto(target, source)
            copies.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            zlib.decompress(deflated)
            inflations.append(time.perf_counter() - t0)
        evict(path)
        evictable = resident_fraction(path) < COLD_RESIDENT_FRACTION  # not on tmpfs
        fd = os.open(path, os.O_RDONLY)
        try:
            before = io_counters()
            with gc_paused():
                t0 = time.perf_counter()
                for at, piece in pieces:
                    os.preadv(fd, [piece], at)
                reads.append(time.perf_counter() - t0)
            fetched = (io_counters() - before).device_read
        finally:
            os.close(fd)
        device.append(fetched)
        states.add(cache_state(fetched, evictable))
    return {
        "samples": samples,
        "memory_copy_s": statistics.median(copies),
        "inflate_s": statistics.median(inflations),
        "cold_read_s": statistics.median(reads),
        "cold_read_device_bytes": int(statistics.median(device)),
        "cold_read_cache_states": sorted(states),
        "probe_bytes": PROBE_BYTES,
    }


def _probe_path(directory: str) -> str:
    return os.path.join(directory, "machine-probe.bin")


def remove_probe_file(directory: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(_probe_path(directory))


PROBE_POINTS = ("before_first_run", "between_runs", "after_second_run")
PROBE_METRICS = (("memory copy", "memory_copy_s"), ("inflate", "inflate_s"), ("disk cold read", "cold_read_s"))


def probe_figures(probes: dict[str, list[dict]]) -> dict:
    """From the probes at the three points (several back to back at each): the probe's second
    run / first per metric, a run taken to see the mean of the points on either side of it
    (comparable with each filesystem's run shift), and the widest max / min of the probes
    taken back to back at one point (how far the machine moves within seconds)."""
    level = {
        point: {key: statistics.median(p[key] for p in probes[point]) for _, key in PROBE_METRICS}
        for point in PROBE_POINTS
    }
    before, between, after = (level[point] for point in PROBE_POINTS)
    return {
        "probe_second_over_first": {
            name: (between[key] + after[key]) / (before[key] + between[key]) for name, key in PROBE_METRICS
        },
        "probe_back_to_back_spread": {
            name: max(max(p[key] for p in probes[point]) / min(p[key] for p in probes[point]) for point in PROBE_POINTS)
            for name, key in PROBE_METRICS
        },
    }


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


# The test configs whose plan the bench checks beside the default sweep's: one that writes in
# every strategy and fill time (the write pricing), one that reads in every policy, chunk
# cache and cold mode (the read pricing); both small, so per-job costs weigh most.
PLAN_CONFIGS = ("tests/configs/write-variants.yaml", "tests/configs/read-variants.yaml")


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


def bench_plans(repo: Path, directory: Path, cores: int, configs=PLAN_CONFIGS) -> dict:
    """Each config run for real in a copy of the workflow, its plan beside it (one entry per
    config, by its file's stem)."""
    out = {}
    for config in configs:
        stem = Path(config).stem
        workdir = directory / f"plan-{stem}"
        run = bench_sweep(repo, workdir, repo / config, cores, f"bench-plan-{stem}")
        out[stem] = plan_figures(run, planned(workdir, cores))
    return out


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


def _groups(summary: pd.DataFrame):
    """Per filesystem x read case x compression: each layout's primary row (the contiguous
    baseline belongs to every compression's group)."""
    reads = summary[summary["ratio_to_contiguous"].notna() & summary["primary"].astype(str).eq("True")]
    for (fs, case), rows in reads.groupby(["filesystem", "case"]):
        for comp in sorted(set(rows["compression"])):
            group = rows[(rows["compression"] == comp) | (rows["layout"] == "contiguous")]
            yield (fs, case, comp), group.set_index("layout_id")


def reproducibility(summary_a: pd.DataFrame, summary_b: pd.DataFrame) -> dict:
    """Do two runs of one sweep agree? Per group: is each run's best layout among the other
    run's layouts tied for best (median intervals overlapping the best's); the run-to-run
    deviation of every median; and the Spearman correlation of the layouts' medians where
    they spread by at least 1.5x."""
    b_groups = dict(_groups(summary_b))
    same_best, groups, deviations, correlations, detail, ratio_deviations = 0, 0, [], [], [], []
    order_totals = dict.fromkeys(["pairs", "discordant_pairs", "contradicted_pairs"], 0)
    second_over_first: dict[str, dict] = {}  # per filesystem and (case, layout): second run / first
    for key, a in _groups(summary_a):
        b = b_groups.get(key)
        if b is None:
            continue
        common = a.index.intersection(b.index)
        a, b = a.loc[common], b.loc[common]
        groups += 1

        def tied(run):
            best = run["median_s"].idxmin()
            best_ci = (run.loc[best, "median_ci_low_s"], run.loc[best, "median_ci_high_s"])
            return best, {
                layout
                for layout, r in run.iterrows()
                if intervals_overlap((r["median_ci_low_s"], r["median_ci_high_s"]), best_ci)
            }

        best_a, tied_a = tied(a)
        best_b, tied_b = tied(b)
        agree = best_a in tied_b and best_b in tied_a
        same_best += agree
        deviation = (a["median_s"] - b["median_s"]).abs() / ((a["median_s"] + b["median_s"]) / 2)
        deviations += list(deviation)
        moved = b["median_s"] / a["median_s"]
        second_over_first.setdefault(key[0], {}).update({(key[1], layout): r for layout, r in moved.items()})
        ratios = a["ratio_to_contiguous"], b["ratio_to_contiguous"]
        chunked = a["layout"] != "contiguous"
        ratio_deviations += list(((ratios[0] - ratios[1]).abs() / ((ratios[0] + ratios[1]) / 2))[chunked])
        spread_ratio = max(a["median_s"].max() / a["median_s"].min(), b["median_s"].max() / b["median_s"].min())
        rho = spearman(a["median_s"], b["median_s"]) if spread_ratio >= 1.5 else float("nan")
        entry = {"group": " / ".join(key), "best": [best_a, best_b], "agree": bool(agree), "spearman": rho}
        if not np.isnan(rho):
            correlations.append(rho)
            entry.update(order_disagreements(a, b))
            for name in order_totals:
                order_totals[name] += entry[name]
        detail.append(entry)
    return {
        "groups": groups,
        "groups_best_agree": same_best,
        "share_groups_best_agree": same_best / groups if groups else float("nan"),
        "median_deviation_of_medians": float(np.median(deviations)) if deviations else float("nan"),
        # the same for the paired ratios to contiguous (what the recommendation ranks by)
        "median_deviation_of_ratios": float(np.median(ratio_deviations)) if ratio_deviations else float("nan"),
        "min_spearman_spread_groups": min(correlations) if correlations else float("nan"),
        # not a goal, what a low Spearman is made of, over the groups it is computed for
        **{f"{name}_spread_groups": count for name, count in order_totals.items()},
        **run_shift(second_over_first),
        "detail": detail,
    }


def order_disagreements(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Not a goal, what a Spearman below 1 is made of: of every pair of layouts in a group,
    those the two runs order differently (``discordant_pairs``), and of these, those whose
    median intervals were disjoint in at least one run (``contradicted_pairs``: a difference
    one run called clear and the other reversed). Discordant pairs that are not contradicted
    are layouts both runs measured as indistinguishable, ordered by noise."""
    layouts = list(a.index)
    pairs, discordant, contradicted = 0, 0, 0
    for i, first in enumerate(layouts):
        for second in layouts[i + 1 :]:
            pairs += 1
            gap_a = a.loc[first, "median_s"] - a.loc[second, "median_s"]
            gap_b = b.loc[first, "median_s"] - b.loc[second, "median_s"]
            if gap_a * gap_b >= 0:
                continue
            discordant += 1
            contradicted += any(
                not intervals_overlap(
                    (run.loc[first, "median_ci_low_s"], run.loc[first, "median_ci_high_s"]),
                    (run.loc[second, "median_ci_low_s"], run.loc[second, "median_ci_high_s"]),
                )
                for run in (a, b)
            )
    return {"pairs": pairs, "discordant_pairs": discordant, "contradicted_pairs": contradicted}


def run_shift(second_over_first: dict[str, dict]) -> dict:
    """Not a goal, what explains a missed one: how much a filesystem's medians moved together
    from one run to the other (the median of second / first over its rows: the machine or its
    disk faster or slower in one run), and the median deviation once that run-wide factor is
    taken out of each filesystem's medians (what is left: layouts moving apart)."""
    shift, left = {}, []
    for filesystem, by_row in sorted(second_over_first.items()):
        ratios = np.array(list(by_row.values()))  # contiguous once, though in every group
        shift[filesystem] = float(np.median(ratios))
        rescaled = ratios / shift[filesystem]
        left += list(np.abs(rescaled - 1) / ((rescaled + 1) / 2))
    return {
        "run_shift_by_filesystem": shift,
        "median_deviation_after_run_shift": float(np.median(left)) if left else float("nan"),
    }


PASS_BLOCKS = 10
PAIR_KEYS = ["filesystem", "backend", "layout_id", "compression", "case", "variant", "repeat"]


def shift_along_the_pass(reads_a: pd.DataFrame, reads_b: pd.DataFrame, blocks: int = PASS_BLOCKS) -> dict:
    """Not a goal, where a run-wide shift comes from: every read of the second run over the
    same read of the first (same store, case, variant and selection), in the first run's
    order of reading, cut into ``blocks`` consecutive stretches; per filesystem, the lowest and
    highest stretch median. A narrow range around the run-wide shift says the runs differed as
    wholes (the machine's state for minutes); a wide one, that the machine moved within a pass
    (which more, or more spread, reads would average out)."""
    keys = [k for k in PAIR_KEYS if k in reads_a.columns and k in reads_b.columns]
    ordered = [df.assign(order=np.arange(len(df))).query("case != 'write'") for df in (reads_a, reads_b)]
    pairs = ordered[0].merge(ordered[1], on=keys, suffixes=("_a", "_b"))
    out = {}
    for filesystem, run in pairs.groupby("filesystem", sort=True):
        run = run.sort_values(["window_opened_at_a", "order_a"])
        logs = np.log(run["seconds_b"].to_numpy() / run["seconds_a"].to_numpy())
        stretches = [np.exp(np.median(part)) for part in np.array_split(logs, min(blocks, len(logs)))]
        out[filesystem] = {"blocks": len(stretches), "min": float(min(stretches)), "max": float(max(stretches))}
    return {"shift_along_the_pass": out}


def runs_agree(run_a: dict, run_b: dict) -> dict:
    """Everything two runs of :func:`bench_sweep` are compared by: their summaries
    (:func:`reproducibility`), their recommendations, and their reads one by one."""
    summaries = [pd.read_csv(run["summary_csv"], keep_default_na=False, na_values=[""]) for run in (run_a, run_b)]
    tables = [pd.read_csv(run["recommendation_csv"]) for run in (run_a, run_b)]
    reads = [pd.read_parquet(run["measurements_parquet"]) for run in (run_a, run_b)]
    return {
        **reproducibility(*summaries),
        **recommendations_agree(*tables),
        **shift_along_the_pass(*reads),
        "window_steal_s_total": [run["window_steal_s_total"] for run in (run_a, run_b)],
    }


def drift_lines(results: dict) -> list[str]:
    """The two runs' drift beside their goals: each filesystem's run-wide shift, the deviation
    without it, and the CPU time the hypervisor took inside each run's timed windows; and the
    machine probe's shift between the runs and its spread within seconds, where it ran."""
    repro = results.get("reproducibility", {})
    if "run_shift_by_filesystem" not in repro:
        return []
    shifts = ", ".join(f"{fs} {factor:.3f}" for fs, factor in repro["run_shift_by_filesystem"].items())
    stolen = repro.get("window_steal_s_total", [float("nan")] * 2)
    lines = [
        f"      (not a goal) second run / first, median per filesystem: {shifts}; median deviation with that"
        f" shift taken out: {repro['median_deviation_after_run_shift']:.3f}; CPU time stolen by the hypervisor"
        f" inside timed windows: {stolen[0]:.2f} s and {stolen[1]:.2f} s"
    ]
    if "discordant_pairs_spread_groups" in repro:
        lowest = min(
            (entry for entry in repro["detail"] if "discordant_pairs" in entry), key=lambda entry: entry["spearman"]
        )
        lines.append(
            "      (not a goal) layouts ordered differently by the two runs, in the groups Spearman is computed"
            f" for: {repro['discordant_pairs_spread_groups']} of {repro['pairs_spread_groups']} pairs,"
            f" {repro['contradicted_pairs_spread_groups']} of them with disjoint median intervals in either run;"
            f" lowest-Spearman group {lowest['group']}: {lowest['discordant_pairs']} of {lowest['pairs']}"
            f" pairs, {lowest['contradicted_pairs']} with disjoint intervals"
        )
    along = repro.get("shift_along_the_pass")
    if along:
        ranges = ", ".join(f"{fs} {r['min']:.3f}-{r['max']:.3f}" for fs, r in along.items())
        lines.append(
            f"      (not a goal) second run / first read by read, medians of {PASS_BLOCKS} consecutive stretches"
            f" of each filesystem's reads, lowest-highest: {ranges}"
        )
    in_sequence = results.get("reproducibility_in_sequence")
    if in_sequence:
        shifts = ", ".join(f"{fs} {factor:.3f}" for fs, factor in in_sequence["run_shift_by_filesystem"].items())
        lines.append(
            "      (not a goal) the sweep run alone against the first of the pair, minutes apart: best layouts"
            f" agree in {in_sequence['groups_best_agree']} of {in_sequence['groups']} groups, median deviation"
            f" {in_sequence['median_deviation_of_medians']:.3f}, lowest Spearman"
            f" {in_sequence['min_spearman_spread_groups']:.3f}; second / first per filesystem: {shifts}"
        )
    probes = results.get("machine_probe", {})
    if all(point in probes for point in PROBE_POINTS):
        figures = probe_figures(probes)
        shift = ", ".join(f"{name} {v:.3f}" for name, v in figures["probe_second_over_first"].items())
        spread_ = ", ".join(f"{name} {v:.3f}" for name, v in figures["probe_back_to_back_spread"].items())
        lines.append(
            f"      (not a goal) fixed work timed before, between and after the runs, second / first: {shift};"
            f" widest max / min of probes taken back to back: {spread_}"
        )
    return lines


def recommendations_agree(table_a: pd.DataFrame, table_b: pd.DataFrame) -> dict:
    """Do two runs recommend compatibly? Per filesystem (every backend's stores ranked
    together): each run's recommended store is among the other run's tied with the fastest."""
    keys = ["filesystem"]
    agree, groups, detail = 0, 0, []
    b_groups = {k: g for k, g in table_b.groupby(keys)}
    for key, a in table_a.groupby(keys):
        b = b_groups.get(key)
        if b is None:
            continue
        groups += 1

        def chosen_and_tied(run):
            ids = run["backend"] + " " + run["layout_id"] + " " + run["compression"]
            return set(ids[run["recommended"].astype(bool)]), set(ids[run["tied_with_best"].astype(bool)])

        chosen_a, tied_a = chosen_and_tied(a)
        chosen_b, tied_b = chosen_and_tied(b)
        ok = chosen_a <= tied_b and chosen_b <= tied_a and bool(chosen_a) and bool(chosen_b)
        agree += ok
        detail.append(
            {
                "group": " / ".join(key if isinstance(key, tuple) else (key,)),
                "recommended": [sorted(chosen_a), sorted(chosen_b)],
                "agree": ok,
            }
        )
    return {
        "recommendation_groups": groups,
        "share_recommendations_agree": agree / groups if groups else float("nan"),
        "recommendation_detail": detail,
    }


def _reads(run: dict) -> int:
    measured = pd.read_parquet(run["measurements_parquet"], columns=["case"])
    return int((measured["case"] != "write").sum())


def _writes(run: dict) -> tuple[int, float]:
    """A run's timed writes and the seconds they took."""
    measured = pd.read_parquet(run["measurements_parquet"], columns=["case", "seconds"])
    writes = measured[measured["case"] == "write"]
    return len(writes), float(writes["seconds"].sum())


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(numerators) / statistics.median(denominators)


# the careful loop and the default sweep, run in turn this many times
NAIVE_PAIRS = 3


def paired_ratios(numerators: list[float], denominators: list[float]) -> dict:
    """Each interleaved pair's ratio, with their median and range."""
    samples = [a / b for a, b in zip(numerators, denominators, strict=True)]
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": samples}


def racing_figures(with_racing: list[dict], without: dict) -> dict:
    """Racing's goals: the reads of a raced run against a run reading every store to the end,
    the recommendation of each raced run against that run's, and the two raced runs' own
    agreement (best layout per group, recommendation)."""
    tables = [pd.read_csv(run["recommendation_csv"]) for run in (*with_racing, without)]
    agree = [recommendations_agree(table, tables[-1])["share_recommendations_agree"] for table in tables[:-1]]
    own = runs_agree(with_racing[0], with_racing[1])
    return {
        "reads_with_racing": [_reads(run) for run in with_racing],
        "reads_without_racing": _reads(without),
        "ratio_reads_race_vs_off": max(_reads(run) for run in with_racing) / max(1, _reads(without)),
        "share_recommendations_agree_race_vs_off": min(agree),
        "share_groups_best_agree": own["share_groups_best_agree"],
        "share_recommendations_agree": own["share_recommendations_agree"],
        "min_spearman_spread_groups": own["min_spearman_spread_groups"],
        "writes_with_racing": [_writes(run) for run in with_racing],
        "writes_without_racing": _writes(without),
        "wall_s_with_racing": [run["sweep_wall_s"] for run in with_racing],
        "wall_s_without_racing": without["sweep_wall_s"],
    }


CALIBRATION_RUNS = 4
RATIO_KEYS = ["filesystem", "backend", "layout_id", "compression", "case", "variant", "cache_state"]


def _coverage(a: pd.DataFrame, b: pd.DataFrame, value: str, low: str, high: str, keys: list[str]) -> tuple:
    """Share of ``a``'s values inside ``b``'s intervals, and share of the two runs' intervals
    that overlap, over the rows both have (each with an interval)."""
    both = a[[*keys, value, low, high]].merge(b[[*keys, value, low, high]], on=keys, suffixes=("_a", "_b"))
    both = both.dropna(subset=[f"{low}_a", f"{low}_b"])
    if both.empty:
        return float("nan"), float("nan"), 0
    inside = (both[f"{value}_a"] >= both[f"{low}_b"]) & (both[f"{value}_a"] <= both[f"{high}_b"])
    overlap = (both[f"{low}_a"] <= both[f"{high}_b"]) & (both[f"{low}_b"] <= both[f"{high}_a"])
    return float(inside.mean()), float(overlap.mean()), len(both)


def calibration(runs: list[dict]) -> dict:
    """Runs of the default sweep back to back: per filesystem and ordered pair of runs, the
    share of one run's paired ratios (the summary's, per store and case; the reference store's
    own, 1 by construction, left out) inside the other run's 95% intervals, and the share of
    their intervals that overlap; the same for the recommendation's scores. A 95% interval
    that means what it says holds the next run's value about as often as two equally noisy
    honest estimates allow (about 83% inside)."""
    summaries = []
    for run in runs:
        s = pd.read_csv(run["summary_csv"], keep_default_na=False, na_values=[""])
        s = s[s["ratio_ci_low"].notna() & ~((s["ratio_ci_low"] == 1) & (s["ratio_ci_high"] == 1))]
        summaries.append(s)
    tables = [pd.read_csv(run["recommendation_csv"]) for run in runs]
    tables = [t[~t["is_reference"].astype(bool)] for t in tables]
    out: dict = {"runs": len(runs), "by_filesystem": {}}
    filesystems = sorted(set().union(*(set(s["filesystem"]) for s in summaries)))
    for fs in filesystems:
        pairs = []
        for i, a in enumerate(summaries):
            for j, b in enumerate(summaries):
                if i == j:
                    continue
                inside, overlap, n = _coverage(
                    a[a["filesystem"] == fs],
                    b[b["filesystem"] == fs],
                    "ratio_to_contiguous",
                    "ratio_ci_low",
                    "ratio_ci_high",
                    RATIO_KEYS,
                )
                ta, tb = tables[i], tables[j]
                score_inside, score_overlap, _ = _coverage(
                    ta[ta["filesystem"] == fs],
                    tb[tb["filesystem"] == fs],
                    "score",
                    "score_ci_low",
                    "score_ci_high",
                    ["filesystem", "backend", "layout_id", "compression"],
                )
                pairs.append(
                    {
                        "pair": [i, j],
                        "inside": inside,
                        "overlap": overlap,
                        "ratios": n,
                        "score_inside": score_inside,
                        "score_overlap": score_overlap,
                    }
                )
        figures = {
            k: float(np.nanmedian([p[k] for p in pairs]))
            for k in ("inside", "overlap", "score_inside", "score_overlap")
        }
        figures.update({f"{k}_min": float(np.nanmin([p[k] for p in pairs])) for k in ("inside", "overlap")})
        out["by_filesystem"][fs] = {**figures, "pairs": pairs}
        out[f"inside_{fs}"] = figures["inside"]
        out[f"overlap_{fs}"] = figures["overlap"]
        out[f"score_inside_{fs}"] = figures["score_inside"]
    return out


def calibration_lines(results: dict) -> list[str]:
    """The calibration's detail beside its goals: range over the pairs, and the scores'."""
    lines = []
    for fs, f in results.get("calibration", {}).get("by_filesystem", {}).items():
        lines.append(
            f"      (not a goal) {fs}: ratios inside another run's interval, lowest pair {f['inside_min']:.3f};"
            f" intervals overlapping, lowest pair {f['overlap_min']:.3f}; the recommendation's scores inside"
            f" another run's interval, median {f['score_inside']:.3f}, overlapping {f['score_overlap']:.3f}"
        )
    return lines


# (section, key, band, what): a ratio's median must lie in the band [low, high].
GOALS = [
    ("generation", "ratio_contiguous_vs_raw", (0.7, None), "fast contiguous write vs raw sequential write"),
    ("generation", "ratio_chunked_vs_raw", (0.7, None), "fast chunked (uncompressed) write vs raw sequential write"),
    ("generation", "ratio_gzip_fast_vs_filter_pipeline", (1.8, None), "threaded gzip-4 vs HDF5 filter pipeline"),
    (
        "generation",
        "ratio_zarr_fast_vs_zarr_python",
        (1.3, None),
        "Zarr Blosc store: numcodecs in threads + direct chunk files vs zarr-python's own writer",
    ),
    ("harness", "ratio_harness_vs_bare", (None, 1.10), "timed query vs bare H5Dread (warm, 256-byte reads)"),
    (
        "harness",
        "ratio_cold_device_vs_stored",
        (0.9, 1.5),
        "cold reads, readahead off: device bytes vs stored bytes of the 64 KiB chunks touched",
    ),
    *(
        ("replay", f"ratio_replay_vs_program_{mode}", (0.8, 1.25), f"{what}: replayed recording vs the program's reads")
        for mode, what in (("cold", "cold first read"), ("warm", "warm"))
    ),
    ("dag", "ratio_dry_run_vs_15s", (None, 1.0), "379-store grid (bench/grid.yaml) dry run vs 15 s"),
    ("sweep", "snakemake_overhead_share", (None, 0.15), "Snakemake's share of the default sweep's wall time"),
    ("sweep", "ratio_peak_disk_vs_plan", (None, 1.0), "measured peak disk vs planned bound"),
    *(
        ("plan", f"ratio_plan_{kind}_{stem}", (0.8, 1.25), f"{what}: planned {measured} vs measured")
        for stem, what in (
            ("config", "the default sweep"),
            ("write_variants", "tests/configs/write-variants.yaml"),
            ("read_variants", "tests/configs/read-variants.yaml"),
        )
        for kind, measured in (("wall", "wall time"), ("job", "job time"))
    ),
    *(
        ("calibration", f"{kind}_{fs}", (low, None), f"four runs back to back, {fs}: {what}")
        for fs in ("disk", "tmpfs")
        for kind, low, what in (
            ("inside", 0.80, "median share of one run's paired ratios inside another run's 95% interval"),
            ("overlap", 0.95, "median share of two runs' 95% intervals that overlap"),
        )
    ),
    ("racing", "ratio_reads_race_vs_off", (None, 1 / 3), "the default sweep's reads with racing over without"),
    (
        "racing",
        "share_recommendations_agree_race_vs_off",
        (1.0, None),
        "racing: filesystems whose recommendation is tied with racing off's",
    ),
    (
        "racing",
        "share_groups_best_agree",
        (1.0, None),
        "racing, two runs back to back: groups whose best layouts agree",
    ),
    (
        "racing",
        "ratio_wall_vs_naive",
        (None, 1.2),
        "the default sweep's wall time over the careful loop's (interleaved pairs)",
    ),
    ("sweep", "overlapping_timed_windows", (0, 0), "timed windows of the default sweep overlapping another"),
    ("sweep", "timed_window_share_of_wall", (0.7, None), "share of the default sweep's wall time in timed windows"),
    (
        "side_by_side",
        "overlapping_timed_windows",
        (0, 0),
        "timed windows of two default sweeps run side by side overlapping another",
    ),
    (
        "reproducibility",
        "share_groups_best_agree",
        (1.0, None),
        "two runs side by side: groups whose best layouts agree",
    ),
    (
        "reproducibility",
        "median_deviation_of_medians",
        (None, 0.035),
        "two runs side by side: median deviation of a median",
    ),
    (
        "reproducibility",
        "min_spearman_spread_groups",
        (0.9, None),
        "two runs side by side: lowest Spearman of spread groups",
    ),
    (
        "reproducibility",
        "share_recommendations_agree",
        (1.0, None),
        "two runs side by side: filesystems where each run's recommendation is tied with the other's fastest",
    ),
]


def _median_of(value) -> float:
    return value["median"] if isinstance(value, dict) else value


def verdicts(results: dict) -> list[str]:
    lines = []
    for section, key, (low, high), what in GOALS:
        value = results.get(section, {}).get(key)
        if value is None:
            continue
        median = _median_of(value)
        ok = (low is None or median >= low) and (high is None or median <= high)
        band = f">= {low}" if high is None else f"<= {high}" if low is None else f"in [{low}, {high}]"
        shown = f"{median:.3f}"
        if isinstance(value, dict):
            shown += f" (min {value['min']:.3f}, max {value['max']:.3f}, {len(value['samples'])} samples)"
        lines.append(f"{'PASS' if ok else 'MISS'}  {what}: {shown} (goal {band})")
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


def append_run(table: Path, run: str, verdicts: list[str]) -> None:
    """One row of ``table`` (bench/results/runs.csv) per run: each goal's value and verdict."""
    import csv

    row = {"run": run}
    for line in verdicts:
        found = re.match(r"(PASS|MISS|FAIL)\s+(.*?): ([-0-9.]+)", line)
        if found:
            row[found.group(2)] = f"{found.group(3)} {found.group(1)}"
    rows = list(csv.DictReader(table.open())) if table.exists() else []
    columns = list(dict.fromkeys(["run", *(k for r in rows for k in r), *row]))
    with table.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows([*rows, row])
