"""The HDF User's Guide ch. 14 findings, each judged on rows built the way its shipped config's
rows come out: the reads of one row and one column of a 2-D array from a contiguous file and
two tilings, each read from the device (cold: every), summarized by the aggregate as
subsetting.yaml's are; the metadata case's own rows, of a real run of the chapter's 1,000
values as one dataset and as 1,000; and the chunk cache's sustained reads (chunk-cache.yaml)."""

import math

import numpy as np
import pandas as pd
import pytest
from test_aggregate import THRESHOLDS  # the thresholds every summary in these tests is scored by

from h5sweep.analyze import findings
from h5sweep.analyze.aggregate import summarize
from h5sweep.cases.metadata import MetadataCase, run_metadata
from h5sweep.storage.datasources import SyntheticSource

IMAGE = (2000, 1600)  # the chapter's 2,000 x 1,600 array of 32-bit integers (Figure 14j)
REPEATS = 20  # subsetting.yaml's reads of each case
CONTIGUOUS_S = 0.002


def _finding(key: str):
    return next(f for f in findings.FINDINGS if f.key == key)


def judge(key: str, summary: pd.DataFrame, shape: tuple) -> tuple[str, str]:
    return findings.judge(_finding(key), summary, shape)


def _store(chunk: str) -> dict:
    return {
        "sweep": "ug-subsetting",
        "filesystem": "disk",
        "backend": "hdf5",
        "layout": "chunked" if chunk else "contiguous",
        "chunk_shape": chunk,
        "shard_shape": "",
        "page_size": 0,
        "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
        "layout_name": {"400x400": "tiles", "400x100": "narrow-tiles"}.get(chunk, ""),
        "order": "xyz",
        "compression": "none",
        "filter_family": "none",
        "codec": "none",
        "raw_bytes": 2000 * 1600 * 4,
        "file_bytes": 2000 * 1600 * 4 + 10_000,
        "fs_type": "ext4",
    }


