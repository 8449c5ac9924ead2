"""The checks of the OpenMSI study's chunking findings on the read cases' rows (its section
"Chunking: Selection Performance")."""

from __future__ import annotations

from h5sweep.cases.studies.openmsi.rows import one_state as _one_state
from h5sweep.cases.studies.openmsi.rows import short_words as _short
from h5sweep.cases.studies.openmsi.rows import uncompressed as _uncompressed
from h5sweep.cases.studies.words import ms_words as _ms
from h5sweep.cases.studies.words import store_name as _name
from h5sweep.kit.claims import (
    UNMEASURED,
    Result,
    above,
    below,
    chunked_rows,
    contiguous_rows,
    counts,
    majority,
    shape_of,
)
from h5sweep.storage import columns as C

# the chunkings the study compared (m x m x n, seed l.185), and the z-slice sentence's best among
# them (l.253)
GRID_M, GRID_N = (1, 2, 4, 8, 16, 32), (128, 256, 512, 1024, 2048, 4096, 8192)

BEST_SLICE_M = (4, 8, 16)

BEST_SLICE_N = (128, 256, 512, 1024, 2048, 4096)


def _in_grid(chunk: str) -> bool:
    m = shape_of(chunk)
    return len(m) == 3 and m[0] == m[1] and m[0] in GRID_M and m[2] in GRID_N


GRID = len(GRID_M) * len(GRID_N)

GRID_KEYS = "layouts.chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, 256, 512, 1024, 2048, 4096, 8192]}"


def against_contiguous(case: str, slower: bool, words: str):
    """A check that most uncompressed chunked stores of the study's grid read ``case`` surely
    slower (or faster) than contiguous: the paired ratio's interval above (below) 1. "In most
    cases" (seed l.272) and "generally" (l.284) are over the study's grid: with fewer than most
    of its 42 chunkings measured, not measured."""

    def check(s, shape) -> Result:
        rows = _uncompressed(_one_state(s, case)[0])
        chunked = chunked_rows(rows)
        chunked = chunked[[_in_grid(c) for c in chunked[C.CHUNK_SHAPE]]]
        if contiguous_rows(rows).empty or chunked.empty:
            return None
        measured = chunked[C.CHUNK_SHAPE].nunique()
        if measured * 2 <= GRID:
            return UNMEASURED, (
                f"{measured} of the study's {GRID} m x m x n chunkings measured: its sentence is about most of "
                f"them ({GRID_KEYS})"
            )
        side = above if slower else below
        states = [side(r[C.RATIO_CI_LOW], r[C.RATIO_CI_HIGH], 1.0) for _, r in chunked.iterrows()]
        return majority(states), f"{words}: {counts(states)}{_short(chunked)}"

    return check


def best_slice_chunks(s, shape) -> Result:
    rows = chunked_rows(_uncompressed(_one_state(s, "slice")[0]))
    rows = rows[[_in_grid(c) for c in rows[C.CHUNK_SHAPE]]]  # a chunking the study did not compare says nothing
    inside = {c for c in rows[C.CHUNK_SHAPE] if shape_of(c)[0] in BEST_SLICE_M and shape_of(c)[-1] in BEST_SLICE_N}
    if not inside or inside == set(rows[C.CHUNK_SHAPE]):  # both sides of the claim must be measured
        return None
    short = _short(rows)
    rows = rows.dropna(subset=[C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S])
    if rows.empty:
        return None, "no store's z-slice median has an interval" + short
    fastest = rows.sort_values(C.MEDIAN_S).iloc[0]
    tied = rows[rows[C.MEDIAN_CI_LOW_S] <= fastest[C.MEDIAN_CI_HIGH_S]]  # not told apart from the fastest
    states = [c in inside for c in tied[C.CHUNK_SHAPE]]
    verdict = True if all(states) else False if not any(states) else None
    if short:  # a store without an interval may be the fastest, or tied with it
        verdict = None
    return verdict, (
        f"fastest z-slice median {_name(fastest)} {_ms(fastest)}; not told apart from it: "
        + ", ".join(_name(r) for _, r in tied.head(6).iterrows())
        + f" ({sum(states)} of {len(states)} with m in {{4, 8, 16}} and n in 128-4096){short}"
    )


def slices_slower(s, shape) -> Result:
    slices, spectra = (_uncompressed(r) for r in _one_state(s, "slice", "spectra"))  # the chunking study's
    if slices.empty or spectra.empty:
        return None
    if int(slices[C.BYTES_SELECTED].iloc[0]) >= int(spectra[C.BYTES_SELECTED].iloc[0]):
        return None  # the sentence's condition: the slices select less data than the spectra
    keys = [C.LAYOUT_ID, C.COMPRESSION]
    both = slices.merge(spectra, on=keys, suffixes=("", "_spectra"))
    states = [
        above(
            r[C.MEDIAN_CI_LOW_S] - r[f"{C.MEDIAN_CI_HIGH_S}_spectra"],
            r[C.MEDIAN_CI_HIGH_S] - r[f"{C.MEDIAN_CI_LOW_S}_spectra"],
            0.0,
        )
        for _, r in both.iterrows()
    ]
    data = spectra[C.BYTES_SELECTED].iloc[0] / slices[C.BYTES_SELECTED].iloc[0]
    return majority(states), (
        f"z-slices slower than spectra: {counts(states)} uncompressed stores; spectra select {data:.2g}x the "
        f"slices' bytes{_short(slices, spectra)}"
    )
