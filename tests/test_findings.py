"""The studies' findings, each checked on a sweep's own numbers: a registry of small functions
of the summary, with verdicts that rest on the intervals."""

import pandas as pd
import pytest
from conftest import Workflow, tiny_config

from h5sweep.analyze import findings


def test_the_registry_covers_every_study_with_unique_findings():
    keys = [f.key for f in findings.FINDINGS]
    assert len(keys) >= 16 and len(set(keys)) == len(keys)
    assert {f.study for f in findings.FINDINGS} == {"OpenMSI", "User's Guide ch. 14", "Kang", "Folk & Choi", "I/O lab"}
    assert all(f.statement and f.section and f.needs for f in findings.FINDINGS)


def summary(**columns):
    base = {"filesystem": "disk", "backend": "hdf5", "primary": True, "compression": "none", "chunk_shape": ""}
    return pd.DataFrame([{**base, **row} for row in columns["rows"]])


def spectra(ratio, low, high):
    return [
        {"case": "spectra", "layout_id": "contiguous", "median_s": 1.0, "ratio_to_contiguous": 1.0},
        {
            "case": "spectra",
            "layout_id": "chunked-4x4x256",
            "chunk_shape": "4x4x256",
            "median_s": ratio,
            "ratio_to_contiguous": ratio,
            "ratio_ci_low": low,
            "ratio_ci_high": high,
        },
    ]


def verdicts(table, key):
    return list(table.loc[table["finding"] == key, "verdict"])


def test_a_verdict_rests_on_the_interval_not_on_the_median():
    surely_faster = findings.evaluate(summary(rows=spectra(0.5, 0.4, 0.6)), (20, 20, 3000))
    assert verdicts(surely_faster, "contiguous-best-spectra") == [findings.FAILS]
    maybe_faster = findings.evaluate(summary(rows=spectra(0.9, 0.7, 1.1)), (20, 20, 3000))
    assert verdicts(maybe_faster, "contiguous-best-spectra") == [findings.HOLDS]
    slower = findings.evaluate(summary(rows=spectra(3.0, 2.5, 3.5)), (20, 20, 3000))
    assert verdicts(slower, "chunking-hurts-fast-axis") == [findings.HOLDS]
    assert verdicts(maybe_faster, "chunking-hurts-fast-axis") == [findings.FAILS]


def test_what_the_sweep_did_not_measure_names_the_keys_that_would():
    table = findings.evaluate(summary(rows=spectra(0.9, 0.7, 1.1)), (20, 20, 3000))
    zarr = table[table["finding"] == "zarr-slower"].iloc[0]
    assert zarr["verdict"] == findings.UNMEASURED and "backends: [hdf5, zarr]" in zarr["evidence"]
    assert len(table) == len(findings.FINDINGS)


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
    assert len(table) == len(findings.FINDINGS) >= 16
    verdict = dict(zip(table["finding"], table["verdict"], strict=True))
    assert verdict["gzip4-ratio"] == findings.FAILS
    assert verdict["edge-padding"] == findings.HOLDS
    assert verdict["contiguous-best-spectra"] == findings.UNMEASURED
    text = (results / "findings.md").read_text()
    assert "gzip level 4 compresses the cube 2.9-3.8x | does not hold | gzip-4 ratio median 1.1" in text
