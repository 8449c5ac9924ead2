"""Local parallel scaling on one test file (numpy.var over z-slices across processes)."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_scale

    w = snakemake.wildcards
    log.info("scaling on %s", snakemake.input.h5)
    run_scale(snakemake.config, w.filesystem, w.layout, w.compression, snakemake.input.h5, snakemake.output.record)
