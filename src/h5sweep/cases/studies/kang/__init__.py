"""The findings of Kang et al. (2019), HDF5 against Zarr, checked on one filesystem's summary (the rules in
:mod:`h5sweep.kit.claims`).

The poster read a 2-D recording ([time, channels]) from Cori's Lustre and speaks of I/O time
apart from the memory copy (Fig. 1's breakdown, Fig. 2a). Its I/O time is the summary's
storage part of a read (``split_read_time``: ``storage_s_median`` with its interval): the
stored chunks fetched on their own, HDF5 by a direct read of each chunk, Zarr by reading each
chunk file whole. Each Zarr store is compared with the HDF5 store of the same chunk shape and
codec; Zarr read by zarr-python, the poster's library (the config's first reader). A sharded
Zarr store keeps many chunks in one file, so it is not the poster's one file per chunk, and
its storage part is not timed apart: it is left out.

The poster's breakdown (Fig. 1) splits a read into I/O and memory copy, with no decoding: its
stores are read as stored, uncompressed. A claim comparing the backends is judged on the
uncompressed pairs; pairs of another codec are judged alike and reported beside, not pooled in.
Each backend's I/O time is bracketed by intervals it was measured with. A read's I/O lies within
the read, so its whole read bounds it from above; the storage part, timed alone after it, is the
lower end, except where it came out longer than the whole read (its own fetch calls cost what
the read's did not): then the whole read's lower end is. HDF5's upper end is its whole read:
its storage part reads its chunks only (the chunk index was cached by the read just before),
the index reads being part of its I/O. Zarr's upper end is its storage part, capped by its
whole read. One backend is surely slower where its lower end lies above the other's upper end,
surely not where its upper end lies below the other's lower end."""

from __future__ import annotations

from h5sweep.cases.studies.kang.io_time import io_operations, same_size_same_time, zarr_slower
from h5sweep.kit.claims import KANG, STUDIES, Finding

ON_LUSTRE = "The study: Cori's Lustre, judged here on the filesystem measured (the evidence names it)"

FINDINGS: list[Finding] = [
    Finding(
        "zarr-slower",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Zarr has higher I/O cost because Zarr reads chunks from separate files while HDF5 reads from a single file.",
        "a 2-D recording read whole from the device (cold), uncompressed (Fig. 1's breakdown has I/O and memory "
        "copy, no decoding): each unsharded Zarr store's I/O time (the storage part of the read, split_read_time; "
        "Zarr read by the config's first reader, zarr-python as the poster's) is surely above the HDF5 store's of "
        "the same chunk shape, for every such pair (at least half surely not: does not hold). Each I/O time is "
        "bracketed: its storage part's interval, capped by its whole read's, and for HDF5 up to its whole read's "
        "upper end (chunk index reads included, which its storage part leaves out): Zarr is surely slower where "
        "its interval lies above HDF5's whole read's, surely not where it lies below HDF5's lower end. "
        "Blosc pairs are judged alike and reported, not pooled in; sharded stores left out, a shard file holding "
        "many chunks. " + ON_LUSTRE,
        "backends: [hdf5, zarr], compression: [none], cases.whole, split_read_time: true (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        zarr_slower,
    ),
    Finding(
        "hdf5-io-operations",
        "Kang",
        KANG,
        "3.2 Column-major read",
        "Figure 2b shows that HDF5 has twice I/O operations than Zarr, such that HDF5 is slower shown in Figure 2a.",
        "one column of a 2-D recording read whole from the device (cold), uncompressed, HDF5 against the unsharded "
        "Zarr store of the same chunk shape (read by the config's first reader, zarr-python as the poster's): in "
        "every pair, HDF5 makes about twice the read calls (system calls counted; zarr-python's read that finds "
        "a chunk file's end counts as a call, as Darshan's counters count it; 1.41x to 2.83x, nearer 2x than 1x "
        "or 4x) and, in the same pair, HDF5's I/O time is surely above Zarr's: even its storage part (its "
        "chunks' direct reads; capped by its whole read) lies above Zarr's storage part (capped by Zarr's whole "
        "read). A pair fails where the calls are not about twice, or where HDF5's whole read, chunk index reads "
        "included, is surely shorter than Zarr's I/O time; at least half of the pairs failing: does not hold. "
        "Blosc pairs are judged alike and reported, not pooled in. " + ON_LUSTRE,
        "backends: [hdf5, zarr], compression: [none], cases.column, split_read_time: true (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        io_operations,
    ),
    Finding(
        "same-size-same-time",
        "Kang",
        KANG,
        "3.1 Row-major read",
        "Chunk shapes, having the same chunk size, result in the same I/O performance.",
        "a 2-D recording read whole from the device (cold), per backend, uncompressed and unsharded: chunk shapes "
        "holding as many elements take the same I/O time (the storage part of the read) within 25%, every "
        "interval inside (two apart by more: does not hold). 25% is small beside what chunk size does in the "
        "same experiment (3.1: HDF5's I/O time falls 4.1x, 78 s to 19 s, Zarr's 21x, 1,408 s to 68 s, as the "
        "chunks grow), so a difference of shape within it is not one of the sizes' kind. " + ON_LUSTRE,
        "cases.whole, split_read_time: true, layouts.shapes of equal chunk size in two shapes (2-D dataset)",
        STUDIES + "kang/hdf5-vs-zarr.yaml",
        same_size_same_time,
    ),
]
