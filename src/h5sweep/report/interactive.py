"""``results/<sweep>/index.html``: the decision on one page that opens offline from the file
alone: the decision sheet (with the code that writes and reads the choice); weights of the
read mix to try, each change ranking the stores again in the page as ``h5sweep whatif`` does
(:mod:`h5sweep.report.rerank`); the read mix's time of every store, a panel per filesystem
with the reference store's line, the recommended, tied, ranked and raced-out stores drawn
apart, and the trade-offs (file size, write time) as Vega-Lite charts. Hovering a mark names
the store, its interval, its time per case and what it costs; menus filter by filesystem,
codec and read option. Links lead to the sheet, the findings and the figures; the page ends
with where, when and with what the sweep measured.

The charts are Vega-Lite specifications rendered in the browser by Vega-Embed, whose
JavaScript (with Vega and Vega-Lite) is written into the page: vl-convert's bundle, kept in
the user's cache (``~/.cache/h5sweep``) after the first page, since making it takes seconds."""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path

import pandas as pd

from h5sweep.analyze.wording import label, several_options
from h5sweep.kit.figcheck import LOG_SPAN  # the figures' rule: a wider span is logarithmic
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import duration, duration_range, factor, size

VIEW_ID = "decision-charts"


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "h5sweep"


def vega_bundle() -> str:
    """Vega-Embed, Vega-Lite and Vega as one script (they become ``window.vegaEmbed`` ...),
    made by vl-convert once per version of it and kept in :func:`cache_dir`."""
    import vl_convert

    path = cache_dir() / f"vega-embed-vl-convert-{vl_convert.__version__}.js"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    bundle = vl_convert.javascript_bundle()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(bundle, encoding="utf-8")
    partial.replace(path)  # whole or not at all, for pages written side by side
    return bundle


def _status(row) -> str:
    if pd.notna(row.get(C.RACED_OUT_ROUND)):
        return "raced out"
    if bool(row[C.RECOMMENDED]):
        return "recommended"
    if bool(row[C.TIED_WITH_BEST]):
        return "tied with the best"
    return "ranked"


def _codec_family(compression: str) -> str:
    return re.sub(r"-[^+]*$", "", compression) if compression != "none" else "none"


def chart_rows(table: pd.DataFrame) -> list[dict]:
    """One row per store and filesystem, as the charts and their tooltips show it. A store
    raced out is drawn at the bound it was known to be behind by (at least x times the best)."""
    rows = []
    for fs, group in table.groupby(C.FILESYSTEM, sort=False):
        several = several_options(group)
        best_s = group[objectives.MIX_SECONDS].min()
        best_score = group[C.SCORE].min()
        for _, r in group.iterrows():
            raced = pd.notna(r.get(C.RACED_OUT_ROUND))
            at_least = float(r[C.RACED_OUT_AT_LEAST]) if raced else math.nan
            mix_s = best_s * at_least if raced else float(r[objectives.MIX_SECONDS])
            name = label(r, with_backend=True, with_option=r[C.BACKEND] in several)
            if raced:
                time_text = f"raced out at round {int(r[C.RACED_OUT_ROUND])}: at least {factor(at_least)} the best"
            else:
                time_text = f"{duration(r[objectives.MIX_SECONDS])} (95% interval " + (
                    f"{duration_range(r[objectives.MIX_SECONDS_CI_LOW], r[objectives.MIX_SECONDS_CI_HIGH])})"
                    if pd.notna(r[objectives.MIX_SECONDS_CI_LOW])
                    else "none: one measurement)"
                )
            rows.append(
                {
                    "store": name,
                    C.FILESYSTEM: fs,
                    "codec": _codec_family(str(r[C.COMPRESSION])),
                    "read_option": str(r[C.READ_OPTION] or "default"),
                    "status": _status(r),
                    "row": f"{name} on {fs}",
                    "mix_ms": _finite(mix_s * 1e3),
                    "low_ms": None if raced else _finite(r[objectives.MIX_SECONDS_CI_LOW] * 1e3),
                    "high_ms": None if raced else _finite(r[objectives.MIX_SECONDS_CI_HIGH] * 1e3),
                    C.SCORE: _finite(best_score * at_least if raced else r[C.SCORE]),
                    "file_ratio": _finite(r[C.FILE_RATIO]),
                    "write_s": _finite(r[C.WRITE_MEDIAN_S]),
                    "mix_time": time_text,
                    "file_size": f"{size(r[C.FILE_BYTES])} ({factor(r[C.FILE_RATIO])} the raw data)"
                    if pd.notna(r[C.FILE_BYTES])
                    else "not measured",
                    "write_time": duration(r[C.WRITE_MEDIAN_S]) if pd.notna(r[C.WRITE_MEDIAN_S]) else "not measured",
                    "reference": bool(r.get(C.IS_REFERENCE, False)),
                    "case_times": _case_times(r, raced),
                }
            )
    return rows


