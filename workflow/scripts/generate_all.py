"""Generate every test store of one filesystem and time each (the write case), in one job."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]) as log:
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_generate_all

    log.info("generating %d stores", len(snakemake.output.stores))
    output = snakemake.output
    race = output.get("race")  # where the writes race, this job races them
    run_generate_all(snakemake.params.settings, list(output.stores), list(output.records), snakemake.threads, race)
