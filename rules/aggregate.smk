# aggregate: every raw record into one tidy table and the per-case summary (typed Parquet,
# and CSV for spreadsheets), and the studies' findings checked on that summary
# (h5sweep.analyze.findings), each with its verdict and the numbers it rests on.


localrules:
    aggregate,


rule aggregate:
    input:
        JOBS.all_records(),
    output:
        measurements=f"{RESULTS}/measurements.parquet",
        summary=f"{RESULTS}/summary.parquet",
        summary_csv=report(
            f"{RESULTS}/summary.csv",
            caption="../workflow/report/summary.rst",
            category="2. Summary table",
        ),
        findings_table=report(
            f"{RESULTS}/findings.csv",
            caption="../workflow/report/findings.rst",
            category="1. Recommendation",
        ),
        findings_text=f"{RESULTS}/findings.md",
    log:
        f"{RESULTS}/logs/aggregate.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.aggregate_mem_mb,
        runtime=JOBS.aggregate_runtime,
    params:
        thresholds=SWEEP.score,
        reference=SWEEP.reference,
        shape=list(SWEEP.shape),
        dataset=SWEEP.dataset,
    script:
        "../workflow/scripts/aggregate.py"
