"""The workflow run for real with Snakemake: dry runs, a tiny sweep, resume, bad configs."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, Workflow, interrupt, job_counts, machine_delay_held_still, tiny_config

from h5sweep import host
from h5sweep.analyze import findings
from h5sweep.measure import settle

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="session")
def finished(tmp_path_factory):
    """The tiny sweep on disk and in memory, every figure drawn, run once to the end."""
    root = tmp_path_factory.mktemp("finished")
    wf = Workflow(root / "wf")
    config = tiny_config(root, memory=True, figures=True)
    cfg = wf.write_config(config)
    with machine_delay_held_still():  # its rows' delay is checked against this machine's
        wf.run("--cores", "2", "--configfile", str(cfg), check=True)
    yield wf, config, cfg
    for fs in config["filesystems"].values():
        path = fs["path"] if isinstance(fs, dict) else fs
        if path.startswith("/dev/shm/"):
            import shutil

            shutil.rmtree(path, ignore_errors=True)


def test_dry_runs_of_the_shipped_configs_plan_the_whole_grid(workflow):
    default = workflow.run("-n", "--configfile", "config/config.yaml", check=True)
    counts = job_counts(default.stdout)
    # the plan warns where this machine hands freed memory back to a hypervisor before the
    # sweep reads again (h5sweep.host), and only there
    warned = "free page reporting" in default.stdout + default.stderr
    assert warned == host.free_page_reporting().short
    filesystems = 2 if os.path.isdir("/dev/shm") else 1
    # interleave: true; one job per filesystem writes its 19 stores and one reads them
    assert counts["generate_on_disk"] == 1 and not [rule for rule in counts if rule.startswith("generate_zarr")]
    assert counts["query_interleaved"] == filesystems and "query" not in counts
    assert counts["aggregate"] == counts["recommend"] == 1
    filters = job_counts(workflow.run("-n", "--configfile", "config/filters.yaml", check=True).stdout)
    assert filters["generate_on_disk"] == 1 and filters["query_interleaved"] == filesystems
    grid = workflow.run("-n", "--configfile", str(REPO / "bench" / "grid.yaml"), check=True)
    counts = job_counts(grid.stdout)
    # one store at a time: locally, a store's job writes it and runs its reads
    assert counts["generate_query_on_disk"] == 1 + 42 * 9 and "query" not in counts
    assert sum(v for k, v in counts.items() if k.startswith("generate_query_on_")) == (1 + 42 * 9) * filesystems
    assert not (workflow.root / "results" / "bench-grid" / "summary.csv").exists()


def test_a_config_file_replaces_the_default_instead_of_merging_into_it(workflow, tmp_path):
    config = tiny_config(tmp_path)
    config["filesystems"] = {"only": str(tmp_path / "only")}
    counts = job_counts(workflow.run("-n", "--configfile", str(workflow.write_config(config)), check=True).stdout)
    assert [rule for rule in counts if rule.startswith("generate")] == ["generate_query_on_only"]
    # --config still overrides single keys of the default
    run = workflow.run("-n", "--config", "compression=[none]", check=True)
    assert job_counts(run.stdout)["generate_on_disk"] == 1  # interleaved: one job writes them all
    assert "disk (results/scratch): 10 test files" in run.stdout + run.stderr  # 1 + 9, uncompressed


def test_tiny_sweep_summary_has_a_row_per_file_and_case_with_honest_values(finished):
    wf, config, _ = finished
    results = wf.root / "results" / "tiny"
    summary = pd.read_csv(results / "summary.csv", keep_default_na=False)
    filesystems = list(config["filesystems"])
    files_per_fs = 1 + (2 * 2 + 1) * 2  # contiguous + (grid + extra shape) x compressions
    assert len(summary) == len(filesystems) * files_per_fs * 4
    assert set(summary["case"]) == {"write", "slice", "spectra", "subcube"}
    assert set(summary["filesystem"]) == set(filesystems)
    assert set(summary["chunk_shape"]) == {"", "2x2x64", "2x2x512", "5x5x64", "5x5x512", "3x7x100"}
    assert set(summary.loc[summary["chunk_shape"] == "3x7x100", "layout_name"]) == {"odd"}
    assert set(summary.loc[summary["chunk_shape"] == "2x2x64", "layout_name"]) == {""}
    reps = summary.set_index("case")["repeats"]
    assert (reps["slice"] == 6).all()
    # writes race: every store writes once, and twice unless its one write raced it out
    writes = summary[summary["case"] == "write"]
    raced = writes["raced_out_round"].astype(str).str.len() > 0
    assert ((writes["repeats"] == 2) | (raced & (writes["repeats"] == 1))).all() and (~raced).any()
    expected_bytes = {
        "write": 20 * 20 * 3000 * 2,
        "slice": 20 * 20 * 25 * 2,
        "spectra": 5 * 5 * 3000 * 2,
        "subcube": 5 * 5 * 300 * 2,
    }
    for case, nbytes in expected_bytes.items():
        assert (summary.loc[summary["case"] == case, "bytes_selected"] == nbytes).all()
    assert (summary["min_s"] <= summary["median_s"]).all() and (summary["median_s"] <= summary["max_s"]).all()
    assert (summary["raw_bytes"] == 20 * 20 * 3000 * 2).all()
    gzip = summary[summary["compression"] == "gzip-1"]
    none = summary[summary["compression"] == "none"]
    assert (gzip["compression_ratio"] > 1.5).all()  # tiny chunks (2x2x64 = 512 bytes) compress less
    assert ((none["compression_ratio"] > 0.6) & (none["compression_ratio"] < 1.01)).all()
    assert summary["score"].between(0, 4).all() and (summary["score_max"] == 4).all()
    measurements = pd.read_parquet(results / "measurements.parquet")
    # paired selections: every file saw the same sequence in every case
    sequences = measurements[measurements["case"] != "write"].groupby(["filesystem", "layout_id", "compression"])
    firsts = {tuple(g.sort_values(["case", "repeat"])["selection"]) for _, g in sequences}
    assert len(firsts) == 1
    for column in [
        "host",
        "fs_type",
        "fs_path",
        "h5py_version",
        "hdf5_version",
        "numpy_version",
        "config_hash",
        "measured_at",
    ]:
        assert measurements[column].astype(str).str.len().min() > 0, column
    reads = measurements[measurements["case"] != "write"]
    for fs, rows in reads.groupby("filesystem"):  # cold: every (the default) on every read
        expected = "memory" if rows["fs_type"].iloc[0] in ("tmpfs", "ramfs") else "cold"
        assert set(rows["cache_state"]) == {expected}, fs
        assert (rows["reads_since_open"] == 0).all() and (rows["open_s"] > 0).all()
        assert rows["read_ahead_kb"].iloc[0] == (-1 if expected == "memory" else rows["read_ahead_kb"].max())
        assert rows["fs_block_bytes"].min() > 0 and rows["fs_mount_options"].str.len().min() > 0
        assert set(rows["free_page_reporting_ms"]) == {host.delay_ms()}, fs
    # the write case's own file was queried; every timed section had a window of its own
    assert set(measurements.loc[measurements["case"] == "write", "query_file_method"]) == {"write-case"}
    # every write says how long it waited for released space (within the filesystem's rest); reads do not
    writes = measurements[measurements["case"] == "write"]
    for fs, rows in writes.groupby("filesystem"):
        rest = settle.default_settle_s(rows["fs_path"].iloc[0])
        assert rows["settle_wait_s"].between(0, rest).all(), fs
    assert reads["settle_wait_s"].isna().all()
    windows = measurements[["window_opened_at", "window_closed_at"]].drop_duplicates().sort_values("window_opened_at")
    assert windows.notna().all().all() and (measurements["load_1min"] >= 0).all()
    assert (windows["window_opened_at"].iloc[1:].to_numpy() >= windows["window_closed_at"].iloc[:-1].to_numpy()).all()
    # every read row has its interval and its paired ratio to contiguous on the same filesystem
    read_rows = summary[summary["case"] != "write"]
    low, median, high, p90, largest = (
        read_rows[c].astype(float) for c in ("median_ci_low_s", "median_s", "median_ci_high_s", "p90_s", "max_s")
    )
    assert (low.le(median) & median.le(high) & p90.le(largest)).all()  # consistent statistics
    ratios = read_rows[["ratio_ci_low", "ratio_to_contiguous", "ratio_ci_high"]].astype(float)
    assert ratios.notna().all().all() and (ratios["ratio_ci_low"] <= ratios["ratio_ci_high"]).all()
    assert (ratios.loc[read_rows["layout"] == "contiguous", "ratio_to_contiguous"] == 1.0).all()
    # test files are temporary; figures are there
    for fs in config["filesystems"].values():
        path = Path(fs["path"] if isinstance(fs, dict) else fs) / "tiny"
        assert not list(path.rglob("*.hdf5")) if path.exists() else True
    plots = sorted(p.name for p in (results / "plots").glob("*.png"))
    assert "file-sizes.png" in plots and "heatmap-slice-disk.png" in plots and "score-disk.png" in plots
    assert all((results / "plots" / p).read_bytes()[:4] == b"\x89PNG" for p in plots)


def rendered(html: Path) -> str:
    """The report's page as the browser shows it once its scripts drew the front page (the
    decision sheet's verdicts), without the scripts (which carry the report's data as text
    whether it is shown or not)."""
    from browser import Page

    with Page(html.as_uri(), timeout=180) as page:
        page.wait_for("document.body !== null && document.body.innerText.includes('On disk (')", 180)
        dom = page.evaluate("document.documentElement.outerHTML")
        assert page.errors == [], page.errors
    return re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)


def test_the_decision_page_opens_offline_and_hovering_a_store_names_it(finished):
    """index.html in a real browser: its scripts run without a console error, every store is
    drawn, hovering a mark shows its store and interval, and the filesystem menu filters."""
    from browser import Page

    from h5sweep.analyze.wording import label

    wf, config, _ = finished
    results = wf.root / "results" / "tiny"
    table = pd.read_csv(results / "recommendation.csv", keep_default_na=False)
    marks = "#decision-charts svg g.role-mark.mark-symbol path"  # a store each, in each of the 3 charts
    with Page((results / "index.html").as_uri()) as page:
        assert page.wait_for(f"document.querySelectorAll('{marks}').length === {3 * len(table)}", 60)
        assert page.evaluate("document.querySelector('h1').innerText") == "Decision: tiny"
        where = page.evaluate(
            f"(() => {{ const e = document.querySelector('{marks}'); e.scrollIntoView();"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        page.hover(*where)
        shown = page.wait_for("(document.getElementById('vg-tooltip-element') || {}).innerText", 20)
        lines = [line.strip() for line in shown.splitlines() if line.strip()]
        store = lines[lines.index("store") + 1]
        names = {label(r, with_backend=True, with_option=o) for _, r in table.iterrows() for o in (False, True)}
        assert store in names, shown  # a store as the sheet names it
        assert "95% interval" in shown or "raced out" in shown, shown
        menus = page.evaluate("[...document.querySelectorAll('.vega-bindings select')].map(s => s.options[0].text)")
        assert menus == ["every"] * 3  # filesystem, codec, read option
        one = sorted(config["filesystems"])[0]
        page.evaluate(
            "(() => { const s = document.querySelector('.vega-bindings select');"
            f" s.selectedIndex = [...s.options].findIndex(o => o.text === '{one}');"
            " s.dispatchEvent(new Event('change')); })()"
        )
        mine = int((table["filesystem"] == one).sum())
        assert mine < len(table) and page.wait_for(f"document.querySelectorAll('{marks}').length === {3 * mine}", 20)
        assert page.errors == []


def test_the_decision_page_ranks_again_for_another_mix_as_whatif_does(finished):
    """index.html in a real browser: weights typed into the page rank the stores again, and
    the choice per filesystem is the one ``h5sweep whatif`` makes for that mix; the page links
    the sheet and the findings and says where it was measured."""
    from browser import Page

    from h5sweep.analyze import whatif
    from h5sweep.analyze.wording import label, several_options
    from h5sweep.measure.records import read_tables

    wf, _, _ = finished
    results = wf.root / "results" / "tiny"
    settings = json.loads((results / "recommend.json").read_text())
    measurements = read_tables([str(results / "measurements.parquet")])
    summary = read_tables([str(results / "summary.parquet")])
    page_text = (results / "index.html").read_text()
    for href in ('href="decision.md"', 'href="findings.md"', 'href="plots/"'):
        assert href in page_text
    assert "Where and with what it was measured" in page_text and "<strong>commit:</strong>" in page_text
    with Page((results / "index.html").as_uri()) as page:
        page.wait_for("document.querySelectorAll('.whatif-result .choice').length > 0", 60)
        for weights in ({"slice": 1, "spectra": 100}, {"slice": 100, "subcube": 1}, {"spectra": 1}):
            table, _ = whatif.rank_for(measurements, summary, settings, weights)
            expected = {}
            for filesystem, group in table.groupby("filesystem"):
                chosen = group[group["recommended"].astype(bool)].iloc[0]
                expected[filesystem] = label(
                    chosen, with_backend=True, with_option=chosen["backend"] in several_options(group)
                )
            typed = json.dumps({case: weights.get(case, 0) for case in settings["read_cases"]})
            page.evaluate(
                f"(() => {{ const w = {typed}; document.querySelectorAll('#whatif input').forEach(e => {{"
                " e.value = w[e.name]; e.dispatchEvent(new Event('input')); }); })()"
            )
            shown = page.evaluate(
                "Object.fromEntries([...document.querySelectorAll('.whatif-result')].map("
                "d => [d.id.slice('whatif-'.length), d.querySelector('.choice').dataset.store]))"
            )
            assert shown == expected, weights
            # each row's time per case on hover
            title = page.evaluate("document.querySelector('.whatif-result tr[title]').title")
            assert title.startswith("mean per read: slice ")
        assert page.errors == []


def test_the_report_opens_on_the_recommendation(finished):
    """Built with the sweep's results, the report opens on the verdict and the ranking (not
    the rule graph); figures and the summary table follow."""
    wf, config, cfg = finished
    wf.run("--configfile", str(cfg), "--report", "results/tiny/report.html", check=True)
    report = wf.root / "results" / "tiny" / "report.html"
    html = report.read_text(errors="replace")
    assert "heatmap-slice-disk.png" in html
    # one job drew each kind; each figure's caption names its own case and filesystem
    for fs in config["filesystems"]:
        for case in ("slice", "spectra"):
            caption = (wf.root / "results" / "tiny" / "captions" / f"bars-{case}-{fs}.rst").read_text()
            assert caption.startswith(f"Every read of the {case} case on {fs}, one"), caption
            assert f"Every read of the {case} case on {fs}, one" in html
        assert f"Time of the slice case on {fs}" in html
    logs = sorted(p.name for p in (wf.root / "results" / "tiny" / "logs" / "plot").iterdir())
    # a plot job per set of tables the figures read, not one per figure or kind
    assert logs == ["recommendation.log", "summary.log", "summary_measurements.log"]
    assert len(list(report.parent.glob("plots/*"))) > len(logs)
    page = rendered(report)
    # the decision sheet first, then the verdicts
    assert 0 <= page.find("Decision: tiny") < page.find("Best compressed:") < page.find("On disk (")
    verdict = re.search(
        r"<p>On disk \([^)]*, HDF5\), for this read mix \(reads per unit of work: "
        r"slice 1, spectra 1, subcube 1;.*?</p>",
        page,
        re.S,
    )
    assert verdict and "Choose " in verdict.group(0) and "(recommend.objective: time)" in verdict.group(0)
    table = pd.read_csv(wf.root / "results" / "tiny" / "recommendation.csv")
    chosen = table[(table["filesystem"] == "disk") & table["recommended"]].iloc[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)
    cells = [re.findall(r"<td[^>]*>\s*(?:<p>)?(.*?)(?:</p>)?\s*</td>", row, re.S) for row in rows]
    # rank, layout, score and interval, mix time and interval, 3 cases, worst, spread, file, write, mark
    assert [str(int(chosen["rank"])), "recommended"] in [[c[0], c[-1]] for c in cells if len(c) == 14]


def test_nothing_is_redone_and_adding_a_layout_adds_only_its_jobs(finished):
    wf, config, cfg = finished
    again = wf.run("-n", "--configfile", str(cfg), check=True)
    assert "Nothing to be done" in again.stdout + again.stderr
    bigger = dict(config, layouts=dict(config["layouts"], shapes=[*config["layouts"]["shapes"], [4, 4, 256]]))
    path = wf.write_config(bigger, "bigger.yaml")
    counts = job_counts(wf.run("-n", "--configfile", str(path), check=True).stdout)
    filesystems = len(config["filesystems"])
    # the new shape, none and gzip-1, each written and read in one job
    assert sum(v for k, v in counts.items() if k.startswith("generate_query_on_")) == 2 * filesystems
    assert counts["aggregate"] == 1


def jobs_for(dry_run_output: str, reason: str) -> dict[str, set[str]]:
    """{rule: wildcards of its jobs} whose dry-run reason mentions ``reason``."""
    found: dict[str, set[str]] = {}
    for block in re.split(r"\n\s*rule ", dry_run_output)[1:]:
        rule = block.split(":", 1)[0]
        why = re.search(r"reason: (.*)", block)
        wildcards = re.search(r"wildcards: (.*)", block)
        if why and reason in why.group(1):
            found.setdefault(rule, set()).add(wildcards.group(1) if wildcards else "")
    return found


def params_changed(dry_run_output: str) -> dict[str, set[str]]:
    """{rule: wildcards of its jobs} whose dry-run reason is that their params changed."""
    return jobs_for(dry_run_output, "Params have changed")


def test_each_setting_reruns_exactly_the_jobs_that_use_it(finished):
    """Every job gets its own settings as params (the rerun trigger): a read case's repeats
    rerun every store's job (locally a store's job writes it and reads it: its store is
    temporary); a filesystem's read copies only its own stores' jobs; renaming a chunk shape,
    that shape's jobs; nothing else reruns."""
    wf, config, _ = finished
    filesystems = len(config["filesystems"])
    files = filesystems * (1 + 5 * 2)

    def changed(update: dict, name: str) -> tuple[set[tuple[str, str]], dict[str, int]]:
        path = wf.write_config({**config, **update}, name)
        dry = wf.run("-n", "--configfile", str(path), check=True)
        found = params_changed(dry.stdout + dry.stderr)
        jobs = {(rule, w) for rule, wildcards in found.items() for w in wildcards}
        assert all(rule.startswith("generate_query_on_") for rule, _ in jobs), jobs
        return jobs, job_counts(dry.stdout)

    more_slices, counts = changed({"cases": {**config["cases"], "slice": {"repeats": 7, "depth": 25}}}, "slices.yaml")
    assert len(more_slices) == files and "query" not in counts
    cache, counts = changed({"chunk_cache": [{"bytes": 2**21, "slots": 521, "w0": 0.75}]}, "cache.yaml")
    assert len(cache) == files
    # read copies are the queries' alone, on their own filesystem
    name, entry = next(iter(config["filesystems"].items()))
    entry = {"path": entry} if isinstance(entry, str) else entry
    copied, counts = changed(
        {"filesystems": {**config["filesystems"], name: {**entry, "read_copies": 2}}}, "copies.yaml"
    )
    assert len(copied) == files // filesystems and {rule for rule, _ in copied} == {f"generate_query_on_{name}"}
    renamed = dict(config["layouts"], shapes=[{"name": "odder", "chunk": [3, 7, 100]}])
    rename, counts = changed({"layouts": renamed}, "renamed.yaml")
    assert len(rename) == 2 * filesystems  # the shape, none and gzip-1
    assert all("chunked-3x7x100" in w for _, w in rename)
    assert counts["aggregate"] == 1 and sum(v for k, v in counts.items() if k.startswith("generate")) == 2 * filesystems


