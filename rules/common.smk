# Config loading, validation and grid expansion. Everything the rules need comes from
# SWEEP, the validated and expanded config (see h5sweep.sweep.model.Sweep); every job gets its
# own settings from h5sweep.sweep.settings as params.settings.

import os
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from h5sweep import backends
from h5sweep.storage import codecs
from h5sweep.sweep import cluster, plan, preview, resources, resume
from h5sweep.sweep import settings as job_settings
from h5sweep.cases import (
    CASE_SPECS,
    FIGURE_INPUTS,
    FIGURES,
    OWN_JOB_CASES,
    case_spec,
    plot_jobs,
)
from h5sweep.sweep.config import load_schema
from h5sweep.errors import ConfigError, RequestError
from h5sweep.sweep.model import load_sweep


def checked_sweep(config):
    """Check the config before any job is planned; refuse it with the key and value. The
    main process checks everything; a process that re-reads the workflow inside a cluster
    job takes the checked sweep as it is (no filesystem probes, no donor read)."""
    try:
        schema = load_schema(workflow.source_path("../config/schema.yaml"))
        return load_sweep(config, schema, probe=workflow.is_main_process)
    except ConfigError as err:
        raise WorkflowError(f"h5sweep: invalid config: {err}") from None


def on_slurm():
    """Whether the jobs go to SLURM: the command line's executor or its profile's (the
    workflow is read before Snakemake sets its executor; a dry run shows the same)."""
    return cluster.executor_of(sys.argv, os.environ, workflow.basedir) == "slurm"


def parallel_jobs():
    """How many jobs can run at once: local cores, or the cluster's job limit."""
    if not on_slurm() and workflow.local_exec:
        return workflow.resource_settings.cores or os.cpu_count() or 1
    return workflow.resource_settings.nodes or 1


def check_plan(sweep):
    """Say what the sweep will cost (and on SLURM what each job asks); refuse one whose
    test files cannot fit on a disk (h5sweep.sweep.preview, also `python -m h5sweep.sweep`).
    """
    said = preview.preview(
        sweep, parallel_jobs(), slurm=on_slurm(), cluster=not workflow.local_exec
    )
    for line in said.info:
        logger.info(line)
    for warning in said.warnings:
        logger.warning(warning)
    if said.refusal:
        raise WorkflowError(said.refusal)


SWEEP = checked_sweep(config)
# The measuring jobs' group: on SLURM a store's jobs (a filesystem's, interleaved) run in one
# allocation (profiles/slurm's group-components); locally Snakemake runs no group as one, and
# a group of a grid's every job makes its scheduling quadratic: none.
MEASURE_GROUP = "measure" if on_slurm() or not workflow.is_main_process else None
# Locally, one job writes a store and runs its read cases (one Python start instead of two;
# h5sweep.sweep.plan.reads_in_store_job); grouped on SLURM, they stay two jobs.
READS_IN_STORE_JOB = plan.reads_in_store_job(
    SWEEP, cluster=MEASURE_GROUP is not None or not workflow.local_exec
)
RESULTS = f"results/{SWEEP.name}"


def checked_resume():
    """The raced-out stores a finished sweep was asked to read to the end, per filesystem
    (h5sweep.sweep.resume: results/<sweep>/resume.json, from `python -m h5sweep.whatif
    --resume`), each checked against the sweep."""
    try:
        return resume.checked_request(SWEEP, RESULTS)
    except RequestError as err:
        raise WorkflowError(f"h5sweep: {err}") from None


RESUMED = checked_resume()
# the report's captions (a case package may keep its figures' captions beside them)
REPORT_DIR = Path(workflow.basedir) / "workflow" / "report"
if workflow.is_main_process:  # not again inside each cluster job
    check_plan(SWEEP)


wildcard_constraints:
    filesystem=r"[A-Za-z][A-Za-z0-9_]*",
    backend=backends.WILDCARD,
    layout=r"contiguous(-zxy)?|chunked(-zxy)?-\d+(x\d+)*(-shards-\d+(x\d+)*)?",
    compression=codecs.WILDCARD,
    case=r"[a-z][a-z0-9_]*",


def store_path(fs, backend="{backend}", layout="{layout}", compression="{compression}"):
    """The test store of one backend, layout and compression on filesystem ``fs``."""
    return backends.store_path(fs.directory, SWEEP.name, backend, layout, compression)


def record_path(filesystem, backend, layout, compression, stage):
    return (
        f"{RESULTS}/raw/{filesystem}/{backend}/{layout}/{compression}/{stage}.parquet"
    )


