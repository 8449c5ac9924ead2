"""From raw per-job records to ``measurements.parquet`` and the summary (``summary.parquet``,
typed, and ``summary.csv``).

The summary is derived from the raw rows only: one row per filesystem x layout x
compression x case x variant x cache state, with the study's statistics (min, median, mean,
max, first access), the median's 95% confidence interval, the 90th percentile, and for read
cases the paired ratio to the contiguous layout with its interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from h5sweep.analyze.scoring import CASE_THRESHOLDS, score, threshold_s
from h5sweep.analyze.stats import median_ci, median_ci_over_copies, percentile
from h5sweep.backends import REFERENCE
from h5sweep.cases import CASE_SPECS, OWN_JOB_CASES, READ_CASES, VARIANT_COLUMNS
from h5sweep.measure.records import read_tables, write_table

FILE_KEYS = ["filesystem", "backend", "layout", "chunk_shape", "shard_shape", "order", "compression"]
# A summary row: one file, case and variant, split by where the reads' bytes came from.
GROUP_KEYS = [*FILE_KEYS, "case", "variant", "cache_state"]
# The layout every read is compared with, selection by selection, on the same filesystem.
BASELINE_LAYOUT_ID = "contiguous"
# The store every ratio is to, unless the sweep names another (layouts.reference): the
# reference backend's contiguous store.
DEFAULT_REFERENCE = {"layout_id": BASELINE_LAYOUT_ID, "compression": "none"}


def reference_name(reference: dict) -> str:
    """How tables and verdicts name the reference store: ``contiguous``, ``chunked-... gzip-4``."""
    comp = reference["compression"]
    return reference["layout_id"] + ("" if comp == "none" else f" {comp}")


# Whole numbers, empty where a case or a codec has no such setting: the cases' own (their
# specs say which) and the codec's level.
INTEGER_COLUMNS = list(
    dict.fromkeys([c for spec in CASE_SPECS for c in spec.integer_columns] + ["codec_level", "writes_stopped"])
)
# Counted evidence per read, summarized by its median.
COUNT_COLUMNS = [
    "device_read_bytes",
    "library_read_bytes",
    "read_calls",
    "page_faults",
    "library_write_bytes",
    "write_calls",
    "chunk_bytes_touched",
    "stored_bytes_touched",
]
# A read's time split into its storage part and the rest (``split_read_time``)
SPLIT_COLUMNS = ["storage_s", "decode_copy_s"]
# The write case, the read cases (then boxes, by name), then the cases with a job of their own.
OWN_JOB = [name for names in OWN_JOB_CASES.values() for name in names]
CASE_ORDER = ["write", *READ_CASES, *OWN_JOB]
TIME_COLUMNS = ["repeats", "min_s", "median_s", "median_ci_low_s", "median_ci_high_s", "p90_s", "mean_s", "max_s"]


def _median_interval(seconds: pd.Series) -> pd.Series:
    median, low, high = median_ci(seconds.to_numpy())
    return pd.Series({"median_ci_low_s": low, "median_ci_high_s": high})


# The backend every other backend is compared with, layout by layout (the only one with a
# contiguous layout: its contiguous file is every backend's baseline).
BASELINE_BACKEND = REFERENCE
# A read and its partner in a pairing read the same selection in the same visiting policy and
# cold mode, and found its bytes in the same place.
PAIRED_READ = ["filesystem", "case", "policy", "cold_mode", "cache_state", "repeat"]


CHUNK_CACHE_COLUMNS = ("chunk_cache_bytes", "chunk_cache_slots", "chunk_cache_w0")


def _first_option(reads: pd.DataFrame, first: dict | None) -> pd.DataFrame:
    """The baseline backend's reads in its first read option (the config's first chunk cache,
    ``first``) only: the partner of another backend's read (whose read options are its own)."""
    columns = [c for c in (first or {}) if c in reads]
    if reads.empty or not columns:
        return reads
    keep = np.logical_and.reduce([reads[c] == first[c] for c in columns])
    return reads[keep]


