"""Generate one test store and time it (the write case), then time every read case on it,
verifying each selection's values: one job, one log per stage."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log.generate) as log:
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_generate, run_query

    log.info("generating %s", snakemake.output.store)
    run_generate(snakemake.params.settings, snakemake.output.store, snakemake.output.record, snakemake.threads)
with logged(snakemake.log.query) as log:
    log.info("querying %s", snakemake.output.store)
    run_query(snakemake.params.query, snakemake.output.store, snakemake.output.query)
