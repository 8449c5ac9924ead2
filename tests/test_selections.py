"""Selections are seeded per case and never depend on the layout being measured."""

from h5sweep.cases import READ_CASES, read_cases_from_config
from h5sweep.storage.selections import case_rng, random_boxes

SHAPE = (100, 100, 20_000)
CASES = {"slice": {"repeats": 50, "depth": 25}, "spectra": {"repeats": 50, "size": 5}, "subcube": {"repeats": 50}}


def test_each_case_has_the_studys_selection_size():
    cases = {c.name: c for c in read_cases_from_config(CASES, SHAPE)}
    assert cases["slice"].size(SHAPE) == (100, 100, 25)
    assert cases["spectra"].size(SHAPE) == (5, 5, 20_000)
    assert cases["subcube"].size(SHAPE) == (5, 5, 1000)
    assert cases["slice"].selections(SHAPE, 0)[0].nbytes(2) == 500_000
    assert list(READ_CASES) == ["slice", "spectra", "subcube", "whole", "rows", "column", "trace"]


def test_selection_sequences_are_reproducible_and_depend_only_on_seed_and_case():
    for case in read_cases_from_config(CASES, SHAPE):
        first = case.selections(SHAPE, 3)
        assert first == case.selections(SHAPE, 3)
        assert first != case.selections(SHAPE, 4)
        assert len(first) == 50
        assert len({s.start for s in first}) > 40  # really randomized
        for s in first:
            assert all(a >= 0 and a + n <= d for a, n, d in zip(s.start, s.size, SHAPE, strict=True))
    slices = {c.name: c.selections(SHAPE, 3) for c in read_cases_from_config(CASES, SHAPE)}
    assert [s.start[2] for s in slices["slice"]] != [s.start[2] for s in slices["subcube"]]


def test_every_valid_start_can_be_drawn():
    boxes = random_boxes(case_rng(0, "t"), (10, 1, 1), (8, 1, 1), 2000)
    assert {b.start[0] for b in boxes} == {0, 1, 2}


def test_labels_read_like_numpy_slices():
    box = random_boxes(case_rng(0, "slice"), (100, 100, 20_000), (100, 100, 25), 1)[0]
    z0 = box.start[2]
    assert box.label == f"[0:100, 0:100, {z0}:{z0 + 25}]"
