"""The sweep's own top-level sections of the config, each declared once as a
:class:`h5sweep.storage.declared.Block` of settings (type, default, bounds, description):
:func:`h5sweep.sweep.config.load_schema` puts each in place of its stub in
``config/schema.yaml``, and ``config/README.md``'s key table follows from the schema. The code
reads these sections with their defaults filled in from here (``tests/test_declared.py`` finds
a default written again)."""

from __future__ import annotations

from h5sweep.backends import REFERENCE
from h5sweep.measure import objective
from h5sweep.storage.declared import Block, Setting

DATASET = Block(
    "dataset",
    "The array every test file stores.",
    (
        Setting(
            "shape",
            "array",
            [100, 100, 20000],
            "Dataset shape, rank 1 to 5: [x, y, z] (z the long m/z axis; the OpenMSI cases), [time, channels]"
            " (a recording; the cases whole, rows and column), or any array read by whole reads and boxes "
            "(e.g. [time, level, lat, lon]). With dataset.axes, the axes' sizes.",
            {"items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 5},
        ),
        Setting(
            "axes",
            "array",
            [],
            "The axes of the array by name, in storage order, e.g. [{name: time, size: 8760}, {name: lat, "
            "size: 181}, {name: lon, size: 360}]: their sizes are the shape, and boxes may give their size "
            "per axis by name ({time: all, lat: 1, lon: 1}). Without it (empty) the axes are named x, y, z "
            "(3-D), time, channels (2-D), or axis0, axis1, ...",
            {
                "maxItems": 5,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name", "size"],
                    "properties": {
                        "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "description": "The axis's name."},
                        "size": {"type": "integer", "minimum": 1, "description": "Its length."},
                    },
                },
            },
        ),
        Setting(
            "dtype",
            "string",
            "uint16",
            "Element type (numpy name).",
            {"enum": ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32", "float64"]},
        ),
        Setting(
            "fill",
            None,
            "synthetic",
            "Where the values come from. synthetic = MSI-like spectra generated from seed; chunk-index = each"
            " element holds the index of its chunk; {donor: {path, dataset}} = an existing HDF5 dataset or "
            "Zarr array of the dataset's rank, cropped or tiled to the shape and streamed into each store "
            "block by block (never read whole); its own chunk shape and codec are measured too, as the layout"
            " named donor.",
            {
                "oneOf": [
                    {"type": "string", "enum": ["synthetic", "chunk-index"]},
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["donor"],
                        "properties": {
                            "donor": {
                                "description": "The donor dataset.",
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["path", "dataset"],
                                "default": {},
                                "properties": {
                                    "path": {
                                        "type": "string",
                                        "description": "Path of the donor HDF5 file or Zarr store.",
                                        "default": "",
                                    },
                                    "dataset": {
                                        "type": "string",
                                        "description": "Path of the dataset (HDF5) or array (Zarr) inside it.",
                                        "default": "",
                                    },
                                },
                            }
                        },
                    },
                ]
            },
        ),
        Setting(
            "seed",
            "integer",
            0,
            "Seed of the synthetic values and of every case's randomized selections.",
            {"minimum": 0},
        ),
        Setting(
            "judge_synthetic_values",
            "boolean",
            False,
            "Judge the findings that depend on the values (a codec's ratio and speed: gzip-levels-size, "
            "gzip-levels-write, compression-slows-reads) on synthetic values (fill synthetic or chunk-index) "
            "too. false: they say not measured unless the values are a donor's, since values generated to "
            "compress like MSI data test the generator, not the data. true: they judge how the codecs behave "
            "on the generator's values, and their evidence says so. gzip4-ratio is judged on a donor's values"
            " only.",
        ),
        Setting(
            "name",
            "string",
            "data",
            "Name of the dataset inside each test file.",
            {"pattern": "^[A-Za-z0-9_]+$"},
        ),
    ),
    optional=False,
)
LAYOUTS = Block(
    "layouts",
    "The storage layouts to measure.",
    (
        Setting(
            "contiguous",
            "boolean",
            True,
            "Measure the contiguous layout (the reference of every ratio unless layouts.reference names another).",
        ),
        Setting(
            "reference",
            "string",
            "first",
            "The layout every read ratio is to (summary, figures, recommendation): a layout id (contiguous, "
            "chunked-16x16x256) or a shape's name, stored by the first backend (HDF5) with the first "
            "compression of the config. By default the config's first layout: contiguous where it is "
            "measured.",
        ),
        Setting(
            "chunks",
            "object",
            {},
            "Grid of chunk shapes m x m x n (every xy value with every z value).",
            {
                "additionalProperties": False,
                "properties": {
                    "xy": {
                        "description": "Chunk sizes m along x and y.",
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1},
                        "default": [],
                    },
                    "z": {
                        "description": "Chunk sizes n along z.",
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1},
                        "default": [],
                    },
                },
            },
        ),
        Setting(
            "auto",
            "boolean",
            False,
            "Also measure the chunk shape h5py picks by itself (chunks=True) for this dataset, named "
            "h5py-auto, so the recommendation can say how the default compares.",
        ),
        Setting(
            "orders",
            "array",
            ["xyz"],
            "Storage orders of the axes, each applied to every layout: xyz (as the data is given), zxy "
            "(transposed: z first, so each ion image is stored in one piece). Chunk shapes and selections are"
            " always given as (x, y, z).",
            {"minItems": 1, "items": {"type": "string"}},
        ),
        Setting(
            "shapes",
            "array",
            [],
            "Extra explicit chunk shapes, one size per axis of the dataset (any rank): [x, y, z], or {name, "
            "chunk: [x, y, z]} to give the shape a name in the summary and the figures (e.g. image-aligned).",
            {
                "items": {
                    "oneOf": [
                        {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 5},
                        {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["name", "chunk"],
                            "properties": {
                                "name": {
                                    "type": "string",
                                    "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                                    "description": "Name of the shape.",
                                    "default": "",
                                },
                                "chunk": {
                                    "type": "array",
                                    "description": "The chunk shape, one size per axis (e.g. [x, y, z]).",
                                    "items": {"type": "integer", "minimum": 1},
                                    "minItems": 1,
                                    "maxItems": 5,
                                    "default": [],
                                },
                            },
                        },
                    ]
                }
            },
        ),
        Setting(
            "pages",
            "array",
            [],
            "HDF5's paged aggregation: every layout of the grid (contiguous, chunk shapes, auto) also written"
            ' with its file space managed in pages of each size (fs_strategy page, e.g. ["8 MiB"]): the '
            "file's metadata gathered in pages of their own, so that a reader on an object store fetches it "
            "in a few requests, and read with a page buffer where the object store's reads set one "
            "(filesystems.<name>.s3.reads). A size is a number of bytes or a number and a unit, at least 512 "
            "bytes. Backends that write no HDF5 file skip these layouts; the parallel case does not run them.",
            {"items": {"oneOf": [{"type": "integer", "minimum": 512}, {"type": "string"}]}},
        ),
        Setting(
            "shards",
            "array",
            [],
            "Sharded Zarr layouts (backends with zarr): chunks of a shape stored together, one shard per "
            "file, each shard a multiple of its chunk shape, e.g. {chunk: [4, 4, 256], shard: [16, 16, "
            "2048]}. Reads still decode chunk by chunk; a shard file holds an index of its chunks at its end."
            " HDF5 stores no shards.",
            {
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["chunk", "shard"],
                    "properties": {
                        "name": {
                            "type": "string",
                            "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                            "description": "Name of the layout.",
                            "default": "",
                        },
                        "chunk": {
                            "type": "array",
                            "description": "The chunk shape, as the dataset's axes.",
                            "items": {"type": "integer", "minimum": 1},
                            "minItems": 1,
                            "maxItems": 5,
                        },
                        "shard": {
                            "type": "array",
                            "description": "The shard shape, a multiple of the chunk shape along every axis.",
                            "items": {"type": "integer", "minimum": 1},
                            "minItems": 1,
                            "maxItems": 5,
                        },
                    },
                }
            },
        ),
    ),
    optional=False,
)
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
            "`python -m h5sweep.compare.whatif results/<sweep> --weights slice=10,spectra=1000` does the same for any"
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
# the top-level keys that are one setting each; load_schema completes compression's
# description (the codecs' names), the backends' names (the registry), a filesystem's keys
# (storage.filesystems.FILESYSTEM), each case's block and the race's keys (measure.engine.race)
TOP = (
    Setting(
        "compression",
        "array",
        ["none"],
        "generated",  # load_schema writes it with the codecs' names (h5sweep.storage.codecs)
        {"minItems": 1, "items": {"type": "string"}},
    ),
    Setting(
        "backends",
        "array",
        [REFERENCE],
        "Storage backends that write and read every test store, each a store per layout and compression "
        "(column backend): hdf5 (one file per store, through h5py); zarr (a Zarr v3 directory store, one "
        "file per chunk, read by the readers of zarr.readers); raw (the array as a plain .npy file, read "
        "with one pread per contiguous run: the no-library floor). Zarr stores the chunked layouts and "
        "the codecs it shares with HDF5 (none, gzip-N, blosc-*, zstd-N); raw stores the contiguous layout"
        " uncompressed only. hdf5 must be among them, as every ratio is to the contiguous HDF5 file.",
        {"minItems": 1, "items": {"type": "string"}},
    ),
    Setting(
        "filesystems",
        "object",
        {},
        "Filesystems to measure: a name and the directory where its test files go, or {path, required}; a"
        " filesystem with required false is skipped when its directory cannot be created or written on "
        "this machine.",
        {"minProperties": 1, "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "object"}]}},
    ),
    Setting(
        "cases",
        "object",
        {},
        "Access cases to time; a read case left out is not run.",
        {"additionalProperties": False, "properties": {}},
    ),
    Setting(
        "race",
        None,
        True,
        "Race the stores of an interleaved pass (interleave: true): after each look (a few rounds of "
        "selections, from min_rounds on), a store whose paired 95% interval of the recommendation's "
        "objective over the current best's lies wholly above margin is not read further, and the "
        "recommendation and figures say it was raced out, at which round and by at least how much. Writes"
        " race too, interleaved or not: every store writes cases.write.min_repeats times, and only those "
        "whose write time is not yet separated (by margin, at alpha) from the best store's of their "
        "variant write more, up to repeats. false reads and writes every store to the end; an object sets"
        " the rule. The reference store is always read to the end. docs/method.md states the rules and "
        "their error bounds.",
        {"oneOf": [{"type": "boolean"}, {"type": "object", "additionalProperties": False, "properties": {}}]},
    ),
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
        " such as scaling or parallel, and where the filesystem rests after removals, the repeats a write"
        " keeps and the files the write race keeps). Set to false to proceed anyway (--config"
        " check_disk=False).",
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
SECTIONS = (DATASET, LAYOUTS, RECOMMEND, SCORE)
