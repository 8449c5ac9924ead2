"""Bad configs are refused before anything runs, naming the key and the value."""

import copy
import os
from pathlib import Path

import pytest
import yaml

from h5sweep.storage.errors import ConfigError
from h5sweep.sweep.config import config_hash, validate_schema
from h5sweep.sweep.model import load_sweep

REPO = Path(__file__).resolve().parents[1]


def base(tmp_path):
    with open(REPO / "tests" / "configs" / "tiny.yaml", encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    cfg["filesystems"] = {"disk": str(tmp_path / "disk")}
    return cfg


def with_(cfg, path, value):
    cfg = copy.deepcopy(cfg)
    *parents, last = path
    node = cfg
    for key in parents:
        node = node[key]
    node[last] = value
    return cfg


# (where in the config, bad value, text the error must contain)
BAD = [
    (("layouts", "shapes"), [[4, 4, 5000]], "layouts.shapes[0]=[4, 4, 5000]: chunk is larger than the dataset"),
    (("layouts", "chunks"), {"xy": [64], "z": [64]}, "layouts.chunks (xy=64, z=64)=[64, 64, 64]: chunk is larger"),
    (("compression",), ["none", "lz9"], "compression[1]='lz9': unknown compression filter"),
    (("compression",), ["gzip-12"], "compression[0]='gzip-12': gzip level 12 is out of range 0-9"),
    (("cases", "slice", "repeats"), 0, "cases.slice.repeats=0"),
    (("cases", "write", "repeats"), -1, "cases.write.repeats=-1"),
    (("dataset", "shape"), [2] * 6, "dataset.shape=[2, 2, 2, 2, 2, 2]"),  # rank 1 to 5
    (("dataset", "shape"), [100, 0, 5], "dataset.shape[1]=0"),
    (("dataset", "shape"), [10, 10, 2.5], "dataset.shape[2]=2.5"),
    (
        ("cases", "slice", "depth"),
        5000,
        "cases.slice={'repeats': 6, 'depth': 5000, 'race': True, 'cold': 'every'}: selection is larger",
    ),
    (("cases", "subcube", "size"), [5, 50, 10], "selection is larger than the dataset along axis 1"),
    (
        ("cases", "spectra", "size"),
        0,
        "cases.spectra={'repeats': 6, 'size': 0, 'race': True, 'cold': 'every'}: selects 0 elements",
    ),
    (("dataset", "dtype"), "uint12", "dataset.dtype='uint12'"),
    (("cases", "mystery"), {"repeats": 1}, "mystery"),
]


@pytest.mark.parametrize("path, value, message", BAD, ids=[".".join(map(str, b[0])) + f"={b[1]}" for b in BAD])
def test_bad_values_are_refused_with_key_and_value(tmp_path, path, value, message):
    with pytest.raises(ConfigError) as err:
        load_sweep(with_(base(tmp_path), path, value))
    assert message in str(err.value)


def test_a_filesystem_directory_that_cannot_be_created_is_refused(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cfg = with_(base(tmp_path), ("filesystems",), {"disk": str(blocker / "sub")})
    with pytest.raises(
        ConfigError, match=r"filesystems.disk=.*a-file/sub.*cannot be created or written.*not a directory"
    ):
        load_sweep(cfg)
    assert not (tmp_path / "disk").exists()


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/proc/sys"), reason="needs a read-only place")
def test_a_read_only_filesystem_directory_is_refused(tmp_path):
    cfg = with_(base(tmp_path), ("filesystems",), {"ro": "/proc/sys/h5sweep"})
    with pytest.raises(ConfigError, match=r"filesystems.ro='/proc/sys/h5sweep': directory cannot be created"):
        load_sweep(cfg)


def test_an_optional_filesystem_that_is_unusable_is_skipped(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    fs = {"disk": str(tmp_path / "disk"), "ram": {"path": str(blocker / "x"), "required": False}}
    sweep = load_sweep(with_(base(tmp_path), ("filesystems",), fs))
    assert [f.name for f in sweep.filesystems] == ["disk"]


def test_two_filesystems_in_one_directory_are_refused(tmp_path):
    fs = {"a": str(tmp_path / "d"), "b": str(tmp_path / "d" / ".." / "d")}
    with pytest.raises(ConfigError, match="filesystems.b=.*same directory as filesystems.a"):
        load_sweep(with_(base(tmp_path), ("filesystems",), fs))


def test_defaults_are_filled_and_the_grid_expands(tmp_path):
    cfg = base(tmp_path)
    del cfg["score"]
    del cfg["dataset"]["seed"]
    sweep = load_sweep(cfg)
    assert sweep.score == {
        "slice_median_s": 0.1,
        "spectra_median_s": 0.05,
        "subcube_median_s": 0.002,
        "file_overhead": 0.05,
        "scale_to_selection": True,
        "figure": False,
    }
    assert sweep.dataset["seed"] == 0 and sweep.dataset["name"] == "data"
    # contiguous (uncompressed only) + (2 x 2 grid + 1 extra shape) x 2 compressions
    assert len(sweep.stores()) == 1 + 5 * 2
    assert {tf.compression.name for tf in sweep.stores() if tf.layout.kind == "contiguous"} == {"none"}


def test_shipped_configs_are_valid_and_the_openmsi_chunking_config_is_the_study_grid():
    grid = load_sweep(yaml.safe_load((REPO / "config" / "studies" / "openmsi" / "chunking.yaml").read_text()))
    assert grid.shape == (100, 100, 100_000) and grid.raw_bytes == 2_000_000_000
    assert len([lay for lay in grid.layouts if lay.kind == "chunked"]) == 42
    assert grid.write_case.repeats == 3 and all(c.repeats == 50 for c in grid.read_cases)
    assert not (REPO / "config" / "paper.yaml").exists()  # the study's experiments, not one monolith
    default = load_sweep(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    assert len([lay for lay in default.layouts if lay.kind == "chunked"]) >= 9
    assert {c.name for c in default.compressions} >= {"none", "gzip-4"}


def test_config_hash_ignores_key_order_but_not_values(tmp_path):
    cfg = validate_schema(base(tmp_path))
    reordered = dict(reversed(list(cfg.items())))
    assert config_hash(cfg) == config_hash(reordered)
    assert config_hash(cfg) != config_hash(with_(cfg, ("dataset", "seed"), 8))


def test_a_process_that_rereads_a_checked_sweep_skips_the_checks_and_the_probes(tmp_path):
    """Inside a cluster job the workflow is read again: it expands the same grid without
    probing filesystems (nothing is created) or checking the schema again."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["filesystems"] = {"disk": str(tmp_path / "no" / "such" / "dir")}
    main = load_sweep(copy.deepcopy(config))
    job_side = load_sweep(copy.deepcopy(config), probe=False)
    assert [tf.layout for tf in job_side.stores()] == [tf.layout for tf in main.stores()]
    assert job_side.config == main.config  # the same defaults
    config["filesystems"] = {"disk": str(tmp_path / "a file")}
    (tmp_path / "a file").write_text("")
    with pytest.raises(ConfigError):
        load_sweep(copy.deepcopy(config))
    assert load_sweep(copy.deepcopy(config), probe=False).filesystems[0].name == "disk"  # not probed


@pytest.mark.parametrize("copies", [0, -1, 2.5, "3", True])
def test_read_copies_other_than_a_whole_number_of_one_or_more_are_refused_by_name(tmp_path, copies):
    fs = {"disk": {"path": str(tmp_path / "disk"), "read_copies": copies}}
    with pytest.raises(ConfigError, match=r"filesystems\.disk\.read_copies"):
        load_sweep(with_(base(tmp_path), ("filesystems",), fs))
    assert not (tmp_path / "disk").exists()


def test_read_copies_reach_the_query_jobs_and_multiply_the_planned_disk(tmp_path):
    from h5sweep.measure import rates
    from h5sweep.storage.filesystems import mount_info
    from h5sweep.sweep import settings as job_settings
    from h5sweep.sweep.plan import MEMORY_FILESYSTEMS, file_bytes_bound, make_plan

    def sweep_with(copies):
        fs = {"disk": {"path": str(tmp_path / "disk"), "read_copies": copies}}
        return load_sweep(with_(base(tmp_path), ("filesystems",), fs))

    one, three = sweep_with(1), sweep_with(3)
    assert three.filesystems[0].read_copies == 3
    tf = three.stores()[0]
    settings = job_settings.query_settings(three, three.filesystems[0], "hdf5", tf.layout.id, tf.compression.name)
    assert settings["read_copies"] == 3 and job_settings.JobSettings(settings).read_copies == 3
    generate = job_settings.generate_settings(three, three.filesystems[0], "hdf5", tf.layout.id, tf.compression.name)
    assert "read_copies" not in generate and "read_copies" not in generate["filesystem"]
    # the copies exist while the stores are queried: all stores at once when interleaved, else
    # the one store of the one running job
    peak_one, peak_three = (make_plan(s, 1).filesystems[0].peak_bytes for s in (one, three))
    bounds = [file_bytes_bound(one, tf.layout, tf.backend.name) for tf in one.stores()]
    assert peak_three - peak_one == 2 * (sum(bounds) if one.interleave else max(bounds))
    # and their making counts in the query jobs' time (untimed work: not in the windows)
    plans = make_plan(one, 1), make_plan(three, 1)
    from_device = mount_info(str(tmp_path)).fs_type not in MEMORY_FILESYSTEMS
    copying = sum(rates.read_copies_seconds(one, tf.layout, 3, from_device) for tf in one.stores())
    assert copying > 0 and plans[1].job_seconds - plans[0].job_seconds == pytest.approx(copying)
    assert plans[1].timed_seconds == plans[0].timed_seconds


def test_the_key_table_of_config_readme_is_generated_from_the_schema():
    """Each key is described once, in the schema: the README's table is `make docs`'s output."""
    from h5sweep.sweep.config import KEY_TABLE_BEGIN, KEY_TABLE_END, key_table, load_schema

    readme = (Path(__file__).resolve().parents[1] / "config" / "README.md").read_text()
    table = readme[readme.index(KEY_TABLE_BEGIN) : readme.index(KEY_TABLE_END) + len(KEY_TABLE_END)]
    assert table == key_table(), "config/README.md's key table is stale: run `make docs`"
    schema = load_schema()
    schema["properties"]["sweep"]["description"] = "A changed description."
    assert "A changed description." in key_table(schema) and key_table(schema) != table


def test_a_lustre_stripe_is_refused_off_lustre_and_a_bad_one_by_its_key(tmp_path):
    """filesystems.<name>.stripe is applied with lfs setstripe on Lustre only: on this
    machine's disk it is refused before any job, naming the key and the filesystem found."""
    from h5sweep.storage.filesystems import mount_info, stripe_words

    cfg = base(tmp_path)
    cfg["filesystems"] = {"disk": {"path": str(tmp_path / "d"), "stripe": {"count": 4, "size": 1048576}}}
    with pytest.raises(ConfigError) as err:
        load_sweep(cfg)
    found = mount_info(str(tmp_path)).fs_type
    assert "filesystems.disk.stripe" in str(
        err.value
    ) and f"needs a Lustre filesystem; {tmp_path / 'd'} is on {found}" in str(err.value)
    cfg["filesystems"]["disk"]["stripe"] = {"count": 4, "size": 100_000}
    with pytest.raises(ConfigError, match=r"filesystems\.disk\.stripe\.size=100000: must be a multiple of 65536"):
        load_sweep(cfg)
    cfg["filesystems"]["disk"]["stripe"] = {"count": 0}
    with pytest.raises(ConfigError, match=r"filesystems\.disk\.stripe\.count=0"):
        load_sweep(cfg)
    assert stripe_words({"count": -1, "size": 4 << 20}) == "count=-1 size=4194304" and stripe_words(None) == ""
