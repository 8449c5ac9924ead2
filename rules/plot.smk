# plot: one job per kind of figure (h5sweep.cases.FIGURES, from the case specs) that the
# sweep draws (config `figures`), drawing every figure of the kind from the typed summary (or
# the reads, or the recommendation) into the report. Each figure's caption is rendered by the
# job for that figure's own case and filesystem (results/<sweep>/captions/).


for kind, drawn in DRAWN.items():
    figure = FIGURES[kind]

    rule:
        name:
            f"plot_{kind}"
        input:
            **figure_inputs(figure),
        output:
            figures=[
                report(
                    f"{RESULTS}/plots/{name}.png",
                    caption=figure_caption(name),
                    category=figure.category,
                    labels=figure.report_labels(values),
                )
                for name, values in drawn
            ],
            captions=[figure_caption(name) for name, _ in drawn],
        log:
            f"{RESULTS}/logs/plot/{kind}.log",
        localrule: True
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=PLOT_MEM_MB,
            runtime=plot_runtime(len(drawn)),
        params:
            figure=kind,
            wildcards=[values for _, values in drawn],
            template=str(figure.caption_file(REPORT_DIR)),
        script:
            "../workflow/scripts/plot.py"
