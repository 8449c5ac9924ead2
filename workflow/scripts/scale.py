"""Local parallel scaling on one test store (numpy.var over z-slices across processes)."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.stages import run_scale

    log.info("scaling on %s", snakemake.input.store)
    run_scale(snakemake.params.settings, snakemake.input.store, snakemake.output.record)
