"""Rank the layouts for the user's read mix and write the verdict, the decision sheet and the
page that shows them (index.html)."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    from h5sweep.analyze.recommend import recommend
    from h5sweep.report.interactive import write_page

    table, sheet = recommend(
        snakemake.input.measurements,
        snakemake.input.summary,
        snakemake.params.settings,
        snakemake.output.table,
        snakemake.output.text,
        snakemake.output.front_page,
        snakemake.output.decision,
        snakemake.output.settings,
    )
    write_page(
        sheet,
        table,
        snakemake.params.settings["recommend"]["objective"],
        snakemake.output.page,
        snakemake.input.measurements,
        snakemake.params.settings,
    )