def test_the_recommendation_names_a_layout_and_its_settings_rerun_it_alone(finished):
    """recommendation.md says which layout to choose on every filesystem; the CSV ranks every
    store of the grid with documented columns; changing the read mix reruns only the
    recommendation; layouts.auto adds h5py's own chunk shape as one more layout."""
    wf, config, _ = finished
    results = wf.root / "results" / "tiny"
    table = pd.read_csv(results / "recommendation.csv")
    stores = 1 + 5 * 2  # contiguous, and five chunk shapes with none and gzip-1
    assert len(table) == stores * len(config["filesystems"])
    for filesystem, group in table.groupby("filesystem"):
        assert group["recommended"].sum() == 1 and group["tied_with_best"].any(), filesystem
        assert sorted(group["rank"]) == list(range(1, stores + 1))
        contiguous = group[group["layout_id"] == "contiguous"].iloc[0]
        assert contiguous["weighted_ratio"] == pytest.approx(1.0)
        assert (group["weighted_ratio_ci_low"] <= group["weighted_ratio"]).all()
        assert (group["weighted_ratio"] <= group["weighted_ratio_ci_high"]).all()
    assert set(table["weights"]) == {"slice 1, spectra 1, subcube 1"}
    documented = (REPO / "config" / "README.md").read_text()
    for column in table.columns:
        assert f"`{column}`" in documented or column.startswith(("ratio_", "seconds_", "weight_")), column
    text = (results / "recommendation.md").read_text()
    assert text.count("Choose ") == len(config["filesystems"])
    assert text.count("(recommend.objective: time)") == len(config["filesystems"])
    chosen = table[table["recommended"]].iloc[0]
    assert f"| {int(chosen['rank'])} | " in text
    # the decision sheet: per filesystem the choice, its costs, the best compressed store, the evidence
    decision = (results / "decision.md").read_text()
    assert decision.startswith("# Decision: tiny\n") and "(recommend.objective: time)" in decision
    for point in ("Choose", "Costs:", "Best compressed:", "Evidence:", "Measured at"):
        assert decision.count(f"- **{point}** ") == len(config["filesystems"]), point
    for filesystem, group in table.groupby("filesystem"):
        assert f"- **Evidence:** {len(group)} stores ranked: each read " in decision, filesystem
    # what the choice gains against contiguous, the case it hurts most, and the code to write and read it
    assert decision.count("- **Gains:** ") == len(config["filesystems"])
    picks = table[table["recommended"]]
    assert decision.count("- **Hurts:** ") == (~picks["is_reference"].astype(bool)).sum()
    assert decision.count("Write it (your array `data`") == decision.count("Read it as it was measured.")
    assert decision.count("Write it (your array `data`") == len(config["filesystems"])
    assert "```python\nimport h5py\nwith h5py.File(path, 'w') as f:\n    f.create_dataset('data', data=data" in decision
    assert "20 x 20 x 3000 uint16 (2.4 MB)." in decision
    front = (results / "recommendation.rst").read_text()
    assert front.startswith("Decision: tiny\n") and "\nRecommendation\n" in front

    path = wf.write_config({**config, "recommend": {"weights": {"spectra": 1}}}, "mix.yaml")
    dry = wf.run("-n", "--configfile", str(path), check=True)
    assert job_counts(dry.stdout) == {"recommend": 1, "plot_recommendation": 1, "all": 1, "total": 3}
    auto = wf.write_config({**config, "layouts": {**config["layouts"], "auto": True}}, "auto.yaml")
    dry = wf.run("-n", "--configfile", str(auto), check=True)
    paths = [line for line in dry.stdout.splitlines() if "reason:" not in line]  # a reason quotes the settings
    assert not any("h5py-auto" in line for line in paths)  # the layout is known by its chunk shape
    generate = set().union(
        *(v for k, v in jobs_for(dry.stdout + dry.stderr, "Missing output files").items() if k.startswith("generate"))
    )
    assert generate and all("chunked-3x5x750" in w for w in generate)


