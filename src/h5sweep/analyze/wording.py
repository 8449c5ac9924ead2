"""How the recommendation says its ranking (:mod:`.ranking`): the verdict per filesystem,
the evidence behind it, its caveats, and the tables of ``recommendation.md`` and of the
report's first page. Nothing here imports an I/O library."""

from __future__ import annotations

import pandas as pd

from h5sweep.analyze import calibration
from h5sweep.analyze.aggregate import reference_name
from h5sweep.analyze.ranking import STATISTIC_WORDS, reference_of
from h5sweep.backends import label as _backend_label
from h5sweep.measure import objective as objectives
from h5sweep.measure.provenance import measured_caveat
from h5sweep.storage import columns as C
from h5sweep.storage import objectstore
from h5sweep.storage.layouts import AUTO_LAYOUT_NAME, Layout
from h5sweep.storage.objectstore import LATENCY_MS
from h5sweep.storage.sizes import count, duration, duration_range, factor


def label(row, with_backend: bool = False, with_option: bool = False) -> str:
    """A layout and compression as a reader would say it (ids as the config and tables spell
    them), the backend where several are ranked together, and the read option where its
    backend's stores were read with several."""
    name = row[C.LAYOUT_ID] if not row[C.LAYOUT_NAME] else f"{row[C.LAYOUT_NAME]} ({row[C.CHUNK_SHAPE]})"
    if row[C.LAYOUT_NAME] and "-zxy" in str(row[C.LAYOUT_ID]):  # the transposed store of a named shape
        name += " zxy"
    page = _page_words(row[C.LAYOUT_ID])
    if page and row[C.LAYOUT_NAME]:  # a named shape's id is not shown: say it is paged
        name += f" paged ({page} pages)"
    name = name if row[C.COMPRESSION] == "none" else f"{name} with {row[C.COMPRESSION]}"
    if with_backend:
        name = f"{_backend_label(row[C.BACKEND])} {name}"
    if with_option and row.get(C.READ_OPTION):
        name += f", read with {row[C.READ_OPTION]}"
    return name


def _several_backends(group: pd.DataFrame) -> bool:
    return C.BACKEND in group and group[C.BACKEND].nunique() > 1


def _page_words(layout_id) -> str:
    """A layout id's page size in words (``8 MiB``), or "" where it has no paged aggregation."""
    try:
        return Layout.from_id(str(layout_id)).page_label
    except ValueError:
        return ""


def several_options(group: pd.DataFrame) -> set[str]:
    """The backends whose stores a group ranks in more than one read option."""
    if C.READ_OPTION not in group:
        return set()
    counts = group.groupby(C.BACKEND)[C.READ_OPTION].nunique()
    return set(counts[counts > 1].index)


def namer(group: pd.DataFrame):
    """How the rows of one filesystem's ranking are named (:func:`label`): with their backend
    where several are ranked, with their read option where their backend has several."""
    backends, options = _several_backends(group), several_options(group)
    return lambda row: label(row, backends, row[C.BACKEND] in options)


def _option_advice(group: pd.DataFrame, pick) -> str:
    """Where the chosen store was measured in several read options: how to set the chosen
    one, and what the same store costs in its backend's first option (the library default
    h5sweep measured) where the chosen one is another."""
    if pick[C.BACKEND] not in several_options(group):
        return ""
    same = group[
        (group[C.BACKEND] == pick[C.BACKEND])
        & (group[C.LAYOUT_ID] == pick[C.LAYOUT_ID])
        & (group[C.COMPRESSION] == pick[C.COMPRESSION])
    ]
    text = f" Read it with {pick[C.READ_OPTION]}"
    text += f": `{pick[C.READ_OPTION_SETTING]}`." if pick.get(C.READ_OPTION_SETTING) else "."
    first = same[same[C.READ_OPTION_INDEX].fillna(0) == 0]
    if pick.get(C.READ_OPTION_INDEX, 0) == 0 or first.empty:
        return text
    other = first.iloc[0]
    if pd.notna(other.get(C.RACED_OUT_ROUND)):
        return text + (
            f" With {other[C.READ_OPTION]} the same store was raced out, at least "
            f"{other[C.RACED_OUT_AT_LEAST]:.3g}x the best."
        )
    if pd.notna(other[C.SCORE]) and pick[C.SCORE] > 0:
        text += f" With {other[C.READ_OPTION]} the same store scores {other[C.SCORE] / pick[C.SCORE]:.3g}x as much"
        if pd.notna(other[objectives.TO_BEST_CI_LOW]) and other[objectives.TO_BEST_CI_LOW] > 1:
            low, high = other[objectives.TO_BEST_CI_LOW], other[objectives.TO_BEST_CI_HIGH]
            text += f" (its score over the best's: 95% interval {low:.3g}-{high:.3g})"
        text += "."
    return text


