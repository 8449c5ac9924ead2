# query: time every read case on one generated store (cold first access, paired
# selections, values verified against the data source).


if not READS_IN_STORE_JOB:  # locally, the store's own job reads it (rules/generate.smk)

    rule query:
        input:
            store=JOBS.store_of,
            donor=JOBS.donor(),
        output:
            record=JOBS.record_path(
                "{filesystem}", "{backend}", "{layout}", "{compression}", "query"
            ),
        log:
            f"{RESULTS}/logs/query/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}.log",
        # Query a store as soon as it exists, before generating more: bounds disk use.
        priority: 10
        group:
            MEASURE_GROUP
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=JOBS.query_mem_mb,
            runtime=JOBS.query_runtime,
        params:
            settings=JOBS.query_settings,
        script:
            "../workflow/scripts/query.py"


# query_interleaved (config `interleave: true`): every read case over all stores of one
# filesystem at once, selection by selection in a seeded order, so that the machine's drift
# over minutes cancels in the paired ratios (h5sweep.measure.engine.interleave). Every store of the
# filesystem exists while it runs (the plan counts that disk).


rule query_interleaved:
    input:
        stores=JOBS.stores_on_filesystem,
        donor=JOBS.donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/query-interleaved.parquet",
    log:
        f"{RESULTS}/logs/query/{{filesystem}}/interleaved.log",
    priority: 10
    group:
        MEASURE_GROUP
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.query_mem_mb,
        runtime=JOBS.interleaved_query_runtime,
    params:
        settings=JOBS.interleaved_query_settings,
    script:
        "../workflow/scripts/query_interleaved.py"


# query_resumed: a store the race dropped that another read mix could favour, as asked after
# the sweep (results/<sweep>/resume.json, `python -m h5sweep.compare.whatif RUN --weights ...
# --resume`): written again and read to the end in the requested read options, on the same
# seeded selections (h5sweep.sweep.resume). Nothing else is read again.


rule query_resumed:
    input:
        passed=f"{RESULTS}/raw/{{filesystem}}/query-interleaved.parquet",
        donor=JOBS.donor(),
    output:
        record=JOBS.record_path(
            "{filesystem}", "{backend}", "{layout}", "{compression}", "resumed"
        ),
    log:
        f"{RESULTS}/logs/query/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}-resumed.log",
    priority: 10
    group:
        MEASURE_GROUP
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.query_mem_mb,
        runtime=JOBS.query_runtime,
    params:
        settings=JOBS.resumed_query_settings,
    script:
        "../workflow/scripts/query_resumed.py"
