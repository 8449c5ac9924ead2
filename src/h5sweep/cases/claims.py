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
from dataclasses import dataclass

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
    h5sweep.compare``): named ``<results folder>:<filesystem>``, with that filesystem's summary
    rows and the sweep's dataset shape. A comparative finding's check takes its *cast*, a dict
    of the roles its sentence names (``orig``, ``big``; ``scratch``, ``project``) to parties."""

    name: str
    sweep: str
    filesystem: str
    shape: tuple[int, ...]
    summary: pd.DataFrame
    aliases: tuple[str, ...] = ()  # other names the user may give it (``--role ROLE=NAME``)


def parties(runs) -> list[Party]:
    """The parties of finished sweeps (each with ``.path``, ``.sweep``, ``.shape``, ``.summary``):
    one per filesystem of each sweep's summary."""
    out = []
    for run in runs:
        s = run.summary
        names = sorted(set(s[C.FILESYSTEM].astype(str))) if C.FILESYSTEM in s and len(s) else []
        for filesystem in names:
            alone = (run.path.name, run.sweep) if len(names) == 1 else ()
            out.append(
                Party(
                    f"{run.path.name}:{filesystem}",
                    run.sweep,
                    filesystem,
                    tuple(run.shape),
                    s[s[C.FILESYSTEM].astype(str) == filesystem],
                    (f"{run.sweep}:{filesystem}", filesystem, *alone),
                )
            )
    return out


def find_party(found: list[Party], name: str) -> Party | None:
    """The one party called ``name`` (its own name, else a unique alias), or None."""
    exact = [p for p in found if p.name == name]
    if exact:
        return exact[0]
    named = [p for p in found if name in p.aliases]
    return named[0] if len(named) == 1 else None


Cast = dict[str, Party]  # a comparative finding's roles, each played by a party


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
