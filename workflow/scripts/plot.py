"""Draw one figure; which one is the rule's `figure` parameter."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep import plots

    inputs = dict(snakemake.input.items())
    plots.draw(snakemake.params.figure, inputs, dict(snakemake.wildcards.items()), snakemake.output[0])
