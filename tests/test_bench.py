"""A small run of the benchmark code (the real one is `make bench`, too slow for tests)."""

import json
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))  # the bench's code lives outside the package
from agreement import calibration, drift_lines, reproducibility, shift_along_the_pass  # noqa: E402
from goals import GOALS, verdicts  # noqa: E402
from orchestration import plan_figures, plan_ratios  # noqa: E402
from probe import PROBE_BYTES  # noqa: E402

from h5sweep import host


@pytest.mark.heavy
def test_quick_bench_measures_every_ratio_and_writes_json(tmp_path, machine_delay):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            "bench/run.py",
            "--quick",
            "--shape",
            "20",
            "20",
            "5000",
            "--dir",
            str(tmp_path),
            "--out",
            str(out),
            "--samples",
            "2",
            "--settle-s",
            "0.2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(out.read_text())
    gen, harness = results["generation"], results["harness"]
    assert gen["bytes"] == 20 * 20 * 5000 * 2 and gen["fast_gzip4_reads_back_identical"]
    assert gen["settle_s"] == 0.2
    for key in [
        "ratio_contiguous_vs_raw",
        "ratio_chunked_vs_raw",
        "ratio_gzip_fast_vs_filter_pipeline",
        "ratio_zarr_fast_vs_zarr_python",
    ]:
        assert len(gen[key]["samples"]) == 2 and gen[key]["min"] <= gen[key]["median"] <= gen[key]["max"]
    assert len(harness["ratio_harness_vs_bare"]["samples"]) == 2 and harness["cold_stored_bytes_touched"] > 0
    assert harness["cold_cache_states"] in (["cold"], ["memory"])  # every read a first access
    replay = results["replay"]
    assert replay["reads"] == 55 and len(replay["ratio_replay_vs_program_cold"]["samples"]) == 2
    assert len(results["verdicts"]) == 8 and all(v.startswith(("PASS", "MISS")) for v in results["verdicts"])
    assert "2 samples" in proc.stdout and "written" in proc.stdout
    # freed pages were held for the bench where this machine reports them sooner, and the
    # delay was put back afterwards (h5sweep.host)
    reporting = results["environment"]["free_page_reporting"]
    assert reporting["before_ms"] == host.delay_ms()
    assert reporting["during_ms"] == (host.STEADY_DELAY_MS if reporting["changed"] else reporting["before_ms"])
    # the machine probe ran once: its cold read fetched the whole file from the device (or,
    # on a filesystem that cannot evict, nothing), and its file is gone
    (probe,) = results["machine_probe"]["before_first_run"]
    assert probe["samples"] == 2 and probe["probe_bytes"] == PROBE_BYTES
    if probe["cold_read_cache_states"] == ["cold"]:
        assert PROBE_BYTES <= probe["cold_read_device_bytes"] <= 1.1 * PROBE_BYTES
    else:
        assert probe["cold_read_cache_states"] == ["memory"] and probe["cold_read_device_bytes"] == 0
    assert not (tmp_path / "machine-probe.bin").exists()


