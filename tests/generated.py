"""Configs nobody on the team wrote: a seeded generator of sweep configs that covers every
key of ``config/schema.yaml`` and every class of combination (backends with and without the
contiguous layout; chunk grids, named shapes, shards, orders, h5py's own chunking; every codec
family on the dtypes it accepts, plugins and lossy ones included; any subset of read cases,
none or one included; cold modes, chunk caches, policies, Zarr readers; 2-D and 3-D datasets of
every dtype; filesystems optional or required; ``recommend`` weights that name a case that was
not run), and mutations of valid configs. ``config(seed)`` is the config of one seed: a failing
test prints the seed that reproduces it."""

from __future__ import annotations

import random
from pathlib import Path

DTYPES = ["uint8", "uint16", "int16", "int32", "float32", "float64"]
INTEGER_CODECS = ["scaleoffset-0", "nbit"]
FLOAT_CODECS = ["sz3-abs-0.01", "zfp-rate-16"]
ANY_CODECS = [
    "gzip-1",
    "shuffle+gzip-4",
    "lzf",
    "shuffle+lzf",
    "szip-nn-8",
    "blosc-lz4-5-shuffle",
    "blosc-zstd-3-bitshuffle",
    "blosc2-blosclz-5",
    "zstd-3",
    "lz4",
    "bitshuffle-lz4",
    "bzip2-2",
]
READ_CASES_3D = ["slice", "spectra", "subcube", "whole"]
READ_CASES_2D = ["rows", "column", "whole"]


def _subset(rng: random.Random, items: list, at_least: int = 0) -> list:
    count = rng.randint(at_least, len(items))
    return rng.sample(items, count)


def _read_case(rng: random.Random, name: str, shape: list[int]) -> dict:
    entry: dict = {"repeats": rng.randint(2, 4)}
    if name == "slice":
        entry["depth"] = rng.randint(1, max(1, shape[2] // 4))
    elif name == "spectra":
        entry["size"] = rng.randint(1, min(shape[0], shape[1]))
    elif name == "subcube":
        entry["size"] = [rng.randint(1, shape[0]), rng.randint(1, shape[1]), rng.randint(1, shape[2])]
    elif name == "rows":
        entry["size"] = rng.randint(1, shape[0])
    elif name == "column":
        entry["size"] = rng.randint(1, shape[1])
    if rng.random() < 0.4:
        entry["cold"] = rng.choice(["first", "every", ["first", "every"]])
    return entry


def config(seed: int, root: Path) -> dict:
    """A sweep config drawn from ``seed`` (small: seconds to run), its filesystems under ``root``."""
    rng = random.Random(seed)
    rank = rng.choice([2, 3])
    dtype = rng.choice(DTYPES)
    shape = (
        [rng.randint(4, 10), rng.randint(4, 10), rng.choice([64, 128, 200])]
        if rank == 3
        else [rng.randint(64, 256), rng.randint(8, 32)]
    )
    backends = ["hdf5"] + _subset(rng, ["zarr", "raw"])
    rng.shuffle(backends)
    contiguous = rng.random() < 0.6
    layouts: dict = {"contiguous": contiguous}
    shapes = []
    for i in range(rng.randint(0 if contiguous else 1, 2)):
        shapes.append({"name": f"s{i}", "chunk": [rng.randint(1, n) for n in shape]})
    layouts["shapes"] = shapes
    if rank == 3 and rng.random() < 0.5:
        layouts["chunks"] = {"xy": _subset(rng, [2, 4], 1), "z": _subset(rng, [16, 32, 64], 1)}
    if rank == 3 and rng.random() < 0.2:
        layouts["orders"] = ["xyz", "zxy"]
    if rng.random() < 0.2:
        layouts["auto"] = True
    if "zarr" in backends and rng.random() < 0.4:
        chunk = [max(1, n // 4) for n in shape]
        layouts["shards"] = [{"chunk": chunk, "shard": [2 * c for c in chunk]}]
    if rng.random() < 0.2 and (shapes or contiguous):
        layouts["reference"] = rng.choice(([s["name"] for s in shapes]) + (["contiguous"] if contiguous else []))
    is_float = dtype.startswith("float")
    codecs = ANY_CODECS + (FLOAT_CODECS if is_float else INTEGER_CODECS)
    compression = ["none"] * (rng.random() < 0.7) + _subset(rng, codecs)[: rng.randint(0, 3)]
    if not compression:
        compression = [rng.choice(codecs)]
    names = READ_CASES_3D if rank == 3 else READ_CASES_2D
    chosen = _subset(rng, names)[: rng.randint(0, len(names))]
    cases: dict = {name: _read_case(rng, name, shape) for name in chosen}
    if rng.random() < 0.8:
        write: dict = {"repeats": rng.randint(1, 2)}
        if rank == 3 and rng.random() < 0.3:
            write["strategies"] = _subset(rng, ["chunk", "spectrum", "block"], 1)
        cases["write"] = write
    out: dict = {
        "sweep": f"gen{seed}",
        "dataset": {"shape": shape, "dtype": dtype, "fill": rng.choice(["synthetic", "chunk-index"]), "seed": seed},
        "backends": backends,
        "layouts": layouts,
        "compression": compression,
        "filesystems": {"disk": str(root / "disk")},
        "cases": cases,
    }
    if rng.random() < 0.3:
        out["filesystems"]["shm"] = {"path": f"/dev/shm/h5sweep-gen-{seed}", "required": rng.random() < 0.5}
    if rng.random() < 0.3:
        out["policies"] = _subset(rng, ["random", "aligned", "localized", "sweep"], 1)
    if rng.random() < 0.3:
        out["chunk_cache"] = [{"bytes": rng.choice([0, 1 << 20, 16 << 20]), "slots": 521, "w0": 0.75}]
    if "zarr" in backends and rng.random() < 0.3:
        out["zarr"] = {"readers": _subset(rng, ["zarr-python", "tensorstore"], 1)}
    if rng.random() < 0.3:
        weighted = rng.sample(names, rng.randint(1, len(names)))  # may name a case not run
        out["recommend"] = {"weights": {name: rng.randint(1, 3) for name in weighted}}
    if rng.random() < 0.2:
        out["recommend"] = {**out.get("recommend", {}), "statistic": "sustained"}
    if "write" in cases and rng.random() < 0.2:  # drawn last: the draws above keep their seeds' values
        cases["write"]["limit_s"] = rng.choice([1e-6, 60])  # every write stopped, or none
    return out


def mutations(valid: dict, seed: int) -> list[tuple[str, dict]]:
    """Invalid variants of a valid config, each with the key its refusal must name."""
    import copy

    rng = random.Random(seed)
    out = []
    wrong_type = copy.deepcopy(valid)
    wrong_type["dataset"]["shape"] = "big"
    out.append(("dataset.shape", wrong_type))
    out_of_range = copy.deepcopy(valid)
    out_of_range["compression"] = ["gzip-" + str(rng.randint(10, 99))]
    out.append(("compression[0]", out_of_range))
    unknown = copy.deepcopy(valid)
    unknown["layouts"]["chunkz"] = {}
    out.append(("layouts", unknown))
    negative = copy.deepcopy(valid)
    negative["cases"]["write"] = {"repeats": -rng.randint(1, 5)}
    out.append(("cases.write.repeats", negative))
    return out
