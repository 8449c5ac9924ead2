"""The HDF5 I/O lab's findings (hdf5-as-raw, request-size, random-worst), each judged on summary
rows built as config/studies/io-lab/chunk-io.yaml's come out: the iosize case's rows (seven
amounts of data, each in one request; HDF5 and raw binary; a write, a cold and a warm read; 12
repeats each) and the boxes' reads of one chunked store and the contiguous one (three read sizes,
four chunk caches, three visiting policies, reads of an open file split into cold and warm). Rows
of fewer than 6 repeats carry the [min, max] the summary gives them (none for one), which is no
95% interval."""

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
    throughput,
    spread: float = 0.05,
    fs_type: str = "ext4",
    amounts=AMOUNTS,
    request=None,
    apis=("hdf5", "raw"),
    repeats=12,
    device=None,
) -> list[dict]:
    """The iosize case's summary rows: per API, operation (cache state) and amount, its median
    time from ``throughput(api, "write" | "read cold" | "read warm", amount)`` (MiB/s) with an
    interval of +-``spread`` (or +-``spread(amount)``); each amount in one request unless ``request``
    is given. ``repeats``: the timed operations of each row (as shipped, 12), or a function of (api,
    operation, amount);
    below 6 the interval is the [min, max] the summary gives, with 1 none. ``device``: the rows'
    ``fs_device`` (None: the summary does not carry it)."""
    rows = []
    for amount in amounts:
        for api in apis:
            for direction, state in OPERATIONS:
                operation = f"{direction} {state}".strip()
                size = min(request or amount, amount)
                seconds = amount / MiB / throughput(api, operation, amount)
                n = repeats(api, operation, amount) if callable(repeats) else repeats
                rows.append(
                    {
                        "filesystem": "disk",
                        "fs_type": fs_type,
                        **({} if device is None else {"fs_device": device}),
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
                        "repeats": n,
                        **_interval(seconds, math.nan if n == 1 else spread(amount) if callable(spread) else spread),
                    }
                )
    return rows


def hdf5_over_raw(factor):
    """HDF5's throughput ``factor(operation, amount)`` times slower than raw binary's (300 MiB/s)."""
    return lambda api, operation, amount: 300.0 / (factor(operation, amount) if api == "hdf5" else 1.0)


# hdf5-as-raw: h5sweep's reading of "little overhead": at every amount (in one request),
# operation and cache state apart, HDF5's time at most 1.25x raw binary's


def test_hdf5_as_raw_holds_where_hdf5_is_within_1_25x_everywhere():
    said, evidence = verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.1)))
    # 7 amounts x (write, cold read, warm read)
    assert said == findings.HOLDS and "21 surely so, 0 surely not, 0 undecided of 21" in evidence


def test_hdf5_as_raw_does_not_hold_where_hdf5_takes_1_6x_everywhere():
    """1.6x raw binary's time at every amount is surely more than little overhead (a 2x bound
    would call it little)."""
    said, evidence = verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.6)))
    assert said == findings.FAILS and "0 surely so, 21 surely not" in evidence
    assert "opening the file dominates" not in evidence  # every amount, not only the smallest


def test_hdf5_as_raw_does_not_hold_at_the_smallest_amount_and_says_the_open_dominates_there():
    """As measured on the reference machine: HDF5's reads of 4 KiB (its file's open) 6x and 34x raw
    binary's, every other row within 1.05x: pooled over operations and amounts the median ratio
    would be 1.05; each apart, two are surely over, and only at the smallest amount."""
    slow = hdf5_over_raw(lambda op, n: {"read warm": 34.0, "read cold": 6.0}.get(op, 1.05) if n == 4096 else 1.05)
    said, evidence = verdict("hdf5-as-raw", iosize_rows(slow))
    assert said == findings.FAILS
    assert "19 surely so, 2 surely not" in evidence and "read warm 4 KiB: 34.00x" in evidence
    assert "only at the smallest amounts (to 4 KiB), where opening the file dominates" in evidence


def test_hdf5_as_raw_does_not_hold_at_the_smallest_amount_while_the_larger_ones_are_undecided():
    """As on the tiny run under load: HDF5's warm read of 4 KiB 24x raw binary's, surely over; every
    larger amount's interval straddles 1.25x. The one row surely over decides, and the evidence
    says it is the smallest amount's."""
    slow = hdf5_over_raw(lambda op, n: 24.0 if (op, n) == ("read warm", 4096) else 1.05)
    rows = iosize_rows(slow, spread=lambda n: 0.05 if n == 4096 else 0.3)
    said, evidence = verdict("hdf5-as-raw", rows)
    assert said == findings.FAILS and "2 surely so, 1 surely not, 18 undecided of 21" in evidence
    assert "only at the smallest amounts (to 4 KiB), where opening the file dominates" in evidence
    assert "at the larger amounts 0 surely so, 0 surely not, 18 undecided of 18" in evidence


