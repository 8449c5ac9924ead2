"""The OpenMSI study's findings (h5sweep.cases.studies.openmsi), each on summary rows built the
way its study config's rows come out: HDF5 stores only, every store written 6 times to the end
(``race: false``, ``cases.write.repeats: 6``) or, where a config races, a store separated from the
best after one write with no interval, only ``raced_out_at_least``; several write strategies with
the first one primary; compressed and uncompressed stores of one chunk shape side by side; reads
of 50 selections split into one cold first access and 49 warm ones (``cold: first``); and the
values' source (``fill``) with the config's opt-in (``judge_synthetic_values``). Each finding
reaches each of its four verdicts, and the cases a wrong reading would judge otherwise are
named."""

import math

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, Workflow, tiny_config

from h5sweep.analyze import findings
from h5sweep.storage.errors import ConfigError
from h5sweep.sweep.config import validate_schema

CUBE = (100, 100, 100_000)
NAN = math.nan
BASE = {
    "filesystem": "scratch",
    "backend": "hdf5",
    "fill": "synthetic",
    "judge_synthetic_values": False,
    "compression": "none",
    "chunk_shape": "",
    "raw_bytes": 2_000_000_000,
}
STRATEGIES = ("spectrum", "block", "chunk")  # write-strategies.yaml's, the first primary
WRITES = 6  # compression.yaml's and write-strategies.yaml's cases.write.repeats


def store(chunk="", compression="none", **values) -> dict:
    layout = f"chunked-{chunk}" if chunk else "contiguous"
    return {**BASE, "layout_id": layout, "chunk_shape": chunk, "compression": compression, **values}


def write(
    chunk="", seconds=1.0, ci=None, raced=None, strategy="spectrum", compression="none", writes=WRITES, **values
) -> dict:
    """One store's row of one write variant: measured to the end (``writes`` writes, median
    interval ``ci``), or raced out after one write (``raced``: the race's bound on its ratio to
    the best store of the variant; no interval)."""
    if raced is None:
        low, high = ci or (seconds * 0.95, seconds * 1.05)
        race = {"repeats": writes, "raced_out_round": pd.NA, "raced_out_at_least": NAN}
    else:
        low, high = NAN, NAN
        race = {"repeats": 1, "raced_out_round": 1, "raced_out_at_least": raced}
    return store(
        chunk,
        compression,
        case="write",
        variant=f"{strategy}, fill ifset",
        write_strategy=strategy,
        primary=strategy == STRATEGIES[0],
        median_s=seconds,
        median_ci_low_s=low,
        median_ci_high_s=high,
        writes_stopped=0,
        limit_s=600.0,
        **race,
        **values,
    )


def read(case, chunk="", seconds=1.0, ci=None, compression="none", ratio=None, **values) -> dict:
    """A read case's primary row: the 49 warm selections after the cold first one."""
    low, high = ci or (seconds * 0.95, seconds * 1.05)
    ratio = ratio or (1.0, 1.0)
    return store(
        chunk,
        compression,
        case=case,
        variant="random, cold first",
        cache_state="warm",
        primary=True,
        repeats=49,
        median_s=seconds,
        median_ci_low_s=low,
        median_ci_high_s=high,
        ratio_to_contiguous=sum(ratio) / 2,
        ratio_ci_low=ratio[0],
        ratio_ci_high=ratio[1],
        **values,
    )


def cold(case, chunk="", seconds=1.0, compression="none", **values) -> dict:
    """The same store's cold first selection (``cold: first``): one read, not primary."""
    return read(case, chunk, seconds, compression=compression, **values) | {
        "cache_state": "cold",
        "primary": False,
        "repeats": 1,
        "median_ci_low_s": seconds,
        "median_ci_high_s": seconds,
    }


def frame(rows, **columns) -> pd.DataFrame:
    return pd.DataFrame(rows).assign(**columns)


def verdict(key, rows, shape=CUBE):
    finding = next(f for f in findings.FINDINGS if f.key == key)
    return findings.judge(finding, rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows), shape)


# write-strategies.yaml: contiguous and m x m x 2048, m in {1, ..., 32}, three strategies, 6
# writes each (race: false)


def strategies(chunk_times=None, contiguous=None, raced=None, writes=WRITES, n=2048):
    """Each strategy's stores: contiguous 1 s and the chunked stores' times (``chunk_times``:
    strategy -> {m: seconds}); ``raced``: strategy -> {layout (m, or 0 for contiguous): bound}
    for the stores raced out after one write (a config that races)."""
    rows = []
    for strategy in STRATEGIES:
        times = {0: (contiguous or {}).get(strategy, 1.0), **(chunk_times or {}).get(strategy, {})}
        out = (raced or {}).get(strategy, {})
        for m, seconds in times.items():
            chunk = f"{m}x{m}x{n}" if m else ""
            rows.append(write(chunk, seconds, raced=out.get(m), strategy=strategy, writes=writes))
    return rows


