"""The checks of the OpenMSI study's findings on write times.

Writes may race (:mod:`h5sweep.cases.write.race`): a store separated from the best of its write
variant writes no more, so its row has one write and no interval, only the race's bound
(``raced_out_at_least``: its time is at least that many times the best's). A finding on write times
takes that bound times the best store's median (the race's own reference) as the raced-out store's
lower end, with no upper end. The study configs write every store to the end (``race: false``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.cases.studies.openmsi.rows import by_level as _by_level
from h5sweep.cases.studies.openmsi.rows import hdf5_rows as _hdf5
from h5sweep.cases.studies.openmsi.rows import on_values as _on_values
from h5sweep.cases.studies.openmsi.rows import short_words as _short
from h5sweep.cases.studies.openmsi.rows import uncompressed as _uncompressed
from h5sweep.cases.studies.openmsi.rows import values_not_judged as _values_not_judged
from h5sweep.cases.studies.words import store_name as _name
from h5sweep.cases.write import columns as WC
from h5sweep.kit.claims import (
    UNMEASURED,
    Result,
    above,
    chunked_rows,
    contiguous_rows,
    counts,
    every,
    shape_of,
    short_of_repeats,
)
from h5sweep.storage import columns as C

LOW, HIGH = "_low", "_high"


def _write_ends(s: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (write rows of ``s``) with each store's interval of its write time (``LOW``,
    ``HIGH``): its median's (none for a store short of :data:`MIN_REPEATS` writes), or where the
    race stopped it, at least its bound times the median of its variant's best store (the
    lowest median of those measured to the end: the race's reference), with no upper end; where
    a write was stopped at its limit, no upper end either, and where every write was, at least
    the limit."""
    writes = s[s[C.CASE] == "write"]
    raced = writes[C.RACED_OUT_AT_LEAST].notna() if C.RACED_OUT_AT_LEAST in writes else writes[C.CASE].isna()
    best = writes[~raced].groupby(C.VARIANT)[C.MEDIAN_S].min()
    short = short_of_repeats(rows)
    low = rows[C.MEDIAN_CI_LOW_S].astype(float).where(~short)
    high = rows[C.MEDIAN_CI_HIGH_S].astype(float).where(~short)
    if C.RACED_OUT_AT_LEAST in rows:
        bound = rows[C.RACED_OUT_AT_LEAST].astype(float)
        out = bound.notna()
        low = low.where(~out, bound * rows[C.VARIANT].map(best).astype(float))
        high = high.where(~out, math.inf)
    if C.WRITES_STOPPED in rows:
        stopped = rows[C.WRITES_STOPPED].astype(float).fillna(0)
        high = high.where(stopped == 0, math.inf)
        if C.LIMIT_S in rows:
            every_write = (stopped > 0) & (stopped >= rows[C.REPEATS].astype(float))
            low = low.where(~every_write, np.fmax(low, rows[C.LIMIT_S].astype(float)))
    return rows.assign(**{LOW: low, HIGH: high})


def _slower(a, b) -> bool | None:
    """Whether store ``a`` surely writes (or reads) slower than ``b``: True where its interval
    lies wholly above b's, False where wholly at or below, None where they overlap."""
    return above(a[LOW] - b[HIGH], a[HIGH] - b[LOW], 0.0)


def _span(r) -> str:
    if math.isinf(r[HIGH]):
        why = "raced out" if not pd.isna(r.get(C.RACED_OUT_AT_LEAST)) else "a write stopped at its limit"
        return f"at least {r[LOW]:.3g} s ({why})" if not pd.isna(r[LOW]) else f"{r[C.MEDIAN_S]:.3g} s ({why})"
    if pd.isna(r[LOW]):
        return f"{r[C.MEDIAN_S]:.3g} s ({r[C.REPEATS]:.0f} writes, no interval)"
    return f"{r[C.MEDIAN_S]:.3g} s ({r[LOW]:.3g}-{r[HIGH]:.3g})"


# "decreases significantly for aggression >5" (seed l.479), h5sweep's reading: a write at a level
# above 5 takes at least 1.5x as long as a write at levels 1-5
WRITE_SIGNIFICANT = 1.5


def _times_slower(a, b) -> bool | None:
    """Whether store ``a`` surely writes more than :data:`WRITE_SIGNIFICANT` times as long as
    ``b`` (the interval of their ratio wholly above it), surely not (wholly at or below), or
    undecided."""
    return above(a[LOW] / b[HIGH], a[HIGH] / b[LOW], WRITE_SIGNIFICANT)


