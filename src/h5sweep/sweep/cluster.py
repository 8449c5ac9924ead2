"""Checks of the SLURM cluster a sweep is submitted to, before any job is (no I/O library).

Snakemake's SLURM executor learns that a job ended from ``sacct`` by default. A cluster that
keeps no job accounting (no slurmdbd: ``AccountingStorageType=accounting_storage/none``)
answers ``sacct`` with nothing, and the sweep then waits long after its jobs have finished.
"""

from __future__ import annotations

import shutil
import subprocess

NO_ACCOUNTING = "accounting_storage/none"


def slurm_config() -> dict[str, str]:
    """``scontrol show config`` as a dict ({} where scontrol is missing or fails)."""
    if shutil.which("scontrol") is None:
        return {}
    try:
        out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found[key.strip()] = value.strip()
    return found


def status_source_problem(status_command: str | None, config: dict[str, str]) -> str | None:
    """Why job status cannot come from ``status_command`` on the cluster of ``config``, with
    what to set instead; None when it can."""
    accounting = config.get("AccountingStorageType", "")
    if status_command == "sacct" and accounting == NO_ACCOUNTING:
        cluster = config.get("ClusterName", "this cluster")
        return (
            f"h5sweep: the SLURM cluster {cluster!r} keeps no job accounting (AccountingStorageType="
            f"{NO_ACCOUNTING}), so sacct cannot see any job and Snakemake would wait long after the jobs "
            "have ended. Check job status with squeue instead: add the line\n"
            "    slurm-status-command: squeue\n"
            "to profiles/slurm/config.yaml, or pass --slurm-status-command squeue. Nothing was submitted."
        )
    return None


def executor_of(argv: list[str], environ: dict, workdir: str = ".") -> str:
    """The executor a Snakemake command line submits to: ``--executor``/``-e``, else the
    ``executor`` of the profile it names (``--profile`` or ``$SNAKEMAKE_PROFILE``), else
    ``local``. The workflow is read before Snakemake hands it its executor, so the plan asks
    the command line (a dry run names the same executor as the run it shows)."""
    import os

    import yaml

    args = list(argv)
    profile = environ.get("SNAKEMAKE_PROFILE")
    for i, arg in enumerate(args):
        name, _, value = arg.partition("=")
        if name in ("--executor", "-e"):
            return value or (args[i + 1] if i + 1 < len(args) else "local")
        if name == "--profile":
            profile = value or (args[i + 1] if i + 1 < len(args) else None)
    if not profile:
        return "local"
    for folder in (os.path.join(workdir, profile), profile):
        path = os.path.join(folder, "config.yaml")
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    return str((yaml.safe_load(f) or {}).get("executor", "local"))
            except (OSError, yaml.YAMLError):
                return "local"
    return "local"
