"""Throughput against request size on one filesystem, HDF5 and raw binary."""

from h5sweep.scripting import logged
from h5sweep.stages import run_iosize_case

with logged(snakemake.log[0]):
    run_iosize_case(snakemake.config, snakemake.wildcards.filesystem, snakemake.output.record)