def store_of(wildcards):
    """The generated test store that a query (or scaling) job reads."""
    fs = SWEEP.filesystem(wildcards.filesystem)
    return store_path(fs, wildcards.backend, wildcards.layout, wildcards.compression)


def donor():
    """The donor file the values come from, if any: an input of every job that makes data,
    so that changing it reruns them."""
    fill = SWEEP.dataset["fill"]
    return [fill["donor"]["path"]] if isinstance(fill, dict) else []


# Each job's exact settings (h5sweep.sweep.settings), also its rerun trigger.


def _job_settings(make, fs=None, backend=None):
    def settings(wildcards):
        on = fs or SWEEP.filesystem(wildcards.filesystem)
        return make(
            SWEEP,
            on,
            backend or wildcards.backend,
            wildcards.layout,
            wildcards.compression,
        )

    return settings


def generate_settings(fs, backend):
    return _job_settings(job_settings.generate_settings, fs, backend)


def store_query_settings(fs, backend):
    """The read cases' settings of a job that writes the store and reads it."""
    return _job_settings(job_settings.query_settings, fs, backend)


def generate_rule_name(fs, entry):
    """generate_on_<fs> for HDF5 (the name --set-threads uses), generate_<backend>_on_<fs>
    for the others; generate_query_... where the job reads the store too."""
    stage = "generate_query" if READS_IN_STORE_JOB else "generate"
    if entry.name == backends.REFERENCE:
        return f"{stage}_on_{fs.name}"
    return f"{stage}_{entry.name}_on_{fs.name}"


def store_output(fs, entry):
    """The generated store as an output: a file, or a directory (Zarr)."""
    path = store_path(fs, entry.name)
    return directory(path) if entry.capabilities.directory_store else path


query_settings = _job_settings(job_settings.query_settings)


def generate_outputs(fs, entry):
    """A generate job's outputs: its store (temporary) and write record, and where the job
    reads the store too (READS_IN_STORE_JOB), its query record."""
    outputs = {
        "store": temp(store_output(fs, entry)),
        "record": record_path(
            fs.name, entry.name, "{layout}", "{compression}", "write"
        ),
    }
    if READS_IN_STORE_JOB:
        outputs["query"] = record_path(
            fs.name, entry.name, "{layout}", "{compression}", "query"
        )
    return outputs


def generate_logs(fs, entry):
    """A generate job's log, and its query stage's where it reads the store too."""
    where = f"{fs.name}/{entry.name}/{{layout}}/{{compression}}.log"
    stages = ("generate", "query") if READS_IN_STORE_JOB else ("generate",)
    return {stage: f"{RESULTS}/logs/{stage}/{where}" for stage in stages}


def generate_params(fs, entry):
    """A generate job's settings, and its read cases' where it reads the store too."""
    params = {"settings": generate_settings(fs, entry.name)}
    if READS_IN_STORE_JOB:
        params["query"] = store_query_settings(fs, entry.name)
    return params


GENERATE_SCRIPT = (
    "../workflow/scripts/generate_query.py"
    if READS_IN_STORE_JOB
    else "../workflow/scripts/generate.py"
)


def generate_job_mem_mb(wildcards, attempt):
    """A generate job's memory; where it reads the store too, the larger of the two stages'."""
    memory = generate_mem_mb(wildcards, attempt)
    if READS_IN_STORE_JOB:
        memory = max(memory, query_mem_mb(wildcards, attempt))
    return memory


def generate_job_runtime(backend):
    """A generate job's time limit; where it reads the store too, the two stages' added."""
    generate = generate_runtime(backend)

    def runtime(wildcards, attempt):
        minutes = generate(wildcards, attempt)
        if READS_IN_STORE_JOB:
            layout, compression = file_axes(wildcards)
            minutes += resources.query_runtime_min(
                SWEEP, layout, compression, attempt, backend
            )
        return minutes

    return runtime


def interleaved_query_settings(wildcards):
    return job_settings.interleaved_query_settings(
        SWEEP, SWEEP.filesystem(wildcards.filesystem)
    )


def resumed_query_settings(wildcards):
    store = (wildcards.backend, wildcards.layout, wildcards.compression)
    return job_settings.resumed_query_settings(
        SWEEP,
        SWEEP.filesystem(wildcards.filesystem),
        RESUMED[wildcards.filesystem][store],
    )


