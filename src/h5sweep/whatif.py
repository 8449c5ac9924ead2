"""``python -m h5sweep.whatif RUN --weights slice=10,spectra=1000``: a finished sweep
(``RUN``: its results directory, ``results/<sweep>``) ranked again for other read mixes from
the reads it made, in seconds; nothing is read again (:mod:`h5sweep.analyze.whatif`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


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
    parser = argparse.ArgumentParser(prog="python -m h5sweep.whatif", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished sweep's results directory (results/<sweep>)")
    parser.add_argument(
        "--weights", action="append", required=True, help="a read mix, case=reads per unit of work, comma-separated"
    )
    args = parser.parse_args(argv)
    needed = [args.run / name for name in ("recommend.json", "measurements.parquet", "summary.parquet")]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        print(f"h5sweep.whatif: {args.run} is not a finished sweep: no {', '.join(missing)}", file=sys.stderr)
        return 2
    from h5sweep.analyze.whatif import check_mix, decide, rank_for
    from h5sweep.measure.records import read_tables
    from h5sweep.storage import columns as C

    settings = json.loads(needed[0].read_text())
    try:
        mixes = [check_mix(settings, parse_weights(text)) for text in args.weights]
    except ValueError as err:
        print(f"h5sweep.whatif: {err}", file=sys.stderr)
        return 2
    measurements, summary = read_tables([str(needed[1])]), read_tables([str(needed[2])])
    own, _ = rank_for(measurements, summary, settings, settings["recommend"].get("weights") or {})
    chosen = own[own[C.RECOMMENDED]] if not own.empty else own
    for i, weights in enumerate(mixes, 1):
        for line in decide(measurements, summary, settings, f"mix {i}", weights, chosen):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
