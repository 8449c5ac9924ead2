"""The decision sheet (decision.md): the choice per filesystem with how to read it, what it
costs against the smallest store and the fastest writer, the best compressed store, the
evidence, and the size the sweep ran at against the size the user stores."""

import matplotlib.text
import pandas as pd
import pytest
from test_recommend import MEASURED, settings, summary_of

from h5sweep.analyze.decision import sheet
from h5sweep.analyze.ranking import rank_layouts
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.sizes import count, duration, duration_range, factor, parse_size, rate, size
from h5sweep.sweep.config import filled_section
from h5sweep.sweep.model import recommend_from_config

FILES = {
    ("contiguous", "none"): (1000, 1.0),
    ("chunked-4x4x256", "gzip-4"): (400, 3.0),
    ("chunked-16x16x256", "none"): (1010, 1.1),
    ("chunked-16x16x512", "gzip-4"): (350, 2.5),
}


def summary(writes=2, spread=0.01, cache_state="cold", files=None):
    """The summary the sheet reads: each store's write (``writes`` timed, median interval of
    ``spread`` either side) and its reads' cache state and selected bytes."""
    table = summary_of(files or FILES)
    table = pd.concat([table, table[table["case"] == "slice"].assign(case="spectra")], ignore_index=True)
    table["repeats"] = [writes if case == "write" else 20 for case in table["case"]]
    table["median_ci_low_s"] = table["median_s"] - spread
    table["median_ci_high_s"] = table["median_s"] + spread
    table["cache_state"] = ["" if case == "write" else cache_state for case in table["case"]]
    table["bytes_selected"] = 500_000
    return table


def decision_settings(**recommend):
    out = settings(**recommend)
    out["recommend"].setdefault("target_bytes", None)
    out["sweep"] = "demo"
    out["dataset"] = {"shape": [10, 10, 10], "dtype": "uint8", "raw_bytes": 1000}
    return out


def ranked(files=None, **recommend):
    return rank_layouts(MEASURED, summary(files=files), decision_settings(**recommend))


def test_sizes_and_times_read_in_their_unit():
    assert parse_size("recommend.target_size", "12 TB") == 12 * 10**12
    assert parse_size("recommend.target_size", "800 GiB") == 800 * 2**30
    assert parse_size("recommend.target_size", 5e9) == 5 * 10**9
    assert parse_size("recommend.target_size", None) is None
    for bad in ("12 parsecs", "-3 GB", "a lot", True, 0):
        with pytest.raises(ConfigError) as err:
            parse_size("recommend.target_size", bad)
        assert err.value.key == "recommend.target_size"
    assert [size(n) for n in (999, 2.4e6, 1.4e13)] == ["999 B", "2.4 MB", "14 TB"]
    assert [duration(s) for s in (4e-6, 0.00354, 2.5, 600)] == ["4 µs", "3.54 ms", "2.5 s", "10 min"]
    assert duration_range(0.00351, 0.00358) == "3.51-3.58 ms"
    assert [factor(x) for x in (0.001, 1.149, 5.83e6)] == ["<0.01x", "1.15x", "5,830,000x"]
    assert rate(52e6, 1.0) == "52 MB/s" and rate(3e9, 1.0) == "3 GB/s" and rate(1e6, 0) == ""
    assert [count(x) for x in (7.0, 27.8, 10009.0, float("nan"))] == ["7", "27.8", "10,009", ""]


def test_a_target_size_that_is_not_a_size_is_refused_naming_the_key():
    assert recommend_from_config(filled_section("recommend", {"target_size": "2 TiB"}), [])["target_bytes"] == 2 * 2**40
    with pytest.raises(ConfigError) as err:
        recommend_from_config(filled_section("recommend", {"target_size": "2 tons"}), [])
    assert err.value.key == "recommend.target_size" and "unknown unit" in str(err.value)