def first_read_option(reads: pd.DataFrame) -> dict | None:
    """The baseline backend's first read option as the records list it (the config's order,
    not the summary's sort order): its chunk cache settings."""
    baseline = reads[reads["backend"] == BASELINE_BACKEND]
    if baseline.empty:
        return None
    first = baseline.iloc[0]
    return {c: first[c] for c in CHUNK_CACHE_COLUMNS if c in baseline}


def _ratio_table(joined: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    out = []
    for keys, part in joined.groupby(GROUP_KEYS, dropna=False, sort=False):
        if "store_copy" in part:  # reads from several copies: the copies drawn too
            median, low, high = median_ci_over_copies(
                part["_ratio"].to_numpy(), part["store_copy"].fillna(0).to_numpy()
            )
        else:
            median, low, high = median_ci(part["_ratio"].to_numpy())
        out.append([*keys, median, low, high, len(part)])
    return pd.DataFrame(out, columns=[*GROUP_KEYS, *names])


def paired_ratios(reads: pd.DataFrame, first: dict | None, reference: dict | None = None) -> pd.DataFrame:
    """Per summary row of a read case: the median of the per-selection ratios of its reads
    to the reference store's reads (``reference``: its layout id and compression; by default
    the contiguous layout's) of the same selections (same filesystem, case, variant
    and cache state; paired by repeat), with the ratio's confidence interval. A backend
    without a contiguous layout (Zarr) is paired with the contiguous HDF5 file's reads in its
    first chunk cache (``first``, :func:`first_read_option`; same visiting policy and cold
    mode). Every other backend is paired so, also one with a contiguous store of its own (raw):
    every ratio of a sweep is to the same store."""
    names = ["ratio_to_contiguous", "ratio_ci_low", "ratio_ci_high", "ratio_pairs"]
    is_baseline = reads["backend"] == BASELINE_BACKEND
    reference = reference or DEFAULT_REFERENCE
    contiguous = reads[
        is_baseline
        & (reads["layout_id"] == reference["layout_id"])
        & (reads["compression"] == reference["compression"])
    ]
    if contiguous.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *names])
    own_keys = ["filesystem", "backend", "case", "variant", "cache_state", "repeat"]
    own = reads[is_baseline].merge(
        contiguous[[*own_keys, "seconds"]].rename(columns={"seconds": "_base_s"}), on=own_keys, how="inner"
    )
    others = reads[~is_baseline]
    baseline = _first_option(contiguous, first)
    keys = [c for c in PAIRED_READ if c in reads]
    borrowed = others.merge(baseline[[*keys, "seconds"]].rename(columns={"seconds": "_base_s"}), on=keys, how="inner")
    joined = pd.concat([own, borrowed], ignore_index=True)
    joined["_ratio"] = joined["seconds"] / joined["_base_s"]
    return _ratio_table(joined, names)


def backend_ratios(reads: pd.DataFrame, first: dict | None) -> pd.DataFrame:
    """Per summary row of another backend's read case: the median of the per-selection ratios
    of its reads to HDF5's reads of the same chunk shape, order, compression and selections
    (HDF5's first chunk cache), with the ratio's confidence interval: the backends side by side."""
    names = ["ratio_to_hdf5", "ratio_to_hdf5_ci_low", "ratio_to_hdf5_ci_high", "ratio_to_hdf5_pairs"]
    # the same chunk shape, storage order and compression (a sharded Zarr store's twin is the
    # HDF5 file of its chunk shape)
    keys = [c for c in PAIRED_READ if c in reads] + ["chunk_shape", "order", "compression"]
    hdf5 = reads[reads["backend"] == BASELINE_BACKEND]
    others = reads[reads["backend"] != BASELINE_BACKEND]
    if hdf5.empty or others.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *names])
    partners = _first_option(hdf5, first)[[*keys, "seconds"]].rename(columns={"seconds": "_base_s"})
    joined = others.merge(partners, on=keys, how="inner")
    joined["_ratio"] = joined["seconds"] / joined["_base_s"]
    return _ratio_table(joined, names)


def _bandwidth_interval(rates: pd.Series) -> pd.Series:
    median, low, high = median_ci(rates.to_numpy())
    return pd.Series({"bytes_per_s_median": median, "bytes_per_s_ci_low": low, "bytes_per_s_ci_high": high})


