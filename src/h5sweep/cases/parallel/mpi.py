"""The MPI program: one run per process count, every rank runs :func:`run`; the passes it
has finished kept in a :class:`Checkpoint` across attempts of the job."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from pathlib import Path

import numpy as np

from h5sweep.cases.parallel import columns as PC
from h5sweep.cases.parallel.core import UNITS
from h5sweep.cases.parallel.passes import one_pass
from h5sweep.measure import lock, pagecache
from h5sweep.storage import columns as C
from h5sweep.storage.layouts import Layout


def planned(settings: dict, size: int, first_run: bool) -> list[tuple[str, tuple]]:
    """The passes of one MPI run of ``size`` ranks, in the order they run (repeats outermost,
    then read options, operations, k and modes; serial passes only in the ``first_run``):
    ``(key, (repeat, option, operation, k, mode))``. A key names a pass across attempts of the
    job, so that a rerun skips the passes a killed attempt finished."""
    modes = [m for m in settings["modes"] if m != "serial" or first_run]
    ks = settings[PC.UNITS_PER_ACCESS]  # per operation, or one list for both
    per_operation = ks if isinstance(ks, dict) else {op: ks for op in settings["operations"]}
    options = max(1, len(settings["read_options"]))
    passes = []
    for repeat in range(int(settings["repeats"])):
        for option in range(options):
            for operation in settings["operations"]:
                for k in per_operation[operation]:
                    for mode in modes:
                        passes.append(
                            (
                                pass_key(size, option, operation, int(k), mode, repeat),
                                (repeat, option, operation, int(k), mode),
                            )
                        )
    return passes


def pass_key(size: int, option: int, operation: str, k: int, mode: str, repeat: int | None = None) -> str:
    """A pass's key; without ``repeat``, its variant's (every repeat of it)."""
    variant = f"{size}|{option}|{operation}|{k}|{mode}"
    return variant if repeat is None else f"{variant}|{repeat}"


def run(settings: dict, path: str, comm, first_run: bool = True) -> list[dict]:
    """Every operation, k and mode of the settings on one store, with the communicator's size
    as the process count (serial passes only in the ``first_run``); rows on rank 0.

    With ``settings["checkpoint"]``, rank 0 appends each pass's row to that file as the pass
    ends (:class:`Checkpoint`), and the passes it already holds (``settings["done"]``) are
    skipped. A pass stopped at ``limit_s`` stops its variant: its later repeats are not run."""
    from mpi4py import MPI

    from h5sweep import backends
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.datasources import make_source

    backend = backends.load(settings["backend"])
    spec = backends.spec(settings["backend"])
    dataset = settings["dataset"]
    layout = Layout.from_id(settings["layout"]["id"])
    ctx = {
        "comm": comm,
        C.BACKEND: backend,
        "path": path,
        "name": dataset["name"],
        "dataset": dataset,
        "shape": tuple(int(n) for n in dataset["shape"]),
        "axis": UNITS[settings[PC.UNITS_COLUMN]][1],
        PC.UNITS_COLUMN: settings[PC.UNITS_COLUMN],
        "remainder": settings["remainder"],
        C.LAYOUT: layout,
        C.COMPRESSION: parse_compression(settings["compression"]),
        "source": make_source(dataset, layout),
        "nodes": len(set(comm.allgather(MPI.Get_processor_name()))),
        "versions": backend.versions(),
        C.LIMIT_S: settings.get("limit_s"),
        "hints": settings.get("hints") or {},
        PC.TASKS_PER_NODE: settings.get(PC.TASKS_PER_NODE),
    }
    options = [spec.option_from_settings(o) for o in settings["read_options"]] or [backend.default_read_option]
    size = comm.Get_size()
    done, stopped = set(settings.get("done", [])), set(settings.get("stopped", []))
    todo = [(key, p) for key, p in planned(settings, size, first_run) if key not in done]
    # untimed: one rank per node reads the store into its page cache, so that the first
    # eviction frees the store's own pages just before the first read, as later ones do
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    if node.Get_rank() == 0 and any(p[2] == "read" for _, p in todo):
        pagecache.prime(backend.paths_to_evict(path))
    node.Free()
    comm.Barrier()
    window = json.loads(os.environ.get("H5SWEEP_WINDOW", "{}"))  # the runner's timed window, as it opened
    checkpoint = settings.get("checkpoint")
    rows = []
    for key, (repeat, option, operation, k, mode) in todo:
        variant = pass_key(size, option, operation, k, mode)
        if variant in stopped:
            continue
        row = one_pass(ctx, operation, mode, k, options[option], repeat)
        if row is not None and not _runner_alive():
            # the job that holds the node's timed window is gone (killed): a pass from now on
            # would not be exclusive, and this one ended after it; neither is recorded
            comm.Abort(1)
        if row is not None:
            row.update(window)
            rows.append(row)
            if checkpoint:
                Checkpoint.append(checkpoint, {"pass": key, "row": row})
        if row is not None and row[C.STOPPED]:
            stopped.add(variant)
        stopped = set(comm.bcast(sorted(stopped), root=0))
    return rows


def _runner_alive() -> bool:
    """Whether the job that started this MPI run is still running (where it runs on this
    node: ``H5SWEEP_RUNNER`` is its host and process id)."""
    host, _, pid = os.environ.get("H5SWEEP_RUNNER", "").rpartition(":")
    if not pid or host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _die_with_parent() -> None:
    """On Linux, end this rank when the process that started it (mpirun, or srun's step
    daemon) ends, as a killed job's ranks should; and at once if it has already ended."""
    import ctypes
    import signal

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


