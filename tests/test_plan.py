"""The plan: time and disk of a sweep before it runs, and what its jobs ask of SLURM."""

import re
from pathlib import Path

import pytest
import yaml

from h5sweep.cases import CASE_SPECS, figure_names, figures_by_kind, plot_jobs
from h5sweep.cases.iosize import timed_seconds as iosize_seconds
from h5sweep.measure import rates, settle
from h5sweep.measure.rates import MAKE_DATA_BYTES_PER_S, SECONDS_PER_JOB
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.targets import s3 as s3_target
from h5sweep.sweep.model import load_sweep
from h5sweep.sweep.plan import file_bytes_bound, make_plan, measured_rows, race_kept_bytes, scratch_bytes

REPO = Path(__file__).resolve().parents[1]


def sweep_of(name):
    return load_sweep(yaml.safe_load((REPO / "config" / name).read_text()))


def test_peak_disk_is_jobs_at_once_times_the_largest_file_and_its_kept_repeats():
    sweep = sweep_of("studies/openmsi/chunking.yaml")
    plan = make_plan(sweep, parallel_jobs=4)
    largest = max(file_bytes_bound(sweep, layout) for layout in sweep.layouts)
    # 32 x 32 chunks allocate 128 x 128 x (100,352) elements: the largest file
    assert largest >= 128 * 128 * 100_352 * 2
    # each running job: its store, and where the filesystem rests after removals, the write
    # case's earlier repeats it keeps until its last
    assert sweep.write_case.repeats == 3
    for fs, configured in zip(plan.filesystems, sweep.filesystems, strict=True):
        rests = settle.settle_seconds(configured) > 0
        at_once = 4 * (sweep.write_case.repeats if rests else 1)
        assert fs.largest_file_bytes == largest
        # and there, the write race's files, kept until its variant's race ends: at most every
        # extra repeat of every store, at most a quarter of the free space and one file more
        bounds = [file_bytes_bound(sweep, tf.layout) for tf in sweep.stores() if tf.filesystem is configured]
        extra = sweep.write_case.repeats - sweep.write_case.min_repeats
        kept = race_kept_bytes(sweep, bounds, fs.free_bytes - sum(bounds)) if rests else 0
        assert 0 < kept <= min(extra * sum(bounds), fs.free_bytes / 4 + largest) or not rests
        assert at_once * largest + kept <= fs.peak_bytes < at_once * largest + kept + 1e9
    assert sweep.write_race is not None  # its writes race: one more job per filesystem
    # locally a store's job writes it and reads it; on a scheduler, a job each
    assert plan.jobs == len(sweep.stores()) + len(sweep.filesystems)
    assert make_plan(sweep, 4, cluster=True).jobs == 2 * len(sweep.stores()) + len(sweep.filesystems)
    assert make_plan(sweep, parallel_jobs=8).filesystems[0].peak_bytes > plan.filesystems[0].peak_bytes


def test_wall_time_shrinks_with_parallel_jobs_and_is_said():
    sweep = sweep_of("config.yaml")
    one, two = make_plan(sweep, 1), make_plan(sweep, 2)
    assert one.job_seconds == two.job_seconds and one.timed_seconds == min(one.timed_seconds, one.job_seconds)
    # two jobs share the cores, but timed windows run one at a time: a plan, not a measurement
    assert one.measuring_wall_seconds == one.job_seconds
    assert two.measuring_wall_seconds == max(one.job_seconds / 2, one.timed_seconds)
    # then the aggregate alone, and the recommendation and a plot job per set of tables side by side
    plots = plot_jobs(sweep)
    assert set(plots) == {"summary", "summary_measurements", "recommendation"}
    assert two.finishing_jobs == len(plots) + 2  # the aggregate (with the findings), the recommendation
    drawn = {kind: n for kinds in plots.values() for kind, n in kinds.items()}
    assert drawn == figures_by_kind(sweep) and sum(map(len, drawn.values())) == len(figure_names(sweep))
    stores = len(sweep.stores())
    drawing = rates.recommend_seconds(stores) + sum(
        rates.figure_seconds(sum(map(len, kinds.values())), stores) for kinds in plots.values()
    )
    assert two.finishing_seconds == pytest.approx(two.aggregate_seconds + drawing)
    rows = measured_rows(sweep)
    assert two.aggregate_seconds == pytest.approx(rates.aggregate_seconds(rows, stores) + rates.findings_seconds())
    assert two.wall_seconds == pytest.approx(
        rates.WORKFLOW_START_S + two.measuring_wall_seconds + two.aggregate_seconds + drawing / 2
    )
    assert two.total_job_seconds == pytest.approx(two.job_seconds + two.finishing_seconds)
    text = two.describe()
    assert "measuring jobs" in text and "peak disk" in text and "disk (results/scratch)" in text
    assert f"{len(plots) + 2} jobs for the tables and figures" in text


