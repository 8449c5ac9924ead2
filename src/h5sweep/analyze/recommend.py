"""Write the recommendation of a sweep: ``recommendation.csv``, ``recommendation.md`` and the
report's first page, from the aggregated tables (ranked by :mod:`.ranking`, worded by
:mod:`.wording`)."""

from __future__ import annotations

import pandas as pd

from h5sweep.analyze.ranking import rank_selected_reads, selected_reads
from h5sweep.analyze.wording import evidence, machine_caveat, markdown, restructured, unverified_caveat
from h5sweep.cases.parallel.verdict import PARALLEL_HEADING, parallel_markdown


def recommend(
    measurements_path: str, summary_path: str, settings: dict, csv_out: str, md_out: str, rst_out: str | None = None
) -> pd.DataFrame:
    """Write ``recommendation.csv`` and ``recommendation.md`` (and the report's first page,
    ``rst_out``) from the aggregated tables."""
    from h5sweep.measure.records import read_tables, write_table

    measurements = read_tables([measurements_path])
    summary = read_tables([summary_path])
    reads = selected_reads(measurements, settings)
    table = rank_selected_reads(reads, summary, settings)
    why = evidence(reads, table)
    caveat = " ".join(c for c in (machine_caveat(reads), unverified_caveat(reads)) if c) or None
    write_table(table, csv_out)
    parallel = parallel_markdown(summary, measurements)
    with open(md_out, "w") as out:
        out.write(markdown(table, settings, why, caveat, parallel))
    if rst_out:
        with open(rst_out, "w") as out:
            title = PARALLEL_HEADING.removeprefix("## ")
            section = parallel.replace(PARALLEL_HEADING, title + "\n" + "-" * len(title))
            out.write(restructured(table, settings, why, caveat, section))
    return table