def test_interleaved_reads_run_one_query_job_per_filesystem(workflow, tmp_path):
    """interleave: true reads every store of a filesystem in one job, selection by selection;
    every row says so, the stores (and their read copies) are removed afterwards and the
    recommendation is made."""
    config = tiny_config(tmp_path, memory=True, interleave=True)
    config["cases"] = {**config["cases"], "slice": {"repeats": 3, "depth": 25}}
    config["filesystems"]["disk"] = {"path": config["filesystems"]["disk"], "read_copies": 2}
    path = workflow.write_config(config, "interleaved.yaml")
    run = workflow.run("--cores", "2", "--configfile", str(path), check=True)
    counts = job_counts(run.stdout + run.stderr)
    n = len(config["filesystems"])
    assert counts["query_interleaved"] == n and "query" not in counts
    # one job per filesystem wrote every store, each store's write record its own
    assert [counts.get(f"generate_on_{fs}") for fs in config["filesystems"]] == [1] * n
    measured = pd.read_parquet(workflow.root / "results" / "tiny" / "measurements.parquet")
    reads = measured[measured["case"] != "write"]
    stores = 1 + 5 * 2
    writes = measured[measured["case"] == "write"]
    assert (
        writes.drop_duplicates(["filesystem", "layout_id", "compression"]).groupby("filesystem").size() == stores
    ).all()
    assert set(reads["interleaved_stores"]) == {stores}
    assert (reads.groupby(["filesystem", "case", "repeat"])["layout_id"].count() == stores).all()
    assert sorted(set(reads["visit_position"])) == list(range(stores))
    # on disk, reads that each start cold take the store and its one copy in turn
    every = reads["cold_mode"] == "every"
    on_disk = reads["filesystem"] == "disk"
    assert every[on_disk].any()
    assert (reads.loc[on_disk & every, "store_copy"] == reads.loc[on_disk & every, "repeat"] % 2).all()
    assert set(reads.loc[~on_disk | ~every, "store_copy"]) == {0}
    assert set(reads.loc[on_disk & every, "cache_state"]) == {"cold"}  # the copy written out, then evicted
    for fs in config["filesystems"].values():
        directory = Path(fs if isinstance(fs, str) else fs["path"])
        assert not list(directory.rglob("*.hdf5"))  # temporary stores, removed once read
        assert not list(directory.rglob("*.read-copy-*"))  # and their copies
    assert (workflow.root / "results" / "tiny" / "recommendation.md").exists()


