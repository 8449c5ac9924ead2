# generate: write one test store per filesystem x backend x layout x compression, timing
# the write case. One rule per filesystem and backend, because each writes into its own
# directory and a backend's store is a file (HDF5: generate_on_<fs>) or a directory (Zarr:
# generate_zarr_on_<fs>); the store is temp() and is removed as soon as its query job is
# done, so disk use stays bounded. Locally, where stores are read one at a time, the job that
# writes a store also runs its read cases (generate_query_on_<fs>): one Python start, not two.


for fs in SWEEP.filesystems:
    for entry in SWEEP.backends:

        rule:
            name:
                generate_rule_name(fs, entry)
            input:
                donor=donor(),
            output:
                **generate_outputs(fs, entry),
            log:
                **generate_logs(fs, entry),
            group:
                MEASURE_GROUP
            conda:
                "../workflow/envs/h5sweep.yaml"
            resources:
                mem_mb=generate_job_mem_mb,
                runtime=generate_job_runtime(entry.name),
            params:
                **generate_params(fs, entry),
            script:
                GENERATE_SCRIPT


# write_race (racing on and cases.write.repeats above min_repeats): once every store of a
# filesystem has made its first timed writes, more repeats only for the stores whose write
# time is not yet separated from their competitors' (h5sweep.cases.write.race). Its record
# holds every write of the filesystem, the raced-out stores' marked.


rule write_race:
    input:
        records=write_records_on_filesystem,
        donor=donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/write-race.parquet",
    log:
        f"{RESULTS}/logs/generate/{{filesystem}}/write-race.log",
    group:
        MEASURE_GROUP
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=write_race_mem_mb,
        runtime=write_race_runtime,
    params:
        settings=write_race_settings,
    script:
        "../workflow/scripts/write_race.py"
