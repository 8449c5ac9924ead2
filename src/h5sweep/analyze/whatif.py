"""What-if mixes: a finished sweep ranked again for other read mixes, from the reads it
already made (``recommend.mixes`` in decision.md, or ``python -m h5sweep.compare.whatif``). Nothing
is read again; where the race dropped a store early (an interleaved pass with ``race``), the
reads it made before it stopped say whether another mix could favour it. Nothing here
imports an I/O library."""

from __future__ import annotations

import pandas as pd

from h5sweep.analyze.ranking import CANDIDATE_KEYS, SAME_SIZE, mix_words, rank_selected_reads, rows_of, selected_reads
from h5sweep.analyze.wording import label, namer, several_options
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import duration, duration_range, factor, size
from h5sweep.sweep.resume import KEYS as RESUME_KEYS

STORE = [*CANDIDATE_KEYS, C.READ_OPTION]  # a candidate is a store in one read option


def with_mix(settings: dict, weights: dict[str, float]) -> dict:
    """The recommendation's settings with another read mix."""
    return {**settings, "recommend": {**settings["recommend"], "weights": dict(weights)}}


def check_mix(settings: dict, weights: dict[str, float], key: str = "--weights") -> dict[str, float]:
    """A mix's weights, checked: read cases of the sweep, non-negative, one positive; else a
    ``ValueError`` naming ``key`` and the case."""
    known = list(settings["read_cases"])
    for case, count in weights.items():
        if case not in known:
            raise ValueError(f"{key}: {case!r} is not a read case of this sweep (known: {', '.join(known)})")
        if not count >= 0:
            raise ValueError(f"{key}: {case}={count} must be a number at least 0")
    if not any(count > 0 for count in weights.values()):
        raise ValueError(f"{key}: needs at least one positive weight")
    return {case: float(count) for case, count in weights.items()}


def rank_for(measurements: pd.DataFrame, summary: pd.DataFrame, settings: dict, weights: dict) -> tuple:
    """The ranking for ``weights`` (the same columns as ``recommendation.csv``) and the reads
    it compared."""
    mixed = with_mix(settings, weights)
    reads = selected_reads(measurements, mixed)
    return rank_selected_reads(reads, summary, mixed), reads


def could_favour(reads: pd.DataFrame, table: pd.DataFrame, weights: dict, margin: float | None) -> list[dict]:
    """The stores raced out of a pass that this mix could favour: on the selections each read
    before it stopped, paired with this mix's best store, its mix time is within the race's
    ``margin`` of the best's (the race drops only stores surely beyond it). One dict per such
    store: filesystem, row, ratio, reads."""
    if margin is None or C.RACED_OUT_ROUND not in table or C.REPEAT not in reads:
        return []
    pair_on = [c for c in (C.CASE, C.REPEAT, C.STORE_COPY) if c in reads]
    found = []
    for filesystem, group in table.groupby(C.FILESYSTEM, sort=True):
        raced = group[group[C.RACED_OUT_ROUND].notna()]
        ranked = group[group[C.RACED_OUT_ROUND].isna() & group[C.MEETS_LIMITS]].sort_values(C.RANK)
        if raced.empty or ranked.empty:
            continue
        best = rows_of(reads, ranked.iloc[0], STORE)[[*pair_on, C.SECONDS]]
        for _, row in raced.iterrows():
            mine = rows_of(reads, row, STORE)[[*pair_on, C.SECONDS]]
            paired = mine.merge(best, on=pair_on, suffixes=("", "_best"))
            means = paired.groupby(C.CASE)[[C.SECONDS, f"{C.SECONDS}_best"]].mean()
            cases = [c for c in means.index if weights.get(c, 0) > 0]
            if not cases:
                continue
            mix = sum(weights[c] * means.loc[c, C.SECONDS] for c in cases)
            mix_best = sum(weights[c] * means.loc[c, f"{C.SECONDS}_best"] for c in cases)
            ratio = mix / mix_best if mix_best > 0 else float("inf")
            if ratio < margin:
                found.append({"filesystem": filesystem, "row": row, "ratio": ratio, "reads": len(paired)})
    return found


def resume_command(sweep: str, weights: dict) -> str:
    """The command that reads to the end the raced-out stores a mix could favour."""
    mix = ",".join(f"{case}={count:g}" for case, count in weights.items())
    return f"python -m h5sweep.compare.whatif results/{sweep} --weights {mix} --resume"


def favoured_stores(favoured: list[dict]) -> list[dict]:
    """The raced-out stores of :func:`could_favour` as a resume request's entries."""
    return [{key: str(store["row"][key]) for key in RESUME_KEYS} for store in favoured]


