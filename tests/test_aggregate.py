"""The summary is derived from raw rows: statistics, intervals, paired ratios, file size, score."""

import math

import pandas as pd
import pytest

from h5sweep.analyze.aggregate import aggregate, summarize
from h5sweep.analyze.scoring import score, threshold_s
from h5sweep.measure.stats import median_ci, median_ci_level, median_ci_ranks, spearman

THRESHOLDS = {
    "slice_median_s": 0.1,
    "spectra_median_s": 0.05,
    "subcube_median_s": 0.002,
    "file_overhead": 0.05,
    "scale_to_selection": False,
}


def rows(chunk, comp, case, seconds, file_bytes, raw=1000, states=None):
    return [
        {
            "filesystem": "disk",
            "backend": "hdf5",
            "layout": "chunked" if chunk else "contiguous",
            "chunk_shape": chunk,
            "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
            "compression": comp,
            "case": case,
            "repeat": i,
            "seconds": s,
            "bytes_selected": 50,
            "chunks_touched": 2,
            "raw_bytes": raw,
            "file_bytes": file_bytes,
            "fs_type": "ext4",
            "device_read_bytes": 4096 if i == 0 else 0,
            "cache_state": (states or [""] * len(seconds))[i],
        }
        for i, s in enumerate(seconds)
    ]


def test_statistics_first_access_and_score_per_file_and_case():
    raw = pd.DataFrame(
        rows("4x4x2048", "gzip-4", "slice", [0.5, 0.05, 0.07, 0.06], 300)
        + rows("4x4x2048", "gzip-4", "subcube", [0.01, 0.001, 0.003], 300)
        + rows("4x4x2048", "gzip-4", "write", [2.0, 3.0], 300)
        + rows("", "none", "slice", [0.9, 0.2, 0.3], 1001)
    )
    summary = summarize(raw, THRESHOLDS).set_index(["chunk_shape", "case"])
    s = summary.loc[("4x4x2048", "slice")]
    assert (s["repeats"], s["min_s"], s["max_s"], s["first_s"]) == (4, 0.05, 0.5, 0.5)
    # four values are too few for a 95% interval of the median: it spans them all
    assert (s["median_ci_low_s"], s["median_ci_high_s"]) == (0.05, 0.5)
    assert s["p90_s"] == pytest.approx(0.371)
    assert s["median_s"] == pytest.approx(0.065) and s["mean_s"] == pytest.approx(0.17)
    assert s["compression_ratio"] == pytest.approx(1000 / 300)
    assert s["device_read_bytes_median"] == 0
    # slice median 0.065 < 0.1 (point), subcube median 0.003 >= 0.002 (none), file small (point)
    assert (s["score"], s["score_max"]) == (2, 3)
    assert summary.loc[("4x4x2048", "write"), "mean_s"] == pytest.approx(2.5)
    c = summary.loc[("", "slice")]
    assert (c["layout"], c["score"], c["score_max"]) == ("contiguous", 1, 2)  # 1001 <= 1050 bytes
    assert list(summary.reset_index()["case"].unique()) == ["write", "slice", "subcube"]
    # selection by selection against contiguous: 0.5/0.9, 0.05/0.2, 0.07/0.3 (the 4th has no pair)
    assert s["ratio_pairs"] == 3 and s["ratio_to_contiguous"] == pytest.approx(0.05 / 0.2)
    assert (s["ratio_ci_low"], s["ratio_ci_high"]) == pytest.approx((0.07 / 0.3, 0.5 / 0.9))
    assert c["ratio_to_contiguous"] == 1.0 and math.isnan(summary.loc[("4x4x2048", "subcube"), "ratio_to_contiguous"])


