"""The studies' findings on throughput against I/O size, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`).

Each summary row of the case is one API, operation (write, read) and cache state (``cold``,
``warm``; empty for writes) at one amount of data (``bytes_selected``) and request size; the
findings compare rows alike in everything but what their sentence varies."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import HDF5, RAW
from h5sweep.cases.claims import IO_LAB, STUDIES, Finding, Result, above, below, counts, every
from h5sweep.cases.iosize import columns as IC
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import binary_size

# "little overhead": HDF5's time at most this many times raw binary's
OVERHEAD = 2.0
# The lab's personal computer: a filesystem on a local block device (not tmpfs, not a network or
# cluster filesystem, not an object store)
LOCAL_DISK = ("ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs", "reiserfs", "hfsplus", "apfs", "ntfs")
# "when the data set size exceed several tens MiB": the sizes from here on are past it
PLATEAU_FROM = 32 * 2**20
# "large data have better IO performance": the largest amount's throughput at least this many
# times the smallest's
RISE = 2.0
# "the upper limit": from PLATEAU_FROM on, the largest amount's throughput under this many times
# that at the first amount past it
LEVEL = 1.5

TIMES = [C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S]


def _rows(s: pd.DataFrame) -> pd.DataFrame:
    """The case's summary rows with the columns the findings read (none where it did not run)."""
    needed = {C.CASE, IC.API, IC.DIRECTION, IC.REQUEST_BYTES, C.BYTES_SELECTED, *TIMES}
    if not needed <= set(s.columns):
        return s.iloc[0:0]
    rows = s[s[C.CASE] == "iosize"]
    state = rows[C.CACHE_STATE].fillna("").astype(str) if C.CACHE_STATE in rows else ""
    return rows.assign(**{C.CACHE_STATE: state})


def _operation(direction: str, state: str) -> str:
    return f"{direction} {state}".strip()


def _hdf5_as_raw(s, shape) -> Result:
    rows = _rows(s)
    if rows.empty or not {HDF5, RAW} <= set(rows[IC.API]):
        return None
    states, said = [], []
    keys = [C.BYTES_SELECTED, IC.REQUEST_BYTES, IC.DIRECTION, C.CACHE_STATE]
    for (amount, request, direction, state), g in rows.groupby(keys, sort=True):
        if g[IC.API].duplicated().any() or not {HDF5, RAW} <= set(g[IC.API]):
            continue
        h, r = (g[g[IC.API] == api].iloc[0] for api in (HDF5, RAW))
        low = h[C.MEDIAN_CI_LOW_S] / r[C.MEDIAN_CI_HIGH_S]
        high = h[C.MEDIAN_CI_HIGH_S] / r[C.MEDIAN_CI_LOW_S]
        states.append(below(low, high, OVERHEAD))
        where = f"{_operation(direction, state)} {binary_size(int(amount))}"
        where += "" if request >= amount else f" in {binary_size(int(request))} requests"
        said.append(
            (h[C.MEDIAN_S] / r[C.MEDIAN_S], f"{where}: {h[C.MEDIAN_S] / r[C.MEDIAN_S]:.2f}x ({low:.2f}-{high:.2f})")
        )
    if not states:
        return None
    worst = [words for _, words in sorted(said, key=lambda item: -item[0])[:3]]
    return every(states), (
        f"HDF5's time over raw binary's at or under {OVERHEAD:g}x, each amount, request size, operation and cache "
        f"state: {counts(states)}; the largest: " + "; ".join(worst)
    )


def _gain(first: pd.Series, last: pd.Series) -> tuple[float, float]:
    """The interval of ``last``'s throughput over ``first``'s (bytes over each median's bounds)."""
    low = (last[C.BYTES_SELECTED] / last[C.MEDIAN_CI_HIGH_S]) / (first[C.BYTES_SELECTED] / first[C.MEDIAN_CI_LOW_S])
    high = (last[C.BYTES_SELECTED] / last[C.MEDIAN_CI_LOW_S]) / (first[C.BYTES_SELECTED] / first[C.MEDIAN_CI_HIGH_S])
    return low, high


