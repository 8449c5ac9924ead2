"""Configs nobody on the team wrote (tests/generated.py), with fixed seeds: each is planned by
the code a dry run runs or refused with a message naming a key; some go through a real
``snakemake -n``, and some run end to end at tiny sizes, producing the summary, the
recommendation and every planned figure. A failure names the seed that reproduces it
(``generated.config(seed, root)``)."""

import re

import pytest
import yaml
from generated import config, mutations

from h5sweep.cases import CASE_SPECS
from h5sweep.storage.errors import ConfigError
from h5sweep.sweep import plan, settings
from h5sweep.sweep.config import load_schema
from h5sweep.sweep.model import load_sweep

SEEDS = range(300)
SCHEMA = load_schema()  # config/schema.yaml


def _plan(cfg: dict):
    """What the workflow does with a config before any job: validate and expand it, plan it,
    and build every job's settings and the list of figures."""
    sweep = load_sweep(cfg, SCHEMA)
    plan.make_plan(sweep, 2)
    for tf in sweep.stores():
        fs, backend = tf.filesystem, tf.backend.name
        settings.generate_settings(sweep, fs, backend, tf.layout.id, tf.compression.name)
        settings.query_settings(sweep, fs, backend, tf.layout.id, tf.compression.name)
    figures = [name for spec in CASE_SPECS if spec.enabled(sweep) for name in spec.figures(sweep)]
    settings.recommend_settings(sweep)
    return sweep, figures


def _named_key(err: ConfigError, cfg: dict) -> bool:
    head = re.split(r"[.\[]", err.key)[0]
    return bool(err.key) and (head in cfg or head in SCHEMA["properties"])


def test_generated_configs_are_planned_or_refused_naming_a_key(tmp_path):
    planned, refused = 0, 0
    for seed in SEEDS:
        cfg = config(seed, tmp_path / str(seed))
        try:
            _plan(cfg)
            planned += 1
        except ConfigError as err:
            assert _named_key(err, cfg), f"seed {seed}: refusal names no key: {err}\n{yaml.safe_dump(cfg)}"
            refused += 1
        except Exception as err:  # anything else is a crash a user would meet
            raise AssertionError(f"seed {seed}: {type(err).__name__}: {err}\n{yaml.safe_dump(cfg)}") from err
    assert planned + refused == len(SEEDS) and planned >= len(SEEDS) // 2, (planned, refused)


def test_mutations_of_valid_configs_are_refused_naming_the_key(tmp_path):
    checked = 0
    for seed in SEEDS[:60]:
        cfg = config(seed, tmp_path / str(seed))
        try:
            _plan(cfg)
        except ConfigError:
            continue
        for key, bad in mutations(cfg, seed):
            with pytest.raises(ConfigError) as err:
                _plan(bad)
            assert err.value.key.startswith(key) or key in str(err.value), f"seed {seed}: {key}: {err.value}"
            checked += 1
    assert checked >= 40


def _valid_seeds(tmp_path, count: int, start: int = 0) -> list[int]:
    found = []
    for seed in SEEDS[start:]:
        try:
            _plan(config(seed, tmp_path / str(seed)))
        except ConfigError:
            continue
        found.append(seed)
        if len(found) == count:
            break
    return found


@pytest.mark.workflow
@pytest.mark.parametrize("part", range(4))
def test_generated_configs_pass_a_real_dry_run(workflow, tmp_path, part):
    for seed in _valid_seeds(tmp_path, 12)[part::4]:  # in four parts, side by side
        cfg = config(seed, tmp_path / str(seed))
        path = workflow.write_config(cfg, f"gen{seed}.yaml")
        proc = workflow.run("-n", "--cores", "2", "--configfile", str(path))
        assert proc.returncode == 0, f"seed {seed}:\n{yaml.safe_dump(cfg)}\n{proc.stderr[-2000:]}"


@pytest.mark.workflow
@pytest.mark.parametrize("part", range(5))
def test_generated_configs_run_end_to_end_with_every_planned_figure(workflow, tmp_path, part):
    for seed in _valid_seeds(tmp_path, 5, start=100)[part::5]:  # five configs, side by side
        cfg = config(seed, tmp_path / str(seed))
        _, figures = _plan(cfg)
        path = workflow.write_config(cfg, f"gen{seed}.yaml")
        proc = workflow.run("--cores", "2", "--configfile", str(path), timeout=900)
        assert proc.returncode == 0, f"seed {seed}:\n{yaml.safe_dump(cfg)}\n{proc.stderr[-3000:]}"
        results = workflow.root / "results" / cfg["sweep"]
        for name in ("summary.parquet", "summary.csv", "recommendation.md", "recommendation.csv"):
            assert (results / name).exists(), f"seed {seed}: no {name}"
        filesystems = [fs for fs in cfg["filesystems"]]
        for name in figures:
            drawn = [results / "plots" / f"{name.format(filesystem=fs)}.png" for fs in filesystems]
            assert any(p.exists() for p in drawn), f"seed {seed}: no figure {name}"