def test_the_sheet_says_the_choice_its_costs_and_the_best_compressed_store_at_the_users_size():
    table = ranked(objective="geometric", target_bytes=10**13)
    the_sheet = sheet(table, summary(), decision_settings(objective="geometric", target_bytes=10**13))
    [section] = the_sheet.sections
    points = dict(section.points)
    pick = table[table["recommended"]].iloc[0]
    assert pick["layout_id"] == "chunked-16x16x512"  # tied with the best, and the smallest file
    assert points["Choose"].startswith("HDF5 chunked-16x16x512 with gzip-4: ")
    assert "per unit of work (95% interval " in points["Choose"] and "MB/s of selected data" in points["Choose"]
    # tied with the best: named with its score over the best's and that interval
    assert "HDF5 chunked-16x16x256 (" in points["Tied:"] and "the best's score, 95% interval" in points["Tied:"]
    # the choice is the smallest store: its space at the user's 10 TB (0.35 of raw)
    assert points["Costs:"].startswith("space: 3.5 TB for 10 TB of data, the smallest store's size")
    # the fastest writer is contiguous (1.0 s) against the choice's 2.5 s; two writes each, intervals
    # apart, are too few to say surely: no ratio headlined
    assert (
        "write: 2.5 s (2 writes of it); the fastest measured, HDF5 contiguous: 1 s (2 writes); too few"
        in points["Costs:"]
    )
    assert "surely" not in points["Costs:"] and "2.5x" not in points["Costs:"]
    assert points["Best compressed:"].startswith("the choice is compressed (gzip-4, 0.35x the raw data)")
    assert points["Evidence:"] == "4 stores ranked: each read slice 20, spectra 20 times. 2 timed writes for 4 stores."
    assert points["Measured at"] == "10 x 10 x 10 uint8 (1 kB); you store 10 TB (10,000,000,000x as much)."
    text = the_sheet.markdown()
    assert text.startswith("# Decision: demo\n") and "(recommend.objective: geometric)" in text
    assert "- **Choose** HDF5 chunked-16x16x512" in text
    rst = the_sheet.restructured()
    assert rst.startswith("Decision: demo\n==============\n") and "disk (ext4)\n-----------" in rst


def test_a_write_difference_is_called_sure_only_with_six_writes_each_and_intervals_apart():
    table = ranked(objective="geometric")
    settings = decision_settings(objective="geometric")
    for writes in (1, 3, 5):
        points = dict(sheet(table, summary(writes=writes), settings).sections[0].points)
        assert "too few writes to tell them apart (a sure difference takes 6 each)" in points["Costs:"]
        assert "surely" not in points["Costs:"] and "2.5x" not in points["Costs:"]  # no ratio headlined
        assert points["Evidence:"].endswith(f"{writes} timed write{'s' if writes > 1 else ''} for 4 stores.")
    points = dict(sheet(table, summary(writes=6), settings).sections[0].points)
    assert (
        "write: 2.5 s, 2.5x the fastest writer's (HDF5 contiguous: 1 s; surely slower: 6 and 6 writes"
        in points["Costs:"]
    )
    overlapping = dict(sheet(table, summary(writes=6, spread=1.0), settings).sections[0].points)
    assert "the median intervals overlap: not a sure difference" in overlapping["Costs:"]
    assert "2.5x" not in overlapping["Costs:"]


def test_an_uncompressed_choice_names_the_best_compressed_store_and_its_cost_in_reads():
    files = {**FILES, ("chunked-16x16x512", "gzip-4"): (1200, 2.5)}  # tied, but larger than 16x16x256
    table = ranked(files, objective="geometric")
    points = dict(sheet(table, summary(files=files), decision_settings(objective="geometric")).sections[0].points)
    pick = table[table["recommended"]].iloc[0]
    assert (pick["layout_id"], pick["compression"]) == ("chunked-16x16x256", "none")
    best = table[(table["compression"] != "none") & table["meets_limits"]].iloc[0]
    assert best["layout_id"] == "chunked-16x16x512"
    said = points["Best compressed:"]
    assert said.startswith(f"HDF5 chunked-16x16x512 with gzip-4 (rank {int(best['rank'])}): ")
    assert f"(1.2x the raw data), {factor(best['to_best'])} " in said and "95% interval" in said


