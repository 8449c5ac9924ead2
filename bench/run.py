"""`make bench`: measure h5sweep's performance goals as ratios, in one run.

    python bench/run.py [--dir DIR] [--shape X Y Z] [--quick | --plan-only] [--out FILE]

Prints each goal's ratio (median, min and max of its interleaved samples) and the raw
figures behind it, and writes them as JSON to bench/results/<host>-<date>.json. --quick skips
the DAG and the two runs of the default sweep (for the smoke test); --plan-only runs only the
plan's goals (the default sweep alone, two test configs, a study config and an S3 config, each
beside its plan: about 15 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

import naive  # bench/naive.py
import replay  # bench/replay.py

# the bench's modules, beside this script
from agreement import (
    CALIBRATION_RUNS,
    NAIVE_PAIRS,
    calibration,
    calibration_lines,
    drift_lines,
    paired_ratios,
    racing_figures,
    runs_agree,
)
from common import SAMPLES, SETTLE_S
from generation import bench_generation
from goals import append_run, environment, verdicts
from harness import bench_harness
from orchestration import (
    bench_dag,
    bench_plans,
    bench_sweep,
    bench_sweeps_side_by_side,
    plan_figures,
    plan_ratios,
    planned,
    windows_across,
)
from probe import PROBE_POINTS, PROBES_PER_POINT, machine_probe, probe_figures, remove_probe_file

from h5sweep import host

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", default=str(REPO / "results" / "bench-scratch"), help="directory on the disk under test"
    )
    parser.add_argument("--shape", type=int, nargs=3, default=[100, 100, 50_000], help="cube for the write benchmarks")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for compression")
    parser.add_argument("--config", default=str(REPO / "config" / "config.yaml"), help="sweep run for goals 3 and 4")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="skip the DAG and sweep benchmarks")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="only the plan's goals: the default sweep, two test configs, a study config and an S3 config",
    )
    parser.add_argument(
        "--calibration-only",
        action="store_true",
        help="only the intervals' calibration: four runs of the default sweep back to back (about 13 minutes)",
    )
    parser.add_argument(
        "--racing-only",
        action="store_true",
        help="only racing's goals and the careful loop: the loop and the sweep in turn 3 times, once without racing",
    )
    parser.add_argument("--samples", type=int, default=SAMPLES, help="interleaved samples per ratio")
    parser.add_argument(
        "--settle-s", type=float, default=SETTLE_S, help="idle seconds between one write contender and the next"
    )
    parser.add_argument(
        "--keep-page-reporting",
        action="store_true",
        help="leave the machine's free page reporting as it is (default: delay it during the bench, if root)",
    )
    parser.add_argument("--out", default=None, help="JSON file (default: bench/results/<host>-<date>.json)")
    args = parser.parse_args(argv)
    # a stopped bench (SIGTERM: a batch system's time limit, `kill`) leaves through `finally`,
    # which puts the machine's free page reporting back
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    if args.keep_page_reporting:
        held = contextlib.nullcontext({"changed": False, "kept": True})
    else:
        held = host.reporting_delayed()
    with held as reporting:
        if reporting["changed"]:
            print(
                f"free page reporting held for {reporting['during_ms']} ms during the bench "
                f"(was {reporting['before_ms']} ms; restored afterwards; see h5sweep.host)",
                flush=True,
            )
        results = measure(args)
    results["environment"]["free_page_reporting"] = reporting
    run = f"{socket.gethostname()}-{time.strftime('%Y%m%d-%H%M%S')}"
    if args.out:
        out = Path(args.out)
    elif args.plan_only or args.calibration_only or args.racing_only:  # a row of the table; the latest full run stays
        out = Path(args.dir) / f"{run}.json"
        append_run(REPO / "bench" / "results" / "runs.csv", run, results["verdicts"])
    else:  # the latest run of each machine, and one table of every run's verdicts
        results_dir = REPO / "bench" / "results"
        for older in results_dir.glob(f"{socket.gethostname()}-*.json"):
            older.unlink()
        out = results_dir / f"{run}.json"
        append_run(results_dir / "runs.csv", run, results["verdicts"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str))
    print(f"written {out}")
    return 0


def measure(args) -> dict:
    """Every goal's samples and verdicts."""
    os.makedirs(args.dir, exist_ok=True)
    shape = tuple(args.shape)
    results: dict = {"environment": environment(), "shape": list(shape)}
    if args.calibration_only:
        print(f"h5sweep bench of the intervals on {socket.gethostname()}, scratch {args.dir}", flush=True)
        results["calibration"] = calibrate(args)
        results["verdicts"] = [line for line in verdicts(results) if "back to back" in line]
        results["verdicts"] += calibration_lines(results)
        print("\n".join(results["verdicts"]))
        return results
    if args.racing_only:
        print(f"h5sweep bench of racing on {socket.gethostname()}, scratch {args.dir}", flush=True)
        results["racing"] = racing(args)
        results["verdicts"] = [line for line in verdicts(results) if "racing" in line or "careful loop" in line]
        print("\n".join(results["verdicts"]))
        return results
    if args.plan_only:
        print(f"h5sweep bench of the plan on {socket.gethostname()}, scratch {args.dir}", flush=True)
        alone = Path(args.dir) / "sweep-a"
        results["sweep"] = bench_sweep(REPO, alone, Path(args.config), args.cores, "bench-a")
        plan_goals(args, results, alone)
        results["verdicts"] = [line for line in verdicts(results) if "planned" in line]
        print("\n".join(results["verdicts"]))
        return results
    print(f"h5sweep bench on {socket.gethostname()}: cube {shape}, scratch {args.dir}", flush=True)
    results["generation"] = bench_generation(args.dir, shape, args.threads, args.samples, args.settle_s)
    print(json.dumps(results["generation"], indent=2), flush=True)
    results["harness"] = bench_harness(args.dir, (shape[0], shape[1], min(shape[2], 20_000)), samples=args.samples)
    print(json.dumps(results["harness"], indent=2), flush=True)
    results["replay"] = replay.bench_replay(args.dir, (shape[0], shape[1], min(shape[2], 5_000)), args.samples)
    print(json.dumps(results["replay"], indent=2), flush=True)
    if not args.quick:
        results["dag"] = bench_dag(REPO)
        print(json.dumps(results["dag"], indent=2), flush=True)
        # the default sweep alone (its wall time, windows and disk), then twice side by side
        # (each timed window as quiet as alone: the node's lock serialises them), so that the
        # two runs compared meet the machine in the same minutes; a fixed piece of work timed
        # before, between and after says how the machine moved
        probes = results["machine_probe"] = {}

        def probe(point: str) -> None:
            probes[point] = [machine_probe(args.dir) for _ in range(PROBES_PER_POINT)]

        def workdir(name: str) -> tuple[Path, str]:
            return Path(args.dir) / f"sweep-{name}", f"bench-{name}"

        config = Path(args.config)
        probe(PROBE_POINTS[0])
        alone, name = workdir("a")
        results["sweep"] = bench_sweep(REPO, alone, config, args.cores, name)
        probe(PROBE_POINTS[1])
        pair = bench_sweeps_side_by_side(REPO, [workdir("b"), workdir("c")], config, args.cores)
        probe(PROBE_POINTS[2])
        results["machine_probe_figures"] = probe_figures(probes)
        print(json.dumps(results["machine_probe_figures"], indent=2), flush=True)
        results["sweeps_side_by_side"] = pair
        results["side_by_side"] = windows_across(pair)
        print(json.dumps([results["sweep"], *pair, results["side_by_side"]], indent=2), flush=True)
        results["reproducibility"] = runs_agree(pair[0], pair[1])
        plan_goals(args, results, alone)
        results["calibration"] = calibrate(args)
        results["racing"] = racing(args)
        # not a goal: the run alone against the first of the pair, minutes apart
        results["reproducibility_in_sequence"] = runs_agree(results["sweep"], pair[0])
        print(json.dumps(results["reproducibility"], indent=2, default=str), flush=True)
    else:  # the probe once, small, so that the smoke test runs it
        results["machine_probe"] = {"before_first_run": [machine_probe(args.dir, samples=args.samples)]}
    remove_probe_file(args.dir)
    lines = verdicts(results) + drift_lines(results) + calibration_lines(results)
    results["verdicts"] = lines
    print("\n".join(lines))
    return results


