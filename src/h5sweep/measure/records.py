"""Measurement records: one row per timed operation, written atomically as Parquet."""

from __future__ import annotations

import os

import pandas as pd


def write_table(rows: list[dict] | pd.DataFrame, path: str) -> None:
    """Write rows to ``path`` (Parquet or CSV by suffix) via a temporary file and a rename,
    so a reader never sees a half-written table at the final path."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        if path.endswith(".csv"):
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_tables(paths: list[str]) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
