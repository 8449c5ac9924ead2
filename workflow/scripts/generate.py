"""Generate one test file and time it (the write case)."""

from h5sweep.scripting import logged
from h5sweep.stages import run_generate

with logged(snakemake.log[0]) as log:
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