def bandwidths(rows: pd.DataFrame) -> pd.DataFrame:
    """Cases timed as whole passes (``bytes_per_s`` per row): per group the best bandwidth
    over the repeats (the study's statistic) and the median with its interval."""
    passes = rows[rows["bytes_per_s"].notna()]
    grouped = passes.groupby(GROUP_KEYS, sort=False, dropna=False)["bytes_per_s"]
    best = grouped.max().rename("bytes_per_s_max")
    return pd.concat([best, grouped.apply(_bandwidth_interval).unstack()], axis=1).reset_index()


def summarize(measurements: pd.DataFrame, thresholds: dict, reference: dict | None = None) -> pd.DataFrame:
    if measurements.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *TIME_COLUMNS, "first_s"])
    measurements = measurements.copy()
    for column, default in (("variant", ""), ("order", "xyz"), ("cache_state", ""), ("shard_shape", "")):
        if column not in measurements:  # records from before the column existed
            measurements[column] = default
        measurements[column] = measurements[column].fillna(default)
    # read cases (built-in or boxes) are the rows the query stage wrote: they have a policy
    is_read = (
        measurements["policy"].notna() if "policy" in measurements else measurements["case"].isin(list(READ_CASES))
    )
    reads = measurements[is_read]
    writes = measurements[measurements["case"] == "write"]
    # the first variant of each backend's reads and writes: the config's first settings
    primary = reads.groupby("backend", sort=False)["variant"].first().to_dict()
    primary_write = writes.groupby("backend", sort=False)["variant"].first().to_dict()
    ordered = measurements.sort_values([*GROUP_KEYS, "repeat"], kind="stable")
    grouped = ordered.groupby(GROUP_KEYS, sort=False, dropna=False)
    firsts = [
        "layout_id",
        "layout_name",
        "filter_family",
        "codec",
        "codec_level",
        "shuffle",
        "bytes_selected",
        "raw_bytes",
        "fs_type",
        "h5py_call_overhead_s",
    ]
    summary = grouped.agg(
        **{c: (c, "first") for c in firsts if c in ordered},
        repeats=("seconds", "size"),
        min_s=("seconds", "min"),
        median_s=("seconds", "median"),
        p90_s=("seconds", lambda s: percentile(s, 90)),
        mean_s=("seconds", "mean"),
        max_s=("seconds", "max"),
        first_s=("seconds", "first"),
        std_s=("seconds", "std"),
        chunks_touched_mean=("chunks_touched", "mean"),
        **{f"{c}_median": (c, "median") for c in COUNT_COLUMNS if c in ordered},
        **{f"{c}_median": (c, "median") for c in SPLIT_COLUMNS if c in ordered and ordered[c].notna().any()},
        **{c: (c, "first") for c in VARIANT_COLUMNS if c in ordered},
        **({"cache_holds_chunk": ("cache_holds_chunk", "first")} if "cache_holds_chunk" in ordered else {}),
        **(
            {"writes_stopped": ("stopped", _count_true), "limit_s": ("limit_s", "first")}
            if "stopped" in ordered
            else {}
        ),
    ).reset_index()
    intervals = grouped["seconds"].apply(_median_interval).unstack().reset_index()
    summary = summary.merge(intervals, on=GROUP_KEYS, how="left")
    if "bytes_per_s" in ordered and ordered["bytes_per_s"].notna().any():
        summary = summary.merge(bandwidths(ordered), on=GROUP_KEYS, how="left")
    read_rows = ordered[is_read.loc[ordered.index]]
    first = first_read_option(reads)  # from the records' order: the config's first chunk cache
    summary = summary.merge(paired_ratios(read_rows, first, reference), on=GROUP_KEYS, how="left")
    summary["ratio_reference"] = reference_name(reference or DEFAULT_REFERENCE)
    if (read_rows["backend"] != BASELINE_BACKEND).any():
        summary = summary.merge(backend_ratios(read_rows, first), on=GROUP_KEYS, how="left")
    # File size as the write case wrote it (the standard API, as a user's converter would).
    by_file = ordered.groupby(FILE_KEYS, dropna=False)["file_bytes"].last()
    written = ordered[ordered["case"] == "write"].groupby(FILE_KEYS, dropna=False)["file_bytes"].last()
    sizes = written.combine_first(by_file)
    if "query_file_bytes" in ordered:  # every write stopped and nothing read: the query file's
        sizes = sizes.combine_first(ordered.groupby(FILE_KEYS, dropna=False)["query_file_bytes"].last())
    sizes = sizes.astype("Int64").rename("file_bytes").reset_index()
    summary = summary.merge(sizes, on=FILE_KEYS, how="left")
    summary["compression_ratio"] = summary["raw_bytes"] / summary["file_bytes"]
    if {"device_read_bytes_median", "stored_bytes_touched_median"} <= set(summary.columns):
        summary["read_amplification"] = read_amplification(summary)
    summary = _add_scores(summary, ordered[is_read.loc[ordered.index]], thresholds, primary)
    summary["primary"] = _primary(summary, primary, primary_write)
    summary["case"] = pd.Categorical(summary["case"], categories=_case_order(summary["case"]), ordered=True)
    summary = summary.sort_values(
        ["filesystem", "case", "variant", "layout", "chunk_shape", "compression", "cache_state"], key=_natural
    )
    summary["case"] = summary["case"].astype(str)
    for column in INTEGER_COLUMNS:
        if column in summary:  # whole numbers, empty where the case has no such setting
            summary[column] = summary[column].astype("Int64")
    if "cache_holds_chunk" in summary:  # true/false, empty where the case has no chunk cache
        summary["cache_holds_chunk"] = summary["cache_holds_chunk"].astype("boolean")
    ordered_columns = [*GROUP_KEYS, *TIME_COLUMNS]
    return summary[ordered_columns + [c for c in summary if c not in ordered_columns]].reset_index(drop=True)


