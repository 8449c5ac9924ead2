"""How the recommendation says its ranking (:mod:`.ranking`): the verdict per filesystem,
the evidence behind it, its caveats, and the tables of ``recommendation.md`` and of the
report's first page. Nothing here imports an I/O library."""

from __future__ import annotations

from functools import partial

import pandas as pd

from h5sweep.analyze import calibration, objectives
from h5sweep.analyze.aggregate import reference_name
from h5sweep.analyze.ranking import STATISTIC_WORDS, reference_of
from h5sweep.backends import label as _backend_label
from h5sweep.host import measured_caveat
from h5sweep.storage.layouts import AUTO_LAYOUT_NAME


def label(row, with_backend: bool = False) -> str:
    """A layout and compression as a reader would say it (ids as the config and tables spell
    them), and the backend where several are ranked together."""
    name = row["layout_id"] if not row["layout_name"] else f"{row['layout_name']} ({row['chunk_shape']})"
    if row["layout_name"] and "-zxy" in str(row["layout_id"]):  # the transposed store of a named shape
        name += " zxy"
    name = name if row["compression"] == "none" else f"{name} with {row['compression']}"
    if with_backend:
        name = f"{_backend_label(row['backend'])} {name}"
    return name


def _several_backends(group: pd.DataFrame) -> bool:
    return "backend" in group and group["backend"].nunique() > 1


def evidence(reads: pd.DataFrame, table: pd.DataFrame) -> dict[tuple, str]:
    """Why, from the model and the device, per filesystem: for the recommended
    layout and the one it is best compared with (contiguous, or if contiguous is chosen the
    fastest other layout), per read case, the chunks a read touches and the bytes the model
    says it needs (stored bytes of those chunks; contiguous: the bytes selected), and what
    the device delivered (medians of the compared reads)."""
    out = {}
    if table.empty or not {"chunks_touched", "stored_bytes_touched", "device_read_bytes"} <= set(reads.columns):
        return out
    for filesystem, group in table.groupby("filesystem", sort=True):
        chosen = group[group["recommended"]]
        others = group[group["meets_limits"] & ~group["recommended"]]
        if chosen.empty or others.empty:
            continue
        pick = chosen.iloc[0]
        if pick["is_reference"]:
            other = others.iloc[0]
        else:
            base = group[group["is_reference"]]
            other = base.iloc[0] if not base.empty else others.iloc[0]
        mine = reads[reads["filesystem"] == filesystem]
        from_device = bool((mine["device_read_bytes"] > 0).any())
        several = _several_backends(group)
        parts = []
        for case in dict.fromkeys(mine["case"]):
            of_case = mine[mine["case"] == case]
            said = [_per_read(of_case, row, from_device, several) for row in (pick, other)]
            if all(said):
                parts.append(f"{case}: " + "; ".join(said))
        if parts:
            out[filesystem] = "Why, per read (medians): " + " | ".join(parts) + "."
    return out


def _per_read(reads: pd.DataFrame, row, from_device: bool, with_backend: bool = False) -> str:
    mine = reads[(reads["layout_id"] == row["layout_id"]) & (reads["compression"] == row["compression"])]
    if "backend" in reads:
        mine = mine[mine["backend"] == row["backend"]]
    if mine.empty:
        return ""
    if pd.isna(row["chunk_shape"]) or row["chunk_shape"] == "":  # contiguous
        words = f"{label(row, with_backend)} selects {mine['bytes_selected'].median() / 1e6:.3g} MB"
    else:
        words = (
            f"{label(row, with_backend)} touches {int(mine['chunks_touched'].median())} chunks holding "
            f"{mine['stored_bytes_touched'].median() / 1e6:.3g} MB"
        )
    if from_device:
        words += f", the device delivered {mine['device_read_bytes'].median() / 1e6:.3g} MB"
    return words


def _interval(row) -> str:
    if pd.isna(row["score_ci_low"]):
        return "no interval: one read per case"
    return f"95% interval {row['score_ci_low']:.2f}-{row['score_ci_high']:.2f}"