def snakemake_incomplete(root: Path) -> set[Path]:
    """Outputs that Snakemake itself marks as incomplete (jobs cut short)."""
    marks = root / ".snakemake" / "incomplete"
    found = set()
    for mark in marks.rglob("*") if marks.exists() else []:
        if mark.is_file() and mark.name != "migration_underway":
            parts = mark.relative_to(marks).parts
            encoded = "".join(part.removeprefix("@") for part in parts)
            found.add(root / base64.urlsafe_b64decode(encoded).decode())
    return found


def _wait_for(pattern_dir: Path, pattern: str, proc, timeout=300, count=1):
    """Wait until ``count`` files match ``pattern`` under ``pattern_dir``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(pattern_dir.rglob(pattern)) if pattern_dir.exists() else []) >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"snakemake ended early:\n{proc.stdout.read()}")
        time.sleep(0.2)
    raise AssertionError(f"no {pattern} within {timeout} s")


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_an_interrupted_sweep_resumes_without_redoing_finished_jobs(workflow, tmp_path, how):
    config = tiny_config(tmp_path, sweep=f"resume-{how}")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["cases"]["slice"]["repeats"] = 30  # long enough to be interrupted
    cfg = workflow.write_config(config)
    raw = workflow.root / "results" / config["sweep"] / "raw"
    proc = workflow.popen("--cores", "1", "--configfile", str(cfg))
    # one store's job has finished once the next one's write record exists (one core)
    _wait_for(raw, "write.parquet", proc, count=2)
    if how == "ctrl-c":
        interrupt(proc)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode != 0
    unfinished = snakemake_incomplete(workflow.root)
    done = {p: p.stat().st_mtime_ns for p in raw.rglob("*.parquet") if p not in unfinished}
    assert 0 < len(done) < 22
    if how == "kill":
        locked = workflow.run("--cores", "1", "--configfile", str(cfg))
        # refused: the directory is still locked, or jobs were cut short (either is reported)
        said = (locked.stdout + locked.stderr).lower()
        assert locked.returncode != 0 and ("lock" in said or "--rerun-incomplete" in said)
        workflow.run("--unlock", "--configfile", str(cfg), check=True)
    workflow.run("--cores", "2", "--configfile", str(cfg), "--rerun-incomplete", check=True)
    for path, mtime in done.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was redone"
    summary = pd.read_csv(workflow.root / "results" / config["sweep"] / "summary.csv")
    assert len(summary) == 11 * 4


BAD_CONFIGS = [
    ({"layouts": {"contiguous": True, "shapes": [[4, 4, 9000]]}}, "layouts.shapes[0]=[4, 4, 9000]"),
    ({"compression": ["none", "gzip-11"]}, "compression[1]='gzip-11'"),
    ({"compression": ["bzip-2"]}, "compression[0]='bzip-2'"),
    ({"cases": {"write": {"repeats": 1}, "slice": {"repeats": 0}}}, "cases.slice.repeats=0"),
    (
        {"dataset": {"shape": [2] * 6, "dtype": "uint16", "fill": "synthetic", "seed": 0}},
        "dataset.shape=[2, 2, 2, 2, 2, 2]",
    ),
    ({"dataset": {"shape": [20, -2, 5], "dtype": "uint16", "fill": "synthetic", "seed": 0}}, "dataset.shape[1]=-2"),
    (
        {"cases": {"spectra": {"repeats": 3, "size": 40}}},
        "cases.spectra={'repeats': 3, 'size': 40, 'race': True, 'cold': 'every'}",
    ),
    ({"filesystems": {"disk": "/proc/version/h5sweep"}}, "filesystems.disk='/proc/version/h5sweep'"),
]


@pytest.mark.parametrize("override, message", BAD_CONFIGS, ids=[m for _, m in BAD_CONFIGS])
def test_bad_configs_fail_before_any_job_and_create_no_results(workflow, tmp_path, override, message):
    config = tiny_config(tmp_path, sweep="bad")
    config.update(override)
    cfg = workflow.write_config(config)
    for args in (["-n"], ["--cores", "1"]):
        proc = workflow.run(*args, "--configfile", str(cfg))
        output = proc.stdout + proc.stderr
        assert proc.returncode != 0
        assert message in output, output[-2000:]
        assert not (workflow.root / "results" / "bad").exists()


def test_failed_query_leaves_no_output_that_looks_complete(workflow, tmp_path):
    """A job that fails leaves no output; finished work of other jobs is kept. (Interleaved,
    the stores' writes and the reads are separate jobs: a store is damaged in between.)"""
    config = tiny_config(tmp_path, sweep="broken", interleave=True)
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [512]}, "shapes": []}
    cfg = workflow.write_config(config)
    workflow.run("--until", "generate_on_disk", "--notemp", "--cores", "1", "--configfile", str(cfg), check=True)
    target = "results/broken/raw/disk/hdf5/contiguous/none/write.parquet"
    h5 = tmp_path / "disk" / "broken" / "contiguous" / "none.hdf5"
    import h5py

    from h5sweep.cases import read_cases_from_config

    slice_case = read_cases_from_config(config["cases"], tuple(config["dataset"]["shape"]))[0]
    z0 = slice_case.selections(tuple(config["dataset"]["shape"]), config["dataset"]["seed"])[0].start[2]
    with h5py.File(h5, "r+") as f:  # corrupt a value the first slice query reads
        f["data"][0, 0, z0] += 1
    reads = "results/broken/raw/disk/query-interleaved.parquet"
    proc = workflow.run(reads, "--cores", "1", "--configfile", str(cfg))
    assert proc.returncode != 0
    assert "values differ from the data source" in proc.stdout + proc.stderr
    assert not (workflow.root / reads).exists()
    assert (workflow.root / target).exists()


