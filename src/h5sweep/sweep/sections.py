"""The sweep's own top-level sections of the config, each declared once as a
:class:`h5sweep.storage.declared.Block` of settings (type, default, bounds, description):
:func:`h5sweep.sweep.config.load_schema` puts each in place of its stub in
``config/schema.yaml``, and ``config/README.md``'s key table follows from the schema. The code
reads these sections with their defaults filled in from here (``tests/test_declared.py`` finds
a default written again)."""

from __future__ import annotations

from h5sweep.measure import objective
from h5sweep.storage.declared import Block, Setting

RECOMMEND = Block(
    "recommend",
    "The recommendation (results/<sweep>/recommendation.md and .csv): the user's read mix, the statistic that "
    "matters and the limits a layout must meet. Changing only this section reruns only the recommendation.",
    (
        Setting(
            "weights",
            "object",
            {},
            "The read mix: how many reads of each case one unit of your work does, by case name (e.g. "
            "{spectra: 1000, slice: 10}); cases not named are not read. Empty: one read of every read case. "
            "The time objective adds up these reads' times.",
            {"additionalProperties": {"type": "number", "minimum": 0}},
        ),
        objective.SETTING,
        Setting(
            "statistic",
            "string",
            "first-access",
            "Which reads matter: first-access (each read right after the file was evicted and reopened, what "
            "a stateless service or a new process sees; reads of cold every) or sustained (reads of an open "
            "file after its first read; reads of cold first).",
            {"enum": ["first-access", "sustained"]},
        ),
        Setting(
            "max_file_ratio",
            ["number", "null"],
            None,
            "Largest file size allowed, relative to the raw data (e.g. 1.05); null is no limit.",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            "max_write_s",
            ["number", "null"],
            None,
            "Longest write-case median time allowed, in seconds; null is no limit.",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            "mixes",
            "object",
            {},
            "Other read mixes to decide for, by name (e.g. {browsing: {slice: 10}, analysis: {spectra: 1000, "
            "subcube: 10}}), each as weights are given: decision.md ranks the finished sweep for each from "
            "the reads it made (nothing is read again), and names the raced-out stores a mix could favour. "
            "`python -m h5sweep.whatif results/<sweep> --weights slice=10,spectra=1000` does the same for any"
            " mix.",
            {"additionalProperties": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}},
        ),
        Setting(
            "target_size",
            ["string", "number", "null"],
            None,
            'The size of the array you will store, e.g. "12 TB" or "800 GiB" (a number is bytes; units B, kB,'
            " MB, GB, TB, PB and KiB to PiB). decision.md gives each store's space at this size and says when"
            " the sweep ran smaller, and where reads came from memory that an array of this size would not "
            "fit in. Null: the dataset's own size.",
        ),
    ),
    optional=False,
)
SCORE = Block(
    "score",
    "The OpenMSI study's performance score: one point per criterion a layout meets. The ranking and the "
    "recommendation do not use it (recommend.objective does).",
    (
        Setting(
            "slice_median_s",
            "number",
            0.1,
            "Point if the slice median time is below this (s).",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            "spectra_median_s",
            "number",
            0.05,
            "Point if the spectra median time is below this (s).",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            "subcube_median_s",
            "number",
            0.002,
            "Point if the subcube median time is below this (s).",
            {"exclusiveMinimum": 0},
        ),
        Setting(
            "file_overhead",
            "number",
            0.05,
            "Point if the file is at most raw bytes x (1 + this).",
            {"minimum": 0},
        ),
        Setting(
            "figure",
            "boolean",
            False,
            "Draw score-<filesystem>, the study's bars of each layout's score (its form, full marks opaque).",
        ),
        Setting(
            "scale_to_selection",
            "boolean",
            True,
            "Scale each time threshold by the bytes the case selects over the study's reference selection "
            "(slice 500,000, spectra 5,000,000, subcube 50,000 bytes); false uses the thresholds as given.",
        ),
    ),
    optional=False,
)
# the top-level keys that are one setting each
TOP = (
    Setting(
        "sweep",
        "string",
        "demo",
        "Name of the sweep; all outputs go to results/<sweep>/.",
        {"pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$"},
    ),
    Setting(
        "policies",
        "array",
        ["random"],
        "Visiting policies of the read cases (each measured separately): random, aligned (random starts "
        "moved to chunk boundaries), localized (a random walk near the last selection), sweep "
        "(consecutive boxes in storage order, e.g. consecutive z-slabs).",
        {"minItems": 1, "items": {"type": "string"}},
    ),
    Setting(
        "check_disk",
        "boolean",
        True,
        "Refuse a sweep whose test files cannot fit on a filesystem at their peak (one file per job "
        "running at once, every file with interleave, plus the files still waiting for a job of their own"
        " such as scaling or parallel). Set to false to proceed anyway (--config check_disk=False).",
    ),
    Setting(
        "split_read_time",
        "boolean",
        False,
        "Also time the storage part of every read on its own, right after it and in the same cache state:"
        " the stored bytes of the chunks it touches fetched as they are (HDF5: a direct chunk read of "
        "each; Zarr: each chunk file read whole), nothing decoded or copied (columns storage_s and "
        "decode_copy_s = seconds - storage_s). Contiguous HDF5 files and Zarr shards are not split.",
    ),
    Setting(
        "interleave",
        "boolean",
        False,
        "Read every test store of a filesystem in one job, selection by selection in a seeded order, "
        "instead of one store after another: each layout's read of a selection is then seconds away from "
        "contiguous's read of it, so the machine's drift over minutes cancels in the paired ratios. Needs"
        " every store of the filesystem on disk at once (the plan and the disk check count it); false "
        "reads and removes one store at a time. Either way, cases read with cold: every take turns within"
        " the pass.",
    ),
    Setting(
        "figures",
        None,
        True,
        "Which figures the sweep draws (results/<sweep>/plots/): true for every figure its cases have, "
        "false for none (the tables, the recommendation and the findings are written either way), or a "
        "list of kinds of figure (e.g. [case_bars, heatmaps, mix]; a name that is not a kind is refused "
        "with the list of kinds). One job draws the figures that read the same tables (plot_summary, "
        "plot_summary_measurements, plot_recommendation).",
        {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}, "uniqueItems": True}]},
    ),
)
# the top-level sections declared here, each in the place its stub holds in config/schema.yaml
SECTIONS = (RECOMMEND, SCORE)
