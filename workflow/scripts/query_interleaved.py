"""Time every read case interleaved over all test stores of one filesystem."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.settings import with_race_scoring
    from h5sweep.sweep.stages import run_query_interleaved

    # the race scores by the run's recommend: section (resolved by rules/common.smk), which is
    # not a setting of this job
    settings = with_race_scoring(snakemake.params.settings, snakemake.config["recommend"])
    run_query_interleaved(settings, list(snakemake.input.stores), snakemake.output.record)
