"""What index.html needs to rank the stores again for another read mix in the browser, as
``h5sweep whatif`` does: per filesystem, each ranked store's mean read time per case and the
same means over paired bootstrap resamplings of the selections (the ranking's own resampling,
:meth:`h5sweep.measure.objective.Reads.draws`), its file size, whether it meets the limits and
whether it is the reference store. The page's script (``RERANK_JS``) scores a mix by its time
(the ``time`` objective: the mix's time over the reference store's), ties a store whose
paired interval of its score over the best's reaches 1, and chooses the smallest file of the
tied (files within 5% count as equal, then the best score): the ranking's rules
(:func:`h5sweep.analyze.ranking._ranked`). And the page's provenance: where, when and with
what the sweep measured."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from h5sweep.analyze.ranking import BOOTSTRAP_SEED, SAME_SIZE, is_reference, reference_of, selected_reads
from h5sweep.analyze.wording import label, several_options
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C

# resamplings shipped in the page: as many as the ranking draws (its draws depend on the mix's
# cases, these on every case: a store at the edge of a tie may fall on the other side; the
# page says so)
PAGE_SAMPLES = objectives.BOOTSTRAP_SAMPLES


def _rounded(values: np.ndarray) -> list:
    return [None if not np.isfinite(v) else float(f"{v:.6g}") for v in np.asarray(values, float).ravel()]


def rerank_data(measurements: pd.DataFrame, table: pd.DataFrame, settings: dict) -> dict:
    """Per filesystem: the cases, and per store (those ranked, not raced out) its name, file
    bytes, limits, reference flag, mean time per case and ``PAGE_SAMPLES`` resampled means."""
    cases = list(settings["read_cases"])
    reads = selected_reads(measurements, settings, cases)
    if reads.empty:
        return {}
    reads = reads[reads[C.SECONDS] > 0]
    reference = reference_of(settings)
    out = {}
    for filesystem, group in reads.groupby(C.FILESYSTEM, sort=True):
        if C.RACED_OUT_ROUND in group:
            group = group[group[C.RACED_OUT_ROUND].isna()]
        ranked = table[table[C.FILESYSTEM] == filesystem]
        if group.empty or ranked.empty or not is_reference(group, reference).any():
            continue
        present = [c for c in cases if (group[C.CASE] == c).any()]
        matrices = objectives.Reads.of(group, present)
        draws = matrices.draws(np.random.default_rng(BOOTSTRAP_SEED), PAGE_SAMPLES)
        several = several_options(ranked)
        keyed = {tuple(r[k] for k in objectives.CHOICE_KEYS): r for _, r in ranked.iterrows()}
        stores = []
        for i, key in enumerate(matrices.stores):
            row = keyed.get(key)
            if row is None:
                continue
            stores.append(
                {
                    "name": label(row, with_backend=True, with_option=row[C.BACKEND] in several),
                    "file_bytes": float(row[C.FILE_BYTES]) if pd.notna(row[C.FILE_BYTES]) else None,
                    "meets": bool(row[C.MEETS_LIMITS]),
                    "reference": bool(row[C.IS_REFERENCE]),
                    "means": {c: _rounded([np.nanmean(matrices.times[c][i])])[0] for c in present},
                    "boot": {
                        c: _rounded(objectives.resampled_means(matrices.times[c][i : i + 1], draws[c])[0])
                        for c in present
                    },
                }
            )
        out[filesystem] = {"cases": present, "stores": stores}
    return out


def _commit() -> str:
    """The commit of the checkout h5sweep runs from ("" where it is not a git checkout)."""
    here = Path(__file__).resolve().parents[3]
    try:
        found = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


PROVENANCE = (
    (C.HOST, "host"),
    (C.FS_DEVICE, "device"),
    (C.FS_TYPE, "filesystem type"),
    (C.FS_MOUNT, "mount point"),
    (C.H5SWEEP_VERSION, "h5sweep"),
    (C.PYTHON_VERSION, "Python"),
    (C.NUMPY_VERSION, "numpy"),
)


def provenance(measurements: pd.DataFrame, settings: dict) -> list[tuple[str, str]]:
    """Where, when and with what the sweep measured, as (what, value) lines: per filesystem
    its host, device and mount; the dates measured; the libraries' versions; the commit; a
    hash of the ranking's settings."""
    lines = []
    if C.MEASURED_AT in measurements and measurements[C.MEASURED_AT].notna().any():
        at = measurements[C.MEASURED_AT].dropna().astype(str)
        lines.append(("measured", f"{at.min()} to {at.max()}"))
    for filesystem, group in measurements.groupby(C.FILESYSTEM, sort=True) if C.FILESYSTEM in measurements else ():
        said = [
            f"{words} {', '.join(sorted(set(group[col].dropna().astype(str))))}"
            for col, words in PROVENANCE[:4]
            if col in group and group[col].notna().any()
        ]
        lines.append((filesystem, "; ".join(said)))
    versions = [c for c in measurements.columns if c.endswith("_version")]
    if versions:
        first = measurements[versions].dropna(how="all")
        said = [f"{c.removesuffix('_version')} {first[c].dropna().iloc[0]}" for c in versions if first[c].notna().any()]
        lines.append(("libraries", ", ".join(said)))
    lines.append(("commit", _commit() or "not a git checkout"))
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
    lines.append(("settings hash", f"{digest} (the ranking's settings, recommend.json)"))
    if C.CONFIG_HASH in measurements:
        hashes = sorted(set(measurements[C.CONFIG_HASH].dropna().astype(str)))
        lines.append(("job settings hashes", f"{len(hashes)} (config_hash in measurements.parquet)"))
    return lines


def rerank_js() -> str:
    """The page's re-ranking (``rerank.js`` beside this module): the ranking's rules on the
    shipped resamplings, and the table it writes per filesystem."""
    return Path(__file__).with_name("rerank.js").read_text(encoding="utf-8").replace("SAME_SIZE", repr(SAME_SIZE))
