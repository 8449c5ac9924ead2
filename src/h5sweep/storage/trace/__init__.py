"""Record the reads a Python program makes through h5py or zarr-python, to replay them on every
layout (``cases.trace``).

As a context manager::

    from h5sweep.storage.trace import record
    with record("reads.jsonl"):
        my_analysis()

or around a whole program: ``h5sweep trace run -o reads.jsonl -- python my_analysis.py`` (the long
form: ``python -m h5sweep.storage.trace run ...``).

The recording is JSON lines. The first line is a header::

    {"h5sweep_trace": 1, "program": [...], "started": "2026-11-26T03:00:00+00:00"}

Then one line per read, in the order the program made them (several processes of one program
append their own lines; ``pid`` tells them apart)::

    {"read": 0, "pid": 4242, "t": 0.0132, "seconds": 0.0009, "library": "h5py",
     "file": "/data/run.h5", "dataset": "/data", "shape": [100, 100, 2000], "dtype": "uint16",
     "selection": [[0, 100], [0, 100], [512, 537]], "index": "(slice(None, None, None), ...)"}

``t`` is when the read started, in seconds since the recording started; ``seconds`` how long
the library call took in the program; ``selection`` the box it read, ``[start, stop)`` per
axis (an integer index is a box of 1 along its axis; a missing trailing axis is whole).
A selection that is not a box (a step other than 1, a list or mask of indices) is recorded with
``selection: null`` and its ``index``: a replay refuses it, naming the read.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import json
import os
import threading
import time
from pathlib import Path

FORMAT = 1
ENVIRONMENT = "H5SWEEP_TRACE"  # the recording a traced program appends to (``run``)


def box_of(key, shape: tuple[int, ...]) -> list[list[int]] | None:
    """The box ``[[start, stop), ...]`` an index selects in an array of ``shape``, or None where
    the index is not a box (steps, lists, masks, new axes)."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = len(shape) - (len(key) - 1)
        key = key[:at] + (slice(None),) * fill + key[at + 1 :]
    if len(key) > len(shape):
        return None
    key = key + (slice(None),) * (len(shape) - len(key))
    box = []
    for k, n in zip(key, shape, strict=True):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step != 1:
                return None
            box.append([start, max(start, stop)])
        elif isinstance(k, int) or (hasattr(k, "__index__") and not hasattr(k, "__len__")):
            i = int(k)
            i = i + n if i < 0 else i
            if not 0 <= i < n:
                return None
            box.append([i, i + 1])
        else:
            return None
    return box


class Recorder:
    """Records the reads of h5py datasets and zarr-python arrays while started: patches their
    ``__getitem__`` (and h5py's ``read_direct``), appends a line per read to ``path``."""

    def __init__(self, path: str | os.PathLike, header: bool = True, program: list[str] | None = None):
        self.path = Path(path)
        self.header, self.program = header, program
        self.lock, self.local = threading.Lock(), threading.local()
        self.reads, self.started, self.patched, self.file = 0, 0.0, [], None

    def start(self) -> Recorder:
        self.started = time.perf_counter()
        self.file = open(self.path, "w" if self.header else "a", encoding="utf-8")  # noqa: SIM115
        if self.header:
            when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
            self._write({"h5sweep_trace": FORMAT, "program": self.program or [], "started": when})
        self._patch_h5py()
        self._patch_zarr()
        return self

    def stop(self) -> None:
        for owner, name, original in reversed(self.patched):
            setattr(owner, name, original)
        self.patched.clear()
        if self.file is not None:
            self.file.close()
            self.file = None

    def _write(self, entry: dict) -> None:
        with self.lock:
            self.file.write(json.dumps(entry) + "\n")
            self.file.flush()

    def _recorded(self, library: str, file: str, dataset: str, shape, dtype, key, call):
        if getattr(self.local, "inside", False):  # a read the library makes inside another
            return call()
        self.local.inside = True
        t0 = time.perf_counter()
        try:
            return call()
        finally:
            seconds = time.perf_counter() - t0
            self.local.inside = False
            with self.lock:
                number, self.reads = self.reads, self.reads + 1
            self._write(
                {
                    "read": number,
                    "pid": os.getpid(),
                    "t": round(t0 - self.started, 9),
                    "seconds": round(seconds, 9),
                    "library": library,
                    "file": os.path.abspath(file),
                    "dataset": dataset,
                    "shape": [int(n) for n in shape],
                    "dtype": str(dtype),
                    "selection": box_of(key, tuple(int(n) for n in shape)),
                    "index": repr(key),
                }
            )

    def _patch(self, owner, name: str, wrapper) -> None:
        original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        self.patched.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def _patch_h5py(self) -> None:
        try:
            import h5py
        except ImportError:
            return
        recorder = self

        def getitem(original):
            def __getitem__(dset, args, *rest, **kwargs):
                return recorder._recorded(
                    "h5py", dset.file.filename, dset.name, dset.shape, dset.dtype, args,
                    lambda: original(dset, args, *rest, **kwargs),
                )  # fmt: skip

            return __getitem__

        def read_direct(original):
            def read_direct(dset, dest, source_sel=None, dest_sel=None):
                key = source_sel if source_sel is not None else (slice(None),) * len(dset.shape)
                return recorder._recorded(
                    "h5py", dset.file.filename, dset.name, dset.shape, dset.dtype, key,
                    lambda: original(dset, dest, source_sel, dest_sel),
                )  # fmt: skip

            return read_direct

        self._patch(h5py.Dataset, "__getitem__", getitem)
        self._patch(h5py.Dataset, "read_direct", read_direct)

    def _patch_zarr(self) -> None:
        try:
            import zarr
        except ImportError:
            return
        recorder = self

        def getitem(original):
            def __getitem__(array, selection):
                root = getattr(array.store, "root", None)
                return recorder._recorded(
                    "zarr-python", str(root if root is not None else array.store), "/" + array.path, array.shape,
                    array.dtype, selection, lambda: original(array, selection),
                )  # fmt: skip

            return __getitem__

        self._patch(zarr.Array, "__getitem__", getitem)


@contextlib.contextmanager
def record(path: str | os.PathLike):
    """Record every h5py and zarr-python read made inside the block to ``path``."""
    recorder = Recorder(path).start()
    try:
        yield recorder
    finally:
        recorder.stop()


def start_from_environment() -> Recorder | None:
    """In a program started by ``python -m h5sweep.storage.trace run``: append its reads to the
    recording the environment names, until the program exits."""
    path = os.environ.get(ENVIRONMENT)
    if not path:
        return None
    recorder = Recorder(path, header=False).start()
    atexit.register(recorder.stop)
    return recorder


def load(path: str | os.PathLike) -> list[dict]:
    """The reads of a recording, in the order they were made (by ``t``, then by process)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or json.loads(lines[0]).get("h5sweep_trace") != FORMAT:
        raise ValueError(f"{path}: not an h5sweep recording (its first line is not the header)")
    reads = [json.loads(line) for line in lines[1:] if line.strip()]
    return sorted(reads, key=lambda r: (r["t"], r["pid"], r["read"]))