def test_config_file_is_documented_key_by_key():
    readme = (Path(__file__).resolve().parents[1] / "config" / "README.md").read_text()
    from h5sweep.sweep.config import load_schema

    schema = load_schema()  # with the blocks the cases declare

    def keys(node, prefix=""):
        for name, sub in node.get("properties", {}).items():
            assert "description" in sub and "default" in sub, f"{prefix}{name} lacks description or default"
            yield f"{prefix}{name}"
            yield from keys(sub, f"{prefix}{name}.")

    for key in keys(schema):
        assert f"`{key}`" in readme, f"config/README.md does not document {key}"


def test_a_sweep_that_cannot_fit_on_disk_is_refused_before_any_job(workflow, tmp_path):
    config = tiny_config(tmp_path, sweep="huge")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"]["shape"] = [4000, 4000, 100_000]  # 3.2 TB of uint16 per file
    config["layouts"] = {"contiguous": True, "chunks": {}, "shapes": []}
    config["cases"] = {"write": {"repeats": 1}}
    cfg = workflow.write_config(config)
    proc = workflow.run("-n", "--cores", "2", "--configfile", str(cfg))
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0
    # its store, and the values kept for every write in the results, on the same device
    assert re.search(r"not enough disk on filesystem disk \(.*/disk\): the sweep needs 6400\.\d GB", said), said[-1500:]
    assert "GB are free" in said and "--config check_disk=False" in said
    assert not (workflow.root / "results" / "huge").exists()
    forced = workflow.run("-n", "--cores", "2", "--configfile", str(cfg), "--config", "check_disk=False")
    assert forced.returncode == 0, forced.stderr[-1500:]
    assert "DOES NOT FIT" in forced.stdout + forced.stderr


