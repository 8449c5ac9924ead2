"""The studies' findings on throughput against I/O size, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.kit.claims`).

Each summary row of the case is one API, operation (write, read) and cache state (``cold``,
``warm``; empty for writes) at one amount of data (``bytes_selected``) and request size; the
findings compare rows alike in everything but what their sentence varies, each amount of data
written or read in one request (the lab's Figure 1). A row of fewer than
:data:`~h5sweep.kit.claims.MIN_REPEATS` timed operations has no interval: what rests on it is
undecided."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import HDF5, RAW
from h5sweep.cases.iosize import columns as IC
from h5sweep.kit.claims import (
    FEW_REPEATS,
    IO_LAB,
    MIN_REPEATS,
    STUDIES,
    UNMEASURED,
    Finding,
    Result,
    above,
    counts,
    every,
    short_of_repeats,
    within,
)
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import binary_size

# h5sweep's reading of "the HDF5 IO shows little overhead compared with native binary IO" (the
# lab, lines 136-137): HDF5's time at most this many times raw binary's
OVERHEAD = 1.25
# The lab's personal computer (line 123; a DELL PC, Figure 1's caption, line 146): a filesystem on
# a local block device stands in for it (not tmpfs, not a network or cluster filesystem, not an
# object store)
LOCAL_DISK = ("ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs", "reiserfs", "hfsplus", "apfs", "ntfs")
# Device names of a virtual machine's disks (virtio, Xen)
VIRTUAL_DISK = ("/dev/vd", "/dev/xvd")
# "when the data set size exceed several tens MiB" (line 126): the amounts from here on are past it
PLATEAU_FROM = 32 * 2**20
# "large data have better IO performance" (line 125): the largest amount's throughput at least
# this many times the smallest's
RISE = 2.0
# "the upper limit is about 300 MiB/sec when the data set size exceed several tens MiB" (lines
# 125-126): the largest amount's throughput within these bounds of that at the amount before it,
# both past several tens of MiB
PLATEAU = (0.8, 1.25)

TIMES = [C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S]


def _rows(s: pd.DataFrame) -> pd.DataFrame:
    """The case's rows of amounts written or read in one request, with the columns the findings
    read (none where it did not run)."""
    needed = {C.CASE, IC.API, IC.DIRECTION, IC.REQUEST_BYTES, C.BYTES_SELECTED, *TIMES}
    if not needed <= set(s.columns):
        return s.iloc[0:0]
    rows = s[(s[C.CASE] == "iosize") & (s[IC.REQUEST_BYTES] >= s[C.BYTES_SELECTED])]
    state = rows[C.CACHE_STATE].fillna("").astype(str) if C.CACHE_STATE in rows else ""
    return rows.assign(**{C.CACHE_STATE: state})


def _operation(direction: str, state: str) -> str:
    return f"{direction} {state}".strip()


def _short(*rows: pd.Series) -> bool:
    """Whether any of ``rows`` rests on fewer than MIN_REPEATS timed operations."""
    return bool(short_of_repeats(pd.DataFrame(list(rows))).any())


def _few(short: int, total: int, what: str) -> str:
    """The evidence's words on ``short`` of ``total`` ``what`` without an interval ("" for none)."""
    return f"; {short} of {total} {what} undecided, resting on fewer than {MIN_REPEATS} repeats" if short else ""


def _at_most(low: float, high: float, threshold: float) -> bool | None:
    """Whether an interval lies wholly at or under ``threshold`` (True), wholly above it (False),
    or admits both (None)."""
    over = above(low, high, threshold)
    return None if over is None else not over