def write_race_settings(wildcards):
    return job_settings.write_race_settings(
        SWEEP, SWEEP.filesystem(wildcards.filesystem)
    )


def write_records_on_filesystem(wildcards):
    """The write records of every test store of one filesystem, in the order of the write
    race's settings."""
    return [
        record_path(
            wildcards.filesystem,
            tf.backend.name,
            tf.layout.id,
            tf.compression.name,
            "write",
        )
        for tf in SWEEP.test_files()
        if tf.filesystem.name == wildcards.filesystem
    ]


def write_race_mem_mb(wildcards, attempt):
    return resources.write_race_mem_mb(SWEEP, attempt)


def write_race_runtime(wildcards, attempt):
    return resources.write_race_runtime_min(
        SWEEP, SWEEP.filesystem(wildcards.filesystem), attempt
    )


def stores_on_filesystem(wildcards):
    """Every test store of one filesystem, in the order of its job's settings."""
    fs = SWEEP.filesystem(wildcards.filesystem)
    return [
        store_path(fs, tf.backend.name, tf.layout.id, tf.compression.name)
        for tf in SWEEP.test_files()
        if tf.filesystem.name == fs.name
    ]


def store_case_settings(wildcards):
    return job_settings.store_case_settings(
        SWEEP,
        SWEEP.filesystem(wildcards.filesystem),
        wildcards.backend,
        wildcards.layout,
        wildcards.compression,
        wildcards.case,
    )


def filesystem_case_settings(wildcards):
    return job_settings.filesystem_case_settings(
        SWEEP, SWEEP.filesystem(wildcards.filesystem), wildcards.case
    )


def own_job_cases(scope):
    """The wildcard constraint of the cases with a job of their own in ``scope``."""
    return "|".join(OWN_JOB_CASES[scope]) or "(?!)"


def all_records():
    """Every record the sweep's cases write, as their specs declare (h5sweep.cases.spec)."""
    records = []
    for spec in CASE_SPECS:
        if not spec.enabled(SWEEP):
            continue
        if spec.stage == "query" and SWEEP.interleave:
            records += [
                f"{RESULTS}/raw/{fs.name}/query-interleaved.parquet"
                for fs in SWEEP.filesystems
            ]
            records += [
                record_path(fs, *store, "resumed")
                for fs, stores in RESUMED.items()
                for store in stores
            ]
        elif spec.stage == "write" and SWEEP.write_race:
            # the race's record holds every write of the filesystem
            records += [
                f"{RESULTS}/raw/{fs.name}/write-race.parquet"
                for fs in SWEEP.filesystems
            ]
        elif spec.scope == "store":
            records += [
                record_path(
                    tf.filesystem.name,
                    tf.backend.name,
                    tf.layout.id,
                    tf.compression.name,
                    spec.stage,
                )
                for tf in SWEEP.test_files()
                if spec.runs_on(tf)
            ]
        else:
            records += [
                f"{RESULTS}/raw/{fs.name}/{spec.stage}.parquet"
                for fs in SWEEP.filesystems
            ]
    return records


def aggregate_mem_mb(wildcards, attempt):
    return resources.aggregate_mem_mb(SWEEP, attempt)


def aggregate_runtime(wildcards, attempt):
    return resources.aggregate_runtime_min(SWEEP, attempt)


# A plot job reads the tables its figures read and draws each figure of its kinds, one
# after another.
PLOT_MEM_MB = 1000


def plot_runtime(figures):
    return 5 + figures // 10


# Every figure the sweep draws, by plot job and kind: (name, its wildcards' values), found once.
PLOT_JOBS = plot_jobs(SWEEP)


def figures():
    """Every figure the sweep draws."""
    return [
        f"{RESULTS}/plots/{name}.png"
        for kinds in PLOT_JOBS.values()
        for drawn in kinds.values()
        for name, _ in drawn
    ]


def figure_caption(name):
    """A figure's caption, rendered by its plot job (absolute: the report reads it)."""
    return os.path.abspath(f"{RESULTS}/captions/{name}.rst")


def plot_inputs(kinds):
    """A plot job's inputs: the tables its kinds of figure read."""
    return {
        name: f"{RESULTS}/{FIGURE_INPUTS[name]}"
        for kind in kinds
        for name in FIGURES[kind].inputs
    }


def report_front_page():
    """The report's first page: the decision sheet, then the recommendation (verdicts and
    rankings), once the sweep has written them, else the workflow's description."""
    front = os.path.abspath(f"{RESULTS}/recommendation.rst")
    return front if os.path.exists(front) else "workflow/report/workflow.rst"


