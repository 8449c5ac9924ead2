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
from h5sweep.backends import (
    CARRIED_COLUMNS,
    RATIO_TO_REFERENCE,
    RATIO_TO_REFERENCE_CI_HIGH,
    RATIO_TO_REFERENCE_CI_LOW,
    RATIO_TO_REFERENCE_PAIRS,
    REFERENCE,
)
from h5sweep.backends import chunk_cache as CC
from h5sweep.cases import CASE_SPECS, OWN_JOB_CASES, READ_CASES, VARIANT_COLUMNS
from h5sweep.measure.records import read_tables, write_table
from h5sweep.measure.stats import median_ci, median_ci_level, median_ci_over_copies, percentile
from h5sweep.storage import columns, objectstore
from h5sweep.storage import columns as C
from h5sweep.storage.layouts import BASELINE_LAYOUT_ID

FILE_KEYS = [C.FILESYSTEM, C.BACKEND, C.LAYOUT, C.CHUNK_SHAPE, C.SHARD_SHAPE, C.PAGE_SIZE, C.ORDER, C.COMPRESSION]
# A summary row: one file, case and variant, split by where the reads' bytes came from.
GROUP_KEYS = [*FILE_KEYS, C.CASE, C.VARIANT, C.CACHE_STATE]
# The store every ratio is to, unless the sweep names another (layouts.reference): the
# reference backend's contiguous store.
DEFAULT_REFERENCE = {C.LAYOUT_ID: BASELINE_LAYOUT_ID, C.COMPRESSION: "none"}


def reference_name(reference: dict) -> str:
    """How tables and verdicts name the reference store: ``contiguous``, ``chunked-... gzip-4``."""
    comp = reference[C.COMPRESSION]
    return reference[C.LAYOUT_ID] + ("" if comp == "none" else f" {comp}")


# Counted evidence per read, summarized by its median.
COUNT_COLUMNS = [
    C.DEVICE_READ_BYTES,
    C.LIBRARY_READ_BYTES,
    C.READ_CALLS,
    C.PAGE_FAULTS,
    C.LIBRARY_WRITE_BYTES,
    C.WRITE_CALLS,
    C.CHUNK_BYTES_TOUCHED,
    C.STORED_BYTES_TOUCHED,
]
# A read's time split into its storage part and the rest (``split_read_time``)
SPLIT_COLUMNS = [C.STORAGE_S, C.DECODE_COPY_S]
# The write case, the read cases (then boxes, by name), then the cases with a job of their own.
OWN_JOB = [name for names in OWN_JOB_CASES.values() for name in names]
CASE_ORDER = ["write", *READ_CASES, *OWN_JOB]
TIME_COLUMNS = [
    C.REPEATS,
    C.MIN_S,
    C.MEDIAN_S,
    C.MEDIAN_CI_LOW_S,
    C.MEDIAN_CI_HIGH_S,
    C.MEDIAN_CI_LEVEL,
    C.P90_S,
    C.MEAN_S,
    C.MAX_S,
]
# A row's two-sided intervals: none for a store raced out (its one-sided bound says what is known)
TWO_SIDED = [
    (C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S),
    (C.MEDIAN_CI_LEVEL,),
    (C.STORAGE_S_CI_LOW, C.STORAGE_S_CI_HIGH),
    (C.RATIO_CI_LOW, C.RATIO_CI_HIGH),
    (RATIO_TO_REFERENCE_CI_LOW, RATIO_TO_REFERENCE_CI_HIGH),
]


def _median_interval(seconds: pd.Series) -> pd.Series:
    median, low, high = median_ci(seconds.to_numpy())
    level = median_ci_level(int(seconds.notna().sum()))
    return pd.Series({C.MEDIAN_CI_LOW_S: low, C.MEDIAN_CI_HIGH_S: high, C.MEDIAN_CI_LEVEL: level})


def _storage_interval(seconds: pd.Series) -> pd.Series:
    """The interval of ``storage_s_median`` (a split read's storage part), as the median's."""
    median, low, high = median_ci(seconds.to_numpy())
    return pd.Series({C.STORAGE_S_CI_LOW: low, C.STORAGE_S_CI_HIGH: high})


