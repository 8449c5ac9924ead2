# generate: write one test store per filesystem x backend x layout x compression, timing
# the write case. One rule per filesystem, because each writes into its own directory; the
# store is temp() and is removed as soon as its query job is done, so disk use stays bounded.


for fs in SWEEP.filesystems:

    rule:
        name:
            f"generate_on_{fs.name}"
        input:
            donor=donor(),
        output:
            store=temp(store_path(fs)),
            record=record_path(
                fs.name, "{backend}", "{layout}", "{compression}", "write"
            ),
        log:
            f"{RESULTS}/logs/generate/{fs.name}/{{backend}}/{{layout}}/{{compression}}.log",
        group:
            "measure"
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=generate_mem_mb,
            runtime=generate_runtime,
        params:
            settings=generate_settings(fs),
        script:
            "../workflow/scripts/generate.py"
