"""Draw every figure of one kind (the rule's `figure` parameter), one per `instances` entry."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.report.draw import draw_all

    draw_all(snakemake.params.figure, dict(snakemake.input.items()), snakemake.params.instances, list(snakemake.output))
