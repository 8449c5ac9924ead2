"""A small run of the benchmark code (the real one is `make bench`, too slow for tests)."""

import json
import subprocess
import sys

from conftest import REPO

from h5sweep.bench import GOALS, verdicts


def test_quick_bench_measures_every_ratio_and_writes_json(tmp_path):
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
    for key in ["ratio_contiguous_vs_raw", "ratio_chunked_vs_raw", "ratio_gzip_fast_vs_filter_pipeline"]:
        assert gen[key] > 0
    assert harness["ratio_harness_vs_bare"] > 0 and harness["cold_stored_bytes_touched"] > 0
    assert len(results["verdicts"]) == 5 and all(v.startswith(("PASS", "MISS")) for v in results["verdicts"])
    assert "ratio" in proc.stdout and "written" in proc.stdout


def test_verdicts_compare_each_ratio_with_its_goal():
    lines = verdicts({"generation": {"ratio_chunked_vs_raw": 0.5}, "dag": {"ratio_dry_run_vs_15s": 0.2}})
    assert lines == [
        "MISS  fast chunked (uncompressed) write vs raw sequential write: 0.500 (goal >= 0.7)",
        "PASS  paper.yaml dry run vs 15 s: 0.200 (goal <= 1.0)",
    ]
    assert len(GOALS) == 8