SLOWER = {s: {1: 2.0, 2: 3.0, 4: 4.0, 8: 6.0, 16: 9.0, 32: 20.0} for s in STRATEGIES}


def test_contiguous_fastest_write_judges_every_strategy_on_six_writes():
    held = verdict("contiguous-fastest-write", strategies(SLOWER))
    assert held[0] == findings.HOLDS, held
    assert all(f"{s}, fill ifset: contiguous 1 s (0.95-1.05)" in held[1] for s in STRATEGIES), held[1]
    # the primary strategy holds, but chunk at a time a 32 x 32 store writes surely faster
    chunk = {**SLOWER, "chunk": {**SLOWER["chunk"], 32: 0.5}}
    assert verdict("contiguous-fastest-write", strategies(chunk))[0] == findings.FAILS
    # a chunked store whose interval overlaps the contiguous one's
    close = {**SLOWER, "block": {**SLOWER["block"], 4: 1.02}}
    assert verdict("contiguous-fastest-write", strategies(close))[0] == findings.INCONCLUSIVE
    # no contiguous store: not measured
    chunked = [r for r in strategies(SLOWER) if r["chunk_shape"]]
    assert verdict("contiguous-fastest-write", chunked)[0] == findings.UNMEASURED


@pytest.mark.parametrize("key", ["contiguous-fastest-write", "spectrum-writes-slow-with-m", "gzip-levels-write"])
def test_three_write_rows_are_never_decided_on_their_intervals(key):
    """With 3 writes a median's [min, max] covers less than 95%: however far apart, undecided."""
    if key == "gzip-levels-write":
        rows, six = levels(writes=3, write_s={8: 60.0}), levels(write_s={8: 60.0})
    else:
        far = {s: {1: 5.0, 2: 10.0, 4: 20.0, 8: 40.0, 16: 80.0} for s in STRATEGIES}
        rows, six = strategies(far, writes=3), strategies(far)
    assert verdict(key, six)[0] == findings.HOLDS
    said, words = verdict(key, rows)
    assert said == findings.INCONCLUSIVE, (said, words)
    assert "fewer than 6 repeats counted undecided" in words
    # a surely-not reading is not reached on 3 writes either
    if key == "gzip-levels-write":
        rows = levels(writes=3, write_s={8: 2.0})
    else:
        rows = strategies({s: {1: 0.2, 2: 0.1} for s in STRATEGIES}, writes=3)
    assert verdict(key, rows)[0] == findings.INCONCLUSIVE


def test_a_raced_out_store_is_at_least_its_bound_times_the_best_stores_median():
    """A config that races: the raced-out store's lower end is its bound times the best's
    median (the race's reference: contiguous, 1 s), not times an interval end (0.95 s)."""
    raced = {"spectrum": {16: 1.08, 32: 5.0}}
    held = verdict("contiguous-fastest-write", strategies(SLOWER, raced=raced))
    assert held[0] == findings.HOLDS, held  # 1.08 x 1 s lies above the contiguous 1.05 s; x 0.95 s would not
    assert "16x16x2048 at least 1.08 s (raced out)" in held[1], held[1]
    # the contiguous store raced out of the chunk strategy: at least 1.5x its best, so 32 x 32 is faster
    out = {**raced, "chunk": {0: 1.5}}
    chunk = {**SLOWER, "chunk": {**SLOWER["chunk"], 32: 0.5}}
    assert verdict("contiguous-fastest-write", strategies(chunk, raced=out))[0] == findings.FAILS
    # read without its bound, a raced-out store has no interval: undecided
    bare = pd.DataFrame(strategies(SLOWER, raced={"spectrum": {8: 4.0}})).drop(columns=["raced_out_at_least"])
    assert verdict("contiguous-fastest-write", bare)[0] == findings.INCONCLUSIVE


def test_contiguous_fastest_write_leaves_compressed_stores_out():
    rows = strategies(SLOWER) + [write("4x4x2048", 0.5, compression="gzip-4")]
    assert verdict("contiguous-fastest-write", rows)[0] == findings.HOLDS


