"""Write strategies, fill times, visiting policies and chunk caches, run for real."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import run_test_config

from h5sweep.cases import read_cases_from_config
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import case_rng, visit

pytestmark = pytest.mark.workflow


def test_write_strategies_and_fill_times_are_each_measured(tmp_path):
    _, results, summary = run_test_config(tmp_path, "write-variants.yaml", figures=["variants"])
    writes = summary[summary["case"] == "write"]
    assert set(writes["write_strategy"]) == {"spectrum", "block", "chunk"}
    assert set(writes["fill_time"]) == {"ifset", "alloc"}
    assert len(writes) == 3 * (1 + 2) * 2  # files x strategies x fill times
    assert (writes["repeats"] == 2).all()
    assert writes["primary"].astype(str).eq("True").sum() == 3  # the first variant of each file
    gzip = writes[(writes["compression"] == "gzip-4") & (writes["fill_time"] == "ifset")].set_index("write_strategy")
    # one spectrum at a time: 100 writes of 40 chunks each, more chunks than the 1 MiB cache
    # holds, so each 5 x 5 chunk is compressed and written again whenever it is evicted
    counted = gzip[["write_calls_median", "library_write_bytes_median", "file_bytes"]].astype(float)
    assert counted.loc["spectrum", "write_calls_median"] == 100 and counted.loc["chunk", "write_calls_median"] == 160
    written = counted["library_write_bytes_median"]
    assert written["spectrum"] > 2 * written["chunk"] and written["chunk"] >= counted.loc["chunk", "file_bytes"] * 0.9
    assert (results / "plots" / "variants-write-disk.png").exists()
    measured = pd.read_parquet(results / "measurements.parquet")
    assert set(measured.loc[measured["case"] == "write", "variant"]) == {
        f"{s}, fill {f}" for s in ["spectrum", "block", "chunk"] for f in ["ifset", "alloc"]
    }


def test_policies_and_chunk_caches_are_each_measured_and_expose_thrashing(tmp_path):
    config, results, summary = run_test_config(tmp_path, "read-variants.yaml", figures=["variants", "score"])
    reads = summary[summary["case"] != "write"]
    assert set(reads["policy"]) == {"random", "aligned", "localized", "sweep"}
    assert set(reads["chunk_cache_bytes"]) == {1024, 1048576, 67108864}
    variants = reads.drop_duplicates(["layout", "case", "variant"])
    assert len(variants) == 2 * (1 + 2) * 4 * 3  # files x (slice + spectra's two cold modes) x policies x caches
    assert set(reads.loc[reads["case"] == "spectra", "cold_mode"]) == {"first", "every"}
    # every spectra read of cold: every came from the device; cold: first has warm reads too
    every = reads[(reads["case"] == "spectra") & (reads["cold_mode"] == "every")]
    assert set(every["cache_state"]) == {"cold"} and (every["repeats"].astype(int) == 5).all()
    tiny = reads[(reads["chunk_cache_bytes"] == 1024) & (reads["layout"] == "chunked")]
    assert (tiny["cache_holds_chunk"].astype(str) == "False").all()
    assert (reads.loc[reads["chunk_cache_bytes"] > 1024, "cache_holds_chunk"].astype(str) == "True").all()
    sweep = reads[
        (reads["policy"] == "sweep")
        & (reads["case"] == "slice")
        & (reads["layout"] == "chunked")
        & (reads["cache_state"] == "warm")
    ]
    by_cache = sweep.set_index("chunk_cache_bytes")["library_read_bytes_median"].astype(float)
    # consecutive z-slabs inside one z-chunk: a cache that holds the slab's chunks reads them
    # from the file once; the default cache reads (and decodes) them again for every slab
    assert by_cache[67108864] == 0
    assert by_cache[1048576] >= 36 * 32 * 1024 * 0.2  # the slab's 36 chunks, compressed
    measured = pd.read_parquet(results / "measurements.parquet")
    for (policy, cache), rows in measured[measured["case"] == "slice"].groupby(["policy", "chunk_cache_bytes"]):
        per_file = rows.groupby("layout_id")["selection"].apply(tuple)
        if policy != "aligned":  # aligned snaps the same draws to each layout's chunks
            assert per_file.nunique() == 1, (policy, cache)
    assert (results / "plots" / "variants-slice-disk.png").exists()
    assert (results / "plots" / "score-disk.png").exists()


SHAPE = (24, 24, 4096)


def test_aligned_starts_sit_on_chunk_boundaries_of_each_layout():
    boxes = visit("aligned", case_rng(0, "slice"), SHAPE, (24, 24, 25), 50, (4, 4, 1024))
    assert all(b.start[2] % 1024 == 0 and b.start[:2] == (0, 0) for b in boxes)
    randoms = visit("random", case_rng(0, "slice"), SHAPE, (24, 24, 25), 50, (4, 4, 1024))
    assert [r.start[2] // 1024 * 1024 for r in randoms] == [b.start[2] for b in boxes]
    assert visit("aligned", case_rng(0, "slice"), SHAPE, (24, 24, 25), 50, None) == randoms


def test_sweep_visits_consecutive_slabs_and_localized_stays_near():
    boxes = visit("sweep", case_rng(0, "x"), SHAPE, (24, 24, 25), 200, None)
    assert [b.start[2] for b in boxes[:4]] == [0, 25, 50, 75]
    assert boxes[163].start[2] == 0  # 4096 // 25 = 163 slabs, then around again
    walk = visit("localized", case_rng(0, "x"), SHAPE, (5, 5, 1000), 100, None)
    for a, b in zip(walk, walk[1:], strict=False):
        assert all(abs(p - q) <= n for p, q, n in zip(a.start, b.start, (5, 5, 1000), strict=True))
        assert all(0 <= p <= d - n for p, d, n in zip(b.start, SHAPE, (5, 5, 1000), strict=True))
    assert len({w.start for w in walk}) > 50


def test_selections_of_a_policy_do_not_depend_on_the_layout():
    case = read_cases_from_config({"subcube": {"repeats": 30}}, SHAPE)[0]
    for policy in ["random", "localized", "sweep"]:
        assert case.selections(SHAPE, 1, policy, (4, 4, 1024)) == case.selections(SHAPE, 1, policy, None)
    assert Layout((4, 4, 1024)).chunk_shape == (4, 4, 1024)


def test_unknown_policies_strategies_and_fill_times_are_refused(tmp_path):
    from test_config import base, with_

    from h5sweep.sweep.model import load_sweep

    bad = [
        (("policies",), ["random", "zigzag"], "policies[1]='zigzag': unknown visiting policy"),
        (("cases", "write", "strategies"), ["row"], "cases.write.strategies[0]='row': unknown write strategy"),
        (("cases", "write", "fill_time"), ["early"], "cases.write.fill_time[0]='early': unknown fill time"),
        (("chunk_cache",), [{"bytes": 1, "slots": 0, "w0": 0.5}], "chunk_cache[0].slots=0"),
        (("chunk_cache",), [{"bytes": 1, "slots": 7, "w0": 1.5}], "chunk_cache[0].w0=1.5"),
        (("cases", "slice", "cold"), "warm", "cases.slice.cold='warm'"),
        (("cases", "spectra", "cold"), ["first", "always"], "cases.spectra.cold"),
    ]
    for path, value, message in bad:
        with pytest.raises(ConfigError) as err:
            load_sweep(with_(base(tmp_path), path, value))
        assert message in str(err.value)
