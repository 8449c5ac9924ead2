"""One verdict across systems: ``python -m h5sweep.compare RUN_DIR RUN_DIR... --out DIR``.

Each finished sweep's own results folder (``results/<sweep>/``: its measurements, which carry
the provenance, its summary and its recommendation) is enough: a folder copied from a cluster
to a laptop compares as it is. A *system* is one filesystem of one run on its host(s); two
filesystems of one run are two systems.

Per system, every store is scored by the sweeps' own objective (``recommend.objective``, from
each sweep's ``recommend.json``: by default the expected time of the read mix) with its paired
bootstrap samples (:mod:`h5sweep.measure.objective`), and its *regret* is that score over the
system's best store's. The layout to choose across the systems is the one with the smallest
largest regret (minimax regret), with a 95% interval from the systems' bootstraps drawn side by
side (the systems are measured independently). Sweeps whose objectives, layouts, codecs, cases
or selections differ are refused, naming what differs (a sweep that records no objective too);
``--intersect`` compares what they share and says what it left out. For parallel sweeps of two
dataset sizes, the bandwidth of the larger over the smaller per operation, mode and P (Folk &
Choi's Fig. 7, Tables 8 and 11). The studies' comparative findings
(:mod:`h5sweep.compare.comparative`) are judged on the sweeps' filesystems, each cast in the
role its sentence names (``--role ROLE=NAME``).

Beside it, :mod:`h5sweep.compare.whatif` ranks one finished sweep again for other read mixes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from h5sweep.analyze import findings
from h5sweep.analyze.ranking import BOOTSTRAP_SEED, is_reference, selected_reads, weights_of
from h5sweep.analyze.wording import several_options
from h5sweep.backends import REFERENCE
from h5sweep.backends import label as backend_label
from h5sweep.cases import CASE_SPECS
from h5sweep.compare import comparative as compared
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import duration, factor

# a store read with one read option: the choice compared across systems
STORE_KEYS = objectives.CHOICE_KEYS
COLUMNS = [
    C.SYSTEM,
    C.RUN,
    C.SWEEP,
    C.HOST,
    C.FILESYSTEM,
    C.FS_TYPE,
    C.DATASET_SHAPE,
    *STORE_KEYS,
    C.COMPARED_OPTION,
    objectives.MIX_SECONDS,
    objectives.MIX_SECONDS_CI_LOW,
    objectives.MIX_SECONDS_CI_HIGH,
    C.REGRET,
    C.REGRET_CI_LOW,
    C.REGRET_CI_HIGH,
    C.BEST_ON_SYSTEM,
    C.MAX_REGRET,
    C.MAX_REGRET_CI_LOW,
    C.MAX_REGRET_CI_HIGH,
    C.MINIMAX,
    C.FILE_BYTES,
    C.WEIGHTS,
]


class CompareError(ValueError):
    """Sweeps that cannot be compared, or a run folder that is not a finished sweep's."""


@dataclass
class Run:
    path: Path
    measurements: pd.DataFrame
    summary: pd.DataFrame
    recommendation: pd.DataFrame | None
    settings: dict = field(default_factory=dict)
    recorded: dict | None = None  # the settings its recommendation ranked with (recommend.json)

    @property
    def sweep(self) -> str:
        return str(self.measurements[C.SWEEP].iloc[0]) if C.SWEEP in self.measurements else self.path.name

    @property
    def shape(self) -> tuple[int, ...]:
        text = str(self.measurements[C.DATASET_SHAPE].iloc[0]) if C.DATASET_SHAPE in self.measurements else ""
        return tuple(int(v) for v in text.split("x") if v.isdigit())


def load_run(path: str | os.PathLike) -> Run:
    """A finished sweep's results folder, with the read mix its recommendation used."""
    folder = Path(path)
    missing = [name for name in ("measurements.parquet", "summary.parquet") if not (folder / name).is_file()]
    if missing:
        raise CompareError(f"{folder}: not a finished sweep's results folder (no {', '.join(missing)})")
    rec, recorded = folder / "recommendation.csv", folder / "recommend.json"
    run = Run(
        folder,
        pd.read_parquet(folder / "measurements.parquet"),
        pd.read_parquet(folder / "summary.parquet"),
        pd.read_csv(rec) if rec.is_file() and rec.stat().st_size > 1 else None,
        recorded=json.loads(recorded.read_text()) if recorded.is_file() else None,
    )
    run.settings = settings_of(run)
    return run


