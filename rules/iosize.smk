# iosize: throughput against request size, HDF5 and raw binary, once per filesystem (only
# when cases.iosize is configured). The script removes its own scratch files.


rule iosize:
    input:
        donor=donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/iosize.parquet",
    log:
        f"{RESULTS}/logs/iosize/{{filesystem}}.log",
    priority: 10
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=iosize_mem_mb,
        runtime=iosize_runtime,
    params:
        settings=filesystem_case_settings("iosize"),
    script:
        "../workflow/scripts/iosize.py"