def _hdf5_as_raw(s, shape) -> Result:
    rows = _rows(s)
    if rows.empty or not {HDF5, RAW} <= set(rows[IC.API]):
        return None
    found = []  # (amount, state, ratio of medians, words, HDF5's median less raw binary's)
    for (amount, direction, state), g in rows.groupby([C.BYTES_SELECTED, IC.DIRECTION, C.CACHE_STATE], sort=True):
        if g[IC.API].duplicated().any() or not {HDF5, RAW} <= set(g[IC.API]):
            continue
        h, r = (g[g[IC.API] == api].iloc[0] for api in (HDF5, RAW))
        where = f"{_operation(direction, state)} {binary_size(int(amount))}"
        ratio, excess = h[C.MEDIAN_S] / r[C.MEDIAN_S], h[C.MEDIAN_S] - r[C.MEDIAN_S]
        if _short(h, r):
            found.append((amount, None, ratio, f"{where}: {ratio:.2f}x (no interval)", excess, True))
            continue
        low = h[C.MEDIAN_CI_LOW_S] / r[C.MEDIAN_CI_HIGH_S]
        high = h[C.MEDIAN_CI_HIGH_S] / r[C.MEDIAN_CI_LOW_S]
        words = f"{where}: {ratio:.2f}x ({low:.2f}-{high:.2f})"
        found.append((amount, _at_most(low, high, OVERHEAD), ratio, words, excess, False))
    if not found:
        return None
    short = sum(f[5] for f in found)
    if short == len(found):
        return UNMEASURED, f"each of the {short} amounts and operations compared: {FEW_REPEATS}"
    states = [f[1] for f in found]
    worst = [f[3] for f in sorted((f for f in found if not f[5]), key=lambda f: -f[2])[:3]]
    evidence = (
        f"HDF5's time over raw binary's at or under {OVERHEAD:g}x, each amount (in one request), operation and "
        f"cache state: {counts(states)}{_few(short, len(found), 'rows')}; the largest: " + "; ".join(worst)
    )
    over = [f for f in found if f[1] is False]
    amounts = sorted({f[0] for f in found})
    failing = sorted({f[0] for f in over})
    if failing and failing == amounts[: len(failing)] and len(failing) < len(amounts):
        # surely over at the smallest amounts alone: a fixed cost, not the transfer's
        excess = sorted({f"{f[4] * 1e3:.2g}" for f in over}, key=float)
        larger = [f[1] for f in found if f[0] > failing[-1]]
        evidence += (
            f". Surely over only at the smallest amounts (to {binary_size(int(failing[-1]))}), where opening the "
            f"file dominates (each time includes the file's open; HDF5's median there "
            f"{'-'.join(dict.fromkeys((excess[0], excess[-1])))} ms above raw binary's); at the larger amounts "
            f"{counts(larger)}"
        )
    return every(states), evidence


def _gain(first: pd.Series, last: pd.Series) -> tuple[float, float]:
    """The interval of ``last``'s throughput over ``first``'s (bytes over each median's bounds)."""
    low = (last[C.BYTES_SELECTED] / last[C.MEDIAN_CI_HIGH_S]) / (first[C.BYTES_SELECTED] / first[C.MEDIAN_CI_LOW_S])
    high = (last[C.BYTES_SELECTED] / last[C.MEDIAN_CI_LOW_S]) / (first[C.BYTES_SELECTED] / first[C.MEDIAN_CI_HIGH_S])
    return low, high


def _mib_s(row: pd.Series) -> float:
    return row[C.BYTES_SELECTED] / row[C.MEDIAN_S] / 2**20


def _disk(rows: pd.DataFrame) -> str:
    """What stands in for the lab's PC, in words: the filesystem type and its device where the rows
    name it (a virtual machine's: a virtual disk)."""
    kinds = "+".join(sorted(set(rows[C.FS_TYPE].dropna().astype(str))))
    devices = sorted({str(d) for d in rows[C.FS_DEVICE].dropna() if str(d)}) if C.FS_DEVICE in rows else []
    if not devices:
        return f"{kinds} on a local disk (its device not in the summary)"
    virtual = all(d.startswith(VIRTUAL_DISK) for d in devices)
    return f"{kinds} on {'+'.join(devices)} ({'a virtual disk' if virtual else 'a local disk'})"


