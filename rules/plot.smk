# plot: one rule per kind of figure, generated from the case specs (h5sweep.cases.FIGURES);
# each draws one PNG from the typed summary (or the reads, or the recommendation) into the
# report, with its caption.


for figure in FIGURES.values():

    rule:
        name:
            f"plot_{figure.kind}"
        input:
            **figure_inputs(figure),
        output:
            report(
                f"{RESULTS}/plots/{figure.pattern}.png",
                caption=str(figure.caption_file(REPORT_DIR)),
                category=figure.category,
                labels=figure.report_labels(),
            ),
        log:
            f"{RESULTS}/logs/plot/{figure.pattern}.log",
        localrule: True
        conda:
            "../workflow/envs/h5sweep.yaml"
        resources:
            mem_mb=PLOT_MEM_MB,
            runtime=PLOT_RUNTIME_MIN,
        params:
            figure=figure.kind,
        script:
            "../workflow/scripts/plot.py"
