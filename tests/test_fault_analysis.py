"""Faults in the analysis: the summary counts what each read met, the ranking compares stores on
undisturbed reads only (or says it cannot), a store whose reads failed on an emulated fault is
listed with why instead of ranked, the decision says which faults were emulated and what they
cost, and the findings on throttling are judged on the sweep's own counts. Counted evidence only:
no test here asserts a duration."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from conftest import tiny_config

from h5sweep.analyze import findings
from h5sweep.analyze.aggregate import summarize
from h5sweep.analyze.decision import sheet
from h5sweep.analyze.ranking import MIN_UNDISTURBED, rank_layouts, rank_selected_reads, selected_reads
from h5sweep.analyze.wording import markdown
from h5sweep.measure.objective import MIX_SECONDS
from h5sweep.storage import columns as C
from h5sweep.storage import objectstore as O

# a fault-free variant, a few throttled requests (some reads left undisturbed) and 404s for held
# keys at a rate no store reads through
FAULTS = [{}, {"slowdown": 0.01, "seed": 3}, {"not_found": 0.5}]
REPEATS = 10


# the jobs below run once: session-scoped, the module goes to one test worker whole (conftest)
@pytest.fixture(scope="session")
def s3():
    import s3server

    with s3server.bucket("h5sweep-fault-analysis") as (_, location):
        yield location


@pytest.fixture(scope="session")
def measured(s3, tmp_path_factory):
    """The generate and query jobs of a contiguous HDF5 file and a chunked Zarr store on three
    variants of one filesystem (no faults, throttled, 404s), as a job runs them; the rows of
    every job, the relay's log lines injected during each query job, and the sweep."""
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep import stages
    from h5sweep.sweep.model import load_sweep

    tmp = tmp_path_factory.mktemp("faults")
    config = tiny_config(tmp, sweep="fault-analysis")
    entry = {"endpoint": s3.endpoint, "bucket": s3.bucket, "prefix": "analysis", "faults": FAULTS}
    config["filesystems"] = {"cloud": {"path": str(tmp / "staging"), "s3": entry}}
    config["dataset"]["shape"] = [10, 10, 400]
    config["backends"] = ["hdf5", "zarr"]
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [100]}, "shapes": []}
    config["compression"] = ["none"]
    config["zarr"] = {"readers": ["zarr-python"]}
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": REPEATS, "depth": 5}}
    sweep = load_sweep(config)
    tables, injected = [], {}
    for fs in sweep.filesystems:
        log = O.relay(fs.s3).log_path
        for store_file in (f for f in sweep.stores() if f.filesystem is fs):
            where = (store_file.backend.name, store_file.layout.id, store_file.compression.name)
            store = os.path.join(fs.directory, store_file.backend.name, f"store.{store_file.backend.name}")
            out = tmp / fs.name / store_file.backend.name
            stages.run_generate(job_settings.generate_settings(sweep, fs, *where), store, str(out / "write.parquet"))
            mark = os.path.getsize(log)
            stages.run_query(job_settings.query_settings(sweep, fs, *where), store, str(out / "query.parquet"))
            with open(log, encoding="latin-1") as f:
                f.seek(mark)
                lines = [line.rstrip("\n").split("\t") for line in f]
            injected[(fs.name, *where)] = [line for line in lines if line[5]]
            tables += [pd.read_parquet(out / "write.parquet"), pd.read_parquet(out / "query.parquet")]
    rows = pd.concat(tables, ignore_index=True)
    return rows, injected, sweep


def _store_rows(rows: pd.DataFrame, key: tuple) -> pd.DataFrame:
    fs, backend, layout, compression = key
    mine = rows[(rows[C.FILESYSTEM] == fs) & (rows[C.BACKEND] == backend) & (rows[C.LAYOUT_ID] == layout)]
    return mine[(mine[C.COMPRESSION] == compression) & mine[C.POLICY].notna()]


def _failed(reads: pd.DataFrame) -> pd.Series:
    return (
        reads[O.READ_FAILED].fillna("").astype(str) != "" if O.READ_FAILED in reads else reads[C.CASE] != reads[C.CASE]
    )