def test_thresholds_scale_with_the_bytes_a_case_selects():
    scaled = {**THRESHOLDS, "scale_to_selection": True}
    # the study's spectra selection (5 MB) keeps its threshold; a tenth of it gets a tenth
    assert threshold_s("spectra", scaled, 5_000_000) == pytest.approx(0.05)
    assert threshold_s("spectra", scaled, 500_000) == pytest.approx(0.005)
    assert threshold_s("spectra", THRESHOLDS, 500_000) == pytest.approx(0.05)
    assert threshold_s("write", scaled, 500_000) is None
    raw = pd.DataFrame(rows("4x4x2048", "none", "spectra", [0.01, 0.02, 0.03], 1000))  # 50 bytes selected
    assert summarize(raw, THRESHOLDS)["score"].iloc[0] == 2
    summary = summarize(raw, scaled)
    assert summary["score"].iloc[0] == 1  # 0.02 s for 50 bytes is not the study's throughput
    assert summary["score_threshold_s"].iloc[0] == pytest.approx(0.05 * 50 / 5_000_000)


def test_reads_split_into_cold_and_warm_rows_and_pair_within_a_state():
    states = ["cold", "warm", "warm", "warm", "cold"]
    raw = pd.DataFrame(
        rows("4x4x2048", "none", "slice", [0.4, 0.1, 0.1, 0.1, 0.5], 1000, states=states)
        + rows("", "none", "slice", [0.8, 0.2, 0.3, 0.4, 0.6], 1000, states=["cold"] * 5)
    )
    summary = summarize(raw, THRESHOLDS).set_index(["chunk_shape", "cache_state"])
    assert summary.loc[("4x4x2048", "cold"), "repeats"] == 2 and summary.loc[("4x4x2048", "warm"), "repeats"] == 3
    # cold reads pair with the contiguous cold reads of the same selections only
    assert summary.loc[("4x4x2048", "cold"), "ratio_to_contiguous"] == pytest.approx((0.4 / 0.8 + 0.5 / 0.6) / 2)
    assert math.isnan(summary.loc[("4x4x2048", "warm"), "ratio_to_contiguous"])
    # the figures show the state most reads were in
    assert summary["primary"].astype(bool).to_dict() == {
        ("4x4x2048", "cold"): False,
        ("4x4x2048", "warm"): True,
        ("", "cold"): True,
    }


def test_median_interval_from_order_statistics():
    assert median_ci_ranks(5) == (0, 4)  # too few for 95%: the whole sample
    assert median_ci_ranks(6) == (0, 5)
    assert median_ci_ranks(50) == (17, 32)  # the 18th and 33rd of 50, the textbook ranks
    assert median_ci(list(range(1, 51))) == (25.5, 18.0, 33.0)
    # one measurement has no interval: a verdict resting on it can be neither sure nor surely not
    one = median_ci([0.25])
    assert one[0] == 0.25 and math.isnan(one[1]) and math.isnan(one[2])
    assert median_ci([0.25, 0.5]) == (0.375, 0.25, 0.5)
    assert spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8)


def test_an_interval_states_the_level_it_has_and_a_raced_out_store_has_its_one_sided_bound_alone():
    # the whole range of n values covers the median with 1 - 2 x 0.5^n: 75% for 3, 93.75% for 5
    assert median_ci_level(3) == 0.75 and median_ci_level(5) == 0.9375
    assert math.isnan(median_ci_level(1)) and all(median_ci_level(n) >= 0.95 for n in range(6, 80))
    raw = rows("", "none", "slice", [0.01, 0.011, 0.012, 0.013, 0.014, 0.015], 1000)
    raw += rows("4x4", "none", "slice", [0.03, 0.031, 0.032], 1000)
    for r in raw[-3:]:  # raced out at round 3, at least 2x the best
        r.update({"policy": "interleaved", "raced_out_round": 3, "raced_out_at_least": 2.0})
    for r in raw[:-3]:
        r["policy"] = "interleaved"
    summary = summarize(pd.DataFrame(raw), THRESHOLDS).set_index("chunk_shape")
    full, out = summary.loc[""], summary.loc["4x4"]
    assert (full["median_ci_low_s"], full["median_ci_high_s"]) == (0.01, 0.015)
    assert full["median_ci_level"] == median_ci_level(6)
    assert out["median_s"] == 0.031 and out["ratio_to_contiguous"] > 1  # the point values stay
    for name in ("median_ci_low_s", "median_ci_high_s", "median_ci_level", "ratio_ci_low", "ratio_ci_high"):
        assert math.isnan(out[name]), name
    assert out["raced_out_at_least"] == 2.0


