"""The studies' findings, each checked on a sweep's own numbers: a registry of small functions
of the summary, each quoting its seed's sentence, with verdicts that rest on the intervals and
a test reaching each of its four verdicts."""

import re

import pandas as pd
import pytest
from conftest import REPO

from h5sweep.analyze import findings

SEEDS = REPO.parent / "shared" / "seeds"


def test_the_registry_covers_every_study_with_unique_findings():
    keys = [f.key for f in findings.FINDINGS]
    assert len(keys) == 29 and len(set(keys)) == len(keys)
    studies = {"OpenMSI", "User's Guide ch. 14", "Kang", "Folk & Choi", "I/O lab", "Cloud-optimized HDF5"}
    studies |= {"Throttled object stores"}
    assert {f.study for f in findings.FINDINGS} == studies
    assert all(f.statement and f.section and f.needs and (f.quote or f.claim) for f in findings.FINDINGS)
    for f in findings.FINDINGS:
        assert (REPO / f.config).is_file(), f.key


def _plain(text: str) -> str:
    """A seed's text without its markup (reStructuredText roles, LaTeX), spaces collapsed."""
    text = re.sub(r":(?:math|ref):`([^`]*)`", r"\1", text)
    text = text.replace("\\times", "x").replace("\\in", "in").replace("\\{", "{").replace("\\}", "}")
    return " ".join(text.replace("``", "").split())


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds (../shared/seeds) are not beside this checkout")
def test_each_finding_quotes_its_seed_verbatim():
    for f in findings.FINDINGS:
        if not f.document.startswith("https://") and not f.document.startswith("h5sweep issue"):
            seed = _plain((REPO / f.document).read_text(encoding="utf-8"))
            assert _plain(f.quote) in seed and not f.claim, f.key


def test_a_finding_of_a_publication_not_among_the_seeds_says_its_claim_and_address_not_a_quote():
    cited = [f for f in findings.FINDINGS if f.document.startswith("https://")]
    assert {f.key for f in cited} == {"paged-file-fewer-requests", "small-chunks-cost-more"}
    # the evidence an issue cites without an address: the issue is the document, and says so
    issue = [f for f in findings.FINDINGS if f.document.startswith("h5sweep issue")]
    assert {f.key for f in issue} == {"throttled-small-requests", "retry-policy-decides"}
    assert all(f.claim and not f.quote and "gives no address" in f.document for f in issue)
    assert all(f.claim and not f.quote for f in cited)
    table = findings.evaluate(pd.DataFrame(paged_requests((22, 18))), CUBE)
    text = findings.markdown(table)
    paged = table[table["finding"] == "paged-file-fewer-requests"].iloc[0]
    assert paged["verdict"] == findings.HOLDS and paged["document"] in text
    assert f"{paged['claim']} (in h5sweep's words; {paged['document']})" in text


BASE = {"filesystem": "disk", "backend": "hdf5", "primary": True, "compression": "none", "chunk_shape": ""}


def row(**values) -> dict:
    chunk = values.get("chunk_shape", "")
    layout = f"chunked-{chunk}" if chunk else "contiguous"
    return {**BASE, "layout_id": layout, **values}


def timed(median, low=None, high=None, **values) -> dict:
    low = median * 0.95 if low is None else low
    high = median * 1.05 if high is None else high
    return row(median_s=median, median_ci_low_s=low, median_ci_high_s=high, **values)


def ratio(low, high, **values) -> dict:
    return row(ratio_to_contiguous=(low + high) / 2, ratio_ci_low=low, ratio_ci_high=high, **values)


def against_contiguous(case, low, high, contiguous=True):
    rows = [row(case=case, ratio_to_contiguous=1.0)] if contiguous else []
    return rows + [ratio(low, high, case=case, chunk_shape=c) for c in ("4x4x256", "8x8x512")]


