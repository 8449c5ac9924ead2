"""Draw every figure of the job's kinds (the rule's `kinds` parameter), with their captions."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.report.draw import draw_kinds

    draw_kinds(
        snakemake.params.kinds,
        dict(snakemake.input.items()),
        list(snakemake.output.figures),
        list(snakemake.output.captions),
        snakemake.config,
    )
