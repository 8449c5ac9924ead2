"""Draw one figure; which one is the rule's `figure` parameter."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.report.draw import draw

    inputs = dict(snakemake.input.items())
    draw(snakemake.params.figure, inputs, dict(snakemake.wildcards.items()), snakemake.output[0])
