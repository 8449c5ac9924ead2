"""Rank the layouts for the user's read mix and write the verdict and the decision sheet."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    from h5sweep.analyze.recommend import recommend

    recommend(
        snakemake.input.measurements,
        snakemake.input.summary,
        snakemake.params.settings,
        snakemake.output.table,
        snakemake.output.text,
        snakemake.output.front_page,
        snakemake.output.decision,
        snakemake.output.settings,
    )