def seconds(value: float) -> str:
    """A time as a reader would say it: milliseconds below a second."""
    if pd.isna(value):
        return ""
    return f"{value * 1e3:.3g} ms" if abs(value) < 1 else f"{value:.3g} s"


def _score_words(row, ref: str) -> str:
    """What a store's score means, by the objective it was ranked by."""
    objective = row.get("objective", "time")
    if objective == "worst-case":
        return (
            f"at most {row['score']:.2f}x the fastest store's time in any case "
            f"(its worst: {row['worst_case']}; {_interval(row)})"
        )
    if objective == "geometric":
        return f"{row['score']:.2f}x {ref}'s time, weighted geometric mean over the cases ({_interval(row)})"
    return f"{row['score']:.2f}x {ref}'s time for the mix, {seconds(row['mix_seconds'])} per unit ({_interval(row)})"


def objective_sentence(objective: str) -> str:
    """The objective a table was ranked by, in words (every verdict says which)."""
    return f"Ranked by {objectives.OBJECTIVE_WORDS[objective]} (recommend.objective: {objective})."


def verdict(group: pd.DataFrame) -> str:
    """One paragraph, in words, for one filesystem (every backend's stores ranked together)."""
    first = group.iloc[0]
    several = _several_backends(group)
    backends = ", ".join(_backend_label(b) for b in sorted(set(group["backend"])))
    where = f"On {first['filesystem']} ({first['fs_type']}, {backends})"
    name_of = partial(label, with_backend=several)
    statistic = STATISTIC_WORDS.get(first["statistic"], first["statistic"])
    mix = f"for this read mix (reads per unit of work: {first['weights']}; {statistic})"
    chosen = group[group["recommended"]]
    if chosen.empty:
        return f"{where}, no layout meets the limits; the table lists why each was excluded."
    best = group[group["tied_with_best"]].iloc[0]
    pick = chosen.iloc[0]
    tied = group[group["tied_with_best"]]
    ref = first["reference_store"]
    if best["is_reference"] and first.get("objective", "time") != "worst-case":
        text = f"{where}, {mix}, {name_of(best)} is the fastest"
        runner_up = group[(group.index != best.name) & group["meets_limits"]]
        if not runner_up.empty:
            text += f"; the next, {name_of(runner_up.iloc[0])}: {_score_words(runner_up.iloc[0], ref)}"
        text += "."
    else:
        text = f"{where}, {mix}, {name_of(best)} is the best: {_score_words(best, ref)}."
    if len(tied) > 1:
        others = ", ".join(name_of(r) for _, r in tied.iterrows() if r.name != best.name)
        text += f" The measurements cannot tell it apart from {others}."
    base = group[group["is_reference"]]
    size_words = ""
    if not base.empty and pick["file_bytes"] > 0:
        factor = base.iloc[0]["file_bytes"] / pick["file_bytes"]
        size_words = f" and {factor:.1f}x smaller than {ref}" if factor >= 1.05 else ""
    if pick.name == best.name:
        text += f" Choose {name_of(pick)}{': it is the smallest of these' if len(tied) > 1 else ''}"
        text += f"{size_words}." if size_words else "."
    else:
        text += (
            f" Choose {name_of(pick)}: {pick['to_best']:.2f}x the best's score (paired 95% interval "
            f"{pick['to_best_ci_low']:.2f}-{pick['to_best_ci_high']:.2f}){size_words}."
        )
    if pd.notna(pick.get("case_spread")) and pick["case_spread"] >= 10:
        text += (
            f" Its cases' times differ {pick['case_spread']:.0f}x: it serves {pick['worst_case']} worst "
            f"({pick['worst_slowdown']:.2f}x that case's fastest store)."
        )
    auto = group[group["layout_name"] == AUTO_LAYOUT_NAME]
    if not auto.empty:
        a = auto.iloc[0]
        text += (
            f" h5py's own chunking (chunks=True) would pick {a['chunk_shape']}: rank {int(a['rank'])} of "
            f"{len(group)}, score {a['score']:.2f}"
            f"{', tied with the best' if a['tied_with_best'] else ''}."
        )
    excluded = group[~group["meets_limits"]]
    if not excluded.empty:
        text += f" {len(excluded)} layout(s) exceed the limits and were not chosen."
    return text + " " + objective_sentence(first.get("objective", "time"))