def test_score_counts_only_the_criteria_that_were_measured():
    assert score({"slice": 0.05, "spectra": 0.01, "subcube": 0.001}, 2000, 2000, THRESHOLDS) == (4, 4)
    assert score({"slice": 0.2}, 2200, 2000, THRESHOLDS) == (0, 2)
    assert score({}, math.nan, 2000, THRESHOLDS) == (0, 0)


def test_another_backend_pairs_with_the_configs_first_chunk_cache_not_the_first_in_sort_order():
    """Zarr reads are paired with HDF5's reads in HDF5's first chunk cache as the config lists
    it (here 64 MiB, then 1 MiB: the summary's sort order would put 1 MiB first)."""
    caches = [("cache 64 MiB", 64 << 20, 20.0), ("cache 1 MiB", 1 << 20, 1.0)]  # (variant, bytes, seconds)
    raw = []
    for variant, size, seconds in caches:
        for layout_rows in (
            rows("", "none", "slice", [seconds] * 3, 1000),
            rows("4x4x4", "none", "slice", [seconds] * 3, 900),
        ):
            raw += [{**r, "variant": variant, "policy": "random", "chunk_cache_bytes": size} for r in layout_rows]
    raw += [
        {
            **r,
            "backend": "zarr",
            "variant": "zarr-python",
            "policy": "random",
            "chunk_cache_bytes": None,
            "seconds": 10.0,
        }
        for r in rows("4x4x4", "none", "slice", [10.0] * 3, 900)
    ]
    summary = summarize(pd.DataFrame(raw), THRESHOLDS)
    zarr = summary[summary["backend"] == "zarr"].iloc[0]
    assert zarr["ratio_to_contiguous"] == pytest.approx(0.5)  # 10 s against the 64 MiB cache's 20 s
    assert zarr["ratio_to_hdf5"] == pytest.approx(0.5)
    assert zarr["ratio_to_hdf5_pairs"] == 3


def test_measurements_keep_whole_numbers_as_integers_where_rows_lack_them(tmp_path):
    """Rows of cases without a setting (a scaling row's ``processes`` beside read rows) leave
    it empty, not a float: counts and settings stay integers in measurements.parquet."""
    reads = pd.DataFrame(rows("", "none", "slice", [0.2, 0.3], 1001))
    scaling = pd.DataFrame(rows("", "none", "scaling", [0.4], 1001)).drop(columns="device_read_bytes")
    scaling = scaling.assign(processes=2, z_slices=10, seconds_fraction=0.5)
    reads.to_parquet(tmp_path / "reads.parquet")
    scaling.to_parquet(tmp_path / "scaling.parquet")
    out = {name: str(tmp_path / name) for name in ("m.parquet", "s.parquet", "s.csv")}
    aggregate([str(tmp_path / "reads.parquet"), str(tmp_path / "scaling.parquet")], *out.values(), THRESHOLDS)
    measured = pd.read_parquet(out["m.parquet"])
    for column in ("processes", "z_slices", "device_read_bytes", "file_bytes"):
        assert str(measured[column].dtype) == "Int64", column
    scaling_row = measured[measured["case"] == "scaling"].iloc[0]
    assert scaling_row["processes"] == 2 and pd.isna(scaling_row["device_read_bytes"])
    assert measured.loc[measured["case"] == "slice", "processes"].isna().all()
    assert measured["seconds_fraction"].dtype == "float64"  # not a whole-number column


def test_a_ratio_read_from_several_copies_has_an_interval_that_draws_the_copies():
    """Three copies, one reading 30% slower: the next run meets other copies, so the median's
    interval must reach as far as a copy can move it; reads of one copy keep the order
    statistics' interval."""
    import numpy as np

    from h5sweep.measure.stats import median_ci, median_ci_over_copies

    rng = np.random.default_rng(3)
    copies = np.arange(60) % 3
    values = (1 + 0.02 * rng.standard_normal(60)) * np.where(copies == 2, 1.3, 1.0)
    _, low, high = median_ci(values)
    median, c_low, c_high = median_ci_over_copies(values, copies)
    assert median == np.median(values)
    assert c_high - c_low > 2 * (high - low) and c_high >= 1.25
    assert median_ci_over_copies(values, np.zeros(60)) == median_ci(values)
