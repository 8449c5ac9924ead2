"""One timed parallel pass, as every rank runs it (inside the MPI program, :mod:`.mpi`)."""

from __future__ import annotations

import os
import time

import numpy as np

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.core import WRITE_SUFFIX, accesses, deal, hints_words, region, remainder_rank
from h5sweep.cases.parallel.model import _start_and_size
from h5sweep.cases.scaling import columns as SC
from h5sweep.measure import pagecache
from h5sweep.measure.timing import touched_empty
from h5sweep.storage import columns as C

# ---------------------------------------------------------------------------------------------
# The MPI program: one run per process count, every rank runs run().


class PassError(RuntimeError):
    """A rank's values differ from the data source (the message names rank, mode and access)."""


def _evict(backend, path: str) -> None:
    for name in backend.paths_to_evict(path):
        pagecache.evict(name)


def _check(comm, problems: list[str]) -> None:
    """Every rank raises the first rank's problem, so that the run fails as a whole."""
    found = [p for rank_problems in comm.allgather(problems) for p in rank_problems]
    if found:
        raise PassError(found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""))


def _tiles(parts: list[list[tuple[int, int]]], units: int) -> str | None:
    """Why the ranks' accesses do not cover the axis exactly once, or None."""
    covered = np.zeros(units, dtype=np.int64)
    for part in parts:
        for start, count in part:
            covered[start : start + count] += 1
    if (covered != 1).any():
        first = int(np.flatnonzero(covered != 1)[0])
        return f"unit {first} is accessed {int(covered[first])} times"
    return None


