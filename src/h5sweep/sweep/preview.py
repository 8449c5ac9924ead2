"""What a sweep says before it runs: its plan (jobs, time, disk), on SLURM what each job
asks, the warnings, and a refusal where its stores cannot fit on a disk. The workflow says it
at every start (``rules/common.smk``); ``python -m h5sweep.sweep`` says the same without
starting Snakemake."""

from __future__ import annotations

from dataclasses import dataclass, field

from h5sweep.cases.parallel import missing_mpi_environment
from h5sweep.sweep import plan, resources


@dataclass
class Preview:
    plan: plan.Plan
    info: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refusal: str | None = None  # why the sweep cannot run as asked, with what to change


def preview(sweep, parallel_jobs: int, slurm: bool = False, cluster: bool = False) -> Preview:
    """The plan of ``sweep`` with ``parallel_jobs`` jobs at once (``slurm``: submitted to
    SLURM; ``cluster``: to any scheduler), what it says and whether it is refused."""
    the_plan = plan.make_plan(sweep, parallel_jobs, cluster=slurm or cluster)
    out = Preview(the_plan, info=[the_plan.describe()])
    if slurm:
        out.info.append(resources.describe_asks(sweep))
    if sweep.parallel is not None and missing_mpi_environment():
        out.warnings.append(f"To run (not for a dry run): {missing_mpi_environment()}.")
    out.warnings += the_plan.warnings
    short = [fs for fs in the_plan.filesystems if not fs.fits]
    if short and sweep.config["check_disk"]:
        fs = short[0]
        at_once = (
            f"all {fs.files} test stores at once to interleave their reads"
            if sweep.interleave
            else f"{min(the_plan.parallel_jobs, fs.files)} jobs at once"
        )
        out.refusal = (
            f"h5sweep: not enough disk on filesystem {fs.name} ({fs.directory}): the sweep needs "
            f"{fs.peak_bytes / 1e9:.1f} GB at peak ({at_once}, "
            f"largest test file {fs.largest_file_bytes / 1e9:.1f} GB), and {fs.free_bytes / 1e9:.1f} GB "
            "are free. Free space, run fewer jobs at once (--cores / --jobs)"
            + (", set interleave: false (one store at a time)" if sweep.interleave else "")
            + ", or pass --config check_disk=False to proceed anyway."
        )
    return out