def test_hdf5_as_raw_does_not_blame_the_open_where_a_large_amount_is_over_too():
    slow = hdf5_over_raw(lambda op, n: 34.0 if n == 4096 else 1.6 if n == 128 * MiB and op == "write" else 1.05)
    said, evidence = verdict("hdf5-as-raw", iosize_rows(slow))
    assert said == findings.FAILS and "opening the file dominates" not in evidence


def test_hdf5_as_raw_judges_only_amounts_in_one_request():
    """The lab writes and reads each amount whole: 128 MiB in 4 KiB requests, 3x slower through
    HDF5, is not among its rows."""
    whole = iosize_rows(hdf5_over_raw(lambda op, n: 1.1))
    pieces = iosize_rows(hdf5_over_raw(lambda op, n: 3.0), amounts=(128 * MiB,), request=4096)
    said, evidence = verdict("hdf5-as-raw", whole + pieces)
    assert said == findings.HOLDS and "of 21" in evidence


def test_hdf5_as_raw_is_inconclusive_where_an_interval_straddles_1_25x_or_rests_on_few_repeats():
    straddles = hdf5_over_raw(lambda op, n: 1.2 if op == "write" else 1.05)
    assert verdict("hdf5-as-raw", iosize_rows(straddles, spread=0.1))[0] == findings.INCONCLUSIVE
    # 5 warm reads of 4 KiB: their [min, max] is no 95% interval, however far over 1.25x
    slow = hdf5_over_raw(lambda op, n: 34.0 if (op, n) == ("read warm", 4096) else 1.05)
    few = iosize_rows(slow, repeats=lambda api, op, n: 5 if (op, n) == ("read warm", 4096) else 12)
    said, evidence = verdict("hdf5-as-raw", few)
    assert said == findings.INCONCLUSIVE
    assert "20 surely so, 0 surely not, 1 undecided of 21" in evidence and "1 of 21 rows undecided" in evidence


def test_hdf5_as_raw_is_not_measured_on_too_few_repeats_or_without_both_apis():
    # repeats: 1 (as the lab's one run per size): no interval at all, however close the medians
    said, evidence = verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.0), repeats=1))
    assert said == findings.UNMEASURED and "needs 6 or more repeats" in evidence
    assert verdict("hdf5-as-raw", iosize_rows(hdf5_over_raw(lambda op, n: 1.0), repeats=5))[0] == (findings.UNMEASURED)
    said, evidence = verdict("hdf5-as-raw", iosize_rows(saturating(), apis=("hdf5",)))
    assert said == findings.UNMEASURED and "cases.iosize" in evidence
    assert verdict("hdf5-as-raw", [])[0] == findings.UNMEASURED


# request-size: a local disk for the lab's PC; the amount of data varied, each in one request;
# writes and cold reads: throughput rises 2x or more from the smallest to the largest, and the
# largest within 0.8-1.25x of the amount's before it (128 MiB against 64 MiB as shipped)


def test_request_size_holds_where_throughput_rises_then_levels_off_on_a_local_disk():
    said, evidence = verdict("request-size", iosize_rows(saturating()))
    assert said == findings.HOLDS, evidence
    # 2 APIs x (write, cold read): warm reads are not the disk's
    assert "4 surely so, 0 surely not, 0 undecided of 4" in evidence and "over 64 MiB" in evidence
    assert "ext4 on a local disk (its device not in the summary) stands in for the lab's PC" in evidence


def test_request_size_names_the_device_that_stands_in_for_the_lab_s_pc():
    said, evidence = verdict("request-size", iosize_rows(saturating(), device="/dev/vda"))
    assert said == findings.HOLDS and "ext4 on /dev/vda (a virtual disk) stands in" in evidence
    evidence = verdict("request-size", iosize_rows(saturating(), device="/dev/nvme0n1p2"))[1]
    assert "ext4 on /dev/nvme0n1p2 (a local disk) stands in" in evidence