def test_store_jobs_run_whole_on_the_cores_and_a_write_race_waits_for_them_with_its_rests(tmp_path):
    """Three store jobs on two cores take two of them one after the other (not one and a
    half), and a filesystem's write race, which starts once its stores are written, makes the
    values again and rests before each variant after the first, where the filesystem rests;
    the rests of jobs on one device follow one another."""
    from h5sweep.sweep.plan import CHAINED_REST_SHARE, longest_first_makespan

    assert longest_first_makespan([10.0, 10.0, 10.0], 2) == 20.0
    assert longest_first_makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0
    assert longest_first_makespan([], 2) == 0.0
    config = yaml.safe_load((REPO / "tests" / "configs" / "write-variants.yaml").read_text())
    config["filesystems"] = {"disk": {"path": str(tmp_path / "disk"), "settle_s": 2}}
    sweep = load_sweep(config)
    variants = len(sweep.write_case.variants())
    assert variants == 6 and sweep.write_race is not None and len(sweep.stores()) == 3
    one, two = make_plan(sweep, 1), make_plan(sweep, 2)
    # each store in a job of its own, then the race's job on the one filesystem
    assert two.jobs == 4 and len(two.writing_jobs) == 3
    assert two.race_jobs == [pytest.approx(SECONDS_PER_JOB + sweep.raw_bytes / MAKE_DATA_BYTES_PER_S + 2 * 5)]
    # every measuring job's seconds counted once: one core runs them one after another
    assert one.phased_seconds == pytest.approx(one.job_seconds)
    assert one.measuring_wall_seconds == pytest.approx(one.job_seconds)
    assert two.phased_seconds >= 2 * min(two.writing_jobs) + two.race_jobs[0] > two.job_seconds / 2
    # side by side on the one device, a job's removal restarts the others' rests: the rests of
    # the three store jobs and of the race follow one another (5 each, of 2 s)
    assert two.device_rest_seconds == pytest.approx((3 + 1) * 5 * 2)
    assert two.measuring_wall_seconds == pytest.approx(max(two.phased_seconds, two.device_rest_seconds))
    # and the two store jobs that run at once lengthen each other's rests by half of theirs
    assert two.job_seconds - one.job_seconds == pytest.approx(CHAINED_REST_SHARE * 2 * 5 * 2)
    assert make_plan(sweep, 2, cluster=True).device_rest_seconds == 0  # each job a node of its own
    # no rest, no race rests: the race's job makes the values and writes
    calm = load_sweep({**config, "filesystems": {"disk": {"path": str(tmp_path / "disk"), "settle_s": 0}}})
    assert make_plan(calm, 2).device_rest_seconds == 0
    assert make_plan(calm, 2).race_jobs == [pytest.approx(SECONDS_PER_JOB + calm.raw_bytes / MAKE_DATA_BYTES_PER_S)]


