"""The decision's page (index.html, h5sweep.report.interactive): self-contained, the sheet
first, every store in the charts (the raced-out ones at their bound) with what hovering
shows, and menus for filesystem, codec and read option."""

import json
import re

from test_decision import decision_settings, ranked, summary

from h5sweep.analyze.decision import sheet
from h5sweep.report import interactive


def _spec(page: str) -> dict:
    found = re.search(r'vegaEmbed\("#decision-charts", (\{.*\}), \{renderer', page, flags=re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_page_holds_the_sheet_then_every_store_and_needs_nothing_from_outside():
    table = ranked(objective="time")
    slow = table.index[table["layout_id"] == "chunked-4x4x256"]
    table.loc[slow, ["raced_out_round", "raced_out_at_least"]] = [3, 4.0]
    table.loc[slow, ["mix_seconds", "mix_seconds_ci_low", "mix_seconds_ci_high", "score"]] = float("nan")
    the_sheet = sheet(table, summary(), decision_settings())
    page = interactive.page(the_sheet, table, "time")
    # nothing fetched: no script, style or image from a URL
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?(https?:)?//""", page)
    assert (
        page.index("<h1>Decision: demo</h1>")
        < page.index("<strong>Choose</strong>")
        < page.index('<div id="decision-charts">')
    )
    assert "window.vegaEmbed" in page  # the library, inline
    spec = _spec(page)
    rows = spec["data"]["values"]
    assert len(rows) == len(table) and {r["store"] for r in rows} >= {
        "HDF5 contiguous",
        "HDF5 chunked-4x4x256 with gzip-4",
    }
    [raced] = [r for r in rows if r["status"] == "raced out"]
    best_ms = table["mix_seconds"].min() * 1e3
    assert raced["mix_ms"] == best_ms * 4.0 and raced["low_ms"] is None
    assert raced["mix_time"] == "raced out at round 3: at least 4x the best"
    chosen = [r for r in rows if r["status"] == "recommended"]
    assert len(chosen) == 1 and "95% interval" in chosen[0]["mix_time"] and chosen[0]["mix_time"].endswith("ms)")
    assert [p["name"] for p in spec["params"]] == ["fs", "codec", "option"]
    assert sorted(spec["params"][1]["bind"]["options"][1:]) == ["gzip", "none"]
    hovered = {t["field"] for t in spec["vconcat"][0]["spec"]["layer"][2]["encoding"]["tooltip"]}
    assert {"store", "mix_time", "file_size", "write_time", "case_times"} <= hovered


def test_a_sweep_with_nothing_ranked_gets_the_sheet_without_charts():
    empty = ranked().iloc[0:0]
    page = interactive.page(sheet(empty, summary(), decision_settings()), empty, "time")
    assert "nothing to decide" in page and "vegaEmbed" not in page


def test_the_library_is_made_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = interactive.vega_bundle()
    [kept] = (tmp_path / "h5sweep").glob("vega-embed-*.js")
    kept.write_text(first + "\n// kept")
    assert interactive.vega_bundle().endswith("// kept")  # read back, not made again