def _touched(chunk: str, case: str, lines: int) -> int:
    """The tiles a read of ``lines`` rows or columns crosses (0 for the contiguous file)."""
    if not chunk:
        return 0
    tile = [int(v) for v in chunk.split("x")]
    along, across = (1, 0) if case == "rows" else (0, 1)
    return -(-IMAGE[along] // tile[along]) * -(-lines // tile[across])


def reads(
    ratios: dict, case: str, lines: int = 1, state: str = "cold", cold: str = "every", spreads=None, repeats=REPEATS
) -> list:
    """One case's reads as the read jobs record them: ``repeats`` reads of one row (``rows``,
    ``[r:r+lines, :]``) or one column (``column``, ``[:, c:c+lines]``) per store, each from an
    evicted file; a chunked store's read of a selection takes ``ratios[chunk]`` times the
    contiguous file's read of it, from 1.22 to 0.82 times that repeat by repeat, or
    ``spreads[chunk]`` times it where given."""
    width = IMAGE[1] if case == "rows" else IMAGE[0]
    out = []
    base = np.linspace(0.9, 1.1, repeats)
    for chunk in ("", *ratios):
        # the contiguous reads spread 0.9-1.1 of their median, the chunked 1.1-0.9 of theirs
        spread = base if not chunk else (spreads or {}).get(chunk, base[::-1]) * ratios[chunk]
        for repeat in range(repeats):
            seconds = CONTIGUOUS_S * spread[repeat]
            out.append(
                _store(chunk)
                | {
                    "case": case,
                    "repeat": repeat,
                    "seconds": seconds,
                    "variant": f"random, cache 1 MiB/521/0.75, cold {cold}",
                    "policy": "random",
                    "cold_mode": cold,
                    "reader": "h5py",
                    "chunk_cache_bytes": 1048576,
                    "chunk_cache_slots": 521,
                    "chunk_cache_w0": 0.75,
                    "bytes_selected": width * lines * 4,
                    "chunks_touched": _touched(chunk, case, lines),
                    "device_read_bytes": 0 if state == "warm" else 4096 * 16,
                    "cache_state": state,
                    "selection": f"repeat {repeat}",
                }
            )
    return out


def sweep(rows_ratios: dict, column_ratios: dict, **kwargs) -> pd.DataFrame:
    """The summary of subsetting.yaml's sweep: the contiguous file, 400 x 400 and 400 x 100
    tiles, one row and one column read 20 times each, as the aggregate writes it."""
    return summarize(
        pd.DataFrame(reads(rows_ratios, "rows", **kwargs) + reads(column_ratios, "column", **kwargs)), THRESHOLDS
    )


# what subsetting.yaml measured (its tiny run, on a disk where a read costs its bytes more than
# its seeks): either tiling costs the row about 9x; the chapter's tiles read the column in 0.7x
# the contiguous file's time, tiles a quarter as wide in a quarter of it
MEASURED = ({"400x400": 9.0, "400x100": 9.5}, {"400x400": 0.7, "400x100": 0.24})


def test_the_summary_is_the_aggregates_with_a_ratio_interval_per_store_and_case():
    summary = sweep(*MEASURED)
    chunked = summary[summary["chunk_shape"] != ""].set_index(["case", "chunk_shape"])
    assert len(chunked) == 4 and set(summary["cache_state"]) == {"cold"} and summary["primary"].all()
    assert chunked.loc[("column", "400x100"), "ratio_pairs"] == REPEATS
    low, high = chunked.loc[("column", "400x100"), ["ratio_ci_low", "ratio_ci_high"]]
    assert 0.18 < low < 0.24 < high < 0.3


def test_chunking_helps_the_column_the_slowest_varying_dimension_of_a_2d_array():
    """The chapter's example (Figures 14l and 14n): a column, along the slowest-varying
    dimension, takes 2,000 seeks contiguous and 5 chunked."""
    verdict, evidence = judge("chunking-helps-slow-axis", sweep(*MEASURED), IMAGE)
    assert verdict == findings.HOLDS, evidence
    assert evidence.startswith("one column (column), cold")
    assert "400x100 0.24x" in evidence and "400x400 0.70x" in evidence
    # no tiling reads the column in half the time: does not hold
    rows, _ = MEASURED
    verdict, evidence = judge("chunking-helps-slow-axis", sweep(rows, {"400x400": 0.8, "400x100": 0.7}), IMAGE)
    assert verdict == findings.FAILS, evidence
    # the narrow tiles' reads straddle a half
    straddle = {"400x100": np.linspace(0.6, 1.4, REPEATS)}
    summary = sweep(rows, {"400x400": 0.8, "400x100": 0.5}, spreads=straddle)
    assert judge("chunking-helps-slow-axis", summary, IMAGE)[0] == findings.INCONCLUSIVE


def test_chunking_hurts_the_row_the_fastest_varying_dimension_of_a_2d_array():
    """The chapter's example (Figures 14k and 14m): a row, along the fastest-varying dimension,
    takes 1 seek contiguous and 4 chunked."""
    verdict, evidence = judge("chunking-hurts-fast-axis", sweep(*MEASURED), IMAGE)
    assert verdict == findings.HOLDS, evidence
    assert evidence.startswith("one row (rows), cold") and "400x400 9.00x" in evidence
    _, column = MEASURED
    assert (
        judge("chunking-hurts-fast-axis", sweep({"400x400": 1.5, "400x100": 1.2}, column), IMAGE)[0] == findings.FAILS
    )
    straddle = {"400x400": np.linspace(0.6, 1.4, REPEATS)}
    summary = sweep({"400x400": 2.0, "400x100": 1.2}, column, spreads=straddle)
    assert judge("chunking-hurts-fast-axis", summary, IMAGE)[0] == findings.INCONCLUSIVE


def test_the_axes_are_not_inverted_chunking_that_helps_the_row_and_hurts_the_column_contradicts_both():
    """A sweep where the tiles help the row and hurt the column (the wrong reading of a row as
    the slow axis) has neither finding hold."""
    summary = sweep({"400x400": 0.3, "400x100": 0.4}, {"400x400": 3.0, "400x100": 5.0})
    assert judge("chunking-helps-slow-axis", summary, IMAGE)[0] == findings.FAILS
    assert judge("chunking-hurts-fast-axis", summary, IMAGE)[0] == findings.FAILS


def test_the_axis_findings_are_not_measured_outside_the_chapters_conditions():
    for key in ("chunking-helps-slow-axis", "chunking-hurts-fast-axis"):
        finding = _finding(key)
        # no read along either dimension: the config that would measure them
        verdict, evidence = judge(key, summarize(pd.DataFrame(reads({}, "whole")), THRESHOLDS), IMAGE)
        assert verdict == findings.UNMEASURED and finding.config in evidence and finding.needs in evidence
        # reads of blocks of rows or columns (Kang's rows: 4,096 time steps of every channel)
        verdict, evidence = judge(key, sweep(*MEASURED, lines=4096), IMAGE)
        assert verdict == findings.UNMEASURED and "size is not 1" in evidence
        # reads from the page cache: no seeks to save or spend
        verdict, evidence = judge(key, sweep(*MEASURED, state="warm", cold="first"), IMAGE)
        assert verdict == findings.UNMEASURED and "cache states read: warm" in evidence
    # compressed tiles are 14.3.4's: the chapter's statement is about chunking without compression
    summary = sweep(*MEASURED)
    summary.loc[summary["chunk_shape"] != "", "compression"] = "gzip-4"
    verdict, evidence = judge("chunking-helps-slow-axis", summary, IMAGE)
    assert verdict == findings.UNMEASURED and "no uncompressed chunked store" in evidence


def test_a_store_read_fewer_than_six_times_has_no_interval_to_judge():
    """cloud.yaml's 5 reads per case: the summary's interval of 5 paired ratios is their range,
    covering less than 95%; a store so read decides nothing, however far its range lies."""
    summary = sweep({"400x400": 9.0, "400x100": 9.5}, {"400x400": 0.3, "400x100": 0.24}, repeats=5)
    assert set(summary.loc[summary["chunk_shape"] != "", "ratio_pairs"]) == {5}
    for key in ("chunking-helps-slow-axis", "chunking-hurts-fast-axis"):
        verdict, evidence = judge(key, summary, IMAGE)
        assert verdict == findings.INCONCLUSIVE, evidence
        assert "[5 pairs: a 95% interval needs 6]" in evidence
    # nor can such stores, every one past the threshold the other way, say it does not hold
    summary = sweep({"400x400": 1.2, "400x100": 1.1}, {"400x400": 0.9, "400x100": 0.8}, repeats=5)
    assert judge("chunking-helps-slow-axis", summary, IMAGE)[0] == findings.INCONCLUSIVE
    assert judge("chunking-hurts-fast-axis", summary, IMAGE)[0] == findings.INCONCLUSIVE
    # six reads each: the interval is the median's 95% one, and the verdicts return
    summary = sweep(*MEASURED, repeats=6)
    assert judge("chunking-helps-slow-axis", summary, IMAGE)[0] == findings.HOLDS
    assert judge("chunking-hurts-fast-axis", summary, IMAGE)[0] == findings.HOLDS


CUBE = (20, 20, 400)


def cube_reads(slice_ratio: float, spectra_ratio: float, depth: int = 25, size: int = 5) -> pd.DataFrame:
    """z-slices and spectra of a 3-D cube (z fastest) from a contiguous file and 4 x 4 x 100
    chunks, read cold, as openmsi/chunking.yaml's are."""
    out = []
    cases = (("slice", slice_ratio, 20 * 20 * depth * 4), ("spectra", spectra_ratio, size * size * 400 * 4))
    for case, ratio, nbytes in cases:
        for row in reads({"4x4x100": ratio}, case):
            out.append(row | {"bytes_selected": nbytes, "raw_bytes": 20 * 20 * 400 * 4})
    return summarize(pd.DataFrame(out), THRESHOLDS)


def test_a_3d_sweep_is_not_the_chapters_2d_row_and_column():
    """The chapter counts the seeks of one row and one column of a 2-D array; a z-slice of a
    cube is a plane across two dimensions, and a 3-D sweep is not judged, whatever its reads
    show (the old reading took depth-25 slices and 5 x 5 spectra for the two axes)."""
    for summary in (cube_reads(0.3, 3.0), cube_reads(0.3, 3.0, depth=1, size=1), cube_reads(3.0, 0.3)):
        for key in ("chunking-helps-slow-axis", "chunking-hurts-fast-axis"):
            verdict, evidence = judge(key, summary, CUBE)
            assert verdict == findings.UNMEASURED and "on a 2-D dataset" in evidence, evidence
    # a 3-D sweep's rows and columns (were a case to read them) are not the chapter's either
    summary = sweep(*MEASURED)
    verdict, evidence = judge("chunking-hurts-fast-axis", summary, (2000, 1600, 1))
    assert verdict == findings.UNMEASURED and evidence.startswith("the dataset is 3-D")


# --- many-datasets: the metadata case's own rows -------------------------------------------

STORE = {
    "sweep": "ug-metadata",
    "filesystem": "disk",
    "backend": "hdf5",
    "layout": "contiguous",
    "chunk_shape": "",
    "shard_shape": "",
    "page_size": 0,
    "layout_id": "contiguous",
    "order": "xyz",
    "compression": "none",
    "fs_type": "ext4",
}


@pytest.fixture(scope="module")
def chapter_rows(tmp_path_factory) -> list[dict]:
    """metadata.yaml's run: the chapter's 1,000 32-bit values (10 x 10 x 10 float32) written as
    one dataset and as 1,000 of one value each, twice, with the columns every job's row carries."""
    data = SyntheticSource((10, 10, 10), np.float32, seed=0).materialize()
    case = MetadataCase({"datasets": [1, 1000], "split": "values", "repeats": 1})
    rows = run_metadata(str(tmp_path_factory.mktemp("metadata")), case, data)
    return with_write(rows, data.nbytes)


def with_write(rows: list[dict], raw_bytes: int) -> list[dict]:
    """The metadata case's rows with the columns every job's row carries, and the write case's
    row of the sweep's contiguous file (the config's ``write``), which gives the file's size."""
    write = {"case": "write", "repeat": 0, "seconds": 0.01, "file_bytes": raw_bytes + 2048, "variant": ""}
    mine = [row | STORE | {"raw_bytes": raw_bytes, "chunks_touched": np.nan} for row in rows]
    return [STORE | write | {"raw_bytes": raw_bytes, "chunks_touched": 0}, *mine]


def _sizes(rows: list[dict], many: int, one: int) -> pd.DataFrame:
    """The summary of ``rows`` with the 1,000-dataset file's size set to ``many`` and the one
    dataset's to ``one``."""
    sizes = {1: one, 1000: many}
    out = [
        row | {"metadata_file_bytes": sizes[row["n_datasets"]]} if row["case"] == "metadata" else row for row in rows
    ]
    return summarize(pd.DataFrame(out), THRESHOLDS)


def test_many_datasets_on_hdf5_the_chapters_experiment_does_not_shrink_the_file_100x(chapter_rows):
    """HDF5 keeps an object header and a link per dataset: 1,000 one-value datasets take far
    more than one dataset of the same 4,000 bytes, though not the HDF4 SDSs' factor of 100."""
    summary = summarize(pd.DataFrame(chapter_rows), THRESHOLDS)
    mine = summary[summary["case"] == "metadata"]
    sizes = mine.drop_duplicates("n_datasets").set_index("n_datasets")["metadata_file_bytes"].astype(int)
    one, many = sizes[1], sizes[1000]
    assert one < 4000 + 10_000 and many > one + 1000 * 100  # at least 100 bytes of metadata a dataset
    verdict, evidence = judge("many-datasets", summary, (10, 10, 10))
    assert verdict == (findings.HOLDS if many > 100 * one else findings.FAILS)
    assert evidence.startswith(f"{many / one:.1f}x (1 dataset: {one:,} B, 1,000 datasets: {many:,} B")


def test_many_datasets_reaches_each_verdict_on_the_metadata_cases_rows(chapter_rows):
    """Holds and does not hold, on the file sizes as the summary carries them; inconclusive
    only where the summary carries more than one size for a file and they straddle 100x."""
    # the chapter's own sizes (Tables 14A and 14B): 896,803 against 7,258 bytes, 123.6x
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 896_803, one=7258), (10, 10, 10))
    assert verdict == findings.HOLDS and evidence.startswith("123.6x")
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 387_208, one=6048), (10, 10, 10))
    assert verdict == findings.FAILS and evidence.startswith("64.0x")
    # exactly 100x is not "more than 100"
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 725_800, one=7258), (10, 10, 10))
    assert verdict == findings.FAILS and evidence.startswith("100.0x")
    # twice the old reading's factor is not the sentence's: 2.5x does not hold
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 18_145, one=7258), (10, 10, 10))
    assert verdict == findings.FAILS and evidence.startswith("2.5x")