def test_spectrum_writes_slow_with_m_judges_every_step_but_the_studys_exception():
    rising = {"spectrum": {1: 1.2, 2: 2.0, 4: 3.0, 8: 5.0, 16: 8.0, 32: 20.0}}
    held = verdict("spectrum-writes-slow-with-m", strategies(rising))
    assert held[0] == findings.HOLDS, held
    assert "5 surely so, 0 surely not, 0 undecided of 5" not in held[1]  # the step to 32 is left out at n = 2048
    assert "4 surely so, 0 surely not, 0 undecided of 4" in held[1] and "left out" in held[1]
    # 32 x 32 x 2048 surely faster than 16 x 16 x 2048: the seed's exception (l.221), not counted
    faster_32 = {"spectrum": {**rising["spectrum"], 32: 4.0}}
    assert verdict("spectrum-writes-slow-with-m", strategies(faster_32))[0] == findings.HOLDS
    # at n = 512 the exception does not apply: the same dip breaks the trend
    assert verdict("spectrum-writes-slow-with-m", strategies(faster_32, n=512))[0] == findings.FAILS
    # the end points apart, the trend broken: m = 2 writes surely faster than m = 1
    dip = {"spectrum": {**rising["spectrum"], 2: 0.5}}
    assert verdict("spectrum-writes-slow-with-m", strategies(dip))[0] == findings.FAILS
    # one step within the noise
    flat = {"spectrum": {**rising["spectrum"], 4: 2.05}}
    assert verdict("spectrum-writes-slow-with-m", strategies(flat))[0] == findings.INCONCLUSIVE
    # chunk at a time only: not the sentence's strategy
    chunk_only = [r for r in strategies(rising) if r["write_strategy"] == "chunk"]
    assert verdict("spectrum-writes-slow-with-m", chunk_only)[0] == findings.UNMEASURED


def test_spectrum_writes_raced_out_stores_are_not_told_apart():
    rising = {"spectrum": {1: 1.2, 2: 2.0, 4: 3.0, 8: 5.0, 16: 8.0}}
    # m = 8 and 16 both raced out after one write: each at least its bound, not told apart
    both = verdict("spectrum-writes-slow-with-m", strategies(rising, raced={"spectrum": {8: 4.5, 16: 7.0}}))
    assert both[0] == findings.INCONCLUSIVE and "3 surely so, 0 surely not, 1 undecided" in both[1], both


def test_spectrum_writes_other_strategies_do_not_count():
    rising = {"spectrum": {1: 1.2, 2: 2.0, 4: 3.0}, "block": {1: 3.0, 2: 2.0, 4: 1.2}}
    assert verdict("spectrum-writes-slow-with-m", strategies(rising))[0] == findings.HOLDS


# compression.yaml: m x m x n chunks, gzip levels and none side by side; 6 writes a store
# (race: false); reads cold first, then warm


def levels(
    ratio=None,
    write_s=None,
    read_s=None,
    cold_s=1.0,
    raced=None,
    fill="donor",
    opted=False,
    shapes=("4x4x1024", "4x4x2048"),
    writes=WRITES,
):
    """Per chunk shape: the uncompressed store and gzip 1, 4 and 8 (their compression ratio,
    write seconds, warm read seconds), the contiguous store; each read case's cold first read
    (``cold_s`` seconds for 500 MB of chunks: 500 MB/s at 1 s); ``raced``: level -> bound of a
    write raced out after one write."""
    ratio = {1: 3.0, 4: 3.1, 8: 3.2, **(ratio or {})}
    write_s = {0: 1.0, 1: 2.0, 4: 2.5, 8: 6.0, **(write_s or {})}
    read_s = {0: 1.0, 1: 1.1, 4: 1.1, 8: 1.1, **(read_s or {})}
    rows = [write("", 0.9, strategy="chunk", compression_ratio=1.0, writes=writes)]
    for case in ("slice", "spectra", "subcube"):
        rows += [read(case, "", 1.0), cold(case, "", cold_s)]
    for chunk in shapes:
        for level in (0, 1, 4, 8):
            codec = f"gzip-{level}" if level else "none"
            bound = (raced or {}).get(level)
            rows.append(
                write(chunk, write_s[level], raced=bound, strategy="chunk", compression=codec, writes=writes)
                | {"compression_ratio": ratio.get(level, 1.0)}
            )
            for case in ("slice", "spectra", "subcube"):
                touched = {"chunk_bytes_touched_median": 5e8}
                rows.append(read(case, chunk, read_s[level], compression=codec, **touched))
                rows.append(cold(case, chunk, cold_s * (1 + level), compression=codec, **touched))
    return frame(rows, fill=fill, judge_synthetic_values=opted)


