"""The studies' findings, each checked on a sweep's own numbers: a registry of small functions
of the summary, each quoting its seed's sentence, with verdicts that rest on the intervals and
a test reaching each of its four verdicts."""

import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, Workflow, tiny_config

from h5sweep.analyze import findings

SEEDS = REPO.parent / "shared" / "seeds"


def test_the_registry_covers_every_study_with_unique_findings():
    keys = [f.key for f in findings.FINDINGS]
    assert len(keys) == 27 and len(set(keys)) == len(keys)
    studies = {"OpenMSI", "User's Guide ch. 14", "Kang", "Folk & Choi", "I/O lab", "Cloud-optimized HDF5"}
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
        if not f.document.startswith("https://"):
            seed = _plain((REPO / f.document).read_text(encoding="utf-8"))
            assert _plain(f.quote) in seed and not f.claim, f.key


def test_a_finding_of_a_publication_not_among_the_seeds_says_its_claim_and_address_not_a_quote():
    cited = [f for f in findings.FINDINGS if f.document.startswith("https://")]
    assert {f.key for f in cited} == {"paged-file-fewer-requests", "small-chunks-cost-more"}
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


def gzip4(*ratios):
    return [
        row(case="write", compression="gzip-4", chunk_shape=f"{i + 1}x{i + 1}x2048", compression_ratio=r)
        for i, r in enumerate(ratios)
    ]


def padded(size):  # 32 x 32 chunks pad a 100 x 100 image to 128 x 128: 1.6384x
    return [row(case="write", chunk_shape="32x32x1000", file_bytes=size * 1000, raw_bytes=1000)]


def one_by_one(small, other=1000, n=128):
    return [
        row(case="write", chunk_shape=f"1x1x{n}", file_bytes=small, raw_bytes=1000),
        row(case="write", chunk_shape="1x1x1024", file_bytes=other, raw_bytes=1000),
    ]


def against_contiguous(case, low, high, contiguous=True):
    rows = [row(case=case, ratio_to_contiguous=1.0)] if contiguous else []
    return rows + [ratio(low, high, case=case, chunk_shape=c) for c in ("4x4x256", "8x8x512")]


def slice_chunks(fast_m, slow_m, gap=5.0):
    return [
        timed(1.0, case="slice", chunk_shape=f"{fast_m}x{fast_m}x128"),
        timed(gap, case="slice", chunk_shape=f"{slow_m}x{slow_m}x128"),
    ]


def slices_and_spectra(slice_s, slice_bytes=500_000):
    return [
        r
        for chunk in ("", "4x4x2048")
        for r in (
            timed(slice_s, case="slice", chunk_shape=chunk, bytes_selected=slice_bytes),
            timed(1.0, case="spectra", chunk_shape=chunk, bytes_selected=5_000_000),
        )
    ]


def level_rows(high, low_level=1, high_level=8, column="compression_ratio"):
    """Two chunk shapes at a low and a high gzip level: the low level's value 3.0 (ratio) or
    1.0 (write seconds), the high level's ``high``."""
    low = 3.0 if column == "compression_ratio" else 1.0
    rows = []
    for chunk in ("4x4x2048", "8x8x2048"):
        for level, value in ((low_level, low), (high_level, high)):
            mine = {"case": "write", "chunk_shape": chunk, "compression": f"gzip-{level}"}
            rows.append(timed(value, **mine) if column == "median_s" else row(**mine, **{column: value}))
    return rows


def writes(chunked, chunked_ci=None):
    low, high = chunked_ci or (chunked * 0.95, chunked * 1.05)
    return [timed(1.0, case="write"), timed(chunked, low, high, case="write", chunk_shape="4x4x2048")]


def spectrum_writes(large, large_ci=None, ms=(1, 8)):
    low, high = large_ci or (large * 0.95, large * 1.05)
    return [
        timed(1.0, case="write", write_strategy="spectrum", chunk_shape=f"{ms[0]}x{ms[0]}x2048"),
        timed(large, low, high, case="write", write_strategy="spectrum", chunk_shape=f"{ms[-1]}x{ms[-1]}x2048"),
    ]


