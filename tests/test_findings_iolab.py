"""The HDF5 I/O lab's findings (hdf5-as-raw, request-size, random-worst), each judged on summary
rows built as config/studies/io-lab/chunk-io.yaml's come out: the iosize case's rows (seven
amounts of data, each in one request; HDF5 and raw binary; a write, a cold and a warm read) and
the boxes' reads of one chunked store and the contiguous one (three read sizes, four chunk
caches, three visiting policies, reads of an open file split into cold and warm)."""

from __future__ import annotations

import math

import pandas as pd

from h5sweep.analyze import findings

MiB = 2**20
# the shipped config's amounts: 4 KiB to 128 MiB, three of them past several tens of MiB
AMOUNTS = (4096, 65536, MiB, 16 * MiB, 32 * MiB, 64 * MiB, 128 * MiB)
OPERATIONS = (("write", ""), ("read", "cold"), ("read", "warm"))
SHAPE = (4096, 4096)


def _finding(key: str) -> findings.Finding:
    return next(f for f in findings.FINDINGS if f.key == key)


def verdict(key: str, rows: list[dict]) -> tuple[str, str]:
    return findings.judge(_finding(key), pd.DataFrame(rows), SHAPE)


def _interval(median: float, spread: float) -> dict:
    if math.isnan(spread):  # one repeat: no interval
        return {"median_s": median, "median_ci_low_s": math.nan, "median_ci_high_s": math.nan}
    return {"median_s": median, "median_ci_low_s": median * (1 - spread), "median_ci_high_s": median * (1 + spread)}


def saturating(peak: float = 300.0, knee: float = MiB):
    """MiB/s that rises with the amount and levels off past a few MiB at ``peak`` (the lab's PC)."""
    return lambda api, operation, amount: peak * amount / (amount + knee)


def iosize_rows(
    throughput, spread: float = 0.05, fs_type: str = "ext4", amounts=AMOUNTS, request=None, apis=("hdf5", "raw")
) -> list[dict]:
    """The iosize case's summary rows: per API, operation (cache state) and amount, its median
    time from ``throughput(api, "write" | "read cold" | "read warm", amount)`` (MiB/s) with an
    interval of +-``spread``; each amount in one request unless ``request`` is given."""
    rows = []
    for amount in amounts:
        for api in apis:
            for direction, state in OPERATIONS:
                size = min(request or amount, amount)
                seconds = amount / MiB / throughput(api, f"{direction} {state}".strip(), amount)
                rows.append(
                    {
                        "filesystem": "disk",
                        "fs_type": fs_type,
                        "backend": "hdf5",
                        "layout": "contiguous",
                        "layout_id": "contiguous",
                        "chunk_shape": "",
                        "compression": "none",
                        "case": "iosize",
                        "variant": f"{api} {direction} {state}, {amount} B in {size} B requests",
                        "cache_state": state if fs_type != "tmpfs" or not state else "memory",
                        "api": api,
                        "direction": direction,
                        "request_bytes": size,
                        "bytes_selected": amount,
                        "repeats": 9,
                        **_interval(seconds, spread),
                    }
                )
    return rows


def hdf5_over_raw(factor):
    """HDF5's throughput ``factor(operation, amount)`` times slower than raw binary's (300 MiB/s)."""
    return lambda api, operation, amount: 300.0 / (factor(operation, amount) if api == "hdf5" else 1.0)


# hdf5-as-raw: at every amount, request size, operation and cache state apart, HDF5's time at
# most 2x raw binary's


def test_hdf5_as_raw_holds_where_hdf5_is_within_2x_everywhere():
    said, evidence = verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.2)))
    assert said == findings.HOLDS and "21 surely so, 0 surely not, 0 undecided of 21" in evidence