def test_gzip_levels_write_takes_a_significant_decrease_as_at_least_one_and_a_half_times():
    # gzip-8 6 s against level 4's 2.5 s: at least 2.17x (5.7 / 2.625)
    held = verdict("gzip-levels-write", levels())
    assert held[0] == findings.HOLDS, held
    # gzip-8 3.2 s: surely slower than level 4's 2.5 s (intervals apart), but at most 1.42x: not
    # "significantly"
    assert verdict("gzip-levels-write", levels(write_s={8: 3.2}))[0] == findings.FAILS
    # gzip-8 3.6 s: 1.30-1.59x level 4's, undecided
    assert verdict("gzip-levels-write", levels(write_s={8: 3.6}))[0] == findings.INCONCLUSIVE
    # point medians 6 s against 2.5 s, but gzip-8's interval reaches down to level 4's
    wide = levels()
    wide.loc[wide["compression"].eq("gzip-8") & wide["case"].eq("write"), "median_ci_low_s"] = 2.0
    assert verdict("gzip-levels-write", wide)[0] == findings.INCONCLUSIVE
    assert verdict("gzip-levels-write", levels(write_s={8: 1.5}))[0] == findings.FAILS
    only_low = levels()
    only_low = only_low[only_low["compression"] != "gzip-8"]
    assert verdict("gzip-levels-write", only_low)[0] == findings.UNMEASURED


def test_gzip_levels_write_reads_a_race_bound():
    # gzip-8 raced out after one write, at least 4x the best's median (0.9 s): 3.6 s, at least
    # 1.37x level 4's 2.625 s: undecided; at least 6x: 5.4 s, surely over 1.5x
    assert verdict("gzip-levels-write", levels(raced={8: 4.0}))[0] == findings.INCONCLUSIVE
    assert verdict("gzip-levels-write", levels(raced={8: 6.0}))[0] == findings.HOLDS


def test_gzip_levels_size_tests_the_ratio_and_the_selections():
    held = verdict("gzip-levels-size", levels())
    assert held[0] == findings.HOLDS, held
    # the ratio barely moves, but level 8 reads z-slices surely 3x slower than level 1
    assert verdict("gzip-levels-size", levels(read_s={8: 3.3}))[0] == findings.FAILS
    assert verdict("gzip-levels-size", levels(ratio={8: 4.5}))[0] == findings.FAILS
    assert verdict("gzip-levels-size", levels(ratio={8: 3.6}))[0] == findings.INCONCLUSIVE
    assert verdict("gzip-levels-size", levels(read_s={8: 1.6}))[0] == findings.INCONCLUSIVE
    writes_only = levels()
    assert verdict("gzip-levels-size", writes_only[writes_only["case"] == "write"])[0] == findings.UNMEASURED
    # the write clause is gzip-levels-write's: a slow gzip-8 write does not decide this one
    assert verdict("gzip-levels-size", levels(write_s={8: 60.0}))[0] == findings.HOLDS


@pytest.mark.parametrize("key", ["gzip-levels-size", "gzip-levels-write", "compression-slows-reads"])
def test_a_finding_on_the_values_says_not_measured_on_synthetic_values_unless_the_config_opts_in(key):
    slow = {"read_s": {1: 3.0, 4: 3.0, 8: 3.0}}  # compressed reads slower: every one of them measured
    for fill in ("synthetic", "chunk-index"):
        said, why = verdict(key, levels(fill=fill, **slow))
        assert said == findings.UNMEASURED and f"the values are {fill}" in why, why
        assert "dataset.judge_synthetic_values" in why
        said, words = verdict(key, levels(fill=fill, opted=True, **slow))
        assert said != findings.UNMEASURED and f"on {fill} values" in words
    assert verdict(key, levels(fill="donor", **slow))[0] != findings.UNMEASURED
    no_fill = levels(**slow).drop(columns=["fill"])
    assert "no fill column" in verdict(key, no_fill)[1]


def grid(*ratios, fill="donor", n=2048, opted=False):
    """compression-grid.yaml: gzip-4 on m x m x 2048, m = 1, 2, ..., and the uncompressed
    contiguous store; one write each."""
    rows = [write("", 1.0, strategy="chunk", compression_ratio=1.0, writes=1)]
    rows += [
        write(f"{m}x{m}x{n}", 2.0, strategy="chunk", compression="gzip-4", compression_ratio=r, writes=1)
        for m, r in enumerate(ratios, start=1)
    ]
    return frame(rows, fill=fill, judge_synthetic_values=opted)


def test_gzip4_ratio_on_a_donors_values_and_the_studys_chunkings():
    assert verdict("gzip4-ratio", grid(3.0, 3.5, 2.95))[0] == findings.HOLDS
    assert verdict("gzip4-ratio", grid(3.0, 1.1))[0] == findings.FAILS
    assert verdict("gzip4-ratio", grid(3.0, 2.75))[0] == findings.INCONCLUSIVE
    assert verdict("gzip4-ratio", grid())[0] == findings.UNMEASURED
    # m x m x 1024 is not among the chunkings whose ratios the study reports (m x m x 2048, m in 1-10)
    said, why = verdict("gzip4-ratio", grid(1.1, 1.1, n=1024))
    assert said == findings.UNMEASURED and "xy: [1 to 10], z: [2048]" in why
    # compression.yaml's shapes: 4 x 4 x 2048 counts, 4 x 4 x 1024 does not
    assert verdict("gzip4-ratio", levels(ratio={4: 1.2}, shapes=("4x4x1024",)))[0] == findings.UNMEASURED
    assert verdict("gzip4-ratio", levels(ratio={4: 1.2}))[0] == findings.FAILS


