"""Reads interleaved over several real test stores, selection by selection."""

import os
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import read_cases

from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.cases import WriteCase, read_cases_from_config
from h5sweep.cases.write.run import generate
from h5sweep.measure import pagecache
from h5sweep.measure.copies import copy_path, read_copies, read_copies_of_all
from h5sweep.measure.engine import ReadPlan, StoreUnderTest, rounds, run_reads, visiting_order
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.layouts import Layout

SHAPE = (12, 10, 3000)
STORES = [(Layout(None), "none"), (Layout((5, 3, 700)), "none"), (Layout((5, 3, 700)), "gzip-4")]


@pytest.fixture(scope="session")
def stores(tmp_path_factory):
    """Three stores of the same values on the disk the tests run on."""
    directory = tmp_path_factory.mktemp("interleave")
    source = SyntheticSource(SHAPE, np.uint16, seed=3)
    data = source.materialize()
    made = []
    for layout, compression in STORES:
        path = os.path.join(directory, f"{layout.id}-{compression}.h5")
        generate(HDF5, path, data, layout, parse_compression(compression), WriteCase({"repeats": 1}))
        made.append((path, layout, source))
    return made


def under_test(stores):
    return [StoreUnderTest(HDF5, path, layout, source) for path, layout, source in stores]


def test_every_selection_is_read_from_every_store_in_a_seeded_order(stores):
    cases = read_cases_from_config({"spectra": {"repeats": 5, "size": 3, "cold": "every"}}, SHAPE)
    for path, _, _ in stores:  # nothing cached before the run: only priming can cache it all
        pagecache.evict(path)
        assert pagecache.resident_fraction(path) == 0
    measured = run_reads(under_test(stores), ReadPlan(cases, SHAPE, 9))
    for store in measured:
        assert [r["repeat"] for r in store.rows] == list(range(5))
        assert {r["interleaved_stores"] for r in store.rows} == {3}
        # the same selections for every store (a paired comparison)
        assert [r["selection"] for r in store.rows] == [r["selection"] for r in measured[0].rows]
        # each read is a first access after eviction, from this disk
        assert {r["cache_state"] for r in store.rows} == {"cold"} and min(
            r["device_read_bytes"] for r in store.rows
        ) > 0
        assert store.call_overhead_s > 0
        # every store was primed (untimed) before its first eviction, so that eviction freed the
        # store's own pages, as every later one frees what the read before pulled in
        assert store.rows[0]["resident_fraction_before_evict"] == 1.0
        assert min(r["resident_fraction_before_evict"] for r in store.rows) > 0
    orders = [visiting_order(3, 9, "spectra", repeat) for repeat in range(5)]
    assert orders == [visiting_order(3, 9, "spectra", repeat) for repeat in range(5)]  # seeded
    assert len({tuple(o) for o in orders}) > 1 and all(sorted(o) == [0, 1, 2] for o in orders)
    for repeat, order in enumerate(orders):  # each store's row says where it came in the visit
        places = {k: measured[k].rows[repeat]["visit_position"] for k in range(3)}
        assert [k for k, _ in sorted(places.items(), key=lambda item: item[1])] == order
        # all stores' reads of one selection happen inside one measurement window
        assert len({measured[k].rows[repeat]["window_opened_at"] for k in range(3)}) == 1


def test_cold_first_opens_each_store_once_and_reads_the_rest_warm(stores):
    cases = read_cases_from_config({"subcube": {"repeats": 4, "size": [2, 2, 50], "cold": "first"}}, SHAPE)
    measured = run_reads(under_test(stores), ReadPlan(cases, SHAPE, 1))
    for store in measured:
        assert [r["reads_since_open"] for r in store.rows] == [0, 1, 2, 3]
        assert store.rows[0]["cache_state"] == "cold"


def broken_copy(path: str, target: Path) -> Path:
    """A copy of the store at ``path`` whose every spectrum's first value is off by one."""
    target.write_bytes(Path(path).read_bytes())
    with h5py.File(target, "r+") as f:
        f["data"][:, :, 0] = f["data"][:, :, 0] + 1
    return target


def test_a_store_whose_values_differ_fails_naming_it(stores, tmp_path):
    path, layout, source = stores[1]
    broken = broken_copy(path, tmp_path / "broken.h5")
    bad = [*under_test(stores)[:1], StoreUnderTest(HDF5, str(broken), layout, source)]
    cases = read_cases_from_config({"spectra": {"repeats": 3, "size": 3, "cold": "every"}}, SHAPE)
    with pytest.raises(VerificationError, match=r"broken\.h5 case spectra repeat \d+"):
        run_reads(bad, ReadPlan(cases, SHAPE, 2))


def test_rounds_spread_each_variants_repeats_over_the_whole_pass():
    plan = rounds([3, 6, 2])
    assert len(plan) == 6
    assert [[v for v, _ in r] for r in plan] == [[0, 1, 2], [1], [0, 1], [1, 2], [0, 1], [1]]
    for v, m in enumerate([3, 6, 2]):  # every repeat once, in order
        assert [j for r in plan for u, j in r if u == v] == list(range(m))