def _count_true(flags: pd.Series) -> float:
    """How many rows say true (NaN where none says either: a group of another case)."""
    known = flags.dropna()
    return float(known.astype(bool).sum()) if len(known) else float("nan")


def _add_scores(summary: pd.DataFrame, reads: pd.DataFrame, thresholds: dict, primary: dict) -> pd.DataFrame:
    """The study's score per file and read variant, from each case's median over all its
    reads (cold and warm together, as the study's), with thresholds scaled to the bytes each
    case selects; write rows carry the score of the first read variant."""
    score_keys = [*FILE_KEYS, "variant"]
    scores = []
    medians = reads.groupby([*score_keys, "case"], dropna=False).agg(
        median_s=("seconds", "median"), bytes_selected=("bytes_selected", "first")
    )
    files = summary.groupby(FILE_KEYS, dropna=False)[["file_bytes", "raw_bytes"]].first()
    for keys, rows in medians.reset_index().groupby(score_keys, dropna=False):
        file_bytes, raw_bytes = files.loc[tuple(keys[: len(FILE_KEYS)])]
        by_case = dict(zip(rows["case"], rows["median_s"], strict=True))
        selected = dict(zip(rows["case"], rows["bytes_selected"], strict=True))
        points, available = score(by_case, float(file_bytes), float(raw_bytes), thresholds, selected)
        scores.append({**dict(zip(score_keys, keys, strict=True)), "score": points, "score_max": available})
    scores = pd.DataFrame(scores, columns=[*score_keys, "score", "score_max"])
    is_read = summary["case"].isin(list(READ_CASES))
    by_variant = summary["variant"].where(is_read, summary["backend"].map(primary))
    summary = summary.assign(_score_variant=by_variant).merge(
        scores.rename(columns={"variant": "_score_variant"}), on=[*FILE_KEYS, "_score_variant"], how="left"
    )
    summary = summary.drop(columns="_score_variant")
    if reads.empty:  # no read case: the score is the file size criterion alone
        for i, row in summary.iterrows():
            summary.loc[i, ["score", "score_max"]] = score({}, row["file_bytes"], row["raw_bytes"], thresholds)
    summary["score_threshold_s"] = [
        threshold_s(case, thresholds, selected) if case in CASE_THRESHOLDS else np.nan
        for case, selected in zip(summary["case"], summary["bytes_selected"], strict=True)
    ]
    return summary


