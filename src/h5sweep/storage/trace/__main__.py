"""``python -m h5sweep.storage.trace run -o reads.jsonl -- python my_analysis.py ...``: run a program
with every h5py and zarr-python read it makes recorded; ``show reads.jsonl``: what it read."""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from h5sweep.storage.trace import ENVIRONMENT, FORMAT, load

# Started in every Python process of the traced program (Python imports ``sitecustomize`` from
# the path at start-up): records its reads, appending to the recording the environment names.
SITECUSTOMIZE = "from h5sweep.storage.trace import start_from_environment\n\nstart_from_environment()\n"


def run(output: str, command: list[str]) -> int:
    if not command:
        print("h5sweep.storage.trace run: give the program to run after --", file=sys.stderr)
        return 2
    out = Path(output).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    header = {"h5sweep_trace": FORMAT, "program": command, "started": _now()}
    out.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="h5sweep-trace-") as startup:
        (Path(startup) / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        path = os.pathsep.join(p for p in (startup, os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, ENVIRONMENT: str(out), "PYTHONPATH": path}
        code = subprocess.run(command, env=env).returncode
    reads = load(out)
    print(f"h5sweep.storage.trace: {len(reads)} reads recorded in {out}", file=sys.stderr)
    return code


def show(path: str) -> int:
    reads = load(path)
    by_dataset = collections.Counter((r["file"], r["dataset"]) for r in reads)
    for (file, dataset), count in by_dataset.most_common():
        boxes = sum(1 for r in reads if (r["file"], r["dataset"]) == (file, dataset) and r["selection"] is not None)
        print(f"{count:8d} reads ({count - boxes} not boxes)  {file} {dataset}")
    return 0


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.storage.trace", description=__doc__)
    sub = parser.add_subparsers(dest="verb", required=True)
    running = sub.add_parser("run", help="run a program and record its reads")
    running.add_argument("-o", "--output", required=True, help="the recording (JSON lines)")
    running.add_argument("command", nargs=argparse.REMAINDER, help="-- then the program and its arguments")
    showing = sub.add_parser("show", help="the datasets a recording read, and how often")
    showing.add_argument("recording")
    args = parser.parse_args(argv)
    if args.verb == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        return run(args.output, command)
    return show(args.recording)


if __name__ == "__main__":
    sys.exit(main())
