# plot: one rule per kind of figure, generated from the case specs (h5sweep.cases.FIGURES);
# its one job draws every figure of the kind the sweep has (one PNG per case and filesystem)
# from the typed summary (or the reads, or the recommendation) into the report, each with its
# caption. One job per kind, not per figure: starting Python and the plotting packages takes
# longer than drawing a figure.


for figure in FIGURES.values():
    instances = figure_instances(SWEEP, figure)
    if not instances:
        continue

    rule:
        name:
            f"plot_{figure.kind}"
        input:
            **figure_inputs(figure),
        output:
            [
                report(
                    f"{RESULTS}/plots/{figure.name(**each)}.png",
                    caption=str(figure.caption_file(REPORT_DIR)),
                    category=figure.category,
                    labels=figure.report_labels(**each),
                )
                for each in instances
            ],
        log:
            f"{RESULTS}/logs/plot/{figure.kind}.log",
        localrule: True
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=PLOT_MEM_MB,
            runtime=PLOT_RUNTIME_MIN,
        params:
            figure=figure.kind,
            instances=instances,
        script:
            "../workflow/scripts/plot.py"
