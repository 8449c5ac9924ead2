"""The recommendation: layouts ranked for a read mix by paired ratios, ties, limits, verdict."""

import math

import numpy as np
import pandas as pd
import pytest

from h5sweep.analyze.ranking import rank_layouts, selected_reads
from h5sweep.analyze.wording import evidence, machine_caveat, markdown
from h5sweep.measure.objective import TO_BEST_CI_LOW
from h5sweep.storage.errors import ConfigError
from h5sweep.sweep.config import filled_section
from h5sweep.sweep.model import recommend_from_config

CACHE = {"chunk_cache_bytes": 1048576, "chunk_cache_slots": 521, "chunk_cache_w0": 0.75}
OPTION = {"read_option": "cache 1 MiB/521/0.75", "read_option_index": 0}
REPEATS = 20


def settings(**recommend):
    return {
        "recommend": {
            "weights": {"slice": 1.0, "spectra": 1.0},  # the mix the sweep fills where none is given
            "statistic": "first-access",
            "max_file_ratio": None,
            "max_write_s": None,
            **recommend,
        },
        "read_cases": ["slice", "spectra"],
        "policy": "random",
    }


def reads(layout_id, compression, factors, noise=0.0, seed=0, cold_mode="every", policy="random"):
    """Reads of both cases; each selection's contiguous time differs wildly (1 to 100 ms), the
    layout's is that times its factor for the case (times noise)."""
    rng = np.random.default_rng(seed)
    rows = []
    for case, factor in factors.items():
        for repeat in range(REPEATS):
            base = 0.001 * (1 + 99 * ((repeat * 37) % REPEATS) / REPEATS)
            rows.append(
                {
                    "filesystem": "disk",
                    "fs_type": "ext4",
                    "backend": "hdf5",
                    "layout_id": layout_id,
                    "layout_name": "",
                    "chunk_shape": layout_id.removeprefix("chunked-") if layout_id != "contiguous" else "",
                    "compression": compression,
                    "case": case,
                    "repeat": repeat,
                    "seconds": base * factor * math.exp(noise * rng.standard_normal()),
                    "cold_mode": cold_mode,
                    "reads_since_open": 0 if cold_mode == "every" else repeat,
                    "policy": policy,
                    "chunks_touched": 0 if layout_id == "contiguous" else 4,
                    "stored_bytes_touched": 0 if layout_id == "contiguous" else 3_000_000,
                    "bytes_selected": 500_000,
                    "device_read_bytes": 4_000_000 if layout_id == "contiguous" else 3_500_000,
                    **CACHE,
                    **OPTION,
                }
            )
    return rows


def summary_of(files):
    rows = []
    for (layout_id, compression), (file_bytes, write_s) in files.items():
        common = {"filesystem": "disk", "backend": "hdf5", "layout_id": layout_id, "compression": compression}
        rows.append(
            {
                **common,
                "case": "write",
                "primary": True,
                "median_s": write_s,
                "file_bytes": file_bytes,
                "raw_bytes": 1000,
            }
        )
        rows.append(
            {**common, "case": "slice", "primary": True, "median_s": 0.01, "file_bytes": file_bytes, "raw_bytes": 1000}
        )
    return pd.DataFrame(rows)


MEASURED = pd.DataFrame(
    reads("contiguous", "none", {"slice": 1, "spectra": 1})
    + reads("chunked-4x4x256", "gzip-4", {"slice": 0.5, "spectra": 2.0})
    + reads("chunked-16x16x256", "none", {"slice": 0.8, "spectra": 0.8}, noise=0.05, seed=1)
    + reads("chunked-16x16x512", "gzip-4", {"slice": 0.81, "spectra": 0.8}, noise=0.05, seed=2)
    # reads of other variants are not compared
    + reads("chunked-16x16x256", "none", {"slice": 0.01, "spectra": 0.01}, policy="aligned")
    + reads("chunked-16x16x256", "none", {"slice": 9, "spectra": 9}, cold_mode="first")
)
SUMMARY = summary_of(
    {
        ("contiguous", "none"): (1000, 1.0),
        ("chunked-4x4x256", "gzip-4"): (400, 3.0),
        ("chunked-16x16x256", "none"): (1010, 1.1),
        ("chunked-16x16x512", "gzip-4"): (350, 2.5),
    }
)


