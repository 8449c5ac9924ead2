"""Every output of a sweep names the values it measured (h5sweep.analyze.data_words):
synthetic ones, with how they compress here against the real spectra of the study they stand
in for, or a donor's file and dataset. The sentences, then the writers of decision.md,
recommendation.md, findings.md and index.html, then two real sweeps (synthetic, donor)."""

import numpy as np
import pandas as pd
import pytest
import yaml
from test_decision import summary
from test_resume import _settings, raced_measurements

from h5sweep.analyze import findings
from h5sweep.analyze.data_words import (
    DONOR_LIKE_TRIAL_GZIP4,
    OPENMSI_DATASET_A_GZIP4,
    data_sentence,
    measured_ratio,
)
from h5sweep.analyze.recommend import recommend
from h5sweep.measure.records import write_table
from h5sweep.report.interactive import _inline, write_page
from h5sweep.storage import columns as C

MSI = {"shape": [100, 100, 4096], "dtype": "uint16", "fill": "synthetic", "seed": 7}
DONOR = {**MSI, "fill": {"donor": {"path": "data/msi.h5", "dataset": "/msi/spectra"}}}


def sized():
    """The decision tests' summary with each store's compression ratio (raw over file bytes),
    as the aggregate adds it: gzip-4 stores of 400 and 350 bytes for 1000 raw."""
    table = summary()
    return table.assign(**{C.COMPRESSION_RATIO: table[C.RAW_BYTES] / table[C.FILE_BYTES]})


def test_synthetic_spectra_are_named_with_how_they_compress_here_and_in_the_study():
    sentence = data_sentence(MSI, sized())
    assert sentence.startswith("Data: synthetic values, not real data: MSI-like spectra ")
    assert "generated from seed 7 (`dataset.fill: synthetic`) at 100 x 100 x 4096 uint16." in sentence
    # the median of the gzip-4 stores here (1000/400 and 1000/350), against the study's real data
    assert measured_ratio(sized()) == (pytest.approx(2.6786, abs=1e-3), 2)
    assert "With gzip-4 they compress 2.68x here (median of 2 stores); real spectra compressed about 2.9x" in sentence
    assert f"{OPENMSI_DATASET_A_GZIP4:g}x with gzip-4 at 4 x 4 x 2048 chunks in the OpenMSI study" in sentence
    assert f"{DONOR_LIKE_TRIAL_GZIP4:.1f}x in h5sweep's trial on a donor-like cube" in sentence
    # without a gzip-4 store the study's figure alone; from a ranking, its file / raw inverted
    assert "For comparison, real spectra compressed about 2.9x" in data_sentence(MSI)
    ranking = pd.DataFrame({C.COMPRESSION: ["gzip-4", "none"], C.LAYOUT_ID: ["a", "a"], C.FILE_RATIO: [0.25, 1.0]})
    assert measured_ratio(ranking) == (4.0, 1)


def test_other_generated_values_and_a_donor_are_named_and_settings_without_a_fill_say_nothing():
    recording = data_sentence({**MSI, "shape": [1000, 64], "dtype": "int16"}, sized())
    assert "a recording (per channel an offset, a rhythm and noise) generated from seed 7" in recording
    assert recording.endswith("no study h5sweep reproduces gives a figure for such data.")
    index = data_sentence({**MSI, "fill": "chunk-index"})
    assert index.startswith("Data: generated values, not real data: each element holds the index of its chunk")
    donor = data_sentence(DONOR, sized())
    assert donor == (
        "Data: a donor's values, dataset `/msi/spectra` of `data/msi.h5` (`dataset.fill.donor`), cropped or tiled "
        "to the sweep's shape at 100 x 100 x 4096 uint16; with gzip-4 they compress 2.68x here (median of 2 stores)."
    )
    assert "synthetic" not in donor
    assert data_sentence({"shape": [10, 10, 10], "dtype": "uint8"}) == ""


@pytest.mark.parametrize("dataset", [MSI, DONOR], ids=["synthetic", "donor"])
def test_each_writer_puts_the_sentence_in_its_output(tmp_path, dataset):
    settings = _settings()
    settings["dataset"] = {**settings["dataset"], **dataset}
    write_table(raced_measurements(), str(tmp_path / "measurements.parquet"))
    write_table(sized(), str(tmp_path / "summary.parquet"))
    out = {name: str(tmp_path / name) for name in ("r.csv", "recommendation.md", "r.rst", "decision.md", "r.json")}
    table, sheet = recommend(
        str(tmp_path / "measurements.parquet"), str(tmp_path / "summary.parquet"), settings, *out.values()
    )
    write_page(sheet, table, "time", str(tmp_path / "index.html"))
    said = data_sentence(settings["dataset"], sized())  # every output from the summary's sizes
    assert "(median of 2 stores)" in said  # of the summary's gzip-4 stores, not only those ranked
    for name in ("recommendation.md", "decision.md"):
        assert said in (tmp_path / name).read_text(), name
    assert said.replace("`", "``") in (tmp_path / "r.rst").read_text()  # the report's first page
    assert _inline(said) in (tmp_path / "index.html").read_text()
    summary_path, shape = str(tmp_path / "summary.parquet"), (100, 100, 4096)
    findings.write(summary_path, shape, str(tmp_path / "f.csv"), str(tmp_path / "findings.md"), settings["dataset"])
    assert said in (tmp_path / "findings.md").read_text()


def _small(config: dict, sweep: str, tmp_path) -> dict:
    """The tiny test sweep cut to four stores (contiguous and 5 x 5 x 100 chunks, without and
    with gzip-4) and three reads of two cases: what every output needs, in little time."""
    config = {**config, "sweep": sweep, "figures": False}
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["layouts"] = {"contiguous": True, "chunks": {"xy": [5], "z": [100]}}
    config["compression"] = ["none", "gzip-4"]
    config["cases"] = {"write": {"repeats": 1}, "slice": {"repeats": 3, "depth": 5}, "spectra": {"repeats": 3}}
    config["score"] = {"figure": False}
    return config


@pytest.mark.workflow
def test_a_synthetic_and_a_donor_sweep_name_their_values_in_every_output(tmp_path):
    import h5py
    from conftest import REPO, Workflow

    tiny = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    shape = tiny["dataset"]["shape"]
    donor = tmp_path / "donor.h5"
    rng = np.random.default_rng(3)
    with h5py.File(donor, "w") as f:  # peaks on a falling baseline, as spectra are, and noise
        z = np.arange(shape[2])
        spectra = 200 * np.exp(-z / 800) + 3000 * (rng.random(shape[2]) < 0.01)
        f["msi/spectra"] = (spectra + rng.poisson(20, shape)).astype("uint16")
    wf = Workflow(tmp_path / "wf")
    synthetic = _small(tiny, "values-synthetic", tmp_path)
    donated = _small(tiny, "values-donor", tmp_path)
    donated["dataset"] = {**tiny["dataset"], "fill": {"donor": {"path": str(donor), "dataset": "msi/spectra"}}}
    for config in (synthetic, donated):
        wf.run("--cores", "2", "--configfile", str(wf.write_config(config)), check=True)
        results = wf.root / "results" / config["sweep"]
        said = data_sentence(config["dataset"], pd.read_parquet(results / "summary.parquet"))
        assert ("with gzip-4 they compress" in said.lower()) and (
            said.startswith("Data: synthetic values") if config is synthetic else f"of `{donor}`" in said
        )
        for name in ("decision.md", "recommendation.md", "findings.md"):
            assert said in (results / name).read_text(), name
        assert _inline(said) in (results / "index.html").read_text()