@pytest.mark.heavy
def test_every_injected_fault_is_counted_in_its_reads_rows_and_in_the_summary(measured):
    """Per store job, the faults its read rows count (the failed read's row too) are the faults
    the relay's log injected during the job, of the variant's kind; the summary's sums and
    shares are the rows'; the fault-free variant met none."""
    rows, injected, sweep = measured
    summary = summarize(rows, sweep.score, sweep.reference)
    kinds = {"cloud_f0": set(), "cloud_f1": {"slowdown"}, "cloud_f2": {"not-found"}}
    for key, lines in injected.items():
        reads = _store_rows(rows, key)
        assert {line[5] for line in lines} <= kinds[key[0]]
        assert int(reads[O.FAULTS_MET].sum()) == len(lines), key
        failed = int(reads[O.REQUESTS_FAILED].sum())
        assert failed == len([line for line in lines if line[3].isdigit() and int(line[3]) >= 500]), key
        mine = _store_rows(summary, key)
        assert int(mine[O.FAULTS_SUM].sum()) == len(lines)
        assert int(mine[O.REQUESTS_FAILED_SUM].sum()) == failed
        assert int(mine[O.REQUESTS_RETRIED_SUM].sum()) == int(reads[O.REQUESTS_RETRIED].sum())
        assert int(mine[O.READS_FAILED].sum()) == int(_failed(reads).sum())
        disturbed = reads[O.DISTURBED].astype("boolean").fillna(False).astype(bool)
        assert (mine[O.DISTURBED_SHARE] * (mine[C.REPEATS] + mine[O.READS_FAILED])).sum() == pytest.approx(
            disturbed.sum()
        )
    assert not any(injected[k] for k in injected if k[0] == "cloud_f0")
    assert any(injected[k] for k in injected if k[0] == "cloud_f1")
    # each store on the 404 variant failed one read and was read no further; its earlier reads are kept
    for key in (k for k in injected if k[0] == "cloud_f2"):
        reads = _store_rows(rows, key)
        assert _failed(reads).sum() == 1 and len(reads) < REPEATS
        said = reads.loc[_failed(reads), O.READ_FAILED].iloc[0]
        assert "the store answered not found for a key it holds" in said
        assert reads.loc[~_failed(reads), C.SECONDS].notna().all()


@pytest.mark.heavy
def test_no_read_that_met_a_fault_is_ranked_and_the_pairing_holds(measured):
    """On the throttled variant the stores are ranked on the selections every store read
    undisturbed: the ranking is the same as that of those reads alone, each store counts its
    disturbed reads and its retries, and every store has the same selections."""
    from h5sweep.sweep import settings as job_settings

    rows, _, sweep = measured
    summary = summarize(rows, sweep.score, sweep.reference)
    settings = job_settings.recommend_settings(sweep)
    reads = selected_reads(rows, settings)
    throttled = reads[reads[C.FILESYSTEM] == "cloud_f1"]
    disturbed = throttled[O.DISTURBED].astype(bool)
    hit = set(throttled.loc[disturbed, C.REPEAT])
    assert hit and REPEATS - len(hit) >= MIN_UNDISTURBED
    table = rank_selected_reads(throttled, summary, settings)
    clean = rank_selected_reads(throttled[~throttled[C.REPEAT].isin(hit)], summary, settings)
    assert list(table[C.SELECTIONS]) == [REPEATS - len(hit)] * len(table)
    assert list(table[MIX_SECONDS]) == list(clean[MIX_SECONDS])
    assert table[C.RECOMMENDED].sum() == 1 and O.NOT_RANKED not in table
    for store, mine in throttled.groupby([C.BACKEND, C.LAYOUT_ID]):
        row = table[(table[C.BACKEND] == store[0]) & (table[C.LAYOUT_ID] == store[1])].iloc[0]
        assert row[O.READS_DISTURBED] == int(mine[O.DISTURBED].astype(bool).sum())
        assert row[O.RETRIES_PER_READ] == pytest.approx(mine[O.REQUESTS_RETRIED].mean())
        assert row[O.FAULTS_EMULATED] == "slowdown 0.01 (seed 3)"