def test_ratios_are_paired_per_selection_and_weighted_geometrically():
    table = rank_layouts(MEASURED, SUMMARY, settings()).set_index("layout_id")
    # selection times span 100x, yet each layout's ratio is exact because it is paired
    assert table.loc["chunked-4x4x256", "ratio_slice"] == pytest.approx(0.5)
    assert table.loc["chunked-4x4x256", "ratio_spectra"] == pytest.approx(2.0)
    assert table.loc["chunked-4x4x256", "weighted_ratio"] == pytest.approx(1.0)  # sqrt(0.5 * 2)
    assert table.loc["chunked-4x4x256", "weighted_ratio_ci_low"] == pytest.approx(1.0)  # no noise, no spread
    assert table.loc["contiguous", "weighted_ratio"] == pytest.approx(1.0)
    assert table.loc["chunked-4x4x256", "selections"] == 2 * REPEATS
    weighted = rank_layouts(MEASURED, SUMMARY, settings(weights={"slice": 3, "spectra": 1})).set_index("layout_id")
    assert weighted.loc["chunked-4x4x256", "weighted_ratio"] == pytest.approx(0.5**0.5)  # (0.5^3 * 2)^(1/4)
    only_spectra = rank_layouts(MEASURED, SUMMARY, settings(weights={"spectra": 1})).set_index("layout_id")
    assert "ratio_slice" not in only_spectra or only_spectra["ratio_slice"].isna().all()
    assert only_spectra.loc["chunked-4x4x256", "weighted_ratio"] == pytest.approx(2.0)


def test_layouts_within_the_fastest_ones_interval_are_tied_and_the_smallest_is_chosen():
    table = rank_layouts(MEASURED, SUMMARY, settings(objective="geometric"))
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert set(table.loc[table["tied_with_best"], "layout_id"]) == {"chunked-16x16x256", "chunked-16x16x512"}
    chosen = table[table["recommended"]]
    assert list(chosen["layout_id"]) == ["chunked-16x16x512"]  # tied, and 350 bytes instead of 1010
    assert chosen["file_ratio"].iloc[0] == pytest.approx(0.35)
    assert chosen["write_median_s"].iloc[0] == pytest.approx(2.5)
    text = markdown(table, settings(objective="geometric"))
    assert "cannot tell it apart from" in text and "Choose 16x16x512" not in text
    best = table.set_index("layout_id").loc["chunked-16x16x512"]
    assert best["to_best_ci_low"] <= 1 <= best["to_best_ci_high"]  # paired with the best: reaches 1
    assert f"Choose chunked-16x16x512 with gzip-4: {best['to_best']:.2f}x the best's score" in text
    assert "| 1 | chunked-16x16x256 |" in text and "(recommend.objective: geometric)" in text


def test_limits_exclude_layouts_and_say_why():
    table = rank_layouts(MEASURED, SUMMARY, settings(max_write_s=2.0, max_file_ratio=1.005)).set_index("layout_id")
    assert not table.loc["chunked-16x16x512", "meets_limits"]
    assert table.loc["chunked-16x16x512", "excluded_by"] == "write 2.5 s > 2 s"
    assert table.loc["chunked-16x16x256", "excluded_by"] == "file 1.01x raw > 1.005"
    assert table.loc["contiguous", "recommended"]  # the only layout left within both limits
    assert table.loc["chunked-16x16x512", "rank"] > table.loc["contiguous", "rank"]


def test_a_layout_whose_write_was_stopped_is_excluded_and_its_time_shown_as_a_lower_bound():
    summary = SUMMARY.assign(writes_stopped=0)
    stopped = (summary["layout_id"] == "chunked-16x16x512") & (summary["case"] == "write")
    summary.loc[stopped, "writes_stopped"] = 1
    table = rank_layouts(MEASURED, summary, settings()).set_index("layout_id")
    assert table.loc["chunked-16x16x512", "write_stopped"] and not table.loc["contiguous", "write_stopped"]
    assert table.loc["chunked-16x16x512", "excluded_by"] == "write stopped at 2.5 s (cases.write.limit_s)"
    assert table.loc["chunked-16x16x256", "recommended"]  # the one left of the two tied
    assert "| >2.5 |" in markdown(table.reset_index(), settings())


def test_statistic_picks_first_accesses_or_sustained_reads():
    first_access = selected_reads(MEASURED, settings())
    assert set(first_access["cold_mode"]) == {"every"} and set(first_access["policy"]) == {"random"}
    sustained = selected_reads(MEASURED, settings(statistic="sustained"))
    assert set(sustained["cold_mode"]) == {"first"} and sustained["reads_since_open"].min() == 1


