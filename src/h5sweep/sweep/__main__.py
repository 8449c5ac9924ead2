"""``python -m h5sweep.sweep [--configfile FILE] [--cores N] [--profile DIR]``: the plan of a
sweep (jobs, job and wall time, peak disk per filesystem, on SLURM each job's ask), its
warnings, and its refusal where the stores cannot fit, in well under a second: the lines a
Snakemake dry run prints for the same command line, without starting Snakemake. Run it from
the workflow's directory (relative paths in the config are relative to it). Exit 1 when the
sweep is refused, 2 when the config is invalid."""

from __future__ import annotations

import argparse
import os
import sys

import yaml

DEFAULT_CONFIG = "config/config.yaml"


def _override(config: dict, assignment: str) -> None:
    """``key=value`` or ``a.b=value`` (a YAML value) set in ``config``, as Snakemake's
    ``--config`` sets a top-level key (nested keys by dots here)."""
    key, sep, value = assignment.partition("=")
    if not sep or not key:
        raise ValueError(f"--config: {assignment!r} is not key=value")
    *parents, last = key.split(".")
    node = config
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = yaml.safe_load(value) if value else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", default=DEFAULT_CONFIG, help=f"the sweep's config (default {DEFAULT_CONFIG})")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE", help="keys set over the file's")
    parser.add_argument("--cores", "-c", help="jobs at once locally: a number or all (the default)")
    parser.add_argument("--jobs", "-j", type=int, help="jobs at once on a cluster")
    parser.add_argument("--profile", help="a Snakemake profile (its executor decides local or SLURM)")
    parser.add_argument("--executor", "-e", help="a Snakemake executor (slurm or local)")
    parser.add_argument("--quiet", "-q", action="store_true", help="the plan and a refusal, no warnings")
    args = parser.parse_args(argv)

    from h5sweep.storage.errors import ConfigError
    from h5sweep.sweep import cluster
    from h5sweep.sweep.config import load_schema
    from h5sweep.sweep.model import load_sweep
    from h5sweep.sweep.preview import preview

    try:
        with open(args.configfile, encoding="utf-8") as f:
            config = yaml.safe_load(f) or {}
        for assignment in args.config:
            _override(config, assignment)
        sweep = load_sweep(config, load_schema(), probe=True)
    except (OSError, yaml.YAMLError, ValueError, ConfigError) as err:
        print(f"h5sweep: invalid config: {err}", file=sys.stderr)
        return 2
    command = [
        opt for name in ("profile", "executor") if getattr(args, name) for opt in (f"--{name}", getattr(args, name))
    ]
    slurm = cluster.executor_of(command, os.environ, ".") == "slurm"
    if args.cores not in (None, "all") and not args.cores.isdigit():
        print(f"h5sweep: --cores: {args.cores!r} is not a number or all", file=sys.stderr)
        return 2
    cores = int(args.cores) if args.cores not in (None, "all") else os.cpu_count() or 1
    jobs = (args.jobs or 1) if slurm else cores
    said = preview(sweep, jobs, slurm=slurm)
    for line in said.info:
        print(line)
    for warning in [] if args.quiet else said.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if said.refusal:
        print(said.refusal, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