@pytest.mark.parametrize("fill", ["synthetic", "chunk-index"])
def test_gzip4_ratio_never_judges_synthetic_values_opt_in_or_not(fill):
    for opted in (False, True):
        said, why = verdict("gzip4-ratio", grid(3.0, 3.1, fill=fill, opted=opted))
        assert said == findings.UNMEASURED and f"the values are {fill}" in why, why
        assert "the opt-in does not apply" in why


def slows(low, high, plain=(0.9, 1.1), cases=("slice", "spectra", "subcube"), **kwargs):
    """levels() with each compressed store's paired ratio to contiguous ``low``-``high`` in
    ``cases`` (the others 1.0-1.2), the uncompressed stores' ``plain``."""
    rows = levels(opted=True, **kwargs)
    packed = rows["compression"] != "none"
    rows.loc[~packed, ["ratio_ci_low", "ratio_ci_high"]] = plain
    rows.loc[packed, ["ratio_ci_low", "ratio_ci_high"]] = (1.0, 1.2)
    rows.loc[packed & rows["case"].isin(cases), ["ratio_ci_low", "ratio_ci_high"]] = (low, high)
    return rows


def test_compression_slows_reads_in_every_selection_case_up_to_an_order_of_magnitude():
    held = verdict("compression-slows-reads", slows(2.8, 3.2))
    assert held[0] == findings.HOLDS, held
    assert "read their chunks cold at 500 MB/s" in held[1]
    assert verdict("compression-slows-reads", slows(0.5, 0.6))[0] == findings.FAILS
    assert verdict("compression-slows-reads", slows(1.0, 1.3))[0] == findings.INCONCLUSIVE
    # slower on z-slices alone: spectra and sub-cubes (1.0-1.2 against 0.9-1.1) undecided
    assert verdict("compression-slows-reads", slows(2.8, 3.2, cases=("slice",)))[0] == findings.INCONCLUSIVE
    # slower on z-slices, surely faster on spectra: the selections do not generally decrease
    faster_spectra = slows(2.8, 3.2)
    spectra = (faster_spectra["compression"] != "none") & (faster_spectra["case"] == "spectra")
    faster_spectra.loc[spectra, ["ratio_ci_low", "ratio_ci_high"]] = (0.3, 0.4)
    assert verdict("compression-slows-reads", faster_spectra)[0] == findings.FAILS
    # "up to 1 order of magnitude": 12-15x slower than uncompressed does not hold
    said, words = verdict("compression-slows-reads", slows(12.0, 15.0, plain=(0.95, 1.0)))
    assert said == findings.FAILS and "more than 10x slower" in words, words


def test_compression_slows_reads_tells_the_filesystem_by_its_cold_reads():
    # warm reads at 500 MB/s from the page cache, cold ones at 10 MB/s: not hopper's fast filesystem
    said, why = verdict("compression-slows-reads", slows(2.8, 3.2, cold_s=50.0))
    assert said == findings.UNMEASURED and "cold at 10 MB/s" in why, why
    no_cold = slows(2.8, 3.2)
    no_cold = no_cold[no_cold["cache_state"] != "cold"]
    said, why = verdict("compression-slows-reads", no_cold)
    assert said == findings.UNMEASURED and "no cold z-slice read" in why, why


@pytest.mark.parametrize(
    "key, rows",
    [("gzip-levels-size", lambda: levels(read_s={8: 3.3})), ("compression-slows-reads", lambda: slows(2.8, 3.2))],
)
def test_compressed_reads_short_of_six_are_undecided(key, rows):
    """Reads of 6 selections, cold first: 5 warm ones each, no 95% interval however far apart."""
    full = rows()
    assert verdict(key, full)[0] in (findings.HOLDS, findings.FAILS)
    short = full.assign(repeats=full["repeats"].where(full["cache_state"] != "warm", 5))
    said, words = verdict(key, short)
    assert said == findings.INCONCLUSIVE, (said, words)
    assert "fewer than 6 repeats" in words


def test_the_opt_in_is_one_declared_key_and_a_bad_value_is_refused_by_name():
    config = yaml.safe_load((REPO / "config" / "studies" / "openmsi" / "compression.yaml").read_text())
    assert "judge_synthetic_values" not in config["dataset"]  # the values' findings wait for a donor
    assert config["cases"]["write"]["repeats"] >= 6 and config["race"] is False
    config["dataset"]["judge_synthetic_values"] = "yes"
    with pytest.raises(ConfigError, match=r"dataset\.judge_synthetic_values"):
        validate_schema(config)
    grid_config = yaml.safe_load((REPO / "config" / "studies" / "openmsi" / "compression-grid.yaml").read_text())
    assert "judge_synthetic_values" not in grid_config["dataset"]  # its finding needs a donor's values
    writes = yaml.safe_load((REPO / "config" / "studies" / "openmsi" / "write-strategies.yaml").read_text())
    assert writes["cases"]["write"]["repeats"] >= 6 and writes["race"] is False