def _case_times(row, raced: bool) -> str:
    """A store's mean time per read of each case of the mix (the ranking's)."""
    if raced:
        return "raced out: its partial reads are not ranked"
    times = [
        f"{column.removeprefix('seconds_')} {duration(row[column])}"
        for column in row.index
        if column.startswith("seconds_") and pd.notna(row[column])
    ]
    return ", ".join(times) or "not measured"


def _finite(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _scale(values) -> dict:
    shown = [v for v in values if v is not None and v > 0]
    wide = len(shown) > 1 and max(shown) / min(shown) > LOG_SPAN
    return {"type": "log"} if wide else {"zero": False}


def _select(name: str, words: str, values: list[str]) -> dict:
    """A menu filtering the charts by ``name`` (every value, or one)."""
    return {
        "name": name,
        "value": None,
        "bind": {"input": "select", "options": [None, *values], "labels": ["every", *values], "name": f"{words} "},
    }


TOOLTIP = [
    {"field": "store", "title": "store"},
    {"field": C.FILESYSTEM, "title": C.FILESYSTEM},
    {"field": "status", "title": "status"},
    {"field": "mix_time", "title": "read mix, a unit of work"},
    {"field": "file_size", "title": "file size"},
    {"field": "write_time", "title": "write (median)"},
    {"field": "read_option", "title": "read option"},
    {"field": "case_times", "title": "mean time per read"},
]
CODEC = {"field": "codec", "type": "nominal", "title": "codec"}
STATUS_ORDER = ["recommended", "tied with the best", "ranked", "raced out"]
STATUS_SHAPES = ["diamond", "square", "circle", "triangle-right"]
STATUS_OPACITY = [1.0, 0.9, 0.6, 0.35]


def spec(rows: list[dict], objective: str) -> dict:
    """The Vega-Lite specification: the read mix's time per store (its interval as a rule),
    above the score against file size and against write time; three menus filter them all."""
    shape = {
        "field": "status",
        "type": "nominal",
        "scale": {"domain": STATUS_ORDER, "range": STATUS_SHAPES},
        "title": "status",
    }
    y = {"field": "row", "type": "nominal", "sort": {"field": "mix_ms", "order": "ascending"}, "title": None}
    x_mix = {
        "field": "mix_ms",
        "type": "quantitative",
        "scale": _scale([r["mix_ms"] for r in rows] + [r["low_ms"] for r in rows] + [r["high_ms"] for r in rows]),
        "title": "time of one unit of work [ms] (95% interval; raced out: at least)",
    }
    opacity = {"field": "status", "type": "nominal", "scale": {"domain": STATUS_ORDER, "range": STATUS_OPACITY}}
    mix = {
        "title": "The read mix's time per store, a panel per filesystem (dashed: the reference store)",
        "facet": {"row": {"field": C.FILESYSTEM, "type": "nominal", "title": None}},
        "spec": {
            "width": 520,
            "height": {"step": 18},
            "layer": [
                # the reference store's line under the marks (a mark on it stays the one hovered)
                {
                    "transform": [{"filter": "datum.reference"}],
                    "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#000"},
                    "encoding": {"x": {**x_mix, "field": "mix_ms"}},
                },
                {
                    "mark": {"type": "rule", "color": "#555"},
                    "encoding": {"y": y, "x": {**x_mix, "field": "low_ms"}, "x2": {"field": "high_ms"}},
                },
                {
                    "mark": {"type": "point", "filled": True, "size": 80},
                    "encoding": {
                        "y": y,
                        "x": x_mix,
                        "shape": shape,
                        "opacity": opacity,
                        "color": CODEC,
                        "tooltip": TOOLTIP,
                    },
                },
            ],
        },
        "resolve": {"scale": {"y": "independent"}},
    }

    def tradeoff(field: str, words: str) -> dict:
        return {
            "title": f"Score ({objective}, lower is better) against {words}",
            "width": 300,
            "height": 260,
            "mark": {"type": "point", "filled": True, "size": 70},
            "encoding": {
                "x": {"field": field, "type": "quantitative", "scale": _scale(r[field] for r in rows), "title": words},
                "y": {
                    "field": C.SCORE,
                    "type": "quantitative",
                    "scale": _scale(r[C.SCORE] for r in rows),
                    "title": C.SCORE,
                },
                "color": CODEC,
                "shape": shape,
                "tooltip": TOOLTIP,
            },
        }

    def values(key: str) -> list[str]:
        return list(dict.fromkeys(r[key] for r in rows))

    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {"values": rows},
        "params": [
            _select("fs", C.FILESYSTEM, values(C.FILESYSTEM)),
            _select("codec", "codec", values("codec")),
            _select("option", "read option", values("read_option")),
        ],
        "transform": [
            {
                "filter": f"(fs === null || datum.{C.FILESYSTEM} === fs) && (codec === null || datum.codec === codec)"
                " && (option === null || datum.read_option === option)"
            }
        ],
        "vconcat": [
            mix,
            {"hconcat": [tradeoff("file_ratio", "file size / raw data"), tradeoff("write_s", "write time [s]")]},
        ],
        "resolve": {"scale": {"color": "shared", "shape": "shared"}},
        "config": {"font": "sans-serif", "axis": {"labelLimit": 420}},
    }