def test_recommend_config_is_checked_naming_the_key():
    from h5sweep.cases import SliceCase, SpectraCase

    cases = [SliceCase({"repeats": 3}), SpectraCase({"repeats": 3})]
    assert recommend_from_config(filled_section("recommend", {}), cases)["statistic"] == "first-access"
    with pytest.raises(ConfigError, match=r"recommend\.weights\.spectrum=2: is not a read case"):
        recommend_from_config(filled_section("recommend", {"weights": {"spectrum": 2}}), cases)
    with pytest.raises(ConfigError, match="recommend.weights.*at least one positive"):
        recommend_from_config(filled_section("recommend", {"weights": {"slice": 0}}), cases)
    with pytest.raises(ConfigError, match=r"recommend\.statistic='sustained': no weighted read case"):
        recommend_from_config(filled_section("recommend", {"statistic": "sustained"}), cases)
    assert recommend_from_config(
        filled_section("recommend", {"statistic": "sustained"}), [SliceCase({"cold": ["first", "every"]})]
    )


def test_the_read_mix_is_filled_where_recommend_is_resolved_and_the_race_reads_it_as_it_is():
    """``recommend.weights`` leaves the sweep's resolution as the read mix itself: one read of
    each case where none is given, else the given cases of positive weight in the sweep's
    order; the race's rule takes that mix unchanged."""
    from h5sweep.cases import SliceCase, SpectraCase
    from h5sweep.sweep.settings import with_race_scoring

    cases = [SliceCase({"repeats": 3}), SpectraCase({"repeats": 3})]
    unset = recommend_from_config(filled_section("recommend", {}), cases)
    assert unset["weights"] == {"slice": 1.0, "spectra": 1.0}
    given = recommend_from_config(filled_section("recommend", {"weights": {"spectra": 10, "slice": 0}}), cases)
    assert given["weights"] == {"spectra": 10.0}
    race = with_race_scoring({"race": {"margin": 0.2}}, given)["race"]
    assert race == {"margin": 0.2, "weights": {"spectra": 10.0}, "objective": given["objective"]}


def test_a_sweep_without_read_cases_says_there_is_nothing_to_rank():
    writes = pd.DataFrame([{"case": "write", "seconds": 1.0, "filesystem": "disk", "layout_id": "contiguous"}])
    empty = {**settings(), "read_cases": []}
    table = rank_layouts(writes, SUMMARY, empty)
    assert table.empty and list(table.columns) == list(rank_layouts(MEASURED.iloc[0:0], SUMMARY, settings()).columns)
    assert "nothing to rank" in markdown(table, empty)


def test_the_verdict_cites_the_model_and_the_device():
    table = rank_layouts(MEASURED, SUMMARY, settings())
    why = evidence(selected_reads(MEASURED, settings()), table)["disk"]
    assert why.startswith("Why, per read (medians): slice: chunked-16x16x512 with gzip-4 touches 4 chunks holding 3 MB")
    assert "contiguous selects 0.5 MB, the device delivered 4 MB" in why
    assert why in markdown(table, settings(), {"disk": why})


def test_cold_reads_on_a_node_that_reports_freed_pages_soon_carry_a_caveat():
    """The caveat comes from what each row recorded of the node that read it."""
    table = rank_layouts(MEASURED, SUMMARY, settings())

    def measured_on(delays):  # delay per host, the reads alternating between the hosts
        hosts = list(delays)
        rows = MEASURED.assign(cache_state="cold", host=[hosts[i % len(hosts)] for i in range(len(MEASURED))])
        return rows.assign(free_page_reporting_ms=rows["host"].map(delays))

    caveat = machine_caveat(measured_on({"node7": 0, "node8": 100_000}))
    assert "free page reporting: disk on node7 (0 ms))" in caveat and "node8" not in caveat
    assert caveat in markdown(table, settings(), caveat=caveat).split("\n\n")[1:-1]
    held, no_balloon = measured_on({"node7": 100_000}), measured_on({"node7": -1})
    assert machine_caveat(held) is None and machine_caveat(no_balloon) is None
    from_memory = measured_on({"node7": 0}).assign(cache_state="memory")  # tmpfs: nothing evicted
    assert machine_caveat(from_memory) is None
    assert machine_caveat(MEASURED) is None  # rows from before the columns existed