# chunking.yaml: uncompressed m x m x n and contiguous


def slices(times: dict, n=128):
    return [read("slice", f"{m}x{m}x{n}", t) for m, t in times.items()]


def test_best_slice_chunks_holds_only_for_m_in_4_8_16_and_n_at_most_4096():
    assert verdict("best-slice-chunks", slices({4: 1.0, 1: 5.0}))[0] == findings.HOLDS
    assert verdict("best-slice-chunks", slices({4: 5.0, 1: 1.0}))[0] == findings.FAILS
    assert verdict("best-slice-chunks", slices({4: 1.0, 1: 1.02}))[0] == findings.INCONCLUSIVE
    assert verdict("best-slice-chunks", slices({4: 1.0, 8: 2.0}))[0] == findings.UNMEASURED
    # m = 8 but n = 8192: outside the sentence's chunk shapes, and the fastest
    outside_n = slices({8: 1.0}, n=8192) + slices({4: 3.0, 1: 5.0})
    assert verdict("best-slice-chunks", outside_n)[0] == findings.FAILS
    # a 3 x 3 chunking (chunking.yaml's, for edge-padding) is not among those the study compared
    assert verdict("best-slice-chunks", slices({3: 0.5, 4: 1.0, 1: 5.0}))[0] == findings.HOLDS


GRID_M, GRID_N = (1, 2, 4, 8, 16, 32), (128, 256, 512, 1024, 2048, 4096, 8192)  # chunking.yaml's


def against_contiguous(case, low, high, contiguous=True, compressed=None, grid=None, others=None):
    """chunking.yaml's stores: contiguous and every m x m x n of the study's grid (``grid``: the
    (m, n) measured), each read warm with its paired ratio to contiguous ``low``-``high``, and
    cold once; ``others``: (m, n) -> ratio interval for some of them."""
    grid = grid if grid is not None else [(m, n) for m in GRID_M for n in GRID_N]
    rows = [read(case, ""), cold(case, "")] if contiguous else []
    for m, n in grid:
        chunk = f"{m}x{m}x{n}"
        rows += [read(case, chunk, ratio=(others or {}).get((m, n), (low, high))), cold(case, chunk)]
    if compressed:  # compressed stores of the same shapes beside them: not the chunking study's
        rows += [read(case, f"{m}x{m}x{n}", compression="gzip-4", ratio=compressed) for m, n in grid]
    return rows


@pytest.mark.parametrize(
    "key, case, sure, other",
    [
        ("contiguous-best-spectra", "spectra", (1.5, 2.0), (0.5, 0.8)),
        ("chunking-helps-subcubes", "subcube", (0.3, 0.5), (1.5, 2.0)),
    ],
)
def test_the_chunking_studys_read_findings_against_contiguous(key, case, sure, other):
    held = verdict(key, against_contiguous(case, *sure))
    assert held[0] == findings.HOLDS and "42 surely so" in held[1], held
    assert verdict(key, against_contiguous(case, *other))[0] == findings.FAILS
    assert verdict(key, against_contiguous(case, 0.9, 1.1))[0] == findings.INCONCLUSIVE
    assert verdict(key, against_contiguous(case, *sure, contiguous=False))[0] == findings.UNMEASURED
    # compressed stores (compression.yaml's) are not counted with the uncompressed ones
    assert verdict(key, against_contiguous(case, *sure, compressed=other))[0] == findings.HOLDS
    # "in most cases": 21 of the 42 surely so, 21 undecided is not most
    half = {(m, n): (0.9, 1.1) for m in GRID_M[:3] for n in GRID_N}
    assert verdict(key, against_contiguous(case, *sure, others=half))[0] == findings.INCONCLUSIVE


