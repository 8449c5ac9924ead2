# Cases with a job of their own (their spec's runner, h5sweep.kit.spec), run by name:
# once per test store (e.g. scaling, reading the same store as query) or once per
# filesystem (e.g. metadata, iosize, which remove their own scratch files). A new case of
# either kind needs no rule of its own.


rule measure_store_case:
    input:
        store=JOBS.store_of,
        donor=JOBS.donor(),
    output:
        record=JOBS.record_path(
            "{filesystem}", "{backend}", "{layout}", "{compression}", "{case}"
        ),
    log:
        f"{RESULTS}/logs/{{case}}/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}.log",
    wildcard_constraints:
        case=JOBS.own_job_cases("store"),
    priority: 10
    group:
        MEASURE_GROUP
    conda:
        "../workflow/envs/h5sweep.yaml"
    threads: JOBS.case_threads
    resources:
        mem_mb=JOBS.case_mem_mb,
        runtime=JOBS.case_runtime,
    params:
        settings=JOBS.store_case_settings,
    script:
        "../workflow/scripts/measure_case.py"


# An MPI case's job per test store (e.g. parallel) is an allocation of its own, not grouped
# with its store's generation: on SLURM one sbatch of `tasks` tasks of one CPU each (memory per
# task), in which the job starts each run's ranks with `srun --mpi=pmix`; locally it takes as
# many cores as ranks and starts them with mpirun. Its store is kept until it has run.


rule measure_mpi_case:
    input:
        store=JOBS.store_of,
        donor=JOBS.donor(),
    output:
        record=JOBS.record_path(
            "{filesystem}", "{backend}", "{layout}", "{compression}", "{case}"
        ),
    log:
        f"{RESULTS}/logs/{{case}}/{{filesystem}}/{{backend}}/{{layout}}/{{compression}}.log",
    wildcard_constraints:
        case=JOBS.own_job_cases("mpi"),
    priority: 10
    conda:
        "../workflow/envs/h5sweep.yaml"
    threads: JOBS.case_threads
    resources:
        mem_mb=JOBS.case_mem_mb,
        mem_mb_per_cpu=JOBS.mpi_case_mem_mb_per_task,
        tasks=JOBS.mpi_slurm_tasks,
        tasks_per_node=JOBS.mpi_case_tasks_per_node,
        nodes=JOBS.mpi_case_nodes,
        cpus_per_task=1,
        mpi=JOBS.mpi_case_launch,
        runtime=JOBS.case_runtime,
    params:
        settings=JOBS.store_case_settings,
    script:
        "../workflow/scripts/measure_case.py"


rule measure_filesystem_case:
    input:
        donor=JOBS.donor(),
    output:
        record=f"{RESULTS}/raw/{{filesystem}}/{{case}}.parquet",
    log:
        f"{RESULTS}/logs/{{case}}/{{filesystem}}.log",
    wildcard_constraints:
        case=JOBS.own_job_cases("filesystem"),
    priority: 10
    conda:
        "../workflow/envs/h5sweep.yaml"
    resources:
        mem_mb=JOBS.case_mem_mb,
        runtime=JOBS.case_runtime,
    params:
        settings=JOBS.filesystem_case_settings,
    script:
        "../workflow/scripts/measure_case.py"
