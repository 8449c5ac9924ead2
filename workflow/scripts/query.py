"""Time every read case on one test store, verifying each selection's values."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_query

    log.info("querying %s", snakemake.input.store)
    run_query(snakemake.params.settings, snakemake.input.store, snakemake.output.record)