def _inline(text: str) -> str:
    """A sheet's line in HTML: escaped, ``code`` and **bold** as such."""
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def sheet_html(sheet) -> str:
    """The decision sheet (:class:`h5sweep.analyze.decision.Sheet`) as HTML."""
    parts = [f"<h1>{_inline(sheet.title)}</h1>", *[f"<p>{_inline(p)}</p>" for p in sheet.lead]]
    for section in sheet.sections:
        parts.append(f"<h2>{_inline(section.heading)}</h2>\n<ul>")
        parts += [
            f"<li><strong>{_inline(name)}</strong> {_inline(text)}</li>" if name else f"<li>{_inline(text)}</li>"
            for name, text in section.points
        ]
        parts.append("</ul>")
        for caption, code in getattr(section, "code", []):
            parts.append(f"<p>{_inline(caption)}</p>\n<pre><code>{html.escape(code)}</code></pre>")
    parts += [f'<p class="note">{_inline(n)}</p>' for n in sheet.notes]
    return "\n".join(parts)


STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 1.4rem; }
li { margin: 0.3rem 0; line-height: 1.35; } code { background: #f3f3f3; padding: 0 0.2rem; }
.note { color: #555; font-size: 0.9rem; } .vega-bind { display: inline-block; margin-right: 1rem; }
pre { background: #f3f3f3; padding: 0.5rem; overflow-x: auto; font-size: 0.85rem; }
#whatif input { width: 4rem; margin-right: 1rem; } table { border-collapse: collapse; font-size: 0.85rem; }
td, th { padding: 0.15rem 0.5rem; text-align: left; border-bottom: 1px solid #ddd; }
#decision-charts.vega-embed { display: flex; flex-direction: column; }
#decision-charts .vega-bindings { order: -1; margin-bottom: 0.8rem; }
"""


def _weights_html(table: pd.DataFrame, objective: str, data: dict) -> str:
    """The read mix's weights to try, and where the page writes each filesystem's ranking."""
    from h5sweep.analyze.ranking import mix_in
    from h5sweep.measure.objective import objective_of
    from h5sweep.report.rerank import PAGE_SAMPLES, rerank_js

    cases = list(dict.fromkeys(c for fs in data.values() for c in fs["cases"]))
    if not cases:
        return ""
    if not objective_of(objective).is_mix_time:  # the page's own ranking is by the mix's time
        return (
            "<h2>Another read mix</h2>\n<p>This sweep ranks by the objective "
            f"<code>{html.escape(objective)}</code>; the page ranks again by time only: use "
            "<code>h5sweep whatif</code> for another mix.</p>"
        )
    weights = mix_in(table) if not table.empty else {}
    inputs = "".join(
        f'<label>{html.escape(c)} <input type="number" min="0" step="any" name="{html.escape(c)}" '
        f'value="{weights.get(c, 0):g}"></label>'
        for c in cases
    )
    panels = "".join(f'<div id="whatif-{html.escape(fs)}" class="whatif-result"></div>' for fs in data)
    shipped = json.dumps(data, allow_nan=False).replace("</", "<\\/")
    return (
        "<h2>Another read mix</h2>\n<p>Reads of each case per unit of work. Each change ranks the stores "
        "measured to the end again, as <code>h5sweep whatif</code> does, by the time of the mix, from the "
        f"reads already made ({PAGE_SAMPLES:,} paired resamplings, as many as <code>h5sweep whatif</code> draws; "
        "its draws depend on the mix, so a store at the edge of a tie may fall on the other side there). "
        "Hover a row for its time per "
        f'case.</p>\n<form id="whatif">{inputs}</form>\n{panels}\n'
        f"<script>const RERANK = {shipped};\n{rerank_js()}</script>"
    )


LINKS = (
    ("decision.md", "the decision sheet"),
    ("recommendation.md", "the full ranking"),
    ("findings.md", "the studies' findings, checked"),
    ("summary.csv", "every store's statistics"),
    ("plots/", "the figures"),
)


def _links_html() -> str:
    return "<p>" + " &middot; ".join(f'<a href="{href}">{words}</a>' for href, words in LINKS) + "</p>"


def _provenance_html(lines: list[tuple[str, str]]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li><strong>{html.escape(k)}:</strong> {html.escape(v)}</li>" for k, v in lines)
    return f'<h2>Where and with what it was measured</h2>\n<ul class="provenance">{items}</ul>'


def page(sheet, table: pd.DataFrame, objective: str, extras: dict | None = None) -> str:
    """The whole page: the sheet, links, another mix to try (``extras["rerank"]``), then the
    charts (when anything was ranked), with the scripts that draw them inline, and the
    provenance (``extras["provenance"]``)."""
    extras = extras or {}
    rows = chart_rows(table) if not table.empty else []
    charts = ""
    if rows:
        view = json.dumps(spec(rows, objective), allow_nan=False).replace("</", "<\\/")
        charts = (
            f'<h2>Every store</h2>\n<div id="{VIEW_ID}"></div>\n'
            f"<script>{vega_bundle()}</script>\n"
            f'<script>vegaEmbed("#{VIEW_ID}", {view}, {{renderer: "svg", actions: false}})'
            ".catch(function (error) { console.error(error); });</script>"
        )
    whatif = _weights_html(table, objective, extras["rerank"]) if extras.get("rerank") and rows else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(sheet.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"{sheet_html(sheet)}\n{_links_html()}\n{whatif}\n{charts}\n"
        f"{_provenance_html(extras.get('provenance') or [])}\n</body>\n</html>\n"
    )


def write_page(
    sheet,
    table: pd.DataFrame,
    objective: str,
    out: str,
    measurements: str | None = None,
    settings: dict | None = None,
) -> None:
    """``index.html``; with the sweep's ``measurements`` (a path) and the ranking's
    ``settings``, the page ranks again for other mixes and says where it was measured."""
    extras = {}
    if measurements and settings:
        from h5sweep.measure.records import read_tables
        from h5sweep.report.rerank import provenance, rerank_data

        frame = read_tables([measurements])
        extras = {"rerank": rerank_data(frame, table, settings), "provenance": provenance(frame, settings)}
    Path(out).write_text(page(sheet, table, objective, extras), encoding="utf-8")
