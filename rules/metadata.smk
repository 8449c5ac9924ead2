# metadata: the same values as N small datasets vs one, once per filesystem (only when
# cases.metadata is configured). The script removes its own scratch file.


rule metadata:
    input:
        donor=donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/metadata.parquet",
    log:
        f"{RESULTS}/logs/metadata/{{filesystem}}.log",
    priority: 10
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=metadata_mem_mb,
        runtime=metadata_runtime,
    params:
        settings=filesystem_case_settings("metadata"),
    script:
        "../workflow/scripts/metadata.py"
