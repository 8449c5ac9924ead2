"""Time every read case interleaved over all test stores of one filesystem."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.jobs import run_query_interleaved

    run_query_interleaved(snakemake.params.settings, list(snakemake.input.stores), snakemake.output.record)