@pytest.mark.heavy
def test_a_store_whose_reads_failed_is_not_ranked_and_the_decision_names_it_and_why(measured):
    from h5sweep.sweep import settings as job_settings

    rows, _, sweep = measured
    summary = summarize(rows, sweep.score, sweep.reference)
    settings = job_settings.recommend_settings(sweep)
    table = rank_layouts(rows, summary, settings)
    failed = table[table[C.FILESYSTEM] == "cloud_f2"]
    assert len(failed) == 3 and not failed[C.RECOMMENDED].any() and failed[C.SCORE].isna().all()
    assert (failed[O.READS_FAILED] == 1).all()
    for why in failed[O.NOT_RANKED]:
        assert why.startswith("not ranked: 1 read failed on an emulated fault (not-found 0.5 (seed 0)")
        assert "the store answered not found for a key it holds" in why
    text = markdown(table, settings)
    assert "On cloud_f2 (s3, HDF5, Zarr), no store is ranked. Not ranked: HDF5 contiguous, " in text
    decided = sheet(table, summary, settings).markdown()
    section = decided.split("## cloud_f2 (s3)")[1]
    assert "**No choice:** no store is ranked." in section
    assert "HDF5 contiguous, HDF5 chunked-5x5x100" in section and "failed on an emulated fault" in section
    assert "not-found 0.5 (seed 0): emulated, not met" in section


@pytest.mark.heavy
def test_the_decision_says_which_faults_were_emulated_and_what_they_added_per_store(measured, tmp_path):
    """The recommend job's outputs, written from the rows and the summary as the workflow
    writes them: the throttled variant's decision says the faults were emulated, how many
    reads were left out of the ranking, and per store the time added against the fault-free
    variant (paired on every selection) and the retries per read."""
    from h5sweep.analyze.recommend import recommend
    from h5sweep.measure.records import write_table
    from h5sweep.sweep import settings as job_settings

    rows, _, sweep = measured
    summary = summarize(rows, sweep.score, sweep.reference)
    settings = job_settings.recommend_settings(sweep)
    write_table(rows, str(tmp_path / "measurements.parquet"))
    write_table(summary, str(tmp_path / "summary.parquet"))
    outputs = [str(tmp_path / name) for name in ("recommendation.csv", "recommendation.md", "index.rst", "decision.md")]
    table, _ = recommend(str(tmp_path / "measurements.parquet"), str(tmp_path / "summary.parquet"), settings, *outputs)
    assert "emulated, not met" in (tmp_path / "index.rst").read_text()
    throttled = table[table[C.FILESYSTEM] == "cloud_f1"]
    assert set(throttled[O.FAULT_FREE_FILESYSTEM]) == {"cloud_f0"}
    assert set(throttled[O.ADDED_PAIRS]) == {REPEATS}  # every selection read on both variants
    assert throttled[O.ADDED_S_PER_UNIT_CI_LOW].notna().all()
    assert table.loc[table[C.FILESYSTEM] == "cloud_f0", O.FAULT_FREE_FILESYSTEM].isna().all()
    section = (tmp_path / "decision.md").read_text().split("## cloud_f1 (s3)")[1].split("## ")[0]
    assert "**Faults:** slowdown 0.01 (seed 3): emulated, not met, each injected by a relay on this machine's" in (
        section
    )
    disturbed = int(throttled[O.READS_DISTURBED].sum())
    assert f"{disturbed} reads met a fault, a failed answer or a retry and were left out of the ranking" in section
    assert "**Fault cost:** against the same store on cloud_f0 (no faults" in section
    for _, row in throttled.iterrows():
        assert f"{row[O.RETRIES_PER_READ]:.3g} retries per read" in section
    assert section.count(f"paired on {REPEATS} selections") == len(throttled)
    assert "**Choose**" in section


@pytest.mark.heavy
def test_a_wrong_value_on_an_undisturbed_read_still_fails_its_job(s3, tmp_path):
    """Reads that record emulated faults' failures (a query job on a filesystem with faults)
    still fail on values that differ from the source where no fault was injected."""
    from h5sweep import backends
    from h5sweep.backends.remote import RemoteBackend
    from h5sweep.cases import read_cases_from_config
    from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.datasources import SyntheticSource
    from h5sweep.storage.errors import FaultedReadError, VerificationError
    from h5sweep.storage.latency import Faults
    from h5sweep.storage.layouts import Layout

    shape, layout = (10, 10, 200), Layout((5, 5, 100))
    clean = O.S3Location(s3.endpoint, s3.bucket, "wrong-values")
    staging = tmp_path / "staging"
    staging.mkdir()
    path = str(staging / "store.zarr")
    written = SyntheticSource(shape, np.uint16, seed=5)
    RemoteBackend(backends.load("zarr"), clean, staging).write_fast(
        path, written.materialize(), layout, parse_compression("none"), "data", 1
    )
    # a relay with a fault that never fires: every read passes it, none disturbed
    quiet = O.S3Location(clean.endpoint, clean.bucket, clean.prefix, 0.0, Faults(slowdown=1e-9))
    remote = RemoteBackend(backends.load("zarr"), quiet, staging)
    (case,) = read_cases_from_config({"slice": {"repeats": 2}}, shape)
    other = SyntheticSource(shape, np.uint16, seed=6)  # not the values written
    plan = ReadPlan([case], shape, 0, record_faults=True)
    with pytest.raises(VerificationError, match="differ from the data source") as failed:
        read_store(StoreUnderTest(remote, path, layout, other), plan)
    assert not isinstance(failed.value, FaultedReadError)