# The backend every other backend is compared with, layout by layout (the only one with a
# contiguous layout: its contiguous file is every backend's baseline).
BASELINE_BACKEND = REFERENCE
# A read and its partner in a pairing read the same selection in the same visiting policy and
# cold mode, and found its bytes in the same place.
PAIRED_READ = [C.FILESYSTEM, C.CASE, C.POLICY, C.COLD_MODE, C.CACHE_STATE, C.REPEAT]


CHUNK_CACHE_COLUMNS = (CC.CHUNK_CACHE_BYTES, CC.CHUNK_CACHE_SLOTS, CC.CHUNK_CACHE_W0)


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
    baseline = reads[reads[C.BACKEND] == BASELINE_BACKEND]
    if baseline.empty:
        return None
    first = baseline.iloc[0]
    return {c: first[c] for c in CHUNK_CACHE_COLUMNS if c in baseline}


def _ratio_table(joined: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    out = []
    for keys, part in joined.groupby(GROUP_KEYS, dropna=False, sort=False):
        if C.STORE_COPY in part:  # reads from several copies: the copies drawn too
            median, low, high = median_ci_over_copies(
                part["_ratio"].to_numpy(), part[C.STORE_COPY].fillna(0).to_numpy()
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
    names = [C.RATIO_TO_CONTIGUOUS, C.RATIO_CI_LOW, C.RATIO_CI_HIGH, C.RATIO_PAIRS]
    is_baseline = reads[C.BACKEND] == BASELINE_BACKEND
    reference = reference or DEFAULT_REFERENCE
    contiguous = reads[
        is_baseline
        & (reads[C.LAYOUT_ID] == reference[C.LAYOUT_ID])
        & (reads[C.COMPRESSION] == reference[C.COMPRESSION])
    ]
    if contiguous.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *names])
    own_keys = [C.FILESYSTEM, C.BACKEND, C.CASE, C.VARIANT, C.CACHE_STATE, C.REPEAT]
    own = reads[is_baseline].merge(
        contiguous[[*own_keys, C.SECONDS]].rename(columns={C.SECONDS: "_base_s"}), on=own_keys, how="inner"
    )
    others = reads[~is_baseline]
    baseline = _first_option(contiguous, first)
    keys = [c for c in PAIRED_READ if c in reads]
    borrowed = others.merge(baseline[[*keys, C.SECONDS]].rename(columns={C.SECONDS: "_base_s"}), on=keys, how="inner")
    joined = pd.concat([own, borrowed], ignore_index=True)
    joined["_ratio"] = joined[C.SECONDS] / joined["_base_s"]
    return _ratio_table(joined, names)


def backend_ratios(reads: pd.DataFrame, first: dict | None) -> pd.DataFrame:
    """Per summary row of another backend's read case: the median of the per-selection ratios
    of its reads to HDF5's reads of the same chunk shape, order, compression and selections
    (HDF5's first chunk cache), with the ratio's confidence interval: the backends side by side."""
    names = [RATIO_TO_REFERENCE, RATIO_TO_REFERENCE_CI_LOW, RATIO_TO_REFERENCE_CI_HIGH, RATIO_TO_REFERENCE_PAIRS]
    # the same chunk shape, storage order and compression (a sharded Zarr store's twin is the
    # HDF5 file of its chunk shape)
    keys = [c for c in PAIRED_READ if c in reads] + [C.CHUNK_SHAPE, C.ORDER, C.COMPRESSION]
    hdf5 = reads[reads[C.BACKEND] == BASELINE_BACKEND]
    others = reads[reads[C.BACKEND] != BASELINE_BACKEND]
    if hdf5.empty or others.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *names])
    partners = _first_option(hdf5, first)[[*keys, C.SECONDS]].rename(columns={C.SECONDS: "_base_s"})
    joined = others.merge(partners, on=keys, how="inner")
    joined["_ratio"] = joined[C.SECONDS] / joined["_base_s"]
    return _ratio_table(joined, names)


