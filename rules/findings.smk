# findings: the studies' findings checked on this sweep's summary (h5sweep.analyze.findings),
# each with its verdict and the numbers it rests on.


localrules:
    findings,


rule findings:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        table=report(
            f"{RESULTS}/findings.csv",
            caption="../workflow/report/findings.rst",
            category="1. Recommendation",
        ),
        text=f"{RESULTS}/findings.md",
    log:
        f"{RESULTS}/logs/findings.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=aggregate_mem_mb,
        runtime=aggregate_runtime,
    params:
        shape=list(SWEEP.shape),
    script:
        "../workflow/scripts/findings.py"
