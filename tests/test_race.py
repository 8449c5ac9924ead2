"""Racing layouts (``race``): a store that has clearly lost stops being read; a store within
the margin of the best, and the reference, are read to the end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases import read_cases_from_config
from h5sweep.cases.write.race import WriteRace, race_writes
from h5sweep.measure import lock
from h5sweep.measure.engine import ReadPlan, StoreUnderTest, run_reads
from h5sweep.measure.engine.race import Race, RaceRule
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import race_from_config, write_race_from_config

RULE = RaceRule(weights={"spectra": 1.0}, margin=1.25, min_rounds=4, rounds_per_look=2)


def test_a_race_drops_a_store_five_times_slower_and_keeps_one_within_the_margin():
    rng = np.random.default_rng(0)
    race = Race(RULE, 3, ["spectra"], rounds=12, protected={0})
    speed = [1.0, 1.1, 5.0]  # the reference, one within the margin, one five times slower
    dropped_at = {}
    for r in range(12):
        for k in range(3):
            if race.reads(0, k):
                race.record(0, k, r, speed[k] * (1 + 0.05 * rng.standard_normal()))
        if race.due(r + 1):
            for k in race.look(r + 1):
                dropped_at[k] = r + 1
    assert dropped_at == {2: 4}  # at the first look, after the minimum rounds
    assert race.out[2].at_least > 1.25 and not race.reads(0, 2) and race.reads(0, 1)
    assert [r for r in range(13) if race.due(r)] == [4, 6, 8, 10]  # the last round is read whatever


def test_the_reference_is_never_raced_out_and_an_unraced_case_reads_every_store():
    race = Race(RaceRule({"spectra": 1.0}, min_rounds=2, unraced=frozenset({"slice"})), 2, ["spectra", "slice"], 6, {1})
    for r in range(2):
        race.record(0, 0, r, 1.0)
        race.record(0, 1, r, 9.0)  # the protected store is the slow one
    assert race.look(2) == [] and race.reads(1, 1)


def test_race_config_is_off_without_an_interleaved_pass_and_takes_its_keys():
    assert race_from_config(True, interleave=False) is None and race_from_config(False, interleave=True) is None
    rule = race_from_config({"margin": 2.0}, interleave=True)
    assert rule["margin"] == 2.0 and rule["min_rounds"] == 8


@pytest.fixture(scope="session")
def three_stores(tmp_path_factory):
    """A contiguous store (the reference), a byte-identical second one (within any margin)
    and a store of one-image gzip-9 chunks, all 4,000 of which a spectrum crosses."""
    directory = tmp_path_factory.mktemp("race")
    shape = (20, 20, 4000)
    source = SyntheticSource(shape, np.uint16, seed=5)
    data = source.materialize()
    made = []
    for name, layout, codec in (
        ("reference", Layout(None), "none"),
        ("twin", Layout(None), "none"),
        ("thin", Layout((20, 20, 1)), "gzip-9"),
    ):
        path = os.path.join(directory, f"{name}.h5")
        write_file(path, data, layout, parse_compression(codec))
        made.append((path, layout))
    return shape, source, made


def _read_race_replayed(rows: list[list[dict]], rule: RaceRule, rounds: int, protected: set[int], cases: list) -> Race:
    """The read race run again on the times each store's rows hold, as the engine runs it:
    each round, every store still in the race reads each case (in the engine's order,
    ``cases``; a read the engine did not make fails here), and the race looks where it is due."""
    seconds = [[{r[C.REPEAT]: r[C.SECONDS] for r in store if r[C.CASE] == case} for store in rows] for case in cases]
    race = Race(rule, len(rows), cases, rounds, protected)
    for r in range(rounds):
        for v, per_store in enumerate(seconds):
            for k, mine in enumerate(per_store):
                if race.reads(v, k):
                    race.record(v, k, r, mine[r])
        if race.due(r + 1):
            race.look(r + 1)
    return race


def test_on_real_stores_the_race_drops_the_stores_its_rule_drops_on_the_times_read(three_stores):
    """The interleaved pass's race on three real stores: what it did is what its rule (tested
    above on given times) does on the times the reads took, whatever they were (beside a CPU
    hog and a disk writer, the byte-identical twin was sometimes raced out: which of two equal
    stores reads faster is not asserted). The store of thin gzip-9 chunks, whose cold spectrum
    reads 4,000 chunks against the reference's one run of bytes (46-290x as slow, its bound
    23 or more, beside those), is out at the first look, after the minimum rounds."""
    shape, source, made = three_stores
    stores = [StoreUnderTest(HDF5, path, layout, source) for path, layout in made]
    stores[0].protected = True
    cases = read_cases_from_config({"spectra": {"repeats": 12, "size": 1, "cold": "every"}}, shape)
    run_reads(stores, ReadPlan(cases, shape, 0, race=RULE))
    replayed = _read_race_replayed([store.rows for store in stores], RULE, 12, {0}, ["spectra"])
    for k, store in enumerate(stores):
        out = replayed.out.get(k)
        assert len(store.rows) == (out.round if out else 12), k
        marks = {(row.get(C.RACED_OUT_ROUND), row.get(C.RACED_OUT_AT_LEAST)) for row in store.rows}
        assert marks == ({(out.round, out.at_least)} if out else {(None, None)}), k
    assert 0 not in replayed.out  # the reference, protected, is read to the end
    thin = stores[2].rows
    assert len(thin) == 4 and {row[C.RACED_OUT_ROUND] for row in thin} == {4}
    assert min(r[C.RACED_OUT_AT_LEAST] for r in thin) > 1.25
    # racing off reads every store to the end
    for store in stores:
        store.rows = []
    run_reads(stores, ReadPlan(cases, shape, 0))
    assert [len(store.rows) for store in stores] == [12, 12, 12]


def _writes(base: dict, noise: float = 0.02, seed: int = 0):
    """A write per call for stores of the given mean seconds, with lognormal noise; the calls made."""
    rng = np.random.default_rng(seed)
    calls: list[tuple[str, int]] = []

    def write(key, repeat):
        calls.append((key, repeat))
        return base[key] * float(np.exp(rng.normal(0, noise)))

    return write, calls


def test_a_write_five_times_slower_stops_at_the_minimum_and_those_within_the_margin_write_to_the_end():
    base = {"best": 1.0, "twin": 1.02, "near": 1.15, "slow": 5.0}
    write, calls = _writes(base)
    times = {key: [mean * f for f in (0.99, 1.01)] for key, mean in base.items()}
    out = race_writes(times, WriteRace(min_repeats=2, max_repeats=6), write)
    assert set(out) == {"slow"} and out["slow"][0] == 2 and out["slow"][1] > 1.25
    assert {key: len(values) for key, values in times.items()} == {"best": 6, "twin": 6, "near": 6, "slow": 2}
    assert sorted({repeat for _, repeat in calls}) == [2, 3, 4, 5]  # the repeats after the minimum


def test_the_best_write_alone_stops_and_a_store_whose_interval_holds_the_limit_writes_on():
    base = {"best": 1.0, "slow": 5.0, "slower": 9.0}
    write, calls = _writes(base)
    times = {key: [mean * f for f in (0.99, 1.01)] for key, mean in base.items()}
    assert race_writes(dict(times), WriteRace(max_repeats=5), write).keys() == {"slow", "slower"}
    assert calls == []  # nothing left to separate: not one more write
    limited = {key: list(values) for key, values in times.items()}
    out = race_writes(limited, WriteRace(max_repeats=5, limit_s=5.0), write)
    assert "slow" not in out and len(limited["slow"]) == 5  # 5 s against a limit of 5 s: undecided
    assert len(limited["slower"]) == 2  # far from the limit and from the best: out at the minimum
    assert len(limited["best"]) == 5  # the best writes on while another store is in the race


def test_from_one_write_each_the_pilot_writes_twice_and_the_far_stores_stop_at_one():
    base = {"best": 1.0, "twin": 1.02, "near": 1.1, "a": 1.15, "b": 1.2, "slow": 5.0, "slower": 8.0}
    write, calls = _writes(base)
    times = {key: [mean] for key, mean in base.items()}
    out = race_writes(times, WriteRace(max_repeats=3), write)
    # the pilot: the best and its four nearest rivals, a second write each, before any look
    assert sorted(calls[:5]) == [(key, 1) for key in sorted(["best", "twin", "near", "a", "b"])]
    assert set(out) == {"slow", "slower"} and all(out[key][0] == 1 and out[key][1] > 1.25 for key in out)
    assert {key: len(values) for key, values in times.items()} == {
        **{key: 3 for key in ("best", "twin", "near", "a", "b")},
        "slow": 1,
        "slower": 1,
    }


def test_no_store_is_judged_without_a_repeat_and_the_best_alone_writes_twice():
    assert WriteRace().decide({"best": [1.0], "slow": [9.0]}, {"best", "slow"}) == ({}, set())
    write, calls = _writes({"only": 1.0})
    times = {"only": [1.0]}
    assert race_writes(times, WriteRace(max_repeats=3), write) == {}
    assert len(times["only"]) == 2  # no rival: its interval needs two writes, no more


def test_a_store_separated_after_its_last_repeat_is_measured_whole_not_raced_out():
    write, calls = _writes({"best": 1.0, "full": 5.0, "one": 9.0})
    times = {"best": [1.0, 1.01, 0.99], "full": [5.0, 5.1, 4.9], "one": [9.0]}
    out = race_writes(times, WriteRace(max_repeats=3), write)
    assert set(out) == {"one"} and out["one"][0] == 2  # the pilot's second write, then out
    assert len(times["full"]) == 3 and calls == [("one", 1)]  # wrote every repeat: ranked as measured


def test_a_write_stopped_at_its_limit_writes_no_more():
    write, calls = _writes({"best": 1.0, "twin": 1.0})
    times = {"best": [1.0, 1.01], "twin": [1.0, 0.99]}
    race_writes(times, WriteRace(max_repeats=4), lambda key, repeat: None if key == "twin" else write(key, repeat))
    # the twin's third write was stopped; the best, alone after this round, writes no more
    assert len(times["twin"]) == 2 and len(times["best"]) == 3 and calls == [("best", 2)]


def test_write_racing_is_on_with_room_to_stop_and_off_with_race_false_or_for_the_write_case():
    from h5sweep.cases.write import WriteCase

    assert write_race_from_config(True, WriteCase({"repeats": 3}), {"max_write_s": 10})["limit_s"] == 10
    assert write_race_from_config({"margin": 2.0}, WriteCase({"repeats": 4, "min_repeats": 3}), {})["margin"] == 2.0
    assert write_race_from_config(True, WriteCase({"repeats": 1}), {}) is None  # nothing to stop
    assert write_race_from_config(True, WriteCase({"repeats": 2, "min_repeats": 2}), {}) is None
    assert write_race_from_config(False, WriteCase({"repeats": 3}), {}) is None
    assert write_race_from_config(True, WriteCase({"repeats": 3, "race": False}), {}) is None
    assert WriteCase({"repeats": 5, "raced": True}).first_repeats == 1
    assert WriteCase({"repeats": 5, "raced": True, "min_repeats": 2}).first_repeats == 2
    assert WriteCase({"repeats": 5}).first_repeats == 5
    with pytest.raises(Exception, match="cases.write.min_repeats"):
        WriteCase({"repeats": 5, "min_repeats": 0})


def _replayed(rows, stores: list, rule: WriteRace) -> tuple[dict, list]:
    """The write race run again on the times a race's rows hold: each store's own writes,
    then each write the race asks for answered with the time the job measured for it (a write
    the job did not make fails here); the stores it races out and the writes it asked for, by
    ``(layout_id, compression)``. The stores are known by their place in ``stores``, as the
    job knows them (the bootstrap's draws follow that order)."""
    by_store = rows.groupby([C.LAYOUT_ID, C.COMPRESSION])
    seconds = [list(by_store.get_group(key).sort_values(C.REPEAT)[C.SECONDS]) for key in stores]
    asked = []

    def write(k, repeat):
        asked.append((stores[k], repeat))
        return seconds[k][repeat]

    out = race_writes({k: times[: rule.min_repeats] for k, times in enumerate(seconds)}, rule, write)
    return {stores[k]: mark for k, mark in out.items()}, asked


def test_on_real_stores_the_race_job_stops_the_stores_its_rule_stops_on_the_times_they_took(tmp_path):
    """The write race's job on five real stores: what it did is what its rule
    (h5sweep.cases.write.race, tested above on given times) does on the times the writes took,
    whatever they were (beside a CPU hog and a disk writer, contiguous and one whole chunk,
    alike, were sometimes told apart: which is faster is not asserted). The store of 4,096
    thin gzip-9 chunks (24-180x as slow to write as the best, its bound 3.9 or more, beside
    those) is out after the pilot."""
    import pandas as pd
    from conftest import tiny_config

    from h5sweep import backends
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep.model import load_sweep
    from h5sweep.sweep.stages import run_generate, run_write_race

    config = tiny_config(tmp_path, sweep="wrace")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"]["shape"] = [16, 16, 1024]
    config["layouts"] = {
        "contiguous": True,
        "shapes": [{"name": "whole", "chunk": [16, 16, 1024]}, {"name": "thin", "chunk": [1, 1, 64]}],
    }
    config["compression"] = ["none", "gzip-9"]
    config["cases"] = {"write": {"repeats": 4}, "spectra": {"repeats": 2, "size": 5}}
    sweep = load_sweep(config)
    fs = sweep.filesystems[0]
    stores = [tf for tf in sweep.stores() if tf.filesystem.name == fs.name]
    records = []
    for tf in stores:
        name = (tf.backend.name, tf.layout.id, tf.compression.name)
        settings = job_settings.generate_settings(sweep, fs, *name)
        records.append(str(tmp_path / "raw" / "-".join(name) / "write.parquet"))
        run_generate(settings, backends.store_path(fs.directory, sweep.name, *name), records[-1])
        assert len(pd.read_parquet(records[-1])) == 1  # each store's own job: the minimum
    out = tmp_path / "raw" / "write-race.parquet"
    race = job_settings.write_race_settings(sweep, fs)
    run_write_race(race, records, str(out))
    rows = pd.read_parquet(out)
    assert len(stores) == 5 and not rows[C.STOPPED].any()
    # the rule on the times the rows hold: the same writes asked for, the same stores out,
    # each at the same repeat and bound
    keys = [(tf.layout.id, tf.compression.name) for tf in stores]
    expected, asked = _replayed(rows, keys, WriteRace.from_settings(race["race"]))
    made = rows[rows[C.REPEAT] >= 1]
    written = zip(made[C.LAYOUT_ID], made[C.COMPRESSION], strict=True)
    assert sorted(asked) == sorted(zip(written, made[C.REPEAT], strict=True))
    marked = rows.dropna(subset=[C.RACED_OUT_ROUND]).groupby([C.LAYOUT_ID, C.COMPRESSION])
    assert {key: (int(g[C.RACED_OUT_ROUND].iloc[0]), g[C.RACED_OUT_AT_LEAST].iloc[0]) for key, g in marked} == {
        key: (repeats, pytest.approx(at_least)) for key, (repeats, at_least) in expected.items()
    }
    assert (rows.groupby([C.LAYOUT_ID, C.COMPRESSION]).size() >= 2).all()  # five stores: all in the pilot
    # the thin gzip-9 store, far slower than the best: out at the first look, after the pilot
    slow = rows[(rows[C.LAYOUT_ID] == "chunked-1x1x64") & (rows[C.COMPRESSION] == "gzip-9")]
    assert len(slow) == 2 and (slow[C.RACED_OUT_ROUND] == 2).all() and (slow[C.RACED_OUT_AT_LEAST] > 1.25).all()
    # new measurements, not copies of the store's own rows: each in a window after the first writes
    assert (made[C.FILE_BYTES] > 0).all()
    assert made[lock.WINDOW_OPENED_AT].min() > rows.loc[rows[C.REPEAT] < 1, lock.WINDOW_CLOSED_AT].max()
    assert not any(p.name.startswith(("none.hdf5.race", "gzip-9.hdf5.race")) for p in (tmp_path / "disk").rglob("*"))


def test_where_the_filesystem_rests_after_removals_the_race_removes_its_files_together(tmp_path, monkeypatch):
    import pandas as pd
    from conftest import tiny_config

    from h5sweep import backends
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep import stages
    from h5sweep.sweep.model import load_sweep

    config = tiny_config(tmp_path, sweep="kept")
    config["filesystems"] = {"disk": {"path": str(tmp_path / "disk"), "settle_s": 0.05}}
    config["dataset"]["shape"] = [8, 8, 256]
    config["layouts"] = {
        "contiguous": True,
        "shapes": [{"name": "a", "chunk": [8, 8, 64]}, {"name": "b", "chunk": [4, 4, 64]}],
    }
    config["compression"] = ["none"]
    config["cases"] = {"write": {"repeats": 3}, "spectra": {"repeats": 2, "size": 2}}
    sweep = load_sweep(config)
    fs = sweep.filesystems[0]
    records = []
    for tf in sweep.stores():
        name = (tf.backend.name, tf.layout.id, tf.compression.name)
        records.append(str(tmp_path / "raw" / "-".join(name) / "write.parquet"))
        path = backends.store_path(fs.directory, sweep.name, *name)
        stages.run_generate(job_settings.generate_settings(sweep, fs, *name), path, records[-1])
    removals = []
    from h5sweep.measure import settle

    remove_and_mark = settle.remove_and_mark

    def spied(paths, directory):
        paths = list(paths)
        removals.append([p for p in paths if os.path.lexists(p)])
        remove_and_mark(paths, directory)

    monkeypatch.setattr(settle, "remove_and_mark", spied)
    stages.run_write_race(job_settings.write_race_settings(sweep, fs), records, str(tmp_path / "race.parquet"))
    rows = pd.read_parquet(tmp_path / "race.parquet")
    added = int((rows[C.REPEAT] >= 1).sum())
    # three stores, all in the pilot: each writes twice or three times; every race file is
    # kept to the end of the race and goes with the others, in one removal
    assert 3 <= added <= 6 and [len(paths) for paths in removals] == [added]
    assert not any(".race-" in p.name for p in (tmp_path / "disk").rglob("*"))


@pytest.mark.workflow
@pytest.mark.serial
def test_a_raced_sweep_ranks_only_the_stores_read_to_the_end_and_says_which_were_raced_out(tmp_path):
    import pandas as pd
    from conftest import Workflow, tiny_config

    config = tiny_config(tmp_path, sweep="raced")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config.update(interleave=True, race={"min_rounds": 4, "rounds_per_look": 2})
    # whole planes ten deep: a spectrum touches each of their 300 chunks (the whole file), so
    # they are surely raced out
    config["layouts"]["shapes"].append({"name": "planes", "chunk": [20, 20, 10]})
    config["cases"] = {
        "write": {"repeats": 3},
        "spectra": {"repeats": 12, "size": 5},
        "subcube": {"repeats": 12, "size": [5, 5, 300]},
    }
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / "raced"
    table = pd.read_csv(results / "recommendation.csv")
    raced = table[table[C.RACED_OUT_ROUND].notna()]
    measured = pd.read_parquet(results / "measurements.parquet")
    reads = measured[measured[C.CASE] != "write"].groupby([C.LAYOUT_ID, C.COMPRESSION]).size()
    # the stores read to the end read every selection; those raced out, (round at which they stopped) x 2 cases
    for _, row in table.iterrows():
        expected = 24 if pd.isna(row[C.RACED_OUT_ROUND]) else int(row[C.RACED_OUT_ROUND]) * 2
        assert reads[(row[C.LAYOUT_ID], row[C.COMPRESSION])] == expected
    assert (raced[C.RACED_OUT_AT_LEAST] > 1.25).all() and not raced[C.RECOMMENDED].any()
    assert (raced[C.LAYOUT_NAME] == "planes").sum() == 2
    assert (raced[C.RANK] > table.loc[table[C.RACED_OUT_ROUND].isna(), C.RANK].max()).all()
    assert raced[C.SCORE].isna().all()  # never ranked as if fully measured
    assert raced.sort_values(C.RANK)[C.RACED_OUT_AT_LEAST].is_monotonic_increasing  # by how far behind
    reference = table[table[C.IS_REFERENCE]]
    assert reference[C.RACED_OUT_ROUND].isna().all()
    assert "raced out of the read pass" in (results / "recommendation.md").read_text()
    # the writes raced too: each store wrote the minimum (1), the pilot a second time, and the
    # filesystem's race added more to those not yet separated, marking the others; locally
    # and interleaved, all in the one job that writes the filesystem's stores
    assert (results / "raw" / "disk" / "write-race.parquet").exists()
    logs = results / "logs" / "generate" / "disk"
    assert (logs / "all-stores.log").exists() and not (logs / "write-race.log").exists()
    writes = measured[measured[C.CASE] == "write"]
    counts = writes.groupby([C.LAYOUT_ID, C.COMPRESSION]).size()
    marked = writes.groupby([C.LAYOUT_ID, C.COMPRESSION])[C.RACED_OUT_ROUND].max()
    assert (counts[marked.notna()] == marked[marked.notna()]).all() and marked.dropna().isin([1, 2]).all()
    assert (counts >= 2).sum() >= min(5, len(counts))  # the pilot
    # those not raced out wrote two repeats at least: the third, unless one alone was left
    left = counts[marked.isna()]
    assert (left == 3).all() if len(left) > 1 else list(left) in ([2], [3])
    for _, mine in writes.groupby([C.LAYOUT_ID, C.COMPRESSION]):
        assert sorted(mine[C.REPEAT]) == list(range(len(mine)))
    # another read mix after the sweep: the recommendation again, never a read (the race scores
    # by the run's recommend: section, not a setting of the read job)
    remix = {**config, "recommend": {"weights": {"spectra": 100, "subcube": 1}, "mixes": {"cubes": {"subcube": 1}}}}
    dry = wf.run("-n", "--configfile", str(wf.write_config(remix, "remix.yaml")), check=True)
    counts = {rule: n for rule, n in re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, re.M)}
    assert set(counts) == {"recommend", "all", "total"}, counts
    wf.run("--cores", "1", "--configfile", str(wf.write_config(remix, "remix.yaml")), check=True)
    decision = (results / "decision.md").read_text()
    assert "## What if" in decision and "- cubes (subcube 1) on disk: " in decision
    # the same mix from the command line, in the same words, reading nothing
    whatif = subprocess.run(
        [sys.executable, "-m", "h5sweep.compare.whatif", str(results), "--weights", "subcube=1"],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(x for x in decision.splitlines() if x.startswith("- cubes (subcube 1) on disk: "))
    assert line.removeprefix("- cubes ") in whatif.stdout.replace("mix 1 ", "", 1)
    refused = subprocess.run(
        [sys.executable, "-m", "h5sweep.compare.whatif", str(results), "--weights", "slice=1"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "'slice' is not a read case of this sweep" in refused.stderr
    _resume_reads_only_the_stores_asked(wf, results, remix)


def _resume_reads_only_the_stores_asked(wf, results, config):
    """After the raced sweep: a raced-out store asked for (results/<sweep>/resume.json) is
    written again and read to the end by one job, and nothing else is read or written; the
    whatif command asks for what its mixes could favour and runs the sweep."""
    import hashlib

    import pandas as pd

    from h5sweep.analyze.whatif import decide, rank_for
    from h5sweep.measure.records import read_tables
    from h5sweep.sweep.resume import KEYS, add_to_request

    configfile = str(wf.write_config(config, "remix.yaml"))
    table = pd.read_csv(results / "recommendation.csv")
    planes = table[(table[C.LAYOUT_NAME] == "planes") & (table[C.COMPRESSION] == "none")].iloc[0]
    add_to_request(results, [{key: str(planes[key]) for key in KEYS}])
    dry = wf.run("-n", "--configfile", configfile, check=True)
    counts = {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, re.M)}
    assert counts == {"query_resumed": 1, "aggregate": 1, "recommend": 1, "all": 1, "total": 4}, counts
    raw = sorted(p for p in (results / "raw").rglob("*.parquet"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in raw}
    measured_before = pd.read_parquet(results / "measurements.parquet")
    wf.run("--cores", "2", "--configfile", configfile, check=True)
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in raw} == before  # no record rewritten
    measured = pd.read_parquet(results / "measurements.parquet")
    store = (measured[C.LAYOUT_NAME] == "planes") & (measured[C.COMPRESSION] == "none")
    reads = measured[store & (measured[C.CASE] != "write")]
    assert len(reads) == 24 and reads[C.RESUMED].all() and reads[C.RACED_OUT_ROUND].isna().all()
    assert sorted(reads[C.REPEAT].unique()) == list(range(12))  # the same seeded selections, every one
    # every other row is as it was: the same reads, the same writes
    others = measured[~(store & (measured[C.CASE] != "write"))]
    before_others = measured_before[
        ~((measured_before[C.LAYOUT_NAME] == "planes") & (measured_before[C.COMPRESSION] == "none"))
        | (measured_before[C.CASE] == "write")
    ]
    assert len(others) == len(before_others) and not others[C.RESUMED].fillna(False).any()
    assert sorted(others[C.SECONDS]) == sorted(before_others[C.SECONDS])
    ranked = pd.read_csv(results / "recommendation.csv")
    row = ranked[(ranked[C.LAYOUT_NAME] == "planes") & (ranked[C.COMPRESSION] == "none")].iloc[0]
    assert pd.isna(row[C.RACED_OUT_ROUND]) and pd.notna(row[C.RANK])  # ranked as measured to the end
    assert wf.run("-n", "--configfile", configfile, check=True).stdout.count("query_resumed") == 0
    # the command: a config of another sweep is refused; otherwise it asks for what its mix could
    # favour (the same stores the sheet names) and runs the sweep with them, here as a dry run
    other = wf.write_config({**config, "sweep": "other"}, "other.yaml")
    whatif = [sys.executable, "-m", "h5sweep.compare.whatif", str(results), "--weights", "subcube=1", "--resume"]
    refused = subprocess.run([*whatif, "--configfile", str(other)], capture_output=True, text=True, cwd=wf.root)
    assert refused.returncode == 2 and "is the config of sweep 'other', not of 'raced'" in refused.stderr
    settings = json.loads((results / "recommend.json").read_text())
    measurements, summary = (
        read_tables([str(results / "measurements.parquet")]),
        read_tables([str(results / "summary.parquet")]),
    )
    own, _ = rank_for(measurements, summary, settings, settings["recommend"]["weights"])
    _, favoured = decide(measurements, summary, settings, "m", {"subcube": 1.0}, own[own[C.RECOMMENDED]], True)
    ran = subprocess.run([*whatif, "--configfile", configfile, "-n"], capture_output=True, text=True, cwd=wf.root)
    assert ran.returncode == 0, ran.stderr
    if favoured:
        assert f"Resuming {len(favoured)} store(s)" in ran.stdout
        assert len(re.findall(r"^rule query_resumed:", ran.stdout, re.M)) == len(favoured)
    else:
        assert "nothing to resume" in ran.stdout and "rule " not in ran.stdout


def _two_case_race(objective: str) -> set[int]:
    """Stores whose objectives disagree: 0 the protected reference (case a 10, b 1), 1 the
    fastest mix (4, 4), 2 fast at b and slow at a (14, 0.5), 3 slow at both (30, 3); the
    stores each objective drops."""
    rule = RaceRule({"a": 1.0, "b": 1.0}, objective=objective, margin=1.25, min_rounds=6, rounds_per_look=2)
    race = Race(rule, 4, ["a", "b"], rounds=8, protected={0})
    rng = np.random.default_rng(3)
    times = [(10.0, 1.0), (4.0, 4.0), (14.0, 0.5), (30.0, 3.0)]
    for r in range(6):
        for k, per_case in enumerate(times):
            for v in range(2):
                race.record(v, k, r, per_case[v] * (1 + 0.03 * rng.standard_normal()))
    return set(race.look(6))


def test_the_race_scores_by_the_recommendations_objective():
    # time (mix 11, 8, 14.5): store 2 is 1.8x the best; geometric (1, 1.26, 0.84 to the
    # reference): store 1 is 1.5x the best; worst case (2.5, 8, 3.5 over each case's fastest):
    # 1 and 2 are 3.2x and 1.4x the best, but each is a case's fastest, which every slowdown is
    # to: both read on; store 3 is out under each
    assert _two_case_race("time") == {2, 3}
    assert _two_case_race("geometric") == {1, 3}
    assert _two_case_race("worst-case") == {3}


@pytest.fixture(scope="session")
def disagreeing_stores(tmp_path_factory):
    """Four real stores, read for a pass's rows (their times are given, GIVEN_SECONDS):
    contiguous (the reference), thin whole-image chunks, small cubes and tall columns."""
    directory = tmp_path_factory.mktemp("objectives")
    shape = (40, 40, 2000)
    source = SyntheticSource(shape, np.uint16, seed=5)
    data = source.materialize()
    made = []
    for name, layout in (
        ("contiguous", Layout(None)),
        ("chunked-40x40x2", Layout((40, 40, 2))),
        ("chunked-10x10x50", Layout((10, 10, 50))),
        ("chunked-4x4x2000", Layout((4, 4, 2000))),
    ):
        path = os.path.join(directory, f"{name}.h5")
        write_file(path, data, layout, parse_compression("none"))
        made.append((name, path, layout))
    return shape, source, made


def _recommended(rows, objective: str) -> str:
    import pandas as pd

    from h5sweep.analyze.ranking import rank_selected_reads

    settings = {
        "recommend": {"weights": {"slice": 1.0, "spectra": 1.0}, "objective": objective, "statistic": "first-access"},
        "read_cases": ["slice", "spectra"],
        "policy": "random",
    }
    layouts = sorted({r[C.LAYOUT_ID] for r in rows})
    summary = pd.DataFrame(
        [
            {C.FILESYSTEM: "disk", C.BACKEND: "hdf5", C.LAYOUT_ID: lay, C.COMPRESSION: "none", C.CASE: "write"}
            | {C.PRIMARY: True, C.MEDIAN_S: 1.0, C.FILE_BYTES: 6_400_000, C.RAW_BYTES: 6_400_000}
            for lay in layouts
        ]
    )
    table = rank_selected_reads(pd.DataFrame(rows), summary, settings)
    return table.loc[table[C.RECOMMENDED].astype(bool), C.LAYOUT_ID].item()


# Seconds of a spectra and a slice read of each store: the objectives disagree (time and worst
# case take the small cubes, slices 3x faster, spectra 5x slower than the reference; the
# geometric mean takes the reference); the thin chunks' spectra are 35x slower
GIVEN_SECONDS = {
    "contiguous": {"spectra": 1.0, "slice": 10.0},
    "chunked-40x40x2": {"spectra": 35.0, "slice": 1.0},
    "chunked-10x10x50": {"spectra": 5.0, "slice": 3.3},
    "chunked-4x4x2000": {"spectra": 1.05, "slice": 10.5},
}


def test_no_race_drops_the_store_a_full_pass_chooses_under_each_objective(disagreeing_stores):
    """The rows of one full pass of real reads, their times given (GIVEN_SECONDS, with 5%
    noise): under each objective, the race run on them (as the engine runs it) never drops the
    store the pass chooses, only stores surely beyond its margin. Given, not measured: on these
    real stores, beside a CPU hog and a disk writer, each objective's choice changed from pass
    to pass (contiguous, the tall columns or the cubes)."""
    shape, source, made = disagreeing_stores
    cases = read_cases_from_config(
        {"spectra": {"repeats": 14, "size": 2, "cold": "every"}, "slice": {"repeats": 14, "depth": 2}}, shape
    )
    stores = [StoreUnderTest(HDF5, path, layout, source) for _, path, layout in made]
    stores[0].protected = True
    run_reads(stores, ReadPlan(cases, shape, 0))
    rng = np.random.default_rng(7)
    for (name, _, _), store in zip(made, stores, strict=True):
        for row in store.rows:
            row[C.SECONDS] = GIVEN_SECONDS[name][row[C.CASE]] * float(np.exp(rng.normal(0, 0.05)))
    rows = [
        {**row, C.FILESYSTEM: "disk", C.FS_TYPE: "ext4", C.BACKEND: "hdf5", C.LAYOUT_NAME: ""}
        | {C.LAYOUT_ID: name, C.CHUNK_SHAPE: layout.chunk_label, C.COMPRESSION: "none"}
        for (name, _, layout), store in zip(made, stores, strict=True)
        for row in store.rows
    ]
    picks, dropped = {}, {}
    for objective in ("time", "worst-case", "geometric"):
        rule = RaceRule({"slice": 1.0, "spectra": 1.0}, objective=objective, min_rounds=4, rounds_per_look=2)
        race = _read_race_replayed([store.rows for store in stores], rule, 14, {0}, ["spectra", "slice"])
        out = {made[k][0] for k in race.out}
        picks[objective] = _recommended(rows, objective)
        assert picks[objective] not in out, (objective, out)
        dropped[objective] = out
    assert picks == {"time": "chunked-10x10x50", "worst-case": "chunked-10x10x50", "geometric": "contiguous"}
    # the thin chunks' spectra are 35x slower, but their slices the fastest: worst case keeps
    # them (every slowdown is to a case's fastest); the tall columns' mix is 1.4x the cubes'
    assert dropped == {
        "time": {"chunked-40x40x2", "chunked-4x4x2000"},
        "worst-case": {"chunked-4x4x2000"},
        "geometric": {"chunked-40x40x2", "chunked-10x10x50"},
    }


def test_the_best_store_of_a_kept_group_stays_in_the_race_and_the_rest_of_the_group_goes():
    """The compressed stores are a group: the best of them is read to the end (its intervals
    full), the others drop as any store does."""
    speed = [1.0, 3.0, 5.0, 6.0]  # the reference; three stores far slower, 1 and 2 in the group

    def run(groups):
        race = Race(RULE, 4, ["spectra"], rounds=12, protected={0}, kept_best=groups)
        rng = np.random.default_rng(1)
        for r in range(12):
            for k in range(4):
                if race.reads(0, k):
                    race.record(0, k, r, speed[k] * (1 + 0.05 * rng.standard_normal()))
            if race.due(r + 1):
                race.look(r + 1)
        return set(race.out)

    assert run([]) == {1, 2, 3}
    assert run([{1, 2}]) == {2, 3}  # 1, the group's best, read to the end
    assert run([{2, 3}]) == {1, 3}
