"""Check the studies' findings on this sweep's summary."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    from h5sweep.analyze.findings import write

    write(
        snakemake.input.summary,
        tuple(snakemake.params.shape),
        snakemake.output.table,
        snakemake.output.text,
    )
