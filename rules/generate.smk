# generate: write one test store per filesystem x backend x layout x compression, timing
# the write case. One rule per filesystem and backend, because each writes into its own
# directory and a backend's store is a file (HDF5: generate_on_<fs>) or a directory (Zarr:
# generate_zarr_on_<fs>); the store is temp() and is removed as soon as its query job is
# done, so disk use stays bounded. Locally, where stores are read one at a time, the job that
# writes a store also runs its read cases (generate_query_on_<fs>): one Python start, not two;
# where one interleaved job reads a filesystem's stores, one job writes them all too
# (generate_on_<fs>, h5sweep.sweep.plan.writes_in_one_job).


for fs in SWEEP.filesystems:
    if fs.name in WRITES_IN_ONE_JOB:

        rule:
            name:
                f"generate_on_{fs.name}"
            input:
                donor=JOBS.donor(),
            output:
                **generate_all_outputs(fs),
            log:
                JOBS.generate_all_log(fs),
            group:
                MEASURE_GROUP
            conda:
                "../workflow/envs/h5sweep.yaml"
            resources:
                mem_mb=JOBS.generate_all_mem_mb(fs),
                runtime=JOBS.generate_all_runtime(fs),
            params:
                settings=JOBS.generate_all_settings(fs),
            script:
                "../workflow/scripts/generate_all.py"

    else:
        for entry in SWEEP.backends:

            rule:
                name:
                    JOBS.generate_rule_name(fs, entry)
                input:
                    donor=JOBS.donor(),
                output:
                    **generate_outputs(fs, entry),
                log:
                    **JOBS.generate_logs(fs, entry),
                group:
                    MEASURE_GROUP
                conda:
                    "../workflow/envs/h5sweep.yaml"
                resources:
                    mem_mb=JOBS.generate_job_mem_mb,
                    runtime=JOBS.generate_job_runtime(entry.name),
                params:
                    **JOBS.generate_params(fs, entry),
                script:
                    JOBS.generate_script


# write_race (racing on and cases.write.repeats above min_repeats): once every store of a
# filesystem has made its first timed writes, more repeats only for the stores whose write
# time is not yet separated from their competitors' (h5sweep.cases.write.race). Its record
# holds every write of the filesystem, the raced-out stores' marked. Where one job writes a
# filesystem's stores, that job races them too.


rule write_race:
    input:
        records=JOBS.write_records_on_filesystem,
        donor=JOBS.donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/write-race.parquet",
    log:
        f"{RESULTS}/logs/generate/{{filesystem}}/write-race.log",
    wildcard_constraints:
        filesystem=JOBS.raced_apart(),
    group:
        MEASURE_GROUP
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.write_race_mem_mb,
        runtime=JOBS.write_race_runtime,
    params:
        settings=JOBS.write_race_settings,
    script:
        "../workflow/scripts/write_race.py"