def evidence(reads: pd.DataFrame, table: pd.DataFrame) -> dict[tuple, str]:
    """Why, from the model and the device, per filesystem: for the recommended
    layout and the one it is best compared with (contiguous, or if contiguous is chosen the
    fastest other layout), per read case, the chunks a read touches and the bytes the model
    says it needs (stored bytes of those chunks; contiguous: the bytes selected), and what
    the device delivered (medians of the compared reads)."""
    out = {}
    if table.empty or not {C.CHUNKS_TOUCHED, C.STORED_BYTES_TOUCHED, C.DEVICE_READ_BYTES} <= set(reads.columns):
        return out
    for filesystem, group in table.groupby(C.FILESYSTEM, sort=True):
        chosen = group[group[C.RECOMMENDED]]
        others = group[group[C.MEETS_LIMITS] & ~group[C.RECOMMENDED]]
        if chosen.empty or others.empty:
            continue
        pick = chosen.iloc[0]
        if pick[C.IS_REFERENCE]:
            other = others.iloc[0]
        else:
            base = group[group[C.IS_REFERENCE]]
            other = base.iloc[0] if not base.empty else others.iloc[0]
        mine = reads[reads[C.FILESYSTEM] == filesystem]
        from_device = bool((mine[C.DEVICE_READ_BYTES] > 0).any())
        name_of = namer(group)
        parts = []
        for case in dict.fromkeys(mine[C.CASE]):
            of_case = mine[mine[C.CASE] == case]
            said = [_per_read(of_case, row, from_device, name_of) for row in (pick, other)]
            if all(said):
                parts.append(f"{case}: " + "; ".join(said))
        if parts:
            out[filesystem] = "Why, per read (medians): " + " | ".join(parts) + "."
    return out


def _per_read(reads: pd.DataFrame, row, from_device: bool, name_of=label) -> str:
    mine = reads[(reads[C.LAYOUT_ID] == row[C.LAYOUT_ID]) & (reads[C.COMPRESSION] == row[C.COMPRESSION])]
    if C.BACKEND in reads:
        mine = mine[mine[C.BACKEND] == row[C.BACKEND]]
    if C.READ_OPTION in reads and C.READ_OPTION in row:
        mine = mine[mine[C.READ_OPTION] == row[C.READ_OPTION]]
    if mine.empty:
        return ""
    if pd.isna(row[C.CHUNK_SHAPE]) or row[C.CHUNK_SHAPE] == "":  # contiguous
        words = f"{name_of(row)} selects {mine[C.BYTES_SELECTED].median() / 1e6:.3g} MB"
    else:
        words = (
            f"{name_of(row)} touches {int(mine[C.CHUNKS_TOUCHED].median())} chunks holding "
            f"{mine[C.STORED_BYTES_TOUCHED].median() / 1e6:.3g} MB"
        )
    if objectstore.REQUESTS in mine and mine[objectstore.REQUESTS].notna().any():  # on an object store
        words += (
            f", in {count(mine[objectstore.REQUESTS].median())} requests "
            f"({count(mine[objectstore.DATA_REQUESTS].median())} for chunks) that brought "
            f"{mine[objectstore.BYTES_RECEIVED].median() / 1e6:.3g} MB"
        )
    elif from_device:
        words += f", the device delivered {mine[C.DEVICE_READ_BYTES].median() / 1e6:.3g} MB"
    return words


def _interval(row) -> str:
    if pd.isna(row[C.SCORE_CI_LOW]):
        return "no interval: one read per case"
    return f"95% interval {row[C.SCORE_CI_LOW]:.2f}-{row[C.SCORE_CI_HIGH]:.2f}"


