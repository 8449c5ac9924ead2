"""The goals the bench checks, their verdicts, the environment a run records, and the table of
runs."""

from __future__ import annotations

import os
import platform
import re
import socket
import time
from pathlib import Path

import h5py

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
            ("subsetting", "config/studies/users-guide/subsetting.yaml"),
            ("s3_plan", "bench/s3-plan.yaml (SeaweedFS, 0 and 20 ms)"),
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
        (None, 0.7),
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