def _sweeps_choice_words(pick, other, group: pd.DataFrame) -> str:
    """Where the sweep's own choice (``other``, a row of this mix's ranking) stands against
    this mix's choice (``pick``), naming it: tied with the fastest (and then why ``pick`` was
    chosen of the tied), or how far behind the fastest it ranks."""
    name = namer(group)(other)
    if pd.notna(other.get(C.RACED_OUT_ROUND)):
        return f"; the sweep's choice, {name}, was raced out under its own mix"
    if not other[C.TIED_WITH_BEST]:
        interval = (
            f", 95% interval {factor(other[objectives.TO_BEST_CI_LOW])}-{factor(other[objectives.TO_BEST_CI_HIGH])}"
            if pd.notna(other.get(objectives.TO_BEST_CI_LOW))
            else ""
        )
        place = f"ranks {int(other[C.RANK])}: {factor(other[objectives.TO_BEST])} the fastest's score"
        return f"; the sweep's choice, {name}, {place}{interval}"
    smaller = pick[C.FILE_BYTES] * SAME_SIZE < other[C.FILE_BYTES]
    why = (
        f"its smaller file ({size(pick[C.FILE_BYTES])} against {size(other[C.FILE_BYTES])})"
        if smaller
        else "its better score among files of about the same size"
    )
    place = "is the fastest" if int(other[C.RANK]) == 1 else f"ranks {int(other[C.RANK])}, tied with the fastest too"
    return (
        f"; the sweep's choice, {name}, {place}: the measurements cannot tell the tied stores apart for this mix, "
        f"and of them this one is chosen for {why}"
    )


def mix_lines(
    name: str, weights: dict, table: pd.DataFrame, chosen: pd.DataFrame, favoured: list[dict], sweep: str
) -> list:
    """What one mix decides, per filesystem: its choice with the time of a unit of work, and
    where the sweep's own choice (``chosen``: the recommended rows) ranks under it; then the
    raced-out stores it could favour, and the command that reads them to the end."""
    lines = []
    for filesystem, group in table.groupby(C.FILESYSTEM, sort=True):
        pick = group[group[C.RECOMMENDED]]
        if pick.empty:
            lines.append(f"{name} ({mix_words(weights)}) on {filesystem}: no store meets the limits.")
            continue
        pick = pick.iloc[0]
        several = several_options(group)
        text = (
            f"{name} ({mix_words(weights)}) on {filesystem}: "
            f"{label(pick, True, pick[C.BACKEND] in several)}, {duration(pick[objectives.MIX_SECONDS])} per unit"
        )
        if pd.notna(pick.get(objectives.MIX_SECONDS_CI_LOW)):
            low, high = pick[objectives.MIX_SECONDS_CI_LOW], pick[objectives.MIX_SECONDS_CI_HIGH]
            text += f" (95% interval {duration_range(low, high)})"
        if int(pick[C.RANK]) > 1:
            text += f", rank {int(pick[C.RANK])}, tied with the fastest"
        mine = chosen[chosen[C.FILESYSTEM] == filesystem]
        if not mine.empty:
            same = rows_of(group, mine.iloc[0], STORE)
            if not same.empty and same.iloc[0].name != pick.name:
                text += _sweeps_choice_words(pick, same.iloc[0], group)
            elif not same.empty:
                text += "; the same as the sweep's choice"
        lines.append(text + ".")
    for store in favoured:
        row = store["row"]
        lines.append(
            f"{name}: on {store['filesystem']}, {label(row, True)} was raced out at round "
            f"{int(row[C.RACED_OUT_ROUND])}, yet on the {store['reads']} reads it made this mix puts it at "
            f"{factor(store['ratio'])} the best: it could be favoured."
        )
    if favoured:
        lines.append(
            f"{name}: to read {'it' if len(favoured) == 1 else f'these {len(favoured)} stores'} to the end, "
            f"and nothing else: `{resume_command(sweep, weights)}` (with the sweep's own `--configfile`)."
        )
    return lines


TABLE_HEAD = (
    "rank",
    "store",
    "mix time (95% interval)",
    "to the choice",
    "tied",
    "file",
    "write",
    "worst case",
    "note",
)
TABLE_LEGEND = (
    "mix time: the mean time of one unit of work (the mix's reads of each case) and its 95% interval; to the "
    "choice: that time over the choice's; tied: the fastest store, and those whose score over the fastest's has "
    "a paired 95% interval reaching 1 (the measurements cannot tell them apart; the choice is the smallest file "
    "of them); file: the store's size; write: the median time of one write of the whole dataset; worst case: the "
    "case it serves slowest against that case's fastest store, and by how much."
)


