"""The studies' findings on metadata overhead, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.kit.claims`)."""

from __future__ import annotations

import numpy as np

from h5sweep.cases.metadata import columns as MC
from h5sweep.kit.claims import GUIDE, STUDIES, UNMEASURED, Finding, Result
from h5sweep.storage import columns as C

# The chapter's experiment (14.2.1, seed lines 33 and 52, Tables 14A and 14B): 1,000 datasets of
# 1 x 1 x 1 32-bit values, one value each, against one 10 x 10 x 10 dataset of the same values.
CHAPTER_DATASETS = 1000
CHAPTER_ITEMSIZE = 4
CHAPTER_RANK = 3
# "reduced by a factor of more than 100" (seed line 67)
FACTOR = 100


def _many_datasets(s, shape) -> Result:
    rows = s[s[C.CASE] == "metadata"].dropna(subset=[MC.N_DATASETS, MC.METADATA_FILE_BYTES, C.BYTES_SELECTED])
    if MC.OPERATION in rows:
        rows = rows[rows[MC.OPERATION] == "write"]  # a read row repeats its write's file size
    if rows.empty:
        return None
    total = CHAPTER_DATASETS * CHAPTER_ITEMSIZE
    itemsize = float(rows[C.RAW_BYTES].iloc[0]) / float(np.prod(shape))
    per = rows[C.BYTES_SELECTED].astype(float) / itemsize / rows[MC.N_DATASETS].astype(float)
    # the chapter's datasets: one 4-byte value each in a 3-D dataset (1 x 1 x 1), 1,000 of them
    chapter = (len(shape) == CHAPTER_RANK) & (itemsize == CHAPTER_ITEMSIZE) & (rows[C.BYTES_SELECTED] == total)
    one = rows.loc[chapter & (rows[MC.N_DATASETS] == 1), MC.METADATA_FILE_BYTES].astype(float)
    many = rows.loc[chapter & (rows[MC.N_DATASETS] == CHAPTER_DATASETS) & (per == 1), MC.METADATA_FILE_BYTES]
    many = many.astype(float)
    if one.empty or many.empty:
        largest = rows.loc[rows[MC.N_DATASETS].idxmax()]
        counts = ", ".join(f"{int(n):,}" for n in sorted(rows[MC.N_DATASETS].unique()))
        n = int(largest[MC.N_DATASETS])
        values = float(largest[C.BYTES_SELECTED]) / itemsize / n
        return UNMEASURED, (
            f"the sweep split {int(largest[C.BYTES_SELECTED]):,} bytes of {itemsize:g}-byte values of a "
            f"{len(shape)}-D dataset into {counts} datasets ({values:g} values each at {n:,}); "
            f"the chapter split {total:,} bytes into 1 dataset and {CHAPTER_DATASETS:,} of one "
            f"{CHAPTER_ITEMSIZE}-byte value each (1 x 1 x 1)"
        )
    # a file's size is counted, not timed: the bounds are the least and the most each file took
    sizes = rows[chapter].groupby(MC.N_DATASETS)[MC.METADATA_FILE_BYTES].median()
    words = ", ".join(f"{int(n):,} dataset{'' if n == 1 else 's'}: {int(b):,} B" for n, b in sizes.items())
    least, most = many.min() / one.max(), many.max() / one.min()
    factor = f"{least:.1f}x" if least == most else f"{least:.1f}-{most:.1f}x"
    verdict = True if least > FACTOR else False if most <= FACTOR else None
    return verdict, f"{factor} ({words}; {total:,} bytes of values)"


FINDINGS = (
    Finding(
        "many-datasets",
        "User's Guide ch. 14",
        GUIDE,
        "14.2.1 One Large SDS Versus Several Smaller SDSs",
        "In addition, the size of the HDF file is dramatically reduced by a factor of more than 100, even though "
        "the amount of SDS data stored is the same.",
        "HDF5's per-object overhead (h5py's default libver: an object header and a link per dataset)"
        " measured against the chapter's HDF4 tables: the file of 1,000 1 x 1 x 1 datasets of one 4-byte "
        "value each (the chapter's 32-bit floats; the rows tell a value's size, not its type) is more than 100x "
        "the file of one 10 x 10 x 10 dataset of the same 4,000 bytes, with no user-defined dimension, dimension "
        "scales or fill values (h5py's defaults) (Tables 14A and 14B: 896,803 against 7,258 bytes; the smallest "
        "1,000-dataset file over the largest one-dataset file above 100: holds; the largest over the smallest at "
        "most 100: does not hold)",
        "cases.metadata with split: values and datasets 1 and 1,000 on a 10 x 10 x 10 dataset of 4-byte values "
        "(float32)",
        STUDIES + "users-guide/metadata.yaml",
        _many_datasets,
    ),
)