def test_request_size_leaves_out_warm_reads_the_page_cache_served():
    """Warm reads still gaining 2x from 64 MiB to 128 MiB (memory copies, not the disk's limit)
    do not count against the lab's disk."""
    level = saturating()

    def throughput(api, operation, amount):
        return 30.0 * amount / MiB if operation == "read warm" else level(api, operation, amount)

    said, evidence = verdict("request-size", iosize_rows(throughput))
    assert said == findings.HOLDS and "of 4" in evidence and "warm:" not in evidence


def test_request_size_does_not_hold_where_one_line_still_rises_past_several_tens_of_mib():
    """Raw binary's writes still gain 1.4x from 64 MiB to 128 MiB: no upper limit there, though
    every other line levels off."""
    rising = saturating()

    def throughput(api, operation, amount):
        if (api, operation) == ("raw", "write"):
            return 300.0 * math.sqrt(amount / (128 * MiB))
        return rising(api, operation, amount)

    said, evidence = verdict("request-size", iosize_rows(throughput))
    assert said == findings.FAILS and "3 surely so, 1 surely not" in evidence


def test_request_size_does_not_hold_where_throughput_falls_past_several_tens_of_mib():
    """300 MiB/s at 64 MiB, 200 at 128 MiB: no plateau either (a bound on the rise alone would
    pass it)."""
    level = saturating()

    def throughput(api, operation, amount):
        return 200.0 if amount == 128 * MiB else level(api, operation, amount)

    said, evidence = verdict("request-size", iosize_rows(throughput))
    assert said == findings.FAILS and "0 surely so, 4 surely not" in evidence


def test_request_size_does_not_hold_where_throughput_does_not_change_with_size():
    assert verdict("request-size", iosize_rows(lambda api, op, n: 300.0))[0] == findings.FAILS


def test_request_size_is_inconclusive_where_the_intervals_admit_a_level_and_a_rise_or_rest_on_few_repeats():
    said, evidence = verdict("request-size", iosize_rows(saturating(), spread=0.3))
    assert said == findings.INCONCLUSIVE, evidence
    # HDF5's 4 KiB rows of 5 repeats: its lines undecided, raw binary's hold
    few = iosize_rows(saturating(), repeats=lambda api, op, n: 5 if (api, n) == ("hdf5", 4096) else 12)
    said, evidence = verdict("request-size", few)
    assert said == findings.INCONCLUSIVE and "2 surely so, 0 surely not, 2 undecided of 4" in evidence
    assert "2 of 4 lines undecided, resting on fewer than 6 repeats" in evidence


def test_request_size_is_not_measured_off_a_local_disk_without_the_lab_s_sizes_or_repeats():
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
    # one run per amount: no interval
    said, evidence = verdict("request-size", iosize_rows(saturating(), repeats=1))
    assert said == findings.UNMEASURED and "needs 6 or more repeats" in evidence


# random-worst: reads of an open file (cold: first), each chunked store, case, chunk cache and
# cache state apart, each with 6 or more reads of every policy: in every one, random surely
# slower than aligned and than localized

CACHES = ((1048576, 521, 0.75), (16777216, 521, 0.75), (16777216, 10007, 0.75), (16777216, 10007, 0.0))
CASES = ("io_2k", "io_8k", "io_128k")
WORST = {"random": (3.0, 0.05), "aligned": (1.0, 0.05), "localized": (1.5, 0.05)}


def visits(times, cold_mode: str = "first", policies=("random", "aligned", "localized"), repeats=None):
    """The boxes' summary rows of one chunked store (32 x 32) and the contiguous one: per case,
    chunk cache, policy and cache state (cold, warm), the median ms and spread of ``times[policy]``
    (or of ``times(case, cache, state)[policy]``; warm: a quarter of the median given), its
    interval +-spread. ``repeats(case, policy, state)``: the reads in the row (50; below 6 the
    summary's interval is their [min, max], with 1 none)."""
    rows = []
    for chunk in ("32x32", ""):
        for case in CASES:
            for cache in CACHES:
                size, slots, w0 = cache
                for policy in policies:
                    for state in ("cold", "warm"):
                        median, spread = (times(case, cache, state) if callable(times) else times)[policy]
                        if state == "warm" and not callable(times):
                            median = median / 4
                        n = repeats(case, policy, state) if repeats else 50
                        label = f"cache {size // MiB} MiB/{slots}/{w0:g}"
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
                                "variant": f"{policy}, {label}, cold {cold_mode}",
                                "cache_state": state,
                                "policy": policy,
                                "cold_mode": cold_mode,
                                "reader": math.nan,
                                "chunk_cache_bytes": size,
                                "chunk_cache_slots": slots,
                                "chunk_cache_w0": w0,
                                "repeats": n,
                                "device_read_bytes_median": 65536.0 if state == "cold" else 0.0,
                                **_interval(median / 1e3, math.nan if n == 1 else spread),
                            }
                        )
    return rows