def machine_caveat(reads: pd.DataFrame) -> str | None:
    """The caveat where the reads ranked were cold on a machine whose memory is unsteady
    (:func:`h5sweep.host.measured_caveat`), from each row's own record of its node."""
    needed = {"filesystem", "host", "free_page_reporting_ms", "cache_state"}
    if not needed <= set(reads.columns):
        return None
    cold = reads[reads["cache_state"] == "cold"]
    return measured_caveat(
        zip(cold["filesystem"], cold["host"], cold["free_page_reporting_ms"].astype(int), strict=True)
    )


def unverified_caveat(reads: pd.DataFrame) -> str | None:
    """Where ranked reads were recorded ``unverified`` (a filesystem whose device reads the
    kernel's counter cannot see), a sentence naming the filesystems."""
    if "cache_state" not in reads:
        return None
    where = sorted(set(reads.loc[reads["cache_state"] == "unverified", "filesystem"]))
    if not where:
        return None
    return (
        f"The reads ranked on {', '.join(where)} are unverified: the kernel does not count that storage's "
        "device reads (a network filesystem or a FUSE mount), so that each first access came from the storage "
        "and not from a cache is not checked."
    )


def _calibration_caveats(table: pd.DataFrame) -> list[str]:
    """Per kind of filesystem ranked, where its intervals missed their calibration on the
    reference machine (:mod:`h5sweep.analyze.calibration`), the measured figures."""
    said = [calibration.caveat(fs_type) for fs_type in dict.fromkeys(table["fs_type"].astype(str))]
    return [s for s in said if s]


def _ref(settings: dict) -> str:
    """The reference store in words (the layout every ratio is to)."""
    name = reference_name(reference_of(settings))
    return "the contiguous layout" if name == "contiguous" else f"the reference layout {name}"


def _explained(settings: dict) -> str:
    objective = settings["recommend"].get("objective", "time")
    score = {
        "time": f"the mix's expected time relative to {_ref(settings)} on the same selections",
        "worst-case": "the largest slowdown over the cases against each case's fastest store",
        "geometric": f"the weighted geometric mean of the per-case median ratios relative to {_ref(settings)} on "
        "the same selections",
    }[objective]
    return (
        f"Score: {score} (below 1 is faster than the reference; objective {objective}). Mix: the mean time of "
        "one unit of work (the weights' reads of each case); per case: the mean time of one read; worst: the "
        "case served slowest against its fastest store; spread: the slowest case's read time over the "
        "fastest case's. Intervals are 95% (paired bootstrap over selections and store copies). Layouts "
        "marked tied cannot be told apart from the best: the paired interval of their score over the best's "
        "reaches 1."
    )


def _ranking_head(group: pd.DataFrame) -> tuple[list[str], list[str]]:
    cases = [c.removeprefix("seconds_") for c in group.columns if c.startswith("seconds_") and group[c].notna().any()]
    head = ["rank", "layout", "score", "95% interval", "mix time", "mix 95% interval"]
    head += [f"{c} [ms]" for c in cases] + ["worst case", "spread", "file / raw", "write [s]", ""]
    return head, cases


def markdown(
    table: pd.DataFrame, settings: dict, why: dict | None = None, caveat: str | None = None, parallel: str = ""
) -> str:
    """``recommendation.md``: the verdicts first (and a ``caveat`` on the machine, where there
    is one), then each filesystem's ranking, then the ``parallel`` section (where there is one)."""
    lines = ["# Recommendation", ""]
    if table.empty:
        return "\n".join([*lines, *([] if parallel else [nothing_to_rank(settings)]), ""]) + parallel
    limits = settings["recommend"]
    stated = [
        f"file at most {limits['max_file_ratio']:g}x the raw data" if limits.get("max_file_ratio") else "",
        f"write at most {limits['max_write_s']:g} s" if limits.get("max_write_s") else "",
    ]
    stated = [s for s in stated if s]
    groups = list(table.groupby("filesystem", sort=True))
    for keys, group in groups:
        lines += [verdict(group) + (f" {why[keys]}" if why and keys in why else ""), ""]
    lines += [caveat, ""] if caveat else []
    lines += [c + "\n" for c in _calibration_caveats(table)]
    lines += [_explained(settings) + (f" Limits: {', '.join(stated)}." if stated else ""), ""]
    for filesystem, group in groups:
        lines += [f"## {filesystem} ({', '.join(sorted(set(group['backend'])))})", ""]
        head, cases = _ranking_head(group)
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for _, row in group.iterrows():
            lines.append("| " + " | ".join(_cells(row, cases, _several_backends(group))) + " |")
        lines.append("")
    return "\n".join(lines) + parallel