GOLDEN_COLUMNS = Path(__file__).parent / "golden" / "tiny-columns.json"


def output_columns(results: Path) -> dict:
    """The columns (and, for the typed tables, dtypes) of the sweep's tables, as pinned in
    ``tests/golden/tiny-columns.json``."""
    measurements = pd.read_parquet(results / "measurements.parquet")
    summary = pd.read_parquet(results / "summary.parquet")
    return {
        "measurements.parquet": {column: str(dtype) for column, dtype in measurements.dtypes.items()},
        "summary.parquet": {column: str(dtype) for column, dtype in summary.dtypes.items()},
        "summary.csv": list(pd.read_csv(results / "summary.csv", nrows=1).columns),
    }


def test_outputs_keep_their_columns_and_dtypes(finished):
    """Users' scripts read these tables: a column is renamed, retyped or dropped only on
    purpose (then tests/golden/tiny-columns.json is updated with it, and config/README.md).
    Changed on purpose since the file was first written: ``backend`` added to both tables,
    ``summary.parquet`` added (the CSV's columns, typed); ``chunk_bytes_touched_median``,
    ``stored_bytes_touched_median`` and ``read_amplification`` added to the summary;
    ``interleaved_stores`` and ``visit_position`` to the measurements; the filter columns
    (``filter_family``, ``codec``, ``codec_level``, ``shuffle``) to both, ``hdf5plugin_version``
    to the measurements; ``reader`` (the read option's library) and ``shard_shape`` to both, ``store_files``,
    ``store_directories``, ``files_touched``, ``storage_s`` and ``decode_copy_s`` to the
    measurements; ``window_steal_s`` to the measurements; ``settle_wait_s`` to the measurements; the counts
    and whole-number settings that some rows lack retyped from float64 to Int64 in the
    measurements; ``page_faults`` added to the measurements, ``page_faults_median`` to the
    summary; ``free_page_reporting_ms`` (provenance) to the measurements; ``store_copy`` to the
    measurements; ``ratio_reference`` (the store every ratio is to) to the summary; ``stopped``
    and ``limit_s`` (a write stopped at its limit) to the measurements, ``writes_stopped`` and
    ``limit_s`` to the summary; ``fs_stripe`` (Lustre striping) to the measurements;
    ``source_read_s`` (a donor's reads kept off a write's clock) to the measurements,
    ``cache_holds_chunk`` typed as the column registry says (a nullable boolean, was object);
    ``raced_out_round`` and ``raced_out_at_least`` in the measurements and the summary (the
    tiny sweep's writes race since a store's first write is the minimum); ``read_option``,
    ``read_option_index`` and ``read_option_setting`` in the measurements (every read option
    is ranked as a choice of its own); ``page_size`` (HDF5's paged aggregation) to both;
    ``judge_synthetic_values`` (the config's opt-in for findings that depend on the values) to
    both, and ``fill`` to the summary (those findings read where the values came from); ``fs_device``
    to the summary (the I/O lab's request-size finding names the disk that stands in for its PC);
    ``median_ci_level`` (the level a median's interval really has) to the summary."""
    wf, _, _ = finished
    actual = output_columns(wf.root / "results" / "tiny")
    expected = json.loads(GOLDEN_COLUMNS.read_text(encoding="utf-8"))
    for table, columns in expected.items():
        assert actual[table] == columns, table