def test_hdf5_as_raw_does_not_hold_where_one_operation_at_one_amount_is_far_slower():
    """As measured on the reference machine: HDF5's warm read of 4 KiB (its file's open) 34x raw
    binary's, every other row within 1.1x: pooled over operations and amounts the median ratio
    would be 1.1; each apart, one is surely over 2x."""
    slow = hdf5_over_raw(lambda op, n: 34.0 if (op, n) == ("read warm", 4096) else 1.1)
    said, evidence = verdict("hdf5-as-raw", iosize_rows(slow))
    assert said == findings.FAILS
    assert "20 surely so, 1 surely not" in evidence and "read warm 4 KiB: 34.00x" in evidence


def test_hdf5_as_raw_is_inconclusive_where_an_interval_straddles_2x_or_there_is_none():
    straddles = hdf5_over_raw(lambda op, n: 1.9 if op == "write" else 1.1)
    assert verdict("hdf5-as-raw", iosize_rows(straddles, spread=0.1))[0] == findings.INCONCLUSIVE
    # one repeat per amount (no interval): nothing can be said, however close the medians
    assert verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.0), spread=math.nan))[0] == (
        findings.INCONCLUSIVE
    )


def test_hdf5_as_raw_is_not_measured_without_both_apis():
    said, evidence = verdict("hdf5-as-raw", iosize_rows(saturating(), apis=("hdf5",)))
    assert said == findings.UNMEASURED and "cases.iosize" in evidence
    assert verdict("hdf5-as-raw", [])[0] == findings.UNMEASURED


# request-size: on a local disk, the amount of data varied, each in one request: throughput
# rises 2x or more from the smallest to the largest and levels off (under 1.5x) from 32 MiB on


def test_request_size_holds_where_throughput_rises_then_levels_off_on_a_local_disk():
    said, evidence = verdict("request-size", iosize_rows(saturating()))
    assert said == findings.HOLDS, evidence
    assert "6 surely so, 0 surely not, 0 undecided of 6" in evidence and "from 32 MiB" in evidence


def test_request_size_does_not_hold_where_one_line_still_rises_past_several_tens_of_mib():
    """Raw binary's writes still gain 2x from 32 MiB to 128 MiB: no upper limit there, though every
    other line levels off."""
    rising = saturating()

    def throughput(api, operation, amount):
        if (api, operation) == ("raw", "write"):
            return 300.0 * math.sqrt(amount / (128 * MiB))
        return rising(api, operation, amount)

    said, evidence = verdict("request-size", iosize_rows(throughput))
    assert said == findings.FAILS and "5 surely so, 1 surely not" in evidence


def test_request_size_does_not_hold_where_throughput_does_not_change_with_size():
    assert verdict("request-size", iosize_rows(lambda api, op, n: 300.0))[0] == findings.FAILS


def test_request_size_is_inconclusive_where_the_intervals_admit_a_level_and_a_rise():
    said, evidence = verdict("request-size", iosize_rows(saturating(), spread=0.3))
    assert said == findings.INCONCLUSIVE, evidence


def test_request_size_is_not_measured_off_a_local_disk_or_without_the_lab_s_sizes():
    # tmpfs is memory, not the personal computer's disk
    assert verdict("request-size", iosize_rows(saturating(), fs_type="tmpfs"))[0] == findings.UNMEASURED
    # nothing past several tens of MiB: the upper limit cannot be seen
    small = iosize_rows(saturating(), amounts=AMOUNTS[:4])
    said, evidence = verdict("request-size", small)
    assert said == findings.UNMEASURED and "data_sizes" in evidence
    # the request size varied over the whole dataset: not what the lab varies
    by_request = [
        r
        for request in (4096, MiB, 128 * MiB)
        for r in iosize_rows(saturating(), amounts=(128 * MiB,), request=request)
    ]
    assert verdict("request-size", by_request)[0] == findings.UNMEASURED


# random-worst: reads of an open file (cold: first), each chunked store, case, chunk cache and
# cache state apart: in most, random surely slower than aligned and than localized

CACHES = ((1048576, 521, 0.75), (16777216, 521, 0.75), (16777216, 10007, 0.75), (16777216, 10007, 0.0))
CASES = ("io_2k", "io_8k", "io_128k")


