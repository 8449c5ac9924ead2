"""The summary is derived from raw rows: statistics, first access, file size, score."""

import math

import pandas as pd
import pytest

from h5sweep.aggregate import summarize
from h5sweep.scoring import score

THRESHOLDS = {"slice_median_s": 0.1, "spectra_median_s": 0.05, "subcube_median_s": 0.002, "file_overhead": 0.05}


def rows(chunk, comp, case, seconds, file_bytes, raw=1000):
    return [
        {
            "filesystem": "disk",
            "layout": "chunked" if chunk else "contiguous",
            "chunk_shape": chunk,
            "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
            "compression": comp,
            "case": case,
            "repeat": i,
            "seconds": s,
            "bytes_selected": 50,
            "chunks_touched": 2,
            "raw_bytes": raw,
            "file_bytes": file_bytes,
            "fs_type": "ext4",
            "device_read_bytes": 4096 if i == 0 else 0,
            "cold_start": True,
        }
        for i, s in enumerate(seconds)
    ]


def test_statistics_first_access_and_score_per_file_and_case():
    raw = pd.DataFrame(
        rows("4x4x2048", "gzip-4", "slice", [0.5, 0.05, 0.07, 0.06], 300)
        + rows("4x4x2048", "gzip-4", "subcube", [0.01, 0.001, 0.003], 300)
        + rows("4x4x2048", "gzip-4", "write", [2.0, 3.0], 300)
        + rows("", "none", "slice", [0.9, 0.2, 0.3], 1001)
    )
    summary = summarize(raw, THRESHOLDS).set_index(["chunk_shape", "case"])
    s = summary.loc[("4x4x2048", "slice")]
    assert (s["repeats"], s["min_s"], s["max_s"], s["first_s"]) == (4, 0.05, 0.5, 0.5)
    assert s["median_s"] == pytest.approx(0.065) and s["mean_s"] == pytest.approx(0.17)
    assert s["compression_ratio"] == pytest.approx(1000 / 300)
    assert s["device_read_bytes_median"] == 0
    # slice median 0.065 < 0.1 (point), subcube median 0.003 >= 0.002 (none), file small (point)
    assert (s["score"], s["score_max"]) == (2, 3)
    assert summary.loc[("4x4x2048", "write"), "mean_s"] == pytest.approx(2.5)
    c = summary.loc[("", "slice")]
    assert (c["layout"], c["score"], c["score_max"]) == ("contiguous", 1, 2)  # 1001 <= 1050 bytes
    assert list(summary.reset_index()["case"].unique()) == ["write", "slice", "subcube"]


def test_score_counts_only_the_criteria_that_were_measured():
    assert score({"slice": 0.05, "spectra": 0.01, "subcube": 0.001}, 2000, 2000, THRESHOLDS) == (4, 4)
    assert score({"slice": 0.2}, 2200, 2000, THRESHOLDS) == (0, 2)
    assert score({}, math.nan, 2000, THRESHOLDS) == (0, 0)
