"""The studies' findings on metadata overhead, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.cases.claims import GUIDE, STUDIES, UNMEASURED, Finding, Result
from h5sweep.cases.metadata import columns as MC
from h5sweep.storage import columns as C

# The chapter's experiment (14.2.1, Tables 14A and 14B): 1,000 datasets of one 32-bit value each
# against one dataset of the same 1,000 values.
CHAPTER_DATASETS = 1000
CHAPTER_DATASET_BYTES = 4
# "reduced by a factor of more than 100"
FACTOR = 100


def _many_datasets(s, shape) -> Result:
    rows = s[s[C.CASE] == "metadata"].dropna(subset=[MC.N_DATASETS, MC.METADATA_FILE_BYTES, C.BYTES_SELECTED])
    if MC.OPERATION in rows:
        rows = rows[rows[MC.OPERATION] == "write"]  # a read row repeats its write's file size
    if rows.empty:
        return None
    total = CHAPTER_DATASETS * CHAPTER_DATASET_BYTES
    ran = rows
    rows = rows[rows[C.BYTES_SELECTED] == total]
    one = rows.loc[rows[MC.N_DATASETS] == 1, MC.METADATA_FILE_BYTES].astype(float)
    many = rows.loc[rows[MC.N_DATASETS] == CHAPTER_DATASETS, MC.METADATA_FILE_BYTES].astype(float)
    if one.empty or many.empty:
        counts = ", ".join(f"{int(n):,}" for n in sorted(ran[MC.N_DATASETS].unique()))
        return UNMEASURED, (
            f"the sweep split {int(ran[C.BYTES_SELECTED].iloc[0]):,} bytes into {counts} datasets; the chapter "
            f"split {total:,} bytes into 1 and {CHAPTER_DATASETS:,}"
        )
    # a file's size is counted, not timed: the same file every repeat, no interval to draw
    factor = many.max() / one.min()
    sizes = rows.groupby(MC.N_DATASETS)[MC.METADATA_FILE_BYTES].median()
    words = ", ".join(f"{int(n):,} dataset{'' if n == 1 else 's'}: {int(b):,} B" for n, b in sizes.items())
    return bool(factor > FACTOR), f"{factor:.1f}x ({words}; {total:,} bytes of values)"


FINDINGS = (
    Finding(
        "many-datasets",
        "User's Guide ch. 14",
        GUIDE,
        "14.2.1 One Large SDS Versus Several Smaller SDSs",
        "In addition, the size of the HDF file is dramatically reduced by a factor of more than 100, even though "
        "the amount of SDS data stored is the same.",
        "the file of 1,000 datasets of 4 bytes each (the chapter's one 32-bit value) is more than 100x the file "
        "of one dataset of the same 4,000 bytes (Tables 14A and 14B: 896,803 against 7,258 bytes; at most 100x: "
        "does not hold)",
        "cases.metadata with split: values and datasets 1 and 1,000 on a dataset of 1,000 4-byte values "
        "(10 x 10 x 10 float32)",
        STUDIES + "users-guide/metadata.yaml",
        _many_datasets,
    ),
)
