"""The bench's yardstick: a careful serial loop over the default sweep's grid, as a one-off
script would measure it. The array is made once; each store is written once with h5py, chunk
by chunk (a contiguous one in one call), and fsynced; then the same seeded selections h5sweep
reads are read store after store, each a first access (the file's pages dropped, the file
opened, read, closed), timed with ``perf_counter`` around ``dset[...]``. No measurement lock,
no interleaving, no intervals, no checks. Its verdict per filesystem, read case and
compression is the layout of the lowest median time."""

from __future__ import annotations

import itertools
import os
import shutil
import statistics
import time
from pathlib import Path

import h5py
import numpy as np
import yaml

from h5sweep.storage.datasources import make_source
from h5sweep.sweep.model import load_sweep


def _drop(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _write(path: str, data: np.ndarray, kwargs: dict) -> None:
    """The store: chunk by chunk where it is chunked, then flushed to the device."""
    with h5py.File(path, "w") as f:
        if "chunks" not in kwargs:
            f.create_dataset("data", data=data)
        else:
            dset = f.create_dataset("data", shape=data.shape, dtype=data.dtype, **kwargs)
            steps = [range(0, n, c) for n, c in zip(data.shape, kwargs["chunks"], strict=True)]
            for corner in itertools.product(*steps):
                region = tuple(slice(i, i + c) for i, c in zip(corner, kwargs["chunks"], strict=True))
                dset[region] = data[region]
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def naive_loop(config_path: Path, workdir: Path) -> dict:
    """One run of the loop over ``config_path``'s grid (filesystems under ``workdir``, or the
    config's absolute paths with a suffix); its wall time and its medians per group."""
    config = yaml.safe_load(config_path.read_text())
    for name, entry in list(config["filesystems"].items()):
        path = entry if isinstance(entry, str) else entry["path"]
        path = str(workdir / path) if not os.path.isabs(path) else f"{path}-naive"
        config["filesystems"][name] = {"path": path, "required": False} if not isinstance(entry, str) else path
    t0 = time.perf_counter()
    sweep = load_sweep(config)
    data = make_source(sweep.dataset, sweep.layouts[0]).materialize()
    medians: dict[str, dict[str, float]] = {}
    for store in sweep.stores():
        fs, layout, comp = store.filesystem, store.layout, store.compression
        os.makedirs(fs.directory, exist_ok=True)
        path = os.path.join(fs.directory, f"{layout.id}-{comp.name}.h5")
        kwargs = {}
        if layout.chunk_shape is not None:
            kwargs["chunks"] = layout.chunk_shape
            if comp.family == "gzip":
                kwargs.update(compression="gzip", compression_opts=comp.level)
        _write(path, data, kwargs)
        for case in sweep.read_cases:
            times = []
            for selection in case.selections(sweep.shape, int(sweep.dataset["seed"])):
                _drop(path)
                with h5py.File(path, "r") as f:
                    start = time.perf_counter()
                    f["data"][selection.region]
                    times.append(time.perf_counter() - start)
            key = f"{fs.name} / {case.name} / {comp.name}"
            medians.setdefault(key, {})[layout.id] = statistics.median(times)
        os.remove(path)
    for fs in sweep.filesystems:
        shutil.rmtree(fs.directory, ignore_errors=True)
    # the contiguous baseline belongs to every compression's group, as in h5sweep's groups
    for key in medians:
        fs, case, comp = key.split(" / ")
        if comp != "none":
            medians[key].update({k: v for k, v in medians[f"{fs} / {case} / none"].items() if k == "contiguous"})
    return {"wall_s": time.perf_counter() - t0, "medians": medians}


def loops_agree(*runs: dict) -> dict:
    """Does the loop reproduce its own verdict? Per group, the same best layout in every run,
    and the lowest Spearman correlation of the layouts' medians between one run and the next."""
    from h5sweep.measure.stats import spearman

    groups = sorted(set.intersection(*(set(run["medians"]) for run in runs)))
    same, rhos = 0, []
    for key in groups:
        medians = [run["medians"][key] for run in runs]
        common = sorted(set.intersection(*(set(m) for m in medians)))
        same += len({min(common, key=m.get) for m in medians}) == 1
        if len(common) > 2:
            for x, y in zip(medians, medians[1:], strict=False):
                rhos.append(spearman(np.array([x[k] for k in common]), np.array([y[k] for k in common])))
    return {
        "groups": len(groups),
        "share_groups_best_agree": same / len(groups) if groups else float("nan"),
        "min_spearman": min(rhos) if rhos else float("nan"),
    }
