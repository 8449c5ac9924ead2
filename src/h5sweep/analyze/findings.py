"""The studies' findings, checked on a sweep's own numbers.

Each :class:`Finding` quotes one sentence of a study h5sweep reproduces (its document and
section), states what is tested with the sentence's conditions (the filesystem, the axis, the
sizes, the process counts), and checks it on one filesystem's summary. A check returns None
where the sweep did not measure what the sentence needs under its conditions (the verdict is
then ``not measured``, naming the keys and the study config that measure it), else the verdict
with the numbers it rests on: ``holds`` only where the intervals lie wholly on the sentence's
side, ``does not hold`` where they lie wholly on the other, and ``inconclusive`` where they
admit both. Each case registers the findings on its rows (its spec's ``findings``; the built-in
read and write cases', one module per study, in :mod:`h5sweep.cases.studies`). Nothing here
imports an I/O library.
"""

from __future__ import annotations

import pandas as pd

from h5sweep.analyze.data_words import data_sentence
from h5sweep.analyze.objectstore_findings import FINDINGS as OBJECT_STORE_FINDINGS
from h5sweep.cases import CASE_SPECS
from h5sweep.kit.claims import FAILS, HOLDS, INCONCLUSIVE, UNMEASURED, VERDICTS, Finding
from h5sweep.storage import columns as C

__all__ = ["FAILS", "FINDINGS", "HOLDS", "INCONCLUSIVE", "UNMEASURED", "VERDICTS", "Finding", "evaluate", "judge"]

COLUMNS = [
    C.FILESYSTEM,
    C.FINDING,
    C.STUDY,
    C.SECTION,
    C.DOCUMENT,
    C.QUOTE,
    C.CLAIM,
    C.STATEMENT,
    C.VERDICT,
    C.EVIDENCE,
    C.NEEDS,
    C.STUDY_CONFIG,
]


# each case's own, declared in its package (its spec's ``findings``)
FINDINGS: list[Finding] = [finding for spec in CASE_SPECS for finding in (spec.hook("findings") or ())]
# and the publications' on object storage, not among the seeds
FINDINGS += OBJECT_STORE_FINDINGS


def evaluate(summary: pd.DataFrame, shape: tuple) -> pd.DataFrame:
    """Every finding's verdict per filesystem of ``summary``, with its evidence."""
    rows = []
    filesystems = sorted(set(summary[C.FILESYSTEM])) if C.FILESYSTEM in summary and len(summary) else ["-"]
    for filesystem in filesystems:
        mine = summary[summary[C.FILESYSTEM] == filesystem] if len(summary) else summary
        for finding in FINDINGS:
            verdict, evidence = judge(finding, mine, tuple(shape))
            rows.append(
                {
                    C.FILESYSTEM: filesystem,
                    C.FINDING: finding.key,
                    C.STUDY: finding.study,
                    C.SECTION: finding.section,
                    C.DOCUMENT: finding.document,
                    C.QUOTE: finding.quote,
                    C.CLAIM: finding.claim,
                    C.STATEMENT: finding.statement,
                    C.VERDICT: verdict,
                    C.EVIDENCE: evidence,
                    C.NEEDS: finding.needs,
                    C.STUDY_CONFIG: finding.config,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def judge(finding: Finding, summary: pd.DataFrame, shape: tuple) -> tuple[str, str]:
    """One finding's verdict and evidence on one filesystem's summary."""
    try:
        result = finding.check(summary, tuple(shape))
    except (KeyError, ValueError, IndexError, ZeroDivisionError):  # a column the sweep lacks
        result = None
    if result is None:
        return UNMEASURED, f"measure it with {finding.needs} (as {finding.config} does)"
    holds, evidence = result
    if isinstance(holds, str):  # measured, not under the sentence's conditions: the check says why
        return UNMEASURED, f"{evidence}; measure it with {finding.needs} (as {finding.config} does)"
    return (HOLDS if holds else FAILS if holds is False else INCONCLUSIVE), evidence


def markdown(table: pd.DataFrame, title: str = "Findings of the studies, checked on this sweep", data: str = "") -> str:
    """``findings.md``: a count of verdicts, then one table per filesystem, each finding with the
    seed's sentence it tests; ``data``: the values measured, in words (:mod:`.data_words`)."""
    lines = [f"# {title}", "", *([data, ""] if data else [])]
    counts = table[C.VERDICT].value_counts()
    lines += [
        f"{len(FINDINGS)} findings of the studies h5sweep reproduces, each checked on every filesystem: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)
        + ". A finding holds only where the 95% intervals lie wholly on its sentence's side, under the "
        "sentence's conditions; 'inconclusive' where they admit both answers; 'not measured' names the keys "
        "and the study config that would measure it.",
        "",
    ]
    keys = [C.RUN, C.FILESYSTEM] if C.RUN in table else [C.FILESYSTEM]
    for key, group in table.groupby(keys, sort=True):
        lines += [
            f"## {' '.join(key)}",
            "",
            "| study | section | the study says | tested here | verdict | evidence |",
            "|---|---|---|---|---|---|",
        ]
        for _, r in group.iterrows():
            lines.append(
                f"| {r[C.STUDY]} | {r[C.SECTION]} | {_says(r)} | {r[C.STATEMENT]} | {r[C.VERDICT]} | {r[C.EVIDENCE]} |"
            )
        lines.append("")
    return "\n".join(lines)


def _says(row) -> str:
    """What the study says: the seed's sentence in quotes, or a publication's claim in h5sweep's
    words with its address."""
    quote = row[C.QUOTE]
    if isinstance(quote, str) and quote:
        return f"\u201c{quote}\u201d"
    claim = row[C.CLAIM] if C.CLAIM in row and isinstance(row[C.CLAIM], str) else ""
    return f"{claim} (in h5sweep's words; {row[C.DOCUMENT]})"


def write(summary_path: str, shape: tuple, csv_out: str, md_out: str, dataset: dict | None = None) -> pd.DataFrame:
    """The findings (checked in the aggregate job): ``findings.csv`` and ``findings.md`` from the
    typed summary; ``dataset``: the config's block, which names the values measured."""
    summary = pd.read_parquet(summary_path)
    table = evaluate(summary, shape)
    table.to_csv(csv_out, index=False)
    with open(md_out, "w") as out:
        out.write(markdown(table, data=data_sentence(dataset or {}, summary)))
    return table