def test_random_worst_holds_where_random_is_surely_slower_than_each_other_policy():
    said, evidence = verdict("random-worst", visits(WORST))
    # 3 cases x 4 caches x 2 cache states of the chunked store; the contiguous store's not judged
    assert said == findings.HOLDS and "24 surely so, 0 surely not, 0 undecided of 24" in evidence


def test_random_worst_does_not_hold_where_random_is_slower_than_the_best_but_not_the_worst():
    """Random surely slower than aligned, the best, but surely faster than localized: not the worst
    (a check against the best alone would say it holds)."""
    times = {"random": (2.0, 0.05), "aligned": (1.0, 0.05), "localized": (3.0, 0.05)}
    said, evidence = verdict("random-worst", visits(times))
    assert said == findings.FAILS and "0 surely so, 24 surely not" in evidence


def test_random_worst_does_not_hold_where_random_is_surely_not_the_worst_in_one_cell():
    """The worst in 23 of 24 (read size, cache, cache state); in the 128 x 128 reads' cold ones
    through HDF5's default cache, surely faster than aligned: "the worst" is unqualified, so one
    such cell decides (a majority would say it holds)."""

    def times(case, cache, state):
        if (case, cache[0], state) == ("io_128k", 1048576, "cold"):
            return {"random": (2.0, 0.05), "aligned": (3.0, 0.05), "localized": (1.0, 0.05)}
        return WORST

    said, evidence = verdict("random-worst", visits(times))
    assert said == findings.FAILS and "23 surely so, 1 surely not, 0 undecided of 24" in evidence
    assert (
        "e.g. io_128k (random, cache 1 MiB/521/0.75, cold first, cold): random 2 ms (64 KiB from the device), "
        "aligned 3 ms (64 KiB from the device)"
    ) in evidence


def test_random_worst_is_inconclusive_where_random_and_another_overlap_in_one_cell():
    """Random surely the worst in 23 of 24; in one, its interval overlaps aligned's (device-bound
    cold reads): undecided, so not yet the worst everywhere (a majority would say it holds)."""

    def times(case, cache, state):
        if (case, cache[0], state) == ("io_128k", 1048576, "cold"):
            return {"random": (2.0, 0.1), "aligned": (1.9, 0.1), "localized": (1.0, 0.05)}
        return WORST

    said, evidence = verdict("random-worst", visits(times))
    assert said == findings.INCONCLUSIVE and "23 surely so, 0 surely not, 1 undecided of 24" in evidence
    assert "e.g. io_128k (random, cache 1 MiB/521/0.75, cold first, cold): random 2 ms (64 KiB" in evidence


def test_random_worst_leaves_out_a_cache_state_a_policy_was_read_in_fewer_than_6_times():
    """Reads of an open file: random's reads nearly all cold; its 5 warm reads are fast, but their
    [min, max] is no 95% interval: the cold reads decide, the warm ones are left out and said."""

    def times(case, cache, state):
        return {**WORST, "random": (0.1, 0.05)} if state == "warm" else WORST

    def repeats(case, policy, state):
        return 5 if (policy, state) == ("random", "warm") else 50

    said, evidence = verdict("random-worst", visits(times, repeats=repeats))
    assert said == findings.HOLDS and "12 surely so, 0 surely not, 0 undecided of 12" in evidence
    assert "12 left out with fewer than 6 reads of a policy" in evidence


def test_random_worst_is_not_measured_on_few_reads_where_the_cache_cannot_carry_over_or_a_policy_is_missing():
    # 5 reads of each policy in each cache state: no interval anywhere
    said, evidence = verdict("random-worst", visits(WORST, repeats=lambda case, policy, state: 5))
    assert said == findings.UNMEASURED and "needs 6 or more repeats" in evidence and "24 with fewer" in evidence
    # every read evicted and reopened: the chunk cache starts empty each time
    said, evidence = verdict("random-worst", visits(WORST, cold_mode="every"))
    assert said == findings.UNMEASURED and "cold: first" in evidence
    assert verdict("random-worst", visits(WORST, policies=("random", "aligned")))[0] == findings.UNMEASURED