def one_pass(ctx: dict, operation: str, mode: str, k: int, option, repeat: int) -> dict | None:
    """One timed pass; its row on rank 0 (None elsewhere)."""
    from mpi4py import MPI

    comm, backend, shape, axis = ctx["comm"], ctx[C.BACKEND], ctx["shape"], ctx["axis"]
    rank, size = comm.Get_rank(), comm.Get_size()
    processes = 1 if mode == "serial" else size
    parts = deal(shape[axis], k, size, mode, ctx["remainder"])
    problem = _tiles(parts, shape[axis]) if rank == 0 else None
    if problem:
        raise PassError(f"{ctx['path']}: the {mode} pass of {k} {ctx[PC.UNITS_COLUMN]} per access: {problem}")
    mine = parts[rank]
    taking_part = mode != "serial" or rank == 0
    source, dtype = ctx["source"], np.dtype(ctx["dataset"][C.DTYPE])
    target = ctx["path"] if operation == "read" else ctx["path"] + WRITE_SUFFIX
    resident_before = None
    if operation == "read":
        resident_before = pagecache.resident_fraction(backend.paths_to_evict(target)[0]) if rank == 0 else None
        comm.Barrier()
        _evict(backend, target)  # cold on every rank's node
    else:
        if rank == 0 and os.path.lexists(target):
            backend.remove(target)
        comm.Barrier()
    create = (shape, dtype, ctx[C.LAYOUT], ctx[C.COMPRESSION]) if operation == "write" else None
    hints = ctx["hints"]
    handle = backend.open_pass(target, ctx["name"], mode, comm, option, create, hints) if taking_part else None
    # every rank with a handle asks (HDF5 duplicates the communicator to answer)
    in_effect = handle.hints_in_effect() if handle is not None and hints else {}
    regions = [region(shape, axis, start, count) for start, count in mine]
    if operation == "read":
        buffers = [touched_empty(_start_and_size(r)[1], dtype) for r in regions]
    else:
        buffers = [np.ascontiguousarray(source.region(r)) for r in regions]
    calls = [handle.prepare(r, b) for r, b in zip(regions, buffers, strict=True)] if handle else []
    if mode == "collective":
        most = comm.allreduce(len(calls), op=MPI.MAX)
        empty = handle.prepare_empty()
        calls += [empty] * (most - len(calls))
    limit_s = ctx[C.LIMIT_S]
    before = pagecache.io_counters()
    comm.Barrier()
    t0 = time.perf_counter_ns()
    if limit_s is None:
        results = [call() for call in calls]
    else:
        results = _until_deadline(calls, t0 + int(limit_s * 1e9), comm if mode == "collective" else None)
    if handle is not None and operation == "write":
        handle.close()  # flush, close and fsync: inside the clock
    own = (time.perf_counter_ns() - t0) / 1e9
    comm.Barrier()
    elapsed = (time.perf_counter_ns() - t0) / 1e9
    io = pagecache.io_counters() - before
    if handle is not None and operation == "read":
        handle.close()
    done = min(len(results), len(regions))  # this rank's accesses made before any stop
    stopped = bool(comm.allreduce(len(results) < len(calls), op=MPI.LOR))
    seconds = comm.allreduce(elapsed, op=MPI.MAX)
    fastest = comm.allreduce(own if taking_part else np.inf, op=MPI.MIN)
    device_read = comm.allreduce(max(io.device_read, 0), op=MPI.SUM)
    units_done = comm.allreduce(sum(count for _, count in mine[:done]), op=MPI.SUM)
    # checked after the clock: what was read, or what the write left in the store (read back
    # by every rank, each its own accesses); a stopped pass, the accesses it made
    regions, buffers = regions[:done], buffers[:done]
    if operation == "read":
        found = [b if value is None else np.asarray(value) for b, value in zip(buffers, results, strict=False)]
    else:
        comm.Barrier()
        found = _read_back(backend.open_pass(target, ctx["name"], "independent", comm, option), regions, buffers)
    problems = []
    for i, (r, values) in enumerate(zip(regions, found, strict=True)):
        expected = source.region(r) if operation == "read" else buffers[i]
        bad = int(np.count_nonzero(values != expected))
        if bad:
            start, count = mine[i]
            problems.append(
                f"{ctx['path']}: rank {rank}, mode {mode}, {operation} access {i} ({ctx[PC.UNITS_COLUMN]} "
                f"{start}-{start + count - 1}, {k} per access, {processes} processes, repeat {repeat}): "
                f"{bad} values differ from the data source"
            )
    _check(comm, problems)
    if operation == "write":
        comm.Barrier()
        if rank == 0 and os.path.lexists(target):
            backend.remove(target)
    if rank != 0:
        return None
    raw = int(np.prod(shape)) * dtype.itemsize
    return {
        C.CASE: "parallel",
        PC.OPERATION: operation,
        PC.MODE: mode,
        PC.PROCESSES: processes,
        PC.UNITS_COLUMN: ctx[PC.UNITS_COLUMN],
        PC.UNITS_PER_ACCESS: k,
        PC.REMAINDER_RANK: remainder_rank(mode, ctx["remainder"], size) if mode != "serial" else 0,
        PC.ACCESSES: len(accesses(shape[axis], k)),
        PC.UNITS_ACCESSED: units_done,
        C.REPEAT: repeat,
        C.SELECTION: "whole dataset",
        C.BYTES_SELECTED: raw,
        C.SECONDS: seconds,
        C.STOPPED: stopped,
        C.LIMIT_S: float("nan") if limit_s is None else float(limit_s),
        PC.BYTES_PER_S: float("nan") if stopped else raw / seconds,
        PC.FASTEST_RANK_S: fastest,
        C.DEVICE_READ_BYTES: device_read,
        C.RESIDENT_FRACTION_BEFORE_EVICT: resident_before,
        PC.RANK_NODES: ctx["nodes"],
        PC.TASKS_PER_NODE: ctx[PC.TASKS_PER_NODE],
        PC.MPI_HINTS: hints_words(hints),
        PC.MPI_HINTS_IN_EFFECT: hints_words({key: in_effect[key] for key in hints if key in in_effect}),
        SC.VERIFIED: True,
        PC.MPI_LIBRARY: MPI.Get_library_version().splitlines()[0].strip(),
        **option.columns(),
        **ctx["versions"],
    }


def _until_deadline(calls, deadline_ns: int, comm=None) -> list:
    """Make the calls in order until the clock passes the deadline (the pass's ``limit_s``
    after its start); their results. ``comm``: in collective mode the ranks agree after each
    call whether any is past it, so that all stop at the same collective call."""
    from mpi4py import MPI

    results = []
    for call in calls:
        results.append(call())
        late = time.perf_counter_ns() > deadline_ns
        if comm is not None:
            late = comm.allreduce(late, op=MPI.LOR)
        if late:
            break
    return results


def _read_back(handle, regions, written) -> list[np.ndarray]:
    """What a store holds in each region (after a write pass), through a rank's own handle."""
    found = []
    for r, values in zip(regions, written, strict=True):
        out = np.empty_like(values)
        value = handle.prepare(r, out)()
        found.append(out if value is None else np.asarray(value))
    handle.close()
    return found
