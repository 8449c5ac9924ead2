"""Time every read case on one test file, verifying each selection's values."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_query

    w = snakemake.wildcards
    log.info("querying %s", snakemake.input.h5)
    run_query(snakemake.config, w.filesystem, w.layout, w.compression, snakemake.input.h5, snakemake.output.record)
