# scale: local parallel scaling, numpy.var over blocks of z-slices split along x across
# processes (only when cases.scaling is configured). Reads the same test store as query.


rule scale:
    input:
        store=store_of,
        donor=donor(),
    output:
        record=record_path(
            "{filesystem}", "{backend}", "{layout}", "{compression}", "scaling"
        ),
    log:
        f"{RESULTS}/logs/scale/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}.log",
    priority: 10
    group:
        "measure"
    conda:
        "../workflow/envs/h5sweep.yaml"
    threads: max_scaling_processes()
    resources:
        mem_mb=query_mem_mb,
        runtime=scaling_runtime,
    params:
        settings=scaling_settings,
    script:
        "../workflow/scripts/scale.py"
