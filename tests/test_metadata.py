"""Metadata overhead: the same values as N small datasets vs one."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_test_config

from h5sweep.cases.metadata import MetadataCase, _groups, run_metadata
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import ConfigError


def test_spectra_are_split_into_n_consecutive_groups():
    assert _groups(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert _groups(5, 5) == [(i, i + 1) for i in range(5)]
    with pytest.raises(ConfigError, match=r"cases.metadata.datasets\[1\]=401"):
        MetadataCase({"datasets": [1, 401]}).check((20, 20, 10))


def test_values_are_split_in_storage_order_into_datasets_of_1_x_1_x_k_or_the_cube_itself():
    case = MetadataCase({"datasets": [1, 4, 1000], "split": "values"})
    case.check((10, 10, 10))
    assert case.parts((10, 10, 10), 1) == [(0, 1000, (10, 10, 10))]
    assert case.parts((10, 10, 10), 4) == [(i * 250, (i + 1) * 250, (1, 1, 250)) for i in range(4)]
    assert case.parts((10, 10, 10), 1000)[7] == (7, 8, (1, 1, 1))
    assert MetadataCase({}).parts((2, 3, 4), 2) == [(0, 3, (3, 4)), (3, 6, (3, 4))]  # spectra x z
    with pytest.raises(ConfigError, match=r"cases.metadata.datasets\[1\]=1001: must be 1 to the number of values"):
        MetadataCase({"datasets": [1, 1001], "split": "values"}).check((10, 10, 10))
    with pytest.raises(ConfigError, match=r"cases.metadata.split='rows': must be one of spectra, values"):
        MetadataCase({"split": "rows"}).check((10, 10, 10))


def test_the_chapters_1000_one_value_datasets_are_written_and_read_back(tmp_path):
    """The User's Guide's experiment (14.2.1): 1,000 32-bit values as one 10 x 10 x 10 dataset
    and as 1,000 datasets of 1 x 1 x 1, each value read back where it was written (the case
    checks what it reads)."""
    data = SyntheticSource((10, 10, 10), np.float32, seed=0).materialize()
    case = MetadataCase({"datasets": [1, 1000], "split": "values", "repeats": 1})
    rows = run_metadata(str(tmp_path), case, data)
    by = {(r["operation"], r["n_datasets"]): r for r in rows}
    assert {r["bytes_selected"] for r in rows} == {4000}
    one, many = by[("write", 1)]["metadata_file_bytes"], by[("write", 1000)]["metadata_file_bytes"]
    assert one < 4000 + 4096 and many > one + 1000 * 100  # an object header and a link each
    assert by[("read", 1000)]["read_calls"] > by[("read", 1)]["read_calls"] + 1000


def test_many_small_datasets_cost_file_size_and_time(tmp_path):
    data = SyntheticSource((20, 20, 500), np.uint16, seed=4).materialize()
    rows = run_metadata(str(tmp_path), MetadataCase({"datasets": [1, 400], "repeats": 1}), data)
    by = {(r["operation"], r["n_datasets"]): r for r in rows}
    one, many = by[("write", 1)], by[("write", 400)]
    assert one["metadata_file_bytes"] < data.nbytes + 10_000  # one dataset: raw data plus a header
    assert many["metadata_file_bytes"] > one["metadata_file_bytes"] + 400 * 100  # an object header each
    # reading 400 datasets back takes a read of each one's object header, chunk of data, ...
    reads = {n: by[("read", n)] for n in (1, 400)}
    assert reads[400]["read_calls"] > reads[1]["read_calls"] + 400
    assert all(r["cache_state"] in ("cold", "memory") for r in reads.values())
    assert not list(tmp_path.iterdir())  # the scratch file is removed


@pytest.mark.workflow
def test_the_metadata_case_runs_once_per_filesystem_with_a_figure(tmp_path):
    _, results, summary = run_test_config(tmp_path, "metadata.yaml", report=True, figures=["metadata"])
    rows = summary[summary["case"] == "metadata"]
    assert len(rows) == 3 * 2  # N x (write, read)
    assert set(rows["variant"]) == {f"{op}, {n} datasets" for op in ("write", "read") for n in (1, 40, 400)}
    sizes = rows.drop_duplicates("n_datasets").set_index(rows.drop_duplicates("n_datasets")["n_datasets"].astype(int))
    assert int(sizes.loc[400, "metadata_file_bytes"]) > int(sizes.loc[1, "metadata_file_bytes"])
    assert (results / "plots" / "metadata-disk.png").exists()
    assert not list((tmp_path / "disk").rglob("*.h5"))