def _request_size(s, shape) -> Result:
    rows = _rows(s)
    if rows.empty or C.FS_TYPE not in rows:
        return None
    kinds = set(rows[C.FS_TYPE].dropna().astype(str))
    if not kinds or not kinds <= set(LOCAL_DISK):  # no local disk to stand in for the lab's PC
        return None
    # writes and reads from the device: the upper limit is the PC's disk's; reads the page cache
    # served are outside the lab's conditions
    rows = rows[(rows[IC.DIRECTION] == "write") | (rows[C.CACHE_STATE] == "cold")]
    states, said, short = [], [], 0
    for (api, direction, state), line in rows.groupby([IC.API, IC.DIRECTION, C.CACHE_STATE], sort=True):
        if line[C.BYTES_SELECTED].duplicated().any():
            continue
        line = line.sort_values(C.BYTES_SELECTED)
        past = line[line[C.BYTES_SELECTED] >= PLATEAU_FROM]
        if len(past) < 2 or len(past) == len(line):  # sizes below and at least two past several tens MiB
            continue
        small, before, large = line.iloc[0], past.iloc[-2], past.iloc[-1]
        at = [binary_size(int(r[C.BYTES_SELECTED])) for r in (small, large, before)]
        head = f"{api} {_operation(direction, state)}: {_mib_s(small):.3g} MiB/s at {at[0]}"
        head += f", {_mib_s(large):.3g} at {at[1]}"
        if _short(small, before, large):
            short += 1
            states.append(None)
            said.append(f"{head} (no interval)")
            continue
        rise, level = _gain(small, large), _gain(before, large)
        rises, levels = above(*rise, RISE), within(*level, *PLATEAU)
        states.append(True if rises and levels else False if False in (rises, levels) else None)
        said.append(f"{head} ({rise[0]:.3g}-{rise[1]:.3g}x); over {at[2]} {level[0]:.2f}-{level[1]:.2f}x")
    if not states:
        return None
    where = f"{_disk(rows)} stands in for the lab's PC"
    if short == len(states):
        return UNMEASURED, f"{where}; each of the {short} APIs and operations compared: {FEW_REPEATS}"
    return every(states), (
        f"{where}; each API, writes and cold reads, one request per amount: rises {RISE:g}x or more from the "
        f"smallest to the largest amount and the largest's within {PLATEAU[0]:g}-{PLATEAU[1]:g}x of the amount's "
        f"before it: {counts(states)}{_few(short, len(states), 'lines')}; " + "; ".join(said)
    )


FINDINGS = (
    Finding(
        "hdf5-as-raw",
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 1)",
        "But in all cases, the HDF5 IO shows little overhead compared with native binary IO.",
        f"h5sweep reads 'little overhead' as HDF5's time at most {OVERHEAD:g}x raw binary's: at every amount of "
        "data, each written and read in one request, each operation (write; read) and cache state (cold; warm) "
        f"apart, the interval of the ratio of HDF5's median time to raw binary's (each time the file's open, "
        f"I/O and close, a write's flush to the disk too) wholly at or under {OVERHEAD:g}x; wholly above it at any "
        "one, it does not hold",
        "cases.iosize (repeats: 6 or more)",
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
        "a local disk stands in for the lab's personal computer (not tmpfs, a network filesystem or an object "
        "store; the evidence names the filesystem and its device, on a virtual machine a virtual disk; the lab's "
        "next sentence says its workstation and cluster do not show the dependence): the amount of data varied, "
        "each written and read in one request, for HDF5 and raw binary and writes and cold reads apart (the upper "
        "limit is the PC's disk's; warm reads from the page cache are outside the lab's conditions): throughput "
        f"at the largest amount is surely {RISE:g}x or more that at the smallest, and past "
        f"{binary_size(PLATEAU_FROM)} (several tens MiB) it levels off: the largest amount's throughput surely "
        f"within {PLATEAU[0]:g}-{PLATEAU[1]:g}x of that at the amount before it (128 MiB against 64 MiB as "
        "shipped). The 300 MiB/s is the PC's disk's and is not tested (the evidence gives the throughputs); the "
        "serial APIs only",
        "cases.iosize.data_sizes (from KiB to two or more sizes of 32 MiB and more, sizes at least the largest; "
        "repeats: 6 or more) on a local disk",
        STUDIES + "io-lab/chunk-io.yaml",
        _request_size,
    ),
)
