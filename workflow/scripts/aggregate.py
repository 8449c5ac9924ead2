"""Collect every job's records into measurements.parquet and summary.csv."""

from h5sweep.scripting import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.scripting.logged)
    from h5sweep.aggregate import aggregate

    aggregate(
        list(snakemake.input), snakemake.output.measurements, snakemake.output.summary, snakemake.params.thresholds
    )