def test_many_datasets_judges_the_least_and_the_most_each_file_took(chapter_rows):
    """Two sizes of the 1,000-dataset file in one summary (two runs' rows side by side), one
    above and one below 100x the one dataset's: holds needs the smaller above, does not hold
    the larger at or below."""
    summary = _sizes(chapter_rows, 760_000, one=7258)
    write = (summary["case"] == "metadata") & (summary["operation"] == "write") & (summary["n_datasets"] == 1000)
    other = summary[write].assign(metadata_file_bytes=700_000, variant="write, 1000 datasets, run 2")
    verdict, evidence = judge("many-datasets", pd.concat([summary, other], ignore_index=True), (10, 10, 10))
    assert verdict == findings.INCONCLUSIVE and evidence.startswith("96.4-104.7x"), evidence
    both_above = pd.concat([summary, other.assign(metadata_file_bytes=740_000)], ignore_index=True)
    assert judge("many-datasets", both_above, (10, 10, 10))[0] == findings.HOLDS


def test_many_datasets_is_not_measured_on_datasets_that_are_not_the_chapters(tmp_path):
    """The old config's split (spectra of a uint16 cube, 400 B to 4 kB a dataset) cannot show
    the chapter's factor: the finding says so instead of judging it."""
    data = SyntheticSource((4, 5, 50), np.uint16, seed=0).materialize()
    rows = run_metadata(str(tmp_path), MetadataCase({"datasets": [1, 10, 20], "repeats": 1}), data)
    summary = summarize(pd.DataFrame(with_write(rows, data.nbytes)), THRESHOLDS)
    verdict, evidence = judge("many-datasets", summary, (4, 5, 50))
    assert verdict == findings.UNMEASURED
    assert evidence.startswith("the sweep split 2,000 bytes of 2-byte values of a 3-D dataset into 1, 10, 20")
    assert "the chapter split 4,000 bytes into 1 dataset and 1,000 of one 4-byte value each" in evidence
    verdict, evidence = judge("many-datasets", sweep(*MEASURED), IMAGE)
    assert verdict == findings.UNMEASURED and _finding("many-datasets").config in evidence


