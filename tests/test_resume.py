"""Resuming raced-out stores (h5sweep.sweep.resume): which stores a read mix could favour,
the request that names them, the job's settings, and the aggregate taking their reads to
the end in place of the partial ones. The workflow run is in test_race.py (the raced sweep)."""

import json

import pandas as pd
import pytest
from test_decision import decision_settings, summary
from test_recommend import reads

from h5sweep.analyze.aggregate import resumed_in_place
from h5sweep.analyze.whatif import decide
from h5sweep.storage import columns as C
from h5sweep.storage.errors import RequestError
from h5sweep.sweep.config import load_schema
from h5sweep.sweep.model import load_sweep
from h5sweep.sweep.resume import add_to_request, checked_request, read_request, request_path
from h5sweep.sweep.settings import resumed_query_settings

RACED_AT = 4


def raced_measurements():
    """Two stores read to the end, and one raced out at round 4: twice as fast at slices as
    the reference, four times as slow at spectra (the race scored spectra)."""
    rows = (
        reads("contiguous", "none", {"slice": 1, "spectra": 1})
        + reads("chunked-16x16x256", "none", {"slice": 0.9, "spectra": 1.1})
        + [
            {**row, C.RACED_OUT_ROUND: RACED_AT, C.RACED_OUT_AT_LEAST: 2.5}
            for row in reads("chunked-4x4x256", "gzip-4", {"slice": 0.5, "spectra": 4.0})
            if row["repeat"] < RACED_AT
        ]
    )
    return pd.DataFrame(rows)


def _settings():
    out = decision_settings()
    out["race_margin"] = 1.25
    return out


def _chosen(settings):
    from h5sweep.analyze.whatif import rank_for

    own, _ = rank_for(raced_measurements(), summary(), settings, {"spectra": 1.0})
    return own[own[C.RECOMMENDED]]


def test_a_mix_of_the_case_a_raced_out_store_is_fast_at_names_it_and_the_command_that_resumes_it():
    settings = _settings()
    lines, stores = decide(
        raced_measurements(), summary(), settings, "slices", {"slice": 1.0}, _chosen(settings), with_stores=True
    )
    assert stores == [
        {
            C.FILESYSTEM: "disk",
            C.BACKEND: "hdf5",
            C.LAYOUT_ID: "chunked-4x4x256",
            C.COMPRESSION: "gzip-4",
            C.READ_OPTION: "cache 1 MiB/521/0.75",
        }
    ]
    text = "\n".join(lines)
    assert "raced out at round 4, yet on the 4 reads it made this mix puts it at 0.5" in text
    assert "`python -m h5sweep.compare.whatif results/demo --weights slice=1 --resume`" in text
    # the mix the race scored by favours no raced-out store: no command
    lines, stores = decide(
        raced_measurements(), summary(), settings, "spectra", {"spectra": 1.0}, _chosen(settings), with_stores=True
    )
    assert stores == [] and "--resume" not in "\n".join(lines)


def test_the_aggregate_takes_a_resumed_stores_reads_in_place_of_its_partial_ones():
    measured = raced_measurements()
    full = pd.DataFrame(reads("chunked-4x4x256", "gzip-4", {"slice": 0.5, "spectra": 4.0})).assign(**{C.RESUMED: True})
    merged = resumed_in_place(pd.concat([measured, full], ignore_index=True))
    mine = merged[merged[C.LAYOUT_ID] == "chunked-4x4x256"]
    assert len(mine) == len(full) and mine[C.RESUMED].all() and mine[C.RACED_OUT_ROUND].isna().all()
    others = merged[merged[C.LAYOUT_ID] != "chunked-4x4x256"]
    assert len(others) == len(measured) - 2 * RACED_AT and not others[C.RESUMED].any()
    # a resumed read option replaces only its own rows: another option's partial reads stay
    other_option = full.assign(**{C.READ_OPTION: "cache 8 MiB/521/0.75"})
    kept = resumed_in_place(pd.concat([measured, other_option], ignore_index=True))
    assert (kept[C.LAYOUT_ID] == "chunked-4x4x256").sum() == 2 * RACED_AT + len(full)
    assert resumed_in_place(measured) is measured  # nothing resumed: the table as it was


def _raced_sweep(tmp_path, **changes):
    from conftest import REPO, tiny_config

    config = tiny_config(tmp_path, sweep="raced")
    config.update({"interleave": True, "race": {"min_rounds": 2}, **changes})
    return load_sweep(config, load_schema(str(REPO / "config" / "schema.yaml")), probe=False)


def test_a_request_grows_never_twice_the_same_store_and_is_checked_against_the_sweep(tmp_path):
    sweep = _raced_sweep(tmp_path)
    option = sweep.read_options("hdf5")[0].label
    store = {C.FILESYSTEM: "disk", C.BACKEND: "hdf5", C.LAYOUT_ID: "contiguous", C.COMPRESSION: "none"}
    entry = {**store, C.READ_OPTION: option}
    assert read_request(tmp_path) == [] and checked_request(sweep, tmp_path) == {}
    add_to_request(tmp_path, [entry])
    other = {
        **entry,
        C.LAYOUT_ID: sweep.stores()[1].layout.id,
        C.COMPRESSION: sweep.stores()[1].compression.name,
    }
    assert add_to_request(tmp_path, [entry, other]) == [entry, other]
    checked = checked_request(sweep, tmp_path)
    assert checked["disk"][("hdf5", "contiguous", "none")] == [entry]
    settings = resumed_query_settings(sweep, sweep.filesystem("disk"), [entry])
    assert [s[C.LAYOUT]["id"] for s in settings["stores"]] == ["contiguous"] and settings["race"] is None
    assert settings["stores"][0]["option_indexes"] == [0] and "cases" in settings["stores"][0]["generate"]
    # a store not in the grid, an unknown read option, a sweep that does not race: refused, naming the entry
    request_path(tmp_path).write_text(json.dumps({"stores": [{**entry, C.LAYOUT_ID: "chunked-9x9x9"}]}))
    with pytest.raises(RequestError, match=r"stores\[0\] \(disk, hdf5, chunked-9x9x9, none\) is not a store"):
        checked_request(sweep, tmp_path)
    request_path(tmp_path).write_text(json.dumps({"stores": [{**entry, C.READ_OPTION: "cache 3 B"}]}))
    with pytest.raises(RequestError, match="read option 'cache 3 B' is not one of"):
        checked_request(sweep, tmp_path)
    request_path(tmp_path).write_text(json.dumps({"stores": [entry]}))
    with pytest.raises(RequestError, match="does not race its reads"):
        checked_request(_raced_sweep(tmp_path, race=False), tmp_path)
    request_path(tmp_path).write_text(json.dumps({"stores": [store]}))
    with pytest.raises(RequestError, match=r"stores\[0\] lacks read_option"):
        read_request(tmp_path)
