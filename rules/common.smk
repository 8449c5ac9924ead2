# Config loading, validation and grid expansion. Everything the rules need comes from
# SWEEP, the validated and expanded config (see h5sweep.sweep.model.Sweep), through JOBS:
# every path, input, job setting (params.settings, from h5sweep.sweep.settings) and resource,
# as functions of a job's wildcards (h5sweep.sweep.rules.RuleFunctions).

import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from h5sweep import backends
from h5sweep.storage import codecs
from h5sweep.sweep import cluster, plan, preview, resume
from h5sweep.cases import FIGURES
from h5sweep.sweep.config import load_schema
from h5sweep.sweep.rules import PLOT_MEM_MB, RuleFunctions
from h5sweep.storage.errors import ConfigError, RequestError
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
# The run's recommend: section as the sweep resolved it (its read mix filled): what an
# interleaved read job's race scores by when it runs (h5sweep.sweep.settings.with_race_scoring),
# not a setting of the job.
config["recommend"] = SWEEP.recommend
# The measuring jobs' group: on SLURM a store's jobs (a filesystem's, interleaved) run in one
# allocation (profiles/slurm's group-components); locally Snakemake runs no group as one, and
# a group of a grid's every job makes its scheduling quadratic: none.
MEASURE_GROUP = "measure" if on_slurm() or not workflow.is_main_process else None
# Locally, one job writes a store and runs its read cases (one Python start instead of two;
# h5sweep.sweep.plan.reads_in_store_job); grouped on SLURM, they stay two jobs.
CLUSTER = MEASURE_GROUP is not None or not workflow.local_exec
READS_IN_STORE_JOB = plan.reads_in_store_job(SWEEP, cluster=CLUSTER)
# Locally, one job writes every (small) store of a filesystem whose stores one interleaved job
# reads (h5sweep.sweep.plan.writes_in_one_job): one Python start and one load of the values.
WRITES_IN_ONE_JOB = [
    fs.name
    for fs in SWEEP.filesystems
    if plan.writes_in_one_job(SWEEP, fs, cluster=CLUSTER)
]
RESULTS = f"results/{SWEEP.name}"


def checked_resume():
    """The raced-out stores a finished sweep was asked to read to the end, per filesystem
    (h5sweep.sweep.resume: results/<sweep>/resume.json, from `python -m h5sweep.compare.whatif
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
    layout=r"(contiguous(-zxy)?|chunked(-zxy)?-\d+(x\d+)*(-shards-\d+(x\d+)*)?)(-paged-\d+)?",
    compression=codecs.WILDCARD,
    case=r"[a-z][a-z0-9_]*",


JOBS = RuleFunctions(SWEEP, RESULTS, READS_IN_STORE_JOB, RESUMED, WRITES_IN_ONE_JOB)
PLOT_JOBS = JOBS.plot_jobs


def generate_outputs(fs, entry):
    """A generate job's outputs: its store (temporary; a directory for a backend whose store is
    one) and its records (the write's, and the reads' where the job reads the store too).
    """
    path = JOBS.store_path(fs, entry.name)
    store = directory(path) if entry.capabilities.directory_store else path
    return {"store": temp(store), **JOBS.generate_records(fs, entry)}


def generate_all_outputs(fs):
    """The outputs of the one job that writes every store of ``fs``: each store (temporary;
    a directory for a backend whose store is one) and each store's write record, in the order
    of the job's settings, and where the writes race, the race's record (the job races them).
    """
    stores = []
    for tf in JOBS.stores_written_together(fs):
        path = JOBS.store_path(fs, tf.backend.name, tf.layout.id, tf.compression.name)
        stores.append(
            temp(directory(path) if tf.backend.capabilities.directory_store else path)
        )
    raced = {"race": JOBS.write_race_record(fs.name)} if SWEEP.write_race else {}
    return {"stores": stores, "records": JOBS.generate_all_records(fs), **raced}


def check_cluster_before_submitting():
    """On a run (not a dry run), refuse to start without what a case's jobs need of the
    machine (the parallel passes' MPI environment), and on SLURM where job status could not
    be followed (see h5sweep.sweep.cluster); runs after the DAG is built, before the first
    job is submitted."""
    for problem in JOBS.run_problems():
        raise WorkflowError(f"h5sweep: {problem}")
    plugin = workflow.executor_plugin
    if plugin is None or plugin.name != "slurm":
        return
    status_command = getattr(workflow.executor_settings, "status_command", None)
    problem = cluster.status_source_problem(status_command, cluster.slurm_config())
    if problem:
        raise WorkflowError(problem)