def compressed_slices(low, high, plain_s=0.001):
    return [
        {
            **ratio(0.4, 0.5, case="slice", chunk_shape="4x4x2048"),
            "median_s": plain_s,
            "chunk_bytes_touched_median": 500_000,
        },
        ratio(low, high, case="slice", chunk_shape="4x4x2048", compression="gzip-4"),
    ]


def iosize(hdf5_s, hdf5_ci=None, apis=("hdf5", "posix")):
    low, high = hdf5_ci or (hdf5_s * 0.95, hdf5_s * 1.05)
    rows = []
    for size in (4096, 1_000_000):
        for api in apis:
            values = (hdf5_s, low, high) if api == "hdf5" else (1.0, 0.95, 1.05)
            rows.append(timed(*values, case="iosize", api=api, request_bytes=size, bytes_selected=10_000_000))
    return rows


def request_sizes(large_s, large_ci=None, sizes=(4096, 100_000_000)):
    low, high = large_ci or (large_s * 0.95, large_s * 1.05)
    values = {sizes[0]: (1.0, 0.9, 1.1), sizes[-1]: (large_s, low, high)}
    return [
        timed(*values[size], case="iosize", api="hdf5", request_bytes=size, bytes_selected=10_000_000)
        for size in dict.fromkeys(sizes)
    ]


def visiting(random_s, random_ci=None, policies=("random", "aligned")):
    low, high = random_ci or (random_s * 0.95, random_s * 1.05)
    values = {"random": (random_s, low, high), "aligned": (1.0, 0.95, 1.05)}
    return [
        timed(*values[p], case="spectra", chunk_shape="16x16x256", policy=p, chunk_cache_bytes=1048576)
        for p in policies
    ]


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
    "gzip4-ratio": [(gzip4(3.0, 3.5), CUBE), (gzip4(1.1), CUBE), (gzip4(2.75), CUBE), ([], CUBE)],
    "edge-padding": [(padded(1.65), (100, 100, 1000)), (padded(1.0), (100, 100, 1000))]
    + [(padded(1.55), (100, 100, 1000)), (padded(1.0), (128, 128, 1000))],
    "one-by-one-metadata": [(one_by_one(1200), CUBE), (one_by_one(900), CUBE), (one_by_one(1030), CUBE)]
    + [(one_by_one(1200, n=256), CUBE)],
    "contiguous-best-spectra": [
        (against_contiguous("spectra", 1.5, 2.0), CUBE),
        (against_contiguous("spectra", 0.5, 0.8), CUBE),
        (against_contiguous("spectra", 0.9, 1.1), CUBE),
        (against_contiguous("spectra", 1.5, 2.0, contiguous=False), CUBE),
    ],
    "best-slice-chunks": [(slice_chunks(4, 1), CUBE), (slice_chunks(1, 4), CUBE), (slice_chunks(4, 1, 1.02), CUBE)]
    + [(slice_chunks(4, 8), CUBE)],
    "slices-slower-than-spectra": [
        (slices_and_spectra(2.0), CUBE),
        (slices_and_spectra(0.5), CUBE),
        (slices_and_spectra(1.02), CUBE),
        (slices_and_spectra(2.0, slice_bytes=9_000_000), CUBE),
    ],
    "chunking-helps-subcubes": [
        (against_contiguous("subcube", 0.3, 0.5), CUBE),
        (against_contiguous("subcube", 1.5, 2.0), CUBE),
        (against_contiguous("subcube", 0.9, 1.1), CUBE),
        (against_contiguous("subcube", 0.3, 0.5, contiguous=False), CUBE),
    ],
    "gzip-levels-size": [(level_rows(3.2), CUBE), (level_rows(4.5), CUBE), (level_rows(3.6), CUBE)]
    + [(level_rows(3.2, low_level=4, high_level=4), CUBE)],
    "gzip-levels-write": [
        (level_rows(2.0, column="median_s"), CUBE),
        (level_rows(1.1, column="median_s"), CUBE),
        (level_rows(1.3, column="median_s"), CUBE),
        (level_rows(2.0, high_level=5, column="median_s"), CUBE),
    ],
    "contiguous-fastest-write": [(writes(2.0), CUBE), (writes(0.5), CUBE), (writes(1.0, (0.9, 1.2)), CUBE)]
    + [(writes(2.0)[:1], CUBE)],
    "spectrum-writes-slow-with-m": [
        (spectrum_writes(3.0), CUBE),
        (spectrum_writes(0.5), CUBE),
        (spectrum_writes(1.0, (0.9, 1.2)), CUBE),
        (spectrum_writes(3.0, ms=(4, 4)), CUBE),
    ],
    "compression-slows-reads": [
        (compressed_slices(0.9, 1.1), CUBE),
        (compressed_slices(0.2, 0.3), CUBE),
        (compressed_slices(0.45, 0.55), CUBE),
        (compressed_slices(0.9, 1.1, plain_s=0.01), CUBE),  # 50 MB/s: not the study's fast filesystem
    ],
    "hdf5-as-raw": [(iosize(1.2), CUBE), (iosize(3.0), CUBE), (iosize(2.0, (1.8, 2.2)), CUBE)]
    + [(iosize(1.2, apis=("hdf5",)), CUBE)],
    "request-size": [(request_sizes(0.2), CUBE), (request_sizes(0.9), CUBE), (request_sizes(0.5, (0.4, 0.6)), CUBE)]
    + [(request_sizes(0.2, sizes=(4096,)), CUBE)],
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
    "random-worst": [(visiting(3.0), CUBE), (visiting(0.5), CUBE), (visiting(1.0, (0.9, 1.2)), CUBE)]
    + [(visiting(3.0, policies=("random",)), CUBE)],
}
EXPECTED = [findings.HOLDS, findings.FAILS, findings.INCONCLUSIVE, findings.UNMEASURED]


