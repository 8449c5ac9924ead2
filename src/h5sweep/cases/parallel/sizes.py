"""The parallel passes of two sweeps of two dataset sizes, cast as Folk & Choi's images
(BIGDOQ against ORIGDOQ): the smaller dataset's sweep plays ``orig``, the larger's ``big``.

Their filesystems correspond where they are named alike; otherwise, where each size has one
filesystem with parallel passes (ORIGDOQ on a machine's ``disk``, BIGDOQ on a cluster's
``shared``), those two; otherwise the user names them (``--role orig=NAME --role big=NAME``). A
pass is compared with the pass of the same operation, mode, process count P, layout kind and
units per access on the other image, each by its median bandwidth's 95% interval: the ratio's
interval runs from the lower end over the other's upper end to the upper over the lower. Folk &
Choi's sentences are judged only where a cast meets the study's conditions (:func:`images`,
:func:`machines`, :func:`cache_regime`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.backends import chunk_cache as CC
from h5sweep.cases.parallel import columns as PC
from h5sweep.kit.claims import FEW_REPEATS, MIN_REPEATS, Party, same_machine, shape_of
from h5sweep.storage import columns as C

KIND = "kind"  # contiguous or chunked
KEYS = [PC.OPERATION, PC.MODE, PC.PROCESSES, KIND, PC.UNITS_PER_ACCESS]
RATE = [PC.BYTES_PER_S_MEDIAN, PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH]
ROLES = ("orig", "big")
RATIO, RATIO_LOW, RATIO_HIGH = "large_over_small", "large_over_small_ci_low", "large_over_small_ci_high"
FEWEST = "fewest_repeats"  # the fewer passes of the two a ratio rests on


def passes(party: Party) -> pd.DataFrame | None:
    """A party's parallel passes of the reference backend, uncompressed, indexed by operation,
    mode, P, layout kind and units per access, with their bandwidth's median interval and how
    many passes it rests on (``repeats``, 0 where the summary does not say; a key with more than
    one row is left out, not pooled), or None where it has none."""
    s = party.summary
    if not {C.CASE, C.CHUNK_SHAPE, PC.OPERATION, PC.MODE, PC.PROCESSES, PC.UNITS_PER_ACCESS} <= set(s.columns):
        return None
    rows = s[s[C.CASE] == "parallel"]
    if C.BACKEND in rows:
        rows = rows[rows[C.BACKEND] == REFERENCE]
    if C.COMPRESSION in rows:
        rows = rows[rows[C.COMPRESSION].fillna("none") == "none"]
    if rows.empty:
        return None
    rows = rows.assign(**{KIND: np.where(rows[C.CHUNK_SHAPE].fillna("") == "", "contiguous", "chunked")})
    for column in RATE:
        if column not in rows:
            rows = rows.assign(**{column: np.nan})
    repeats = pd.to_numeric(rows[C.REPEATS], errors="coerce").fillna(0) if C.REPEATS in rows else 0
    rows = rows.assign(**{C.REPEATS: repeats})
    rows = rows[~rows.duplicated(KEYS, keep=False)]
    return rows.set_index(KEYS)[[*RATE, C.REPEATS]].sort_index()


def size_of(party: Party) -> int:
    return math.prod(party.shape) if party.shape else 0


def cast_sizes(found: list[Party], given: dict[str, Party]) -> tuple[list[dict[str, Party]], str]:
    """The casts of ``orig`` and ``big`` among the parties (the matching rule above), and where
    there are none, what is missing in words."""
    if all(r in given for r in ROLES):
        return [{r: given[r] for r in ROLES}], ""
    measured = [p for p in found if passes(p) is not None]
    sizes = sorted({size_of(p) for p in measured})
    if len(sizes) < 2:
        return [], "parallel passes at two dataset sizes"
    small = [given["orig"]] if "orig" in given else [p for p in measured if size_of(p) == sizes[0]]
    large = [given["big"]] if "big" in given else [p for p in measured if size_of(p) == sizes[-1]]
    alike = sorted({p.filesystem for p in small} & {p.filesystem for p in large})
    if alike:
        return [
            {"orig": a, "big": b}
            for name in alike
            for a in small
            for b in large
            if a.filesystem == b.filesystem == name
        ], ""
    if len(small) == 1 and len(large) == 1:
        return [{"orig": small[0], "big": large[0]}], ""
    return [], (
        f"the filesystems of the two sizes do not correspond ({', '.join(p.name for p in small)} against "
        f"{', '.join(p.name for p in large)}): name them with --role orig=NAME --role big=NAME"
    )


def ratios(cast: dict[str, Party], fewest: bool = False) -> pd.DataFrame:
    """Per pass measured on both images, the larger's median bandwidth over the smaller's, with
    the ratio's interval (Fig. 7's ratio, per operation, mode, P, kind and units per access);
    with ``fewest``, also the fewer passes of the two it rests on (:data:`FEWEST`)."""
    small, large = passes(cast["orig"]), passes(cast["big"])
    if small is None or large is None:
        return pd.DataFrame(columns=[*KEYS, RATIO, RATIO_LOW, RATIO_HIGH, *([FEWEST] if fewest else [])])
    both = small.add_suffix("_small").join(large.add_suffix("_large"), how="inner")
    out = pd.DataFrame(
        {
            RATIO: both[f"{PC.BYTES_PER_S_MEDIAN}_large"] / both[f"{PC.BYTES_PER_S_MEDIAN}_small"],
            RATIO_LOW: both[f"{PC.BYTES_PER_S_CI_LOW}_large"] / both[f"{PC.BYTES_PER_S_CI_HIGH}_small"],
            RATIO_HIGH: both[f"{PC.BYTES_PER_S_CI_HIGH}_large"] / both[f"{PC.BYTES_PER_S_CI_LOW}_small"],
        },
        index=both.index,
    )
    if fewest:
        out[FEWEST] = both[[f"{C.REPEATS}_small", f"{C.REPEATS}_large"]].min(axis=1)
    return out.dropna(subset=[RATIO]).reset_index()


def interval_words(low: float, high: float) -> str:
    return "no interval" if pd.isna(low) or pd.isna(high) else f"{low:.2f}-{high:.2f}"


def pick(table: pd.DataFrame, **where) -> pd.DataFrame:
    rows = table.reset_index()
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows


def over(a: pd.Series, b: pd.Series) -> tuple[float, float, float]:
    """One pass's bandwidth over another's: the medians' ratio and its interval."""
    return (
        a[PC.BYTES_PER_S_MEDIAN] / b[PC.BYTES_PER_S_MEDIAN],
        a[PC.BYTES_PER_S_CI_LOW] / b[PC.BYTES_PER_S_CI_HIGH],
        a[PC.BYTES_PER_S_CI_HIGH] / b[PC.BYTES_PER_S_CI_LOW],
    )