def model_bytes(summary: pd.DataFrame) -> pd.Series:
    """What a read must fetch by the model: the stored bytes of the chunks it touches, or for
    a contiguous layout the bytes it selects."""
    contiguous = summary["layout"] == "contiguous"
    return summary["stored_bytes_touched_median"].where(~contiguous, summary["bytes_selected"]).astype(float)


def read_amplification(summary: pd.DataFrame) -> pd.Series:
    """Cold reads: bytes fetched from the device per byte the model says the read needs."""
    needed = model_bytes(summary)
    cold = (summary["cache_state"] == "cold") & (needed > 0)
    return (summary["device_read_bytes_median"].astype(float) / needed).where(cold)


def _primary(summary: pd.DataFrame, primary: dict, primary_write: dict) -> pd.Series:
    """The rows the study's figures show: each backend's first variant of each case (the
    config's first settings) and, where its reads split into cache states, the state most of
    them were in."""
    first = np.where(summary["case"] == "write", summary["backend"].map(primary_write), summary["backend"].map(primary))
    first_variant = summary["variant"] == first
    first_variant |= summary["case"].isin(OWN_JOB)
    keys = [*FILE_KEYS, "case", "variant"]
    majority = summary.sort_values("repeats", ascending=False, kind="stable").drop_duplicates(keys).index
    chosen = summary.index.isin(majority) | summary["case"].isin(OWN_JOB)
    return first_variant & chosen


def _case_order(cases: pd.Series) -> list[str]:
    return [c for c in CASE_ORDER if c in set(cases)] + sorted(set(cases) - set(CASE_ORDER))


def _natural(column: pd.Series) -> pd.Series:
    """Sort chunk shapes by their numbers (4x4x256 before 4x4x2048), other columns as is."""
    if column.name != "chunk_shape":
        return column
    return column.map(lambda s: tuple(int(v) for v in s.split("x")) if s else ())


# Whole numbers a raw row may lack (another case's setting, a count the kernel does not
# give): stored as nullable integers, not as floats with NaN (beside the ones ``aggregate``
# types before the summary is made).
MEASUREMENT_INTEGER_COLUMNS = [
    "reads_since_open",
    "files_touched",
    "query_file_bytes",
    "rank_nodes",
    "slurm_tasks",
    "store_copy",
    *INTEGER_COLUMNS,
    *COUNT_COLUMNS,
]


def whole_numbers(measurements: pd.DataFrame) -> pd.DataFrame:
    """A copy with the columns of whole numbers that some rows lack (floats, NaN there) as
    nullable integers (``Int64``), empty there; a column holding a fraction stays as it is,
    one that every row has stays ``int64``."""
    measurements = measurements.copy()
    for column in MEASUREMENT_INTEGER_COLUMNS:
        if column not in measurements or not pd.api.types.is_float_dtype(measurements[column]):
            continue
        values = measurements[column].dropna()
        if (values == values.round()).all():
            measurements[column] = measurements[column].astype("Int64")
    return measurements


def aggregate(
    record_paths: list[str],
    measurements_out: str,
    summary_out: str,
    summary_csv_out: str,
    thresholds: dict,
    reference: dict | None = None,
) -> pd.DataFrame:
    """All records into ``measurements_out``; the summary as a typed table (Parquet,
    ``summary_out``) and as CSV for spreadsheets (``summary_csv_out``)."""
    measurements = read_tables(sorted(record_paths))
    for column in ("file_bytes", "interleaved_stores", "visit_position", "codec_level"):
        if column in measurements:  # carried into the summary as whole numbers
            measurements[column] = measurements[column].astype("Int64")
    if "stopped" in measurements:  # true or false for writes, empty for other cases
        measurements["stopped"] = measurements["stopped"].astype("boolean")
    summary = summarize(measurements, thresholds, reference)
    write_table(whole_numbers(measurements), measurements_out)
    write_table(summary, summary_out)
    write_table(summary, summary_csv_out)
    return summary
