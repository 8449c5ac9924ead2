"""``results/<sweep>/index.html``: the decision on one page that opens offline from the file
alone: the decision sheet, then the read mix's time of every store and the trade-offs (file
size, write time) as Vega-Lite charts. Hovering a mark names the store, its interval and what
it costs; menus filter by filesystem, codec and read option.

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
from h5sweep.cases.figcheck import LOG_SPAN  # the figures' rule: a wider span is logarithmic
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
        best_s = group[C.MIX_SECONDS].min()
        best_score = group[C.SCORE].min()
        for _, r in group.iterrows():
            raced = pd.notna(r.get(C.RACED_OUT_ROUND))
            at_least = float(r[C.RACED_OUT_AT_LEAST]) if raced else math.nan
            mix_s = best_s * at_least if raced else float(r[C.MIX_SECONDS])
            name = label(r, with_backend=True, with_option=r[C.BACKEND] in several)
            if raced:
                time_text = f"raced out at round {int(r[C.RACED_OUT_ROUND])}: at least {factor(at_least)} the best"
            else:
                time_text = f"{duration(r[C.MIX_SECONDS])} (95% interval " + (
                    f"{duration_range(r[C.MIX_SECONDS_CI_LOW], r[C.MIX_SECONDS_CI_HIGH])})"
                    if pd.notna(r[C.MIX_SECONDS_CI_LOW])
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
                    "low_ms": None if raced else _finite(r[C.MIX_SECONDS_CI_LOW] * 1e3),
                    "high_ms": None if raced else _finite(r[C.MIX_SECONDS_CI_HIGH] * 1e3),
                    C.SCORE: _finite(best_score * at_least if raced else r[C.SCORE]),
                    "file_ratio": _finite(r[C.FILE_RATIO]),
                    "write_s": _finite(r[C.WRITE_MEDIAN_S]),
                    "mix_time": time_text,
                    "file_size": f"{size(r[C.FILE_BYTES])} ({factor(r[C.FILE_RATIO])} the raw data)"
                    if pd.notna(r[C.FILE_BYTES])
                    else "not measured",
                    "write_time": duration(r[C.WRITE_MEDIAN_S]) if pd.notna(r[C.WRITE_MEDIAN_S]) else "not measured",
                }
            )
    return rows


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
]
CODEC = {"field": "codec", "type": "nominal", "title": "codec"}
STATUS_ORDER = ["recommended", "tied with the best", "ranked", "raced out"]
STATUS_SHAPES = ["diamond", "circle", "circle", "triangle-right"]


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
    mix = {
        "title": "The read mix's time per store",
        "width": 520,
        "height": {"step": 18},
        "layer": [
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
                    "color": CODEC,
                    "tooltip": TOOLTIP,
                },
            },
        ],
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
    parts += [f'<p class="note">{_inline(n)}</p>' for n in sheet.notes]
    return "\n".join(parts)


STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 1.4rem; }
li { margin: 0.3rem 0; line-height: 1.35; } code { background: #f3f3f3; padding: 0 0.2rem; }
.note { color: #555; font-size: 0.9rem; } .vega-bind { display: inline-block; margin-right: 1rem; }
#decision-charts.vega-embed { display: flex; flex-direction: column; }
#decision-charts .vega-bindings { order: -1; margin-bottom: 0.8rem; }
"""


def page(sheet, table: pd.DataFrame, objective: str) -> str:
    """The whole page: the sheet, then the charts (when anything was ranked), with the
    scripts that draw them inline."""
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
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(sheet.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"{sheet_html(sheet)}\n{charts}\n</body>\n</html>\n"
    )


def write_page(sheet, table: pd.DataFrame, objective: str, out: str) -> None:
    Path(out).write_text(page(sheet, table, objective), encoding="utf-8")