def summarize(measurements: pd.DataFrame, thresholds: dict, reference: dict | None = None) -> pd.DataFrame:
    if measurements.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, *TIME_COLUMNS, C.FIRST_S])
    measurements = measurements.copy()
    defaults = ((C.VARIANT, ""), (C.ORDER, "xyz"), (C.CACHE_STATE, ""), (C.SHARD_SHAPE, ""), (C.PAGE_SIZE, 0))
    for column, default in defaults:
        if column not in measurements:  # records from before the column existed
            measurements[column] = default
        measurements[column] = measurements[column].fillna(default)
    # reads failed on an emulated fault have no time: counted (_with_fault_counts), not timed
    counted, measurements = measurements, measurements[~failed_reads(measurements)]
    # read cases (built-in or boxes) are the rows the query stage wrote: they have a policy
    is_read = (
        measurements[C.POLICY].notna() if C.POLICY in measurements else measurements[C.CASE].isin(list(READ_CASES))
    )
    reads = measurements[is_read]
    writes = measurements[measurements[C.CASE] == "write"]
    # the first variant of each backend's reads and writes: the config's first settings
    primary = reads.groupby(C.BACKEND, sort=False)[C.VARIANT].first().to_dict()
    primary_write = writes.groupby(C.BACKEND, sort=False)[C.VARIANT].first().to_dict()
    ordered = measurements.sort_values([*GROUP_KEYS, C.REPEAT], kind="stable")
    grouped = ordered.groupby(GROUP_KEYS, sort=False, dropna=False)
    firsts = [
        C.LAYOUT_ID,
        C.LAYOUT_NAME,
        C.FILTER_FAMILY,
        C.CODEC,
        C.CODEC_LEVEL,
        C.SHUFFLE,
        C.BYTES_SELECTED,
        C.RAW_BYTES,
        C.FILL,
        C.JUDGE_SYNTHETIC_VALUES,
        C.FS_TYPE,
        C.FS_DEVICE,
        *CARRIED_COLUMNS,
    ]
    summary = grouped.agg(
        **{c: (c, "first") for c in firsts if c in ordered},
        repeats=(C.SECONDS, "size"),
        min_s=(C.SECONDS, "min"),
        median_s=(C.SECONDS, "median"),
        p90_s=(C.SECONDS, lambda s: percentile(s, 90)),
        mean_s=(C.SECONDS, "mean"),
        max_s=(C.SECONDS, "max"),
        first_s=(C.SECONDS, "first"),
        std_s=(C.SECONDS, "std"),
        chunks_touched_mean=(C.CHUNKS_TOUCHED, "mean"),
        **{f"{c}_median": (c, "median") for c in COUNT_COLUMNS if c in ordered},
        **{
            f"{c}_median": (c, "median")
            for c in (*SPLIT_COLUMNS, *objectstore.REQUEST_COUNTS)
            if c in ordered and ordered[c].notna().any()
        },
        **{c: (c, "first") for c in objectstore.CARRIED if c in ordered and ordered[c].notna().any()},
        **{c: (c, "first") for c in VARIANT_COLUMNS if c in ordered},
        **({C.CACHE_HOLDS_CHUNK: (C.CACHE_HOLDS_CHUNK, "first")} if C.CACHE_HOLDS_CHUNK in ordered else {}),
        **{c: (c, "max") for c in (C.RACED_OUT_ROUND, C.RACED_OUT_AT_LEAST) if c in ordered},
        **(
            {C.WRITES_STOPPED: (C.STOPPED, _count_true), C.LIMIT_S: (C.LIMIT_S, "first")}
            if C.STOPPED in ordered
            else {}
        ),
    ).reset_index()
    intervals = grouped[C.SECONDS].apply(_median_interval).unstack().reset_index()
    summary = summary.merge(intervals, on=GROUP_KEYS, how="left")
    if C.STORAGE_S in ordered and ordered[C.STORAGE_S].notna().any():
        storage = grouped[C.STORAGE_S].apply(_storage_interval).unstack().reset_index()
        summary = summary.merge(storage, on=GROUP_KEYS, how="left")
    for spec in CASE_SPECS:  # the columns a case adds to its groups (its spec's summary hook)
        added = spec.hook("summary")(ordered, GROUP_KEYS) if spec.summary else None
        if added is not None:
            summary = summary.merge(added, on=GROUP_KEYS, how="left")
    read_rows = ordered[is_read.loc[ordered.index]]
    first = first_read_option(reads)  # from the records' order: the config's first chunk cache
    summary = summary.merge(paired_ratios(read_rows, first, reference), on=GROUP_KEYS, how="left")
    summary[C.RATIO_REFERENCE] = reference_name(reference or DEFAULT_REFERENCE)
    if (read_rows[C.BACKEND] != BASELINE_BACKEND).any():
        summary = summary.merge(backend_ratios(read_rows, first), on=GROUP_KEYS, how="left")
    summary = _with_fault_counts(summary, counted, [*firsts, *VARIANT_COLUMNS, *objectstore.CARRIED])
    # File size as the write case wrote it (the standard API, as a user's converter would).
    by_file = ordered.groupby(FILE_KEYS, dropna=False)[C.FILE_BYTES].last()
    written = ordered[ordered[C.CASE] == "write"].groupby(FILE_KEYS, dropna=False)[C.FILE_BYTES].last()
    sizes = written.combine_first(by_file)
    if C.QUERY_FILE_BYTES in ordered:  # every write stopped and nothing read: the query file's
        sizes = sizes.combine_first(ordered.groupby(FILE_KEYS, dropna=False)[C.QUERY_FILE_BYTES].last())
    sizes = sizes.astype("Int64").rename(C.FILE_BYTES).reset_index()
    summary = summary.merge(sizes, on=FILE_KEYS, how="left")
    summary[C.COMPRESSION_RATIO] = summary[C.RAW_BYTES] / summary[C.FILE_BYTES]
    if {C.DEVICE_READ_BYTES_MEDIAN, C.STORED_BYTES_TOUCHED_MEDIAN} <= set(summary.columns):
        summary[C.READ_AMPLIFICATION] = read_amplification(summary)
    summary = _one_sided_when_raced(summary)
    summary = _add_scores(summary, ordered[is_read.loc[ordered.index]], thresholds, primary)
    summary[C.PRIMARY] = _primary(summary, primary, primary_write)
    summary[C.CASE] = pd.Categorical(summary[C.CASE], categories=_case_order(summary[C.CASE]), ordered=True)
    summary = summary.sort_values(
        [C.FILESYSTEM, C.CASE, C.VARIANT, C.LAYOUT, C.CHUNK_SHAPE, C.COMPRESSION, C.CACHE_STATE], key=_natural
    )
    summary[C.CASE] = summary[C.CASE].astype(str)
    # whole numbers and flags, empty where a case has no such setting (a variant's settings and
    # the codec's level typed alike whichever cases the sweep ran)
    summary = columns.typed(summary, settings=(*VARIANT_COLUMNS, C.CODEC_LEVEL, C.WRITES_STOPPED))
    ordered_columns = [*GROUP_KEYS, *TIME_COLUMNS]
    return summary[ordered_columns + [c for c in summary if c not in ordered_columns]].reset_index(drop=True)


