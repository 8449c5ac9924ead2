"""Which values a sweep measured, in one sentence for each of its outputs (``decision.md``,
``recommendation.md``, ``findings.md``, ``index.html``): generated ones (``dataset.fill``
``synthetic`` or ``chunk-index``), and then how they compress against the real data of the
study they stand in for, where that study gives a figure; or a donor's, naming its file and
dataset. Sizes, codec speeds and the findings that rest on them mean something else on
generated values than on the user's. Nothing here imports an I/O library."""

from __future__ import annotations

import pandas as pd

from h5sweep.storage import columns as C

# The study the MSI-like synthetic values stand in for, on real spectra (OpenMSI, "Data
# compression"): gzip with aggression 4 at 4 x 4 x 2,048 chunks compressed its donor dataset A
# about 2.9x and its dataset B about 6.3x. h5sweep's own trial on a donor-like cube (the codec
# table's note in config/README.md): gzip-4 2.0x.
OPENMSI_DATASET_A_GZIP4 = 2.9
OPENMSI_DATASET_B_GZIP4 = 6.3
DONOR_LIKE_TRIAL_GZIP4 = 2.0
STUDY_CODEC = "gzip-4"  # the codec those figures are of

GENERATED = {
    3: "MSI-like spectra (a noisy baseline and a few hundred peaks per spectrum)",
    2: "a recording (per channel an offset, a rhythm and noise)",
}
FIELD = "a smooth field and noise"


def _shape(dataset: dict) -> str:
    shape = " x ".join(str(int(n)) for n in dataset.get("shape") or [])
    return f"{shape} {dataset[C.DTYPE]}" if shape and dataset.get(C.DTYPE) else shape


def measured_ratio(sizes: pd.DataFrame | None, compression: str = STUDY_CODEC) -> tuple[float, int] | None:
    """How much the stores of ``compression`` held the values smaller than raw: the median of
    their ratios (raw bytes over file bytes) and how many stores, from a summary
    (``compression_ratio``) or a ranking (``file_ratio``, its inverse); None where no such
    store was sized."""
    if sizes is None or sizes.empty or C.COMPRESSION not in sizes:
        return None
    keys = [c for c in (C.BACKEND, C.LAYOUT_ID, C.COMPRESSION) if c in sizes]
    stores = sizes[sizes[C.COMPRESSION] == compression].drop_duplicates(keys)
    if C.COMPRESSION_RATIO in stores:
        ratios = stores[C.COMPRESSION_RATIO]
    elif C.FILE_RATIO in stores:
        ratios = 1 / stores[C.FILE_RATIO]
    else:
        return None
    ratios = pd.to_numeric(ratios, errors="coerce").dropna()
    ratios = ratios[ratios > 0]
    return (float(ratios.median()), len(ratios)) if len(ratios) else None


def _here(sizes: pd.DataFrame | None) -> str:
    found = measured_ratio(sizes)
    if found is None:
        return ""
    ratio, stores = found
    return f"with {STUDY_CODEC} they compress {ratio:.2f}x here (median of {stores} store{'s' * (stores != 1)})"


def data_sentence(dataset: dict, sizes: pd.DataFrame | None = None) -> str:
    """The sentence that names the values of a sweep whose config's ``dataset`` block is
    ``dataset`` (``fill``, ``seed``, ``shape``, ``dtype``); ``sizes``: its summary or ranking,
    for how much its stores compressed them. Empty where ``dataset`` does not say (settings
    written before the fill was kept with them)."""
    fill = dataset.get(C.FILL)
    if fill is None:
        return ""
    shape = _shape(dataset)
    at = f" at {shape}" if shape else ""
    if isinstance(fill, dict) and "donor" in fill:
        donor = fill["donor"]
        here = _here(sizes)
        return (
            f"Data: a donor's values, dataset `{donor.get('dataset', '')}` of `{donor.get('path', '')}` "
            f"(`dataset.fill.donor`), cropped or tiled to the sweep's shape{at}" + (f"; {here}." if here else ".")
        )
    if fill == "chunk-index":
        return (
            "Data: generated values, not real data: each element holds the index of its chunk "
            f"(`dataset.fill: chunk-index`, the OpenMSI study's baseline for uncompressed layouts){at}. Read and "
            "write times of uncompressed stores do not depend on the values; file sizes with a codec, and a codec's "
            "speed, say nothing of real data."
        )
    rank = len(dataset.get("shape") or [])
    kind = GENERATED.get(rank, FIELD)
    seed = f" from seed {dataset[C.SEED]}" if dataset.get(C.SEED) is not None else ""
    text = (
        f"Data: synthetic values, not real data: {kind} generated{seed} (`dataset.fill: {fill}`){at}. File sizes "
        "with a codec and a codec's speed rest on these values, not on yours; "
        "`dataset.fill: {donor: {path, dataset}}` measures your own."
    )
    here = _here(sizes)
    here = here[:1].upper() + here[1:]
    if rank == 3:
        study = (
            f"real spectra compressed about {OPENMSI_DATASET_A_GZIP4:g}x with {STUDY_CODEC} at 4 x 4 x 2048 chunks in "
            f"the OpenMSI study (its donor dataset A; dataset B {OPENMSI_DATASET_B_GZIP4:g}x), and "
            f"{DONOR_LIKE_TRIAL_GZIP4:.1f}x in h5sweep's trial on a donor-like cube (config/README.md)"
        )
        return f"{text} {here}; {study}." if here else f"{text} For comparison, {study}."
    return f"{text} {here}; no study h5sweep reproduces gives a figure for such data." if here else text