def seconds(value: float) -> str:
    """A time as a reader would say it: milliseconds below a second."""
    if pd.isna(value):
        return ""
    return f"{value * 1e3:.3g} ms" if abs(value) < 1 else f"{value:.3g} s"


def _score_words(row, ref: str) -> str:
    """What a store's score means, by the objective it was ranked by."""
    per_unit = f"{duration(row[objectives.MIX_SECONDS])} per unit"
    if pd.notna(row.get(objectives.MIX_SECONDS_CI_LOW)):
        per_unit += (
            f" (95% interval {duration_range(row[objectives.MIX_SECONDS_CI_LOW], row[objectives.MIX_SECONDS_CI_HIGH])})"
        )
    return objectives.objective_of(row.get(C.OBJECTIVE)).says.format(
        score=row[C.SCORE], ref=ref, interval=_interval(row), worst=row.get(objectives.WORST_CASE), per_unit=per_unit
    )


def objective_sentence(name: str | None) -> str:
    """The objective a table was ranked by, in words (every verdict says which)."""
    objective = objectives.objective_of(name)
    return f"Ranked by {objective.words} (recommend.objective: {objective.name})."


def verdict(group: pd.DataFrame) -> str:
    """One paragraph, in words, for one filesystem (every backend's stores ranked together)."""
    first = group.iloc[0]
    backends = ", ".join(_backend_label(b) for b in sorted(set(group[C.BACKEND])))
    where = f"On {first[C.FILESYSTEM]} ({first[C.FS_TYPE]}, {backends})"
    name_of = namer(group)
    statistic = STATISTIC_WORDS.get(first[C.STATISTIC], first[C.STATISTIC])
    mix = f"for this read mix (reads per unit of work: {first[C.WEIGHTS]}; {statistic})"
    chosen = group[group[C.RECOMMENDED]]
    unranked = not_ranked(group, name_of)
    if chosen.empty and unranked:
        return f"{where}, no store is ranked. {unranked}"
    if chosen.empty:
        return f"{where}, no layout meets the limits; the table lists why each was excluded."
    best = group[group[C.TIED_WITH_BEST]].iloc[0]
    pick = chosen.iloc[0]
    tied = group[group[C.TIED_WITH_BEST]]
    ref = first[C.REFERENCE_STORE]
    if best[C.IS_REFERENCE] and objectives.objective_of(first.get(C.OBJECTIVE)).to_reference:
        text = f"{where}, {mix}, {name_of(best)} is the fastest"
        runner_up = group[(group.index != best.name) & group[C.MEETS_LIMITS]]
        if not runner_up.empty:
            text += f"; the next, {name_of(runner_up.iloc[0])}: {_score_words(runner_up.iloc[0], ref)}"
        text += "."
    else:
        text = f"{where}, {mix}, {name_of(best)} is the best: {_score_words(best, ref)}."
    if len(tied) > 1:
        others = ", ".join(name_of(r) for _, r in tied.iterrows() if r.name != best.name)
        text += f" The measurements cannot tell it apart from {others}."
    base = group[group[C.IS_REFERENCE]]
    size_words = ""
    if not base.empty and pick[C.FILE_BYTES] > 0:
        factor = base.iloc[0][C.FILE_BYTES] / pick[C.FILE_BYTES]
        size_words = f" and {factor:.1f}x smaller than {ref}" if factor >= 1.05 else ""
    if pick.name == best.name:
        text += f" Choose {name_of(pick)}{': it is the smallest of these' if len(tied) > 1 else ''}"
        text += f"{size_words}." if size_words else "."
    else:
        text += (
            f" Choose {name_of(pick)}: {pick[objectives.TO_BEST]:.2f}x the best's score (paired 95% interval "
            f"{pick[objectives.TO_BEST_CI_LOW]:.2f}-{pick[objectives.TO_BEST_CI_HIGH]:.2f}){size_words}."
        )
    text += _option_advice(group, pick)
    if pd.notna(pick.get(objectives.CASE_SPREAD)) and pick[objectives.CASE_SPREAD] >= 10:
        text += (
            f" Its cases' times differ {pick[objectives.CASE_SPREAD]:.0f}x: it serves "
            f"{pick[objectives.WORST_CASE]} worst "
            f"({pick[objectives.WORST_SLOWDOWN]:.2f}x that case's fastest store)."
        )
    auto = group[group[C.LAYOUT_NAME] == AUTO_LAYOUT_NAME]
    if not auto.empty:
        a = auto.iloc[0]
        text += (
            f" h5py's own chunking (chunks=True) would pick {a[C.CHUNK_SHAPE]}: rank {int(a[C.RANK])} of "
            f"{len(group)}, score {a[C.SCORE]:.2f}"
            f"{', tied with the best' if a[C.TIED_WITH_BEST] else ''}."
        )
    raced = group[group[C.RACED_OUT_ROUND].notna()] if C.RACED_OUT_ROUND in group else group.iloc[0:0]
    excluded = group[~group[C.MEETS_LIMITS] & ~group.index.isin(raced.index)]
    if not excluded.empty:
        text += f" {len(excluded)} layout(s) exceed the limits and were not chosen."
    if not raced.empty:
        text += (
            f" {len(raced)} store(s) were raced out of the read pass (from round "
            f"{int(raced[C.RACED_OUT_ROUND].min())} on), each at least {raced[C.RACED_OUT_AT_LEAST].min():.2f}x "
            "slower than the best: not measured to the end, and not ranked by what they read."
        )
    if unranked:
        text += f" {unranked}"
    return text + " " + objective_sentence(first.get(C.OBJECTIVE))


