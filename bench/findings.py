"""The findings at the studies' size: the OpenMSI chunking study (config/studies/openmsi/chunking.yaml,
the 100 x 100 x 100,000 cube, 43 stores) run once on this machine's disk, and each of its
findings' verdicts recorded beside the study's own sentence.

    python bench/findings.py [--directory DIR] [--cores N]

Prints the table for bench/README.md and adds a row to bench/results/runs.csv (one column per
finding, "openmsi chunking at its size: <finding>").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "studies" / "openmsi" / "chunking.yaml"
RUNS = REPO / "bench" / "results" / "runs.csv"
SWEEP = "bench-openmsi-chunking"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", default=str(REPO / "results" / "scratch"), help="where the stores are written")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    from h5sweep.analyze import findings

    config = yaml.safe_load(CONFIG.read_text())
    config.update(sweep=SWEEP, filesystems={"disk": args.directory})
    path = REPO / "results" / f"{SWEEP}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    started = time.monotonic()
    snakemake = [str(Path(sys.executable).parent / "snakemake"), "--cores", str(args.cores), "--configfile", str(path)]
    subprocess.run(snakemake, cwd=REPO, check=True)
    wall = time.monotonic() - started
    table = pd.read_csv(REPO / "results" / SWEEP / "findings.csv")
    mine = {f.key for f in findings.FINDINGS if f.config.endswith("openmsi/chunking.yaml")}
    table = table[table["finding"].isin(mine)]
    print(f"OpenMSI chunking at its size ({' x '.join(map(str, config['dataset']['shape']))}), {wall / 60:.0f} min:")
    print("| finding | the study says | verdict here | evidence |")
    print("|---|---|---|---|")
    for _, r in table.iterrows():
        print(f"| {r['finding']} | \u201c{r['quote']}\u201d | {r['verdict']} | {r['evidence']} |")
    run = f"{os.uname().nodename}-{datetime.now():%Y%m%d-%H%M%S}"
    row = {"run": run, **{f"openmsi chunking at its size: {r['finding']}": r["verdict"] for _, r in table.iterrows()}}
    runs = pd.read_csv(RUNS) if RUNS.exists() else pd.DataFrame()
    pd.concat([runs, pd.DataFrame([row])], ignore_index=True).to_csv(RUNS, index=False)
    print(f"recorded as {run} in {RUNS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