@pytest.mark.parametrize("backends", [["hdf5"], ["hdf5", "zarr"]], ids=["hdf5", "hdf5-zarr"])
def test_a_sweep_without_a_contiguous_layout_ranks_against_its_reference_and_draws_everything(
    workflow, tmp_path, backends
):
    """No contiguous baseline: every ratio is to the reference layout (by default the config's
    first, stored by HDF5 with the first compression), and the summary, the trade-off figure
    and the recommendation say which; cold modes first and every get a variants figure."""
    config = tiny_config(
        tmp_path, sweep=f"noncontig-{len(backends)}", figures=["tradeoff", "case_bars", "variants", "score"]
    )
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["backends"] = backends
    config["layouts"] = {"contiguous": False, "chunks": {"xy": [5], "z": [64, 512]}, "shapes": []}
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 4, "depth": 25, "cold": ["first", "every"]}}
    path = workflow.write_config(config)
    workflow.run("--cores", "2", "--configfile", str(path), check=True)
    results = workflow.root / "results" / config["sweep"]
    summary = pd.read_parquet(results / "summary.parquet")
    reads = summary[summary["case"] == "slice"]
    assert set(reads["ratio_reference"]) == {"chunked-5x5x64"}
    reference = reads[(reads["layout_id"] == "chunked-5x5x64") & (reads["compression"] == "none")]
    reference = reference[reference["backend"] == "hdf5"]
    assert (reference["ratio_to_contiguous"] == 1.0).all()
    # every read from the device is paired (a warm read has a partner only where the reference's was warm)
    assert reads.loc[reads["variant"].str.endswith("cold every"), "ratio_to_contiguous"].notna().all()
    table = pd.read_csv(results / "recommendation.csv")
    assert set(table["reference_store"]) == {"chunked-5x5x64"} and table["is_reference"].sum() == 1
    assert "relative to the reference layout chunked-5x5x64 on" in (results / "recommendation.md").read_text()
    plots = results / "plots"
    for name in ("tradeoff-disk", "bars-slice-disk", "variants-slice-disk", "score-disk"):
        assert (plots / f"{name}.png").stat().st_size > 5_000, name


