"""The HDF User's Guide ch. 14 findings, each judged on rows built the way its shipped config's
rows come out: the reads of one row and one column of a 2-D array from a contiguous file and
two tilings, each read from the device (cold: every), summarized by the aggregate as
subsetting.yaml's are; the metadata case's own rows, of a real run of the chapter's 1,000
values as one dataset and as 1,000; and the chunk cache's sustained reads (chunk-cache.yaml)."""

import numpy as np
import pandas as pd
import pytest

from h5sweep.analyze import findings
from h5sweep.analyze.aggregate import summarize
from h5sweep.cases.metadata import MetadataCase, run_metadata
from h5sweep.storage.datasources import SyntheticSource

THRESHOLDS = {
    "slice_median_s": 0.1,
    "spectra_median_s": 0.05,
    "subcube_median_s": 0.002,
    "file_overhead": 0.05,
    "scale_to_selection": False,
}
IMAGE = (2000, 1600)  # the chapter's 2,000 x 1,600 array of 32-bit integers (Figure 14j)
REPEATS = 20  # subsetting.yaml's reads of each case
CONTIGUOUS_S = 0.002
# each repeat's time, as a factor of its median: a spread of about 20%
SPREAD = np.linspace(0.9, 1.1, REPEATS)


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


def reads(ratios: dict, case: str, lines: int = 1, state: str = "cold", cold: str = "every", spreads=None) -> list:
    """One case's reads as the read jobs record them: ``REPEATS`` reads of one row (``rows``,
    ``[r:r+lines, :]``) or one column (``column``, ``[:, c:c+lines]``) per store, each from an
    evicted file; a chunked store's read of a selection takes ``ratios[chunk]`` times the
    contiguous file's read of it, from 1.22 to 0.82 times that repeat by repeat, or
    ``spreads[chunk]`` times it where given."""
    width = IMAGE[1] if case == "rows" else IMAGE[0]
    out = []
    for chunk in ("", *ratios):
        # the contiguous reads spread 0.9-1.1 of their median, the chunked 1.1-0.9 of theirs
        spread = SPREAD if not chunk else (spreads or {}).get(chunk, SPREAD[::-1]) * ratios[chunk]
        for repeat in range(REPEATS):
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


CUBE = (20, 20, 400)


def cube_reads(slice_ratio: float, spectra_ratio: float) -> pd.DataFrame:
    """z-slices and spectra of a 3-D cube (z fastest) from a contiguous file and 4 x 4 x 100
    chunks, read cold."""
    out = []
    for case, ratio, nbytes in (("slice", slice_ratio, 20 * 20 * 25 * 4), ("spectra", spectra_ratio, 5 * 5 * 400 * 4)):
        for row in reads({"4x4x100": ratio}, case):
            out.append(row | {"bytes_selected": nbytes, "raw_bytes": 20 * 20 * 400 * 4})
    return summarize(pd.DataFrame(out), THRESHOLDS)


def test_in_3d_a_z_slice_reads_across_the_slower_dimensions_and_a_spectrum_along_the_fastest():
    summary = cube_reads(0.3, 3.0)
    verdict, evidence = judge("chunking-helps-slow-axis", summary, CUBE)
    assert verdict == findings.HOLDS and evidence.startswith("z-slices (slice)")
    verdict, evidence = judge("chunking-hurts-fast-axis", summary, CUBE)
    assert verdict == findings.HOLDS and evidence.startswith("spectra (spectra)")
    inverted = cube_reads(3.0, 0.3)
    assert judge("chunking-helps-slow-axis", inverted, CUBE)[0] == findings.FAILS
    assert judge("chunking-hurts-fast-axis", inverted, CUBE)[0] == findings.FAILS


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
    """Holds and does not hold, on the file sizes as the summary carries them; never
    inconclusive: a file's size is counted, the same every repeat (the summary keeps one)."""
    # the chapter's own sizes (Tables 14A and 14B): 896,803 against 7,258 bytes, 123.6x
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 896_803, one=7258), (10, 10, 10))
    assert verdict == findings.HOLDS and evidence.startswith("123.6x")
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 387_208, one=6048), (10, 10, 10))
    assert verdict == findings.FAILS and evidence.startswith("64.0x")
    # exactly 100x is not "more than 100"
    verdict, evidence = judge("many-datasets", _sizes(chapter_rows, 725_800, one=7258), (10, 10, 10))
    assert verdict == findings.FAILS and evidence.startswith("100.0x")


def test_many_datasets_is_not_measured_on_datasets_that_are_not_the_chapters(tmp_path):
    """The old config's split (spectra of a uint16 cube, 400 B to 4 kB a dataset) cannot show
    the chapter's factor: the finding says so instead of judging it."""
    data = SyntheticSource((4, 5, 50), np.uint16, seed=0).materialize()
    rows = run_metadata(str(tmp_path), MetadataCase({"datasets": [1, 10, 20], "repeats": 1}), data)
    summary = summarize(pd.DataFrame(with_write(rows, data.nbytes)), THRESHOLDS)
    verdict, evidence = judge("many-datasets", summary, (20, 20, 50))
    assert verdict == findings.UNMEASURED
    assert evidence.startswith("the sweep split 2,000 bytes into 1, 10, 20 datasets; the chapter split 4,000")
    verdict, evidence = judge("many-datasets", sweep(*MEASURED), IMAGE)
    assert verdict == findings.UNMEASURED and _finding("many-datasets").config in evidence


