"""Generate one test store and time it (the write case)."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_generate

    log.info("generating %s", snakemake.output.store)
    run_generate(snakemake.params.settings, snakemake.output.store, snakemake.output.record, snakemake.threads)