@pytest.mark.parametrize("key, case", [("contiguous-best-spectra", "spectra"), ("chunking-helps-subcubes", "subcube")])
def test_the_chunking_studys_read_findings_need_most_of_its_grid(key, case):
    """Four chunkings (a cut grid) do not say what most of the study's 42 do; chunkings outside
    its grid (3 x 3, 4 x 4 x 100) are not counted."""
    cut = [(1, 128), (1, 1024), (4, 128), (4, 1024)]
    said, why = verdict(key, against_contiguous(case, 1.5, 2.0, grid=cut))
    assert said == findings.UNMEASURED and "4 of the study's 42" in why and "layouts.chunks" in why, why
    most = [(m, n) for m in GRID_M for n in GRID_N][:22]
    assert verdict(key, against_contiguous(case, 0.3, 0.5, grid=most))[0] != findings.UNMEASURED
    outside = [(3, n) for n in GRID_N] + [(m, 100) for m in GRID_M] + [(4, 2048)] * 3  # one more shape
    said, why = verdict(key, against_contiguous(case, 0.3, 0.5, grid=cut + outside))
    assert said == findings.UNMEASURED and "5 of the study's 42" in why, why


def test_the_chunking_studys_reads_short_of_six_are_undecided():
    """A read case of 6 selections, cold first: 5 warm reads, whose [min, max] is no 95% interval."""
    rows = [r | {"repeats": 5} if r["cache_state"] == "warm" else r for r in against_contiguous("spectra", 1.5, 2.0)]
    said, words = verdict("contiguous-best-spectra", rows)
    assert said == findings.INCONCLUSIVE and "fewer than 6 repeats counted undecided" in words, (said, words)
    short = [r | {"repeats": 5} for r in slices({4: 1.0, 1: 5.0})]
    assert verdict("best-slice-chunks", short)[0] == findings.INCONCLUSIVE
    short = [r | {"repeats": 5} for r in slices_and_spectra(2.0)]
    assert verdict("slices-slower-than-spectra", short)[0] == findings.INCONCLUSIVE


def slices_and_spectra(slice_s, slice_bytes=500_000, compressed_slice_s=None):
    rows = [
        r
        for chunk in ("", "4x4x2048")
        for r in (
            read("slice", chunk, slice_s, bytes_selected=slice_bytes),
            read("spectra", chunk, 1.0, bytes_selected=5_000_000),
        )
    ]
    if compressed_slice_s is not None:  # compression.yaml's gzip stores: not the chunking study's
        rows += [
            read(case, chunk, s, compression=f"gzip-{g}", bytes_selected=b)
            for chunk in ("4x4x1024", "4x4x2048", "8x8x2048")
            for g in (1, 4, 8)
            for case, s, b in (("slice", compressed_slice_s, slice_bytes), ("spectra", 1.0, 5_000_000))
        ]
    return rows


def test_slices_slower_than_spectra():
    assert verdict("slices-slower-than-spectra", slices_and_spectra(2.0))[0] == findings.HOLDS
    assert verdict("slices-slower-than-spectra", slices_and_spectra(0.5))[0] == findings.FAILS
    assert verdict("slices-slower-than-spectra", slices_and_spectra(1.02))[0] == findings.INCONCLUSIVE
    assert verdict("slices-slower-than-spectra", slices_and_spectra(2.0, 9_000_000))[0] == findings.UNMEASURED
    # nine compressed stores reading z-slices faster do not outvote the two uncompressed ones
    mixed = slices_and_spectra(2.0, compressed_slice_s=0.5)
    held = verdict("slices-slower-than-spectra", mixed)
    assert held[0] == findings.HOLDS and "of 2 uncompressed stores" in held[1], held


def sized(chunk, size, compression="none", strategy="chunk", backend="hdf5"):
    return write(chunk, 1.0, strategy=strategy, compression=compression, file_bytes=size, raw_bytes=1000) | {
        "backend": backend
    }


def test_edge_padding():
    shape = (100, 100, 1000)  # 32 x 32 chunks pad the image to 128 x 128: 1.6384x
    rows = lambda size: [sized("32x32x1000", size * 1000, strategy=s) for s in STRATEGIES]  # noqa: E731
    assert verdict("edge-padding", rows(1.65), shape)[0] == findings.HOLDS
    assert verdict("edge-padding", rows(1.0), shape)[0] == findings.FAILS
    assert verdict("edge-padding", rows(1.55), shape)[0] == findings.INCONCLUSIVE
    assert verdict("edge-padding", rows(1.0), (128, 128, 1000))[0] == findings.UNMEASURED


def test_one_by_one_metadata():
    rows = lambda small, n=128: [sized(f"1x1x{n}", small), sized("1x1x1024", 1000)]  # noqa: E731
    assert verdict("one-by-one-metadata", rows(1200))[0] == findings.HOLDS
    assert verdict("one-by-one-metadata", rows(900))[0] == findings.FAILS
    assert verdict("one-by-one-metadata", rows(1030))[0] == findings.INCONCLUSIVE
    assert verdict("one-by-one-metadata", rows(1200, n=256))[0] == findings.UNMEASURED
    # a compressed 1 x 1 x 128 store is not the sentence's
    assert verdict("one-by-one-metadata", rows(900) + [sized("1x1x128", 5000, "gzip-4")])[0] == findings.FAILS