def settings_of(run: Run) -> dict:
    """The settings the sweep's recommendation ranked with (``recommend.json``: the read mix
    as the sweep filled it, the objective, the statistic, the read cases, the visiting policy
    and the reference store), the mix's weighted cases in the sweep's order
    (:func:`h5sweep.analyze.ranking.weights_of`); a folder without them has an empty mix and
    no objective (:func:`compare_runs` says so)."""
    recorded = run.recorded or {}
    cases = list(recorded.get("read_cases") or [])
    settings = {
        "recommend": dict(recorded.get("recommend") or {}),
        "read_cases": cases,
        C.POLICY: recorded.get(C.POLICY),
        "reference": recorded.get("reference"),
    }
    recorded_mix = settings["recommend"].get("weights")
    settings["recommend"]["weights"] = weights_of(settings) if recorded_mix else {}
    return settings


def objective_of_runs(runs: list[Run]) -> objectives.Objective:
    """The objective the sweeps ranked by (each sweep's ``recommend.objective``); a
    ``CompareError`` where a sweep records none or the sweeps disagree, naming them."""
    named = {str(run.path): run.settings["recommend"].get("objective") for run in runs}
    missing = [path for path, name in named.items() if not name]
    if missing:
        raise CompareError(
            "no recommend.objective recorded (recommend.json, written by the sweep's recommend job) in "
            + ", ".join(missing)
            + ": run the sweep again to write it (its reads are kept), then compare"
        )
    if len(set(named.values())) > 1:
        raise CompareError(
            "the sweeps rank by different objectives, so their regrets are not alike: "
            + "; ".join(f"{path}: {name}" for path, name in named.items())
            + " (set one recommend.objective in every sweep's config and run each again: nothing is read again)"
        )
    return objectives.objective_of(next(iter(named.values())))


@dataclass
class System:
    name: str
    run: Run
    filesystem: str
    reads: pd.DataFrame
    chosen: dict = field(default_factory=dict)  # store -> the read option it is compared in (own_best_options)

    @property
    def host(self) -> str:
        return "+".join(sorted(set(self.reads[C.HOST].astype(str)))) if C.HOST in self.reads else ""

    @property
    def stores(self) -> set[tuple]:
        return set(map(tuple, self.reads[STORE_KEYS].drop_duplicates().itertuples(index=False)))

    def selections(self, by_text: bool) -> dict[str, tuple]:
        out = {}
        for case, rows in self.reads.groupby(C.CASE):
            ordered = rows.drop_duplicates(C.REPEAT).sort_values(C.REPEAT)
            out[case] = tuple(ordered[C.SELECTION]) if by_text and C.SELECTION in rows else (len(ordered),)
        return out


def systems_of(runs: list[Run]) -> list[System]:
    out = []
    for run in runs:
        reads = selected_reads(run.measurements, run.settings)
        if reads.empty:  # a sweep of parallel passes only: no read case to rank by
            continue
        if C.BACKEND not in reads:
            reads = reads.assign(backend=REFERENCE)
        for filesystem, rows in reads.groupby(C.FILESYSTEM, sort=True):
            out.append(System("", run, str(filesystem), rows[rows[C.SECONDS] > 0]))
    for system in out:
        system.name = f"{system.host}/{system.filesystem}"
    names = [s.name for s in out]
    for system in out:
        if names.count(system.name) > 1:
            system.name = f"{system.run.path.name}:{system.name}"
    return out


