"""The studies' findings on throughput against I/O size, checked on a sweep's summary (registered by this
case's spec, ``findings``; the rules in :mod:`h5sweep.cases.claims`)."""

from __future__ import annotations

from h5sweep.cases.claims import IO_LAB, STUDIES, Finding, Result, above, every
from h5sweep.cases.iosize import columns as IC
from h5sweep.storage import columns as C


def _hdf5_as_raw(s, shape) -> Result:
    rows = s[(s[C.CASE] == "iosize")]
    if rows.empty or IC.API not in rows or rows[IC.API].nunique() < 2:
        return None
    said, states = [], []
    for size, g in rows.groupby(IC.REQUEST_BYTES):
        by_api = g.groupby(IC.API)[[C.MEDIAN_S, C.MEDIAN_CI_LOW_S, C.MEDIAN_CI_HIGH_S]].median()
        if len(by_api) < 2:
            continue
        slow, fast = by_api[C.MEDIAN_S].idxmax(), by_api[C.MEDIAN_S].idxmin()
        low = by_api.loc[slow, C.MEDIAN_CI_LOW_S] / by_api.loc[fast, C.MEDIAN_CI_HIGH_S]
        high = by_api.loc[slow, C.MEDIAN_CI_HIGH_S] / by_api.loc[fast, C.MEDIAN_CI_LOW_S]
        # "little overhead": within 2x at every request size
        states.append(True if high <= 2 else False if low > 2 else None)
        said.append(f"{int(size)} B: {slow} {by_api.loc[slow, C.MEDIAN_S] / by_api.loc[fast, C.MEDIAN_S]:.2f}x {fast}")
    if not states:
        return None
    verdict = every(states)
    return verdict, "; ".join(said[:4]) + (" ..." if len(said) > 4 else "")


def _request_size(s, shape) -> Result:
    rows = s[(s[C.CASE] == "iosize")]
    if rows.empty or IC.REQUEST_BYTES not in rows or rows[IC.REQUEST_BYTES].nunique() < 2:
        return None
    amount = rows[C.BYTES_SELECTED] if C.BYTES_SELECTED in rows else rows[C.RAW_BYTES]
    rows = rows.assign(_low=amount / rows[C.MEDIAN_CI_HIGH_S], _high=amount / rows[C.MEDIAN_CI_LOW_S])
    by = rows.groupby(IC.REQUEST_BYTES)[["_low", "_high"]].median()
    first, last = by.iloc[0], by.iloc[-1]
    low, high = last["_low"] / first["_high"], last["_high"] / first["_low"]
    # "large data have better IO performance": at least 2x from the smallest to the largest
    return above(low, high, 2.0), (
        f"throughput at {int(by.index[-1])} B over {int(by.index[0])} B per request: {low:.2f}-{high:.2f}x"
    )


FINDINGS = (
    Finding(
        "hdf5-as-raw",
        "I/O lab",
        IO_LAB,
        "IO performance on IO size",
        "But in all cases, the HDF5 IO shows little overhead compared with native binary IO.",
        "at every request size, the slower of HDF5 and raw binary takes at most 2x the faster's time",
        "cases.iosize",
        STUDIES + "io-lab/chunk-io.yaml",
        _hdf5_as_raw,
    ),
    Finding(
        "request-size",
        "I/O lab",
        IO_LAB,
        "IO performance on IO size",
        "The interesting thing is that in our personal computer, the IO throughput for all binary IO (Native "
        "binary, HDF5, HDF5 parallel version and MPI IO) changes with IO size: large data have better IO "
        "performance, and the upper limit is about 300 MiB/sec when the data set size exceed several tens MiB.",
        "throughput at the largest request size is 2x or more that at the smallest (interval wholly above)",
        "cases.iosize.sizes: two or more",
        STUDIES + "io-lab/chunk-io.yaml",
        _request_size,
    ),
)