def zarr_reads(layout_id, compression, factors, reader="zarr-python"):
    """Reads of a Zarr store: no chunk cache, its reader's columns instead (zarr-python the
    first read option, tensorstore the second)."""
    rows = reads(layout_id, compression, factors)
    for row in rows:
        row.update(backend="zarr", reader=reader, chunk_cache_bytes=None, chunk_cache_slots=None, chunk_cache_w0=None)
        row["zarr_concurrency"] = 10 if reader == "zarr-python" else None
        row["read_option"] = "zarr-python concurrency 10" if reader == "zarr-python" else reader
        row["read_option_index"] = 0 if reader == "zarr-python" else 1
        row["read_option_setting"] = "zarr.config.set(...)" if reader == "zarr-python" else "tensorstore.open(...)"
    return rows


def test_zarr_and_hdf5_stores_are_ranked_together_against_the_contiguous_hdf5_file():
    """Zarr has no contiguous layout: its reads are paired with the contiguous HDF5 file's, so
    both backends' stores are ranked on one scale, each named with its backend; every read
    option is a candidate of its own (Zarr's two readers), and the verdict says how to read."""
    measured = pd.DataFrame(
        reads("contiguous", "none", {"slice": 1, "spectra": 1})
        + reads("chunked-16x16x256", "none", {"slice": 0.8, "spectra": 0.8})
        + zarr_reads("chunked-16x16x256", "none", {"slice": 0.4, "spectra": 0.5})
        + zarr_reads("chunked-16x16x256", "none", {"slice": 0.01, "spectra": 0.01}, reader="tensorstore")
    )
    summary = summary_of({("contiguous", "none"): (1000, 1.0), ("chunked-16x16x256", "none"): (1010, 1.1)})
    summary = pd.concat([summary, summary_of({("chunked-16x16x256", "none"): (1020, 1.2)}).assign(backend="zarr")])
    chosen = settings()
    table = rank_layouts(measured, summary, chosen)
    assert list(zip(table["backend"], table["layout_id"], table["read_option"], table["rank"], strict=True)) == [
        ("zarr", "chunked-16x16x256", "tensorstore", 1),
        ("zarr", "chunked-16x16x256", "zarr-python concurrency 10", 2),
        ("hdf5", "chunked-16x16x256", "cache 1 MiB/521/0.75", 3),
        ("hdf5", "contiguous", "cache 1 MiB/521/0.75", 4),
    ]
    assert table.iloc[1]["weighted_ratio"] == pytest.approx((0.4 * 0.5) ** 0.5)
    assert table.iloc[0]["recommended"] and table.iloc[0]["file_bytes"] == 1020
    text = markdown(table, chosen)
    assert "On disk (ext4, HDF5, Zarr)" in text
    assert "Choose Zarr chunked-16x16x256, read with tensorstore" in text
    # how to set it, and what the backend's first reader costs on the same store
    assert "Read it with tensorstore: `tensorstore.open(...)`." in text
    assert "With zarr-python concurrency 10 the same store scores" in text
    assert "| 3 | HDF5 chunked-16x16x256 |" in text  # one HDF5 option: not named