def own_best_options(systems: list[System], weights: dict) -> list[str]:
    """Where a backend's read options differ between the systems (on an object store a file's
    read option also says how it is fetched; on a filesystem it does not), each system reads
    each of that backend's stores with its own best option there, the one of least mix time,
    and the stores are compared by their layout and codec: the file is what a data manager
    writes once, the options are each system's. Each row keeps the option chosen
    (``System.chosen``); what was done, in words (empty where the options agree)."""
    found: dict[str, set[frozenset]] = {}
    for system in systems:
        for backend, rows in system.reads.groupby(C.BACKEND):
            found.setdefault(str(backend), set()).add(frozenset(rows[C.READ_OPTION].astype(str)))
    differ = sorted(b for b, kinds in found.items() if len(kinds) > 1)
    if not differ:
        return []
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    for system in systems:
        reads = system.reads
        mine = reads[reads[C.BACKEND].isin(differ)]
        cases = [c for c in weights if c in set(mine[C.CASE])]
        matrices = objectives.Reads.of(mine, cases)
        # of a store's options, the one of least mix time (every objective computes it): the
        # reference store is not among these, so nothing here is a ratio to it
        table = objectives.costs(matrices, {c: weights[c] for c in cases}, None, rng, samples=1)
        table = table.assign(_store=[k[:-1] for k in matrices.stores], _option=[k[-1] for k in matrices.stores])
        best = table.sort_values(objectives.MIX_SECONDS, kind="stable").drop_duplicates("_store")
        system.chosen = dict(zip(best["_store"], best["_option"], strict=True))
        store = list(map(tuple, reads[objectives.STORE_KEYS].itertuples(index=False)))
        keep = [
            b not in differ or system.chosen.get(k) == o
            for b, k, o in zip(reads[C.BACKEND], store, reads[C.READ_OPTION], strict=True)
        ]
        system.reads = reads[keep].assign(
            **{
                C.READ_OPTION: [
                    OWN_BEST if b in differ else o
                    for b, o in zip(reads[C.BACKEND][keep], reads[C.READ_OPTION][keep], strict=True)
                ]
            }
        )
    return [
        f"{', '.join(backend_label(b) for b in differ)} stores are read with other options on each system "
        "(an object store's say how the file is fetched): each system reads each with its best option there, "
        "chosen on the same reads it is then scored on (so slightly in its favour)"
    ]


OWN_BEST = "each system's best option"  # a store read with its own best option on each system
OWN_OPTIONS = "own_options"  # the table's attrs: what own_best_options did, in words
# a choice as compared across the systems: a store and the read option it is compared in
COMPARED = [*objectives.STORE_KEYS, C.COMPARED_OPTION]


def _differences(systems: list[System]) -> tuple[list[str], dict]:
    """What differs between the systems (words), and what they share."""
    said = []
    stores = [s.stores for s in systems]
    common = set.intersection(*stores)
    for system, mine in zip(systems, stores, strict=True):
        extra = sorted(mine - common)
        if extra:
            named = ", ".join(" ".join(k) for k in extra[:4]) + (" ..." if len(extra) > 4 else "")
            said.append(f"stores only in {system.name} ({system.run.path}): {named}")
    codecs = [{k[2] for k in s} for s in stores]
    if len({frozenset(c) for c in codecs}) > 1:
        said.append(
            "codecs differ: "
            + "; ".join(f"{s.name}: {', '.join(sorted(c))}" for s, c in zip(systems, codecs, strict=True))
        )
    cases = [set(s.reads[C.CASE]) for s in systems]
    shared_cases = set.intersection(*cases)
    if len({frozenset(c) for c in cases}) > 1:
        said.append(
            "cases differ: "
            + "; ".join(f"{s.name}: {', '.join(sorted(c))}" for s, c in zip(systems, cases, strict=True))
        )
    same_shape = len({s.run.shape for s in systems}) == 1
    picks = [s.selections(same_shape) for s in systems]
    shared_repeats = {}
    for case in sorted(shared_cases):
        seen = [p[case] for p in picks]
        if len(set(seen)) > 1:
            said.append(f"selections of {case} differ between the sweeps (seeds, sizes or repeats)")
        if same_shape:
            shared_repeats[case] = [i for i, sel in enumerate(seen[0]) if all(i < len(o) and o[i] == sel for o in seen)]
    return said, {"stores": common, "cases": shared_cases, C.REPEATS: shared_repeats if same_shape else None}


