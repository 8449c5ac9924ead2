"""The studies' experiments, one config each under config/studies/: each dry-runs with its
plan, and the experiments the studies ran on one machine run end to end at a tiny size with
every figure they plan."""

import copy
import fnmatch
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, Workflow, _env

from h5sweep.analyze import findings
from h5sweep.cases import figure_names
from h5sweep.sweep.model import load_sweep

STUDIES = sorted((REPO / "config" / "studies").glob("*/*.yaml"))

# Each experiment at a tiny size: the dataset and repeats shrunk, its layouts, codecs, cases,
# variants and figures as shipped (chunk shapes shrunk only where they would exceed the data).
TINY = {
    # the grid cut to the shapes its findings need: x and y that do not divide the image (3),
    # 1 x 1 x n at n = 128 and another, m in {4, 8, 16} and others; 12 reads per case, cold first:
    # at least 6 in one measured cache state (a warm read whose pages were gone is cold), the
    # fewest whose median has a 95% interval
    "openmsi/chunking.yaml": {
        "dataset": {"shape": [16, 16, 4096]},
        "layouts": {"chunks": {"xy": [1, 3, 4], "z": [128, 1024]}},
        "cases": {
            "slice": {"repeats": 12},
            "spectra": {"repeats": 12},
            "subcube": {"repeats": 12, "size": [5, 5, 500]},
        },
    },
    # one m, two n: every finding of the config compares levels within a chunk shape; 12 reads
    # per case, the fewest whose median interval is a 95% one short of the extremes
    "openmsi/compression.yaml": {
        "dataset": {"shape": [16, 16, 4096]},
        "layouts": {"chunks": {"xy": [4], "z": [1024, 4096]}},
        "compression": ["none", "gzip-1", "gzip-4", "gzip-8"],
        "cases": {
            "slice": {"repeats": 12},
            "spectra": {"repeats": 12},
            "subcube": {"repeats": 12, "size": [5, 5, 500]},
        },
    },
    "kang/hdf5-vs-zarr.yaml": {
        "dataset": {"shape": [32768, 64]},
        "layouts": {
            "shapes": [
                {"name": "flush_block", "chunk": [4096, 64]},
                {"name": "channel_flush", "chunk": [4096, 1]},
                {"name": "half_channels", "chunk": [8192, 32]},
            ],
            "shards": [{"name": "channel_flush_sharded", "chunk": [4096, 1], "shard": [16384, 64]}],
        },
        "cases": {"whole": {"repeats": 2}, "rows": {"repeats": 4, "size": 4096}, "column": {"repeats": 4}},
    },
    # six writes per store, as shipped: the write findings compare intervals
    "openmsi/write-strategies.yaml": {"dataset": {"shape": [32, 32, 4096]}},
    "openmsi/local-scaling.yaml": {
        "dataset": {"shape": [20, 20, 4096]},
        "cases": {"scaling": {"processes": [1, 2], "repeats": 2}},
    },
    "openmsi/compression-grid.yaml": {"dataset": {"shape": [20, 20, 4096]}},
    "openmsi/image-aligned.yaml": {
        "dataset": {"shape": [16, 25, 4096]},
        "layouts": {"shapes": [{"name": "image-aligned", "chunk": [8, 5, 100]}, [4, 4, 2048]]},
        "cases": {"slice": {"repeats": 4}, "spectra": {"repeats": 4}},
    },
    # the chapter's own experiments are small: as shipped (4,000 bytes of values as 1 to 1,000
    # datasets; a 12.8 MB array, where a smaller one would hide a column's bytes in fixed costs)
    "users-guide/metadata.yaml": {},
    "users-guide/subsetting.yaml": {},
    # the recorded subset (rows 0-299, columns 0-999) in an array just that size, in the chapter's
    # 300 x 200 tiles (240,000 bytes) and the shipped caches (2 tiles, a row of tiles)
    "users-guide/chunk-cache.yaml": {"dataset": {"shape": [300, 1000]}},
    # 64 MiB: two amounts past several tens of MiB (32 and 64) for request-size, above 4 KiB; the
    # read sizes as shipped, 300 reads each through HDF5's default cache and a 16 MiB one
    "io-lab/chunk-io.yaml": {
        "dataset": {"shape": [2048, 4096]},
        "chunk_cache": [{"bytes": 1048576, "slots": 521, "w0": 0.75}, {"bytes": 16777216, "slots": 10007, "w0": 0.75}],
        "cases": {
            "boxes": [
                {"name": "io_2k", "size": [16, 16], "repeats": 300, "cold": "first"},
                {"name": "io_8k", "size": [32, 32], "repeats": 300, "cold": "first"},
                {"name": "io_128k", "size": [128, 128], "repeats": 300, "cold": "first"},
            ],
            "iosize": {"data_sizes": [4096, 33554432, 67108864], "sizes": [67108864], "repeats": 15},
        },
    },
}


