# Config loading, validation and grid expansion. Everything the rules need comes from
# SWEEP, the validated and expanded config (see h5sweep.grid.Sweep).

import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from h5sweep.config import load_schema, validate_schema
from h5sweep.errors import ConfigError
from h5sweep.grid import Sweep
from h5sweep.layouts import Layout
from h5sweep.compression import parse_compression
from h5sweep import plan, resources


def load_sweep(config):
    """Check the config before any job is planned; refuse it with the key and value."""
    try:
        schema = load_schema(workflow.source_path("../config/schema.yaml"))
        checked = validate_schema(config, schema)
        sweep = Sweep.from_config(checked)
    except ConfigError as err:
        raise WorkflowError(f"h5sweep: invalid config: {err}") from None
    config.update(checked)  # jobs see the defaults too
    return sweep


def parallel_jobs():
    """How many jobs can run at once: local cores, or the cluster's job limit."""
    if workflow.local_exec:
        return workflow._cores or os.cpu_count() or 1
    return workflow.nodes or 1


def check_plan(sweep):
    """Say what the sweep will cost; refuse one whose test files cannot fit on a disk."""
    the_plan = plan.make_plan(sweep, parallel_jobs())
    logger.info(the_plan.describe())
    short = [fs for fs in the_plan.filesystems if not fs.fits]
    if short and config.get("check_disk", True):
        fs = short[0]
        raise WorkflowError(
            f"h5sweep: not enough disk on filesystem {fs.name} ({fs.directory}): the sweep needs "
            f"{fs.peak_bytes / 1e9:.1f} GB at peak ({min(the_plan.parallel_jobs, fs.files)} jobs at once, "
            f"largest test file {fs.largest_file_bytes / 1e9:.1f} GB), and {fs.free_bytes / 1e9:.1f} GB "
            "are free. Free space, run fewer jobs at once (--cores / --jobs), or pass "
            "--config check_disk=False to proceed anyway."
        )


SWEEP = load_sweep(config)
RESULTS = f"results/{SWEEP.name}"
if workflow.is_main_process:  # not again inside each cluster job
    check_plan(SWEEP)


wildcard_constraints:
    filesystem=r"[A-Za-z][A-Za-z0-9_]*",
    layout=r"contiguous(-zxy)?|chunked(-zxy)?-\d+(x\d+)*",
    compression=r"[a-z][a-z0-9]*(-\d+)?",
    case=r"[a-z][a-z0-9_]*",


def generate_settings():
    """What a generated file depends on: a change reruns its jobs (Snakemake's params trigger)."""
    return {"dataset": SWEEP.dataset, "write": SWEEP.config["cases"].get("write", {})}


def query_settings():
    """What a query depends on, besides its file."""
    cases = {k: v for k, v in SWEEP.config["cases"].items() if k != "write"}
    return {
        "dataset": SWEEP.dataset,
        "cases": cases,
        "policies": SWEEP.config["policies"],
        "chunk_cache": SWEEP.config["chunk_cache"],
    }


def record_path(filesystem, layout, compression, stage):
    return f"{RESULTS}/raw/{filesystem}/{layout}/{compression}/{stage}.parquet"


def all_records():
    stages = ("write", "query", "scaling") if SWEEP.scaling else ("write", "query")
    records = [
        record_path(tf.filesystem.name, tf.layout.id, tf.compression.name, stage)
        for tf in SWEEP.test_files()
        for stage in stages
    ]
    for case in ("metadata", "iosize"):  # once per filesystem
        if getattr(SWEEP, case):
            records += [
                f"{RESULTS}/raw/{fs.name}/{case}.parquet" for fs in SWEEP.filesystems
            ]
    return records


def metadata_settings():
    return {"dataset": SWEEP.dataset, "metadata": SWEEP.config["cases"].get("metadata")}


def metadata_mem_mb(wildcards, attempt):
    return resources.metadata_mem_mb(SWEEP, attempt)


def iosize_settings():
    return {"dataset": SWEEP.dataset, "iosize": SWEEP.config["cases"].get("iosize")}


def iosize_mem_mb(wildcards, attempt):
    return resources.metadata_mem_mb(SWEEP, attempt)


def scaling_settings():
    return {
        "dataset": SWEEP.dataset,
        "scaling": SWEEP.config["cases"].get("scaling"),
        "chunk_cache": SWEEP.config["chunk_cache"][0],
    }


def max_scaling_processes():
    return max(SWEEP.scaling.processes) if SWEEP.scaling else 1


def test_file_of(wildcards):
    """The generated HDF5 file that a query job reads."""
    fs = SWEEP.filesystem(wildcards.filesystem)
    return fs.test_file(SWEEP.name, wildcards.layout, wildcards.compression)


def figures():
    cases = [case.name for case in SWEEP.read_cases]
    square_chunks = any(
        l.chunk_shape and l.chunk_shape[0] == l.chunk_shape[1] for l in SWEEP.layouts
    )
    out = [f"{RESULTS}/plots/file-sizes.png"]
    for fs in SWEEP.filesystems:
        out += [f"{RESULTS}/plots/write-{fs.name}.png"]
        out += [f"{RESULTS}/plots/bars-{case}-{fs.name}.png" for case in cases]
        if square_chunks:
            out += [f"{RESULTS}/plots/heatmap-{case}-{fs.name}.png" for case in cases]
        if cases:
            out += [f"{RESULTS}/plots/score-{fs.name}.png"]
        if SWEEP.scaling:
            out += [f"{RESULTS}/plots/scaling-{fs.name}.png"]
        if SWEEP.metadata:
            out += [f"{RESULTS}/plots/metadata-{fs.name}.png"]
        if SWEEP.iosize:
            out += [f"{RESULTS}/plots/iosize-{fs.name}.png"]
        if len(SWEEP.write_case.variants()) > 1:
            out += [f"{RESULTS}/plots/variants-write-{fs.name}.png"]
        if len(SWEEP.policies) * len(SWEEP.chunk_caches) > 1:
            out += [f"{RESULTS}/plots/variants-{case}-{fs.name}.png" for case in cases]
    return out


def final_outputs():
    return [
        f"{RESULTS}/measurements.parquet",
        f"{RESULTS}/summary.csv",
        *figures(),
    ]


# Resources of each job, computed from the config; scaled up by the attempt number when
# a failed job is retried (--retries, set in profiles/slurm).


def generate_mem_mb(wildcards, attempt):
    layout, _ = file_axes(wildcards)
    return resources.generate_mem_mb(SWEEP, layout, attempt)


def query_mem_mb(wildcards, attempt):
    return resources.query_mem_mb(SWEEP, attempt)


def generate_runtime(wildcards, attempt):
    layout, compression = file_axes(wildcards)
    return resources.generate_runtime_min(SWEEP, layout, compression, attempt)


def query_runtime(wildcards, attempt):
    layout, compression = file_axes(wildcards)
    return resources.query_runtime_min(SWEEP, layout, compression, attempt)


def file_axes(wildcards):
    return Layout.from_id(wildcards.layout), parse_compression(wildcards.compression)