def _one_sided_when_raced(summary: pd.DataFrame) -> pd.DataFrame:
    """No two-sided interval for a store raced out of its pass or of the write race: its reads
    stop at the round it lost, so they sample the start of the pass only, and another run's
    value lies inside such an interval far less often than it claims (71-77% where 95% is
    claimed, on the default sweep). Its one-sided bound (``raced_out_at_least``) stays: what is
    known of it, and all."""
    if C.RACED_OUT_ROUND not in summary:
        return summary
    raced = summary[C.RACED_OUT_ROUND].notna()
    for names in TWO_SIDED:
        for name in names:
            if name in summary:
                summary.loc[raced, name] = np.nan
    return summary


def failed_reads(measurements: pd.DataFrame) -> pd.Series:
    """The rows of reads that failed on an emulated fault (``read_failed`` says why)."""
    if objectstore.READ_FAILED not in measurements:
        return pd.Series(False, index=measurements.index)
    said = measurements[objectstore.READ_FAILED]
    return said.notna() & (said.astype(str) != "")


def _with_fault_counts(summary: pd.DataFrame, measurements: pd.DataFrame, firsts: list[str]) -> pd.DataFrame:
    """On an object store through the relay, per summary row: the medians and sums of the
    reads' retried and failed requests and faults met, the share of its reads disturbed and
    how many failed on an emulated fault, over all its reads (the failed ones too). A row
    whose every read failed is added with no time (``repeats`` 0)."""
    if objectstore.REQUESTS_RETRIED not in measurements or measurements[objectstore.REQUESTS_RETRIED].isna().all():
        return summary
    reads = measurements[measurements[objectstore.REQUESTS_RETRIED].notna()].copy()
    reads[objectstore.DISTURBED] = reads[objectstore.DISTURBED].astype(float)
    reads["_failed"] = failed_reads(reads).astype(int)
    counts = (objectstore.REQUESTS_RETRIED, objectstore.REQUESTS_FAILED, objectstore.FAULTS_MET)
    grouped = reads.groupby(GROUP_KEYS, dropna=False, sort=False)
    table = grouped.agg(
        **{f"{c}_median": (c, "median") for c in counts},
        **{f"{c}_sum": (c, "sum") for c in counts},
        disturbed_share=(objectstore.DISTURBED, "mean"),
        reads_failed=("_failed", "sum"),
    ).reset_index()
    known = summary[GROUP_KEYS].drop_duplicates().assign(_known=True)
    only_failed = table.merge(known, on=GROUP_KEYS, how="left")["_known"].isna().to_numpy()
    if only_failed.any():  # every read of the row failed: the row says so, with no time
        failed = reads[reads["_failed"] == 1].groupby(GROUP_KEYS, dropna=False, sort=False)
        added = failed.agg(**{c: (c, "first") for c in firsts if c in reads}).reset_index()
        added = added.merge(table[only_failed][GROUP_KEYS], on=GROUP_KEYS).assign(repeats=0)
        summary = pd.concat([summary, added], ignore_index=True)
    return summary.merge(table, on=GROUP_KEYS, how="left")


