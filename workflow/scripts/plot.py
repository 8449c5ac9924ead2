"""Draw one figure; which one is the rule's `figure` parameter."""

from h5sweep.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.joblog.logged)
    from h5sweep.report import figures

    inputs = dict(snakemake.input.items())
    figures.draw(snakemake.params.figure, inputs, dict(snakemake.wildcards.items()), snakemake.output[0])
