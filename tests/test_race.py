"""Racing layouts (``race``): a store that has clearly lost stops being read; a store within
the margin of the best, and the reference, are read to the end."""

from __future__ import annotations

import os

import numpy as np
import pytest

from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.backends.hdf5 import write_file
from h5sweep.cases import read_cases_from_config
from h5sweep.cases.engine import ReadPlan, StoreUnderTest, run_reads
from h5sweep.cases.engine.race import Race, RaceRule
from h5sweep.storage import columns as C
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import race_from_config

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
    assert rule["margin"] == 2.0 and rule["min_rounds"] == 10


@pytest.fixture(scope="module")
def three_stores(tmp_path_factory):
    """A contiguous store (the reference), a byte-identical second one (within any margin)
    and a store of thin compressed chunks that a spectrum crosses hundreds of."""
    directory = tmp_path_factory.mktemp("race")
    shape = (20, 20, 4000)
    source = SyntheticSource(shape, np.uint16, seed=5)
    data = source.materialize()
    made = []
    for name, layout, codec in (
        ("reference", Layout(None), "none"),
        ("twin", Layout(None), "none"),
        ("thin", Layout((20, 20, 4)), "gzip-9"),
    ):
        path = os.path.join(directory, f"{name}.h5")
        write_file(path, data, layout, parse_compression(codec))
        made.append((path, layout))
    return shape, source, made


def test_on_real_stores_the_slow_store_stops_after_the_minimum_rounds_and_the_others_read_to_the_end(three_stores):
    shape, source, made = three_stores
    stores = [StoreUnderTest(HDF5, path, layout, source) for path, layout in made]
    stores[0].protected = True
    cases = read_cases_from_config({"spectra": {"repeats": 12, "size": 5, "cold": "every"}}, shape)
    run_reads(stores, ReadPlan(cases, shape, 0, race=RULE))
    reads = [len(store.rows) for store in stores]
    assert reads == [12, 12, 4]  # the thin store read the minimum rounds, then was out
    thin = stores[2].rows
    assert {row[C.RACED_OUT_ROUND] for row in thin} == {4} and min(r[C.RACED_OUT_AT_LEAST] for r in thin) > 1.25
    assert all(C.RACED_OUT_ROUND not in row for store in stores[:2] for row in store.rows)
    # racing off reads every store to the end
    for store in stores:
        store.rows = []
    run_reads(stores, ReadPlan(cases, shape, 0))
    assert [len(store.rows) for store in stores] == [12, 12, 12]


@pytest.mark.workflow
def test_a_raced_sweep_ranks_only_the_stores_read_to_the_end_and_says_which_were_raced_out(tmp_path):
    import pandas as pd
    from conftest import Workflow, tiny_config

    config = tiny_config(tmp_path, sweep="raced")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config.update(interleave=True, race={"min_rounds": 4, "rounds_per_look": 2})
    config["cases"] = {
        "write": {"repeats": 1},
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
    assert (raced[C.RANK] > table.loc[table[C.RACED_OUT_ROUND].isna(), C.RANK].max()).all()
    assert raced[C.SCORE].isna().all()  # never ranked as if fully measured
    reference = table[table[C.IS_REFERENCE]]
    assert reference[C.RACED_OUT_ROUND].isna().all()
    if len(raced):
        assert "raced out of the read pass" in (results / "recommendation.md").read_text()
