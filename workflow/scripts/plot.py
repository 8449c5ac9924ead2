"""Draw one figure from the summary; which one is the rule's `figure` parameter."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep import plots

    summary = plots.load_summary(snakemake.input.summary, primary_only=snakemake.params.figure != "variants")
    draw = getattr(plots, f"plot_{snakemake.params.figure}")
    draw(summary, **dict(snakemake.wildcards.items()), out=snakemake.output[0])