def test_once_per_filesystem_cases_count_in_jobs_time_and_disk(tmp_path):
    config = yaml.safe_load((REPO / "tests" / "configs" / "iosize.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    with_iosize = load_sweep(config)
    without = load_sweep({**config, "cases": {"write": {"repeats": 1}}})
    plan, base = make_plan(with_iosize, 1), make_plan(without, 1)
    assert plan.jobs == base.jobs + 1  # one I/O size job on the one filesystem
    # the model's estimate of its timed work, not a measurement; each write after the disk's rest
    rest = settle.settle_seconds(with_iosize.filesystems[0])
    assert rest == settle.default_settle_s(str(tmp_path))
    iosize = iosize_seconds(with_iosize) + 2 * len(with_iosize.iosize.sizes) * with_iosize.iosize.repeats * rest
    assert iosize and plan.timed_seconds == pytest.approx(base.timed_seconds + iosize)
    setup = SECONDS_PER_JOB + with_iosize.raw_bytes / MAKE_DATA_BYTES_PER_S
    assert plan.job_seconds == pytest.approx(base.job_seconds + setup + iosize)
    # its raw and HDF5 scratch files, beside a test store
    assert plan.filesystems[0].peak_bytes == base.filesystems[0].peak_bytes + 2 * with_iosize.raw_bytes


def test_every_case_spec_has_a_cost_model_and_own_jobs_their_resources(monkeypatch):
    import sys

    from h5sweep.cases import CASE_SPECS

    monkeypatch.setenv("H5SWEEP_MPI_PYTHON", sys.executable)  # the parallel case's check: a Python exists
    costed = set()
    for path in (
        "config/config.yaml",
        "tests/configs/scaling.yaml",
        "tests/configs/metadata.yaml",
        "tests/configs/iosize.yaml",
        "tests/configs/parallel.yaml",
    ):
        sweep = load_sweep(yaml.safe_load((REPO / path).read_text()))
        for spec in (spec for spec in CASE_SPECS if spec.enabled(sweep)):
            where = sweep.stores()[0] if spec.scope == "store" else sweep.filesystems[0]
            job, timed = spec.job_cost(sweep, where, True)
            assert job > timed >= 0
            if spec.has_own_job:
                assert spec.mem_mb(sweep) > 256 and spec.threads(sweep) >= 1
            costed.add(spec.name)
    assert costed == {spec.name for spec in CASE_SPECS}


def test_interleaved_reads_hold_every_store_of_a_filesystem_and_run_one_job_each():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    one_at_a_time = load_sweep({**config, "interleave": False, "race": False})
    interleaved = load_sweep({**config, "interleave": True, "race": False})
    # one query job per store (as on a scheduler: locally the store's own job reads it)
    a, b = make_plan(one_at_a_time, 2, cluster=True), make_plan(interleaved, 2, cluster=True)
    stores = len(interleaved.stores())
    filesystems = len(interleaved.filesystems)
    # locally, one job per filesystem writes them all too
    assert make_plan(interleaved, 2).jobs == b.jobs - (stores - filesystems)
    assert a.jobs - b.jobs == stores - filesystems  # one query job per filesystem instead of per store
    # the same reads, and a Python start per job that is no more
    assert b.job_seconds == pytest.approx(a.job_seconds - (stores - filesystems) * rates.SECONDS_PER_JOB)
    assert b.timed_seconds == pytest.approx(a.timed_seconds)
    for fs_a, fs_b in zip(a.filesystems, b.filesystems, strict=True):
        mine = [tf for tf in interleaved.stores() if tf.filesystem.name == fs_b.name]
        everything = sum(file_bytes_bound(interleaved, tf.layout) for tf in mine)
        copies = mine[0].filesystem.read_copies  # each store's read copies exist with it
        assert fs_b.peak_bytes - fs_a.peak_bytes == copies * (everything - 2 * fs_a.largest_file_bytes)


def test_a_raced_sweep_is_planned_with_the_reads_and_writes_its_races_leave():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raced, whole = load_sweep(config), load_sweep({**config, "race": False})
    a, b = make_plan(raced, 2), make_plan(whole, 2)
    # on a scheduler a write race job per filesystem; locally the job writing its stores races them
    assert make_plan(raced, 2, cluster=True).jobs == make_plan(whole, 2, cluster=True).jobs + len(raced.filesystems)
    assert a.jobs == b.jobs
    stores = [tf for tf in raced.stores() if tf.filesystem.name == "disk"]
    write, read = (next(s for s in CASE_SPECS if s.name == name) for name in ("write", "read"))
    # the best of 19 stores writes its 3 repeats, every other once and the rest of the 3 a
    # quarter of the time: 1.5 of 3
    _, full = write.job_cost(whole, stores[0], True)
    written = (3 + 18 * 1.5) / (19 * 3)
    assert rates.write_race_share(1, 3, 19) == pytest.approx(written) and rates.write_race_share(1, 3, 1) == 1
    # what the races keep falls on the fastest stores: the write race's 11 repeats beyond the
    # minimum (57 x 0.526 - 19) on the stores of least write time, 2 each (the last 1); the
    # pass's reads to the end on the reference, the fastest other store and the fastest compressed
    reads = sorted(stores, key=lambda tf: read.job_cost(whole, tf, True)[1])
    writes = sorted(stores, key=lambda tf: write.job_cost(whole, tf, True)[1])
    reference = [tf for tf in stores if (tf.layout.id, tf.compression.name) == ("contiguous", "none")]
    others = [tf for tf in reads if tf not in reference]
    kept = {id(tf) for tf in [*reference, others[0], next(tf for tf in others if not tf.compression.is_none)]}
    assert len(kept) == 3
    extra = [2, 2, 2, 2, 2, 1] + [0] * 13
    assert sum(extra) == pytest.approx(19 * 3 * written - 19)
    # a raced-out store reads its first 8 rounds of 50 and half a look of 5 more
    saved_reads = sum(read.job_cost(whole, tf, True)[1] * (0 if id(tf) in kept else 1 - 10.5 / 50) for tf in stores)
    saved_writes = sum(write.job_cost(whole, tf, True)[1] * (2 - n) / 3 for tf, n in zip(writes, extra, strict=True))
    disk_only = {"disk": load_sweep({**config, "filesystems": {"disk": config["filesystems"]["disk"]}})}
    raced_disk = make_plan(disk_only["disk"], 2)
    whole_disk = make_plan(
        load_sweep({**config, "race": False, "filesystems": {"disk": config["filesystems"]["disk"]}}), 2
    )
    assert whole_disk.timed_seconds - raced_disk.timed_seconds == pytest.approx(saved_reads + saved_writes)
    assert full > 0 and a.wall_seconds < b.wall_seconds


def test_stores_that_wait_for_a_job_of_their_own_count_in_the_peak_when_read_one_at_a_time():
    """A store a scaling or MPI job reads is kept after its query job until that job has run:
    one store per running job is not a bound then; every such store at once is."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "scaling.yaml").read_text())
    # in memory: no rest after removals, and not on the results' device
    config.update(interleave=False, filesystems={"memory": "/dev/shm/h5sweep-plan"})
    with_scaling = load_sweep(config)
    without = load_sweep({**config, "cases": {k: v for k, v in config["cases"].items() if k != "scaling"}})
    assert with_scaling.scaling is not None and without.scaling is None
    (fs,), (fs_base,) = make_plan(with_scaling, 1).filesystems, make_plan(without, 1).filesystems
    waiting = sum(file_bytes_bound(with_scaling, tf.layout) for tf in with_scaling.stores())
    assert len(with_scaling.stores()) == 3 and fs.largest_file_bytes == fs_base.largest_file_bytes
    assert fs.peak_bytes - scratch_bytes(with_scaling) == fs_base.peak_bytes - scratch_bytes(without) + waiting


def test_each_write_strategy_is_priced_from_its_calls_and_chunk_recompressions():
    """A spectrum per call writes a sliver of every chunk of its column: where the chunk cache
    cannot hold the column, every call re-encodes each chunk it touches (counted: spectra x
    chunks per column), which the plan prices; the chunk strategy compresses each chunk once."""
    from h5sweep.measure import rates
    from h5sweep.storage.codecs import parse_compression
    from h5sweep.storage.layouts import Layout

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["cases"]["write"] = {"repeats": 1, "strategies": ["chunk", "spectrum", "block"]}
    sweep = load_sweep(config, probe=False)
    layout, gzip = Layout((16, 16, 256)), parse_compression("gzip-4")
    assert rates.write_calls(sweep, layout, "spectrum") == 100 * 100
    assert rates.write_calls(sweep, layout, "block") == 7 * 7
    assert rates.write_calls(sweep, layout, "chunk") == layout.n_chunks(sweep.shape)
    chunk = rates.write_seconds(sweep, layout, gzip, "chunk")
    spectrum = rates.write_seconds(sweep, layout, gzip, "spectrum", cache_bytes=1 << 20)
    held = rates.write_seconds(sweep, layout, gzip, "spectrum", cache_bytes=1 << 30)  # holds a column
    column = sweep.shape[2] // 256
    chunk_bytes = 16 * 16 * 256 * 2
    rewrites = 100 * 100 * column - layout.n_chunks(sweep.shape)
    per_rewrite = chunk_bytes / rates.read_rate(gzip) + chunk_bytes / rates.write_rate(gzip)
    assert spectrum - held == pytest.approx(rewrites * per_rewrite)
    assert held - chunk == pytest.approx((100 * 100 - layout.n_chunks(sweep.shape)) * rates.SECONDS_PER_WRITE_CALL)


def test_a_generate_job_asks_twice_its_plan_and_a_retry_the_time_its_write_limits_allow():
    """The first ask is twice the planned time (at least the floor); a job the scheduler
    stopped is resubmitted asking at least what its writes may take before their own limits
    (a stopped write is recorded, a killed job loses its finished writes)."""
    from h5sweep.cases.write import SPEC as WRITE
    from h5sweep.sweep import resources

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["cases"]["write"] = {"repeats": 2, "strategies": ["chunk", "spectrum"], "limit_s": 600}
    sweep = load_sweep(config, probe=False)
    store = next(tf for tf in sweep.stores() if tf.layout == sweep.layouts[-1] and tf.compression.is_none)
    layout, compression = store.layout, store.compression
    planned = WRITE.job_cost(sweep, store, True)[0]
    first = resources.generate_runtime_min(sweep, layout, compression)
    assert first <= 2 * planned / 60 + resources.MIN_RUNTIME_MIN
    assert resources.generate_runtime_min(sweep, layout, compression, attempt=2) >= 2 * 2 * 600 / 60
    config["cases"]["write"]["limit_s"] = 1  # limits shorter than the plan: a retry asks attempt x the first
    sweep = load_sweep(config, probe=False)
    assert resources.generate_runtime_min(sweep, layout, compression, attempt=2) == 2 * first


STUDY_CONFIGS = sorted((REPO / "config" / "studies").glob("*/*.yaml"))


@pytest.mark.parametrize("path", STUDY_CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_job_asks_slurm_more_than_twice_its_planned_time(path):
    from h5sweep.sweep import resources

    sweep = load_sweep(yaml.safe_load(path.read_text()), probe=False)
    asks = resources.slurm_asks(sweep)
    assert asks and {"generate"} <= {a.rule for a in asks}
    for ask in asks:
        assert ask.runtime_min <= 2 * ask.planned_s / 60 + resources.MIN_RUNTIME_MIN, ask.describe()


def test_the_executor_comes_from_the_command_line_or_its_profile(tmp_path):
    from h5sweep.sweep.cluster import executor_of

    assert executor_of(["snakemake", "-n"], {}, str(REPO)) == "local"
    assert executor_of(["snakemake", "--profile", "profiles/slurm", "-n"], {}, str(REPO)) == "slurm"
    assert executor_of(["snakemake", "--profile=profiles/default"], {}, str(REPO)) == "local"
    assert executor_of(["snakemake", "--executor", "slurm"], {}, str(REPO)) == "slurm"
    assert executor_of(["snakemake"], {"SNAKEMAKE_PROFILE": "profiles/slurm"}, str(REPO)) == "slurm"


@pytest.mark.workflow
def test_a_dry_run_with_the_slurm_profile_prints_what_each_job_asks(workflow):
    dry = workflow.run(
        "-n", "--profile", "profiles/slurm", "--configfile", "config/studies/folk-choi/origdoq.yaml", check=True
    )
    text = dry.stdout + dry.stderr
    assert "h5sweep on SLURM: 6 measuring jobs" in text
    parallel = re.findall(r"measure_parallel \S+: (\d+) min \(planned ([\d.]+) min\), \d+ MB, 2 tasks", text)
    assert len(parallel) == 2 and all(int(m) <= 2 * float(p) + 5 for m, p in parallel)


def test_under_a_scheduler_the_mpi_jobs_are_planned_side_by_side():
    """Locally an MPI job takes every core and runs alone; submitted to SLURM each job is an
    allocation of its own, so the plan's wall time is the longest job's where the job limit
    lets them all run at once."""
    from h5sweep.cases.parallel import SPEC

    sweep = load_sweep(
        yaml.safe_load((REPO / "config" / "studies" / "folk-choi" / "bigdoq.yaml").read_text()), probe=False
    )
    local, slurm = make_plan(sweep, 2), make_plan(sweep, 10, cluster=True)
    mpi = [SPEC.job_cost(sweep, store, True)[0] for store in sweep.stores() if SPEC.runs_on(store)]
    assert local.exclusive_seconds == pytest.approx(sum(mpi))  # one after another, alone
    assert slurm.measuring_wall_seconds == pytest.approx(max(mpi))  # side by side
    # the same work; locally a store's writes and reads are one job (one Python start)
    stores = len(sweep.stores())
    assert slurm.job_seconds == pytest.approx(local.job_seconds + stores * rates.SECONDS_PER_JOB)
    assert slurm.jobs == local.jobs + stores


def test_each_kind_of_figure_is_drawn_by_the_job_of_its_tables_and_the_config_chooses_the_kinds(tmp_path):
    """A plot job per set of tables draws each figure of its kinds, named with its case and
    filesystem; the config's ``figures`` draws every kind, none, or the ones listed, and
    refuses an unknown one."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk"), "tmpfs": str(tmp_path / "other")}
    kinds = figures_by_kind(load_sweep(config))
    assert ("bars-slice-tmpfs", {"case": "slice", "filesystem": "tmpfs"}) in kinds["case_bars"]
    assert len(kinds["case_bars"]) == len(kinds["heatmaps"]) == 6 and kinds["file_sizes"] == [("file-sizes", {})]
    assert ("mix-disk", {"filesystem": "disk"}) in kinds["mix"]
    names = [name for drawn in kinds.values() for name, _ in drawn]
    assert len(names) == len(set(names)) == len(figure_names(load_sweep(config)))

    assert figures_by_kind(load_sweep({**config, "figures": False})) == {}
    chosen = figures_by_kind(load_sweep({**config, "figures": ["mix", "heatmaps"]}))
    assert chosen == {"heatmaps": kinds["heatmaps"], "mix": kinds["mix"]}
    chosen_jobs = plot_jobs(load_sweep({**config, "figures": ["mix", "heatmaps"]}))
    assert chosen_jobs == {"summary": {"heatmaps": kinds["heatmaps"]}, "recommendation": {"mix": kinds["mix"]}}
    with pytest.raises(ConfigError, match="figures.*'bars'.*not a kind of figure.*case_bars"):
        load_sweep({**config, "figures": ["mix", "bars"]})


