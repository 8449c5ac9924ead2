"""The decision sheet (``decision.md``, and the report's first section): one page per sweep
that says, per filesystem, which store to choose and how to read it, what that choice costs
in space and write time against the smallest store and the fastest writer, the best
compressed choice and what it costs in reads, what the choice gains against the reference
store and the case it hurts most, the evidence the verdict rests on, the size the sweep ran
at against the size the user stores, and the code that writes and reads the chosen store
(its backend's recipe, :mod:`h5sweep.backends.recipes`). Built from the ranking
(:mod:`.ranking`) and the summary; nothing here imports an I/O library (a Zarr recipe asks
zarr-python for its codec's JSON form)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from h5sweep.analyze.data_words import data_sentence
from h5sweep.analyze.ranking import CANDIDATE_KEYS, SAME_SIZE, STATISTIC_WORDS, candidate_mask, mix_in, rows_of
from h5sweep.analyze.wording import label, not_ranked, several_options
from h5sweep.backends import REGISTRY, spec
from h5sweep.backends.recipes import Store
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C
from h5sweep.storage import objectstore as O
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.layouts import Layout
from h5sweep.storage.objectstore import REQUESTS_PER_UNIT
from h5sweep.storage.sizes import count, duration, duration_range, factor, rate, size

# a difference of two stores' median write times is called sure only where each has at least
# this many writes: the fewest whose lowest and highest hold the median with 95% (the chance
# that all n fall on one side of it is 2 * 0.5**n, under 5% from n = 6)
SURE_WRITES = 6


@dataclass
class Section:
    """One filesystem's decision: a heading and its points (``(label, text)``)."""

    heading: str
    points: list[tuple[str, str]] = field(default_factory=list)
    code: list[tuple[str, str]] = field(default_factory=list)  # (what it does, Python)