def gzip_levels_write(s, shape) -> Result:
    writes = s[s[C.CASE] == "write"]
    rows = _write_ends(s, _by_level(writes))
    verdicts, said = [], []
    for (variant, chunk), g in rows.groupby([C.VARIANT, C.CHUNK_SHAPE], sort=False):
        high, low = g[g["level"] > 5], g[g["level"] <= 5]
        if high.empty or low.empty:
            continue
        states = [_times_slower(h, lo) for _, h in high.iterrows() for _, lo in low.iterrows()]
        verdicts.append(every(states))
        if verdicts[-1] is not True or len(said) < 2:
            said.append(f"{chunk} ({variant}): {counts(states)}")
    if not verdicts:
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    words = (
        f"per chunk shape, each write above level 5 surely at least {WRITE_SIGNIFICANT}x as long as each at "
        f"levels 1-5: {sum(v is True for v in verdicts)} of {len(verdicts)} shapes; "
        + "; ".join(said[:4])
        + _short(_measured(rows))
        + _on_values(s)
    )
    return every(verdicts), words


def contiguous_fastest_write(s, shape) -> Result:
    rows = _write_ends(s, _uncompressed(_hdf5(s[s[C.CASE] == "write"])))
    verdicts, said = [], []
    for variant, g in rows.groupby(C.VARIANT, sort=False):  # each strategy apart
        base, chunked = contiguous_rows(g), chunked_rows(g)
        if base.empty or chunked.empty:
            continue
        b = base.iloc[0]
        states = [_slower(r, b) for _, r in chunked.iterrows()]
        verdicts.append(every(states))
        out = chunked[np.isinf(chunked[HIGH])]
        said.append(
            f"{variant}: contiguous {_span(b)}, chunked stores slower: {counts(states)}"
            + (f" ({', '.join(f'{_name(r)} {_span(r)}' for _, r in out.head(3).iterrows())})" if len(out) else "")
        )
    if not verdicts:
        return None
    return every(verdicts), "; ".join(said) + _short(_measured(rows))


def _measured(rows: pd.DataFrame) -> pd.DataFrame:
    """The write rows measured to the end (not raced out): those whose repeats count."""
    return rows[rows[C.RACED_OUT_AT_LEAST].isna()] if C.RACED_OUT_AT_LEAST in rows else rows


# "For chunkings of m x m x 32 with m in {1024, 2048, 4096, 8192} the write performance
# improves" (seed l.221): the figure's 32 x 32 x n, n >= 1024, the sentence's exception
EXCEPT_M, EXCEPT_N = 32, 1024


def spectrum_writes(s, shape) -> Result:
    rows = s[(s[C.CASE] == "write") & (s[WC.WRITE_STRATEGY] == "spectrum")]
    rows = chunked_rows(_uncompressed(_hdf5(rows)))
    rows = rows[[shape_of(c)[0] == shape_of(c)[1] for c in rows[C.CHUNK_SHAPE]]]  # m x m x n
    rows = _write_ends(s, rows).assign(
        m=[shape_of(c)[0] for c in rows[C.CHUNK_SHAPE]], n=[shape_of(c)[-1] for c in rows[C.CHUNK_SHAPE]]
    )
    verdicts, said = [], []
    for (variant, n), g in rows.groupby([C.VARIANT, "n"], sort=False):
        g = g.sort_values("m").drop_duplicates("m")
        # the trend: each step up in m writes surely slower than the step before, but the step
        # to the exception's m = 32 where n is 1024 or more
        pairs = [
            (g.iloc[i], g.iloc[i + 1])
            for i in range(len(g) - 1)
            if not (g.iloc[i + 1]["m"] == EXCEPT_M and n >= EXCEPT_N)
        ]
        if not pairs:
            continue
        steps = [_slower(up, down) for down, up in pairs]
        verdicts.append(every(steps))
        left_out = EXCEPT_M in set(g["m"]) and n >= EXCEPT_N
        said.append(
            f"n={n} ({variant}): "
            + ", ".join(f"m={r['m']} {_span(r)}" for _, r in g.iterrows())
            + f"; steps up in m slower: {counts(steps)}"
            + (f" (the step to m={EXCEPT_M} left out: the study's exception at n >= {EXCEPT_N})" if left_out else "")
        )
    if not verdicts:
        return None
    return every(verdicts), "; ".join(said) + _short(_measured(rows))
