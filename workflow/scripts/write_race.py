"""Race the timed writes of one filesystem's stores (more repeats while they matter)."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_write_race

    run_write_race(snakemake.params.settings, list(snakemake.input.records), snakemake.output.record)