@dataclass
class Sheet:
    title: str
    lead: list[str]
    sections: list[Section]
    notes: list[str]

    def markdown(self) -> str:
        lines = [f"# {self.title}", "", *[p + "\n" for p in self.lead]]
        for section in self.sections:
            lines += [f"## {section.heading}", ""]
            lines += [f"- **{name}** {text}" if name else f"- {text}" for name, text in section.points]
            lines.append("")
            for caption, code in section.code:
                lines += [f"{caption}", "", "```python", code, "```", ""]
        lines += [n + "\n" for n in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def restructured(self, level: str = "=") -> str:
        """The same in reStructuredText (the report's first page); ``level``: the title's
        underline (its sections take the next)."""
        sub = {"=": "-", "-": "~"}[level]

        def rst(text: str) -> str:
            return text.replace("`", "``").replace("*", "\\*") if "``" not in text else text

        lines = [self.title, level * len(self.title), "", *[rst(p) + "\n" for p in self.lead]]
        for section in self.sections:
            lines += [section.heading, sub * len(section.heading), ""]
            lines += [f"- **{name}** {rst(text)}" if name else f"- {rst(text)}" for name, text in section.points]
            lines.append("")
            for caption, code in section.code:
                lines += [rst(caption), "", ".. code-block:: python", ""]
                lines += [f"   {line}" for line in code.splitlines()] + [""]
        lines += [rst(n) + "\n" for n in self.notes]
        return "\n".join(lines).rstrip() + "\n"


def _name(row, group: pd.DataFrame) -> str:
    return label(row, with_backend=True, with_option=row[C.BACKEND] in several_options(group))


def _n(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _is_raced(row) -> bool:
    return pd.notna(row.get(C.RACED_OUT_ROUND))


def _writes(summary: pd.DataFrame, row) -> tuple[int, float, float]:
    """How many timed writes a store has (its write case's first variant) and their median
    interval (NaN where one write)."""
    mine = rows_of(summary, row)
    mine = mine[mine[C.CASE] == "write"] if C.CASE in mine else mine.iloc[0:0]
    if mine.empty:
        return 0, float("nan"), float("nan")
    first = mine.iloc[0]
    low, high = first.get(C.MEDIAN_CI_LOW_S, float("nan")), first.get(C.MEDIAN_CI_HIGH_S, float("nan"))
    return int(first.get(C.REPEATS, 1)), float(low), float(high)


def _bytes_per_unit(summary: pd.DataFrame, weights: dict[str, float]) -> float:
    """The bytes one unit of work selects: each case's reads per unit times its median
    selection (the same selections for every store)."""
    if C.BYTES_SELECTED not in summary:
        return float("nan")
    total = 0.0
    for case, reads in weights.items():
        of_case = summary.loc[summary[C.CASE] == case, C.BYTES_SELECTED].dropna()
        if of_case.empty:
            return float("nan")
        total += reads * float(of_case.median())
    return total


def _choice(pick, group: pd.DataFrame, summary: pd.DataFrame, settings: dict) -> str:
    text = _name(pick, group)
    if pick.get(C.READ_OPTION_SETTING) and pick[C.BACKEND] in several_options(group):
        text += f" (`{pick[C.READ_OPTION_SETTING]}`)"
    recipe = _recipe_of(pick, settings)
    if recipe is not None and recipe.replaces:
        text += f", {recipe.replaces}"
    words = [f"{duration(pick[objectives.MIX_SECONDS])} per unit of work"]
    if pd.notna(pick.get(objectives.MIX_SECONDS_CI_LOW)):
        low, high = pick[objectives.MIX_SECONDS_CI_LOW], pick[objectives.MIX_SECONDS_CI_HIGH]
        words[0] += f" (95% interval {duration_range(low, high)})"
    else:
        words[0] += " (no interval: one read per case)"
    throughput = rate(_bytes_per_unit(summary, mix_in(pick)), pick[objectives.MIX_SECONDS])
    if throughput:
        words.append(f"{throughput} of selected data")
    objective = objectives.objective_of(pick.get(C.OBJECTIVE))
    if not objective.is_mix_time:  # the mix's time is said above; another objective's score besides
        words.append(f"score {pick[C.SCORE]:.3g} ({objective.words})")
    return f"{text}: " + ", ".join(words) + "."


def _tied(pick, group: pd.DataFrame) -> str | None:
    tied = group[group[C.TIED_WITH_BEST] & (group.index != pick.name)]
    if tied.empty:
        return None
    said = []
    for _, row in tied.head(3).iterrows():
        interval = (
            f", 95% interval {row[objectives.TO_BEST_CI_LOW]:.3g}-{row[objectives.TO_BEST_CI_HIGH]:.3g}"
            if pd.notna(row[objectives.TO_BEST_CI_LOW])
            else ""
        )
        said.append(f"{_name(row, group)} ({factor(row[objectives.TO_BEST])} the best's score{interval})")
    more = f" and {len(tied) - 3} more" if len(tied) > 3 else ""
    return (
        f"{'; '.join(said)}{more}: the measurements cannot tell them apart from the best; the choice is the "
        "smallest file of these (files within 5% count as the same size, and of those the best score wins)."
    )


def _costs(pick, group: pd.DataFrame, summary: pd.DataFrame, target: float) -> str:
    sized = group[group[C.FILE_BYTES].notna() & (group[C.FILE_BYTES] > 0)]
    parts = []
    if not sized.empty and pd.notna(pick[C.FILE_BYTES]):
        smallest = sized.loc[sized[C.FILE_BYTES].idxmin()]
        at = f"{size(pick[C.FILE_RATIO] * target)} for {size(target)} of data"
        if pick[C.FILE_BYTES] <= smallest[C.FILE_BYTES] * SAME_SIZE:
            parts.append(f"space: {at}, the smallest store's size (within 5%)")
        else:
            parts.append(
                f"space: {at}, {factor(pick[C.FILE_BYTES] / smallest[C.FILE_BYTES])} the smallest store's "
                f"({_name(smallest, group)}: {size(smallest[C.FILE_RATIO] * target)})"
            )
    written = group[group[C.WRITE_MEDIAN_S].notna()]
    if not written.empty and pd.notna(pick[C.WRITE_MEDIAN_S]):
        fastest = written.loc[written[C.WRITE_MEDIAN_S].idxmin()]
        mine, theirs = _writes(summary, pick), _writes(summary, fastest)
        if fastest.name == pick.name:
            said = _n(mine[0], "write")
            parts.append(f"write: {duration(pick[C.WRITE_MEDIAN_S])}, the fastest writer ({said} of it)")
        elif min(mine[0], theirs[0]) >= SURE_WRITES and mine[1] > theirs[2]:
            ratio = pick[C.WRITE_MEDIAN_S] / fastest[C.WRITE_MEDIAN_S]
            parts.append(
                f"write: {duration(pick[C.WRITE_MEDIAN_S])}, {factor(ratio)} "
                f"the fastest writer's ({_name(fastest, group)}: {duration(fastest[C.WRITE_MEDIAN_S])}; surely slower: "
                f"{mine[0]} and {theirs[0]} writes, the median intervals apart)"
            )
        else:
            why = (
                f"too few writes to tell them apart (a sure difference takes {SURE_WRITES} each)"
                if min(mine[0], theirs[0]) < SURE_WRITES
                else "the median intervals overlap: not a sure difference"
            )
            parts.append(
                f"write: {duration(pick[C.WRITE_MEDIAN_S])} ({_n(mine[0], 'write')} of it); the fastest measured, "
                f"{_name(fastest, group)}: {duration(fastest[C.WRITE_MEDIAN_S])} ({_n(theirs[0], 'write')}); {why}"
            )
    return "; ".join(parts) + "." if parts else "no file size or write time was measured."


def _requests(pick, group: pd.DataFrame) -> str | None:
    """On an object store: the requests a unit of work sends, against the store that sends fewest."""
    counted = group.dropna(subset=[REQUESTS_PER_UNIT]) if REQUESTS_PER_UNIT in group else group.iloc[0:0]
    if counted.empty or pd.isna(pick[REQUESTS_PER_UNIT]):
        return None
    fewest = counted.loc[counted[REQUESTS_PER_UNIT].idxmin()]
    said = f"{count(pick[REQUESTS_PER_UNIT])} per unit of work (each case's mean per read, by the mix)"
    if fewest.name == pick.name:
        return said + ", the fewest of the ranked stores."
    return said + f"; the fewest: {_name(fewest, group)}, {count(fewest[REQUESTS_PER_UNIT])}."


def _emulated(group: pd.DataFrame) -> str | None:
    """On a filesystem with emulated faults: which, that they were emulated, and how the stores
    were compared (on the selections every store read undisturbed, or not at all)."""
    labels = [x for x in dict.fromkeys(group.get(O.FAULTS_EMULATED, pd.Series(dtype=str)).dropna()) if x != "none"]
    if not labels:
        return None
    said = (
        f"{', '.join(labels)}: emulated, not met, each injected by a relay on this machine's loopback into the "
        f"answers of a local S3 server (`filesystems.<name>.s3.faults`)."
    )
    ranked = group[group[C.SCORE].notna()] if C.SCORE in group else group.iloc[0:0]
    disturbed = int(group[O.READS_DISTURBED].fillna(0).sum()) if O.READS_DISTURBED in group else 0
    if not ranked.empty:
        said += (
            f" The stores are compared on the {_n(int(ranked[C.SELECTIONS].min()), 'read')} of each store whose "
            f"selections every store read undisturbed; {_n(disturbed, 'read')} met a fault, a failed answer or a "
            "retry and were left out of the ranking (not of the time added below)."
        )
    else:
        said += f" No store could be ranked on undisturbed reads ({_n(disturbed, 'read')} disturbed)."
    return said


def _fault_cost(group: pd.DataFrame) -> str | None:
    """Per store and read option on a filesystem with emulated faults: the time the faults add
    to a unit of work against the fault-free variant of the same filesystem, and the retries
    per read."""
    if O.ADDED_S_PER_UNIT not in group or group[O.FAULT_FREE_FILESYSTEM].isna().all():
        return None
    said = []
    for _, row in group.iterrows():
        if pd.isna(row.get(O.FAULT_FREE_FILESYSTEM)):
            continue
        added = row[O.ADDED_S_PER_UNIT]
        if pd.isna(added):
            time = f"no selection read on both {row[C.FILESYSTEM]} and {row[O.FAULT_FREE_FILESYSTEM]}"
        else:
            time = f"{'+' if added >= 0 else '-'}{duration(abs(added))} per unit of work"
            if pd.notna(row[O.ADDED_S_PER_UNIT_CI_LOW]):
                low, high = row[O.ADDED_S_PER_UNIT_CI_LOW], row[O.ADDED_S_PER_UNIT_CI_HIGH]
                time += f" (95% interval {low * 1e3:+.3g} to {high * 1e3:+.3g} ms"
            else:
                time += " (a point estimate, no interval"
            time += f", paired on {_n(int(row[O.ADDED_PAIRS]), 'selection')})"
        retries = row.get(O.RETRIES_PER_READ)
        retried = f", {retries:.3g} retries per read" if pd.notna(retries) else ""
        failed = int(row.get(O.READS_FAILED) or 0)
        failed_words = f", {_n(failed, 'read')} failed" if failed else ""
        said.append(f"{_name(row, group)}: {time}{retried}{failed_words}")
    if not said:
        return None
    fault_free = group[O.FAULT_FREE_FILESYSTEM].dropna().iloc[0]
    return (
        f"against the same store on {fault_free} (no faults; each read that did not fail, disturbed or not): "
        + "; ".join(said)
        + "."
    )


def _compressed(pick, group: pd.DataFrame, target: float) -> str:
    if pick[C.COMPRESSION] != "none":
        return f"the choice is compressed ({pick[C.COMPRESSION]}, {factor(pick[C.FILE_RATIO])} the raw data)."
    compressed = group[group[C.COMPRESSION] != "none"]
    raced = compressed[compressed.apply(_is_raced, axis=1)] if not compressed.empty else compressed
    measured = compressed[compressed[C.MEETS_LIMITS] & ~compressed.index.isin(raced.index)]
    if not measured.empty:
        best = measured.iloc[0]
        against = (
            "the choice's"
            if bool(group.loc[pick.name, C.TIED_WITH_BEST]) and pick[objectives.TO_BEST] == 1
            else "the best's"
        )
        interval = (
            f", 95% interval {best[objectives.TO_BEST_CI_LOW]:.3g}-{best[objectives.TO_BEST_CI_HIGH]:.3g}"
            if pd.notna(best[objectives.TO_BEST_CI_LOW])
            else ""
        )
        return (
            f"{_name(best, group)} (rank {int(best[C.RANK])}): {size(best[C.FILE_RATIO] * target)} "
            f"({factor(best[C.FILE_RATIO])} the raw data), {factor(best[objectives.TO_BEST])} {against} "
            f"score{interval}."
        )
    if not raced.empty:
        first = raced.sort_values(C.RACED_OUT_AT_LEAST).iloc[0]
        return (
            f"{_name(first, group)}: raced out at round {int(first[C.RACED_OUT_ROUND])}, at least "
            f"{factor(first[C.RACED_OUT_AT_LEAST])} slower than the best (the closest of {len(raced)} compressed "
            f"store{'s' if len(raced) != 1 else ''} raced out)."
        )
    return "no compressed store was measured within the limits."


def _case_rows(summary: pd.DataFrame, row, case: str) -> pd.DataFrame:
    """A ranked store's summary rows of one read case, in the read option and cache state it
    was ranked by (its primary variant where the summary cannot tell options apart)."""
    return summary[_case_mask(summary, row, case)]


def _case_mask(summary: pd.DataFrame, row, case: str) -> pd.Series:
    """Which of the summary's rows :func:`_case_rows` takes."""
    # one mask, narrowed step by step (a take of every column costs the same for one row as
    # for all: the decision asks this of every store and case)
    mine = candidate_mask(summary, row) & (summary[C.CASE] == case)
    option = row.get(C.READ_OPTION)
    if option and C.VARIANT in summary:
        named = mine & summary[C.VARIANT].fillna("").str.contains(str(option), regex=False)
        mine = named if named.any() else mine
    several = C.VARIANT in summary and summary.loc[mine, C.VARIANT].nunique() > 1
    if several and C.PRIMARY in summary:
        primary = mine & summary[C.PRIMARY].fillna(False).astype(bool)
        mine = primary if primary.any() else mine
    if C.CACHE_STATE in summary and mine.sum() > 1:
        cold = mine & (summary[C.CACHE_STATE] == "cold")
        warm = mine & ~cold
        first = row.get(C.STATISTIC) == "first-access"
        mine = cold if first and cold.any() else warm if warm.any() else mine
    return mine


def _reads_per_case(summary: pd.DataFrame, row, cases: list[str]) -> tuple[int, ...]:
    repeats = summary[C.REPEATS].to_numpy(dtype=float, na_value=0.0)  # no take of the rows: a sum
    return tuple(int(repeats[_case_mask(summary, row, case).to_numpy(bool)].sum()) for case in cases)


def _reads_words(reads: tuple[int, ...], cases: list[str]) -> str:
    return ", ".join(f"{case} {n}" for case, n in zip(cases, reads, strict=True))


def _evidence(group: pd.DataFrame, summary: pd.DataFrame) -> str:
    """What the verdict rests on, true of every store it describes: the reads of each case the
    ranked stores and the raced-out ones read (apart), and the timed writes per store."""
    cases = list(mix_in(group))
    raced = group[group.apply(_is_raced, axis=1)]
    ranked = group.drop(raced.index)
    # the columns the counts below read, taken once: each store's rows are then taken of these
    # alone, not of every column of the summary
    counted = (C.CASE, C.VARIANT, C.PRIMARY, C.CACHE_STATE, C.REPEATS, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S)
    summary = summary[[c for c in dict.fromkeys((*CANDIDATE_KEYS, *counted)) if c in summary]]
    parts = []
    for stores, words in ((ranked, "ranked"), (raced, "raced out")):
        if stores.empty:
            continue
        reads = Counter(_reads_per_case(summary, row, cases) for _, row in stores.iterrows())
        text = f"{_n(len(stores), 'store')} {words}"
        if words == "raced out":
            text += (
                f" (from round {int(stores[C.RACED_OUT_ROUND].min())}, each at least "
                f"{factor(stores[C.RACED_OUT_AT_LEAST].min())} slower than the best, a one-sided 95% bound)"
            )
        each = [
            f"{'each' if n == len(stores) else f'{n} of them'} read {_reads_words(r, cases)} times"
            for r, n in reads.most_common()
        ]
        parts.append(f"{text}: {'; '.join(each)}")
    writes = Counter(_writes(summary, row)[0] for _, row in group.iterrows())
    writes.pop(0, None)
    if writes:
        said = ", ".join(
            f"{_n(k, 'timed write')} for {_n(n, 'store')}" for k, n in sorted(writes.items(), reverse=True)
        )
        if len(writes) > 1:
            said += " (the write race stopped the slowest writers)"
        parts.append(said)
    return ". ".join(parts) + "."


def _reference_rows(group: pd.DataFrame) -> pd.DataFrame:
    """The ranked rows of the reference store every ratio is to (none where not ranked)."""
    return group[group[C.IS_REFERENCE].fillna(False).astype(bool)] if C.IS_REFERENCE in group else group.iloc[0:0]


def _gains(pick, group: pd.DataFrame) -> str | None:
    """The choice against the reference store, for the whole mix, with its interval."""
    name = pick.get(C.REFERENCE_STORE) or "the reference store"
    if bool(pick.get(C.IS_REFERENCE)):
        return f"the choice is the reference store ({name}) every ratio is to."
    reference = _reference_rows(group)
    if reference.empty or pd.isna(pick.get(objectives.MIX_RATIO)):
        return None
    ref = reference.iloc[0]
    ratio, low, high = pick[objectives.MIX_RATIO], pick[objectives.MIX_RATIO_CI_LOW], pick[objectives.MIX_RATIO_CI_HIGH]
    if pd.isna(low):
        sure = "no interval: one read per case"
    elif high < 1:
        sure = "surely faster"
    elif low > 1:
        sure = "surely slower"
    else:
        sure = "not surely faster: the interval holds 1"
    interval = "" if pd.isna(low) else f"; 95% interval {low:.2f}-{high:.2f}x"
    return (
        f"{factor(ratio)} {name}'s time for the mix ({duration(pick[objectives.MIX_SECONDS])} against "
        f"{duration(ref[objectives.MIX_SECONDS])} per unit of work{interval}): {sure}."
    )


def _hurts(pick, group: pd.DataFrame, summary: pd.DataFrame) -> str | None:
    """The read case the choice slows most against the reference store: its paired ratio per
    read (the median of the per-selection ratios) with its interval."""
    if bool(pick.get(C.IS_REFERENCE)) or C.RATIO_TO_CONTIGUOUS not in summary:
        return None
    name = pick.get(C.REFERENCE_STORE) or "the reference store"
    reference = _reference_rows(group)
    worst = None
    for case in mix_in(pick):
        mine = _case_rows(summary, pick, case).dropna(subset=[C.RATIO_TO_CONTIGUOUS])
        if mine.empty:
            continue
        row = mine.iloc[0]
        if worst is None or row[C.RATIO_TO_CONTIGUOUS] > worst[1][C.RATIO_TO_CONTIGUOUS]:
            worst = (case, row)
    if worst is None:
        return None
    case, row = worst
    ratio, low, high = row[C.RATIO_TO_CONTIGUOUS], row[C.RATIO_CI_LOW], row[C.RATIO_CI_HIGH]
    if ratio <= 1:
        return (
            f"no case: every case reads faster per read than {name} (the slowest against it: {case}, {factor(ratio)})."
        )
    theirs = _case_rows(summary, reference.iloc[0], case) if not reference.empty else summary.iloc[0:0]
    against = f" against {duration(theirs.iloc[0][C.MEDIAN_S])}" if not theirs.empty else ""
    sure = "surely slower" if low > 1 else "not surely slower: the interval holds 1"
    return (
        f"{case}, {factor(ratio)} {name}'s time per read (median {duration(row[C.MEDIAN_S])}{against}; paired "
        f"ratio's 95% interval {low:.2f}-{high:.2f}x, {_n(int(row[C.REPEATS]), 'read')}): {sure}."
    )


def _recipe_of(pick, settings: dict):
    """The chosen store's recipe (its backend's), or None where the backend or the dataset's
    shape is not known."""
    made = spec(pick[C.BACKEND]).recipe if pick[C.BACKEND] in REGISTRY else None
    data = settings.get("dataset", {})
    if made is None or not data.get("shape") or not data.get(C.DTYPE):
        return None
    return made(
        Store(
            Layout.from_id(pick[C.LAYOUT_ID]),
            parse_compression(pick[C.COMPRESSION]),
            tuple(data["shape"]),
            str(data[C.DTYPE]),
            str(pick.get(C.READ_OPTION_SETTING) or ""),
        )
    )


def _recipe(pick, settings: dict) -> list[tuple[str, str]]:
    """The code that writes the chosen store and opens it as the sweep read it."""
    recipe = _recipe_of(pick, settings)
    if recipe is None:
        return []

    def noted(notes: tuple[str, ...]) -> str:
        return "".join(f" {note[0].upper()}{note[1:]}." for note in notes)

    return [
        (f"Write it (your array `data` to the file or directory `path`).{noted(recipe.write_notes)}", recipe.write),
        (f"Read it as it was measured.{noted(recipe.read_notes)}", recipe.read),
    ]


def _measured_at(group: pd.DataFrame, summary: pd.DataFrame, settings: dict, memory_bytes: int | None) -> str:
    data = settings.get("dataset", {})
    raw, target = data.get("raw_bytes"), settings["recommend"].get("target_bytes")
    shape = " x ".join(str(n) for n in data.get("shape", []))
    text = f"{shape} {data.get('dtype', '')} ({size(raw)})".strip() if raw else "the sweep's dataset"
    if target and raw and target != raw:
        text += f"; you store {size(target)} ({factor(target / raw)} as much)"
    text += "."
    cases = set(mix_in(group))
    reads = summary[(summary[C.FILESYSTEM] == group.iloc[0][C.FILESYSTEM]) & summary[C.CASE].isin(cases)]
    if C.CACHE_STATE in reads and not reads.empty:
        counts = reads.groupby(C.CACHE_STATE)[C.REPEATS].sum()
        cached = counts.reindex(["warm", "memory"]).fillna(0).sum()
        share = cached / counts.sum() if counts.sum() else 0
        if share > 0:
            said = f"{share:.0%}" if share >= 0.01 else "Under 1%"
            text += f" {said} of its reads came from memory (the page cache or a memory filesystem), not the device"
            big = target and (target > raw) and (memory_bytes is None or target > memory_bytes)
            text += (
                f": the measured array fits in memory, yours ({size(target)}) would not, so those reads would "
                "come from the device and this ranking may not carry over."
                if big
                else "."
            )
    return text


def sheet(
    table: pd.DataFrame,
    summary: pd.DataFrame,
    settings: dict,
    caveat: str | None = None,
    memory_bytes: int | None = None,
    what_if: list[str] | None = None,
) -> Sheet:
    """The decision sheet of a ranked sweep (``recommendation.csv``'s table), its summary and
    the recommend job's settings (``dataset``: shape, dtype, raw_bytes; ``recommend``: with
    ``target_bytes``); ``caveat``: the machine's, said once."""
    recommend = settings["recommend"]
    objective = objectives.objective_of(recommend.get("objective"))
    title = f"Decision: {settings.get(C.SWEEP, '')}"
    if table.empty:
        return Sheet(title, ["No read case was ranked: nothing to decide."], [], [caveat] if caveat else [])
    first = table.iloc[0]
    statistic = STATISTIC_WORDS.get(first[C.STATISTIC], first[C.STATISTIC])
    lead = [
        f"Optimized: {objective.words} (recommend.objective: {objective.name}); reads per "
        f"unit of work: {first[C.WEIGHTS]} (recommend.weights); {statistic}. Lower is better; every interval "
        "is 95%."
    ]
    lead += [said for said in [data_sentence(settings.get("dataset") or {}, summary)] if said]
    raw = settings.get("dataset", {}).get("raw_bytes") or 0
    target = recommend.get("target_bytes") or raw
    sections = []
    for filesystem, group in table.groupby(C.FILESYSTEM, sort=True):
        group = group.sort_values(C.RANK)
        heading = f"{filesystem} ({group.iloc[0][C.FS_TYPE]})"
        chosen = group[group[C.RECOMMENDED]]
        faults = [
            (name, said)
            for name, said in (
                ("Faults:", _emulated(group)),
                ("", not_ranked(group, lambda row, g=group: _name(row, g))),
                ("Fault cost:", _fault_cost(group)),
            )
            if said
        ]
        if chosen.empty:
            why = "no store is ranked" if faults else "no store meets the limits (recommendation.md says why)"
            sections.append(Section(heading, [("No choice:", f"{why}."), *faults]))
            continue
        pick = chosen.iloc[0]
        section = Section(heading, [("Choose", _choice(pick, group, summary, settings))])
        for name, said in (("Gains:", _gains(pick, group)), ("Hurts:", _hurts(pick, group, summary))):
            if said:
                section.points.append((name, said))
        tied = _tied(pick, group)
        if tied:
            section.points.append(("Tied:", tied))
        requests = _requests(pick, group)
        if requests:
            section.points.append(("Requests:", requests))
        section.points += faults
        section.points += [
            ("Costs:", _costs(pick, group, summary, target)),
            ("Best compressed:", _compressed(pick, group, target)),
            ("Evidence:", _evidence(group, summary)),
            ("Measured at", _measured_at(group, summary, settings, memory_bytes)),
        ]
        section.code = _recipe(pick, settings)
        sections.append(section)
    if what_if:
        sections.append(Section("What if", [("", line) for line in what_if]))
    notes = [caveat] if caveat else []
    notes.append(
        "The full ranking: recommendation.md (and .csv); the studies' findings: findings.md; another read mix: "
        f"`python -m h5sweep.compare.whatif results/{settings.get(C.SWEEP, '<sweep>')} --weights case=reads,...`."
    )
    return Sheet(title, lead, sections, notes)
