# generate: write one test file per filesystem x layout x compression, timing the write
# case. One rule per filesystem, because each writes into its own directory; the file is
# temp() and is removed as soon as its query job is done, so disk use stays bounded.


for fs in SWEEP.filesystems:

    rule:
        name:
            f"generate_on_{fs.name}"
        output:
            h5=temp(fs.test_file(SWEEP.name, "{layout}", "{compression}")),
            record=record_path(fs.name, "{layout}", "{compression}", "write"),
        log:
            f"{RESULTS}/logs/generate/{fs.name}/{{layout}}/{{compression}}.log",
        group:
            "measure"
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=generate_mem_mb,
            runtime=generate_runtime,
        params:
            filesystem=fs.name,
            settings=generate_settings(),
        script:
            "../workflow/scripts/generate.py"