class Checkpoint:
    """The passes a job has finished, kept beside its record until the record is written, so
    that a killed job (its allocation's time limit, a node failure) loses at most the pass it
    was in: a JSON line per finished pass (``{"pass": key, "row": ...}``), and one per MPI run
    that ended (``{"window": ...}``: its timed window's columns). The first line is the
    fingerprint of the job's settings; a checkpoint of other settings is started afresh."""

    def __init__(self, path: str, fingerprint: str):
        self.path, self.fingerprint = path, fingerprint
        self.passes: dict[str, dict] = {}
        self.windows: dict[float, dict] = {}
        lines = Path(path).read_text(encoding="utf-8").splitlines() if os.path.exists(path) else []
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:  # the line a kill cut short
                break
        if not entries or entries[0].get("fingerprint") != fingerprint:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps({"fingerprint": fingerprint}) + "\n", encoding="utf-8")
            entries = []
        for entry in entries[1:]:
            if "pass" in entry:
                self.passes[entry["pass"]] = entry["row"]
            elif "window" in entry:
                self.windows[entry["window"][lock.WINDOW_OPENED_AT]] = entry["window"]
        if entries and len(entries) < len(lines):  # drop the cut line before appending
            Path(path).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")

    @staticmethod
    def append(path: str, entry: dict) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, default=_plain) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def stopped_variants(self) -> list[str]:
        return sorted({key.rsplit("|", 1)[0] for key, row in self.passes.items() if row.get(C.STOPPED)})

    def rows(self) -> list[dict]:
        """Every finished pass's row, with its MPI run's window where that run ended (a killed
        run's window has no closing time)."""
        return [{**row, **self.windows.get(row.get(lock.WINDOW_OPENED_AT), {})} for row in self.passes.values()]


def _plain(value):
    """JSON for what a row holds beyond Python's own types: NumPy scalars."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} in a row")


def main(argv: list[str]) -> int:
    from mpi4py import MPI

    from h5sweep.measure.records import write_table

    _die_with_parent()
    first = "--first" in argv
    settings_path, store, record = [a for a in argv if a != "--first"]
    with open(settings_path, encoding="utf-8") as f:
        settings = json.load(f)
    rows = run(settings, store, MPI.COMM_WORLD, first_run=first)
    if MPI.COMM_WORLD.Get_rank() == 0:
        write_table(rows, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