def _reads(filesystem, store, disturbed_repeats, repeats=10, faults="slowdown 0.2 (seed 0)"):
    """Constructed read rows of one store on an object store, the given selections disturbed."""
    backend, layout = store
    return [
        {
            C.FILESYSTEM: filesystem,
            C.FS_TYPE: "s3",
            C.BACKEND: backend,
            C.LAYOUT_ID: layout,
            C.LAYOUT_NAME: "",
            C.CHUNK_SHAPE: "" if layout == "contiguous" else layout.removeprefix("chunked-"),
            C.COMPRESSION: "none",
            C.CASE: "slice",
            C.REPEAT: r,
            C.SECONDS: 0.01 * (2 if layout == "contiguous" else 1) + 0.001 * r,
            C.POLICY: "random",
            C.COLD_MODE: "every",
            C.READS_SINCE_OPEN: 0,
            C.READ_OPTION: "",
            C.READ_OPTION_SETTING: "",
            C.READ_OPTION_INDEX: 0,
            C.CACHE_STATE: "cold",
            O.REQUESTS: 4,
            O.REQUESTS_RETRIED: int(r in disturbed_repeats),
            O.REQUESTS_FAILED: int(r in disturbed_repeats),
            O.FAULTS_MET: int(r in disturbed_repeats),
            O.DISTURBED: r in disturbed_repeats,
            O.FAULTS_EMULATED: faults,
        }
        for r in range(repeats)
    ]


def _constructed_summary(reads: pd.DataFrame) -> pd.DataFrame:
    stores = reads.drop_duplicates([C.FILESYSTEM, C.BACKEND, C.LAYOUT_ID, C.COMPRESSION])
    write = stores.assign(**{C.CASE: "write", C.MEDIAN_S: 0.1, C.PRIMARY: True, C.WRITES_STOPPED: 0})
    return write.assign(**{C.FILE_BYTES: 1000, C.RAW_BYTES: 1000, C.MEDIAN_CI_LOW_S: 0.09, C.MEDIAN_CI_HIGH_S: 0.11})


SETTINGS = {
    "recommend": {"weights": {"slice": 1.0}, "statistic": "first-access", "max_file_ratio": None, "max_write_s": None},
    "read_cases": ["slice"],
    "policy": "random",
}


def test_too_few_undisturbed_selections_rank_no_store_and_say_why():
    """Constructed reads: where the selections every store read undisturbed are fewer than
    the ranking needs, no store is ranked and the verdict and decision say why; one
    disturbed selection fewer than that, the stores are ranked on the rest."""
    stores = [("hdf5", "contiguous"), ("hdf5", "chunked-5x5x100")]
    # five selections disturbed (by one store or the other): five left, one short
    few = pd.DataFrame(_reads("cloud", stores[0], {0, 1, 2}) + _reads("cloud", stores[1], {2, 3, 4}))
    table = rank_layouts(few, _constructed_summary(few), SETTINGS)
    assert len(table) == 2 and table[C.SCORE].isna().all() and not table[C.RECOMMENDED].any()
    said = f"each case needs {MIN_UNDISTURBED}): slice {REPEATS - 5} of {REPEATS}"
    assert all(why.endswith(said) for why in table[O.NOT_RANKED])
    assert list(table[O.READS_DISTURBED]) == [3, 3]
    assert "no store is ranked. Not ranked: contiguous, chunked-5x5x100: too few selections" in (
        markdown(table, SETTINGS)
    )
    assert "**No choice:** no store is ranked." in sheet(table, _constructed_summary(few), SETTINGS).markdown()
    enough = pd.DataFrame(_reads("cloud", stores[0], {0, 1}) + _reads("cloud", stores[1], {1, 2, 3}))
    table = rank_layouts(enough, _constructed_summary(enough), SETTINGS)
    assert list(table[C.SELECTIONS]) == [MIN_UNDISTURBED] * 2 and table[C.RECOMMENDED].sum() == 1