def test_the_parallel_section_names_the_best_store_and_mode_per_operation_and_process_count():
    from h5sweep.cases.parallel.verdict import parallel_markdown, parallel_verdicts

    def row(op, layout, mode, p, median, low, high, best):
        return {
            "filesystem": "disk",
            "case": "parallel",
            "operation": op,
            "units_per_access": 525,
            "backend": "hdf5",
            "layout": layout,
            "layout_id": layout,
            "compression": "none",
            "reader": "h5py",
            "mode": mode,
            "processes": p,
            "bytes_per_s_median": median,
            "bytes_per_s_ci_low": low,
            "bytes_per_s_ci_high": high,
            "bytes_per_s_max": best,
        }

    rows = [
        row("read", "contiguous", "serial", 1, 500e6, 480e6, 520e6, 530e6),
        row("read", "contiguous", "collective", 2, 900e6, 850e6, 950e6, 990e6),
        row("read", "chunked", "independent", 2, 880e6, 800e6, 910e6, 920e6),  # within the best's interval
        row("read", "chunked", "independent", 1, 400e6, 390e6, 410e6, 420e6),
        row("write", "contiguous", "serial", 1, 300e6, 290e6, 310e6, 320e6),  # serial wins at every P
        row("write", "contiguous", "independent", 2, 200e6, 190e6, 210e6, 220e6),
    ]
    summary = pd.DataFrame(rows + [{"filesystem": "disk", "case": "spectra", "median_s": 0.001}])
    verdicts = {(v["operation"], v["processes"]): v for v in parallel_verdicts(summary).to_dict("records")}
    assert set(verdicts) == {("read", 1), ("read", 2), ("write", 2)}
    best = verdicts["read", 2]
    assert (best["layout_id"], best["mode"], best["tied"]) == ("contiguous", "collective", 1)
    assert (verdicts["read", 1]["layout_id"], verdicts["read", 1]["mode"]) == ("contiguous", "serial")
    assert verdicts["write", 2]["mode"] == "serial"
    text = parallel_markdown(summary)
    assert "- disk, read, P = 2, 525 per access: HDF5 contiguous none, collective on 2 processes: 900 MB/s" in text
    assert "(850 MB/s-950 MB/s; best 990 MB/s); 1 other(s) within its interval." in text
    assert parallel_markdown(summary[summary["case"] != "parallel"]) == ""
    measurements = pd.DataFrame(
        {"case": ["parallel", "slice"], "backend": ["hdf5", "hdf5"], "hdf5_version": ["1.10.8", "2.0.0"]}
    )
    assert "ran on HDF5 1.10.8 (the MPI build of .venv-mpi), the serial cases on HDF5 2.0.0" in parallel_markdown(
        summary, measurements
    )
    # stopped at cases.parallel.limit_s: no bandwidth, counted, not ranked
    nan = float("nan")
    stopped = pd.DataFrame(
        rows
        + [
            row("read", "chunked", "collective", 2, nan, nan, nan, nan),
            row("write", "chunked", "independent", 4, nan, nan, nan, nan),
        ]
    )
    verdicts = {(v["operation"], v["processes"]): v for v in parallel_verdicts(stopped).to_dict("records")}
    assert (verdicts["read", 2]["mode"], verdicts["read", 2]["stopped"]) == ("collective", 1)
    assert verdicts["write", 4]["stopped"] == 1 and verdicts["write", 4]["mode"] == "serial"
    text = parallel_markdown(stopped)
    assert (
        "1 other(s) within its interval; 1 store(s) or mode(s) stopped at cases.parallel.limit_s, not ranked." in text
    )
    alone = stopped[(stopped["operation"] == "write") & (stopped["mode"] != "serial")]
    assert "every pass stopped at cases.parallel.limit_s: no bandwidth to rank." in parallel_markdown(alone)


def test_under_cold_first_the_ranking_rests_on_sustained_reads_and_says_so():
    """The study's protocol (cold: first) gives one first access per case and store: the
    first-access statistic ranks the sustained reads of those cases instead (repeats - 1 each,
    with intervals), and the statistic column and the verdict say so."""
    measured = pd.DataFrame(
        reads("contiguous", "none", {"slice": 1, "spectra": 1}, cold_mode="first")
        + reads("chunked-16x16x256", "none", {"slice": 0.8, "spectra": 0.8}, noise=0.05, seed=1, cold_mode="first")
    )
    chosen = selected_reads(measured, settings())
    assert chosen["reads_since_open"].min() == 1 and len(chosen) == 2 * 2 * (REPEATS - 1)
    table = rank_layouts(measured, SUMMARY, settings())
    assert set(table["statistic"]) == {
        "first-access; sustained for slice, spectra (cold: first leaves one first access per store)"
    }
    other = table[~table["is_reference"]]  # the reference's ratio to itself is 1 exactly
    assert (other["weighted_ratio_ci_high"] > other["weighted_ratio_ci_low"]).all()
    assert (table["selections"] == 2 * (REPEATS - 1)).all()
    assert "sustained for slice, spectra" in markdown(table, settings())


def test_an_interval_from_one_read_per_case_is_not_shown():
    measured = pd.DataFrame(
        reads("contiguous", "none", {"slice": 1, "spectra": 1})
        + reads("chunked-16x16x256", "none", {"slice": 0.8, "spectra": 0.8})
    )
    measured = measured[measured["repeat"] == 0]
    table = rank_layouts(measured, SUMMARY, settings())
    assert table["weighted_ratio_ci_low"].isna().all() and table["recommended"].sum() == 1
    text = markdown(table, settings())
    assert "none (one read)" in text and "nan" not in text


