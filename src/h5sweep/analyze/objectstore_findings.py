"""The findings of the publications on HDF5 and chunks on object storage, and of the published
evidence on throttled object stores that h5sweep's issue 69 cites, checked on a sweep's own
request counts and times (registered in :data:`h5sweep.analyze.findings.FINDINGS`).

None of these publications is among the seeds, so no finding quotes one: each says what the
publication reports in h5sweep's words (``claim``), and its document is the publication's
address. The verdicts follow the same rules as the seeds' findings
(:mod:`h5sweep.kit.claims`): counted requests decide the first, the median times' 95%
intervals the second, each only under the publication's conditions (reads from an object store;
a latency of 20 ms or more). The two on throttling are judged on a filesystem whose relay
emulated throttling (``filesystems.<name>.s3.faults``: ``slowdown`` or ``rate``), on the counts
of its reads (throttled answers, reads disturbed and failed), with exact 95% intervals of counts
(Clopper-Pearson)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.kit.claims import Finding, Result, above, counts, majority, shape_of
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


# The evidence issue 69 cites gives no address: the document names the issue and says so.
THROTTLING_EVIDENCE = (
    "h5sweep issue 69, 'Faults on the object store' (its published evidence: a 100-connection range-GET "
    "benchmark; the issue gives no address for it)"
)
# Amazon S3's performance guidelines: its request rates are counted per prefix, in requests
S3_REQUEST_RATES = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html"
# the config whose sweep measures the throttling findings (a throttling variant beside a clean one)
FAULTS_CONFIG = "config/cloud-faults.yaml"
# requests at least this many times larger count as large beside small ones
REQUEST_SIZE_STEP = 2.0
# clients whose shares of throttled reads that failed lie within this of each other (every
# pair's 95% interval of the difference) are alike: the retry policy decided nothing
SAME_SHARE = 0.1
CONFIDENCE = 0.95


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    logs = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(p) + (n - i) * math.log1p(-p)
        for i in range(k + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def share_interval(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a share ``k`` of ``n`` (NaN for n = 0)."""
    if n <= 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2

    def solve(target, below: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):  # bisection on p
            mid = (lo + hi) / 2
            value = _binomial_cdf(k, n, mid) if below else 1 - _binomial_cdf(k - 1, n, mid)
            if (value > target) == below:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(tail, below=False)
    high = 1.0 if k == n else solve(tail, below=True)
    return low, high


def rate_ratio_interval(k1: int, e1: float, k2: int, e2: float) -> tuple[float, float, float]:
    """The ratio of two Poisson rates, ``k1`` per ``e1`` over ``k2`` per ``e2``, with its exact
    95% interval (conditional on the total count: k1 is a binomial share of k1 + k2)."""
    if k1 + k2 == 0 or e1 <= 0 or e2 <= 0:
        return math.nan, math.nan, math.nan
    low, high = share_interval(k1, k1 + k2)

    def ratio(p: float) -> float:
        return math.inf if p >= 1 else p / (1 - p) * e2 / e1

    return (k1 / e1) / (k2 / e2) if k2 else math.inf, ratio(low), ratio(high)


def _throttled(s: pd.DataFrame) -> pd.DataFrame:
    """The read rows of a filesystem whose relay emulated throttling (503 SlowDown for a share
    of requests or above a rate), with the fault counts of the summary."""
    needed = {O.FAULTS_EMULATED, O.REQUESTS_FAILED_SUM, O.READS_FAILED, O.DISTURBED_SHARE, C.POLICY}
    if not needed <= set(s.columns):
        return s.iloc[0:0]
    label = s[O.FAULTS_EMULATED].fillna("").astype(str)
    throttled = label.str.contains("slowdown") | label.str.contains("rate above")
    return s[throttled & s[C.POLICY].notna() & s[O.REQUESTS_FAILED_SUM].notna()]


def _reads(row) -> int:
    """A summary row's reads: the timed ones and those that failed."""
    return int(row[C.REPEATS]) + int(row[O.READS_FAILED] if pd.notna(row[O.READS_FAILED]) else 0)


def _small_requests_pay_more(s, shape) -> Result:
    reads = _throttled(s)
    if reads.empty or not {O.BYTES_REQUESTED_MEDIAN, O.REQUESTS_MEDIAN, C.BYTES_SELECTED} <= set(reads.columns):
        return None
    reads = reads[(reads[O.REQUESTS_MEDIAN] > 0) & (reads[O.BYTES_REQUESTED_MEDIAN] > 0)]
    reads = reads.assign(_per_request=reads[O.BYTES_REQUESTED_MEDIAN] / reads[O.REQUESTS_MEDIAN])
    states, said = [], []
    # the same reader, case and cache state; two stores whose requests are apart in size
    for _, group in reads.groupby([C.BACKEND, C.CASE, C.VARIANT, C.CACHE_STATE], sort=True, dropna=False):
        for _, small in group.iterrows():
            for _, large in group[group["_per_request"] >= small["_per_request"] * REQUEST_SIZE_STEP].iterrows():
                k1, k2 = int(small[O.REQUESTS_FAILED_SUM]), int(large[O.REQUESTS_FAILED_SUM])
                e1 = _reads(small) * float(small[C.BYTES_SELECTED]) / 1e6
                e2 = _reads(large) * float(large[C.BYTES_SELECTED]) / 1e6
                ratio, low, high = rate_ratio_interval(k1, e1, k2, e2)
                states.append(above(low, high, 1.0))
                said.append(
                    f"{small[C.CASE]} {small[C.CHUNK_SHAPE] or 'contiguous'} ({binary_size(small['_per_request'])} "
                    f"per request) {k1} in {e1:.3g} MB read against {large[C.CHUNK_SHAPE] or 'contiguous'} "
                    f"({binary_size(large['_per_request'])}) {k2} in {e2:.3g} MB: {ratio:.3g}x per MB "
                    f"(95% interval {low:.3g}-{high:.3g})"
                )
    if not states:  # no two stores of one reader with requests apart in size
        return None
    emulated = ", ".join(sorted(set(reads[O.FAULTS_EMULATED])))
    return majority(states), (
        f"throttled answers per MB read ({emulated}, emulated by the relay on the loopback), the smaller "
        f"requests' over the {REQUEST_SIZE_STEP:g}x larger ones', same reader and case: {counts(states)} pairs "
        "surely more; " + "; ".join(said[:3]) + (" ..." if len(said) > 3 else "")
    )