def _merged(base: dict, change: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_every_study_section_has_its_config_and_each_header_says_its_plan():
    assert {_name(p) for p in STUDIES} >= set(TINY)
    mapped = (REPO / "config" / "README.md").read_text()
    for path in STUDIES:
        header = path.read_text().split("\nsweep:")[0]
        assert "# Plan (" in header and "# Departures:" in header, _name(path)
        assert f"studies/{path.parent.name}/" in mapped and path.name in mapped, _name(path)


EXAMPLES = sorted((REPO / "examples").glob("*/*.yaml"))
UNITS = {"s": 1, "min": 60, "h": 3600, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
PLAN_LINE = re.compile(
    r"Plan \([^)]*\): (?P<time>[\d.]+ (?:s|min|h)) of job time, largest store (?P<largest>[\d.]+ [kMGT]B), "
    r"peak disk (?P<peak>[\d.]+ [kMGT]B)"
)
# a config run on SLURM: its plan with the profile's jobs at once, beside the local one
SLURM_PLAN = re.compile(
    r"on SLURM \(profiles/slurm, (?P<jobs>\d+) jobs at once\) peak disk (?P<slurm_peak>[\d.]+ [kMGT]B), "
    r"at most (?P<slurm>\d+ min) per job"
)


def _amount(text: str) -> float:
    number, unit = text.split()
    return float(number) * UNITS[unit]


@pytest.mark.parametrize("path", STUDIES + EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_headers_plan_is_the_plan_within_15_percent(path):
    """The figures a header promises (job time, largest store, peak disk with 2 jobs at once; for
    a config run with the SLURM profile, also the peak disk with the profile's jobs at once and
    the longest job's ask) are what the plan computes for the config as shipped, within 15%."""
    from h5sweep.sweep import plan as plans
    from h5sweep.sweep import resources

    header = path.read_text().split("\nsweep:")[0]
    text = " ".join(line.lstrip("#").strip() for line in header.splitlines())
    found = PLAN_LINE.search(text)
    assert found, f"{path}: no '# Plan (...): T of job time, largest store S, peak disk D' line"
    said = found.groupdict()
    sweep = load_sweep(yaml.safe_load(path.read_text()), probe=False)
    the_plan = plans.make_plan(sweep, 2)
    computed = {
        "time": the_plan.job_seconds,
        "largest": max(fs.largest_file_bytes for fs in the_plan.filesystems),
        "peak": max(fs.peak_bytes for fs in the_plan.filesystems),
    }
    on_slurm = SLURM_PLAN.search(text)
    if "--profile profiles/slurm" in header:
        assert on_slurm, (
            f"{_name(path)}: run with the SLURM profile, its plan says no "
            "'on SLURM (profiles/slurm, N jobs at once) peak disk D, at most M min per job'"
        )
    if on_slurm:  # the cluster's peak (every running job its stores) and the longest job's ask
        jobs = int(on_slurm["jobs"])
        assert jobs == yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())["jobs"]
        on_cluster = plans.make_plan(sweep, jobs, cluster=True)
        computed["slurm_peak"] = max(fs.peak_bytes for fs in on_cluster.filesystems)
        computed["slurm"] = 60 * max(a.runtime_min for a in resources.slurm_asks(sweep))
        said |= {key: on_slurm[key] for key in ("slurm_peak", "slurm")}
    for key, value in computed.items():
        amount = _amount(said[key])
        assert abs(amount - value) <= 0.15 * value, f"{path.name}: header {key} {said[key]}, plan {value:.4g}"


# A header names the figures that show what the config reproduces in its `# Figures:` entry,
# from that line to the first line ending in a full stop: each figure by its file name under
# results/<sweep>/plots/, in backticks, `*` standing for the rest of a name (`stats-*`). A name
# like `bars-*` anywhere else in the header is held to the same rule.
NAME_PATTERN = re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\*")


def _figures_entry(header: str) -> str:
    lines = header.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("# Figures:")]
    if not starts:
        return ""
    entry = []
    for line in lines[starts[0] :]:
        entry.append(line.lstrip("#").strip())
        if line.rstrip().endswith("."):
            break
    return " ".join(entry)


@pytest.mark.parametrize("path", STUDIES + EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_header_names_its_figures_as_the_plan_draws_them(path):
    """Every figure name (or name pattern) a header gives, in its `# Figures:` entry or
    elsewhere, is one the config's plan draws."""
    header = path.read_text().split("\nsweep:")[0]
    entry = _figures_entry(header)
    assert entry, f"{_name(path)}: no '# Figures: `name-*`, ...' entry in the header"
    named = re.findall(r"`([^`]+)`", entry)
    assert named, f"{_name(path)}: its '# Figures:' entry names no figure in backticks"
    drawn = figure_names(load_sweep(yaml.safe_load(path.read_text()), probe=False))
    wrong = sorted(name for name in {*named, *NAME_PATTERN.findall(header)} if not fnmatch.filter(drawn, name))
    assert not wrong, f"{_name(path)}: the header names {wrong}, not drawn (the plan draws {sorted(drawn)})"


@pytest.mark.workflow
@pytest.mark.parametrize("path", STUDIES + sorted((REPO / "examples").glob("*/config.yaml")), ids=_name)
def test_every_study_config_dry_runs_with_its_plan(workflow, path):
    """Every study config and every example plans as shipped (an example with its shipped
    recording of its program's reads)."""
    if path.parts[-3] == "examples":
        shutil.copytree(REPO / "examples", workflow.root / "examples")
    dry = workflow.run("-n", "--cores", "2", "--configfile", str(path.relative_to(REPO)), check=True)
    planned = [line for line in (dry.stdout + dry.stderr).splitlines() if line.startswith("h5sweep plan:")]
    assert len(planned) == 1
    # the plan command prints the same plan without Snakemake
    alone = subprocess.run(
        [sys.executable, "-m", "h5sweep.sweep", "--cores", "2", "-q", "--configfile", str(path.relative_to(REPO))],
        cwd=workflow.root,
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    assert alone.stdout.splitlines()[0] == planned[0]
    assert not (workflow.root / "results" / yaml.safe_load(path.read_text())["sweep"] / "summary.csv").exists()


@pytest.mark.workflow
@pytest.mark.parametrize("name", sorted(TINY))
def test_the_experiments_run_end_to_end_at_a_tiny_size_with_their_figures(tmp_path, name):
    config = _merged(yaml.safe_load((REPO / "config" / "studies" / name).read_text()), TINY[name])
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / config["sweep"]
    summary = pd.read_parquet(results / "summary.parquet")
    assert set(summary["case"]) >= set(config["cases"]) - {"boxes"}
    sweep = load_sweep(config, probe=False)
    for figure in figure_names(sweep):
        assert (results / "plots" / f"{figure}.png").stat().st_size > 5_000, figure
    # the decision on one page, in words and with its charts
    assert (results / "decision.md").read_text().startswith(f"# Decision: {config['sweep']}\n")
    ranked = len(pd.read_csv(results / "recommendation.csv")) > 0  # none where no read case runs
    assert ("window.vegaEmbed" in (results / "index.html").read_text()) == ranked
    found = pd.read_csv(results / "findings.csv")
    kept = REPO / "results" / "scratch" / "study-findings"  # for a reader of a failed run
    kept.mkdir(parents=True, exist_ok=True)
    found.to_csv(kept / f"{name.replace('/', '__')}.csv", index=False)
    verdict = dict(zip(found["finding"], found["verdict"], strict=True))
    mine = [f.key for f in findings.FINDINGS if f.config == f"config/studies/{name}"]
    # every finding the config was built for reaches the verdict it should at this size
    evidence = dict(zip(found["finding"], found["evidence"], strict=True))
    wrong = {key: (verdict[key], evidence[key]) for key in mine if not _as_expected(key, verdict[key])}
    assert not wrong, wrong


# The verdict each finding reaches on its study config's tiny run, and why it should. A verdict
# that counted evidence decides (bytes, file sizes, calls, chunks fetched) or a gate decides (the
# config, the values' origin) is asserted; one that a ratio of times decides is not (the suite
# asserts no duration): MEASURED asks only for a verdict (any but `not measured`), and its comment
# says what a quiet machine shows. The shared machine's load has turned a column's 0.22x
# (0.20-0.23) into 0.89x (0.70-1.35): what holds there is bench/'s to say.
MEASURED = "measured"
EXPECTED = {
    # compression-grid.yaml's values are synthetic and it does not opt in: the ratio would test the
    # generator (made to compress about 3x at level 4)
    "gzip4-ratio": findings.UNMEASURED,
    # 3 x 3 chunks on a 16 x 16 image: the edge chunks are allocated whole (file sizes, no noise)
    "edge-padding": findings.HOLDS,
    # 2,048 chunks of 1 x 1 x 128 against 256 of 1 x 1 x 1024: 1.22x against 1.03x the raw bytes
    "one-by-one-metadata": findings.HOLDS,
    # the tiny grid has 4 of the study's 42 m x m x n chunkings: "in most cases" is about most of
    # them (the shipped config measures all 42)
    "contiguous-best-spectra": findings.UNMEASURED,
    # 4 x 4 chunks read 16 chunk columns per slice where 1 x 1 read 256 (3 x 3 is not the study's);
    # with 11 warm reads the intervals may overlap
    "best-slice-chunks": MEASURED,
    # a 16 x 16 slice is 256 runs, not the study's 10,000 seeks and 39 MB of chunks: the slices'
    # cost that made them slower does not arise at this size
    "slices-slower-than-spectra": MEASURED,
    # the tiny grid has 4 of the study's 42 m x m x n chunkings: "generally" is about most of them
    "chunking-helps-subcubes": findings.UNMEASURED,
    # the values are synthetic and compression.yaml does not opt in: gzip's ratio and speed on
    # them are the generator's, not MSI data's (a donor's values are judged)
    "gzip-levels-size": findings.UNMEASURED,
    # as gzip-levels-size: synthetic values, not opted in
    "gzip-levels-write": findings.UNMEASURED,
    # per strategy, three writes each: at 32 x 32 the 32 x 32 x 2048 chunks are whole images,
    # written chunk (or block) at a time as fast as contiguous, so it cannot hold; one spectrum
    # at a time, the chunk cache gathers small-m chunks whole while contiguous writes each 8 kB
    # spectrum alone, and some chunked stores may write surely faster (the study's spectra were
    # 200 kB, its chunk columns far larger than the cache)
    "contiguous-fastest-write": MEASURED,
    # the step to 32 x 32 x 2048 is the study's own exception (it writes faster) and left out;
    # of the others, 1 x 1 x 2048 (2,048 chunks of 4 kB, two allocated per spectrum) writes surely
    # slower than 2 x 2 x 2048 (0.11-0.16 s against 0.04-0.11 s), so the trend breaks at m = 2;
    # the steps 2 to 16 lie within 6 writes' noise
    "spectrum-writes-slow-with-m": MEASURED,
    # the gate first: the tiny stores' cold z-slices read their chunks at about 100 MB/s, under
    # the fast filesystem's 200 MB/s; and the values are synthetic, not opted in
    "compression-slows-reads": findings.UNMEASURED,
    # a column, read cold, 20 paired reads a store: the 400 x 100 tiles in 0.17-0.30x the
    # contiguous file's time, the chapter's 400 x 400 in 0.6-1.0x (bytes, not seeks, cost a read
    # on this disk): holds on a quiet machine (0.17-0.27); under the shared machine's load the
    # narrow tiles' interval has reached 0.55-0.60, straddling the half: noise may leave it open
    "chunking-helps-slow-axis": MEASURED,
    # a row, read cold, 20 paired reads a store: either tiling 4.6-13x the contiguous file's one
    # read; intervals from 7.6 up on a quiet machine, from 0.9 under the shared machine's load
    "chunking-hurts-fast-axis": MEASURED,
    # counted, not timed: the subset's rows replayed through the chapter's tiles in a 300 x 1,000
    # array (5 tiles along its fastest-varying dimension, crossed 1,495 times by 299 reads): the
    # 2-tile cache fetches all 1.2 MB of a row's 5 tiles every read, the 42-tile cache none after
    # the first (the 2-tile cache's time 3.5x, evidence only)
    "cache-thrashing": findings.HOLDS,
    # judged on the 3 uncompressed pairs, Zarr's storage part above HDF5's whole read: at 4096 x 1
    # (512 chunk files) surely; the pairs of 8 files may lie within HDF5's whole read's range at
    # 2 whole reads (one run: 2 of 3 surely slower, 8192 x 32 undecided)
    "zarr-slower": MEASURED,
    # counted, not timed: zarr-python reads a chunk file in two calls (the file, then its end), as
    # many as HDF5's chunk and index reads (1.06x at 4096x1; 0.6x where a column's chunks share
    # an index node), not twice: every uncompressed pair fails the joined clauses
    "hdf5-io-operations": findings.FAILS,
    # 2 whole reads of 4 MB per store at the tiny size, their range the interval: noise decides
    # whether two shapes of one size lie within 25% (the shipped config reads 285 MB 10 times)
    "same-size-same-time": MEASURED,
    # 300 reads per read size, policy and cache through an open file; random must be surely the
    # slowest in every (read size, cache, cold or warm) cell with 6 or more reads of each policy.
    # A cold row holds only a policy's reads that reached the device, not all of a run's: those of
    # localized's walk may each be slower than random's (io_2k, HDF5's default cache: localized
    # 1.09-1.28 ms with 8 KiB from the device, random 0.22 ms with 40 KiB; once surely above: does
    # not hold); where load widens the intervals the cells are undecided (7 surely so, 3 undecided
    # of 10; 4 surely so, 1 surely not, 5 undecided): load decides
    "random-worst": MEASURED,
    # the tiny run has 1 and 2 processes (and this machine 2 cores): the sentence needs 8 processes
    # on a node of at least 8 cores
    "local-scaling": findings.UNMEASURED,
    # counted, not timed: HDF5 keeps 1,000 1 x 1 x 1 datasets of one float32 in 387,208 bytes, one
    # 10 x 10 x 10 of the same 4,000 bytes in 6,048: 64x, at most 100x where the chapter's HDF4
    # SDSs took 123.6x
    "many-datasets": findings.FAILS,
    # a warm read of 4 KiB takes HDF5 (its file's open) 24-29x raw binary's: surely over 1.25x, at
    # the smallest amount only; the larger amounts within 1.25x or, under load, undecided
    "hdf5-as-raw": MEASURED,
    # on the virtual disk, throughput rises hundreds of times from 4 KiB to 64 MiB (writes and cold
    # reads); 64 MiB's against 32 MiB's lies about 1.2-1.3x, at the plateau's 1.25x bound, and the
    # intervals of 15 repeats (0.6-1.7x, under load 0.4-4.2x) leave it open
    "request-size": MEASURED,
}


def _as_expected(key: str, verdict: str) -> bool:
    expected = EXPECTED.get(key, MEASURED)
    if expected == MEASURED:
        return verdict != findings.UNMEASURED
    return verdict in (expected if isinstance(expected, tuple) else (expected,))


def _paper_scale_summary() -> pd.DataFrame:
    """A summary of the OpenMSI grid crossed with gzip 1-8 (379 stores), as a sweep at
    paper scale would write it: a cold first access and 49 warm reads per store."""
    rows = []
    shapes = [(m, n) for m in (1, 2, 4, 8, 16, 32) for n in (128, 256, 512, 1024, 2048, 4096, 8192)]
    stores = [("contiguous", "", "none")]
    stores += [
        ("chunked", f"{m}x{m}x{n}", comp) for m, n in shapes for comp in ["none"] + [f"gzip-{g}" for g in range(1, 9)]
    ]
    for i, (layout, chunk, comp) in enumerate(stores):
        for state, repeats in (("cold", 1), ("warm", 49)):
            t = 0.01 * (1 + i % 17) * (3 if state == "cold" else 1)
            rows.append(
                {
                    "filesystem": "disk",
                    "case": "slice",
                    "backend": "hdf5",
                    "layout": layout,
                    "layout_id": layout if not chunk else f"chunked-{chunk}",
                    "chunk_shape": chunk,
                    "compression": comp,
                    "cache_state": state,
                    "repeats": repeats,
                    "min_s": t / 2,
                    "median_s": t,
                    "mean_s": t * 1.1,
                    "max_s": t * 3,
                    "median_ci_low_s": t * 0.9,
                    "median_ci_high_s": t * 1.1,
                    "ratio_to_contiguous": 1 + i % 5,
                    "ratio_ci_low": 1 + i % 5 - 0.1,
                    "ratio_ci_high": 1 + i % 5 + 0.1,
                    "bytes_selected": 500_000,
                    "compression_ratio": 1.0 if comp == "none" else 1 + (i % 9) / 3,
                    "variant": "",
                    "layout_name": "",
                    "shard_shape": "",
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.heavy
def test_a_grid_at_paper_scale_is_drawn_in_panels_every_label_readable(tmp_path):
    """379 stores: bars and stats in one panel per compression (43 and 42 rows, each at most
    45), every store labelled once; the compression ratio in one (m, n) panel per gzip level."""
    from h5sweep.report import bars, studies

    summary = _paper_scale_summary()
    rows = summary.assign(_candidate=summary.apply(bars._candidate, axis=1))
    order = list(dict.fromkeys(rows["_candidate"]))
    panels = bars.facets(rows, order)
    assert len(order) == 379 and len(panels) == 9
    assert all(len(names) <= bars.ROWS_PER_PANEL for _, names in panels)
    labelled = [name for _, names in panels for name in names]
    assert set(labelled) == set(order) and labelled.count("contiguous") == 9  # the baseline in each
    assert [title for title, _ in panels] == ["none"] + [f"gzip-{g}" for g in range(1, 9)]
    for plot in (bars.plot_case_bars, bars.plot_stats):
        out = tmp_path / f"{plot.__name__}.png"
        plot(summary, "slice", "disk", str(out))
        assert out.stat().st_size > 50_000
    out = tmp_path / "grid.png"
    studies.plot_compression_grid(summary[summary["cache_state"] == "warm"], str(out))
    assert out.stat().st_size > 50_000
    # a small sweep stays one panel
    small = rows[rows["compression"].isin(["none"])]
    assert len(bars.facets(small, list(dict.fromkeys(small["_candidate"])))) == 1
