"""Local parallel scaling: numpy.var over z-slices split along x across processes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import run_test_config

from h5sweep.backends.fastwrite import write_fast
from h5sweep.cases.scaling import ScalingCase, combine, run_scaling, split_x
from h5sweep.measure import pagecache
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError, VerificationError
from h5sweep.storage.layouts import Layout

SHAPE = (16, 16, 4000)


def test_partial_variances_combine_to_the_whole_and_x_splits_cover_the_range():
    values = np.random.default_rng(0).normal(size=1000) * 7 + 3
    parts = [values[:10], values[10:400], values[400:]]
    stats = [(len(p), float(p.mean()), float(((p - p.mean()) ** 2).sum())) for p in parts]
    assert combine(stats) == pytest.approx(np.var(values), rel=1e-12)
    assert split_x(0, 100, 3) == [(0, 33), (33, 67), (67, 100)]
    assert split_x(5, 7, 2) == [(5, 6), (6, 7)]


def test_blocks_are_fractions_of_z_or_slice_counts_and_bad_settings_are_refused():
    case = ScalingCase({"processes": [1, 4], "slices": [0.2, 25], "repeats": 2})
    case.check(SHAPE)
    assert [case.depth(s, SHAPE) for s in case.slices] == [800, 25]
    assert [case.label(s) for s in case.slices] == ["0.2 of z", "25 slices"]
    assert case.selections(SHAPE, 1, 0.2)[0].size == (16, 16, 800)
    with pytest.raises(ConfigError, match=r"cases.scaling.processes\[0\]=17"):
        ScalingCase({"processes": [17]}).check(SHAPE)
    with pytest.raises(ConfigError, match=r"cases.scaling.slices\[0\]=5000"):
        ScalingCase({"slices": [5000]}).check(SHAPE)


def test_every_process_count_computes_the_variance_of_the_data(tmp_path):
    source = SyntheticSource(SHAPE, np.uint16, seed=3)
    path = str(tmp_path / "f.h5")
    write_fast(path, source.materialize(), Layout((4, 4, 500)), parse_compression("gzip-1"))
    case = ScalingCase({"processes": [1, 2, 3], "slices": [25], "repeats": 2})
    pagecache.evict(path)
    rows = run_scaling(path, case, SHAPE, 0, source)
    assert [(r["processes"], r["repeat"]) for r in rows] == [(p, k) for p in (1, 2, 3) for k in (0, 1)]
    # primed (untimed) before the first eviction, which so freed most of the store (the whole
    # of it on a quiet machine; the kernel may take some pages back when tests beside it need
    # the memory: 87% once); the later process counts' evictions free what the reads before
    # them pulled in
    assert all(r["resident_fraction_before_evict"] > 0.5 for r in rows[:2])
    assert all(r["resident_fraction_before_evict"] > 0 for r in rows[2:])
    assert all(r["verified"] for r in rows)  # small selections: every result is checked
    # the same z0 and any split: the same variance, up to rounding
    assert rows[0]["variance"] == pytest.approx(rows[2]["variance"], rel=1e-12)
    assert rows[0]["variance"] == pytest.approx(rows[4]["variance"], rel=1e-12)
    # spectra stored in reverse x order: every block over all x has the same variance, but
    # the values each worker read are not the data source's
    reversed_path = str(tmp_path / "reversed.h5")
    write_fast(reversed_path, source.materialize()[::-1], Layout((4, 4, 500)), parse_compression("none"))
    with pytest.raises(VerificationError, match=r"with 2 processes: the values a worker read at \[0:8, "):
        run_scaling(reversed_path, ScalingCase({"processes": [2], "slices": [0.5], "repeats": 1}), SHAPE, 0, source)


@pytest.mark.workflow
def test_the_scaling_case_runs_in_the_workflow_with_a_figure(tmp_path):
    _, results, summary = run_test_config(tmp_path, "scaling.yaml", report=True, figures=["scaling"])
    scaling = summary[summary["case"] == "scaling"]
    assert len(scaling) == 3 * 2 * 2  # files x blocks x process counts
    assert set(scaling["processes"].astype(int)) == {1, 2} and set(scaling["scaling_slices"]) == {
        "0.2 of z",
        "25 slices",
    }
    assert (scaling["repeats"] == 3).all() and (scaling["std_s"].astype(float) >= 0).all()
    assert set(scaling.loc[scaling["scaling_slices"] == "0.2 of z", "bytes_selected"].astype(int)) == {
        16 * 16 * 800 * 2
    }
    assert (results / "plots" / "scaling-disk.png").exists()
    measured = pd.read_parquet(results / "measurements.parquet")
    rows = measured[measured["case"] == "scaling"]
    per_file = rows.groupby(["layout_id", "compression"])["selection"].apply(tuple)
    assert per_file.nunique() == 1  # the same z positions for every layout
    assert rows.groupby(["selection", "processes"])["variance"].nunique().max() == 1  # and the same answer
