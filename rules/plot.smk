# plot: one job per set of tables the figures read (h5sweep.cases.plot_jobs: plot_summary,
# plot_summary_measurements, plot_recommendation), drawing every figure of its kinds
# (h5sweep.cases.FIGURES, from the case specs) that the sweep draws (config `figures`) into
# the report. A change of one table redraws only the figures that read it. Each figure's
# caption is rendered by the job for that figure's own case and filesystem
# (results/<sweep>/captions/).


for job_name, kinds in PLOT_JOBS.items():

    rule:
        name:
            f"plot_{job_name}"
        input:
            **JOBS.plot_inputs(kinds),
        output:
            figures=[
                report(
                    f"{RESULTS}/plots/{name}.png",
                    caption=JOBS.figure_caption(name),
                    category=FIGURES[kind].category,
                    labels=FIGURES[kind].report_labels(values),
                )
                for kind, drawn in kinds.items()
                for name, values in drawn
            ],
            captions=[
                JOBS.figure_caption(name)
                for drawn in kinds.values()
                for name, _ in drawn
            ],
        log:
            f"{RESULTS}/logs/plot/{job_name}.log",
        localrule: True
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=PLOT_MEM_MB,
            runtime=JOBS.plot_runtime(sum(len(drawn) for drawn in kinds.values())),
        params:
            kinds=[
                {
                    "figure": kind,
                    "wildcards": [values for _, values in drawn],
                    "template": str(FIGURES[kind].caption_file(REPORT_DIR)),
                }
                for kind, drawn in kinds.items()
            ],
        script:
            "../workflow/scripts/plot.py"
