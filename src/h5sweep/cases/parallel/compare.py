"""The parallel passes across sweeps of two dataset sizes, for ``python -m h5sweep.compare``
(Folk & Choi's Fig. 7, Tables 8 and 11): the case's ``compare`` hook (the casting and the
ratios: :mod:`.sizes`; the comparative findings: :mod:`.compare_findings`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.compare_findings import FINDINGS
from h5sweep.cases.parallel.sizes import (
    KIND,
    RATIO,
    RATIO_HIGH,
    RATIO_LOW,
    ROLES,
    cast_sizes,
    interval_words,
    machines,
    passes,
    ratios,
    size_of,
)
from h5sweep.kit import claims
from h5sweep.kit.claims import Party


def parallel_sizes(runs: list, roles: dict[str, str] | None = None) -> pd.DataFrame:
    """Every cast of the two sizes (see :func:`cast_sizes`): the ratios of :func:`ratios`, with
    the parties and the two sizes in elements."""
    found = claims.parties(runs)
    given = _given(found, roles or {})
    frames = []
    for cast in cast_sizes(found, given)[0]:
        table = ratios(cast)
        frames.append(
            table.assign(
                small=cast["orig"].name,
                large=cast["big"].name,
                small_elements=size_of(cast["orig"]),
                large_elements=size_of(cast["big"]),
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _given(found: list[Party], roles: dict[str, str]) -> dict[str, Party]:
    out = {}
    for role in ROLES:
        if role in roles:
            party = claims.find_party(found, roles[role])
            if party is not None:
                out[role] = party
    return out


def compare_sizes(runs: list, out: Path, roles: dict[str, str] | None = None) -> list[str]:
    """Sweeps of two dataset sizes with parallel passes: ``parallel-sizes.csv`` and
    ``parallel-sizes.png`` in ``out``, and the section of comparison.md ([] where the sweeps
    hold no parallel passes at two sizes)."""
    found = claims.parties(runs)
    casts, missing = cast_sizes(found, _given(found, roles or {}))
    if not casts:
        sizes = {size_of(p) for p in found if passes(p) is not None}
        if len(sizes) < 2:
            return []
        return ["## Parallel passes of two dataset sizes (Folk & Choi Fig. 7, Tables 8 and 11)", "", missing, ""]
    sizes = parallel_sizes(runs, roles)
    sizes.to_csv(out / "parallel-sizes.csv", index=False)
    from h5sweep.cases.parallel.compare_figures import plot_parallel_sizes

    plot_parallel_sizes(runs, out / "parallel-sizes.png")
    return parallel_markdown(sizes, casts)


def parallel_markdown(sizes: pd.DataFrame, casts: list[dict[str, Party]]) -> list[str]:
    """The parallel passes of two dataset sizes: the larger's bandwidth over the smaller's with
    its interval, and Table 8's sentence judged on them."""
    lines = [
        "## Parallel passes: the larger dataset over the smaller (Folk & Choi Fig. 7, Tables 8 and 11)",
        "",
        "| smaller | larger | operation | mode | P | layout | units per access | bandwidth ratio | 95% interval |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in sizes.iterrows():
        lines.append(
            f"| {r['small']} | {r['large']} | {r[PC.OPERATION]} | {r[PC.MODE]} | {int(r[PC.PROCESSES])} | {r[KIND]} "
            f"| {int(r[PC.UNITS_PER_ACCESS])} | {r[RATIO]:.2f} | {interval_words(r[RATIO_LOW], r[RATIO_HIGH])} |"
        )
    table8 = next(f for f in FINDINGS if f.key == "size-parallel")
    for cast in casts:
        apart = machines(cast)
        if apart:
            lines += ["", f"{cast['orig'].name} against {cast['big'].name}: {apart}."]
        result = table8.check(cast) or (claims.UNMEASURED, "no contiguous independent or collective pass on both")
        verdict = claims.UNMEASURED if result[0] == claims.UNMEASURED else _verdict(result[0])
        evidence = result[1]
        lines += [
            "",
            f"Folk & Choi, Table 8 (contiguous storage): \u201c{table8.quote}\u201d {cast['orig'].name} against "
            f"{cast['big'].name}: **{verdict}** ({evidence}).",
        ]
    lines.append("")
    return lines


def _verdict(holds: bool | None) -> str:
    return claims.HOLDS if holds else claims.FAILS if holds is False else claims.INCONCLUSIVE