def mixed(weights=None, objective="time"):
    """Rew's case: on contiguous storage an image costs 100 reads of a spectrum; a balanced
    chunk shape reads the image in a third of that time and the spectrum 14x slower."""
    measured = pd.DataFrame(
        reads("contiguous", "none", {"slice": 100, "spectra": 1})
        + reads("chunked-16x16x64", "none", {"slice": 33, "spectra": 13.9})
    )
    summary = summary_of({("contiguous", "none"): (1000, 1.0), ("chunked-16x16x64", "none"): (1000, 1.0)})
    chosen = settings(objective=objective, **({"weights": weights} if weights else {}))
    return rank_layouts(measured, summary, chosen).set_index("layout_id"), chosen


def test_the_time_objective_ranks_by_what_the_read_mix_costs_and_the_geometric_mean_does_not():
    by_time, chosen = mixed()
    balanced = by_time.loc["chunked-16x16x64"]
    # one read of each: the mean selection time is 50.5 ms here, so 100 + 1 against 33 + 13.9 of them
    assert balanced["mix_ratio"] == pytest.approx((33 + 13.9) / 101)
    assert balanced["mix_seconds"] == pytest.approx(balanced["seconds_slice"] + balanced["seconds_spectra"])
    assert balanced["score"] == balanced["mix_ratio"] and balanced["recommended"]
    assert (balanced["worst_case"], balanced["worst_slowdown"]) == ("spectra", pytest.approx(13.9))
    assert by_time.loc["contiguous", "case_spread"] == pytest.approx(100)  # Rew's bias
    assert "(recommend.objective: time)" in markdown(by_time.reset_index(), chosen)
    by_ratio, chosen = mixed(objective="geometric")
    assert by_ratio.loc["contiguous", "recommended"] and not by_ratio.loc["chunked-16x16x64", "recommended"]
    assert by_ratio.loc["chunked-16x16x64", "score"] == pytest.approx((33 / 100 * 13.9) ** 0.5)
    assert "(recommend.objective: geometric)" in markdown(by_ratio.reset_index(), chosen)
    # the user's counts of reads: a thousand spectra per ten images make contiguous the cheaper
    by_counts, _ = mixed({"spectra": 1000, "slice": 10})
    assert by_counts.loc["contiguous", "recommended"]
    assert by_counts.loc["chunked-16x16x64", "mix_ratio"] == pytest.approx((330 + 13900) / (1000 + 1000))


def test_the_worst_case_objective_picks_the_smallest_largest_slowdown():
    table, chosen = mixed(objective="worst-case")
    # contiguous: slice 100/33 = 3.03x its fastest; the balanced shape: spectra 13.9x
    assert table.loc["contiguous", "score"] == pytest.approx(100 / 33)
    assert table.loc["contiguous", "worst_case"] == "slice" and table.loc["contiguous", "recommended"]
    assert "at most 3.03x the fastest store's time in any case" in markdown(table.reset_index(), chosen)


def test_an_objective_that_is_not_known_is_refused_naming_the_key():
    from h5sweep.cases import SliceCase

    with pytest.raises(ConfigError, match=r"recommend\.objective='mean'"):
        recommend_from_config(filled_section("recommend", {"objective": "mean"}), [SliceCase({"repeats": 3})])


def test_store_copies_widen_the_interval_by_what_a_copy_changes():
    """Reads from three copies, one of which reads 30% slower: the bootstrap that draws copies
    sees it; one that draws selections alone (all reads from one copy) does not."""
    from h5sweep.measure import objective as objectives

    base = pd.DataFrame(
        reads("contiguous", "none", {"slice": 1, "spectra": 1})
        + reads("chunked-16x16x256", "none", {"slice": 0.5, "spectra": 0.5})
    )
    copies = base.assign(store_copy=base["repeat"] % 3)
    slow = (copies["layout_id"] == "chunked-16x16x256") & (copies["store_copy"] == 2)
    copies.loc[slow, "seconds"] *= 1.3
    widths = {}
    for name, frame in {"copies": copies, "one copy": copies.assign(store_copy=0)}.items():
        table = objectives.costs(
            objectives.Reads.of(frame, ["slice", "spectra"], objectives.STORE_KEYS),
            {"slice": 1, "spectra": 1},
            0,
            np.random.default_rng(1),
        )
        widths[name] = table.loc[1, "mix_ratio_ci_high"] - table.loc[1, "mix_ratio_ci_low"]
    assert widths["copies"] > 1.5 * widths["one copy"]