def ratio_words(label: str, ratio: tuple[float, float, float]) -> str:
    return f"{label} {ratio[0]:.2f}x ({interval_words(ratio[1], ratio[2])})"


def largest_k(table: pd.DataFrame, kind: str) -> int | None:
    ks = table.reset_index()
    ks = ks.loc[ks[KIND] == kind, PC.UNITS_PER_ACCESS]
    return int(ks.max()) if len(ks) else None


# the study's images: as wide as each other, BIGDOQ 21 times ORIGDOQ's rows (160,419 against 7,639)
LEAST_ROWS_RATIO = 10


def images(cast) -> str:
    """Where the two parties' datasets are not the study's two images (a 2-D array of one width,
    the larger 10 or more times the smaller's rows), why; else ""."""
    small, large = cast["orig"].shape, cast["big"].shape
    if len(small) != 2 or len(large) != 2 or small[1] != large[1]:
        return f"the datasets ({small} and {large}) are not two images of one width, as ORIGDOQ and BIGDOQ"
    if large[0] < LEAST_ROWS_RATIO * small[0]:
        return (
            f"{large[0]:,} rows against {small[0]:,}: less than {LEAST_ROWS_RATIO}x (BIGDOQ has 21x ORIGDOQ's rows, "
            "160,419 against 7,639)"
        )
    return ""