def test_locally_a_stores_job_reads_it_unless_the_reads_are_interleaved():
    """One Python start per store instead of two: locally, where stores are read one at a time;
    not on a scheduler (two jobs in one allocation), not interleaved (a job per filesystem
    reads every store)."""
    from h5sweep.sweep.plan import reads_in_store_job

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    one_at_a_time = load_sweep({**config, "interleave": False})
    assert reads_in_store_job(one_at_a_time, cluster=False)
    assert not reads_in_store_job(one_at_a_time, cluster=True)
    assert not reads_in_store_job(load_sweep({**config, "interleave": True}), cluster=False)
    stores = len(one_at_a_time.stores())
    local, cluster = make_plan(one_at_a_time, 2), make_plan(one_at_a_time, 2, cluster=True)
    assert cluster.jobs - local.jobs == stores
    assert cluster.timed_seconds == pytest.approx(local.timed_seconds)  # the same reads


def test_locally_one_job_writes_a_filesystems_small_stores_where_one_job_reads_them():
    """Interleaved, locally, on a directory, for stores of at most a GiB: one write job per
    filesystem (its stores' Python starts and loads of the values made once). Not on a
    scheduler, not one store at a time, not for larger stores, not on an object store."""
    from h5sweep.sweep.plan import ONE_WRITE_JOB_BYTES, writes_in_one_job

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    interleaved = load_sweep({**config, "interleave": True})
    disk = interleaved.filesystems[0]
    assert writes_in_one_job(interleaved, disk, cluster=False)
    assert not writes_in_one_job(interleaved, disk, cluster=True)
    assert not writes_in_one_job(load_sweep({**config, "interleave": False}), disk, cluster=False)
    z = ONE_WRITE_JOB_BYTES // (16 * 16 * 2) + 1  # 16 x 16 x z uint16: a plane more than it holds
    large = load_sweep({**config, "dataset": {**config["dataset"], "shape": [16, 16, z]}})
    assert not writes_in_one_job(large, large.filesystems[0], cluster=False)
    stores = len([tf for tf in interleaved.stores() if tf.filesystem.name == disk.name])
    local, cluster = make_plan(interleaved, 2), make_plan(interleaved, 2, cluster=True)
    merged = sum(len([tf for tf in interleaved.stores() if tf.filesystem is fs]) - 1 for fs in interleaved.filesystems)
    races = len(interleaved.filesystems)  # on a scheduler, the write race's own jobs
    assert stores > 1 and cluster.jobs - local.jobs == merged + races
    # each race job makes the values again (one variant: no rest between variants)
    assert len(interleaved.write_case.variants()) == 1
    again = races * interleaved.raw_bytes / MAKE_DATA_BYTES_PER_S
    assert cluster.job_seconds - local.job_seconds == pytest.approx((merged + races) * SECONDS_PER_JOB + again)
    assert cluster.timed_seconds == pytest.approx(local.timed_seconds)  # the same writes and reads