def _costs(
    system: System, stores: list[tuple], cases: list[str], weights: dict, rng, objective: objectives.Objective
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """Each store's score by ``objective`` on one system (and its mix time), in ``stores``
    order, and the score's bootstrap samples (stores x samples; None: one read per case)."""
    reads = system.reads
    matrices = objectives.Reads.of(reads, cases)
    order = [matrices.stores.index(s) for s in stores]
    mine = reads[is_reference(reads, system.run.settings["reference"])]
    ref_key = tuple(mine[STORE_KEYS].iloc[0]) if len(mine) else matrices.stores[0]
    table = objectives.costs(matrices, weights, matrices.stores.index(ref_key), rng, objective.name)
    samples = table.attrs.pop("score_samples")
    return table.iloc[order].reset_index(drop=True), (None if samples is None else samples[order])


def compare(paths: list[str], intersect: bool = False) -> tuple[pd.DataFrame, list[str], list[System]]:
    """The comparison table (one row per system and store), what was left out, the systems."""
    return compare_runs([load_run(p) for p in paths], intersect)


def compare_runs(runs: list[Run], intersect: bool = False) -> tuple[pd.DataFrame, list[str], list[System]]:
    """:func:`compare` of loaded runs."""
    if not runs:
        raise CompareError("compare needs finished sweeps")
    objective = objective_of_runs(runs)
    systems = systems_of(runs)
    if len(systems) < 2:
        raise CompareError("the sweeps hold fewer than two systems with read cases to compare")
    weights = runs[0].settings["recommend"]["weights"]
    own = own_best_options(systems, weights)
    said, shared = _differences(systems)
    if said and not intersect:
        raise CompareError(
            "the sweeps differ, so their layouts cannot be compared as measured:\n- "
            + "\n- ".join(said)
            + "\n(--intersect compares what they share)"
        )
    cases = [c for c in weights if c in shared["cases"]]
    if not cases or not shared["stores"]:
        raise CompareError("the sweeps share no read case and store to compare")
    if shared[C.REPEATS] is not None:
        for system in systems:
            keep = pd.Series(False, index=system.reads.index)
            for case, repeats in shared[C.REPEATS].items():
                ordered = sorted(system.reads.loc[system.reads[C.CASE] == case, C.REPEAT].unique())
                wanted = {ordered[i] for i in repeats}
                keep |= (system.reads[C.CASE] == case) & system.reads[C.REPEAT].isin(wanted)
            system.reads = system.reads[keep]
    stores = sorted(shared["stores"])
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    frames, regrets = [], []
    for system in systems:
        table, samples = _costs(system, stores, cases, weights, rng, objective)
        score = table[C.SCORE].to_numpy(float)
        regret = score / np.nanmin(score)
        regret_samples = None if samples is None else samples / np.nanmin(samples, axis=0)
        regrets.append((regret, regret_samples))
        store_keys = objectives.STORE_KEYS  # a file's size is its store's, whatever reads it
        sizes = system.run.summary.dropna(subset=[C.FILE_BYTES]).drop_duplicates([C.FILESYSTEM, *store_keys])
        sizes = sizes[sizes[C.FILESYSTEM] == system.filesystem].set_index(store_keys)[C.FILE_BYTES]
        frame = pd.DataFrame(stores, columns=STORE_KEYS).assign(
            system=system.name,
            run=str(system.run.path),
            sweep=system.run.sweep,
            host=system.host,
            filesystem=system.filesystem,
            fs_type=str(system.reads[C.FS_TYPE].iloc[0]) if C.FS_TYPE in system.reads else "",
            dataset_shape="x".join(map(str, system.run.shape)),
            mix_seconds=table[objectives.MIX_SECONDS],
            mix_seconds_ci_low=table[objectives.MIX_SECONDS_CI_LOW],
            mix_seconds_ci_high=table[objectives.MIX_SECONDS_CI_HIGH],
            regret=regret,
            best_on_system=regret == 1.0,
            file_bytes=[sizes.get(s[: len(store_keys)], np.nan) for s in stores],
            weights=", ".join(f"{c} {weights[c]:g}" for c in cases),
        )
        if regret_samples is not None:
            frame[C.REGRET_CI_LOW], frame[C.REGRET_CI_HIGH] = objectives.interval(regret_samples)
        frame[C.COMPARED_OPTION] = frame[C.READ_OPTION]
        if system.chosen:  # each store's own best option on this system, by name
            keys = map(tuple, frame[objectives.STORE_KEYS].itertuples(index=False))
            frame[C.READ_OPTION] = [system.chosen.get(k, o) for k, o in zip(keys, frame[C.READ_OPTION], strict=True)]
        frames.append(frame)
    worst = np.nanmax(np.stack([r for r, _ in regrets]), axis=0)
    choice = int(np.nanargmin(worst))
    low = high = np.full(len(stores), np.nan)
    if all(s is not None for _, s in regrets):
        worst_samples = np.nanmax(np.stack([s for _, s in regrets]), axis=0)
        low, high = objectives.interval(worst_samples)
    out = pd.concat(frames, ignore_index=True)
    index = {s: i for i, s in enumerate(stores)}
    at = [index[tuple(k)] for k in out[COMPARED].itertuples(index=False)]
    out[C.MAX_REGRET], out[C.MAX_REGRET_CI_LOW], out[C.MAX_REGRET_CI_HIGH] = worst[at], low[at], high[at]
    out[C.MINIMAX] = [i == choice for i in at]
    left_out = said if intersect else []
    table = out[COLUMNS]
    table.attrs[OWN_OPTIONS] = own
    table.attrs[C.OBJECTIVE] = objective.name  # what the regrets are of
    return table, left_out, systems


def _store_name(row, with_option: bool = False) -> str:
    name = f"{row[C.LAYOUT_ID]}" + ("" if row[C.COMPRESSION] == "none" else f" {row[C.COMPRESSION]}")
    name = name if row[C.BACKEND] == REFERENCE else f"{backend_label(row[C.BACKEND])} {name}"
    return f"{name}, read with {row[C.READ_OPTION]}" if with_option else name


def _ms(value: float) -> str:
    return f"{value * 1e3:.3g} ms"


def _ci(low, high, fmt=".2f") -> str:
    return "no interval" if pd.isna(low) else f"{low:{fmt}}-{high:{fmt}}"


def scored_by(table: pd.DataFrame) -> objectives.Objective:
    """The objective a comparison table's regrets are of."""
    return objectives.objective_of(table.attrs.get(C.OBJECTIVE))


def _scored_words(objective: objectives.Objective, weights: str) -> str:
    """What a store's regret is of, with the read mix: its time for the mix, or its score."""
    said = "" if objective.is_mix_time else f"; recommend.objective: {objective.name}"
    return f"{objective.noun} ({weights} reads per unit{said})"


def markdown(table: pd.DataFrame, left_out: list[str], sections: list[str]) -> str:
    chosen = table[table[C.MINIMAX]].iloc[0]
    objective = scored_by(table)
    systems = list(dict.fromkeys(table[C.SYSTEM]))
    own = table.attrs.get(OWN_OPTIONS) or []
    options = several_options(table)

    def _store(row) -> str:  # as compared across the systems
        if row[C.COMPARED_OPTION] == OWN_BEST:
            return _store_name(row) + f", read with {OWN_BEST}"
        return _store_name(row, row[C.BACKEND] in options)

    def _on_system(row) -> str:  # as read on one system
        return _store_name(row, row[C.BACKEND] in options)

    lines = ["# Comparison", ""]
    mine = table[table[C.MINIMAX]]
    lines.append(
        f"Choose **{_store(chosen)}**: across {len(systems)} systems ({', '.join(systems)}), its "
        f"{_scored_words(objective, chosen[C.WEIGHTS])} is at most {chosen[C.MAX_REGRET]:.2f}x the best store of each "
        f"system (95% interval {_ci(chosen[C.MAX_REGRET_CI_LOW], chosen[C.MAX_REGRET_CI_HIGH])}); no other store's "
        "largest regret is smaller (minimax regret)."
    )
    lines.append("")
    lines += [*own, ""] if own else []
    lines += ["## Best store per system, and what the choice costs there", ""]
    lines += [
        "| system | fs type | dataset | best store | its mix time | the choice's mix time "
        "| the choice over the best (95%) |",
        "|---|---|---|---|---|---|---|",
    ]
    for system in systems:
        rows = table[table[C.SYSTEM] == system]
        best = rows[rows[C.BEST_ON_SYSTEM]].iloc[0]
        pick = mine[mine[C.SYSTEM] == system].iloc[0]
        lines.append(
            f"| {system} | {best[C.FS_TYPE]} | {best[C.DATASET_SHAPE]} | {_on_system(best)} | "
            f"{_ms(best[objectives.MIX_SECONDS])} | "
            f"{_ms(pick[objectives.MIX_SECONDS])} | {pick[C.REGRET]:.2f}x "
            f"({_ci(pick[C.REGRET_CI_LOW], pick[C.REGRET_CI_HIGH])}) |"
        )
    lines += ["", f"## Every store's regret per system ({objective.noun} over that system's best)", ""]
    head = ["store", *systems, "largest", "95% interval"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_store = table.groupby(COMPARED, sort=False)
    ordered = sorted(by_store, key=lambda kv: kv[1][C.MAX_REGRET].iloc[0])
    for _, rows in ordered:
        first = rows.iloc[0]
        cells = [_store(first) + (" (choice)" if first[C.MINIMAX] else "")]
        cells += [f"{rows.loc[rows[C.SYSTEM] == s, C.REGRET].iloc[0]:.2f}" for s in systems]
        cells += [f"{first[C.MAX_REGRET]:.2f}", _ci(first[C.MAX_REGRET_CI_LOW], first[C.MAX_REGRET_CI_HIGH])]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if left_out:
        lines += ["## Left out (--intersect)", "", *[f"- {w}" for w in left_out], ""]
    lines += sections
    lines += ["The studies' comparative findings, judged across these systems: `comparative-findings.md`.", ""]
    lines.append(
        f"Regret: a store's {objective.noun} over the best store's on the same system (paired "
        "bootstrap over the system's selections and store copies). The largest regret's interval draws every "
        "system's bootstrap side by side."
    )
    return "\n".join(lines) + "\n"


def decision_markdown(table: pd.DataFrame, runs: list[Run]) -> str:
    """The decision across systems on one page: the store to choose on every system (the
    minimax regret), what it costs on each against that system's best, then each sweep's own
    decision sheet (``decision.md``, its filesystems' choices) below."""
    chosen = table[table[C.MINIMAX]].iloc[0]
    options = several_options(table)
    own = chosen[C.COMPARED_OPTION] == OWN_BEST
    name = _store_name(chosen, chosen[C.BACKEND] in options and not own)
    systems = list(dict.fromkeys(table[C.SYSTEM]))
    interval = (
        ""
        if pd.isna(chosen[C.MAX_REGRET_CI_LOW])
        else f" (95% interval {factor(chosen[C.MAX_REGRET_CI_LOW])} to {factor(chosen[C.MAX_REGRET_CI_HIGH])})"
    )
    lines = [
        "# Decision across systems",
        "",
        f"- **Choose {name}** on all {len(systems)} systems: objective, the least largest regret (its "
        f"{_scored_words(scored_by(table), chosen[C.WEIGHTS])} over each system's best store); at most "
        f"{factor(chosen[C.MAX_REGRET])} the best{interval}.",
    ]
    for system in systems:
        rows = table[table[C.SYSTEM] == system]
        best = rows[rows[C.BEST_ON_SYSTEM]].iloc[0]
        pick = rows[rows[C.MINIMAX]].iloc[0]
        cost = (
            "it is the best there"
            if bool(pick[C.BEST_ON_SYSTEM])
            else f"{factor(pick[C.REGRET])} the best there ({_store_name(best, best[C.BACKEND] in options)}, "
            f"{duration(best[objectives.MIX_SECONDS])} a unit)"
        )
        read = f", read with {pick[C.READ_OPTION]}" if own else ""
        lines.append(
            f"- On {system} ({best[C.FS_TYPE]}){read}: {duration(pick[objectives.MIX_SECONDS])} a unit of work; {cost}."
        )
    lines += ["", "The whole comparison, every store's regret on every system: `comparison.md`.", ""]
    for run in runs:
        sheet = run.path / "decision.md"
        if sheet.is_file():  # each heading one level down, under the sweep's name
            body = sheet.read_text().splitlines()
            body = body[1:] if body and body[0].startswith("# ") else body  # its title: the heading above
            lines += [f"## Sweep {run.path.name}", ""]
            lines += ["#" + line if line.startswith("#") else line for line in body]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def sections_only_markdown(runs: list[Run], sections: list[str]) -> str:
    """Sweeps with no read case to rank stores by (parallel passes only, say): compared by
    what their cases compare across sweeps."""
    names = ", ".join(f"{r.sweep} ({'x'.join(map(str, r.shape))})" for r in runs)
    lines = [
        "# Comparison",
        "",
        f"No read case to rank stores by ({names}): the sweeps are compared by what their cases measure across sweeps.",
        "",
        *sections,
        "The studies' comparative findings, judged across these sweeps: `comparative-findings.md`.",
    ]
    return "\n".join(lines) + "\n"


def case_sections(runs: list[Run], out: Path, roles: dict[str, str] | None = None) -> list[str]:
    """What each registered case compares across sweeps (its ``compare`` hook: its tables and
    figures written to ``out``, its section of comparison.md returned), with the roles the user
    named."""
    lines: list[str] = []
    for spec in CASE_SPECS:
        compare = spec.hook("compare")
        if compare is not None:
            lines += compare(runs, out, roles or {})
    return lines


def _findings(runs: list[Run], out: Path, roles: dict[str, str]) -> pd.DataFrame:
    """Each sweep's own findings (``findings.csv``, ``findings.md``) and the comparative
    findings across them (``comparative-findings.csv``, ``comparative-findings.md``), which it
    returns."""
    found = pd.concat([findings.evaluate(r.summary, r.shape).assign(run=str(r.path)) for r in runs], ignore_index=True)
    found.to_csv(out / "findings.csv", index=False)
    (out / "findings.md").write_text(findings.markdown(found, "Findings of the studies, checked on each sweep"))
    across = compared.evaluate(runs, roles)
    across.to_csv(out / "comparative-findings.csv", index=False)
    (out / "comparative-findings.md").write_text(compared.markdown(across))
    return across


def _roles(given: list[str], runs: list[Run]) -> dict[str, str]:
    """``--role ROLE=NAME`` pairs, each checked (:func:`h5sweep.compare.comparative.resolve`)."""
    roles = {}
    for text in given:
        role, sep, name = text.partition("=")
        if not sep or not role or not name:
            raise CompareError(f"--role {text}: give a role and a system as ROLE=NAME")
        roles[role] = name
    try:
        compared.resolve(runs, roles)
    except ValueError as err:
        raise CompareError(str(err)) from None
    return roles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m h5sweep.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="finished sweeps' results folders (results/<sweep>/)")
    parser.add_argument("--out", required=True, help="folder for comparison.md, comparison.csv and the figures")
    parser.add_argument("--intersect", action="store_true", help="compare what the sweeps share; say what is left out")
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="the system (results-folder:filesystem, or a filesystem or sweep name that is unique) that plays a "
        "comparative finding's role: scratch, project, portal, hopper, pc, workstation, cluster, orig, big",
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        runs = [load_run(p) for p in args.runs]
        roles = _roles(args.role, runs)
        if not systems_of(runs):  # no read case: what the cases compare, and the comparative findings
            out.mkdir(parents=True, exist_ok=True)
            sections = case_sections(runs, out, roles)
            across = compared.evaluate(runs, roles)
            if sections or (across[C.VERDICT] != findings.UNMEASURED).any():
                (out / "comparison.md").write_text(sections_only_markdown(runs, sections))
                _findings(runs, out, roles)
                print(f"h5sweep.compare: {len(runs)} sweeps compared by their cases; {out / 'comparison.md'}")
                return 0
        table, left_out, systems = compare_runs(runs, args.intersect)
    except CompareError as err:
        print(f"h5sweep.compare: {err}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "comparison.csv", index=False)
    (out / "comparison.md").write_text(markdown(table, left_out, case_sections(runs, out, roles)))
    (out / "decision.md").write_text(decision_markdown(table, runs))
    _findings(runs, out, roles)
    from h5sweep.report import comparison

    comparison.plot_reference(systems, out / "reference-across-systems.png")
    comparison.plot_regret(table, out / "regret-per-system.png")
    print(f"h5sweep.compare: {len(systems)} systems compared; {out / 'comparison.md'}")
    return 0
