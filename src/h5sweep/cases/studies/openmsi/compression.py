"""The checks of the OpenMSI study's compression findings on the read cases' rows (its sections
"Compression Aggression" and "Compression: Selection Performance")."""

from __future__ import annotations

from h5sweep.cases.studies.openmsi.rows import by_level as _by_level
from h5sweep.cases.studies.openmsi.rows import hdf5_rows as _hdf5
from h5sweep.cases.studies.openmsi.rows import on_values as _on_values
from h5sweep.cases.studies.openmsi.rows import one_state as _one_state
from h5sweep.cases.studies.openmsi.rows import short_words as _short
from h5sweep.cases.studies.openmsi.rows import uncompressed as _uncompressed
from h5sweep.cases.studies.openmsi.rows import values_not_judged as _values_not_judged
from h5sweep.cases.studies.words import store_name as _name
from h5sweep.kit.claims import (
    MIN_REPEATS,
    UNMEASURED,
    Result,
    above,
    below,
    chunked_rows,
    counts,
    every,
    majority,
    primary_reads,
    short_of_repeats,
)
from h5sweep.storage import columns as C

READS = ("slice", "spectra", "subcube")

# "a large impact": a level's compression ratio more than 1.3x level 1's (below 1.15x: not
# large); a selection more than 1.5x faster or slower than at level 1
SIZE_SMALL, SIZE_LARGE, READ_LARGE = 1.15, 1.3, 1.5


def gzip_levels_size(s, shape) -> Result:
    writes = _by_level(s[s[C.CASE] == "write"]).drop_duplicates([C.LAYOUT_ID, C.COMPRESSION])
    sizes, said = [], []
    for chunk, g in writes.groupby(C.CHUNK_SHAPE, sort=False):
        one = g[g["level"] == 1]
        for _, r in g[g["level"] > 1].iterrows() if len(one) else ():
            gain = r[C.COMPRESSION_RATIO] / one[C.COMPRESSION_RATIO].iloc[0]
            far = max(gain, 1 / gain)
            sizes.append(True if far < SIZE_SMALL else False if far > SIZE_LARGE else None)
            said.append(f"{chunk} gzip-{r['level']:g} {gain:.2f}x")
    reads, slow, read_rows = [], [], []
    for case in READS:
        rows = _by_level(_one_state(s, case)[0])
        read_rows.append(rows)
        for chunk, g in rows.groupby(C.CHUNK_SHAPE, sort=False):
            one = g[g["level"] == 1]
            for _, r in g[g["level"] > 1].iterrows() if len(one) else ():
                o = one.iloc[0]
                low, high = r[C.MEDIAN_CI_LOW_S] / o[C.MEDIAN_CI_HIGH_S], r[C.MEDIAN_CI_HIGH_S] / o[C.MEDIAN_CI_LOW_S]
                inside = above(low, high, 1 / READ_LARGE) and below(low, high, READ_LARGE)
                outside = below(low, high, 1 / READ_LARGE) or above(low, high, READ_LARGE)
                reads.append(True if inside else False if outside else None)
                if reads[-1] is not True:
                    slow.append(f"{case} {chunk} gzip-{r['level']:g} {low:.2f}-{high:.2f}x")
    if not sizes or not reads:  # the sentence's two clauses: the ratio and the selections
        return None
    why = _values_not_judged(s)
    if why:
        return UNMEASURED, why
    verdict = every([every(sizes), every(reads)])
    words = (
        f"compression ratio at levels above 1 over level 1's, per chunk shape: {', '.join(said[:6])} "
        f"({counts(sizes)} within {SIZE_SMALL}x); selections (slice, spectra, sub-cube) at levels above 1 over "
        f"level 1's, per chunk shape: {counts(reads)} within {READ_LARGE}x either way"
        + (f" (not: {', '.join(slow[:4])})" if slow else "")
        + _short(*read_rows)
        + _on_values(s)
    )
    return verdict, words


# uncompressed chunks read this fast from the filesystem (the chunk bytes a cold z-slice read
# touches over its time) leave decompression the bottleneck: hopper's fast filesystem, not
# portal's I/O-bound one (seed l.406, l.412-414)
FAST_READ_BYTES_PER_S = 200e6

