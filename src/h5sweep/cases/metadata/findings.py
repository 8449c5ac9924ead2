"""The studies' findings on metadata overhead, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.cases.claims import GUIDE, STUDIES, Finding, Result
from h5sweep.cases.metadata import columns as MC
from h5sweep.storage import columns as C


def _many_datasets(s, shape) -> Result:
    rows = s[(s[C.CASE] == "metadata")].dropna(subset=[MC.N_DATASETS])
    if rows[MC.N_DATASETS].nunique() < 2:
        return None
    by_n = rows.groupby(MC.N_DATASETS)[MC.METADATA_FILE_BYTES].median()
    growth = by_n.iloc[-1] / by_n.iloc[0]
    words = ", ".join(f"{int(n)} datasets: {b / 1e3:.4g} kB" for n, b in by_n.items())
    # the chapter: a factor of more than 100 for 1,000 datasets; "far exceeds": 2x and more
    return (True if growth >= 2 else False if growth <= 1.05 else None), words


FINDINGS = (
    Finding(
        "many-datasets",
        "User's Guide ch. 14",
        GUIDE,
        "14.2.1 Metadata Overhead",
        "In addition, the size of the HDF file is dramatically reduced by a factor of more than 100, even though "
        "the amount of SDS data stored is the same.",
        "the same values split into the most datasets take at least 2x the file of one dataset (at most 1.05x: "
        "does not hold)",
        "cases.metadata with two or more dataset counts",
        STUDIES + "users-guide/metadata.yaml",
        _many_datasets,
    ),
)
