"""The workflow's stages as plain functions: what each ``workflow/scripts/*.py`` calls.

Each takes the raw config dict (as Snakemake holds it) and the job's wildcards and paths.
"""

from __future__ import annotations

import os

from h5sweep.compression import parse_compression
from h5sweep.config import validate_schema
from h5sweep.datasources import make_source
from h5sweep.generate import generate
from h5sweep.grid import Sweep
from h5sweep.layouts import Layout
from h5sweep.provenance import provenance
from h5sweep.query import run_queries
from h5sweep.records import write_table
from h5sweep.windows import untimed_work


def _sweep(config: dict) -> Sweep:
    return Sweep.from_config(validate_schema(config))


def _file_columns(sweep: Sweep, filesystem: str, layout: Layout, compression: str) -> dict:
    return {
        "sweep": sweep.name,
        "filesystem": filesystem,
        "layout": layout.kind,
        "chunk_shape": layout.chunk_label,
        "layout_id": layout.id,
        "layout_name": layout.name,
        "order": layout.order,
        "compression": compression,
        "dataset_shape": "x".join(map(str, sweep.shape)),
        "dtype": sweep.dtype.name,
        "fill": sweep.fill,
        "seed": int(sweep.dataset["seed"]),
        "raw_bytes": sweep.raw_bytes,
        "n_chunks": layout.n_chunks(sweep.shape),
        "padding_bytes": layout.padding_bytes(sweep.shape, sweep.dtype.itemsize),
    }


def _shared_columns(sweep: Sweep, filesystem: str, layout: Layout, compression: str) -> dict:
    """The file's columns and the provenance, common to every row a job writes."""
    directory = sweep.filesystem(filesystem).directory
    return {**_file_columns(sweep, filesystem, layout, compression), **provenance(directory, sweep.hash)}


def run_generate(
    config: dict, filesystem: str, layout_id: str, compression: str, h5_path: str, record: str, threads: int = 1
) -> None:
    """Generate one test file (the write case) and record its timings."""
    sweep = _sweep(config)
    layout, comp = sweep.layout(layout_id), parse_compression(compression)
    with untimed_work():
        data = make_source(sweep.dataset, layout).materialize()
    rows = generate(
        h5_path, data, layout, comp, sweep.write_case, sweep.dataset["name"], threads, sweep.chunk_caches[0]
    )
    shared = _shared_columns(sweep, filesystem, layout, comp.name)
    full = "[" + ", ".join(f"0:{n}" for n in sweep.shape) + "]"
    for row in rows:
        row.update(shared)
        row.update(
            case="write",
            selection=full,
            bytes_selected=sweep.raw_bytes,
            chunks_touched=layout.n_chunks(sweep.shape),
        )
    write_table(rows, record)


def _measure_file(config: dict, filesystem: str, layout_id: str, compression: str, h5_path: str, record: str, measure):
    """Run ``measure(sweep, layout, source)`` on one test file; record its rows with the
    file's columns and the provenance."""
    sweep = _sweep(config)
    layout = sweep.layout(layout_id)
    rows = measure(sweep, layout, make_source(sweep.dataset, layout))
    shared = {**_shared_columns(sweep, filesystem, layout, compression), "file_bytes": os.stat(h5_path).st_size}
    for row in rows:
        row.update(shared)
    write_table(rows, record)


def run_query(config: dict, filesystem: str, layout_id: str, compression: str, h5_path: str, record: str) -> None:
    """Time every read case on one test file and record one row per selection."""

    def measure(sweep, layout, source):
        return run_queries(
            h5_path,
            sweep.read_cases,
            sweep.shape,
            int(sweep.dataset["seed"]),
            source,
            layout,
            caches=sweep.chunk_caches,
            policies=sweep.policies,
            dataset_name=sweep.dataset["name"],
        )

    _measure_file(config, filesystem, layout_id, compression, h5_path, record, measure)


def run_scale(config: dict, filesystem: str, layout_id: str, compression: str, h5_path: str, record: str) -> None:
    """The local parallel scaling case on one test file."""
    from h5sweep.scaling import run_scaling

    def measure(sweep, layout, source):
        seed = int(sweep.dataset["seed"])
        cache, name = sweep.chunk_caches[0], sweep.dataset["name"]
        return run_scaling(h5_path, sweep.scaling, sweep.shape, seed, source, cache, name, layout)

    _measure_file(config, filesystem, layout_id, compression, h5_path, record, measure)


def run_metadata_case(config: dict, filesystem: str, record: str) -> None:
    """Metadata overhead on one filesystem: N small datasets against one."""
    from h5sweep.metadata import run_metadata

    _measure_filesystem(config, filesystem, record, "metadata", lambda sweep: sweep.metadata, run_metadata)


def run_iosize_case(config: dict, filesystem: str, record: str) -> None:
    """Throughput against request size on one filesystem, HDF5 and raw binary."""
    from h5sweep.iosize import run_iosize

    _measure_filesystem(config, filesystem, record, "iosize", lambda sweep: sweep.iosize, run_iosize)


def _measure_filesystem(config: dict, filesystem: str, record: str, name: str, case_of, measure) -> None:
    """Run a once-per-filesystem case in ``<filesystem dir>/<sweep>/<name>`` and record it."""
    sweep = _sweep(config)
    layout = Layout(None)
    fs = sweep.filesystem(filesystem)
    with untimed_work():
        data = make_source(sweep.dataset, layout).materialize()
    rows = measure(os.path.join(fs.directory, sweep.name, name), case_of(sweep), data)
    shared = _shared_columns(sweep, filesystem, layout, "none")
    for row in rows:
        row.update(shared)
    write_table(rows, record)