def nothing_to_rank(settings: dict) -> str:
    return f"No read case was measured against {_ref(settings)}: nothing to rank."


def _pair(low: float, high: float, digits: str = ".2f", scale: float = 1.0) -> str:
    if pd.isna(low):
        return "none (one read)"
    return f"{low * scale:{digits}}-{high * scale:{digits}}"


def _cells(row, cases: list[str], with_backend: bool = False) -> list[str]:
    """A ranking row as the tables show it: rank, layout, score and its interval, the mix's
    time and its interval, each case's time, the worst case, the spread, file / raw, write
    time, and whether it is recommended, tied or beyond a limit."""
    mark = "recommended" if row["recommended"] else ("tied" if row["tied_with_best"] else row["excluded_by"])
    worst = f"{row['worst_case']} {row['worst_slowdown']:.2f}x" if pd.notna(row["worst_slowdown"]) else ""
    return [
        str(int(row["rank"])),
        label(row, with_backend),
        f"{row['score']:.2f}",
        _pair(row["score_ci_low"], row["score_ci_high"]),
        seconds(row["mix_seconds"]),
        _pair(row["mix_seconds_ci_low"], row["mix_seconds_ci_high"], ".3g", 1e3) + " ms"
        if pd.notna(row["mix_seconds_ci_low"])
        else "none (one read)",
        *[f"{row[f'seconds_{c}'] * 1e3:.3g}" if pd.notna(row.get(f"seconds_{c}")) else "" for c in cases],
        worst,
        f"{row['case_spread']:.3g}x" if pd.notna(row["case_spread"]) else "",
        f"{row['file_ratio']:.2f}" if pd.notna(row["file_ratio"]) else "",
        _write_cell(row),
        mark,
    ]


def _write_cell(row) -> str:
    if pd.isna(row["write_median_s"]):
        return ""
    return (">" if row.get("write_stopped", False) else "") + f"{row['write_median_s']:.3g}"


def restructured(
    table: pd.DataFrame, settings: dict, why: dict | None = None, caveat: str | None = None, parallel: str = ""
) -> str:
    """The same as :func:`markdown` in reStructuredText, for the report's first page."""
    lines = ["Recommendation", "==============", ""]
    if table.empty:
        return "\n".join([*lines, *([] if parallel else [nothing_to_rank(settings)]), ""]) + parallel
    groups = list(table.groupby("filesystem", sort=True))
    for keys, group in groups:
        text = verdict(group) + (f" {why[keys]}" if why and keys in why else "")
        lines += [text.replace("*", "\\*"), ""]
    lines += [caveat, ""] if caveat else []
    lines += [c + "\n" for c in _calibration_caveats(table)]
    lines += [
        _explained(settings).replace("*", "\\*") + " The full ranking is ``recommendation.csv`` (under Results), "
        "the summary table ``summary.csv``, the figures below.",
        "",
    ]
    for filesystem, group in groups:
        title = f"{filesystem} ({', '.join(sorted(set(group['backend'])))})"
        lines += [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
        head, cases = _ranking_head(group)
        lines += ["   * - " + head[0], *[f"     - {h}" for h in head[1:]]]
        for _, row in group.iterrows():
            cells = [c or " " for c in _cells(row, cases, _several_backends(group))]
            lines += ["   * - " + cells[0], *[f"     - {c}" for c in cells[1:]]]
        lines.append("")
    return "\n".join(lines) + parallel