# "(of up to 1 order of magnitude)" (seed l.406): a slowdown wholly above it does not hold
AT_MOST = 10.0


def _cold_rate(s) -> float | None:
    """The median over the uncompressed chunked HDF5 stores of their cold z-slice reads' chunk
    bytes over time (None where no cold read was measured): the filesystem's speed, not the
    page cache's."""
    if C.CACHE_STATE not in s:
        return None
    rows = _hdf5(s[(s[C.CASE] == "slice") & (s[C.CACHE_STATE] == "cold")])
    rows = _uncompressed(chunked_rows(rows)).dropna(subset=[C.CHUNK_BYTES_TOUCHED_MEDIAN, C.MEDIAN_S])
    if rows.empty:
        return None
    return float((rows[C.CHUNK_BYTES_TOUCHED_MEDIAN] / rows[C.MEDIAN_S]).median())


def compression_slows(s, shape) -> Result:
    present = [c for c in READS if not primary_reads(s, c).empty]  # the quote's "selection performance"
    pairs = []  # per case: (case, compressed rows with the uncompressed store of their chunk shape)
    for case, rows in zip(present, _one_state(s, *present) if present else [], strict=True):
        rows = _hdf5(chunked_rows(rows))
        plain = rows[rows[C.COMPRESSION] == "none"][[C.CHUNK_SHAPE, C.RATIO_CI_LOW, C.RATIO_CI_HIGH, C.REPEATS]]
        packed = rows[rows[C.COMPRESSION] != "none"].merge(plain, on=C.CHUNK_SHAPE, suffixes=("", "_plain"))
        if len(packed):
            pairs.append((case, packed))
    if not pairs:
        return None
    rate = _cold_rate(s)
    if rate is None:
        return UNMEASURED, (
            "no cold z-slice read of an uncompressed chunked store: the sentence's fast filesystem (hopper's) is "
            "told by reads from the filesystem, not the page cache (cases.slice.cold: first or every)"
        )
    if not rate >= FAST_READ_BYTES_PER_S:  # the sentence's condition: a fast filesystem (hopper's)
        return UNMEASURED, (
            f"uncompressed z-slices read their chunks cold at {rate / 1e6:.0f} MB/s, under "
            f"{FAST_READ_BYTES_PER_S / 1e6:.0f} MB/s: not the study's fast filesystem (hopper's), where it reports "
            "the decrease"
        )
    why = _values_not_judged(s)  # decompression's cost is the values'
    if why:
        return UNMEASURED, why
    verdicts, said, beyond = [], [], []
    for case, packed in pairs:
        low = packed[C.RATIO_CI_LOW] / packed[f"{C.RATIO_CI_HIGH}_plain"]
        high = packed[C.RATIO_CI_HIGH] / packed[f"{C.RATIO_CI_LOW}_plain"]
        states = [above(lo, hi, 1.0) for lo, hi in zip(low, high, strict=True)]
        verdicts.append(majority(states))
        beyond += [
            f"{case} {_name(r)} {lo:.3g}-{hi:.3g}x"
            for (_, r), lo, hi in zip(packed.iterrows(), low, high, strict=True)
            if above(lo, hi, AT_MOST)
        ]
        short = short_of_repeats(packed) | short_of_repeats(packed.assign(**{C.REPEATS: packed[f"{C.REPEATS}_plain"]}))
        said.append(
            f"{case}: {counts(states)}"
            + (f" ({int(short.sum())} pairs with fewer than {MIN_REPEATS} repeats undecided)" if short.any() else "")
        )
    verdict = False if beyond else every(verdicts)
    return verdict, (
        f"uncompressed z-slices read their chunks cold at {rate / 1e6:.0f} MB/s; compressed slower than "
        f"uncompressed, same chunk shape (ratio of their paired ratios to contiguous), per case: {'; '.join(said)}"
        + (f"; more than {AT_MOST:g}x slower: {', '.join(beyond[:4])}" if beyond else "")
        + _on_values(s)
    )