def test_compressed_stores_raced_out_are_said_so_with_the_closest_one():
    table = ranked(objective="geometric")
    gzip = table["compression"] != "none"
    table.loc[gzip, "raced_out_round"] = 4
    table.loc[gzip, "raced_out_at_least"] = [1.6, 1.3][: int(gzip.sum())]
    table.loc[gzip, ["meets_limits", "recommended", "tied_with_best"]] = False
    table.loc[table.index[~gzip][0], "recommended"] = True
    points = dict(sheet(table, summary(), decision_settings(objective="geometric")).sections[0].points)
    closest = table[gzip].sort_values("raced_out_at_least").iloc[0]
    assert points["Best compressed:"] == (
        f"HDF5 {closest['layout_id']} with gzip-4: raced out at round 4, at least 1.3x slower than the best "
        "(the closest of 2 compressed stores raced out)."
    )
    assert points["Evidence:"].startswith("2 stores ranked: each read slice 20, spectra 20 times. 2 stores raced out (")
    assert "(from round 4, each at least 1.3x slower than the best, a one-sided 95% bound)" in points["Evidence:"]


def test_reads_from_memory_are_flagged_where_the_users_array_would_not_fit():
    table = ranked(objective="geometric", target_bytes=10**13)
    cached = summary(cache_state="warm")
    at = dict(sheet(table, cached, decision_settings(target_bytes=10**13), memory_bytes=2**34).sections[0].points)
    assert "100% of its reads came from memory" in at["Measured at"] and "would not" in at["Measured at"]
    small = dict(sheet(table, cached, decision_settings(target_bytes=None), memory_bytes=2**34).sections[0].points)
    assert "100% of its reads came from memory" in small["Measured at"] and "would not" not in small["Measured at"]
    cold = dict(sheet(table, summary(), decision_settings(target_bytes=10**13), memory_bytes=2**34).sections[0].points)
    assert "came from memory" not in cold["Measured at"]


def test_a_sweep_with_nothing_ranked_says_so():
    text = sheet(pd.DataFrame(), summary(), decision_settings()).markdown()
    assert "nothing to decide" in text


def _drawn(monkeypatch, draw, *args):
    """The figure a plot function draws, kept open (its save is replaced), laid out as saved."""
    import matplotlib.pyplot as plt

    from h5sweep.report import decision as figures

    kept = []
    monkeypatch.setattr(figures, "_save", lambda fig, out: (fig.tight_layout(), kept.append(fig)))
    draw(*args, "unused.png")
    [fig] = kept
    fig.canvas.draw()
    yield fig
    plt.close(fig)


def _outside(fig) -> list[str]:
    """What of a drawn figure reaches outside it: its drawn artists' tight box (inches, with
    0.01 in of slack) against the figure's; empty when all is inside."""
    inner, outer = fig.get_tightbbox(fig.canvas.get_renderer()), fig.bbox_inches
    sides = {
        "left": inner.x0 < outer.x0 - 0.01,
        "bottom": inner.y0 < outer.y0 - 0.01,
        "right": inner.x1 > outer.x1 + 0.01,
        "top": inner.y1 > outer.y1 + 0.01,
    }
    return [side for side, beyond in sides.items() if beyond]


