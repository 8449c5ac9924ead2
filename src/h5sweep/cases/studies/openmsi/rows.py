"""The rows the OpenMSI study's findings judge: where the values came from, the HDF5 stores, the
uncompressed ones, each read case's rows in one cache state, and the rows short of repeats (a row
with fewer than :data:`~h5sweep.kit.claims.MIN_REPEATS` timed operations has no 95% interval of
its median: every check counts it undecided and says so)."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.kit.claims import (
    FEW_REPEATS,
    MIN_REPEATS,
    chunked_rows,
    gzip_level,
    primary_reads,
    short_of_repeats,
)
from h5sweep.storage import columns as C

# A finding that depends on the values (a compression ratio, a codec's speed) judges a donor's
# values; synthetic ones (fill synthetic or chunk-index) only where the config opts in: the
# generator's values compress as it was tuned to, so a ratio measured on them tests the
# generator, not MSI data. gzip4-ratio never takes the opt-in: its ratio on synthetic values is
# the generator's tuning.
OPT_IN = "dataset.judge_synthetic_values"


def fills_of(s) -> list[str]:
    return sorted(set(s[C.FILL].dropna())) if C.FILL in s else []


def values_not_judged(s, opt_in: bool = True) -> str | None:
    """Why a finding that depends on the values does not judge this summary's (None: it does);
    ``opt_in``: whether the config's opt-in lets it judge synthetic values."""
    fills = fills_of(s)
    if not fills:
        return "the summary does not say where its values came from (no fill column)"
    if fills == ["donor"]:
        return None
    if not opt_in:
        return (
            f"the values are {', '.join(fills)}, not a donor's MSI data: their compression ratio is how "
            "h5sweep's generator was tuned (set dataset.fill to a donor; the opt-in does not apply here)"
        )
    if C.JUDGE_SYNTHETIC_VALUES in s and s[C.JUDGE_SYNTHETIC_VALUES].fillna(False).astype(bool).all():
        return None
    return (
        f"the values are {', '.join(fills)}, not a donor's MSI data: a compression ratio or codec speed "
        f"measured on them tests h5sweep's generator (set dataset.fill to a donor, or {OPT_IN}: true to "
        "judge the generator's values)"
    )


def on_values(s) -> str:
    """Where the values were not a donor's, the evidence says whose they were."""
    fills = fills_of(s)
    return "" if fills == ["donor"] else f"; on {', '.join(fills)} values ({OPT_IN}: true)"


def hdf5_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.BACKEND] == REFERENCE] if C.BACKEND in rows else rows


def uncompressed(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.COMPRESSION] == "none"]


INTERVALS = (C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S, C.RATIO_CI_LOW, C.RATIO_CI_HIGH)


def sure(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the intervals of those short of :data:`MIN_REPEATS` repeats taken away
    (their [min, max] is not a 95% interval): each such row is undecided."""
    short = short_of_repeats(rows)
    if not short.any():
        return rows
    return rows.assign(**{c: rows[c].astype(float).where(~short) for c in INTERVALS if c in rows})


def short_words(*frames: pd.DataFrame) -> str:
    """The evidence's words on the rows short of repeats ("" where none is)."""
    n = sum(int(short_of_repeats(f).sum()) for f in frames)
    total = sum(len(f) for f in frames)
    return f"; {n} of {total} rows with fewer than {MIN_REPEATS} repeats counted undecided ({FEW_REPEATS})" if n else ""


def one_state(s: pd.DataFrame, *cases: str) -> list[pd.DataFrame]:
    """Each read case's HDF5 rows of its primary variant, all in one cache state, so that no
    store's first accesses are set against another's sustained reads: the state most of the
    cases' reads were in (a row's state is measured: a read meant warm whose pages were gone
    is cold)."""
    primary = [primary_reads(s, case) for case in cases]
    if C.CACHE_STATE not in s or any(p.empty for p in primary):
        return [sure(p) for p in primary]
    rows = [
        hdf5_rows(s[(s[C.CASE] == c) & s[C.VARIANT].isin(set(p[C.VARIANT]))])
        for c, p in zip(cases, primary, strict=True)
    ]
    state = pd.concat(rows).groupby(C.CACHE_STATE)[C.REPEATS].sum().idxmax()
    return [sure(r[r[C.CACHE_STATE] == state]) for r in rows]


def by_level(rows: pd.DataFrame) -> pd.DataFrame:
    """The HDF5 chunked stores' rows of a gzip level, with the level."""
    rows = chunked_rows(hdf5_rows(rows))
    return rows.assign(level=[gzip_level(c) for c in rows[C.COMPRESSION]]).dropna(subset=["level"])


# where the chunking study measured (seed l.185)
SCRATCH = "the study: hopper /scratch; judged here on the filesystem measured"
