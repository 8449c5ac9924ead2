"""The findings of the publications on HDF5 and chunks on object storage, checked on a sweep's
own request counts and times (registered in :data:`h5sweep.analyze.findings.FINDINGS`).

None of these publications is among the seeds, so no finding quotes one: each says what the
publication reports in h5sweep's words (``claim``), and its document is the publication's
address. The verdicts follow the same rules as the seeds' findings
(:mod:`h5sweep.cases.claims`): counted requests decide the first, the median times' 95%
intervals the second, each only under the publication's conditions (reads from an object store;
a latency of 20 ms or more)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.cases.claims import Finding, Result, above, counts, majority, shape_of
from h5sweep.storage import columns as C
from h5sweep.storage import objectstore as O
from h5sweep.storage.sizes import binary_size, count

# The HDF Group's poster on cloud-optimized HDF5 (Jelenak and Robinson, AGU 2023, IN31B-0653)
HDF_GROUP_AGU_2023 = (
    "https://www.hdfgroup.org/wp-content/uploads/2024/01/"
    "Strategies-and-Software-to-Optimize-HDF5netCDF-4-Files-for-the-Cloud-AGU_2023_IN31B-0653.pdf"
)
# NSIDC's evaluation of cloud-optimized HDF5 for ICESat-2 (Lopez et al., December 2024)
NSIDC_ICESAT2 = "https://nsidc.github.io/cloud-optimized-icesat2"
CLOUD_CONFIG = "config/cloud.yaml"
# "at 20 ms and more": the latency (emulated or not) under which the chunk-size claim is tested
LATENCY_FROM_MS = 20.0
# a chunk k times smaller than the fastest is weighed against one between k/2 and 2k times larger
SYMMETRY = 2.0
# the columns that make two summary rows the same reads of two stores
_SAME_READS = [C.BACKEND, C.CASE, C.VARIANT, C.CACHE_STATE, C.COMPRESSION, C.ORDER]


def _remote_reads(s: pd.DataFrame) -> pd.DataFrame:
    """The read rows of stores on an object store that counted their requests."""
    if not {O.LATENCY_MS, O.REQUESTS_MEDIAN, C.POLICY} <= set(s.columns):
        return s.iloc[0:0]
    return s[s[O.LATENCY_MS].notna() & s[O.REQUESTS_MEDIAN].notna() & s[C.POLICY].notna()]


def _paged_fewer_requests(s, shape) -> Result:
    reads = _remote_reads(s)
    if reads.empty or not {O.PAGE_BUFFER_BYTES, O.S3_CACHE_TYPE} <= set(reads.columns):
        return None
    # the claim's reads: HDF5's own reads sent as they are, one request each (a file object
    # without a cache, as the ROS3 driver sends them; a file object's blocks would gather the
    # unpaged file's small reads too, and split a page into several), through a page buffer
    # that holds a page
    reads = reads[reads[O.S3_CACHE_TYPE] == O.NO_CACHE]
    pages = reads[C.PAGE_SIZE].fillna(0)
    paged = reads[(pages > 0) & (reads[O.PAGE_BUFFER_BYTES].fillna(0) >= pages)]
    unpaged = reads[pages == 0]
    keys = [*_SAME_READS, C.CHUNK_SHAPE, C.SHARD_SHAPE]
    both = paged.merge(unpaged, on=keys, suffixes=("", "_unpaged"))
    if both.empty:
        return None
    # fewer: so; more: surely not; as many (a file fetched whole at its open, say): undecided
    fewer = [_sign(r[f"{O.REQUESTS_MEDIAN}_unpaged"] - r[O.REQUESTS_MEDIAN]) for _, r in both.iterrows()]
    said = [
        f"{r[C.CASE]} {r[C.CHUNK_SHAPE] or 'contiguous'} ({binary_size(r[C.PAGE_SIZE])} pages, "
        f"{binary_size(r[O.PAGE_BUFFER_BYTES])} buffer): "
        f"{count(r[O.REQUESTS_MEDIAN])} against {count(r[f'{O.REQUESTS_MEDIAN}_unpaged'])}"
        for _, r in both.head(4).iterrows()
    ]
    return majority(fewer), (
        f"requests per read, the paged file with its page buffer against the unpaged file, same reads: "
        f"{fewer.count(True)} fewer, {fewer.count(False)} more, {fewer.count(None)} as many, of {len(fewer)} pairs; "
        + "; ".join(said)
        + (" ..." if len(both) > 4 else "")
    )


def _sign(difference: float) -> bool | None:
    return True if difference > 0 else False if difference < 0 else None


def _elements(chunk: str) -> int:
    return math.prod(shape_of(chunk))


def _small_chunks_cost_more(s, shape) -> Result:
    reads = _remote_reads(s)
    if reads.empty:
        return None
    reads = reads[
        (reads[O.LATENCY_MS] >= LATENCY_FROM_MS)
        & (reads[C.CHUNK_SHAPE].fillna("") != "")
        & (reads[C.PAGE_SIZE].fillna(0) == 0)
        & (reads[C.SHARD_SHAPE].fillna("") == "")
    ].dropna(subset=[C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S])
    states, said = [], []
    for _, group in reads.groupby(_SAME_READS, sort=True, dropna=False):
        group = group.assign(_n=[_elements(c) for c in group[C.CHUNK_SHAPE]])
        fastest = group.sort_values(C.MEDIAN_S).iloc[0]
        best = fastest["_n"]
        for _, small in group[group["_n"] < best].iterrows():
            for _, large in group[group["_n"] > best].iterrows():
                k_small, k_large = best / small["_n"], large["_n"] / best
                if max(k_small, k_large) > SYMMETRY * min(k_small, k_large):
                    continue
                states.append(
                    above(
                        small[C.MEDIAN_CI_LOW_S] - large[C.MEDIAN_CI_HIGH_S],
                        small[C.MEDIAN_CI_HIGH_S] - large[C.MEDIAN_CI_LOW_S],
                        0.0,
                    )
                )
                said.append(
                    f"{small[C.CASE]} ({small[C.VARIANT]}): {small[C.CHUNK_SHAPE]} ({k_small:.3g}x smaller than "
                    f"the fastest {fastest[C.CHUNK_SHAPE]}) {small[C.MEDIAN_S] * 1e3:.3g} ms, "
                    f"{large[C.CHUNK_SHAPE]} ({k_large:.3g}x larger) {large[C.MEDIAN_S] * 1e3:.3g} ms"
                )
    if not states:  # no chunk on both sides of the fastest, at comparable distances
        return None
    latency = ", ".join(f"{v:g} ms" for v in sorted(set(reads[O.LATENCY_MS])))
    return majority(states), (
        f"at {latency}, the smaller chunk surely slower than the larger: {counts(states)} pairs; "
        + "; ".join(said[:3])
        + (" ..." if len(said) > 3 else "")
    )


FINDINGS = [
    Finding(
        "paged-file-fewer-requests",
        "Cloud-optimized HDF5",
        HDF_GROUP_AGU_2023,
        "Strategy #1: paged aggregation, with page buffering when reading",
        "",
        "on an object store, HDF5's reads sent as they are (a file object without a cache, as the ROS3 "
        "driver sends them): a file written with paged aggregation and read through a page buffer of at "
        "least one page sends fewer requests per read than the unpaged file of the same chunks, for the same "
        "selections (counted; most pairs of stores)",
        "filesystems.<name>.s3 with layouts.pages and an s3.reads entry {cache_type: none, page_buffer: a page "
        "or more}",
        CLOUD_CONFIG,
        _paged_fewer_requests,
        claim=(
            "an HDF5 file whose metadata and chunks are gathered in pages (paged aggregation), read through a "
            "page buffer at least a page large, needs far fewer read operations from cloud storage; NSIDC's "
            f"ICESat-2 evaluation ({NSIDC_ICESAT2}) makes its cloud-optimized files this way"
        ),
    ),
    Finding(
        "small-chunks-cost-more",
        "Cloud-optimized HDF5",
        HDF_GROUP_AGU_2023,
        "Requirement: large dataset chunk size",
        "",
        f"on an object store at a latency of {LATENCY_FROM_MS:g} ms or more, where a read case's fastest chunk "
        f"shape (same backend, reader and compression) has smaller and larger ones beside it, a chunk k times "
        f"smaller than the fastest reads surely slower than one k times larger (within {SYMMETRY:g}x of k), "
        "in most such pairs (median times' 95% intervals apart)",
        f"filesystems.<name>.s3.latency_ms of {LATENCY_FROM_MS:g} or more, layouts.chunks from a few kB to "
        "several MB (the fastest chunk shape between them)",
        CLOUD_CONFIG,
        _small_chunks_cost_more,
        claim=(
            "on cloud storage, where every request costs a round trip, chunks should be large: a chunk too small "
            "multiplies the requests (and the metadata that indexes them), which costs more than the extra bytes "
            "a larger chunk brings"
        ),
    ),
]