def test_many_datasets_needs_one_4_byte_value_a_dataset_not_only_4000_bytes_in_1000(tmp_path):
    """2,000 16-bit values (10 x 10 x 20 uint16) are 4,000 bytes too, and 1,000 datasets of
    them hold 4 bytes each, but as two values (1 x 1 x 2): not the chapter's 1 x 1 x 1
    datasets, whose object headers describe one value."""
    data = SyntheticSource((10, 10, 20), np.uint16, seed=0).materialize()
    case = MetadataCase({"datasets": [1, 1000], "split": "values", "repeats": 1})
    rows = run_metadata(str(tmp_path), case, data)
    summary = summarize(pd.DataFrame(with_write(rows, data.nbytes)), THRESHOLDS)
    assert set(summary.loc[summary["case"] == "metadata", "bytes_selected"]) == {4000}
    verdict, evidence = judge("many-datasets", summary, (10, 10, 20))
    assert verdict == findings.UNMEASURED
    assert evidence.startswith("the sweep split 4,000 bytes of 2-byte values of a 3-D dataset into 1, 1,000 datasets")
    assert "(2 values each at 1,000)" in evidence


# --- cache-thrashing: chunk-cache.yaml's replay of the subset read row by row ----------------

SUBSET_ARRAY = (3000, 8400)  # the chapter's array (seed line 394)
TILE = (300, 200)  # its tiles (seed line 401), 240,000 bytes of float32
TILE_BYTES = 300 * 200 * 4
CROSSED = 5 * TILE_BYTES  # a row of the 300 x 1,000 subset crosses five tiles (Figure 14u)
# chunk-cache.yaml's caches: 2 tiles (the chapter's), 42 (the tiles along the fastest-varying
# dimension, 8,400 / 200)
CACHES = {480_000: 521, 10_080_000: 10007}