# reads of stores on an object store at 20 ms, as the summary gives them
REMOTE = {"policy": "random", "variant": "random, blocks", "cache_state": "cold", "order": "xyz", "shard_shape": ""}


def paged_requests(paged, unpaged=(37, 73), cache="none"):
    """Requests per slice of a chunked and a contiguous file, each paged (4 KiB pages, read
    through a 64 KiB page buffer and a file object of cache type ``cache``) and not."""
    rows = []
    for chunk, paged_n, unpaged_n in zip(("2x2x50", ""), paged, unpaged, strict=True):
        common = {**REMOTE, "case": "slice", "chunk_shape": chunk, "latency_ms": 20.0}
        common |= {"s3_block_size": 4096, "s3_cache_type": cache, "page_buffer_bytes": 65536}
        rows.append(row(**common, page_size=4096, requests_median=paged_n))
        rows.append(row(**common, page_size=0, requests_median=unpaged_n))
    return rows


def chunk_sizes(small, small_ci=None, latency=20.0):
    """Spectra of three chunk sizes 16x apart on an object store: the middle one the fastest
    (1 s), the largest 2 s, the smallest ``small``."""
    low, high = small_ci or (small * 0.95, small * 1.05)
    values = {"1x1x256": (small, low, high), "4x4x256": (1.0, 0.95, 1.05), "16x16x256": (2.0, 1.9, 2.1)}
    common = {**REMOTE, "case": "spectra", "latency_ms": latency, "requests_median": 10}
    return [timed(*v, chunk_shape=chunk, page_size=0, **common) for chunk, v in values.items()]


CUBE = (100, 100, 100_000)
# per finding: (its summary rows and dataset shape) for holds, does not hold, inconclusive, not measured
CASES = {
    "paged-file-fewer-requests": [
        (paged_requests((22, 18)), CUBE),
        (paged_requests((40, 80)), CUBE),
        (paged_requests((37, 73)), CUBE),  # as many: the page buffer made no difference
        (paged_requests((22, 18), cache="blockcache"), CUBE),  # blocks gather small reads: not the claim's
    ],
    "small-chunks-cost-more": [
        (chunk_sizes(4.0), CUBE),
        (chunk_sizes(1.5), CUBE),
        (chunk_sizes(2.0, (1.8, 2.3)), CUBE),
        (chunk_sizes(4.0, latency=0.0), CUBE),
    ],
}
EXPECTED = [findings.HOLDS, findings.FAILS, findings.INCONCLUSIVE, findings.UNMEASURED]


def test_every_finding_has_its_four_verdict_cases():
    kang = {f.key for f in findings.FINDINGS if f.study == "Kang"}  # test_findings_kang.py
    parallel = {"collective-vs-independent", "chunking-improves-passes", "local-scaling"}  # test_findings_parallel.py
    guide = {f.key for f in findings.FINDINGS if f.study == "User's Guide ch. 14"}  # test_findings_guide.py
    openmsi = {f.key for f in findings.FINDINGS if f.study == "OpenMSI"} - {"local-scaling"}  # test_findings_openmsi.py
    iolab = {"hdf5-as-raw", "request-size", "random-worst"}  # test_findings_iolab.py
    faults = {"throttled-small-requests", "retry-policy-decides"}  # test_fault_analysis.py
    assert set(CASES) == {f.key for f in findings.FINDINGS} - parallel - kang - guide - openmsi - iolab - faults
    assert all(len(cases) == 4 for cases in CASES.values())


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_finding_reaches_each_verdict(key):
    finding = next(f for f in findings.FINDINGS if f.key == key)
    for (rows, shape), expected in zip(CASES[key], EXPECTED, strict=True):
        verdict, evidence = findings.judge(finding, pd.DataFrame(rows), shape)
        assert verdict == expected, f"{key}: expected {expected}, got {verdict} ({evidence})"
        if expected == findings.UNMEASURED:
            assert finding.config in evidence and finding.needs in evidence