def _count_true(flags: pd.Series) -> float:
    """How many rows say true (NaN where none says either: a group of another case)."""
    known = flags.dropna()
    return float(known.astype(bool).sum()) if len(known) else float("nan")


def _add_scores(summary: pd.DataFrame, reads: pd.DataFrame, thresholds: dict, primary: dict) -> pd.DataFrame:
    """The study's score per file and read variant, from each case's median over all its
    reads (cold and warm together, as the study's), with thresholds scaled to the bytes each
    case selects; write rows carry the score of the first read variant."""
    score_keys = [*FILE_KEYS, C.VARIANT]
    scores = []
    medians = reads.groupby([*score_keys, C.CASE], dropna=False).agg(
        median_s=(C.SECONDS, "median"), bytes_selected=(C.BYTES_SELECTED, "first")
    )
    files = summary.groupby(FILE_KEYS, dropna=False)[[C.FILE_BYTES, C.RAW_BYTES]].first()
    for keys, rows in medians.reset_index().groupby(score_keys, dropna=False):
        file_bytes, raw_bytes = files.loc[tuple(keys[: len(FILE_KEYS)])]
        by_case = dict(zip(rows[C.CASE], rows[C.MEDIAN_S], strict=True))
        selected = dict(zip(rows[C.CASE], rows[C.BYTES_SELECTED], strict=True))
        points, available = score(by_case, float(file_bytes), float(raw_bytes), thresholds, selected)
        scores.append({**dict(zip(score_keys, keys, strict=True)), C.SCORE: points, C.SCORE_MAX: available})
    scores = pd.DataFrame(scores, columns=[*score_keys, C.SCORE, C.SCORE_MAX])
    is_read = summary[C.CASE].isin(list(READ_CASES))
    by_variant = summary[C.VARIANT].where(is_read, summary[C.BACKEND].map(primary))
    summary = summary.assign(_score_variant=by_variant).merge(
        scores.rename(columns={C.VARIANT: "_score_variant"}), on=[*FILE_KEYS, "_score_variant"], how="left"
    )
    summary = summary.drop(columns="_score_variant")
    if reads.empty:  # no read case: the score is the file size criterion alone
        for i, row in summary.iterrows():
            summary.loc[i, [C.SCORE, C.SCORE_MAX]] = score({}, row[C.FILE_BYTES], row[C.RAW_BYTES], thresholds)
    summary[C.SCORE_THRESHOLD_S] = [
        threshold_s(case, thresholds, selected) if case in CASE_THRESHOLDS else np.nan
        for case, selected in zip(summary[C.CASE], summary[C.BYTES_SELECTED], strict=True)
    ]
    return summary