def _retry_policy_decides(s, shape) -> Result:
    reads = _throttled(s)
    if reads.empty:
        return None
    per_reader = {}
    for (backend, variant), group in reads.groupby([C.BACKEND, C.VARIANT], sort=True, dropna=False):
        total = sum(_reads(r) for _, r in group.iterrows())
        failed = int(group[O.READS_FAILED].fillna(0).sum())
        # the reads that met throttling: the disturbed ones (a failed read is disturbed too)
        met = round(
            sum(float(r[O.DISTURBED_SHARE]) * _reads(r) for _, r in group.iterrows() if pd.notna(r[O.DISTURBED_SHARE]))
        )
        if met > 0:
            per_reader[f"{backend} {variant}"] = (min(failed, met), met, total)
    if len(per_reader) < 2:  # one client: nothing to compare its policy with
        return None
    intervals = {name: share_interval(k, n) for name, (k, n, _) in per_reader.items()}
    names = list(per_reader)
    apart = [(a, b) for a in names for b in names if a != b and intervals[a][0] > intervals[b][1]]
    alike = max(i[1] for i in intervals.values()) - min(i[0] for i in intervals.values()) <= SAME_SHARE
    said = "; ".join(
        f"{name}: {k} of {n} throttled reads failed (95% interval {intervals[name][0]:.2f}-{intervals[name][1]:.2f})"
        for name, (k, n, _) in per_reader.items()
    )
    emulated = ", ".join(sorted(set(reads[O.FAULTS_EMULATED])))
    verdict = True if apart else False if alike else None
    head = (
        f"{len(apart)} pair(s) of clients whose shares of failed throttled reads are surely apart"
        if apart
        else f"every client's share within {SAME_SHARE:g} of every other's"
        if alike
        else "the clients' shares not surely apart, nor surely alike"
    )
    return verdict, f"{head} ({emulated}, emulated by the relay on the loopback): {said}"


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
    Finding(
        "throttled-small-requests",
        "Throttled object stores",
        THROTTLING_EVIDENCE,
        "Published evidence",
        "",
        "on an object store whose relay emulates throttling (503 SlowDown for a share of requests or above a "
        "rate), the same reader and case: a store read in requests at least "
        f"{REQUEST_SIZE_STEP:g}x smaller (bytes asked per request) meets surely more throttled answers per MB "
        "read than the store of the larger requests (the ratio of the two counts' rates, its exact 95% "
        "interval above 1), in most such pairs",
        "filesystems.<name>.s3.faults with a throttling entry beside {} (e.g. faults: [{}, {slowdown: 0.05}]) "
        "and layouts whose requests differ in size (layouts.chunks)",
        FAULTS_CONFIG,
        _small_requests_pay_more,
        claim=(
            "under throttling, small requests pay more than large ones: a store throttles requests, not bytes "
            f"(Amazon S3 counts its rates in requests per second and prefix, {S3_REQUEST_RATES}), so a read "
            "split into many small requests meets more 503 SlowDown answers, retries and waits per byte than a "
            "read of a few large ones"
        ),
    ),
    Finding(
        "retry-policy-decides",
        "Throttled object stores",
        THROTTLING_EVIDENCE,
        "Published evidence",
        "",
        "on an object store whose relay emulates throttling, two clients (readers, each with its own retry "
        "policy: s3fs's, obstore's, tensorstore's) read under the same faults: the share of each one's "
        "throttled (disturbed) reads that failed differs, the exact 95% intervals of two clients' shares "
        f"apart; does not hold where every client's share lies within {SAME_SHARE:g} of every other's",
        "filesystems.<name>.s3.faults with a throttling entry beside {} and several readers (zarr.readers, "
        "s3.zarr_stores, s3.reads)",
        FAULTS_CONFIG,
        _retry_policy_decides,
        claim=(
            "a client's retry policy decides whether a throttled read succeeds: the same throttled requests "
            "failed 56% (4 MiB) and 94% (8 MiB) of the time through one client and 0% through another (the "
            "evidence's 100-connection range-GET benchmark); s3fs retries 5 times in about 1.9 s, obstore 10 "
            "times within 180 s"
        ),
    ),
]