def trace_reads(
    small=1.0, large=0.0, reads=300, cold="first", compression="none", stored=CROSSED, caches=CACHES, shape=SUBSET_ARRAY
) -> list[dict]:
    """The trace case's reads as the read job records them: the subset's rows ``[r, 0:1000]``
    replayed in order from an open file (cold: first) on the contiguous file and the 300 x 200
    tiles, through each chunk cache. A tiled read crosses five tiles (``stored`` bytes in the
    file); the first read fetches them all, each later one the share ``small`` of them through
    a cache that holds fewer than five, ``large`` through one that holds them; the 2-tile
    cache's reads take 10 ms, the others' 1 ms."""
    out = []
    for chunk in ("", "300x200"):
        for cache, slots in caches.items():
            holds = cache >= CROSSED
            for repeat in range(reads):
                share = 1.0 if repeat == 0 or cold == "every" else large if holds else small
                seconds = 0.001 if holds or not chunk else 0.01
                out.append(
                    _store(chunk)
                    | {
                        "compression": compression if chunk else "none",
                        "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
                        "raw_bytes": math.prod(shape) * 4,
                        "case": "trace",
                        "repeat": repeat,
                        "seconds": seconds * (3 if repeat == 0 else 1),
                        "variant": f"random, cache {cache} B/{slots}/0.75, cold {cold}",
                        "policy": "random",
                        "cold_mode": cold,
                        "reader": "h5py",
                        "chunk_cache_bytes": cache,
                        "chunk_cache_slots": slots,
                        "chunk_cache_w0": 0.75,
                        "bytes_selected": 1000 * 4,
                        "chunks_touched": 5 if chunk else 0,
                        "chunk_bytes_touched": CROSSED if chunk else 0,
                        "stored_bytes_touched": stored if chunk else 0,
                        "library_read_bytes": share * stored if chunk else 4000,
                        "device_read_bytes": stored if repeat == 0 or cold == "every" else 0,
                        "cache_state": "cold" if repeat == 0 or cold == "every" else "warm",
                        "selection": f"[{repeat}:{repeat + 1}, 0:1000]",
                    }
                )
    return out