def test_a_resampling_of_copies_takes_each_drawn_copys_selections_and_keeps_the_passs_length():
    """Each resampling draws copies with replacement, then as many selections of each drawn
    copy as it holds (none of another copy's), in the drawn order; copies read unequally often
    give a pass cut or topped up from the whole to its length."""
    from h5sweep.measure import objective as objectives

    copy = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    reads = objectives.Reads([("s",)], ["slice"], {"slice": np.ones((1, 9))}, {"slice": copy})
    picks = reads.draws(np.random.default_rng(3), samples=500)["slice"]
    assert picks.shape == (500, 9) and picks.min() >= 0 and picks.max() <= 8
    for row in picks:
        drawn = copy[row].reshape(3, 3)  # three copies drawn, three selections each
        assert all(len(set(part)) == 1 for part in drawn), row
    assert {len(set(copy[row])) for row in picks} == {1, 2, 3}  # with replacement: repeats happen
    uneven = np.array([0, 0, 0, 0, 1, 2])
    reads = objectives.Reads([("s",)], ["slice"], {"slice": np.ones((1, 6))}, {"slice": uneven})
    picks = reads.draws(np.random.default_rng(4), samples=400)["slice"]
    assert picks.shape == (400, 6) and picks.max() <= 5
    # a pass that drew copy 0 first begins with four of its selections
    starts = picks[np.isin(picks[:, 0], np.flatnonzero(uneven == 0))]
    assert len(starts) and (uneven[starts[:, :4]] == 0).all()


def test_a_sweep_of_a_case_of_its_own_only_opens_on_that_cases_verdict():
    section = "## Parallel passes (cases.parallel)\n\n- disk, read, P = 2: ...\n"
    empty = rank_layouts(MEASURED.iloc[0:0], SUMMARY, settings())
    text = markdown(empty, settings(), sections=section)
    assert "nothing to rank" not in text and text.startswith("# Recommendation\n\n## Parallel passes")
    assert "nothing to rank" in markdown(empty, settings())


def test_bandwidths_read_in_their_own_unit():
    from h5sweep.cases.parallel.verdict import _rate

    assert [_rate(v) for v in (2.54e9, 900e6, 1.2e12, 5e3)] == ["2.54 GB/s", "900 MB/s", "1.2 TB/s", "5 kB/s"]


def test_the_transposed_store_of_a_named_shape_says_its_order():
    from h5sweep.analyze.wording import label

    row = {"layout_name": "image", "chunk_shape": "16x16x8", "compression": "none"}
    names = [label({**row, "layout_id": i}) for i in ("chunked-16x16x8", "chunked-zxy-16x16x8")]
    assert names == ["image (16x16x8)", "image (16x16x8) zxy"]


def test_the_backends_figure_names_the_backends_it_compares(monkeypatch):
    from h5sweep.report import stores

    titles = []
    monkeypatch.setattr(stores, "_save", lambda fig, out: titles.append(fig._suptitle.get_text()))
    row = {
        "filesystem": "disk",
        "case": "slice",
        "chunk_shape": "",
        "layout_id": "contiguous",
        "layout_name": "",
        "compression": "none",
        "reader": "numpy",
        "cache_state": "cold",
        "ratio_to_hdf5": 0.9,
        "ratio_to_hdf5_ci_low": 0.8,
        "ratio_to_hdf5_ci_high": 1.0,
    }
    stores.plot_backends(pd.DataFrame([{**row, "backend": "raw"}]), "disk", "unused.png")
    assert titles[0].startswith("raw binary against HDF5 on disk")
    assert "Zarr" not in titles[0]


def test_a_filesystem_whose_intervals_missed_on_the_reference_machine_is_named_with_its_coverage(monkeypatch):
    from h5sweep.analyze import calibration

    assert calibration.caveat("tmpfs", {"tmpfs": (0.85, 0.97)}) is None
    said = calibration.caveat("tmpfs", {"tmpfs": (0.65, 0.90)})
    assert "65% of one run's paired ratios" in said and "90% of the two runs' intervals" in said
    assert calibration.caveat("ext4", {"tmpfs": (0.65, 0.90)}) is None  # not measured: nothing said
    monkeypatch.setattr(calibration, "MEASURED", {"ext4": (0.5, 0.8)})
    assert "Intervals on ext4 are narrower than they claim" in markdown(
        rank_layouts(MEASURED, SUMMARY, settings()), settings()
    )


