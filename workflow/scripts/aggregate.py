"""Collect every job's records into measurements.parquet and summary.csv."""

from h5sweep.aggregate import aggregate
from h5sweep.scripting import logged

with logged(snakemake.log[0]):
    aggregate(
        list(snakemake.input), snakemake.output.measurements, snakemake.output.summary, snakemake.params.thresholds
    )
