"""A case with a job of its own, by name (the `case` wildcard): on one test store or once
per filesystem."""

from h5sweep.measure.joblog import logged

with logged(snakemake.log[0]):
    # heavy imports inside the job's untimed section (h5sweep.measure.joblog.logged)
    from h5sweep.sweep.stages import run_case

    store = snakemake.input.get("store")
    run_case(snakemake.wildcards.case, snakemake.params.settings, snakemake.output.record, store)