def model_bytes(summary: pd.DataFrame) -> pd.Series:
    """What a read must fetch by the model: the stored bytes of the chunks it touches, or for
    a contiguous layout the bytes it selects."""
    contiguous = summary[C.LAYOUT] == "contiguous"
    return summary[C.STORED_BYTES_TOUCHED_MEDIAN].where(~contiguous, summary[C.BYTES_SELECTED]).astype(float)


def read_amplification(summary: pd.DataFrame) -> pd.Series:
    """Cold reads: bytes fetched from the device per byte the model says the read needs."""
    needed = model_bytes(summary)
    cold = (summary[C.CACHE_STATE] == "cold") & (needed > 0)
    return (summary[C.DEVICE_READ_BYTES_MEDIAN].astype(float) / needed).where(cold)


def _primary(summary: pd.DataFrame, primary: dict, primary_write: dict) -> pd.Series:
    """The rows the study's figures show: each backend's first variant of each case (the
    config's first settings) and, where its reads split into cache states, the state most of
    them were in."""
    first = np.where(summary[C.CASE] == "write", summary[C.BACKEND].map(primary_write), summary[C.BACKEND].map(primary))
    first_variant = summary[C.VARIANT] == first
    first_variant |= summary[C.CASE].isin(OWN_JOB)
    keys = [*FILE_KEYS, C.CASE, C.VARIANT]
    majority = summary.sort_values(C.REPEATS, ascending=False, kind="stable").drop_duplicates(keys).index
    chosen = summary.index.isin(majority) | summary[C.CASE].isin(OWN_JOB)
    return first_variant & chosen


def _case_order(cases: pd.Series) -> list[str]:
    return [c for c in CASE_ORDER if c in set(cases)] + sorted(set(cases) - set(CASE_ORDER))


def _natural(column: pd.Series) -> pd.Series:
    """Sort chunk shapes by their numbers (4x4x256 before 4x4x2048), other columns as is."""
    if column.name != C.CHUNK_SHAPE:
        return column
    return column.map(lambda s: tuple(int(v) for v in s.split("x")) if s else ())


RESUMED_KEYS = [C.FILESYSTEM, C.BACKEND, C.LAYOUT_ID, C.COMPRESSION, C.READ_OPTION, C.CASE]


def resumed_in_place(measurements: pd.DataFrame) -> pd.DataFrame:
    """The reads of a store resumed after the race dropped it (``resumed``,
    :mod:`h5sweep.sweep.resume`) in place of its reads before it stopped: per store, read
    option and case, the resumed pass's rows alone."""
    if C.RESUMED not in measurements:
        return measurements
    resumed = measurements[C.RESUMED].astype("boolean").fillna(False).astype(bool)
    measurements[C.RESUMED] = resumed
    keys = measurements.loc[resumed, RESUMED_KEYS].drop_duplicates()
    earlier = measurements.loc[~resumed, RESUMED_KEYS].reset_index().merge(keys, on=RESUMED_KEYS)["index"]
    return measurements.drop(index=earlier).reset_index(drop=True)


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
    measurements = resumed_in_place(read_tables(sorted(record_paths)))
    for column in (C.FILE_BYTES, C.INTERLEAVED_STORES, C.VISIT_POSITION, C.CODEC_LEVEL):
        if column in measurements:  # carried into the summary as whole numbers
            measurements[column] = measurements[column].astype("Int64")
    if C.STOPPED in measurements:  # true or false for writes, empty for other cases
        measurements[C.STOPPED] = measurements[C.STOPPED].astype("boolean")
    summary = summarize(measurements, thresholds, reference)
    write_table(columns.typed(measurements), measurements_out)
    write_table(summary, summary_out)
    write_table(summary, summary_csv_out)
    return summary
