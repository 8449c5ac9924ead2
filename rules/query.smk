# query: time every read case on one generated store (cold first access, paired
# selections, values verified against the data source).


rule query:
    input:
        store=store_of,
        donor=donor(),
    output:
        record=record_path(
            "{filesystem}", "{backend}", "{layout}", "{compression}", "query"
        ),
    log:
        f"{RESULTS}/logs/query/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}.log",
    # Query a store as soon as it exists, before generating more: bounds disk use.
    priority: 10
    group:
        "measure"
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=query_mem_mb,
        runtime=query_runtime,
    params:
        settings=query_settings,
    script:
        "../workflow/scripts/query.py"