def thrash(**kwargs) -> pd.DataFrame:
    return summarize(pd.DataFrame(trace_reads(**kwargs)), THRESHOLDS)


def test_cache_thrashing_holds_where_the_small_cache_refetches_and_the_sentences_does_not():
    verdict, evidence = judge("cache-thrashing", thrash(), SUBSET_ARRAY)
    assert verdict == findings.HOLDS, evidence
    assert evidence.startswith("300x200 trace: a read crosses 5 chunks (1,200,000 B stored), at least 71.9% of")
    assert "480,000 B cache 100% (fewer than the chunks a read crosses); 10,080,000 B 0%" in evidence
    assert "(at least the 42 chunks along the fastest-varying dimension); time 10.00x" in evidence


def test_cache_thrashing_fails_where_a_cache_of_the_sentences_size_still_refetches():
    """A cache of the 42 tiles along the fastest-varying dimension that still fetches every
    read's tiles: the sentence's remedy does not prevent it, whatever the times say."""
    verdict, evidence = judge("cache-thrashing", thrash(large=1.0), SUBSET_ARRAY)
    assert verdict == findings.FAILS and "10,080,000 B 100%" in evidence
    # a small cache that keeps the chunks (fetches none again) does not thrash: not the chapter's
    verdict, evidence = judge("cache-thrashing", thrash(small=0.1), SUBSET_ARRAY)
    assert verdict == findings.FAILS and "480,000 B cache 10%" in evidence
    # part of the tiles again: between thrashing and keeping them
    verdict, evidence = judge("cache-thrashing", thrash(small=0.7), SUBSET_ARRAY)
    assert verdict == findings.INCONCLUSIVE and "480,000 B cache 70%" in evidence