def racing(args) -> dict:
    """Racing against reading everything, and h5sweep against the careful loop: the loop and
    the default sweep in turn, ``NAIVE_PAIRS`` times (each pair's ratio of wall times; each
    one's verdict over its first two runs), then the sweep once with ``race: false`` (reads
    and recommendation)."""
    import yaml

    config, scratch = Path(args.config), Path(args.dir)
    loops, sweeps = [], []
    for k in range(1, NAIVE_PAIRS + 1):  # interleaved pairs: the loop, then the sweep
        loops.append(naive.naive_loop(config, scratch / f"naive-{k}"))
        print(f"naive loop {k}: {loops[-1]['wall_s']:.0f} s", flush=True)
        sweeps.append(bench_sweep(REPO, scratch / f"sweep-race-{k}", config, args.cores, f"bench-race-{k}"))
        print(f"sweep with racing {k}: {sweeps[-1]['sweep_wall_s']:.0f} s", flush=True)
    off_config = scratch / "race-off.yaml"
    off_config.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), "race": False}))
    off = bench_sweep(REPO, scratch / "sweep-race-off", off_config, args.cores, "bench-race-off")
    print(f"sweep without racing: {off['sweep_wall_s']:.0f} s", flush=True)
    found = racing_figures(sweeps, off)
    found["naive_wall_s"] = [loop["wall_s"] for loop in loops]
    found["ratio_wall_vs_naive"] = paired_ratios([s["sweep_wall_s"] for s in sweeps], found["naive_wall_s"])
    own = naive.loops_agree(*loops)
    found["naive_share_groups_best_agree"], found["naive_min_spearman"] = (
        own["share_groups_best_agree"],
        own["min_spearman"],
    )
    print(json.dumps(found, indent=2, default=str), flush=True)
    return found


def calibrate(args) -> dict:
    """The default sweep run back to back, each run after the last (not side by side): does
    each run's 95% interval hold the next run's value as often as it claims?"""
    runs = []
    for k in range(1, CALIBRATION_RUNS + 1):
        workdir, name = Path(args.dir) / f"sweep-calibration-{k}", f"bench-calibration-{k}"
        runs.append(bench_sweep(REPO, workdir, Path(args.config), args.cores, name))
        print(f"calibration run {k}: {runs[-1]['sweep_wall_s']:.0f} s", flush=True)
    found = calibration(runs)
    print(json.dumps(found, indent=2), flush=True)
    return found


def plan_goals(args, results: dict, alone: Path) -> None:
    """The plan a dry run prints, against the default sweep run alone and each config of
    PLAN_CONFIGS and S3_PLAN_CONFIG (bench/orchestration.py)."""
    plans = {"config": plan_figures(results["sweep"], planned(alone, args.cores))}
    plans.update(bench_plans(REPO, Path(args.dir), args.cores))
    results["plan_detail"] = plans
    results["plan"] = plan_ratios(plans)
    print(json.dumps(plans, indent=2), flush=True)


if __name__ == "__main__":
    sys.exit(main())