def not_ranked(group: pd.DataFrame, name_of=label) -> str:
    """The stores of one filesystem that are not ranked (their reads failed on an emulated
    fault; too few selections read undisturbed), each named with why ("" where none)."""
    if objectstore.NOT_RANKED not in group:
        return ""
    out = group[group[objectstore.NOT_RANKED].fillna("").astype(str) != ""]
    if out.empty:
        return ""
    said = []
    for why, stores in out.groupby(objectstore.NOT_RANKED, sort=False):
        names = ", ".join(name_of(row) for _, row in stores.iterrows())
        said.append(f"{names}: {why.removeprefix('not ranked: ')}")
    return f"Not ranked: {'; '.join(said)}."


def machine_caveat(reads: pd.DataFrame) -> str | None:
    """The caveat where the reads ranked were cold on a machine whose memory is unsteady
    (:func:`h5sweep.measure.provenance.measured_caveat`), from each row's own record of its node."""
    needed = {C.FILESYSTEM, C.HOST, C.FREE_PAGE_REPORTING_MS, C.CACHE_STATE}
    if not needed <= set(reads.columns):
        return None
    cold = reads[reads[C.CACHE_STATE] == "cold"]
    if C.FS_TYPE in cold:  # an object store's cold reads come from its server, not the page cache
        cold = cold[cold[C.FS_TYPE] != "s3"]
    return measured_caveat(
        zip(cold[C.FILESYSTEM], cold[C.HOST], cold[C.FREE_PAGE_REPORTING_MS].astype(int), strict=True)
    )


def unverified_caveat(reads: pd.DataFrame) -> str | None:
    """Where ranked reads were recorded ``unverified`` (a filesystem whose device reads the
    kernel's counter cannot see), a sentence naming the filesystems."""
    if C.CACHE_STATE not in reads:
        return None
    where = sorted(set(reads.loc[reads[C.CACHE_STATE] == "unverified", C.FILESYSTEM]))
    if not where:
        return None
    return (
        f"The reads ranked on {', '.join(where)} are unverified: the kernel does not count that storage's "
        "device reads (a network filesystem or a FUSE mount), so that each first access came from the storage "
        "and not from a cache is not checked."
    )


def latency_caveat(reads: pd.DataFrame) -> str | None:
    """Where ranked reads went to an object store through an emulated latency, a sentence
    naming the filesystems and the delay."""
    if LATENCY_MS not in reads:
        return None
    delayed = reads[reads[LATENCY_MS].fillna(0) > 0]
    if delayed.empty:
        return None
    each = sorted({(fs, float(ms)) for fs, ms in zip(delayed[C.FILESYSTEM], delayed[LATENCY_MS], strict=True)})
    named = ", ".join(f"{fs} ({ms:g} ms)" for fs, ms in each)
    return (
        f"The latency on {named} is emulated: each request was held that long by a relay on this machine's "
        "loopback before it reached a local server; it is not a measured network's."
    )


