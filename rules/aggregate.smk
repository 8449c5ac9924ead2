# aggregate: every raw record into one tidy table and the per-case summary (typed Parquet,
# and CSV for spreadsheets).


localrules:
    aggregate,


rule aggregate:
    input:
        all_records(),
    output:
        measurements=f"{RESULTS}/measurements.parquet",
        summary=f"{RESULTS}/summary.parquet",
        summary_csv=report(
            f"{RESULTS}/summary.csv",
            caption="../workflow/report/summary.rst",
            category="2. Summary table",
        ),
    log:
        f"{RESULTS}/logs/aggregate.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=aggregate_mem_mb,
        runtime=aggregate_runtime,
    params:
        thresholds=SWEEP.score,
        reference=SWEEP.reference,
    script:
        "../workflow/scripts/aggregate.py"