def _row_cells(row, pick, name_of, sweeps_choice: bool, favoured: dict) -> list[str]:
    """One store's cells in the table of a mix (:data:`TABLE_HEAD`); ``pick``: the mix's choice
    (None where no store meets the limits)."""
    write = (
        ""
        if pd.isna(row[C.WRITE_MEDIAN_S])
        else (">" if row[C.WRITE_STOPPED] else "") + duration(row[C.WRITE_MEDIAN_S])
    )
    notes = ["choice"] if pick is not None and row.name == pick.name else []
    notes += ["sweep's choice"] if sweeps_choice else []
    common = [size(row[C.FILE_BYTES]) if pd.notna(row[C.FILE_BYTES]) else "", write]
    if pd.notna(row.get(C.RACED_OUT_ROUND)):
        ratio = favoured.get(row.name)
        notes.append(
            f"raced out at round {int(row[C.RACED_OUT_ROUND])}"
            + (f"; on its {ratio[1]} reads {factor(ratio[0])} this mix's fastest: could be favoured" if ratio else "")
        )
        return [str(int(row[C.RANK])), name_of(row), "not measured to the end", "", "", *common, "", "; ".join(notes)]
    if row[C.EXCLUDED_BY]:
        notes.append(f"beyond a limit: {row[C.EXCLUDED_BY]}")
    mix = duration(row[objectives.MIX_SECONDS])
    if pd.notna(row.get(objectives.MIX_SECONDS_CI_LOW)):
        mix += f" ({duration_range(row[objectives.MIX_SECONDS_CI_LOW], row[objectives.MIX_SECONDS_CI_HIGH])})"
    else:
        mix += " (one read: no interval)"
    worst = (
        f"{row[objectives.WORST_CASE]} {factor(row[objectives.WORST_SLOWDOWN])}"
        if pd.notna(row.get(objectives.WORST_SLOWDOWN))
        else ""
    )
    to_choice = (
        f"{row[objectives.MIX_SECONDS] / pick[objectives.MIX_SECONDS]:.2f}x"
        if pick is not None and pick[objectives.MIX_SECONDS] > 0
        else ""
    )
    return [
        str(int(row[C.RANK])),
        name_of(row),
        mix,
        to_choice,
        ("fastest" if int(row[C.RANK]) == 1 else "tied") if row[C.TIED_WITH_BEST] else "",
        *common,
        worst,
        "; ".join(notes),
    ]


def mix_table(table: pd.DataFrame, chosen: pd.DataFrame, favoured: list[dict] | None = None) -> list[str]:
    """A mix's ranking as a table per filesystem (:data:`TABLE_HEAD`, aligned columns in
    Markdown's pipes): every store ranked for the mix, its mix time with its interval, its
    ratio to the mix's choice, whether it is tied with the fastest, its file size, its write
    time and its worst case; the mix's choice and the sweep's own choice (``chosen``) marked;
    the stores raced out listed after, with what the reads they made say of this mix
    (``favoured``, :func:`could_favour`)."""
    lines = []
    for filesystem, group in table.groupby(C.FILESYSTEM, sort=True):
        group = group.sort_values(C.RANK)
        picked = group[group[C.RECOMMENDED]]
        pick = picked.iloc[0] if not picked.empty else None
        mine = chosen[chosen[C.FILESYSTEM] == filesystem]
        own = rows_of(group, mine.iloc[0], STORE) if not mine.empty else group.iloc[0:0]
        own_index = own.index[0] if not own.empty else None
        seen = {s["row"].name: (s["ratio"], s["reads"]) for s in (favoured or []) if s["filesystem"] == filesystem}
        name_of = namer(group)
        rows = [TABLE_HEAD] + [
            _row_cells(row, pick, name_of, index == own_index, seen) for index, row in group.iterrows()
        ]
        lines += [f"{filesystem}:", *_aligned(rows), ""]
    return lines


def _aligned(rows: list) -> list[str]:
    """Rows of cells as a Markdown table whose columns line up (the first row its head)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(cells) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return [line(rows[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *[line(r) for r in rows[1:]]]


def decide(
    measurements: pd.DataFrame,
    summary: pd.DataFrame,
    settings: dict,
    name: str,
    weights: dict,
    chosen: pd.DataFrame,
    with_stores: bool = False,
    with_table: bool = False,
):
    """What one mix decides, in words (:func:`mix_lines`): the sweep ranked for ``weights``
    and the raced-out stores the mix could favour; ``chosen``: the sweep's own choice's rows.
    ``with_table``: the words followed by the mix's ranking as a table (:func:`mix_table`);
    ``with_stores``: also those stores, as a resume request's entries."""
    table, reads = rank_for(measurements, summary, settings, weights)
    favoured = could_favour(reads, table, weights, settings.get("race_margin"))
    lines = mix_lines(name, weights, table, chosen, favoured, settings[C.SWEEP])
    if with_table:
        lines += ["", *mix_table(table, chosen, favoured)]
    return (lines, favoured_stores(favoured)) if with_stores else lines