def _calibration_caveats(table: pd.DataFrame) -> list[str]:
    """Per kind of filesystem ranked, where its intervals missed their calibration on the
    reference machine (:mod:`h5sweep.analyze.calibration`), the measured figures."""
    said = [calibration.caveat(fs_type) for fs_type in dict.fromkeys(table[C.FS_TYPE].astype(str))]
    return [s for s in said if s]


def _ref(settings: dict) -> str:
    """The reference store in words (the layout every ratio is to)."""
    name = reference_name(reference_of(settings))
    return "the contiguous layout" if name == "contiguous" else f"the reference layout {name}"


def _explained(settings: dict) -> str:
    objective = objectives.objective_of(settings["recommend"].get("objective"))
    score = objective.explained.format(ref=_ref(settings))
    return (
        f"Score: {score} (below 1 is faster than the reference; objective {objective.name}). Mix: the mean time of "
        "one unit of work (the weights' reads of each case); per case: the mean time of one read; worst: the "
        "case served slowest against its fastest store; spread: the slowest case's read time over the "
        "fastest case's. Intervals are 95% (paired bootstrap over selections and store copies). Layouts "
        "marked tied cannot be told apart from the best: the paired interval of their score over the best's "
        "reaches 1."
    )


def _ranking_head(group: pd.DataFrame) -> tuple[list[str], list[str]]:
    cases = [c.removeprefix("seconds_") for c in group.columns if c.startswith("seconds_") and group[c].notna().any()]
    head = [C.RANK, C.LAYOUT, C.SCORE, "95% interval", "mix time", "mix 95% interval"]
    head += [f"{c} [ms]" for c in cases] + ["worst case", "spread"]
    head += ["requests / unit"] if _counts_requests(group) else []
    return head + ["file / raw", "write [s]", ""], cases


def _counts_requests(group: pd.DataFrame) -> bool:
    """Whether a filesystem's ranking counts requests (an object store's)."""
    per_unit = objectstore.REQUESTS_PER_UNIT
    return per_unit in group and bool(group[per_unit].notna().any())


def markdown(
    table: pd.DataFrame,
    settings: dict,
    why: dict | None = None,
    caveat: str | None = None,
    sections: str = "",
    data: str = "",
) -> str:
    """``recommendation.md``: the verdicts first (then ``data``: the values measured, in words,
    and a ``caveat`` on the machine, where there is one), then each filesystem's ranking, then
    the cases' own ``sections`` (where they have any)."""
    lines = ["# Recommendation", ""]
    if table.empty:
        return "\n".join([*lines, *([] if sections else [nothing_to_rank(settings)]), ""]) + sections
    limits = settings["recommend"]
    stated = [
        f"file at most {limits['max_file_ratio']:g}x the raw data" if limits.get("max_file_ratio") else "",
        f"write at most {limits['max_write_s']:g} s" if limits.get("max_write_s") else "",
    ]
    stated = [s for s in stated if s]
    groups = list(table.groupby(C.FILESYSTEM, sort=True))
    for keys, group in groups:
        lines += [verdict(group) + (f" {why[keys]}" if why and keys in why else ""), ""]
    lines += [data, ""] if data else []
    lines += [caveat, ""] if caveat else []
    lines += [c + "\n" for c in _calibration_caveats(table)]
    lines += [_explained(settings) + (f" Limits: {', '.join(stated)}." if stated else ""), ""]
    for filesystem, group in groups:
        lines += [f"## {filesystem} ({', '.join(sorted(set(group[C.BACKEND])))})", ""]
        head, cases = _ranking_head(group)
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        name_of = namer(group)
        requests = _counts_requests(group)
        for _, row in group.iterrows():
            lines.append("| " + " | ".join(_cells(row, cases, name_of, requests)) + " |")
        lines.append("")
    return "\n".join(lines) + sections


def nothing_to_rank(settings: dict) -> str:
    return f"No read case was measured against {_ref(settings)}: nothing to rank."


def _pair(low: float, high: float, digits: str = ".2f", scale: float = 1.0) -> str:
    if pd.isna(low):
        return "none (one read)"
    return f"{low * scale:{digits}}-{high * scale:{digits}}"


