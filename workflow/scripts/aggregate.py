"""Collect every job's records into measurements.parquet and the summary (Parquet and CSV),
then check the studies' findings on that summary."""

import os

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.analyze import findings
    from h5sweep.analyze.aggregate import aggregate
    from h5sweep.sweep.stages import remove_values_cache

    out = snakemake.output
    params = snakemake.params
    aggregate(
        list(snakemake.input), out.measurements, out.summary, out.summary_csv, params.thresholds, params.reference
    )
    remove_values_cache(os.path.dirname(out.measurements))  # every write is made
    findings.write(out.summary, tuple(params.shape), out.findings_table, out.findings_text, params.dataset)