def _finding(key):
    return next(f for f in findings.FINDINGS if f.key == key)


THROTTLED = "slowdown 0.2 (seed 0)"


def _summary_row(chunk, per_request, throttled, repeats=20, failed=0, disturbed=1.0, variant="random, s3fs", **more):
    return {
        C.FILESYSTEM: "cloud_f1",
        C.BACKEND: more.get("backend", "zarr"),
        C.CASE: "slice",
        C.VARIANT: variant,
        C.CACHE_STATE: "cold",
        C.POLICY: "random",
        C.CHUNK_SHAPE: chunk,
        C.REPEATS: repeats,
        C.BYTES_SELECTED: 2**20,
        O.REQUESTS_MEDIAN: 2**20 / per_request,
        O.BYTES_REQUESTED_MEDIAN: 2**20,
        O.REQUESTS_FAILED_SUM: throttled,
        O.READS_FAILED: failed,
        O.DISTURBED_SHARE: disturbed,
        O.FAULTS_EMULATED: more.get("faults", THROTTLED),
    }


def test_small_requests_pay_more_reaches_each_verdict_on_constructed_rows():
    finding = _finding("throttled-small-requests")

    def judged(small, large, faults=THROTTLED):
        rows = [
            _summary_row("2x2x64", 2**16, small, faults=faults),
            _summary_row("8x8x256", 2**20, large, faults=faults),
        ]
        return findings.judge(finding, pd.DataFrame(rows), (100, 100, 1000))

    assert judged(100, 5)[0] == findings.HOLDS
    assert "1 surely so, 0 surely not, 0 undecided of 1 pairs" in judged(100, 5)[1]
    assert judged(2, 60)[0] == findings.FAILS
    assert judged(10, 8)[0] == findings.INCONCLUSIVE
    verdict, evidence = judged(100, 5, faults="none")
    assert verdict == findings.UNMEASURED and finding.needs in evidence


def test_retry_policy_decides_reaches_each_verdict_on_constructed_rows():
    finding = _finding("retry-policy-decides")

    def judged(a, b):
        """Two readers, each (failed, throttled reads)."""
        rows = [
            _summary_row("5x5x100", 2**16, 9, repeats=n - k, failed=k, variant=f"random, {name}")
            for name, (k, n) in zip(("s3fs", "obstore"), (a, b), strict=True)
            if n
        ]
        return findings.judge(finding, pd.DataFrame(rows), (100, 100, 1000))

    verdict, evidence = judged((0, 40), (30, 40))
    assert verdict == findings.HOLDS and "30 of 40 throttled reads failed" in evidence
    assert judged((0, 100), (1, 100))[0] == findings.FAILS
    assert judged((0, 5), (1, 5))[0] == findings.INCONCLUSIVE
    assert judged((0, 40), (0, 0))[0] == findings.UNMEASURED  # one client only


@pytest.mark.heavy
def test_the_throttling_findings_on_real_rows_rest_on_the_rows_counts(measured):
    rows, _, sweep = measured
    summary = summarize(rows, sweep.score, sweep.reference)
    table = findings.evaluate(summary, sweep.shape)
    verdict = {(r[C.FILESYSTEM], r[C.FINDING]): (r[C.VERDICT], r[C.EVIDENCE]) for _, r in table.iterrows()}
    for fs in ("cloud_f0", "cloud_f2"):  # no throttling emulated there
        for key in ("throttled-small-requests", "retry-policy-decides"):
            assert verdict[(fs, key)][0] == findings.UNMEASURED
    judged, evidence = verdict[("cloud_f1", "retry-policy-decides")]
    assert judged != findings.UNMEASURED and "slowdown 0.01 (seed 3), emulated by the relay" in evidence
    throttled = summary[(summary[C.FILESYSTEM] == "cloud_f1") & summary[C.POLICY].notna()]
    for backend, mine in throttled.groupby(C.BACKEND):
        met = round((mine[O.DISTURBED_SHARE] * mine[C.REPEATS]).sum())
        assert f"{int(mine[O.READS_FAILED].sum())} of {met} throttled reads failed" in evidence, backend