def test_every_finding_has_its_four_verdict_cases():
    kang = {f.key for f in findings.FINDINGS if f.study == "Kang"}  # test_findings_kang.py
    parallel = {"collective-vs-independent", "chunking-improves-passes", "local-scaling"}  # test_findings_parallel.py
    guide = {f.key for f in findings.FINDINGS if f.study == "User's Guide ch. 14"}  # test_findings_guide.py
    assert set(CASES) == {f.key for f in findings.FINDINGS} - parallel - kang - guide
    assert all(len(cases) == 4 for cases in CASES.values())


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_finding_reaches_each_verdict(key):
    finding = next(f for f in findings.FINDINGS if f.key == key)
    for (rows, shape), expected in zip(CASES[key], EXPECTED, strict=True):
        verdict, evidence = findings.judge(finding, pd.DataFrame(rows), shape)
        assert verdict == expected, f"{key}: expected {expected}, got {verdict} ({evidence})"
        if expected == findings.UNMEASURED:
            assert finding.config in evidence and finding.needs in evidence


@pytest.mark.workflow
def test_a_real_sweep_writes_its_findings_with_both_verdicts(tmp_path):
    """Float data barely compresses: gzip-4's 2.9-3.8x does not hold on it; a chunk shape that
    does not divide the image allocates its edge chunks whole, and that holds."""
    config = tiny_config(tmp_path, sweep="findings")
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["dataset"] = {**config["dataset"], "dtype": "float32"}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [3], "z": [512]}}
    config["compression"] = ["none", "gzip-4"]
    config["cases"] = {"write": {"repeats": 1}}
    wf = Workflow(tmp_path / "wf")
    wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
    results = wf.root / "results" / "findings"
    table = pd.read_csv(results / "findings.csv")
    assert len(table) == len(findings.FINDINGS)
    verdict = dict(zip(table["finding"], table["verdict"], strict=True))
    assert verdict["gzip4-ratio"] == findings.FAILS
    assert verdict["edge-padding"] == findings.HOLDS
    assert verdict["contiguous-best-spectra"] == findings.UNMEASURED
    text = (results / "findings.md").read_text()
    assert "| does not hold | gzip-4 ratio median 1.1" in text
    assert Path(results / "findings.csv").stat().st_size > 0
