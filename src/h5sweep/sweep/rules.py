"""What the workflow's rules ask of a sweep: every path, input, job setting and resource, as
functions of a job's wildcards (and attempt), for ``rules/*.smk`` (:class:`RuleFunctions`,
made once in ``rules/common.smk``). Snakemake calls the bound methods as it would plain
functions; the rules stay declarations. Nothing here imports an I/O library."""

from __future__ import annotations

import os
from types import SimpleNamespace

from h5sweep import backends
from h5sweep.cases import CASE_SPECS, FIGURE_INPUTS, FIGURES, OWN_JOB_CASES, case_spec, plot_jobs
from h5sweep.storage import codecs
from h5sweep.storage import columns as C
from h5sweep.sweep import resources
from h5sweep.sweep import settings as job_settings

# a plot job's memory; its time: 5 minutes and one more per 10 figures
PLOT_MEM_MB = 1000


class RuleFunctions:
    """The sweep's rules' functions: ``sweep`` (the checked model), ``results``
    (``results/<sweep>``), whether a store's job also reads it (``reads_in_store_job``), the
    raced-out stores asked to be read to the end (``resumed``, h5sweep.sweep.resume)."""

    def __init__(self, sweep, results: str, reads_in_store_job: bool, resumed: dict, writes_in_one_job=()):
        self.sweep, self.results = sweep, results
        self.reads_in_store_job, self.resumed = reads_in_store_job, resumed
        # the filesystems whose stores one job writes (h5sweep.sweep.plan.writes_in_one_job)
        self.writes_in_one_job = frozenset(writes_in_one_job)
        # every figure the sweep draws, by plot job and kind: (name, its wildcards' values)
        self.plot_jobs = plot_jobs(sweep)

    # --- paths -----------------------------------------------------------------------------

    def store_path(self, fs, backend="{backend}", layout="{layout}", compression="{compression}") -> str:
        """The test store of one backend, layout and compression on filesystem ``fs``."""
        return backends.store_path(fs.directory, self.sweep.name, backend, layout, compression)

    def record_path(self, filesystem, backend, layout, compression, stage) -> str:
        return f"{self.results}/raw/{filesystem}/{backend}/{layout}/{compression}/{stage}.parquet"

    def store_of(self, wildcards) -> str:
        """The generated test store that a query (or a case's own) job reads."""
        fs = self.sweep.filesystem(wildcards.filesystem)
        return self.store_path(fs, wildcards.backend, wildcards.layout, wildcards.compression)

    def donor(self) -> list[str]:
        """The donor file the values come from, if any: an input of every job that makes data,
        so that changing it reruns them."""
        fill = self.sweep.dataset[C.FILL]
        return [fill["donor"]["path"]] if isinstance(fill, dict) else []

    def stores_on_filesystem(self, wildcards) -> list[str]:
        """Every test store of one filesystem, in the order of its job's settings."""
        fs = self.sweep.filesystem(wildcards.filesystem)
        return [self.store_path(fs, *self._store(tf)) for tf in self._on(fs.name)]

    def write_records_on_filesystem(self, wildcards) -> list[str]:
        """The write records of every test store of one filesystem, in the order of the write
        race's settings."""
        return self.generate_all_records(self.sweep.filesystem(wildcards.filesystem))

    def _on(self, filesystem: str) -> list:
        return [tf for tf in self.sweep.stores() if tf.filesystem.name == filesystem]

    @staticmethod
    def _store(tf) -> tuple[str, str, str]:
        return tf.backend.name, tf.layout.id, tf.compression.name

    # --- the generate (and store) jobs -------------------------------------------------------

    def generate_rule_name(self, fs, entry) -> str:
        """generate_on_<fs> for HDF5 (the name --set-threads uses), generate_<backend>_on_<fs>
        for the others; generate_query_... where the job reads the store too."""
        stage = "generate_query" if self.reads_in_store_job else "generate"
        if entry.name == backends.REFERENCE:
            return f"{stage}_on_{fs.name}"
        return f"{stage}_{entry.name}_on_{fs.name}"

    def generate_records(self, fs, entry) -> dict[str, str]:
        """A generate job's records: its writes, and where it reads the store too, its reads."""
        stages = ("write", "query") if self.reads_in_store_job else ("write",)
        names = {"write": "record", "query": "query"}
        return {names[s]: self.record_path(fs.name, entry.name, "{layout}", "{compression}", s) for s in stages}

    def generate_logs(self, fs, entry) -> dict[str, str]:
        """A generate job's log, and its query stage's where it reads the store too."""
        where = f"{fs.name}/{entry.name}/{{layout}}/{{compression}}.log"
        stages = ("generate", "query") if self.reads_in_store_job else ("generate",)
        return {stage: f"{self.results}/logs/{stage}/{where}" for stage in stages}

    def generate_params(self, fs, entry) -> dict:
        """A generate job's settings, and its read cases' where it reads the store too."""
        params = {"settings": self._settings(job_settings.generate_settings, fs, entry.name)}
        if self.reads_in_store_job:
            params["query"] = self._settings(job_settings.query_settings, fs, entry.name)
        return params

    @property
    def generate_script(self) -> str:
        name = "generate_query" if self.reads_in_store_job else "generate"
        return f"../workflow/scripts/{name}.py"

    def generate_job_mem_mb(self, wildcards, attempt):
        """A generate job's memory; where it reads the store too, the larger of the two stages'."""
        memory = self.generate_mem_mb(wildcards, attempt)
        if self.reads_in_store_job:
            memory = max(memory, self.query_mem_mb(wildcards, attempt))
        return memory

    def generate_job_runtime(self, backend: str):
        """A generate job's time limit; where it reads the store too, the two stages' added."""

        def runtime(wildcards, attempt):
            layout, compression = self.file_axes(wildcards)
            minutes = resources.generate_runtime_min(self.sweep, layout, compression, attempt, backend)
            if self.reads_in_store_job:
                minutes += resources.query_runtime_min(self.sweep, layout, compression, attempt, backend)
            return minutes

        return runtime

    # --- the write job of a filesystem whose stores one job writes --------------------------

    def stores_written_together(self, fs) -> list:
        """The test stores the one write job of ``fs`` writes, in the order of its settings."""
        return self._on(fs.name)

    def generate_all_records(self, fs) -> list[str]:
        return [self.record_path(fs.name, *self._store(tf), "write") for tf in self._on(fs.name)]

    def write_race_record(self, filesystem: str) -> str:
        return f"{self.results}/raw/{filesystem}/write-race.parquet"

    def raced_apart(self) -> str:
        """The filesystem wildcard's constraint of the write race's own job: the filesystems
        whose stores are not written by one job (which races them itself)."""
        apart = [fs.name for fs in self.sweep.filesystems if fs.name not in self.writes_in_one_job]
        return "|".join(apart) or "(?!)"

    def generate_all_log(self, fs) -> str:
        return f"{self.results}/logs/generate/{fs.name}/all-stores.log"

    def generate_all_settings(self, fs) -> dict:
        """Every store's generate settings, in the order of the job's outputs."""
        return job_settings.write_race_settings(self.sweep, fs)

    def generate_all_mem_mb(self, fs):
        """The largest of its stores' generate jobs' memory: one store is written at a time."""

        def memory(wildcards, attempt):
            layouts = {tf.layout.id: tf.layout for tf in self._on(fs.name)}
            most = max(resources.generate_mem_mb(self.sweep, layout, attempt) for layout in layouts.values())
            return max(most, resources.write_race_mem_mb(self.sweep, attempt)) if self.sweep.write_race else most

        return memory

    def generate_all_runtime(self, fs):
        """Its stores' generate jobs' time limits and the write race's, added."""

        def runtime(wildcards, attempt):
            race = resources.write_race_runtime_min(self.sweep, fs, attempt) if self.sweep.write_race else 0
            return race + sum(
                resources.generate_runtime_min(self.sweep, tf.layout, tf.compression, attempt, tf.backend.name)
                for tf in self._on(fs.name)
            )

        return runtime

    # --- each job's exact settings (h5sweep.sweep.settings), also its rerun trigger ---------

    def _settings(self, make, fs=None, backend=None):
        def settings(wildcards):
            on = fs or self.sweep.filesystem(wildcards.filesystem)
            return make(self.sweep, on, backend or wildcards.backend, wildcards.layout, wildcards.compression)

        return settings

    def query_settings(self, wildcards):
        return self._settings(job_settings.query_settings)(wildcards)

    def interleaved_query_settings(self, wildcards):
        return job_settings.interleaved_query_settings(self.sweep, self.sweep.filesystem(wildcards.filesystem))

    def resumed_query_settings(self, wildcards):
        store = (wildcards.backend, wildcards.layout, wildcards.compression)
        fs = self.sweep.filesystem(wildcards.filesystem)
        return job_settings.resumed_query_settings(self.sweep, fs, self.resumed[wildcards.filesystem][store])

    def write_race_settings(self, wildcards):
        return job_settings.write_race_settings(self.sweep, self.sweep.filesystem(wildcards.filesystem))

    def store_case_settings(self, wildcards):
        w = wildcards
        fs = self.sweep.filesystem(w.filesystem)
        return job_settings.store_case_settings(self.sweep, fs, w.backend, w.layout, w.compression, w.case)

    def filesystem_case_settings(self, wildcards):
        fs = self.sweep.filesystem(wildcards.filesystem)
        return job_settings.filesystem_case_settings(self.sweep, fs, wildcards.case)

    def recommend_settings(self) -> dict:
        return job_settings.recommend_settings(self.sweep)

    @staticmethod
    def own_job_cases(scope: str) -> str:
        """The wildcard constraint of the cases with a job of their own in ``scope``."""
        return "|".join(OWN_JOB_CASES[scope]) or "(?!)"

    # --- what the sweep ends with ------------------------------------------------------------

    def all_records(self) -> list[str]:
        """Every record the sweep's cases write, as their specs declare (h5sweep.kit.spec)."""
        sweep, records = self.sweep, []
        for spec in CASE_SPECS:
            if not spec.enabled(sweep):
                continue
            if spec.stage == "query" and sweep.interleave:
                records += [f"{self.results}/raw/{fs.name}/query-interleaved.parquet" for fs in sweep.filesystems]
                records += [
                    self.record_path(fs, *store, "resumed") for fs, stores in self.resumed.items() for store in stores
                ]
            elif spec.stage == "write" and sweep.write_race:  # the race's record holds every write
                records += [self.write_race_record(fs.name) for fs in sweep.filesystems]
            elif spec.scope == "store":
                records += [
                    self.record_path(tf.filesystem.name, *self._store(tf), spec.stage)
                    for tf in sweep.stores()
                    if spec.runs_on(tf)
                ]
            else:
                records += [f"{self.results}/raw/{fs.name}/{spec.stage}.parquet" for fs in sweep.filesystems]
        return records

    def figures(self) -> list[str]:
        """Every figure the sweep draws."""
        return [
            f"{self.results}/plots/{name}.png"
            for kinds in self.plot_jobs.values()
            for drawn in kinds.values()
            for name, _ in drawn
        ]

    def figure_caption(self, name: str) -> str:
        """A figure's caption, rendered by its plot job (absolute: the report reads it)."""
        return os.path.abspath(f"{self.results}/captions/{name}.rst")

    def plot_inputs(self, kinds) -> dict[str, str]:
        """A plot job's inputs: the tables its kinds of figure read."""
        return {name: f"{self.results}/{FIGURE_INPUTS[name]}" for kind in kinds for name in FIGURES[kind].inputs}

    @staticmethod
    def plot_runtime(figures: int) -> int:
        return 5 + figures // 10

    def report_front_page(self) -> str:
        """The report's first page: the decision sheet, then the recommendation (verdicts and
        rankings), once the sweep has written them, else the workflow's description."""
        front = os.path.abspath(f"{self.results}/recommendation.rst")
        return front if os.path.exists(front) else "workflow/report/workflow.rst"

    def final_outputs(self) -> list[str]:
        tables = ("measurements.parquet", "summary.parquet", "summary.csv", "decision.md")
        tables += ("recommendation.md", "recommendation.csv", "findings.md", "findings.csv")
        return [*(f"{self.results}/{name}" for name in tables), *self.figures()]

    # --- resources, from the config; scaled up by the attempt number on a retry --------------

    def file_axes(self, wildcards):
        return self.sweep.layout(wildcards.layout), codecs.parse_compression(wildcards.compression)

    def generate_mem_mb(self, wildcards, attempt):
        layout, _ = self.file_axes(wildcards)
        return resources.generate_mem_mb(self.sweep, layout, attempt)

    def query_mem_mb(self, wildcards, attempt):
        return resources.query_mem_mb(self.sweep, attempt)

    def query_runtime(self, wildcards, attempt):
        layout, compression = self.file_axes(wildcards)
        return resources.query_runtime_min(self.sweep, layout, compression, attempt, wildcards.backend)

    def interleaved_query_runtime(self, wildcards, attempt):
        fs = self.sweep.filesystem(wildcards.filesystem)
        return resources.interleaved_query_runtime_min(self.sweep, fs, attempt)

    def write_race_mem_mb(self, wildcards, attempt):
        return resources.write_race_mem_mb(self.sweep, attempt)

    def write_race_runtime(self, wildcards, attempt):
        return resources.write_race_runtime_min(self.sweep, self.sweep.filesystem(wildcards.filesystem), attempt)

    def aggregate_mem_mb(self, wildcards, attempt):
        return resources.aggregate_mem_mb(self.sweep, attempt)

    def aggregate_runtime(self, wildcards, attempt):
        return resources.aggregate_runtime_min(self.sweep, attempt)

    def case_threads(self, wildcards):
        return case_spec(wildcards.case).threads(self.sweep)

    def case_mem_mb(self, wildcards, attempt):
        return resources.case_mem_mb(self.sweep, case_spec(wildcards.case), attempt)

    def case_runtime(self, wildcards, attempt):
        spec = case_spec(wildcards.case)
        where = self.sweep.filesystem(wildcards.filesystem)
        if spec.scope == "store":
            layout, compression = self.file_axes(wildcards)
            backend = backends.spec(wildcards.backend)
            where = SimpleNamespace(layout=layout, compression=compression, backend=backend, filesystem=where)
        return resources.case_runtime_min(self.sweep, spec, where, attempt)

    # an MPI case's job: its tasks, their placement and memory, and how it starts its ranks

    def mpi_case_tasks(self, wildcards):
        return case_spec(wildcards.case).mpi_tasks(self.sweep)

    def mpi_case_tasks_per_node(self, wildcards):
        """Ranks per node where the case sets them (cases.parallel.tasks_per_node), else unset;
        the SLURM plugin takes --ntasks-per-node above 1 and --ntasks otherwise."""
        per_node = case_spec(wildcards.case).mpi_tasks_per_node(self.sweep)
        return per_node if per_node and per_node > 1 else None

    def mpi_slurm_tasks(self, wildcards):
        return None if self.mpi_case_tasks_per_node(wildcards) else self.mpi_case_tasks(wildcards)

    def mpi_case_nodes(self, wildcards):
        per_node = case_spec(wildcards.case).mpi_tasks_per_node(self.sweep)
        return -(-self.mpi_case_tasks(wildcards) // per_node) if per_node else None

    def mpi_case_mem_mb_per_task(self, wildcards, attempt):
        return -(-self.case_mem_mb(wildcards, attempt) // self.mpi_case_tasks(wildcards))

    def mpi_case_launch(self, wildcards):
        """The SLURM plugin's MPI mark: the job starts its ranks itself with srun (it refuses
        the mark on one task, which needs none)."""
        return "srun" if self.mpi_case_tasks(wildcards) > 1 else ""

    def run_problems(self) -> list[str]:
        """What stops a run before its first job: what a case's jobs need of the machine."""
        return [
            problem
            for spec in CASE_SPECS
            if spec.run_check and spec.enabled(self.sweep)
            for problem in [spec.run_check(self.sweep)]
            if problem
        ]
