"""Write the recommendation of a sweep: ``recommendation.csv``, ``recommendation.md`` and the
report's first page, from the aggregated tables (ranked by :mod:`.ranking`, worded by
:mod:`.wording`)."""

from __future__ import annotations

import json

import pandas as pd

from h5sweep.analyze.data_words import data_sentence
from h5sweep.analyze.decision import Sheet, sheet
from h5sweep.analyze.ranking import rank_selected_reads, selected_reads
from h5sweep.analyze.whatif import decide
from h5sweep.analyze.wording import (
    evidence,
    latency_caveat,
    machine_caveat,
    markdown,
    restructured,
    unverified_caveat,
)
from h5sweep.cases import CASE_SPECS
from h5sweep.storage import columns as C


def recommend(
    measurements_path: str,
    summary_path: str,
    settings: dict,
    csv_out: str,
    md_out: str,
    rst_out: str | None = None,
    decision_out: str | None = None,
    settings_out: str | None = None,
) -> tuple[pd.DataFrame, Sheet]:
    """Write ``recommendation.csv`` and ``recommendation.md`` (and the report's first page,
    ``rst_out``, the decision sheet first; and the sheet alone, ``decision_out``) from the
    aggregated tables; ``settings_out``: the settings ranked with, as JSON, for
    ``python -m h5sweep.compare.whatif``. Returns the ranking and the sheet (for the page,
    :mod:`h5sweep.report.interactive`)."""
    from h5sweep.measure.records import read_tables, write_table

    measurements = read_tables([measurements_path])
    summary = read_tables([summary_path])
    reads = selected_reads(measurements, settings)
    table = rank_selected_reads(reads, summary, settings)
    why = evidence(reads, table)
    caveats = (machine_caveat(reads), unverified_caveat(reads), latency_caveat(reads))
    caveat = " ".join(c for c in caveats if c) or None
    write_table(table, csv_out)
    dataset = settings.get("dataset") or {}
    sections = case_sections(summary, measurements)
    with open(md_out, "w") as out:
        out.write(markdown(table, settings, why, caveat, "\n\n".join(sections), data_sentence(dataset, summary)))
    chosen = table[table[C.RECOMMENDED]] if not table.empty else table
    what_if = [
        line
        for name, weights in (settings["recommend"].get("mixes") or {}).items()
        for line in decide(measurements, summary, settings, name, weights, chosen)
    ]
    the_sheet = sheet(table, summary, settings, caveat, memory_bytes(), what_if)
    if settings_out:
        with open(settings_out, "w") as out:
            json.dump(settings, out, indent=1, sort_keys=True, default=str)
    if decision_out:
        with open(decision_out, "w") as out:
            out.write(the_sheet.markdown())
    if rst_out:
        with open(rst_out, "w") as out:
            section = "\n\n".join(_rst_heading(text) for text in sections)
            out.write(the_sheet.restructured() + "\n" + restructured(table, settings, why, None, section))
    return table, the_sheet


def case_sections(summary: pd.DataFrame, measurements: pd.DataFrame) -> list[str]:
    """Each case's own section of recommendation.md (its spec's verdict hook), where it has one."""
    found = [spec.hook("verdict")(summary, measurements) for spec in CASE_SPECS if spec.verdict]
    return [text for text in found if text]


def _rst_heading(section: str) -> str:
    """A section's ``## Title`` line as a reStructuredText heading."""
    head, _, rest = section.partition("\n")
    title = head.removeprefix("## ")
    return f"{title}\n{'-' * len(title)}\n{rest}"


def memory_bytes() -> int | None:
    """This machine's memory (what a page cache could hold at most), or None where unknown."""
    import os

    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
