"""One verdict across systems: finished sweeps merged into one comparison (h5sweep.compare)."""

import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest
from conftest import REPO, Workflow, tiny_config

from h5sweep.cases.parallel.compare import parallel_sizes
from h5sweep.compare import CompareError, Run, comparative, compare_runs, markdown, settings_of


def _sweep(tmp_path, name, directory):
    config = tiny_config(tmp_path / name, sweep=name)
    config["filesystems"] = {"fs": str(directory)}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [2, 5], "z": [64, 512]}}
    config["compression"] = ["none"]
    wf = Workflow(tmp_path / name / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    return wf.root / "results" / name


def _compare(*args):
    return subprocess.run(
        [sys.executable, "-m", "h5sweep.compare", *map(str, args)], capture_output=True, text=True, cwd=REPO
    )


@pytest.mark.workflow
def test_two_real_sweeps_on_disk_and_in_memory_give_one_minimax_layout(tmp_path):
    memory = f"/dev/shm/h5sweep-compare-{os.getpid()}" if os.path.isdir("/dev/shm") else tmp_path / "second"
    try:
        disk = _sweep(tmp_path, "alpha", tmp_path / "disk")
        shm = _sweep(tmp_path, "beta", memory)
    finally:
        shutil.rmtree(memory, ignore_errors=True)
    done = _compare(disk, shm, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "out" / "comparison.csv")
    # a filesystem named alike in both sweeps: each system is named by its results folder too
    assert sorted(name.split(":")[0] for name in set(table["system"])) == ["alpha", "beta"]
    if os.path.isdir("/dev/shm"):
        assert "tmpfs" in set(table["fs_type"]) and table["fs_type"].nunique() == 2
    stores = table.drop_duplicates(["backend", "layout_id", "compression", "read_option"])
    assert len(stores) == 5 and stores["minimax"].sum() == 1
    chosen = stores[stores["minimax"]].iloc[0]
    assert chosen["max_regret"] == stores["max_regret"].min() >= 1.0
    for system, rows in table.groupby("system"):  # regret: over the system's best, which has 1
        assert rows["regret"].min() == pytest.approx(1.0) and rows["best_on_system"].sum() >= 1, system
        worst = rows.loc[rows["minimax"], "regret"].iloc[0]
        assert worst <= chosen["max_regret"] + 1e-12
    text = (tmp_path / "out" / "comparison.md").read_text()
    assert text.startswith("# Comparison\n\nChoose **") and chosen["layout_id"] in text.split("\n")[2]
    # the decision across systems: the same choice, its cost on each system, each sweep's own sheet below
    decision = (tmp_path / "out" / "decision.md").read_text()
    head = decision.split("\n## ")[0]
    assert decision.startswith("# Decision across systems\n\n- **Choose ") and chosen["layout_id"] in head
    assert sum(line.startswith("- On ") for line in head.splitlines()) == 2
    assert [line for line in decision.splitlines() if line.startswith("## Sweep ")] == [
        "## Sweep alpha",
        "## Sweep beta",
    ]
    assert decision.count("\n### ") >= 2  # the sweeps' filesystem sections, a level down
    assert (tmp_path / "out" / "findings.md").read_text().count("## ") == 2
    # the comparative findings: the filesystems named alike (`fs`), no role is cast, each says how to name them
    across = pd.read_csv(tmp_path / "out" / "comparative-findings.csv")
    assert len(across) == len(comparative.FINDINGS) and set(across["verdict"]) == {"not measured"}
    assert "--role scratch=NAME" in across.set_index("finding").loc["scratch-faster-selections", "evidence"]
    for figure in ("reference-across-systems.png", "regret-per-system.png"):
        assert (tmp_path / "out" / figure).stat().st_size > 10_000

    # a sweep without one of the layouts: refused naming it, compared on the rest with --intersect
    partial = tmp_path / "partial"
    shutil.copytree(shm, partial)
    for name in ("measurements", "summary"):
        frame = pd.read_parquet(partial / f"{name}.parquet")
        frame[frame["layout_id"] != "chunked-5x5x512"].to_parquet(partial / f"{name}.parquet")
    refused = _compare(disk, partial, "--out", tmp_path / "refused")
    assert refused.returncode == 2 and "stores only in" in refused.stderr and "chunked-5x5x512" in refused.stderr
    assert not (tmp_path / "refused" / "comparison.md").exists()
    shared = _compare(disk, partial, "--out", tmp_path / "shared", "--intersect")
    assert shared.returncode == 0, shared.stderr
    text = (tmp_path / "shared" / "comparison.md").read_text()
    assert "## Left out (--intersect)" in text and "chunked-5x5x512" in text.split("## Left out")[1]
    assert "chunked-5x5x512" not in set(pd.read_csv(tmp_path / "shared" / "comparison.csv")["layout_id"])


def test_a_folder_that_is_not_a_finished_sweep_is_refused_naming_what_it_lacks(tmp_path):
    done = _compare(tmp_path, tmp_path, "--out", tmp_path / "out")
    assert done.returncode == 2 and "no measurements.parquet, summary.parquet" in done.stderr


# Per store, its read time over contiguous's per case: x is the fastest for the mix (case a's
# reads are 10x b's) but 3x the fastest at b; y is never more than 1.8x a case's fastest.
FACTORS = {"contiguous": {"a": 1.0, "b": 1.0}, "chunked-x": {"a": 0.5, "b": 3.0}, "chunked-y": {"a": 0.9, "b": 1.0}}


def _ranked_run(name: str, objective: str | None) -> Run:
    """A finished sweep of two read cases on one filesystem (``name``), with the settings its
    recommendation recorded (``objective``; None: no recommend.json)."""
    rows = [
        {
            "sweep": name,
            "dataset_shape": "10x10x100",
            "host": "node",
            "filesystem": name,
            "fs_type": "ext4",
            "backend": "hdf5",
            "layout_id": layout,
            "compression": "none",
            "case": case,
            "repeat": repeat,
            "selection": f"{case} {repeat}",
            "seconds": (0.01 if case == "a" else 0.001) * (1 + repeat % 5) * factor * (1 + 0.01 * (repeat % 3)),
            "cold_mode": "every",
            "reads_since_open": 0,
            "policy": "random",
        }
        for layout, factors in FACTORS.items()
        for case, factor in factors.items()
        for repeat in range(10)
    ]
    summary = pd.DataFrame(
        {"filesystem": name, "backend": "hdf5", "layout_id": list(FACTORS), "compression": "none", "file_bytes": 1e6}
    )
    recorded = None
    if objective is not None:
        recommend = {"weights": {"a": 1.0, "b": 1.0}, "statistic": "first-access", "objective": objective}
        reference = {"layout_id": "contiguous", "compression": "none"}
        recorded = {"recommend": recommend, "read_cases": ["a", "b"], "policy": "random", "reference": reference}
    run = Run(REPO / name, pd.DataFrame(rows), summary, None, recorded=recorded)
    run.settings = settings_of(run)
    return run


def test_compare_ranks_by_the_sweeps_objective_and_refuses_sweeps_without_one_or_of_two():
    by_time, _, _ = compare_runs([_ranked_run("one", "time"), _ranked_run("two", "time")])
    chosen = by_time[by_time["minimax"]]
    assert set(chosen["layout_id"]) == {"chunked-x"} and by_time.attrs["objective"] == "time"
    # the time objective's regret: the mix's time over the system's best's (one read of each case)
    mix = {layout: 0.01 * f["a"] + 0.001 * f["b"] for layout, f in FACTORS.items()}
    for _, row in by_time.iterrows():
        assert row["regret"] == pytest.approx(mix[row["layout_id"]] / min(mix.values()), rel=0.02)
    worst, _, _ = compare_runs([_ranked_run("one", "worst-case"), _ranked_run("two", "worst-case")])
    assert set(worst.loc[worst["minimax"], "layout_id"]) == {"chunked-y"}
    # the regret of the largest slowdown: y's 1.8x (at a, against x) is the least; x's 3x (at b)
    regret = worst.drop_duplicates("layout_id").set_index("layout_id")["regret"]
    assert regret["chunked-x"] == pytest.approx(3.0 / 1.8, rel=0.02) and regret["chunked-y"] == 1.0
    text = markdown(worst, [], [])
    assert "recommend.objective: worst-case" in text and "largest slowdown against each case's fastest store" in text
    with pytest.raises(CompareError, match="different objectives") as refused:
        compare_runs([_ranked_run("one", "time"), _ranked_run("two", "geometric")])
    assert "one: time" in str(refused.value) and "two: geometric" in str(refused.value)
    with pytest.raises(CompareError, match="no recommend.objective recorded"):
        compare_runs([_ranked_run("one", "time"), _ranked_run("two", None)])


def test_parallel_sweeps_of_two_sizes_give_the_size_ratio_per_mode_and_processes():
    def run(name, filesystem, shape, rates):
        rows = [
            {
                "case": "parallel",
                "filesystem": filesystem,
                "operation": "read",
                "mode": mode,
                "processes": p,
                "chunk_shape": "",
                "units_per_access": 525,
                "bytes_per_s_median": rate,
                "bytes_per_s_ci_low": rate * 0.9,
                "bytes_per_s_ci_high": rate * 1.1,
            }
            for (mode, p), rate in rates.items()
        ]
        measurements = pd.DataFrame({"sweep": [name], "dataset_shape": ["x".join(map(str, shape))]})
        return Run(REPO / name, measurements, pd.DataFrame(rows), None)

    # the shipped pair's filesystems, named differently: one each, so they correspond
    small = run("orig", "disk", (4800, 5000), {("independent", 2): 100e6, ("collective", 2): 120e6})
    large = run("big", "shared", (16000, 32000), {("independent", 2): 300e6, ("collective", 2): 60e6})
    sizes = parallel_sizes([small, large]).set_index("mode")
    assert sizes.loc["independent", "large_over_small"] == pytest.approx(3.0)
    assert sizes.loc["collective", "large_over_small"] == pytest.approx(0.5)
    # the ratio's interval: the larger's lower end over the smaller's upper end, and the reverse
    assert sizes.loc["independent", "large_over_small_ci_low"] == pytest.approx(3.0 * 0.9 / 1.1)
    assert sizes.loc["independent", "large_over_small_ci_high"] == pytest.approx(3.0 * 1.1 / 0.9)
    assert set(sizes["small"]) == {"orig:disk"} and set(sizes["large"]) == {"big:shared"}
    assert parallel_sizes([small, small]).empty  # one size: nothing to divide
    # two filesystems at one size and none named alike: the user names the pair
    two = pd.concat([small.summary, small.summary.assign(filesystem="tmpfs")])
    both = Run(REPO / "orig", small.measurements, two, None)
    assert parallel_sizes([both, large]).empty
    named = parallel_sizes([both, large], {"orig": "orig:tmpfs", "big": "shared"})
    assert set(named["small"]) == {"orig:tmpfs"} and len(named) == 2


def test_two_sweeps_of_parallel_passes_only_compare_by_their_sizes(tmp_path):
    """ORIGDOQ-like sweeps at two sizes with no read case, on filesystems named as the shipped
    configs name them (`disk`, `shared`): compare gives the size ratios with their intervals
    (Fig. 7, Tables 8 and 11), Table 8's sentence judged on them, the findings of each and the
    comparative findings; measured on two hosts, the same passes are compared but not judged."""
    from h5sweep.compare import main

    def sweep(name, filesystem, shape, rate, host="node"):
        folder = tmp_path / host / name
        folder.mkdir(parents=True)
        rows = [
            {
                "filesystem": filesystem,
                "backend": "hdf5",
                "case": "parallel",
                "operation": "read",
                "mode": mode,
                "processes": p,
                "chunk_shape": chunk,
                "layout_id": "contiguous" if not chunk else f"chunked-{chunk}",
                "compression": "none",
                "primary": True,
                "units_per_access": 525,
                "bytes_per_s_median": rate * p,
                "bytes_per_s_max": rate * p * 1.1,
                "bytes_per_s_ci_low": rate * p * 0.95,
                "bytes_per_s_ci_high": rate * p * 1.05,
                "repeats": 6,
                "fs_type": "ext4",
            }
            for mode in ("independent", "collective")
            for p in (1, 2)
            for chunk in ("", "7639x525")
        ]
        pd.DataFrame(rows).to_parquet(folder / "summary.parquet")
        shape_text = "x".join(map(str, shape))
        pd.DataFrame(
            {
                "sweep": [name],
                "dataset_shape": [shape_text],
                "case": ["parallel"],
                "host": [host],
                "filesystem": [filesystem],
            }
        ).to_parquet(folder / "measurements.parquet")
        return str(folder)

    small, large = sweep("orig", "disk", (7639, 6308), 100e6), sweep("big", "shared", (160419, 6308), 110e6)
    out = tmp_path / "out"
    assert main([small, large, "--out", str(out)]) == 0
    text = (out / "comparison.md").read_text()
    assert "No read case to rank stores by" in text
    assert "| orig:disk | big:shared | read | independent | 2 | contiguous | 525 | 1.10 | 1.00-1.22 |" in text
    assert "Neither type of parallel access was affected appreciably by the size of the file." in text
    assert "orig:disk against big:shared: **holds** (big:shared over orig:disk" in text
    sizes = pd.read_csv(out / "parallel-sizes.csv")
    assert len(sizes) == 8 and (sizes["large_over_small"].round(2) == 1.1).all()
    assert (out / "parallel-sizes.png").stat().st_size > 5_000
    assert (out / "findings.md").read_text().count("## ") == 2
    compared = pd.read_csv(out / "comparative-findings.csv").set_index("finding")
    assert compared.loc["size-parallel", "verdict"] == "holds"
    # BIGDOQ measured on another host: the ratios are written, the sentences not judged, saying why
    apart = sweep("big", "shared", (160419, 6308), 110e6, host="cluster")
    assert main([small, apart, "--out", str(tmp_path / "apart")]) == 0
    text = (tmp_path / "apart" / "comparison.md").read_text()
    assert "| orig:disk | big:shared | read | independent | 2 | contiguous | 525 | 1.10 | 1.00-1.22 |" in text
    assert "measured on different machines or filesystems (orig:disk was measured on host node, big:shared on " in text
    compared = pd.read_csv(tmp_path / "apart" / "comparative-findings.csv").set_index("finding")
    folk = compared[compared["study"] == "Folk & Choi"]
    assert (folk["verdict"] == "not measured").all()
    assert folk["evidence"].str.contains("different machines or filesystems").all()