def _plan_cli(*args, cwd=REPO):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "h5sweep.sweep", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_the_plan_command_says_the_plan_the_workflow_computes_and_refuses_what_it_refuses(tmp_path):
    """``python -m h5sweep.sweep`` prints the plan of the same sweep at the same cores as the
    workflow computes it, exits 2 naming the key of an invalid config and 1 with the disk's
    refusal for a sweep that cannot fit."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    said = _plan_cli("--configfile", str(path), "--cores", "3", "-q")
    assert said.returncode == 0, said.stderr
    expected = make_plan(load_sweep(config), 3).describe()
    assert said.stdout.splitlines()[0] == expected.splitlines()[0]
    assert "with 3 at once" in said.stdout and said.stderr == ""

    config["layouts"]["chunks"]["xy"] = [2, "five"]
    path.write_text(yaml.safe_dump(config))
    bad = _plan_cli("--configfile", str(path))
    assert bad.returncode == 2 and "layouts.chunks.xy[1]" in bad.stderr and "five" in bad.stderr

    too_big = _plan_cli(
        "--configfile", str(path), "--config", "layouts.chunks.xy=[2, 5]", "dataset.shape=[4000, 4000, 100000]"
    )
    assert too_big.returncode == 1, too_big.stderr
    assert re.search(r"not enough disk on filesystem disk \(.*/disk\)", too_big.stderr)
    assert _plan_cli("--configfile", str(path), "--cores", "two").returncode == 2


def test_on_an_object_store_the_plan_prices_each_reads_requests_at_the_latency():
    """``filesystems.<name>.s3.latency_ms``: a read's requests (an open, then its chunks or
    runs, at most the blocks their span covers for a file read through a cache that keeps its
    blocks, Zarr's in flight together) each cost the latency, and the bytes they bring their
    transfer: the 20 ms filesystem's queries take longer by the requests times 20 ms, a
    filesystem on a directory pays none."""
    from conftest import read_config_file

    config = read_config_file(Path(__file__).parents[1] / "config" / "cloud.yaml")
    config["filesystems"]["disk"] = {"path": "results/disk"}
    sweep = load_sweep(config, probe=False)
    by = {(tf.filesystem.name, tf.backend.name, tf.layout.id): tf for tf in sweep.stores()}
    assert rates.read_requests(sweep, by[("disk", "hdf5", "contiguous")]) == 0
    for backend, layout in [("hdf5", "contiguous"), ("hdf5", "chunked-4x4x256"), ("zarr", "chunked-4x4x256")]:
        near, far = by[("cloud_0ms", backend, layout)], by[("cloud_20ms", backend, layout)]
        # the same requests, each priced at 2 ms on the local server and 20 ms more through the relay
        assert rates.read_requests(sweep, near) == rates.read_requests(sweep, far) > 0
        assert rates.read_bytes(sweep, near) == rates.read_bytes(sweep, far) > 0
        assert rates.request_seconds(sweep, far) == pytest.approx(
            rates.read_requests(sweep, far) * 0.022 + rates.read_bytes(sweep, far) / s3_target.S3_BYTES_PER_S
        )
    # s3fs's readahead keeps one span: the blocks the span covers, and about one small chunk in
    # ten again after HDF5's chunk index moved the span away; a block cache serves the chunks
    # inside the blocks it keeps
    import dataclasses

    store = by[("cloud_20ms", "hdf5", "chunked-4x4x256")]
    counted = {}
    for cache in ("readahead", "blockcache"):
        fs = store.filesystem
        reads = tuple(dataclasses.replace(r, cache_type=cache) for r in fs.s3_reads[:1])
        one = dataclasses.replace(store, filesystem=dataclasses.replace(fs, s3_reads=reads))
        counted[cache] = rates.read_requests(sweep, one), rates.read_bytes(sweep, one)
    assert counted["readahead"][0] > 2 * counted["blockcache"][0]
    assert counted["readahead"][1] > 2 * counted["blockcache"][1]
    # small Zarr chunks: a slice's 625 chunk objects are requests; large ones fewer
    small, large = (by[("cloud_20ms", "zarr", f"chunked-{c}")] for c in ("4x4x256", "16x16x2048"))
    assert rates.read_requests(sweep, small) > 2 * rates.read_requests(sweep, large)
    # a query job's cost in the plan carries its requests' price
    from h5sweep.kit.read import _query_job

    same, far = by[("disk", "hdf5", "contiguous")], by[("cloud_20ms", "hdf5", "contiguous")]
    cost = _query_job(sweep, far, False)[0]
    # and each read's reopening and check there, the check's requests at the latency too
    reopen, check = rates.remote_read_seconds(sweep, far)
    reads = sum(len(sweep.policies) * case.repeats * len(case.cold_modes) for case in sweep.read_cases)
    reads *= len(sweep.read_options("hdf5", far.filesystem))
    assert reopen == pytest.approx(reads * s3_target.REMOTE_REOPEN_S)
    assert check == pytest.approx(reads * (s3_target.REMOTE_CHECK_S + s3_target.REMOTE_CHECK_REQUESTS * 0.020))
    assert cost == pytest.approx(_query_job(sweep, same, False)[0] + rates.request_seconds(sweep, far) + reopen + check)