def machines(cast) -> str:
    """Where the two images were not measured on one host and filesystem type, why; else "".
    The study ran both on one system: "This report describes results from experiments with the
    NCSA TeraGrid system" (section 1, line 27 of the seed), its GPFS storage (line 45)."""
    why = same_machine(cast["orig"], cast["big"])
    if not why:
        return ""
    return (
        f"the two images were measured on different machines or filesystems ({why}): a size ratio across them "
        "compares the machines too, where the study ran both images on one system, NCSA's TeraGrid cluster"
    )


def _chunk_fits(party) -> bool | None:
    """Whether the party's chunked parallel passes ran with a chunk cache that holds their chunk
    (``cache_holds_chunk``, else ``chunk_cache_bytes`` against the chunk's bytes); None where
    the summary does not say."""
    s = party.summary
    rows = s[(s[C.CASE] == "parallel") & (s[C.CHUNK_SHAPE].fillna("") != "")] if C.CASE in s else s.iloc[0:0]
    if rows.empty:
        return None
    if C.CACHE_HOLDS_CHUNK in rows and rows[C.CACHE_HOLDS_CHUNK].notna().all():
        held = set(rows[C.CACHE_HOLDS_CHUNK].astype(bool))
        return held.pop() if len(held) == 1 else None
    if CC.CHUNK_CACHE_BYTES not in rows or C.RAW_BYTES not in rows or not party.shape:
        return None
    itemsize = rows[C.RAW_BYTES].iloc[0] / math.prod(party.shape)
    chunk = rows[C.CHUNK_SHAPE].map(lambda text: math.prod(shape_of(text)) * itemsize)
    held = set(chunk <= rows[CC.CHUNK_CACHE_BYTES])
    return held.pop() if len(held) == 1 else None


def cache_regime(cast) -> str:
    """Table 11 reads one column of a whole-column chunk per access: a chunk cache that holds
    the chunk serves the next 524 columns from memory, one that does not reads the chunk again.
    Where one image's cache holds its chunk and the other's does not (ORIGDOQ's 4 MB chunk fits
    a 16 MiB cache, BIGDOQ's 84 MB chunk does not), or either does not say, why; else "". The
    study does not say what cache it ran with (section 2.3, line 103 of the seed, says chunk
    caching can serve such accesses)."""
    fits = {role: _chunk_fits(cast[role]) for role in ROLES}
    if None in fits.values():
        return "a sweep does not record its chunk cache against its chunk (chunk_cache_bytes, cache_holds_chunk)"
    if fits["orig"] != fits["big"]:
        words = {True: "holds its chunk", False: "does not hold its chunk"}
        return (
            f"the chunk cache {words[fits['orig']]} on {cast['orig'].name} and {words[fits['big']]} on "
            f"{cast['big'].name}: 1-column reads then compare caching against rereading, not the two sizes"
        )
    return ""


def few_passes(repeats) -> str:
    """Where a pass compared rests on fewer than :data:`MIN_REPEATS` passes, why it is not
    measured ("" where none does)."""
    fewest = min(repeats) if len(repeats) else MIN_REPEATS
    return "" if fewest >= MIN_REPEATS else f"a pass compared rests on {int(fewest)} passes: {FEW_REPEATS}"


# A percentage the study states ("about 35%", "55%", "74-94%") is read give or take 10
# percentage points: its Tables 9 and 11 read the percentages off Figs. 4 and 7.
PERCENT_SLACK = 0.10


def better_by(least: float, most: float | None = None) -> tuple[float, float]:
    """The window of "``least``-``most`` better" (fractions: 0.55 for 55%): the stated
    percentage, or range, give or take :data:`PERCENT_SLACK` (10 percentage points), as a ratio
    of bandwidths."""
    most = least if most is None else most
    return 1 + least - PERCENT_SLACK, 1 + most + PERCENT_SLACK


def window_words(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:.2f}-{bounds[1]:.2f}x"