def _mib_s(row: pd.Series) -> float:
    return row[C.BYTES_SELECTED] / row[C.MEDIAN_S] / 2**20


def _request_size(s, shape) -> Result:
    rows = _rows(s)
    if rows.empty or C.FS_TYPE not in rows:
        return None
    kinds = set(rows[C.FS_TYPE].dropna().astype(str))
    if not kinds or not kinds <= set(LOCAL_DISK):  # not the lab's personal computer
        return None
    # the lab's Figure 1: each amount of data written and read in one request
    whole = rows[rows[IC.REQUEST_BYTES] >= rows[C.BYTES_SELECTED]]
    states, said = [], []
    for (api, direction, state), line in whole.groupby([IC.API, IC.DIRECTION, C.CACHE_STATE], sort=True):
        if line[C.BYTES_SELECTED].duplicated().any():
            continue
        line = line.sort_values(C.BYTES_SELECTED)
        past = line[line[C.BYTES_SELECTED] >= PLATEAU_FROM]
        if len(past) < 2 or len(past) == len(line):  # sizes below and at least two past several tens MiB
            continue
        small, large = line.iloc[0], line.iloc[-1]
        rise, level = _gain(small, large), _gain(past.iloc[0], large)
        rises, levels = above(*rise, RISE), below(*level, LEVEL)
        states.append(True if rises and levels else False if False in (rises, levels) else None)
        at = [binary_size(int(r[C.BYTES_SELECTED])) for r in (small, large, past.iloc[0])]
        said.append(
            f"{api} {_operation(direction, state)}: {_mib_s(small):.3g} MiB/s at {at[0]}, {_mib_s(large):.3g} at "
            f"{at[1]} ({rise[0]:.3g}-{rise[1]:.3g}x); from {at[2]} {level[0]:.2f}-{level[1]:.2f}x"
        )
    if not states:
        return None
    return every(states), (
        f"each API, operation and cache state, one request per amount: rises {RISE:g}x or more and levels off "
        f"(under {LEVEL:g}x) past {binary_size(PLATEAU_FROM)}: {counts(states)}; " + "; ".join(said)
    )


FINDINGS = (
    Finding(
        "hdf5-as-raw",
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 1)",
        "But in all cases, the HDF5 IO shows little overhead compared with native binary IO.",
        f"at every amount of data, request size, operation (write; read) and cache state (cold; warm), each "
        f"apart, HDF5's time (file opened and closed) is at most {OVERHEAD:g}x raw binary's: the interval of the "
        "ratio of their medians wholly at or under it",
        "cases.iosize",
        STUDIES + "io-lab/chunk-io.yaml",
        _hdf5_as_raw,
    ),
    Finding(
        "request-size",
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 1)",
        "The interesting thing is that in our personal computer, the IO throughput for all binary IO (Native "
        "binary, HDF5, HDF5 parallel version and MPI IO) changes with IO size: large data have better IO "
        "performance, and the upper limit is about 300 MiB/sec when the data set size exceed several tens MiB.",
        "on a local disk (the personal computer's; not tmpfs, a network filesystem or an object store), the "
        "amount of data varied and each written and read in one request, for HDF5 and raw binary and each "
        "operation and cache state apart: throughput at the largest amount is surely "
        f"{RISE:g}x or more that at the smallest, and from {binary_size(PLATEAU_FROM)} (several tens MiB) on "
        f"it levels off: the largest amount's throughput surely under {LEVEL:g}x that at the first past it. "
        "The 300 MiB/s is the PC's disk's and is not tested (the evidence gives the throughputs); the serial "
        "APIs only",
        "cases.iosize.data_sizes (from KiB to two or more sizes of 32 MiB and more, sizes at least the largest) "
        "on a local disk",
        STUDIES + "io-lab/chunk-io.yaml",
        _request_size,
    ),
)