@pytest.mark.serial
def test_on_real_stores_each_chunk_cache_is_ranked_and_the_verdict_names_the_one_to_set(tmp_path):
    """A 4-D radiance-like array (scans, footprints, fields of view, channels) in gzip-6 chunks
    of 4 scans (1.8 MB, more than HDF5's default 1 MiB cache), spectra read one after another
    from an open file, with a 1 MiB and a 4 MiB cache: both settings of each store are ranked,
    the chunked store through the large cache first, and the verdict says how to set it."""
    from h5sweep.backends import chunk_cache
    from h5sweep.backends.hdf5 import BACKEND as HDF5
    from h5sweep.backends.hdf5 import write_file
    from h5sweep.cases import read_cases_from_config
    from h5sweep.measure.engine import ReadPlan, StoreUnderTest, run_reads
    from h5sweep.storage import columns as C
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.datasources import FieldSource
    from h5sweep.storage.layouts import Layout

    shape = (8, 6, 9, 2048)
    source = FieldSource(shape, np.float32, seed=2)
    data = source.materialize()
    caches = [chunk_cache.ChunkCache(2**20, 521), chunk_cache.ChunkCache(4 * 2**20, 521)]
    stores, names = [], []
    for name, layout, codec in (
        ("contiguous", Layout(None), "none"),
        ("chunked-4x6x9x2048", Layout((4, 6, 9, 2048)), "gzip-6"),
    ):
        path = str(tmp_path / f"{name}.h5")
        write_file(path, data, layout, parse_compression(codec))
        stores.append(StoreUnderTest(HDF5, path, layout, source, read_options=caches))
        names.append((name, layout, codec))
    cases = read_cases_from_config(
        {"boxes": [{"name": "spectrum", "size": [1, 1, 1, 2048], "repeats": 24, "cold": "first"}]}, shape
    )
    run_reads(stores, ReadPlan(cases, shape, 0, policies=("sweep",)))
    rows = [
        {**row, C.FILESYSTEM: "disk", C.FS_TYPE: "ext4", C.BACKEND: "hdf5", C.LAYOUT_NAME: ""}
        | {C.LAYOUT_ID: name, C.CHUNK_SHAPE: layout.chunk_label, C.COMPRESSION: codec}
        for (name, layout, codec), store in zip(names, stores, strict=True)
        for row in store.rows
    ]
    measured = pd.DataFrame(rows)
    # counted evidence of the thrash: through the small cache every sustained read decodes the
    # chunk again (its library reads are the chunk's stored bytes), through the large one none
    sustained = measured[(measured[C.READS_SINCE_OPEN] > 0) & (measured[C.LAYOUT_ID] != "contiguous")]
    by_cache = sustained.groupby(C.READ_OPTION)[C.LIBRARY_READ_BYTES].median()
    assert by_cache["cache 1 MiB/521/0.75"] > 100_000 and by_cache["cache 4 MiB/521/0.75"] == 0
    # a file limit only the compressed store meets: contiguous (4 MiB as fast as the chunks
    # through 4 MiB, within noise) is listed but not chosen, so the choice is the chunked store's
    chosen = settings(statistic="sustained", max_file_ratio=0.95, weights={"spectrum": 1.0})
    chosen |= {"read_cases": ["spectrum"], "policy": "sweep"}
    summary = summary_of({("contiguous", "none"): (1000, 1.0), ("chunked-4x6x9x2048", "gzip-6"): (900, 1.0)})
    table = rank_layouts(measured, summary, chosen)
    assert len(table) == 4 and set(table[C.READ_OPTION]) == {"cache 1 MiB/521/0.75", "cache 4 MiB/521/0.75"}
    pick = table[table[C.RECOMMENDED]].iloc[0]
    assert (pick[C.LAYOUT_ID], pick[C.READ_OPTION]) == ("chunked-4x6x9x2048", "cache 4 MiB/521/0.75")
    thrashing = table[(table[C.LAYOUT_ID] == pick[C.LAYOUT_ID]) & (table[C.READ_OPTION_INDEX] == 0)].iloc[0]
    assert thrashing[TO_BEST_CI_LOW] > 1  # the same store through the default cache: surely slower
    text = markdown(table, chosen)
    assert "Choose chunked-4x6x9x2048 with gzip-6, read with cache 4 MiB/521/0.75" in text
    assert "rdcc_nbytes=4194304, rdcc_nslots=521" in text
    assert "With cache 1 MiB/521/0.75 the same store scores" in text
