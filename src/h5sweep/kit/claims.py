"""What a registered finding is, and the rules its check judges by (the package's findings,
:mod:`h5sweep.analyze.findings`, and each case's own, declared in its package and registered by
its spec's ``findings``).

A :class:`Finding` quotes one sentence of a study (its document and section), states what is
tested with the sentence's conditions, and checks it on one filesystem's summary. A finding of a
publication that is not among the seeds (its document an address) has no quote: its ``claim``
says what the publication reports, in h5sweep's own words. A check
returns None where the sweep did not measure what the sentence needs under its conditions,
else the verdict with the numbers it rests on: ``holds`` only where the intervals lie wholly on
the sentence's side, ``does not hold`` where they lie wholly on the other, ``inconclusive``
where they admit both. Nothing here imports an I/O library."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.storage import columns as C

STUDIES = "config/studies/"
HOLDS, FAILS, INCONCLUSIVE, UNMEASURED = "holds", "does not hold", "inconclusive", "not measured"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, UNMEASURED)
SEEDS = "../shared/seeds/"
OPENMSI = SEEDS + "openmsi-hdf5-io-performance.rst"
GUIDE = SEEDS + "hdf-user-guide-ch14-performance-issues.txt"
KANG = SEEDS + "kang-2019-hdf5-vs-zarr-neuroscience.txt"
FOLK_CHOI = SEEDS + "folk-choi-2005-hdf5-parallel-io-teragrid.md"
IO_LAB = SEEDS + "nbody-course-hdf5-io-lab.md"

# A check's answer: None (not measured), or (True: holds, False: does not hold, None:
# inconclusive, UNMEASURED: measured, but not under the sentence's conditions; the evidence in
# words, for UNMEASURED why not).
Result = tuple[bool | None | str, str] | None


@dataclass(frozen=True)
class Finding:
    key: str
    study: str
    document: str  # the seed the quote is from (or the address of a publication not among them)
    section: str
    quote: str  # the seed's own sentence, verbatim ("" for a publication not among the seeds)
    statement: str  # what is tested: the sentence with its conditions
    needs: str  # the config keys that would measure it
    config: str  # the study config built to measure it
    check: Callable[[pd.DataFrame, tuple], Result]
    claim: str = ""  # a publication not among the seeds: what it reports, in h5sweep's words


def shape_of(text) -> tuple[int, ...]:
    return tuple(int(v) for v in str(text).split("x")) if isinstance(text, str) and text else ()


def primary_reads(s: pd.DataFrame, case: str, backend: str | None = REFERENCE) -> pd.DataFrame:
    """One case's primary rows (the config's first variant), of one backend (None: all)."""
    rows = s[(s[C.CASE] == case) & s[C.PRIMARY].fillna(False).astype(bool)]
    if backend is not None and C.BACKEND in rows:
        rows = rows[rows[C.BACKEND] == backend]
    return rows


def contiguous_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.CHUNK_SHAPE].fillna("") == ""]


def chunked_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows[C.CHUNK_SHAPE].fillna("") != ""]


def gzip_level(compression: str) -> int | None:
    """The level of a gzip compression name (``gzip-4``: 4), or None for any other."""
    head, _, level = str(compression).rpartition("-")
    return int(level) if head == "gzip" and level.isdigit() else None


def above(low: float, high: float, threshold: float) -> bool | None:
    """Whether an interval lies wholly above ``threshold`` (True), wholly at or below it
    (False), or admits both (None); an interval not measured admits both."""
    if pd.isna(low) or pd.isna(high):
        return None
    if low > threshold:
        return True
    if high <= threshold:
        return False
    return None


def below(low: float, high: float, threshold: float) -> bool | None:
    """Whether an interval lies wholly below ``threshold`` (True), wholly at or above it
    (False), or admits both (None)."""
    return above(-high, -low, -threshold)


def majority(states: list[bool | None]) -> bool | None:
    """A claim about most cases: True where more than half are surely so, False where at
    least half are surely not, None otherwise."""
    n = len(states)
    if sum(s is True for s in states) * 2 > n:
        return True
    if sum(s is False for s in states) * 2 >= n:
        return False
    return None


def every(states: list[bool | None]) -> bool | None:
    """A claim about all cases: True where every one is surely so, False where one is surely
    not, None otherwise."""
    if all(st is True for st in states):
        return True
    if any(st is False for st in states):
        return False
    return None


def counts(states: list[bool | None]) -> str:
    return (
        f"{sum(s is True for s in states)} surely so, {sum(s is False for s in states)} surely not, "
        f"{sum(s is None for s in states)} undecided of {len(states)}"
    )


@dataclass(frozen=True, eq=False)
class Party:
    """One filesystem of one finished sweep, as a finding across sweeps sees it (``python -m
    h5sweep.compare``): named ``<results folder>:<filesystem>`` (the folder's parent folder
    before it, ``<parent>/<results folder>:<filesystem>``, where two results folders have one
    name, and its host before that where they still do), with that filesystem's summary rows,
    the sweep's dataset shape, and the host(s) and filesystem type it was measured on (the
    measurements' ``host`` and ``fs_type``; "" where they were not recorded). A comparative
    finding's check takes its *cast*, a dict of the roles its sentence names (``orig``,
    ``big``; ``scratch``, ``project``) to parties."""

    name: str
    sweep: str
    filesystem: str
    shape: tuple[int, ...]
    summary: pd.DataFrame
    aliases: tuple[str, ...] = ()  # other names the user may give it (``--role ROLE=NAME``)
    host: str = ""
    fs_type: str = ""


def _recorded(run, filesystem: str, column: str) -> str:
    """What a run recorded in ``column`` for one filesystem (its summary's, else its
    measurements'), the distinct values joined by ``+``; "" where it recorded none."""
    for frame in (run.summary, getattr(run, "measurements", None)):
        if frame is None or column not in frame:
            continue
        rows = frame[frame[C.FILESYSTEM].astype(str) == filesystem] if C.FILESYSTEM in frame else frame
        values = sorted({str(v) for v in rows[column].dropna() if str(v)})
        if values:
            return "+".join(values)
    return ""


def parties(runs) -> list[Party]:
    """The parties of finished sweeps (each with ``.path``, ``.sweep``, ``.shape``, ``.summary``
    and, where it has them, ``.measurements``): one per filesystem of each sweep's summary, each
    under a name no other party has."""
    out = []
    for run in runs:
        s = run.summary
        names = sorted(set(s[C.FILESYSTEM].astype(str))) if C.FILESYSTEM in s and len(s) else []
        for filesystem in names:
            alone = (run.path.name, run.sweep) if len(names) == 1 else ()
            host = _recorded(run, filesystem, C.HOST)
            out.append(
                (
                    run,
                    Party(
                        f"{run.path.name}:{filesystem}",
                        run.sweep,
                        filesystem,
                        tuple(run.shape),
                        s[s[C.FILESYSTEM].astype(str) == filesystem],
                        (f"{run.sweep}:{filesystem}", filesystem, *alone),
                        host,
                        _recorded(run, filesystem, C.FS_TYPE),
                    ),
                )
            )
    named = [p.name for _, p in out]
    if len(set(named)) == len(named):
        return [p for _, p in out]
    unique = []
    for run, party in out:
        name = party.name
        if named.count(name) > 1:  # two results folders of one name: their parent folders tell them apart
            name = f"{run.path.parent.name}/{name}"
            if [f"{r.path.parent.name}/{p.name}" for r, p in out].count(name) > 1 and party.host:
                name = f"{party.host}/{name}"
        unique.append((name, party))
    final = [n for n, _ in unique]
    return [
        replace(p, name=n if final.count(n) == 1 else f"{n}#{final[: i + 1].count(n)}")
        for i, (n, p) in enumerate(unique)
    ]


def matching(found: list[Party], name: str) -> list[Party]:
    """The parties called ``name``: the one of that name, else every one with it as an alias."""
    exact = [p for p in found if p.name == name]
    return exact or [p for p in found if name in p.aliases]


def find_party(found: list[Party], name: str) -> Party | None:
    """The one party called ``name`` (its own name, else a unique alias), or None."""
    named = matching(found, name)
    return named[0] if len(named) == 1 else None


# A median's 95% interval from order statistics needs 6 or more values: with 5 or fewer it is
# the whole range, covering less than 95% (config/README.md, `median_ci_low_s`).
MIN_REPEATS = 6
FEW_REPEATS = f"needs {MIN_REPEATS} or more repeats for a 95% interval of a median"


def short_of_repeats(rows: pd.DataFrame) -> pd.Series:
    """Which summary rows have fewer than :data:`MIN_REPEATS` timed operations (``repeats``;
    a row that does not say how many counts as short)."""
    if C.REPEATS not in rows:
        return pd.Series(True, index=rows.index)
    return ~(pd.to_numeric(rows[C.REPEATS], errors="coerce") >= MIN_REPEATS)


def same_machine(a: Party, b: Party) -> str:
    """Where two parties were not measured on one host and one filesystem type, why ("" where
    they were)."""
    if not a.host or not b.host or not a.fs_type or not b.fs_type:
        return f"{a.name} or {b.name} does not record its host and filesystem type"
    if a.host != b.host:
        return f"{a.name} was measured on host {a.host}, {b.name} on {b.host}"
    if a.fs_type != b.fs_type:
        return f"{a.name} is on {a.fs_type}, {b.name} on {b.fs_type}"
    return ""


@dataclass(frozen=True)
class Comparative(Finding):
    """A finding across sweeps (``python -m h5sweep.compare``): its ``check`` takes a cast (the
    roles its sentence names, ``roles``, to parties) instead of one summary. ``cast`` finds the
    casts among the parties where the user named no role: function(parties, given) -> (casts,
    words: what is missing where there are none); None: a party plays a role where its
    filesystem, sweep or results folder is called as the role. Besides :data:`Result`, a check
    may answer (UNMEASURED, words) where the parties were measured but not under the sentence's
    conditions (its I/O-bound system is not the slower one, say)."""

    roles: tuple[str, ...] = ()
    cast: Callable | None = None


def within(low: float, high: float, least: float, most: float) -> bool | None:
    """Whether an interval lies wholly within [least, most] (True), wholly outside it (False),
    or admits both (None)."""
    if pd.isna(low) or pd.isna(high):
        return None
    if least <= low and high <= most:
        return True
    if high < least or low > most:
        return False
    return None