def test_a_bench_stopped_by_sigterm_puts_the_delay_back(tmp_path, machine_delay):
    before = host.delay_ms()
    bench = subprocess.Popen(
        [sys.executable, "bench/run.py", "--quick", "--dir", str(tmp_path), "--out", str(tmp_path / "b.json")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        while not (lines and lines[-1].startswith("h5sweep bench on")):  # measuring, delay held
            lines.append(bench.stdout.readline())
            assert lines[-1], "".join(lines)
        held = host.delay_ms()
        bench.terminate()
        assert bench.wait(timeout=120) == 128 + signal.SIGTERM
    finally:
        bench.kill()
    assert host.delay_ms() == before and not host.held_record().exists()
    if any(line.startswith("free page reporting held") for line in lines):
        assert held == host.STEADY_DELAY_MS != before
    assert not (tmp_path / "b.json").exists()


def test_verdicts_compare_each_ratio_with_its_goal():
    lines = verdicts(
        {
            "generation": {"ratio_chunked_vs_raw": {"median": 0.5, "min": 0.4, "max": 0.9, "samples": [0.4, 0.5, 0.9]}},
            "harness": {"ratio_cold_device_vs_stored": {"median": 6.2, "min": 6, "max": 7, "samples": [6, 6.2, 7]}},
            "dag": {"ratio_dry_run_vs_15s": 0.2},
        }
    )
    assert lines == [
        "MISS  fast chunked (uncompressed) write vs raw sequential write: 0.500 (min 0.400, max 0.900, 3 samples)"
        " (goal >= 0.7)",
        # too high is as wrong as too low: readahead's over-reading misses the band
        "MISS  cold reads, readahead off: device bytes vs stored bytes of the 64 KiB chunks touched: 6.200"
        " (min 6.000, max 7.000, 3 samples) (goal in [0.9, 1.5])",
        "PASS  379-store grid (bench/grid.yaml) dry run vs 15 s: 0.200 (goal <= 1.0)",
    ]
    # the recommendation agreement, the fast Zarr path's goal, the side-by-side windows, the
    # plan's wall and job time for five configs (a study's, one on an object store), the calibration (2 per
    # filesystem), the replay (2), racing (4) added
    assert len(GOALS) == 36
    assert verdicts({"side_by_side": {"overlapping_timed_windows": 1}}) == [
        "MISS  timed windows of two default sweeps run side by side overlapping another: 1.000 (goal in [0, 0])"
    ]


def test_the_plan_is_compared_with_the_jobs_work_and_the_sweeps_wall_time():
    """A job's time waiting for another job's timed window is not its work: the plan counts
    it in the wall time, where the windows run one at a time."""
    run = {"sweep_wall_s": 200.0, "sweep_job_seconds": 400.0, "window_wait_s_total": 80.0}
    figures = plan_figures(run, {"planned_wall_s": 220.0, "planned_job_s": 288.0})
    assert figures["measured_job_s"] == 320.0
    assert figures["ratio_plan_wall"] == pytest.approx(1.1) and figures["ratio_plan_job"] == pytest.approx(0.9)
    ratios = plan_ratios({"config": figures, "write-variants": {**figures, "ratio_plan_job": 1.3}})
    assert ratios["ratio_plan_job_write_variants"] == 1.3
    lines = verdicts({"plan": ratios})
    assert "PASS  the default sweep: planned wall time vs measured: 1.100 (goal in [0.8, 1.25])" in lines
    assert "MISS  tests/configs/write-variants.yaml: planned job time vs measured: 1.300 (goal in [0.8, 1.25])" in lines


def test_reproducibility_compares_best_layouts_medians_and_ranks():
    def summary(medians, width=0.01):
        return pd.DataFrame(
            [
                {
                    "filesystem": "disk",
                    "case": "slice",
                    "compression": "none",
                    "layout": "contiguous" if lid == "contiguous" else "chunked",
                    "layout_id": lid,
                    "primary": True,
                    "ratio_to_contiguous": m / medians["contiguous"],
                    "median_s": m,
                    "median_ci_low_s": m - width,
                    "median_ci_high_s": m + width,
                }
                for lid, m in medians.items()
            ]
        )

    a = summary({"contiguous": 1.0, "chunked-4x4x256": 0.50, "chunked-2x2x256": 0.80})
    same = reproducibility(a, summary({"contiguous": 1.02, "chunked-4x4x256": 0.51, "chunked-2x2x256": 0.79}))
    assert (same["groups"], same["groups_best_agree"], same["min_spearman_spread_groups"]) == (1, 1, 1.0)
    assert same["median_deviation_of_medians"] == pytest.approx(2 * 0.01 / 1.01 * 0 + 0.02 / 1.01, rel=0.3)
    ratios = [(0.5, 0.51 / 1.02), (0.8, 0.79 / 1.02)]
    expected = np.median([abs(x - y) / ((x + y) / 2) for x, y in ratios])
    assert same["median_deviation_of_ratios"] == pytest.approx(expected)
    flipped = reproducibility(a, summary({"contiguous": 1.0, "chunked-4x4x256": 0.80, "chunked-2x2x256": 0.50}))
    assert flipped["groups_best_agree"] == 0 and flipped["min_spearman_spread_groups"] == pytest.approx(0.5)
    # the flip reverses a difference both runs called clear (intervals 0.49-0.51 and 0.79-0.81)
    assert (flipped["pairs_spread_groups"], flipped["discordant_pairs_spread_groups"]) == (3, 1)
    assert flipped["contradicted_pairs_spread_groups"] == 1
    assert same["discordant_pairs_spread_groups"] == same["contradicted_pairs_spread_groups"] == 0
    # two layouts 1% apart with overlapping intervals swap: ordered differently, not contradicted
    near = summary({"contiguous": 1.0, "chunked-4x4x256": 0.50, "chunked-2x2x256": 0.505})
    swapped = reproducibility(near, summary({"contiguous": 1.0, "chunked-4x4x256": 0.505, "chunked-2x2x256": 0.50}))
    assert swapped["detail"][0]["discordant_pairs"] == 1 and swapped["detail"][0]["contradicted_pairs"] == 0
    assert drift_lines({"reproducibility": {**swapped, "window_steal_s_total": [0.0, 0.0]}})[1] == (
        "      (not a goal) layouts ordered differently by the two runs, in the groups Spearman is computed"
        " for: 1 of 3 pairs, 0 of them with disjoint median intervals in either run; lowest-Spearman group"
        " disk / slice / none: 1 of 3 pairs, 0 with disjoint intervals"
    )
    # a second run 20% faster in every layout: the deviation goal misses, the ranks agree, and
    # the drift line says the filesystem moved as a whole (nothing left once the shift is out)
    faster = reproducibility(a, summary({"contiguous": 0.8, "chunked-4x4x256": 0.40, "chunked-2x2x256": 0.64}))
    assert faster["median_deviation_of_medians"] == pytest.approx(0.2 / 0.9)
    assert faster["min_spearman_spread_groups"] == 1.0
    assert faster["run_shift_by_filesystem"] == {"disk": pytest.approx(0.8)}
    assert faster["median_deviation_after_run_shift"] == pytest.approx(0.0)
    line = drift_lines(
        {
            "reproducibility": {**faster, "window_steal_s_total": [1.4, 0.11]},
        }
    )
    assert line == [
        "      (not a goal) second run / first, median per filesystem: disk 0.800; median deviation with that"
        " shift taken out: 0.000; CPU time stolen by the hypervisor inside timed windows: 1.40 s and 0.11 s",
        "      (not a goal) layouts ordered differently by the two runs, in the groups Spearman is computed"
        " for: 0 of 3 pairs, 0 of them with disjoint median intervals in either run; lowest-Spearman group"
        " disk / slice / none: 0 of 3 pairs, 0 with disjoint intervals",
    ]
    assert drift_lines({"dag": {}}) == []  # --quick: no second run, nothing to say

    # with the machine probe around the runs: memory 10% slower after the second run, so the
    # second run saw (1.0 + 1.1) / (1.0 + 1.0); one back-to-back probe 20% slower than another
    def probed(memory, spread=1.0):
        return [
            {"memory_copy_s": memory, "inflate_s": 1.0, "cold_read_s": 1.0},
            {"memory_copy_s": memory * spread, "inflate_s": 1.0, "cold_read_s": 1.0},
            {"memory_copy_s": memory, "inflate_s": 1.0, "cold_read_s": 1.0},
        ]

    probes = {"before_first_run": probed(1.0), "between_runs": probed(1.0, 1.2), "after_second_run": probed(1.1)}
    lines = drift_lines({"reproducibility": faster, "machine_probe": probes})
    assert len(lines) == 3 and lines[2] == (
        "      (not a goal) fixed work timed before, between and after the runs, second / first: memory copy"
        " 1.050, inflate 1.000, disk cold read 1.000; widest max / min of probes taken back to back:"
        " memory copy 1.200, inflate 1.000, disk cold read 1.000"
    )
    # the sweep run alone against one of the pair run side by side: said, not judged
    lines = drift_lines({"reproducibility": faster, "reproducibility_in_sequence": flipped})
    assert len(lines) == 3 and lines[2].startswith(
        "      (not a goal) the sweep run alone against the first of the pair, minutes apart: best layouts"
        " agree in 0 of 1 groups, median deviation "
    )
    assert lines[2].endswith(f"; second / first per filesystem: disk {flipped['run_shift_by_filesystem']['disk']:.3f}")
    assert not any("alone" in line for line in verdicts({"reproducibility_in_sequence": flipped}))
    # layouts moving apart stay visible once the shift is out
    assert flipped["run_shift_by_filesystem"] == {"disk": 1.0}
    assert flipped["median_deviation_after_run_shift"] == pytest.approx(0.3 / 0.65)


def test_recommendations_agree_when_each_choice_is_tied_with_the_others_fastest():
    from agreement import recommendations_agree

    def table(recommended, tied):
        return pd.DataFrame(
            [
                {
                    "filesystem": "disk",
                    "backend": "hdf5",
                    "layout_id": lid,
                    "compression": "none",
                    "recommended": lid == recommended,
                    "tied_with_best": lid in tied,
                }
                for lid in ("contiguous", "chunked-4x4x256", "chunked-2x2x256")
            ]
        )

    a = table("chunked-4x4x256", {"chunked-4x4x256", "contiguous"})
    agree = recommendations_agree(a, table("contiguous", {"contiguous", "chunked-4x4x256"}))
    assert agree["share_recommendations_agree"] == 1.0 and agree["recommendation_groups"] == 1
    differ = recommendations_agree(a, table("chunked-2x2x256", {"chunked-2x2x256"}))
    assert differ["share_recommendations_agree"] == 0.0


def test_the_shift_along_the_pass_tells_runs_that_differ_as_wholes_from_drift_within_them():
    def reads(factor_at):  # one read per selection and layout, in reading order; writes ignored
        rows = [{"filesystem": "disk", "case": "write", "layout_id": "contiguous", "repeat": 0, "seconds": 9.0}]
        for i in range(40):
            for layout_id in ("contiguous", "chunked-4x4x256"):
                seconds = (1 + i % 7) * 0.01 * factor_at(i)  # selections differ, each paired
                rows.append({"filesystem": "disk", "case": "spectra", "layout_id": layout_id, "repeat": i})
                rows[-1].update(seconds=seconds, window_opened_at=100.0 + i // 20)
        return pd.DataFrame(rows)

    first = reads(lambda i: 1.0)
    level = shift_along_the_pass(first, reads(lambda i: 1.05))["shift_along_the_pass"]["disk"]
    assert level == {"blocks": 10, "min": pytest.approx(1.05), "max": pytest.approx(1.05)}
    # the second run slowing down along its pass: stretches of 4 selections, 1.0075 up to 1.1875
    ramp = shift_along_the_pass(first, reads(lambda i: 1.0 + 0.005 * i))["shift_along_the_pass"]["disk"]
    assert (ramp["min"], ramp["max"]) == (pytest.approx(1.0075, abs=0.001), pytest.approx(1.1875, abs=0.001))
    lines = drift_lines(
        {
            "reproducibility": {
                "run_shift_by_filesystem": {"disk": 1.05},
                "median_deviation_after_run_shift": 0.0,
                "shift_along_the_pass": {"disk": level},
            }
        }
    )
    assert lines[1].endswith("lowest-highest: disk 1.050-1.050")


def test_calibration_counts_ratios_inside_another_runs_interval_and_overlapping_intervals(tmp_path):
    """Three runs: the second's ratios sit inside the first's intervals, the third's do not
    (and its intervals miss); per filesystem, each ordered pair counted once."""
    runs = []
    for k, (ratio, half) in enumerate([(0.5, 0.05), (0.52, 0.05), (0.8, 0.01)]):
        rows = []
        for layout in ("contiguous", "chunked-4x4x256"):
            is_ref = layout == "contiguous"
            rows.append(
                {
                    "filesystem": "disk",
                    "backend": "hdf5",
                    "layout_id": layout,
                    "compression": "none",
                    "case": "slice",
                    "variant": "random",
                    "cache_state": "cold",
                    "ratio_to_contiguous": 1.0 if is_ref else ratio,
                    "ratio_ci_low": 1.0 if is_ref else ratio - half,
                    "ratio_ci_high": 1.0 if is_ref else ratio + half,
                }
            )
        summary = pd.DataFrame(rows)
        table = summary.rename(
            columns={"ratio_to_contiguous": "score", "ratio_ci_low": "score_ci_low", "ratio_ci_high": "score_ci_high"}
        ).assign(is_reference=lambda t: t["layout_id"] == "contiguous")
        summary.to_csv(tmp_path / f"summary-{k}.csv", index=False)
        table.to_csv(tmp_path / f"recommendation-{k}.csv", index=False)
        runs.append(
            {"summary_csv": tmp_path / f"summary-{k}.csv", "recommendation_csv": tmp_path / f"recommendation-{k}.csv"}
        )
    found = calibration(runs)
    pairs = found["by_filesystem"]["disk"]["pairs"]
    assert len(pairs) == 6 and all(p["ratios"] == 1 for p in pairs)  # the reference's own ratio left out
    inside = {tuple(p["pair"]): p["inside"] for p in pairs}
    assert inside[(0, 1)] == inside[(1, 0)] == 1.0 and inside[(0, 2)] == inside[(2, 1)] == 0.0
    overlap = {tuple(p["pair"]): p["overlap"] for p in pairs}
    assert overlap[(0, 1)] == 1.0 and overlap[(1, 2)] == 0.0
    assert found["inside_disk"] == pytest.approx(0.0) and found["overlap_disk"] == pytest.approx(0.0)


def test_calibration_counts_a_raced_out_row_by_its_one_sided_bound(tmp_path):
    """A raced-out row has no two-sided interval: it counts as held where the other run's store
    is at least as far behind its best as the bound says, and every row is counted."""
    runs = []
    for k, (slow_mean, bound) in enumerate([(0.04, 3.0), (0.02, 1.5)]):
        rows = []
        for layout, mean, raced in (
            ("contiguous", 0.01, None),
            ("chunked-a", 0.011, None),
            ("chunked-b", slow_mean, 3),
        ):
            rows.append(
                {
                    "filesystem": "disk",
                    "backend": "hdf5",
                    "layout_id": layout,
                    "compression": "none",
                    "case": "slice",
                    "variant": "",
                    "cache_state": "cold",
                    "repeats": 15 if raced is None else 3,
                    "mean_s": mean,
                    "ratio_to_contiguous": mean / 0.01,
                    "ratio_ci_low": np.nan if raced else mean / 0.01 - 0.2 * (layout != "contiguous"),
                    "ratio_ci_high": np.nan if raced else mean / 0.01 + 0.2 * (layout != "contiguous"),
                    "raced_out_round": raced,
                    "raced_out_at_least": bound if raced else np.nan,
                }
            )
        summary = pd.DataFrame(rows)
        summary.to_csv(tmp_path / f"summary-{k}.csv", index=False)
        table = pd.DataFrame(
            [{"filesystem": "disk", "backend": "hdf5", "layout_id": "contiguous", "compression": "none"}]
        ).assign(score=1.0, score_ci_low=1.0, score_ci_high=1.0, is_reference=True)
        table.to_csv(tmp_path / f"recommendation-{k}.csv", index=False)
        runs.append(
            {"summary_csv": tmp_path / f"summary-{k}.csv", "recommendation_csv": tmp_path / f"recommendation-{k}.csv"}
        )
    pairs = {tuple(p["pair"]): p for p in calibration(runs)["by_filesystem"]["disk"]["pairs"]}
    # run 0's store is 4x its best, above run 1's bound (1.5); run 1's is 2x, below run 0's (3.0)
    assert pairs[(0, 1)]["one_sided"] == 1 and pairs[(0, 1)]["one_sided_held"] == 1
    assert pairs[(1, 0)]["one_sided_held"] == 0
    assert pairs[(0, 1)]["ratios"] == 2 and pairs[(0, 1)]["two_sided"] == 1  # every row counted
    assert pairs[(0, 1)]["inside"] == 1.0 and pairs[(1, 0)]["inside"] == 0.5


def test_the_loops_own_verdict_is_compared_over_every_pair_it_ran():
    """bench/run.py runs the loop NAIVE_PAIRS (3) times: a group agrees only where every run
    has the same best layout; the Spearman correlation is the lowest of run against next run."""
    import naive

    def run(fast, slow):
        return {
            "medians": {"disk / slice / none": {"a": fast, "b": slow, "c": 3.0}, "disk / spectra / none": {"a": 1.0}}
        }

    same = naive.loops_agree(run(1.0, 2.0), run(1.1, 2.1), run(0.9, 2.2))
    assert same["groups"] == 2 and same["share_groups_best_agree"] == 1.0 and same["min_spearman"] == 1.0
    third_differs = naive.loops_agree(run(1.0, 2.0), run(1.1, 2.1), run(2.5, 2.2))
    lowest_correlation = third_differs["min_spearman"]
    assert third_differs["share_groups_best_agree"] == 0.5 and lowest_correlation < 1.0
