"""Time every read case on one test store, verifying each selection's values."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_query

    log.info("querying %s", snakemake.input.store)
    run_query(snakemake.params.settings, snakemake.input.store, snakemake.output.record)
