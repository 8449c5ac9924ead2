"""Write an HDF5 file of the shape and type a config's dataset names, filled with h5sweep's
synthetic values block by block (never the whole array in memory): a stand-in for your own
file, so that an example's analysis can be run and recorded.

    python examples/make_data.py examples/climate/config.yaml data/climate.h5
    python examples/make_data.py examples/climate/config.yaml data/climate.h5 --shape-only

``--shape-only`` writes no values (the dataset is left unallocated: it reads as zeros and the
file is a few kB): enough to record a program whose reads depend on the array's shape alone,
as the examples' programs do (their shipped recordings were made this way).
"""

from __future__ import annotations

import sys

import h5py
import numpy as np
import yaml

from h5sweep.storage.datasources import make_source
from h5sweep.storage.layouts import Layout
from h5sweep.sweep.model import with_axes

BLOCK_BYTES = 256 * 2**20


def main(config_path: str, out: str, name: str = "data", shape_only: bool = False) -> None:
    with open(config_path, encoding="utf-8") as f:
        dataset = with_axes(yaml.safe_load(f))["dataset"]
    dataset = {"seed": 0, **dataset, "fill": "synthetic"}
    shape, dtype = tuple(dataset["shape"]), np.dtype(dataset["dtype"])
    source = make_source(dataset, Layout(None))
    per_row = int(np.prod(shape[1:])) * dtype.itemsize
    step = max(1, BLOCK_BYTES // per_row)
    with h5py.File(out, "w") as f:
        target = f.create_dataset(name, shape=shape, dtype=dtype)
        if shape_only:
            print(f"{out}: {name} {shape} {dtype}, no values written")
            return
        for start in range(0, shape[0], step):
            block = (slice(start, min(shape[0], start + step)),) + tuple(slice(0, n) for n in shape[1:])
            target[block] = source.region(block)
    print(f"{out}: {name} {shape} {dtype}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--shape-only"]
    main(*args, shape_only="--shape-only" in sys.argv[1:])