def final_outputs():
    return [
        f"{RESULTS}/measurements.parquet",
        f"{RESULTS}/summary.parquet",
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/decision.md",
        f"{RESULTS}/recommendation.md",
        f"{RESULTS}/recommendation.csv",
        f"{RESULTS}/findings.md",
        f"{RESULTS}/findings.csv",
        *figures(),
    ]


# Resources of each job, computed from the config; scaled up by the attempt number when
# a failed job is retried (--retries, set in profiles/slurm).


def generate_mem_mb(wildcards, attempt):
    layout, _ = file_axes(wildcards)
    return resources.generate_mem_mb(SWEEP, layout, attempt)


def query_mem_mb(wildcards, attempt):
    return resources.query_mem_mb(SWEEP, attempt)


def generate_runtime(backend):
    """The time limit of a generate job writing ``backend``'s stores."""

    def runtime(wildcards, attempt):
        layout, compression = file_axes(wildcards)
        return resources.generate_runtime_min(
            SWEEP, layout, compression, attempt, backend
        )

    return runtime


def interleaved_query_runtime(wildcards, attempt):
    return resources.interleaved_query_runtime_min(
        SWEEP, SWEEP.filesystem(wildcards.filesystem), attempt
    )


def query_runtime(wildcards, attempt):
    layout, compression = file_axes(wildcards)
    return resources.query_runtime_min(
        SWEEP, layout, compression, attempt, wildcards.backend
    )


def case_threads(wildcards):
    return case_spec(wildcards.case).threads(SWEEP)


def case_mem_mb(wildcards, attempt):
    return resources.case_mem_mb(SWEEP, case_spec(wildcards.case), attempt)


def mpi_case_tasks(wildcards):
    return case_spec(wildcards.case).mpi_tasks(SWEEP)


def mpi_case_tasks_per_node(wildcards):
    """Ranks per node where the case sets them (cases.parallel.tasks_per_node), else unset;
    the SLURM plugin takes --ntasks-per-node above 1 and --ntasks otherwise."""
    per_node = case_spec(wildcards.case).mpi_tasks_per_node(SWEEP)
    return per_node if per_node and per_node > 1 else None


def mpi_slurm_tasks(wildcards):
    return None if mpi_case_tasks_per_node(wildcards) else mpi_case_tasks(wildcards)


def mpi_case_nodes(wildcards):
    per_node = case_spec(wildcards.case).mpi_tasks_per_node(SWEEP)
    return -(-mpi_case_tasks(wildcards) // per_node) if per_node else None


def mpi_case_mem_mb_per_task(wildcards, attempt):
    return -(-case_mem_mb(wildcards, attempt) // mpi_case_tasks(wildcards))


def mpi_case_launch(wildcards):
    """The SLURM plugin's MPI mark: the job starts its ranks itself with srun (it refuses
    the mark on one task, which needs none)."""
    return "srun" if mpi_case_tasks(wildcards) > 1 else ""


def case_runtime(wildcards, attempt):
    spec = case_spec(wildcards.case)
    if spec.scope == "store":
        layout, compression = file_axes(wildcards)
        where = SimpleNamespace(
            layout=layout,
            compression=compression,
            backend=backends.spec(wildcards.backend),
            filesystem=SWEEP.filesystem(wildcards.filesystem),
        )
    else:
        where = SWEEP.filesystem(wildcards.filesystem)
    return resources.case_runtime_min(SWEEP, spec, where, attempt)


def file_axes(wildcards):
    return SWEEP.layout(wildcards.layout), codecs.parse_compression(
        wildcards.compression
    )


def check_cluster_before_submitting():
    """On a run (not a dry run), refuse to start without the MPI environment the parallel
    passes need, and on SLURM where job status could not be followed (see
    h5sweep.sweep.cluster); runs after the DAG is built, before the first job is submitted.
    """
    for (
        spec
    ) in CASE_SPECS:  # what a case's jobs need of the machine (the MPI environment)
        problem = (
            spec.run_check(SWEEP) if spec.run_check and spec.enabled(SWEEP) else None
        )
        if problem:
            raise WorkflowError(f"h5sweep: {problem}")
    plugin = workflow.executor_plugin
    if plugin is None or plugin.name != "slurm":
        return
    status_command = getattr(workflow.executor_settings, "status_command", None)
    problem = cluster.status_source_problem(status_command, cluster.slurm_config())
    if problem:
        raise WorkflowError(problem)