# --- cache-thrashing: chunk-cache.yaml's replay of the subset read row by row ----------------

TILE_BYTES = 300 * 200 * 4  # chunk-cache.yaml's 300 x 200 tiles of float32
CROSSED = 5 * TILE_BYTES  # a row of the 300 x 1,000 subset crosses five tiles (Figure 14u)
CACHES = {480_000: "cache 469 KiB/521/0.75", 10_080_000: "cache 9.613 MiB/10007/0.75"}


def trace_reads(small_s: float, spread=None, revisits=True, compression="none", reads=300) -> list[dict]:
    """The trace case's reads as the read job records them: the subset's 300 rows replayed in
    order from an open file (cold: first), through each chunk cache: the 2-tile cache fetches
    the five tiles of every row from the file (``small_s`` per read, times ``spread`` repeat
    by repeat where given), the 42-tile cache only on the first (1 ms per read after it); or,
    not ``revisits``, reads that each fetch their own tiles whatever the cache."""
    out = []
    for cache, label in CACHES.items():
        holds = cache >= CROSSED
        for repeat in range(reads):
            seconds = 0.001 if holds else small_s * (1 if spread is None else spread[repeat % len(spread)])
            fetched = CROSSED if repeat == 0 or not holds or not revisits else 0
            out.append(
                _store("300x200")
                | {
                    "compression": compression,
                    "layout_id": "chunked-300x200",
                    "raw_bytes": 3000 * 8400 * 4,
                    "case": "trace",
                    "repeat": repeat,
                    "seconds": seconds * (3 if repeat == 0 else 1),
                    "variant": f"random, {label}, cold first",
                    "policy": "random",
                    "cold_mode": "first",
                    "reader": "h5py",
                    "chunk_cache_bytes": cache,
                    "chunk_cache_slots": 521 if cache < CROSSED else 10007,
                    "chunk_cache_w0": 0.75,
                    "bytes_selected": 1000 * 4,
                    "chunks_touched": 5,
                    "chunk_bytes_touched": CROSSED,
                    "library_read_bytes": fetched,
                    "device_read_bytes": CROSSED if repeat == 0 else 0,
                    "cache_state": "cold" if repeat == 0 else "warm",
                }
            )
    return out


def thrash(*args, **kwargs) -> pd.DataFrame:
    return summarize(pd.DataFrame(trace_reads(*args, **kwargs)), THRESHOLDS)


SUBSET_ARRAY = (3000, 8400)


def test_cache_thrashing_reaches_each_verdict_on_the_replayed_subset():
    verdict, evidence = judge("cache-thrashing", thrash(0.01), SUBSET_ARRAY)
    assert verdict == findings.HOLDS, evidence
    assert evidence.startswith("300x200 trace: 480000 B cache over 10080000 B 10.00x")
    assert judge("cache-thrashing", thrash(0.0015), SUBSET_ARRAY)[0] == findings.FAILS
    # the 2-tile cache's reads straddle twice the 42-tile cache's
    verdict, evidence = judge("cache-thrashing", thrash(0.002, spread=np.linspace(0.5, 1.5, 299)), SUBSET_ARRAY)
    assert verdict == findings.INCONCLUSIVE, evidence
    # only caches that hold a row's tiles: nothing to compare
    only_large = summarize(pd.DataFrame([r for r in trace_reads(0.01) if r["chunk_cache_bytes"] > CROSSED]), THRESHOLDS)
    verdict, evidence = judge("cache-thrashing", only_large, SUBSET_ARRAY)
    assert verdict == findings.UNMEASURED and _finding("cache-thrashing").config in evidence


def test_cache_thrashing_is_not_judged_on_reads_that_do_not_come_back_to_their_chunks():
    """Random boxes fetch their own chunks read after read, whatever the cache holds: the
    chapter's thrashing needs reads that come back to the chunks before them."""
    verdict, evidence = judge("cache-thrashing", thrash(0.0015, revisits=False), SUBSET_ARRAY)
    assert verdict == findings.UNMEASURED
    assert evidence.startswith("the reads do not come back to their predecessors' chunks: 300x200 trace reads fetch")


def test_cache_thrashing_compares_caches_store_by_store_not_across_codecs():
    """A gzip store whose 2-tile cache is not 2x slower is judged on its own, beside the
    uncompressed store whose is."""
    rows = trace_reads(0.01) + [r | {"layout_id": "chunked-300x200"} for r in trace_reads(0.0015, compression="gzip-4")]
    verdict, evidence = judge("cache-thrashing", summarize(pd.DataFrame(rows), THRESHOLDS), SUBSET_ARRAY)
    assert verdict == findings.FAILS
    assert "300x200 gzip-4 trace: 480000 B cache over 10080000 B 1.50x" in evidence
