# plot: figures from the typed summary (summary.parquet), each in the report with a caption.


localrules:
    plot_parallel,
    plot_backends,
    plot_tradeoff,
    plot_amplification,
    plot_iosize,
    plot_metadata,
    plot_scaling,
    plot_variants,
    plot_case_bars,
    plot_heatmaps,
    plot_file_sizes,
    plot_write,
    plot_score,


rule plot_case_bars:
    input:
        summary=f"{RESULTS}/summary.parquet",
        measurements=f"{RESULTS}/measurements.parquet",
    output:
        report(
            f"{RESULTS}/plots/bars-{{case}}-{{filesystem}}.png",
            caption="../workflow/report/bars.rst",
            category="Access cases",
            labels={"case": "{case}", "filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/bars-{{case}}-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="case_bars",
    script:
        "../workflow/scripts/plot.py"


rule plot_heatmaps:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/heatmap-{{case}}-{{filesystem}}.png",
            caption="../workflow/report/heatmap.rst",
            category="Chunk shape heat maps",
            labels={"case": "{case}", "filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/heatmap-{{case}}-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="heatmaps",
    script:
        "../workflow/scripts/plot.py"


rule plot_file_sizes:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/file-sizes.png",
            caption="../workflow/report/file-sizes.rst",
            category="File size",
        ),
    log:
        f"{RESULTS}/logs/plot/file-sizes.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="file_sizes",
    script:
        "../workflow/scripts/plot.py"


rule plot_write:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/write-{{filesystem}}.png",
            caption="../workflow/report/write.rst",
            category="Write",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/write-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="write",
    script:
        "../workflow/scripts/plot.py"


rule plot_score:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/score-{{filesystem}}.png",
            caption="../workflow/report/score.rst",
            category="Performance score",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/score-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="score",
    script:
        "../workflow/scripts/plot.py"


rule plot_variants:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/variants-{{case}}-{{filesystem}}.png",
            caption="../workflow/report/variants.rst",
            category="Variants",
            labels={"case": "{case}", "filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/variants-{{case}}-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="variants",
    script:
        "../workflow/scripts/plot.py"


rule plot_scaling:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/scaling-{{filesystem}}.png",
            caption="../workflow/report/scaling.rst",
            category="Local scaling",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/scaling-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="scaling",
    script:
        "../workflow/scripts/plot.py"


rule plot_metadata:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/metadata-{{filesystem}}.png",
            caption="../workflow/report/metadata.rst",
            category="Metadata overhead",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/metadata-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="metadata",
    script:
        "../workflow/scripts/plot.py"


rule plot_iosize:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/iosize-{{filesystem}}.png",
            caption="../workflow/report/iosize.rst",
            category="Throughput vs I/O size",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/iosize-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="iosize",
    script:
        "../workflow/scripts/plot.py"


rule plot_tradeoff:
    input:
        recommendation=f"{RESULTS}/recommendation.csv",
    output:
        report(
            f"{RESULTS}/plots/tradeoff-{{filesystem}}.png",
            caption="../workflow/report/tradeoff.rst",
            category="1. Recommendation",
            labels={"figure": "trade-off", "filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/tradeoff-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="tradeoff",
    script:
        "../workflow/scripts/plot.py"


rule plot_amplification:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/amplification-{{filesystem}}.png",
            caption="../workflow/report/amplification.rst",
            category="Model and device",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/amplification-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="amplification",
    script:
        "../workflow/scripts/plot.py"


rule plot_backends:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/backends-{{filesystem}}.png",
            caption="../workflow/report/backends.rst",
            category="HDF5 against Zarr",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/backends-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="backends",
    script:
        "../workflow/scripts/plot.py"


rule plot_parallel:
    input:
        summary=f"{RESULTS}/summary.parquet",
    output:
        report(
            f"{RESULTS}/plots/parallel-{{filesystem}}.png",
            caption="../workflow/report/parallel.rst",
            category="MPI-IO reads",
            labels={"filesystem": "{filesystem}"},
        ),
    log:
        f"{RESULTS}/logs/plot/parallel-{{filesystem}}.log",
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=PLOT_MEM_MB,
        runtime=PLOT_RUNTIME_MIN,
    params:
        figure="parallel",
    script:
        "../workflow/scripts/plot.py"
