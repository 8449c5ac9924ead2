"""Read the raced-out stores of one filesystem that a finished sweep was asked to resume."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_query_resumed

    run_query_resumed(snakemake.params.settings, snakemake.output.record)
