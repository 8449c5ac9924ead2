"""The parallel passes across sweeps of two dataset sizes, for ``python -m h5sweep.compare``
(Folk & Choi's Fig. 7, Tables 8 and 11): the case's ``compare`` hook."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from h5sweep.cases import claims
from h5sweep.cases.parallel import columns as PC
from h5sweep.storage import columns as C


def compare_sizes(runs: list, out: Path) -> list[str]:
    """Sweeps of two dataset sizes with parallel passes: ``parallel-sizes.csv`` and
    ``parallel-sizes.png`` in ``out``, and the section of comparison.md ([] where the sweeps
    hold no parallel passes at two sizes)."""
    sizes = parallel_sizes(runs)
    if sizes.empty:
        return []
    sizes.to_csv(out / "parallel-sizes.csv", index=False)
    from h5sweep.cases.parallel.compare_figures import plot_parallel_sizes

    plot_parallel_sizes(runs, out / "parallel-sizes.png")
    return parallel_markdown(sizes)


def parallel_sizes(runs: list) -> pd.DataFrame:
    """Parallel sweeps of two dataset sizes: the larger's median bandwidth over the smaller's
    per filesystem, operation, mode, P and layout kind (Folk & Choi's Fig. 7, Tables 8, 11)."""
    rows = []
    for run in runs:
        s = run.summary
        if C.CASE not in s or not (s[C.CASE] == "parallel").any():
            continue
        p = s[s[C.CASE] == "parallel"].assign(
            size=int(np.prod(run.shape)) if run.shape else 0,
            kind=lambda f: np.where(f[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked"),
        )
        rows.append(p)
    if len(rows) < 2 or len({int(r["size"].iloc[0]) for r in rows}) < 2:
        return pd.DataFrame()
    both = pd.concat(rows)
    keys = [C.FILESYSTEM, PC.OPERATION, PC.MODE, PC.PROCESSES, "kind"]
    small, large = both["size"].min(), both["size"].max()
    a = both[both["size"] == small].groupby(keys)[PC.BYTES_PER_S_MEDIAN].max()
    b = both[both["size"] == large].groupby(keys)[PC.BYTES_PER_S_MEDIAN].max()
    ratio = (b / a).dropna().rename("large_over_small").reset_index()
    return ratio.assign(small_elements=small, large_elements=large)


def parallel_markdown(sizes: pd.DataFrame) -> list[str]:
    """The parallel passes of two dataset sizes (Folk & Choi's Fig. 7, Tables 8 and 11): the
    larger's bandwidth over the smaller's, and Table 8's sentence judged on them."""
    lines = [
        "## Parallel passes: the larger dataset over the smaller (Folk & Choi Fig. 7, Tables 8 and 11)",
        "",
        "| filesystem | operation | mode | P | layout | bandwidth ratio |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in sizes.iterrows():
        lines.append(
            f"| {r[C.FILESYSTEM]} | {r[PC.OPERATION]} | {r[PC.MODE]} | {int(r[PC.PROCESSES])} | {r['kind']} "
            f"| {r['large_over_small']:.2f} |"
        )
    verdict, evidence = size_finding(sizes)
    lines += [
        "",
        f"Folk & Choi, Table 8 (contiguous storage): \u201c{SIZE_QUOTE}\u201d Here: **{verdict}** ({evidence}).",
        "",
    ]
    return lines


SIZE_QUOTE = "Neither type of parallel access was affected appreciably by the size of the file."


def size_finding(sizes: pd.DataFrame) -> tuple[str, str]:
    """Table 8's sentence on the contiguous parallel passes: every mode's bandwidth ratio of the
    two sizes within 25% either way (holds), one beyond 1.5x either way (does not hold)."""
    rows = sizes[(sizes["kind"] == "contiguous") & sizes[PC.MODE].isin(["independent", "collective"])]
    if rows.empty:
        return claims.UNMEASURED, "no contiguous independent or collective pass in both sweeps"
    ratios = rows["large_over_small"]
    evidence = f"larger over smaller {ratios.min():.2f}-{ratios.max():.2f}x over {len(rows)} (operation, mode, P)"
    if ratios.between(0.8, 1.25).all():
        return claims.HOLDS, evidence
    if ((ratios < 1 / 1.5) | (ratios > 1.5)).any():
        return claims.FAILS, evidence
    return claims.INCONCLUSIVE, evidence