def _cells(row, cases: list[str], name_of=label, requests: bool = False) -> list[str]:
    """A ranking row as the tables show it: rank, layout, score and its interval, the mix's
    time and its interval, each case's time, the worst case, the spread, (on an object store,
    ``requests``) the requests of a unit of work, file / raw, write time, and whether it is
    recommended, tied or beyond a limit."""
    mark = C.RECOMMENDED if row[C.RECOMMENDED] else ("tied" if row[C.TIED_WITH_BEST] else row[C.EXCLUDED_BY])
    worst = (
        f"{row[objectives.WORST_CASE]} {row[objectives.WORST_SLOWDOWN]:.2f}x"
        if pd.notna(row[objectives.WORST_SLOWDOWN])
        else ""
    )
    per_unit = row.get(objectstore.REQUESTS_PER_UNIT)
    counted = [count(per_unit) if pd.notna(per_unit) else ""] if requests else []
    if str(row.get(objectstore.NOT_RANKED) or "") not in ("", "nan"):  # no score: why is in the last cell
        return [
            str(int(row[C.RANK])),
            name_of(row),
            "not ranked",
            *[""] * (3 + len(cases) + 2),
            *counted,
            f"{row[C.FILE_RATIO]:.2f}" if pd.notna(row[C.FILE_RATIO]) else "",
            _write_cell(row),
            mark,
        ]
    if pd.notna(row.get(C.RACED_OUT_ROUND)):  # not measured to the end: what is known, and nothing more
        return [
            str(int(row[C.RANK])),
            name_of(row),
            f">{factor(row[C.RACED_OUT_AT_LEAST])} best",
            f"raced out at round {int(row[C.RACED_OUT_ROUND])}",
            *[""] * (2 + len(cases) + 2),
            *counted,
            f"{row[C.FILE_RATIO]:.2f}" if pd.notna(row[C.FILE_RATIO]) else "",
            _write_cell(row),
            mark,
        ]
    return [
        str(int(row[C.RANK])),
        name_of(row),
        f"{row[C.SCORE]:.2f}",
        _pair(row[C.SCORE_CI_LOW], row[C.SCORE_CI_HIGH]),
        duration(row[objectives.MIX_SECONDS]),
        duration_range(row[objectives.MIX_SECONDS_CI_LOW], row[objectives.MIX_SECONDS_CI_HIGH])
        if pd.notna(row[objectives.MIX_SECONDS_CI_LOW])
        else "none (one read)",
        *[f"{row[f'seconds_{c}'] * 1e3:.3g}" if pd.notna(row.get(f"seconds_{c}")) else "" for c in cases],
        worst,
        f"{row[objectives.CASE_SPREAD]:.3g}x" if pd.notna(row[objectives.CASE_SPREAD]) else "",
        *counted,
        f"{row[C.FILE_RATIO]:.2f}" if pd.notna(row[C.FILE_RATIO]) else "",
        _write_cell(row),
        mark,
    ]


def _write_cell(row) -> str:
    if pd.isna(row[C.WRITE_MEDIAN_S]):
        return ""
    return (">" if row.get(C.WRITE_STOPPED, False) else "") + f"{row[C.WRITE_MEDIAN_S]:.3g}"


def restructured(
    table: pd.DataFrame, settings: dict, why: dict | None = None, caveat: str | None = None, sections: str = ""
) -> str:
    """The same as :func:`markdown` in reStructuredText, for the report's first page."""
    lines = ["Recommendation", "==============", ""]
    if table.empty:
        return "\n".join([*lines, *([] if sections else [nothing_to_rank(settings)]), ""]) + sections
    groups = list(table.groupby(C.FILESYSTEM, sort=True))
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
        title = f"{filesystem} ({', '.join(sorted(set(group[C.BACKEND])))})"
        lines += [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
        head, cases = _ranking_head(group)
        lines += ["   * - " + head[0], *[f"     - {h}" for h in head[1:]]]
        name_of = namer(group)
        requests = _counts_requests(group)
        for _, row in group.iterrows():
            cells = [c or " " for c in _cells(row, cases, name_of, requests)]
            lines += ["   * - " + cells[0], *[f"     - {c}" for c in cells[1:]]]
        lines.append("")
    return "\n".join(lines) + sections