def test_the_reference_layout_is_a_key_and_a_wrong_one_is_refused_naming_it(tmp_path):
    from h5sweep.storage.errors import ConfigError
    from h5sweep.sweep.model import load_sweep

    config = tiny_config(tmp_path)
    assert load_sweep(config, probe=False).reference == {"layout_id": "contiguous", "compression": "none"}
    config["layouts"]["reference"] = "odd"  # a shape's name
    assert load_sweep(config, probe=False).reference == {"layout_id": "chunked-3x7x100", "compression": "none"}
    config["layouts"]["reference"] = "chunked-9x9x9"
    with pytest.raises(ConfigError, match=r"layouts\.reference='chunked-9x9x9'.*names no layout HDF5 stores"):
        load_sweep(config, probe=False)


@pytest.mark.serial
def test_on_real_stores_each_objective_picks_its_least_value_and_only_the_recommendation_is_redone(tmp_path):
    """Rew's case on real files (tests/configs/mix.yaml): an ion image of a contiguous cube
    sieves the whole file, a spectrum is one run of bytes; a balanced chunk shape reads both
    through a few chunks. The time objective picks the store of the least time for one read
    of each; the geometric mean of ratios, asked for by the same config, the store of the
    least geometric mean, and only the recommendation is redone. Each says which objective it
    ranked by."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "mix.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / "mix"
    by_time = pd.read_csv(results / "recommendation.csv").set_index("layout_id")
    assert set(by_time["objective"]) == {"time"}
    # the counted evidence first: the contiguous image read takes the whole file off the device
    reads = pd.read_parquet(results / "measurements.parquet")
    image = reads[(reads["case"] == "slice") & (reads["layout_id"] == "contiguous")]
    assert image["device_read_bytes"].median() >= 0.9 * 128 * 128 * 2048 * 4
    chosen = by_time[by_time["recommended"]].index[0]
    assert chosen == by_time["mix_seconds"].idxmin()
    assert "(recommend.objective: time)" in (results / "recommendation.md").read_text()

    geometric = wf.write_config({**config, "recommend": {"objective": "geometric"}}, "geometric.yaml")
    rerun = wf.run("--cores", "2", "--configfile", str(geometric), check=True)
    counts = job_counts(rerun.stdout + rerun.stderr)
    assert counts["recommend"] == 1, counts
    assert all(rule in ("recommend", "all", "total") or rule.startswith("plot_") for rule in counts), counts
    by_ratio = pd.read_csv(results / "recommendation.csv").set_index("layout_id")
    assert set(by_ratio["objective"]) == {"geometric"}
    # each objective chooses its least value on what was measured: on an idle disk the other
    # store, but which store that is is the measurement's (a disk busy with other work narrows
    # the image's and the spectrum's ratios, and the two may agree)
    assert by_ratio[by_ratio["recommended"]].index[0] == by_ratio["weighted_ratio"].idxmin()
    assert "(recommend.objective: geometric)" in (results / "recommendation.md").read_text()


def test_every_sweep_checks_the_studies_findings(finished):
    wf, config, _ = finished
    results = wf.root / "results" / "tiny"
    table = pd.read_csv(results / "findings.csv")
    for filesystem, group in table.groupby("filesystem"):
        assert len(group) == len(findings.FINDINGS), filesystem
        assert set(group["verdict"]) <= {"holds", "does not hold", "inconclusive", "not measured"}
        assert group["verdict"].isin(["holds", "does not hold"]).any()  # the tiny sweep decides some
    assert set(table["filesystem"]) == set(config["filesystems"])
    assert (results / "findings.md").read_text().startswith("# Findings of the studies")
