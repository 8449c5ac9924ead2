# scale: local parallel scaling, numpy.var over blocks of z-slices split along x across
# processes (only when cases.scaling is configured). Reads the same test file as query.


rule scale:
    input:
        h5=test_file_of,
    output:
        record=record_path("{filesystem}", "{layout}", "{compression}", "scaling"),
    log:
        f"{RESULTS}/logs/scale/{{filesystem}}/{{layout}}/{{compression}}.log",
    priority: 10
    group:
        "measure"
    conda:
        "../workflow/envs/h5sweep.yaml"
    threads: max_scaling_processes()
    resources:
        mem_mb=query_mem_mb,
        runtime=query_runtime,
    params:
        settings=scaling_settings(),
    script:
        "../workflow/scripts/scale.py"