# two cases read cold every time, and one read from a file opened once
TAKING_TURNS = {
    "spectra": {"repeats": 6, "size": 3, "cold": "every"},
    "subcube": {"repeats": 3, "size": [2, 2, 50], "cold": "every"},
    "slice": {"repeats": 2, "depth": 5, "cold": "first"},
}
# spectra and subcube alternate (subcube's three reads at rounds 0, 2, 4 of six), then slice alone
TURNS = ["spectra", "subcube", "spectra", "spectra", "subcube", "spectra", "spectra", "subcube", "spectra"]


def test_cases_read_cold_every_take_turns_and_a_case_read_from_an_open_file_runs_alone(stores):
    cases = read_cases_from_config(TAKING_TURNS, SHAPE)
    measured = run_reads(under_test(stores), ReadPlan(cases, SHAPE, 2))
    for store in measured:
        order = [r["case"] for r in store.rows]
        assert order[:9] == TURNS
        assert order[9:] == ["slice", "slice"]  # alone, from a file opened once
        assert [r["reads_since_open"] for r in store.rows[9:]] == [0, 1]
        turns = [r for r in store.rows if r["cold_mode"] == "every"]
        assert {r["cache_state"] for r in turns} == {"cold"} and {r["reads_since_open"] for r in turns} == {0}
        assert [r["repeat"] for r in turns if r["case"] == "subcube"] == [0, 1, 2]


def test_one_store_queried_alone_takes_the_same_turns(stores):
    """`interleave: false` queries each store in its own job (run_queries): cases read cold
    every time still take turns, and every row says it was read alone."""
    cases = read_cases_from_config(TAKING_TURNS, SHAPE)
    path, layout, source = stores[2]
    rows = read_cases(HDF5, path, cases, SHAPE, 2, source, layout)
    assert [r["case"] for r in rows] == [*TURNS, "slice", "slice"]
    assert {(r["interleaved_stores"], r["visit_position"]) for r in rows} == {(1, 0)}
    assert [r["reads_since_open"] for r in rows if r["case"] == "slice"] == [0, 1]
    assert all(np.isfinite(r["h5py_call_overhead_s"]) for r in rows)


def test_cold_reads_take_the_stores_copies_in_turn_and_the_copies_go_afterwards(stores):
    """`read_copies: 3`: selection i of a case read cold every time comes from copy i mod 3
    (each copy really read from the device: written out, then evicted), a case read from an
    open file reads the store itself, and the copies are removed when the reads end."""
    cases = read_cases_from_config(
        {
            "spectra": {"repeats": 5, "size": 3, "cold": "every"},
            "subcube": {"repeats": 2, "size": [2, 2, 50], "cold": "first"},
        },
        SHAPE,
    )
    with read_copies_of_all([(HDF5, path) for path, _, _ in stores], 3) as copies:
        assert [len(paths) for paths in copies] == [3, 3, 3]
        for paths in copies:  # byte-identical, beside the store
            assert paths[1:] == [copy_path(paths[0], 1), copy_path(paths[0], 2)]
            assert len({Path(p).read_bytes() for p in paths}) == 1
        measured = under_test(stores)
        for store, paths in zip(measured, copies, strict=True):
            store.copies = paths
        run_reads(measured, ReadPlan(cases, SHAPE, 4))
    for store, (path, _, _) in zip(measured, stores, strict=True):
        spectra = [r for r in store.rows if r["case"] == "spectra"]
        assert [r["store_copy"] for r in spectra] == [0, 1, 2, 0, 1]
        assert {r["cache_state"] for r in spectra} == {"cold"} and min(r["device_read_bytes"] for r in spectra) > 0
        assert [r["store_copy"] for r in store.rows if r["case"] == "subcube"] == [0, 0]
        assert os.path.exists(path) and not any(os.path.exists(copy_path(path, n)) for n in (1, 2))


def test_a_copy_whose_values_differ_fails_naming_the_copy(stores, tmp_path):
    path, layout, source = stores[1]
    broken = broken_copy(path, tmp_path / "broken-copy.h5")
    cases = read_cases_from_config({"spectra": {"repeats": 4, "size": 3, "cold": "every"}}, SHAPE)
    # repeats 1 and 3 read the second copy: it is named, the store itself is not
    with pytest.raises(VerificationError, match=r"broken-copy\.h5 case spectra repeat [13]"):
        read_cases(HDF5, path, cases, SHAPE, 2, source, layout, copies=[path, str(broken)])


def test_read_copies_leaves_nothing_when_the_reads_fail_and_one_copy_is_the_store_alone(stores):
    path = stores[0][0]
    with pytest.raises(RuntimeError, match="reads failed"), read_copies(HDF5, path, 2) as paths:
        assert os.path.exists(paths[1])
        raise RuntimeError("reads failed")
    assert not os.path.exists(copy_path(path, 1))
    with read_copies(HDF5, path, 1) as paths:
        assert paths == [path]
    with pytest.raises(ValueError, match="read_copies must be 1 or more, not 0"), read_copies(HDF5, path, 0):
        pass
    # the copies of several stores, made side by side: one that cannot be made fails them all,
    # and the copies that were made go
    missing = str(Path(path).with_name("never-written.h5"))
    every = [(HDF5, p) for p, _, _ in stores] + [(HDF5, missing)]
    with pytest.raises(FileNotFoundError, match="never-written"), read_copies_of_all(every, 3, threads=2):
        pass
    assert not any(os.path.exists(copy_path(p, n)) for p, _, _ in stores for n in (1, 2))
