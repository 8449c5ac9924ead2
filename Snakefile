# h5sweep: how does the layout of an HDF5 file behave on this storage, for these reads?
# generate -> query -> aggregate -> plot, over filesystems x layouts x compression.


from snakemake.utils import min_version

min_version("9.0")


# The default sweep, unless the user names config files with --configfile: a config file
# replaces the default instead of being merged into it, so a sweep runs exactly what its
# file says (--config key=value still overrides single keys).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


include: "rules/common.smk"


# The report opens on the answer: the recommendation once it exists, else the description.
report: JOBS.report_front_page()


include: "rules/generate.smk"
include: "rules/query.smk"
include: "rules/case_jobs.smk"
include: "rules/aggregate.smk"
include: "rules/recommend.smk"
include: "rules/plot.smk"


onstart:
    check_cluster_before_submitting()


rule all:
    default_target: True
    input:
        JOBS.final_outputs(),
