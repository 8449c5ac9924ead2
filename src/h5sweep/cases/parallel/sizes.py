"""The parallel passes of two sweeps of two dataset sizes, cast as Folk & Choi's images
(BIGDOQ against ORIGDOQ): the smaller dataset's sweep plays ``orig``, the larger's ``big``.

Their filesystems correspond where they are named alike; otherwise, where each size has one
filesystem with parallel passes (ORIGDOQ on a machine's ``disk``, BIGDOQ on a cluster's
``shared``), those two; otherwise the user names them (``--role orig=NAME --role big=NAME``). A
pass is compared with the pass of the same operation, mode, process count P, layout kind and
units per access on the other image, each by its median bandwidth's 95% interval: the ratio's
interval runs from the lower end over the other's upper end to the upper over the lower."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.cases.claims import Party
from h5sweep.cases.parallel import columns as PC
from h5sweep.storage import columns as C

KIND = "kind"  # contiguous or chunked
KEYS = [PC.OPERATION, PC.MODE, PC.PROCESSES, KIND, PC.UNITS_PER_ACCESS]
RATE = [PC.BYTES_PER_S_MEDIAN, PC.BYTES_PER_S_CI_LOW, PC.BYTES_PER_S_CI_HIGH]
ROLES = ("orig", "big")
RATIO, RATIO_LOW, RATIO_HIGH = "large_over_small", "large_over_small_ci_low", "large_over_small_ci_high"


def passes(party: Party) -> pd.DataFrame | None:
    """A party's parallel passes of the reference backend, uncompressed, indexed by operation,
    mode, P, layout kind and units per access (a key with more than one row is left out, not
    pooled), or None where it has none."""
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
    rows = rows[~rows.duplicated(KEYS, keep=False)]
    return rows.set_index(KEYS)[RATE].sort_index()


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


def ratios(cast: dict[str, Party]) -> pd.DataFrame:
    """Per pass measured on both images, the larger's median bandwidth over the smaller's, with
    the ratio's interval (Fig. 7's ratio, per operation, mode, P, kind and units per access)."""
    small, large = passes(cast["orig"]), passes(cast["big"])
    if small is None or large is None:
        return pd.DataFrame(columns=[*KEYS, RATIO, RATIO_LOW, RATIO_HIGH])
    both = small.add_suffix("_small").join(large.add_suffix("_large"), how="inner")
    out = pd.DataFrame(
        {
            RATIO: both[f"{PC.BYTES_PER_S_MEDIAN}_large"] / both[f"{PC.BYTES_PER_S_MEDIAN}_small"],
            RATIO_LOW: both[f"{PC.BYTES_PER_S_CI_LOW}_large"] / both[f"{PC.BYTES_PER_S_CI_HIGH}_small"],
            RATIO_HIGH: both[f"{PC.BYTES_PER_S_CI_HIGH}_large"] / both[f"{PC.BYTES_PER_S_CI_LOW}_small"],
        },
        index=both.index,
    )
    return out.dropna(subset=[RATIO]).reset_index()