def test_the_mix_figure_shows_raced_out_stores_by_how_far_behind_and_spans_on_a_log_axis(monkeypatch):
    from h5sweep.report.decision import plot_mix

    table = ranked(objective="geometric")
    slow = table.index[table["layout_id"] == "chunked-4x4x256"]
    table.loc[slow, ["raced_out_round", "raced_out_at_least"]] = [4, 30.0]
    table.loc[
        slow, ["mix_seconds", "mix_seconds_ci_low", "mix_seconds_ci_high", "seconds_slice", "seconds_spectra"]
    ] = float("nan")
    for fig in _drawn(monkeypatch, plot_mix, table, "disk"):
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert any(label.endswith("(raced out at round 4, >30x the best)") for label in labels)
        [bound] = [line for line in ax.get_lines() if line.get_label() == "raced out: at least"]
        best_ms = table["mix_seconds"].min() * 1e3
        assert bound.get_xdata()[0] == pytest.approx(30 * best_ms)
        assert ax.get_xscale() == "log"  # 30x between the best and the raced-out bound
        assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"raced out: at least"}
        assert not ax.patches  # no bars stacked on the log axis
        assert _outside(fig) == []
    table.loc[slow, ["raced_out_round", "raced_out_at_least"]] = float("nan")
    table = table.dropna(subset=["mix_seconds"])
    for fig in _drawn(monkeypatch, plot_mix, table, "disk"):
        ax = fig.axes[0]
        assert ax.get_xscale() == "linear"  # the stores within 2x of each other
        assert not [line for line in ax.get_lines() if line.get_label() == "raced out: at least"]


def test_the_mix_figure_draws_each_cases_share_of_a_store_on_a_linear_axis(monkeypatch):
    """The parts of a store's unit of work as shares on their own linear axis: the largest
    part draws the widest segment (stacked on a log axis it would look the smallest)."""
    from h5sweep.report.decision import plot_mix

    table = ranked(objective="time").sort_values("rank")
    table["seconds_slice"] = [0.59, 0.2, 0.5, 0.5][: len(table)]
    table["seconds_spectra"] = [0.41, 0.8, 0.5, 0.5][: len(table)]
    for fig in _drawn(monkeypatch, plot_mix, table, "disk"):
        share = fig.axes[1]
        assert share.get_xscale() == "linear" and share.get_xlim() == (0, 1)
        slices, spectra = (
            [p for p in share.patches if p.get_facecolor() == share.patches[k * len(table)].get_facecolor()]
            for k in range(2)
        )
        top = max(range(len(table)), key=lambda i: slices[i].get_y())  # the first in rank
        assert slices[top].get_width() == pytest.approx(0.59) and spectra[top].get_width() == pytest.approx(0.41)
        assert spectra[top].get_x() == pytest.approx(0.59)
        assert {t.get_text() for t in share.get_legend().get_texts()} == {"slice x 1", "spectra x 1"}


def test_the_tradeoff_figure_shows_every_store_the_raced_out_ones_at_their_bound(monkeypatch):
    from h5sweep.report.decision import plot_tradeoff

    table = ranked(objective="geometric")
    slow = table.index[table["layout_id"] == "chunked-4x4x256"]
    table.loc[slow, ["raced_out_round", "raced_out_at_least"]] = [4, 3.0]
    table.loc[slow, ["score", "score_ci_low", "score_ci_high", "meets_limits"]] = [float("nan")] * 3 + [False]
    for fig in _drawn(monkeypatch, plot_tradeoff, table, "disk"):
        for ax in fig.axes:
            marked = [c for c in ax.collections if c.get_label() == "raced out (at least)"]
            assert len(marked) == 1 and len(marked[0].get_offsets()) == 1
            assert marked[0].get_offsets()[0][1] == pytest.approx(3.0 * table["score"].min())
        assert _outside(fig) == []


def test_every_point_of_the_tradeoff_figure_is_named_or_numbered_in_its_key(monkeypatch):
    from h5sweep.report.decision import plot_tradeoff
    from h5sweep.report.decision import store_name as name_of

    table = ranked(objective="geometric").sort_values("rank")
    for fig in _drawn(monkeypatch, plot_tradeoff, table, "disk"):
        key = [t.get_text() for t in fig.axes[1].texts if "\n" in t.get_text() or t.get_text()[:2].strip().isdigit()]
        [key] = [k for k in key if k.lstrip().startswith("1 ")]
        lines = key.splitlines()
        assert len(lines) == len(table)
        for number, (_, row) in enumerate(table.iterrows(), start=1):
            assert lines[number - 1].split(None, 1) == [str(number), name_of(row)]
        for ax in fig.axes:
            said = {a.get_text() for a in ax.texts if isinstance(a, matplotlib.text.Annotation)}
            for number, (_, row) in enumerate(table.iterrows(), start=1):
                assert str(number) in said or any(name_of(row) in t.replace("\n", " ") for t in said), row["layout_id"]