def test_every_openmsi_finding_is_tested_here():
    mine = {f.key for f in findings.FINDINGS if f.study == "OpenMSI"}
    tested = {
        "gzip4-ratio",
        "edge-padding",
        "one-by-one-metadata",
        "contiguous-best-spectra",
        "best-slice-chunks",
        "slices-slower-than-spectra",
        "chunking-helps-subcubes",
        "gzip-levels-size",
        "gzip-levels-write",
        "contiguous-fastest-write",
        "spectrum-writes-slow-with-m",
        "compression-slows-reads",
    }
    assert mine - {"local-scaling"} == tested


@pytest.mark.workflow
def test_a_real_sweep_writes_its_findings_with_both_verdicts(tmp_path):
    """A donor of random float32 values barely compresses: gzip-4's 2.9-3.8x does not hold on
    it; the same sweep on synthetic values, opted in or not, says not measured; a chunk shape
    that does not divide the image allocates its edge chunks whole, and that holds."""
    shape = (20, 20, 3000)
    donor = tmp_path / "donor.h5"
    with h5py.File(donor, "w") as f:
        f["v"] = np.random.default_rng(0).random(shape, dtype=np.float32)
    config = tiny_config(tmp_path, sweep="findings")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"] = {
        **config["dataset"],
        "dtype": "float32",
        "shape": list(shape),
        "fill": {"donor": {"path": str(donor), "dataset": "v"}},
    }
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [3], "z": [2048]}}
    config["compression"] = ["none", "gzip-4"]
    config["cases"] = {"write": {"repeats": 1}}
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / "findings"
    table = pd.read_csv(results / "findings.csv")
    assert len(table) == len(findings.FINDINGS)
    said = dict(zip(table["finding"], table["verdict"], strict=True))
    assert said["gzip4-ratio"] == findings.FAILS
    assert said["edge-padding"] == findings.HOLDS
    assert said["contiguous-best-spectra"] == findings.UNMEASURED
    text = (results / "findings.md").read_text()
    assert "| does not hold | gzip-4 ratio median 1.1" in text
    summary = pd.read_parquet(results / "summary.parquet")
    assert set(summary["fill"]) == {"donor"}
    for opted in (False, True):
        synthetic = summary.assign(fill="synthetic", judge_synthetic_values=opted)
        ratio = findings.evaluate(synthetic, shape)
        ratio = ratio[ratio["finding"] == "gzip4-ratio"].iloc[0]
        assert ratio["verdict"] == findings.UNMEASURED and "the values are synthetic" in ratio["evidence"]


def test_a_write_stopped_at_its_limit_counts_as_at_least_the_limit():
    rows = strategies(SLOWER)
    stopped = write("32x32x2048", 600.0, strategy="spectrum") | {
        "repeats": 1,
        "median_ci_low_s": NAN,
        "median_ci_high_s": NAN,
        "writes_stopped": 1,
    }
    rows = [r for r in rows if not (r["chunk_shape"] == "32x32x2048" and r["write_strategy"] == "spectrum")]
    held = verdict("contiguous-fastest-write", [*rows, stopped])
    assert held[0] == findings.HOLDS and "at least 600 s (a write stopped at its limit)" in held[1], held
    rising = {"spectrum": {1: 1.2, 2: 2.0, 4: 3.0, 8: 5.0}}
    stopped_16 = stopped | {"chunk_shape": "16x16x2048", "layout_id": "chunked-16x16x2048"}
    assert verdict("spectrum-writes-slow-with-m", [*strategies(rising), stopped_16])[0] == findings.HOLDS


def test_reads_are_compared_in_one_cache_state():
    """A store whose reads were mostly cold has its cold row primary; its warm reads are set
    against the others' warm reads, not its first accesses against their sustained ones."""
    mostly_cold = [
        read("slice", "4x4x128", 5.0) | {"cache_state": "cold", "repeats": 10},
        read("slice", "4x4x128", 1.0) | {"primary": False, "repeats": 6},
    ]
    rows = mostly_cold + slices({1: 3.0})
    assert verdict("best-slice-chunks", rows)[0] == findings.HOLDS


def test_slices_and_spectra_are_compared_in_the_same_cache_state():
    """Spectra mostly cold, slices mostly warm: both are judged in the state most reads were
    in, not slices warm against spectra cold."""
    rows = slices_and_spectra(2.0)
    cold_spectra = [
        r | {"cache_state": "cold", "median_s": 9.0, "median_ci_low_s": 8.5, "median_ci_high_s": 9.5, "repeats": 10}
        for r in rows
        if r["case"] == "spectra"
    ]
    for r in rows:
        if r["case"] == "spectra":
            r["primary"] = False
    assert verdict("slices-slower-than-spectra", rows + cold_spectra)[0] == findings.HOLDS
