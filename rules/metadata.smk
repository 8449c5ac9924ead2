# metadata: the same values as N small datasets vs one, once per filesystem (only when
# cases.metadata is configured). The script removes its own scratch file.


rule metadata:
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/metadata.parquet",
    log:
        f"{RESULTS}/logs/metadata/{{filesystem}}.log",
    priority: 10
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=metadata_mem_mb,
    params:
        settings=metadata_settings(),
    script:
        "../workflow/scripts/metadata.py"
