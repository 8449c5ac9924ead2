"""The findings of OpenMSI's chunking and compression study on the read cases' rows, checked on one
filesystem's summary (the rules in :mod:`h5sweep.kit.claims`; the rows they judge in
:mod:`.rows`, the checks in :mod:`.chunking` and :mod:`.compression`). Its findings on the write
case's rows are the write case's (:mod:`h5sweep.cases.write.findings`)."""

from __future__ import annotations

from h5sweep.cases.studies.openmsi.chunking import against_contiguous, best_slice_chunks, slices_slower
from h5sweep.cases.studies.openmsi.compression import compression_slows, gzip_levels_size
from h5sweep.cases.studies.openmsi.rows import SCRATCH
from h5sweep.kit.claims import OPENMSI, STUDIES, Finding

# The findings on the read cases' rows (gzip-levels-size sets the write case's compression
# ratios beside the reads' times), registered by the read cases' spec (h5sweep.cases.studies);
# those on the write case's rows are the write case's (h5sweep.cases.write.findings)
READ: tuple[Finding, ...] = (
    Finding(
        "contiguous-best-spectra",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "For the spectra selections (see Figure hdf5_chunking_spectra_figure) we observe in most cases a "
        "decrease in the median performance compared to the baseline contiguous data layout.",
        "of the study's m x m x n chunkings (m in {1, ..., 32}, n in {128, ..., 8192}; most of them measured), "
        "most uncompressed stores read 5x5 spectra surely slower than contiguous (median ratio's interval above "
        f"1; {SCRATCH})",
        "cases.spectra, layouts.contiguous and chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, ..., 8192]}",
        STUDIES + "openmsi/chunking.yaml",
        against_contiguous("spectra", True, "chunked spectra medians slower than contiguous"),
    ),
    Finding(
        "best-slice-chunks",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "We observe that data layouts with a chunking of m x m x n with m in {4, 8 ,16} and n in {128, 256, "
        "512, 1024, 2048, 4096} show the best z-slice selection performance.",
        "h5sweep's reading of 'show the best': of the uncompressed chunkings the study compared (m x m x n, m in "
        "{1, ..., 32}, n in {128, ..., 8192}), the stores tied with the fastest z-slice median (intervals "
        "overlapping its) all lie in the set m in {4, 8, 16}, n in {128, ..., 4096} (with stores outside it "
        f"measured; {SCRATCH})",
        "cases.slice, layouts.chunks.xy: [4, 8 or 16, and others], layouts.chunks.z in 128-4096 (and others)",
        STUDIES + "openmsi/chunking.yaml",
        best_slice_chunks,
    ),
    Finding(
        "slices-slower-than-spectra",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "When comparing the selection performance plots, we observe that --- even though the amount of data that "
        "is retrieved is only 0.5MB in z-slice selection case compared to 5MB in the spectra selection case--- "
        "the performance for z-slice selection case is generally lower than for the spectra selection case.",
        "where the z-slices select fewer bytes than the spectra, most uncompressed stores read them surely slower "
        f"(median intervals apart; {SCRATCH})",
        "cases.slice and cases.spectra (slices selecting less than spectra)",
        STUDIES + "openmsi/chunking.yaml",
        slices_slower,
    ),
    Finding(
        "chunking-helps-subcubes",
        "OpenMSI",
        OPENMSI,
        "Chunking: Selection Performance",
        "We observe that using chunking generally improves the performance of the selection.",
        "of the study's m x m x n chunkings (m in {1, ..., 32}, n in {128, ..., 8192}; most of them measured), "
        "most uncompressed stores read 5x5x1000 sub-cubes surely faster than contiguous (median ratio's interval "
        "below 1): the medians of sustained reads; the next sentence's 'initial data access' is not judged "
        f"({SCRATCH})",
        "cases.subcube, layouts.contiguous and chunks: {xy: [1, 2, 4, 8, 16, 32], z: [128, ..., 8192]}",
        STUDIES + "openmsi/chunking.yaml",
        against_contiguous("subcube", False, "chunked sub-cube medians faster than contiguous"),
    ),
    Finding(
        "gzip-levels-size",
        "OpenMSI",
        OPENMSI,
        "Compression: Compression Aggression",
        "Overall, we find that for the data layouts tested here, increasing the aggression parameter above 1 does "
        "not have a large impact on the compression ratio and selection performance, whereas high aggression "
        "values may significantly decrease the data write performance.",
        "per chunk shape, every gzip level above 1 compresses within 1.15x of level 1 (more than 1.3x: does not "
        "hold) and reads z-slices, spectra and sub-cubes within 1.5x of level 1's time either way (median "
        "intervals; wholly beyond 1.5x: does not hold); the write clause is judged by gzip-levels-write; on a "
        "donor's values, on synthetic ones only where the config opts in (the study: portal, hopper /project "
        "and /scratch; judged here on the filesystem measured)",
        "compression: gzip-1 and higher levels, e.g. [gzip-1, gzip-4, gzip-8], cases.slice, spectra or subcube, "
        "dataset.fill a donor (or dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        gzip_levels_size,
    ),
    Finding(
        "compression-slows-reads",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "In contrast to portal, we observe on hopper a general decrease (of up to 1 order of magnitude) in the "
        "selection performance when using compression compared to when storing the data in raw, uncompressed "
        "form.",
        "the study: hopper /scratch and /project; judged here on the filesystem measured, where it is fast "
        "(uncompressed z-slices read their chunks cold at 200 MB/s or more): for each of z-slices, spectra and "
        "sub-cubes (the 'selection performance'), most compressed stores read surely slower than the "
        "uncompressed store of the same chunk shape, none surely more than 10x slower ('up to 1 order of "
        "magnitude'; paired ratios to contiguous); on a donor's values, on synthetic ones only where the config "
        "opts in",
        "cases.slice, spectra and subcube with cold reads (cold: first), compression: [none, gzip-<n>], on a "
        "filesystem that reads at 200 MB/s or more, dataset.fill a donor (or dataset.judge_synthetic_values: true)",
        STUDIES + "openmsi/compression.yaml",
        compression_slows,
    ),
)