def test_the_sentences_cache_is_the_chunks_along_the_fastest_varying_dimension_not_those_a_read_crosses():
    """A cache of five tiles holds every tile a row of the subset crosses, but not the 42 along
    the array's fastest-varying dimension: not the sentence's cache, so nothing to judge (the
    old reading took it for the remedy)."""
    caches = {480_000: 521, 1_200_000: 521}
    verdict, evidence = judge("cache-thrashing", thrash(caches=caches), SUBSET_ARRAY)
    assert verdict == findings.UNMEASURED, evidence
    assert "300x200: caches 480,000 B, 1,200,000 B; needs one of 240,000 B to 1,200,000 B" in evidence
    assert "one of at least 10,080,000 B (42 chunks along the fastest-varying dimension)" in evidence
    assert _finding("cache-thrashing").config in evidence
    # in the tiny run's array, 300 x 1,000, the five tiles of a row are all there are along it
    verdict, evidence = judge("cache-thrashing", thrash(caches=caches, shape=(300, 1000)), (300, 1000))
    assert verdict == findings.HOLDS and "at least the 5 chunks along" in evidence, evidence


def test_whether_reads_come_back_to_their_chunks_is_counted_from_the_selections_not_the_caches():
    """60 reads of five tiles each cross 300 tiles of the array's 420: they need not come back
    to any (not measured), though the 42-tile cache fetched nothing again; the tiny run's
    300 x 1,000 array has 5 tiles, which 299 reads cross 1,495 times."""
    verdict, evidence = judge("cache-thrashing", thrash(reads=60), SUBSET_ARRAY)
    assert verdict == findings.UNMEASURED
    assert evidence.startswith("300x200: at least 0.0% of the reads' chunk crossings come back to a chunk")
    verdict, evidence = judge("cache-thrashing", thrash(shape=(300, 1000)), (300, 1000))
    assert verdict == findings.HOLDS and "at least 99.7% of crossings" in evidence, evidence


def test_cache_thrashing_needs_reads_that_keep_the_file_open():
    """cold: every evicts and reopens before each read: no chunk stays in a cache to reuse."""
    verdict, evidence = judge("cache-thrashing", thrash(cold="every"), SUBSET_ARRAY)
    assert verdict == findings.UNMEASURED and evidence.startswith("every trace read is a first access")
    verdict, evidence = judge("cache-thrashing", sweep(*MEASURED), IMAGE)
    assert verdict == findings.UNMEASURED and _finding("cache-thrashing").config in evidence


def test_cache_thrashing_compares_caches_store_by_store_against_the_stored_bytes():
    """A gzip store's reads fetch its compressed tiles (a third of their bytes): its shares are
    of those, and it is judged on its own beside the uncompressed store."""
    gzip = trace_reads(compression="gzip-4", stored=CROSSED // 3)
    both = [r for r in gzip if r["chunk_shape"]] + trace_reads()
    verdict, evidence = judge("cache-thrashing", summarize(pd.DataFrame(both), THRESHOLDS), SUBSET_ARRAY)
    assert verdict == findings.HOLDS, evidence
    assert "300x200 gzip-4 trace: a read crosses 5 chunks (400,000 B stored)" in evidence
    # the gzip store's 42-tile cache fetching its tiles again fails it, whatever the other's
    gzip = trace_reads(compression="gzip-4", stored=CROSSED // 3, large=1.0)
    both = [r for r in gzip if r["chunk_shape"]] + trace_reads()
    assert judge("cache-thrashing", summarize(pd.DataFrame(both), THRESHOLDS), SUBSET_ARRAY)[0] == findings.FAILS
