"""Generate one test file and time it (the write case)."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_generate

    w = snakemake.wildcards
    log.info("generating %s", snakemake.output.h5)
    run_generate(
        snakemake.config,
        snakemake.params.filesystem,
        w.layout,
        w.compression,
        snakemake.output.h5,
        snakemake.output.record,
        snakemake.threads,
    )
