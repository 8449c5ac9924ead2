"""``h5sweep whatif RUN --weights slice=10,spectra=1000``: a finished sweep (``RUN``: its
results directory, ``results/<sweep>``) ranked again for other read mixes from the reads it
made, in seconds; nothing is read again (:mod:`h5sweep.analyze.whatif`). Per mix and
filesystem: its choice in words, then every store in a table (rank, mix time with its 95%
interval, ratio to the choice, tied, file size, write time, worst case).
``python -m h5sweep.compare.whatif`` is the same command.

With ``--resume``, the stores the race dropped that one of the mixes could favour are read to
the end, and nothing else: they are added to ``RUN/resume.json`` (:mod:`h5sweep.sweep.resume`)
and the sweep is run again with ``--configfile`` (its own config; default
``config/config.yaml``), which runs their jobs, the aggregate and the recommendation. Arguments
after ``--`` go to Snakemake (e.g. ``-- --profile profiles/slurm``)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

DEFAULT_CONFIG = "config/config.yaml"


def parse_weights(text: str) -> dict[str, float]:
    """``slice=10,spectra=1000`` as {case: reads per unit of work}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        case, sep, count = part.partition("=")
        try:
            out[case.strip()] = float(count)
        except ValueError:
            raise ValueError(f"--weights: {part!r} is not case=number") from None
        if not sep:
            raise ValueError(f"--weights: {part!r} is not case=number")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.compare.whatif", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished sweep's results directory (results/<sweep>)")
    parser.add_argument(
        "--weights", action="append", required=True, help="a read mix, case=reads per unit of work, comma-separated"
    )
    parser.add_argument(
        "--resume", action="store_true", help="read to the end the raced-out stores these mixes could favour"
    )
    parser.add_argument("--configfile", help=f"with --resume: the sweep's config (default {DEFAULT_CONFIG})")
    parser.add_argument("--cores", default="all", help="with --resume: Snakemake's --cores (default all)")
    parser.add_argument("-n", "--dry-run", action="store_true", help="with --resume: Snakemake's dry run")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    needed = [args.run / name for name in ("recommend.json", "measurements.parquet", "summary.parquet")]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        print(f"h5sweep whatif: {args.run} is not a finished sweep: no {', '.join(missing)}", file=sys.stderr)
        return 2
    from h5sweep.analyze.whatif import TABLE_LEGEND, check_mix, decide, rank_for
    from h5sweep.measure.records import read_tables
    from h5sweep.storage import columns as C

    settings = json.loads(needed[0].read_text())
    try:
        mixes = [check_mix(settings, parse_weights(text)) for text in args.weights]
    except ValueError as err:
        print(f"h5sweep whatif: {err}", file=sys.stderr)
        return 2
    measurements, summary = read_tables([str(needed[1])]), read_tables([str(needed[2])])
    own, _ = rank_for(measurements, summary, settings, settings["recommend"]["weights"])
    chosen = own[own[C.RECOMMENDED]] if not own.empty else own
    favoured = []
    for i, weights in enumerate(mixes, 1):
        lines, stores = decide(
            measurements, summary, settings, f"mix {i}", weights, chosen, with_stores=True, with_table=True
        )
        favoured += stores
        for line in lines:
            if not (args.resume and "--resume`" in line):  # the command the user just ran
                print(line)
    print(TABLE_LEGEND)
    if not args.resume:
        return 0
    return resume(args, settings[C.SWEEP], favoured, extra)


def resume(args, sweep: str, favoured: list[dict], extra: list[str]) -> int:
    """Add the ``favoured`` stores to the run's request and run the sweep again (in the
    workflow directory above ``results/<sweep>``), which reads them and nothing else."""
    import yaml

    from h5sweep.storage import columns as C
    from h5sweep.sweep.resume import add_to_request

    workdir = args.run.resolve().parent.parent
    if args.run.resolve().parent.name != "results" or not (workdir / "Snakefile").is_file():
        print(f"h5sweep whatif: --resume: {args.run} is not results/<sweep> of a workflow directory", file=sys.stderr)
        return 2
    configfile = Path(args.configfile or workdir / DEFAULT_CONFIG)
    try:
        named = (yaml.safe_load(configfile.read_text()) or {}).get(C.SWEEP)
    except (OSError, yaml.YAMLError) as err:
        print(f"h5sweep whatif: --configfile: {err}", file=sys.stderr)
        return 2
    if named != sweep:
        print(
            f"h5sweep whatif: --configfile {configfile} is the config of sweep {named!r}, not of {sweep!r} "
            f"({args.run}); give the config the sweep ran with",
            file=sys.stderr,
        )
        return 2
    if not favoured:
        print("No raced-out store could be favoured by these mixes: nothing to resume.")
        return 0
    held = add_to_request(args.run, favoured)
    print(f"Resuming {len(favoured)} store(s) ({len(held)} asked in all, {args.run / 'resume.json'}):")
    for entry in favoured:
        print("  " + ", ".join(entry.values()))
    command = [sys.executable, "-m", "snakemake", "--cores", str(args.cores), "--configfile", str(configfile.resolve())]
    command += ["-n"] if args.dry_run else []
    return subprocess.run([*command, *extra], cwd=workdir).returncode


if __name__ == "__main__":
    sys.exit(main())