def visits(times: dict, cold_mode: str = "first", policies=("random", "aligned", "localized"), warm_random=None):
    """The boxes' summary rows of one chunked store (32 x 32) and the contiguous one: per case,
    chunk cache, policy and cache state (cold, warm), the median ``times[policy]`` ms with its
    interval (a pair: +-spread). ``warm_random``: random's warm median and spread instead."""
    rows = []
    for chunk in ("32x32", ""):
        for case in CASES:
            for size, slots, w0 in CACHES:
                for policy in policies:
                    for state in ("cold", "warm"):
                        median, spread = times[policy]
                        if state == "warm":
                            median, spread = (median / 4, spread)
                            if policy == "random" and warm_random is not None:
                                median, spread = warm_random
                        cache = f"cache {size // MiB} MiB/{slots}/{w0:g}"
                        rows.append(
                            {
                                "filesystem": "disk",
                                "fs_type": "ext4",
                                "backend": "hdf5",
                                "layout": "chunked" if chunk else "contiguous",
                                "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
                                "chunk_shape": chunk,
                                "compression": "none",
                                "case": case,
                                "variant": f"{policy}, {cache}, cold {cold_mode}",
                                "cache_state": state,
                                "policy": policy,
                                "cold_mode": cold_mode,
                                "reader": math.nan,
                                "chunk_cache_bytes": size,
                                "chunk_cache_slots": slots,
                                "chunk_cache_w0": w0,
                                "repeats": 50,
                                **_interval(median / 1e3, spread),
                            }
                        )
    return rows


def test_random_worst_holds_where_random_is_surely_slower_than_each_other_policy():
    said, evidence = verdict(
        "random-worst", visits({"random": (3.0, 0.05), "aligned": (1.0, 0.05), "localized": (1.5, 0.05)})
    )
    # 3 cases x 4 caches x 2 cache states of the chunked store; the contiguous store's not judged
    assert said == findings.HOLDS and "24 surely so, 0 surely not, 0 undecided of 24" in evidence


def test_random_worst_does_not_hold_where_random_is_slower_than_the_best_but_not_the_worst():
    """Random surely slower than aligned, the best, but surely faster than localized: not the worst
    (a check against the best alone would say it holds)."""
    times = {"random": (2.0, 0.05), "aligned": (1.0, 0.05), "localized": (3.0, 0.05)}
    said, evidence = verdict("random-worst", visits(times))
    assert said == findings.FAILS and "0 surely so, 24 surely not" in evidence


def test_random_worst_is_inconclusive_where_random_and_localized_overlap():
    times = {"random": (1.6, 0.2), "aligned": (1.0, 0.05), "localized": (1.5, 0.2)}
    assert verdict("random-worst", visits(times))[0] == findings.INCONCLUSIVE


def test_random_worst_leaves_out_a_cache_state_a_policy_was_read_in_once():
    """Reads of an open file: random's reads nearly all cold, its one warm read has no interval;
    the cold reads decide, the warm ones are counted as without an interval."""
    times = {"random": (3.0, 0.05), "aligned": (1.0, 0.05), "localized": (1.5, 0.05)}
    said, evidence = verdict("random-worst", visits(times, warm_random=(0.1, math.nan)))
    assert said == findings.HOLDS and "12 surely so, 0 surely not, 0 undecided of 12" in evidence
    assert "12 without an interval" in evidence


def test_random_worst_is_not_measured_where_the_cache_cannot_carry_over_or_a_policy_is_missing():
    times = {"random": (3.0, 0.05), "aligned": (1.0, 0.05), "localized": (1.5, 0.05)}
    # every read evicted and reopened: the chunk cache starts empty each time
    said, evidence = verdict("random-worst", visits(times, cold_mode="every"))
    assert said == findings.UNMEASURED and "cold: first" in evidence
    assert verdict("random-worst", visits(times, policies=("random", "aligned")))[0] == findings.UNMEASURED
