"""Draw every figure of one kind (the rule's `figure` parameter), with their captions."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.report.draw import draw_kind

    figures = list(zip(snakemake.params.wildcards, snakemake.output.figures, snakemake.output.captions, strict=True))
    draw_kind(
        snakemake.params.figure, dict(snakemake.input.items()), figures, snakemake.params.template, snakemake.config
    )