def with_ratios(table: pd.DataFrame, ratios: dict) -> pd.DataFrame:
    """The summary with each store's paired ratio to contiguous per read case (its interval
    10% either side)."""
    out = table.copy()
    key = list(zip(out["layout_id"], out["compression"], out["case"], strict=True))
    value = [ratios.get(k, 1.0 if k[0] == "contiguous" else float("nan")) for k in key]
    out["ratio_to_contiguous"] = value
    out["ratio_ci_low"] = [v * 0.9 if v != 1.0 else 1.0 for v in value]
    out["ratio_ci_high"] = [v * 1.1 if v != 1.0 else 1.0 for v in value]
    return out


def test_the_sheet_says_what_the_choice_gains_against_the_reference_and_the_case_it_hurts_most():
    from h5sweep.analyze.decision import _gains, _hurts

    table = ranked(objective="time")
    ratios = {("chunked-4x4x256", "gzip-4", "slice"): 0.5, ("chunked-4x4x256", "gzip-4", "spectra"): 2.0}
    ratios |= {
        (layout, "none" if "256" in layout else "gzip-4", case): 0.8
        for layout in ("chunked-16x16x256", "chunked-16x16x512")
        for case in ("slice", "spectra")
    }
    reads = with_ratios(summary(), ratios)
    points = dict(sheet(table, reads, decision_settings(objective="time")).sections[0].points)
    pick = table[table["recommended"]].iloc[0]
    assert pick["layout_id"] != "contiguous"
    # the mix: the choice's time over contiguous's, its interval, and whether it is surely faster
    assert points["Gains:"].startswith(f"{factor(pick['mix_ratio'])} contiguous's time for the mix (")
    assert (
        f"95% interval {pick['mix_ratio_ci_low']:.2f}-{pick['mix_ratio_ci_high']:.2f}x): surely faster."
        in points["Gains:"]
    )
    # no case is slower than contiguous for the choice
    assert points["Hurts:"].startswith("no case: every case reads faster per read than contiguous")
    # a store that reads spectra twice as slow: that case named, surely slower (interval 1.8-2.2)
    slow = table[(table["layout_id"] == "chunked-4x4x256")].iloc[0]
    hurts = _hurts(slow, table, reads)
    assert hurts.startswith("spectra, 2x contiguous's time per read (median ") and "1.80-2.20x, 20 reads" in hurts
    assert hurts.endswith("surely slower.")
    unsure = with_ratios(summary(), {**ratios, ("chunked-4x4x256", "gzip-4", "spectra"): 1.05})
    assert _hurts(slow, table, unsure).endswith("not surely slower: the interval holds 1.")
    reference = table[table["is_reference"]].iloc[0]
    assert _gains(reference, table) == "the choice is the reference store (contiguous) every ratio is to."
    assert _hurts(reference, table, reads) is None


def test_the_sheet_prints_the_code_that_writes_and_reads_the_choice():
    table = ranked(objective="time")
    the_sheet = sheet(table, summary(), decision_settings(objective="time"))
    [section] = the_sheet.sections
    (write_caption, write), (read_caption, read) = section.code
    pick = table[table["recommended"]].iloc[0]
    chunks = tuple(int(n) for n in pick["chunk_shape"].split("x"))
    assert write_caption.startswith("Write it") and f"chunks={chunks}" in write and "create_dataset" in write
    assert read_caption.startswith("Read it as it was measured") and "h5py.File(path, 'r'" in read
    text = the_sheet.markdown()
    assert f"```python\n{write}\n```" in text
    rst = the_sheet.restructured()
    assert ".. code-block:: python" in rst and f"   {write.splitlines()[-1]}" in rst
