"""From raw per-job records to ``measurements.parquet`` and ``summary.csv``.

The summary is derived from the raw rows only: one row per filesystem x layout x
compression x case, with the study's statistics (min, median, mean, max, first access).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from h5sweep.cases import READ_CASES
from h5sweep.records import read_tables, write_table
from h5sweep.scoring import score

FILE_KEYS = ["filesystem", "layout", "chunk_shape", "order", "compression"]
GROUP_KEYS = [*FILE_KEYS, "case", "variant"]
# Settings that make a variant of a case, carried into the summary when measured.
VARIANT_COLUMNS = [
    "write_strategy",
    "fill_time",
    "policy",
    "chunk_cache_bytes",
    "chunk_cache_slots",
    "chunk_cache_w0",
    "processes",
    "scaling_slices",
    "z_slices",
    "operation",
    "n_datasets",
    "metadata_file_bytes",
    "api",
    "direction",
    "cache_state",
    "request_bytes",
]
# Settings that are whole numbers, empty where a case has no such setting.
INTEGER_COLUMNS = [
    "processes",
    "z_slices",
    "chunk_cache_bytes",
    "chunk_cache_slots",
    "n_datasets",
    "metadata_file_bytes",
    "request_bytes",
]
CASE_ORDER = ["write", "slice", "spectra", "subcube", "scaling", "metadata", "iosize"]


def summarize(measurements: pd.DataFrame, thresholds: dict) -> pd.DataFrame:
    if measurements.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, "repeats", "min_s", "median_s", "mean_s", "max_s", "first_s"])
    measurements = measurements.copy()
    if "variant" not in measurements:
        measurements["variant"] = ""
    if "order" not in measurements:  # records from before storage orders were an axis
        measurements["order"] = "xyz"
    measurements["order"] = measurements["order"].fillna("xyz")
    measurements["variant"] = measurements["variant"].fillna("")
    # read cases (built-in or boxes) are the rows the query stage wrote: they have a policy
    is_read = (
        measurements["policy"].notna() if "policy" in measurements else measurements["case"].isin(list(READ_CASES))
    )
    reads = measurements[is_read]
    writes = measurements[measurements["case"] == "write"]
    primary = reads["variant"].iloc[0] if not reads.empty else ""
    primary_write = writes["variant"].iloc[0] if not writes.empty else ""
    ordered = measurements.sort_values([*GROUP_KEYS, "repeat"], kind="stable")
    grouped = ordered.groupby(GROUP_KEYS, sort=False, dropna=False)
    summary = grouped.agg(
        layout_id=("layout_id", "first"),
        **({"layout_name": ("layout_name", "first")} if "layout_name" in ordered else {}),
        repeats=("seconds", "size"),
        min_s=("seconds", "min"),
        median_s=("seconds", "median"),
        mean_s=("seconds", "mean"),
        max_s=("seconds", "max"),
        first_s=("seconds", "first"),
        std_s=("seconds", "std"),
        bytes_selected=("bytes_selected", "first"),
        chunks_touched_mean=("chunks_touched", "mean"),
        raw_bytes=("raw_bytes", "first"),
        fs_type=("fs_type", "first"),
        **{c: (c, "first") for c in VARIANT_COLUMNS if c in ordered},
    ).reset_index()
    if "device_read_bytes" in ordered:
        summary = summary.merge(
            grouped["device_read_bytes"].agg(device_read_bytes_median="median").reset_index(),
            on=GROUP_KEYS,
            how="left",
        )
        firsts = {"cold_start": ("cold_start", "first")}
        if "cache_holds_chunk" in ordered:
            firsts["cache_holds_chunk"] = ("cache_holds_chunk", "first")
        cold = grouped.agg(**firsts).reset_index()
        summary = summary.merge(cold, on=GROUP_KEYS, how="left")
    # File size as the write case wrote it (the standard API, as a user's converter would);
    # the query file has the same chunks but may differ in metadata layout.
    by_file = ordered.groupby(FILE_KEYS, dropna=False)["file_bytes"].last()
    written = ordered[ordered["case"] == "write"].groupby(FILE_KEYS, dropna=False)["file_bytes"].last()
    sizes = written.combine_first(by_file).rename("file_bytes").reset_index()
    summary = summary.merge(sizes, on=FILE_KEYS, how="left")
    summary["compression_ratio"] = summary["raw_bytes"] / summary["file_bytes"]
    # The score of each file, per variant of the read cases; write rows carry the score of
    # the first variant (the config's first policy and chunk cache).
    scores = []
    read_rows = summary[summary["case"].isin(list(READ_CASES))]
    for keys, rows in read_rows.groupby([*FILE_KEYS, "variant"], dropna=False):
        medians = dict(zip(rows["case"], rows["median_s"], strict=True))
        points, available = score(
            medians, float(rows["file_bytes"].iloc[0]), float(rows["raw_bytes"].iloc[0]), thresholds
        )
        scores.append(
            {**dict(zip([*FILE_KEYS, "variant"], keys, strict=True)), "score": points, "score_max": available}
        )
    scores = pd.DataFrame(scores, columns=[*FILE_KEYS, "variant", "score", "score_max"])
    by_variant = summary["variant"].where(summary["case"].isin(list(READ_CASES)), primary)
    summary = summary.assign(_score_variant=by_variant).merge(
        scores.rename(columns={"variant": "_score_variant"}), on=[*FILE_KEYS, "_score_variant"], how="left"
    )
    summary = summary.drop(columns="_score_variant")
    # the config's first variant of each case: what the study's figures show
    primaries = np.where(summary["case"] == "write", primary_write, primary)
    summary["primary"] = (summary["variant"] == primaries) | summary["case"].isin(["scaling", "metadata", "iosize"])
    if read_rows.empty:  # no read case: the score is the file size criterion alone
        for i, row in summary.iterrows():
            summary.loc[i, ["score", "score_max"]] = score({}, row["file_bytes"], row["raw_bytes"], thresholds)
    summary["case"] = pd.Categorical(summary["case"], categories=_case_order(summary["case"]), ordered=True)
    summary = summary.sort_values(
        ["filesystem", "case", "variant", "layout", "chunk_shape", "compression"], key=_natural
    )
    summary["case"] = summary["case"].astype(str)
    for column in INTEGER_COLUMNS:
        if column in summary:  # whole numbers, empty where the case has no such setting
            summary[column] = summary[column].astype("Int64")
    return summary.reset_index(drop=True)


def _case_order(cases: pd.Series) -> list[str]:
    return [c for c in CASE_ORDER if c in set(cases)] + sorted(set(cases) - set(CASE_ORDER))


def _natural(column: pd.Series) -> pd.Series:
    """Sort chunk shapes by their numbers (4x4x256 before 4x4x2048), other columns as is."""
    if column.name != "chunk_shape":
        return column
    return column.map(lambda s: tuple(int(v) for v in s.split("x")) if s else ())


def aggregate(record_paths: list[str], measurements_out: str, summary_out: str, thresholds: dict) -> pd.DataFrame:
    measurements = read_tables(sorted(record_paths))
    if "file_bytes" in measurements:
        measurements["file_bytes"] = measurements["file_bytes"].astype("Int64")
    summary = summarize(measurements, thresholds)
    write_table(measurements, measurements_out)
    write_table(summary, summary_out)
    return summary
