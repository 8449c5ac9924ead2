# recommend: the layouts ranked for the user's read mix (config `recommend:`), with a verdict
# in words, the decision sheet (decision.md) and the page that shows it with charts
# (index.html). Its only settings are the read mix and limits: changing them reruns this alone.


localrules:
    recommend,


rule recommend:
    input:
        measurements=f"{RESULTS}/measurements.parquet",
        summary=f"{RESULTS}/summary.parquet",
    output:
        table=report(
            f"{RESULTS}/recommendation.csv",
            caption="../workflow/report/recommendation.rst",
            category="1. Recommendation",
        ),
        text=f"{RESULTS}/recommendation.md",
        decision=f"{RESULTS}/decision.md",
        page=f"{RESULTS}/index.html",
        settings=f"{RESULTS}/recommend.json",
        front_page=f"{RESULTS}/recommendation.rst",
    log:
        f"{RESULTS}/logs/recommend.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.aggregate_mem_mb,
        runtime=JOBS.aggregate_runtime,
    params:
        settings=JOBS.recommend_settings(),
    script:
        "../workflow/scripts/recommend.py"
