"""Metadata overhead on one filesystem: the same values as N small datasets vs one."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_filesystem_case

    run_filesystem_case(snakemake.params.settings, snakemake.output.record)
