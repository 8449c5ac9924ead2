"""The studies' comparative findings, judged across finished sweeps (``python -m h5sweep.compare``).

A comparative finding (:class:`h5sweep.cases.claims.Comparative`) quotes a sentence that sets
systems against each other (OpenMSI's ``/scratch`` against ``/project``, its I/O-bound
``portal`` against ``hopper``; the I/O lab's PC, workstation and cluster; Folk & Choi's BIGDOQ
against ORIGDOQ) and names the roles it speaks of. Each *party* (one filesystem of one sweep,
named ``<results folder>:<filesystem>``) plays a role where the user says so (``--role
ROLE=NAME``), else where its filesystem, sweep or results folder is called as the role; Folk &
Choi's images are cast by dataset size (:mod:`h5sweep.cases.parallel.sizes`). A check compares
like rows only (the same case, store, variant and cache state on each party), each by its 95%
interval; a ratio of two parties' medians runs from one's lower end over the other's upper end
to the upper over the lower, so the verdicts follow the single-sweep rules: ``holds`` only where
the intervals lie wholly on the sentence's side. The registry: this module's findings and each
case's ``compared_findings``; the sentences that are not judged across sweeps are listed with
why (:data:`NOT_COMPARED`)."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.cases import CASE_SPECS
from h5sweep.cases.claims import (
    FAILS,
    FOLK_CHOI,
    HOLDS,
    INCONCLUSIVE,
    IO_LAB,
    OPENMSI,
    STUDIES,
    UNMEASURED,
    VERDICTS,
    Comparative,
    Party,
    above,
    below,
    chunked_rows,
    contiguous_rows,
    counts,
    every,
    find_party,
    majority,
    parties,
    primary_reads,
)
from h5sweep.storage import columns as C

COLUMNS = [
    C.SYSTEM,
    C.FINDING,
    C.STUDY,
    C.SECTION,
    C.DOCUMENT,
    C.QUOTE,
    C.STATEMENT,
    C.VERDICT,
    C.EVIDENCE,
    C.NEEDS,
    C.STUDY_CONFIG,
]
SELECTIONS = ("slice", "spectra", "subcube")
LOW, HIGH = "_low", "_high"


def _keys(rows: pd.DataFrame) -> list[str]:
    """What makes two parties' rows alike: the case, the store, the variant and cache state."""
    keys = [C.CASE, C.LAYOUT_ID, C.COMPRESSION, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE]
    return [k for k in keys if k in rows]


def _reads(party: Party, cases, compression: str | None = None) -> pd.DataFrame:
    """A party's primary rows of ``cases`` on the reference backend, with their median
    intervals (of one compression, or all)."""
    rows = pd.concat([primary_reads(party.summary, case, REFERENCE) for case in cases])
    if compression is not None:
        rows = rows[rows[C.COMPRESSION] == compression]
    rows = rows.dropna(subset=[C.MEDIAN_S])
    return rows.assign(**{k: rows[k].fillna("") for k in _keys(rows)})


def _times(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Like rows of two parties, each with ``a``'s median time over ``b``'s (``ratio``) and its
    interval."""
    keys = [k for k in _keys(a) if k in b]
    both = a.merge(b, on=keys, suffixes=("", "_b"))
    return both.assign(
        ratio=both[C.MEDIAN_S] / both[f"{C.MEDIAN_S}_b"],
        **{
            LOW: both[C.MEDIAN_CI_LOW_S] / both[f"{C.MEDIAN_CI_HIGH_S}_b"],
            HIGH: both[C.MEDIAN_CI_HIGH_S] / both[f"{C.MEDIAN_CI_LOW_S}_b"],
        },
    )


def _codec_cost(party: Party) -> pd.DataFrame:
    """Per compressed chunked store and selection case: its median time over the uncompressed
    store's of the same chunk shape (``ratio``), with the interval."""
    rows = chunked_rows(_reads(party, SELECTIONS))
    plain, packed = rows[rows[C.COMPRESSION] == "none"], rows[rows[C.COMPRESSION] != "none"]
    keys = [k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE) if k in rows]
    both = packed.merge(plain, on=keys, suffixes=("", "_b"))
    both = both.assign(
        ratio=both[C.MEDIAN_S] / both[f"{C.MEDIAN_S}_b"],
        **{
            LOW: both[C.MEDIAN_CI_LOW_S] / both[f"{C.MEDIAN_CI_HIGH_S}_b"],
            HIGH: both[C.MEDIAN_CI_HIGH_S] / both[f"{C.MEDIAN_CI_LOW_S}_b"],
        },
    )
    return both[[*keys, C.COMPRESSION, "ratio", LOW, HIGH]]


def _range(rows: pd.DataFrame, column: str = "ratio") -> str:
    values = rows[column]
    return f"{values.median():.2f}x median ({values.min():.2f}-{values.max():.2f}) over {len(rows)}"


def _scratch_selections(cast) -> object:
    if not {"scratch", "project"} <= set(cast):
        return None
    scratch, project = (
        contiguous_rows(_reads(cast[r], ("spectra", "subcube"), "none")) for r in ("scratch", "project")
    )
    rows = _times(project, scratch)
    if rows.empty or set(rows[C.CASE]) != {"spectra", "subcube"}:
        return None
    states = [above(r[LOW], r[HIGH], 2.0) for _, r in rows.iterrows()]
    said = "; ".join(f"{r[C.CASE]} {r['ratio']:.2f}x ({r[LOW]:.2f}-{r[HIGH]:.2f})" for _, r in rows.iterrows())
    return every(states), f"contiguous, {cast['project'].name} over {cast['scratch'].name}: {said}"


def _project_writes(cast) -> object:
    if not {"scratch", "project"} <= set(cast):
        return None
    scratch, project = (contiguous_rows(_reads(cast[r], ("write",), "none")) for r in ("scratch", "project"))
    rows = _times(scratch, project)
    if rows.empty:
        return None
    states = [above(r[LOW], r[HIGH], 1.0) for _, r in rows.iterrows()]
    said = "; ".join(f"{r['ratio']:.2f}x ({r[LOW]:.2f}-{r[HIGH]:.2f})" for _, r in rows.iterrows())
    return every(states), f"contiguous write, {cast['scratch'].name}'s time over {cast['project'].name}'s: {said}"


def _io_bound(cast) -> tuple[bool | None, str]:
    """The sentence's condition: portal is the I/O-bound one, its uncompressed chunked z-slices
    surely slower than hopper's."""
    portal, hopper = (chunked_rows(_reads(cast[r], ("slice",), "none")) for r in ("portal", "hopper"))
    rows = _times(portal, hopper)
    states = [above(r[LOW], r[HIGH], 1.0) for _, r in rows.iterrows()]
    return majority(states) if states else None, f"uncompressed z-slices, portal over hopper: {counts(states)} slower"


def _compression_helps_portal(cast) -> object:
    if not {"portal", "hopper"} <= set(cast):
        return None
    cost = _codec_cost(cast["portal"])
    cost = cost[cost[C.CASE] == "slice"]
    if cost.empty:
        return None
    bound, said = _io_bound(cast)
    if bound is False:
        return UNMEASURED, f"{said}: portal is not the I/O-bound system the sentence speaks of"
    states = [below(r[LOW], r[HIGH], 1.0) for _, r in cost.iterrows()]
    words = f"{said}; on portal, compressed over uncompressed z-slices {_range(cost)}: {counts(states)} faster"
    return (majority(states) if bound else None), words


def _compression_contrast(cast) -> object:
    if not {"portal", "hopper"} <= set(cast):
        return None
    hopper, portal = _codec_cost(cast["hopper"]), _codec_cost(cast["portal"])
    keys = [k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE, C.COMPRESSION) if k in hopper and k in portal]
    both = hopper.merge(portal, on=keys, suffixes=("", "_b"))
    if both.empty:
        return None
    states = []
    for _, r in both.iterrows():
        slower = above(r[LOW], r[HIGH], 1.0)  # compression slows hopper's reads
        unlike = above(r[LOW] / r[f"{HIGH}_b"], r[HIGH] / r[f"{LOW}_b"], 1.0)  # more than portal's
        states.append(True if slower and unlike else False if False in (slower, unlike) else None)
    return majority(states), (
        f"compressed over uncompressed, hopper {_range(both)}, portal {_range(both, 'ratio_b')}; hopper slower and "
        f"slowed more than portal: {counts(states)} (case, chunk shape, codec)"
    )


def _compression_worse_on_scratch(cast) -> object:
    if not {"scratch", "project"} <= set(cast):
        return None
    scratch, project = _codec_cost(cast["scratch"]), _codec_cost(cast["project"])
    keys = [
        k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE, C.COMPRESSION) if k in scratch and k in project
    ]
    both = scratch.merge(project, on=keys, suffixes=("", "_b"))
    if both.empty:
        return None
    states = [above(r[LOW] / r[f"{HIGH}_b"], r[HIGH] / r[f"{LOW}_b"], 1.0) for _, r in both.iterrows()]
    return majority(states), (
        f"compressed over uncompressed, scratch {_range(both)}, project {_range(both, 'ratio_b')}; slowed more on "
        f"scratch: {counts(states)} (case, chunk shape, codec)"
    )


def _selections_faster(fast: str, slow: str, threshold: float = 1.0):
    """Most like selection rows (case, store, variant) surely faster on ``fast`` than on ``slow``:
    ``slow``'s median time over ``fast``'s above ``threshold``."""

    def check(cast) -> object:
        if not {fast, slow} <= set(cast):
            return None
        rows = _times(_reads(cast[slow], SELECTIONS), _reads(cast[fast], SELECTIONS))
        if rows.empty:
            return None
        states = [above(r[LOW], r[HIGH], threshold) for _, r in rows.iterrows()]
        return majority(states), (
            f"{cast[slow].name}'s time over {cast[fast].name}'s {_range(rows)} (case, store): {counts(states)} "
            f"above {threshold:g}x"
        )

    return check


def _iosize(party: Party) -> pd.DataFrame:
    s = party.summary
    if C.CASE not in s or C.MEDIAN_S not in s:
        return s.iloc[0:0]
    rows = s[s[C.CASE] == "iosize"].dropna(subset=[C.MEDIAN_S])
    return rows.assign(**{k: rows[k].fillna("") for k in (C.VARIANT, C.CACHE_STATE) if k in rows})


def _platforms_vary(cast) -> object:
    tables = [(name, _iosize(p)) for name, p in cast.items()]
    tables = [(n, t) for n, t in tables if not t.empty]
    if len(tables) < 2:
        return None
    keys = [k for k in (C.VARIANT, C.CACHE_STATE) if all(k in t for _, t in tables)]
    states, said = [], []
    for variant, rows in pd.concat([t.assign(_party=n) for n, t in tables], ignore_index=True).groupby(keys):
        if rows["_party"].nunique() < len(tables) or len(rows) != len(tables):
            continue
        fast, slow = rows.loc[rows[C.MEDIAN_S].idxmin()], rows.loc[rows[C.MEDIAN_S].idxmax()]
        low, high = (
            slow[C.MEDIAN_CI_LOW_S] / fast[C.MEDIAN_CI_HIGH_S],
            slow[C.MEDIAN_CI_HIGH_S] / fast[C.MEDIAN_CI_LOW_S],
        )
        states.append(above(low, high, 2.0))
        said.append(f"{variant[0]}: {slow['_party']} over {fast['_party']} {slow[C.MEDIAN_S] / fast[C.MEDIAN_S]:.2f}x")
    if not states:
        return None
    return majority(states), "; ".join(said[:4]) + (" ..." if len(said) > 4 else "") + f" ({counts(states)} 2x apart)"


def _better_than_pc(cast) -> object:
    others = [r for r in ("workstation", "cluster") if r in cast]
    if "pc" not in cast or not others:
        return None
    pc = _iosize(cast["pc"])
    states, said = [], []
    for role in others:
        rows = _times(_iosize(cast[role]), pc)
        for _, r in rows.iterrows():
            states.append(below(r[LOW], r[HIGH], 1.0))
        if len(rows):
            said.append(f"{role} over pc, time: {_range(rows)}")
    if not states:
        return None
    return every(states), "; ".join(said) + f" ({counts(states)} faster)"


def _everyone(found: list[Party], given: dict) -> tuple[list[dict], str]:
    """All parties with I/O-size rows, each under its own name."""
    mine = {p.name: p for p in found if not _iosize(p).empty}
    return ([mine], "") if len(mine) >= 2 else ([], "cases.iosize on two or more systems")


OPENMSI_CONFIG = STUDIES + "openmsi/chunking.yaml"
TWO_FILESYSTEMS = "filesystems: {scratch: ..., project: ...} (or --role scratch=NAME --role project=NAME)"
PORTAL_HOPPER = "the same sweep on two systems, named with --role portal=NAME --role hopper=NAME"
LAB_SECTION = "Lab - Timing the IO with Different Tools (Figure 1)"
FINDINGS: list[Comparative] = [
    Comparative(
        "scratch-faster-selections",
        "OpenMSI",
        OPENMSI,
        "Baseline Performance",
        "We observe that ``hopper`` using ``/scratch`` provides much better performance for selection of spectra "
        "and 3D subcubes of the data.",
        "the contiguous uncompressed store (the baseline): /project's median time over /scratch's 2x or more "
        "(interval wholly above) for spectra and for sub-cubes",
        "cases.spectra and cases.subcube, layouts.contiguous, on " + TWO_FILESYSTEMS,
        OPENMSI_CONFIG,
        _scratch_selections,
        roles=("scratch", "project"),
    ),
    Comparative(
        "scratch-better-reads",
        "OpenMSI",
        OPENMSI,
        "Discussion: System Performance",
        "In a serial setting we observe that ``hopper``'s ``/scratch`` filesystem generally provides better selective "
        "read performance than the ``/project`` file system.",
        "most selections (case and store alike on both) surely faster on /scratch: /project's median time over "
        "/scratch's wholly above 1",
        "cases.slice, spectra, subcube on " + TWO_FILESYSTEMS,
        OPENMSI_CONFIG,
        _selections_faster("scratch", "project"),
        roles=("scratch", "project"),
    ),
    Comparative(
        "hopper-project-faster",
        "OpenMSI",
        OPENMSI,
        "Discussion: System Performance",
        "Since the performance using ``/project`` is significantly higher on ``hopper`` login nodes than on ``portal``",
        "most selections (case and store alike on both) surely faster on hopper than on portal, both on /project: "
        "portal's median time over hopper's wholly above 1",
        "cases.slice, spectra, subcube on " + PORTAL_HOPPER,
        OPENMSI_CONFIG,
        _selections_faster("hopper", "portal"),
        roles=("portal", "hopper"),
    ),
    Comparative(
        "project-better-writes",
        "OpenMSI",
        OPENMSI,
        "Baseline Performance",
        "For serial data write performance we observe that ``/project`` provides better write performance.",
        "the contiguous uncompressed store's serial write: /scratch's median time over /project's surely above 1",
        "cases.write (repeats 2 or more), layouts.contiguous, on " + TWO_FILESYSTEMS,
        STUDIES + "openmsi/write-strategies.yaml",
        _project_writes,
        roles=("scratch", "project"),
    ),
    Comparative(
        "compression-helps-portal",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "For ``portal`` we observe that using compression can significantly improve the median selection time "
        "for the z-slice selection test case (see Figure :ref:`hdf5compSlice_figure`).",
        "where portal is the I/O-bound system (most uncompressed chunked z-slices surely slower than on hopper), "
        "most compressed stores read z-slices surely faster on portal than the uncompressed store of the same "
        "chunk shape",
        "cases.slice, compression: [none, gzip-<n>], on " + PORTAL_HOPPER,
        STUDIES + "openmsi/compression.yaml",
        _compression_helps_portal,
        roles=("portal", "hopper"),
    ),
    Comparative(
        "compression-contrast",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "In contrast to ``portal``, we observe on ``hopper`` a general decrease (of up to 1 order of magnitude) in "
        "the selection performance when using compression compared to when storing the data in raw, uncompressed "
        "form.",
        "for most compressed chunked stores and selection cases, compression surely slows hopper's reads (time "
        "over the uncompressed store's of the same chunk shape above 1) and slows them surely more than portal's",
        "cases.slice, spectra, subcube, compression: [none, gzip-<n>], on " + PORTAL_HOPPER,
        STUDIES + "openmsi/compression.yaml",
        _compression_contrast,
        roles=("portal", "hopper"),
    ),
    Comparative(
        "compression-worse-on-scratch",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "Generally it appears that the use of compression may have stronger negative effect on the selection "
        "performance when operating on the ``/scratch`` filesystem then when using ``/project``",
        "for most compressed chunked stores and selection cases, compression's cost (time over the uncompressed "
        "store's of the same chunk shape) surely larger on /scratch than on /project",
        "cases.slice, spectra, subcube, compression: [none, gzip-<n>], on " + TWO_FILESYSTEMS,
        STUDIES + "openmsi/compression.yaml",
        _compression_worse_on_scratch,
        roles=("scratch", "project"),
    ),
    Comparative(
        "platforms-vary",
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "In one word, the IO performance obviously varies in different platfroms.",
        "for most I/O-size variants (API, direction, cache state, request size) measured on every system, the "
        "slowest system's median time 2x or more the fastest's (interval wholly above)",
        "cases.iosize (repeats 2 or more) on two or more systems",
        STUDIES + "io-lab/chunk-io.yaml",
        _platforms_vary,
        cast=_everyone,
    ),
    Comparative(
        "better-than-pc",
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "their performances are always better than the PC.",
        "the workstation and the cluster (where measured) surely faster than the PC (median time over the PC's "
        "wholly below 1) in every I/O-size variant (API, direction, cache state, request size)",
        "cases.iosize (repeats 2 or more) on the PC and the workstation or cluster, named with --role pc=NAME "
        "--role workstation=NAME --role cluster=NAME",
        STUDIES + "io-lab/chunk-io.yaml",
        _better_than_pc,
        roles=("pc", "workstation", "cluster"),
    ),
]
# and each case's own, declared in its package (its spec's ``compared_findings``)
FINDINGS += [finding for spec in CASE_SPECS for finding in (spec.hook("compared_findings") or ())]
ROLES = sorted({role for finding in FINDINGS for role in finding.roles})

# The comparative sentences not judged across sweeps: (study, document, section, sentence, why)
NOT_COMPARED = (
    (
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "In the Workstation and Cluster, the change of binary performance on IO size is not obvious",
        "a statement about each of those platforms alone (its throughput against the size of the data): a single "
        "sweep's finding (cases.iosize), not a comparison; its second clause is better-than-pc",
    ),
    (
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "they slower than the binary IO by 1 or more order of magnitude",
        "h5sweep runs no formatted (text) I/O",
    ),
    (
        "I/O lab",
        IO_LAB,
        "Lab - Timing the IO with Different Tools (Figure 2)",
        "In the local PC and Huawei Workstation system, the parallel version shows almost no speed up, maybe because "
        "their hardware or system software does not support it.",
        "each platform alone (its parallel passes against one process): a single sweep's finding, not a comparison",
    ),
    (
        "OpenMSI",
        OPENMSI,
        "Local Scalability: Multi-processing",
        "We observe that we can achieve good speed-up for larger numbers of processes using ``hopper`` compared to "
        "``portal``.",
        "not judged across sweeps yet: the scaling case's speed-ups are judged on each sweep alone",
    ),
    (
        "Folk & Choi",
        FOLK_CHOI,
        "3.3 Results (Tables 6 and 10)",
        "Parallel HDF performed better than serial in all cases and rose to about 15 times serial for 12 processors.",
        "each row of Tables 6 and 10 speaks of one image alone (its parallel passes against its serial): a single "
        "sweep's finding, not a comparison of the two",
    ),
    (
        "Folk & Choi",
        FOLK_CHOI,
        "3.3 Results (Table 9, Big vs. orig chunk)",
        "Independent I/O 62% better for 1 processor when accessing BIG vs. ORIG, but steadily diminished to 16% "
        "better for 12 processor.",
        "a trend to 12 processes on both images: ORIGDOQ's shipped sweep runs 1 and 2 (the cores of one machine); "
        "not judged yet",
    ),
)


def _by_name(found: list[Party], roles: tuple[str, ...], given: dict) -> tuple[list[dict], str]:
    """The roles given, else each played by the one party whose filesystem, sweep or results
    folder is called as the role."""
    cast = dict(given)
    for role in roles:
        if role not in cast:
            named = [p for p in found if role in (p.filesystem, p.sweep, p.name.split(":")[0])]
            if len(named) == 1:
                cast[role] = named[0]
    if len(cast) < 2:
        return [], f"name the systems with {' '.join(f'--role {r}=NAME' for r in roles)}"
    return [cast], ""


def resolve(runs, roles: dict[str, str]) -> dict[str, Party]:
    """The parties the user named per role (``--role ROLE=NAME``); a role no finding names or a
    name no party has is refused, naming it and what there is."""
    found = parties(runs)
    out = {}
    for role, name in roles.items():
        if role not in ROLES:
            raise ValueError(f"--role {role}={name}: no comparative finding names the role {role} ({', '.join(ROLES)})")
        party = find_party(found, name)
        if party is None:
            raise ValueError(
                f"--role {role}={name}: no sweep's filesystem is called {name} "
                f"({', '.join(p.name for p in found) or 'no filesystem'})"
            )
        out[role] = party
    return out


def judge(finding: Comparative, cast: dict) -> tuple[str, str]:
    """One comparative finding's verdict and evidence on one cast."""
    try:
        result = finding.check(cast)
    except (KeyError, ValueError, IndexError, ZeroDivisionError):  # a column a sweep lacks
        result = None
    if result is None:
        return UNMEASURED, f"measure it with {finding.needs} (as {finding.config} does)"
    holds, evidence = result
    if holds == UNMEASURED:
        return UNMEASURED, evidence
    return (HOLDS if holds else FAILS if holds is False else INCONCLUSIVE), evidence


def evaluate(runs, roles: dict[str, str] | None = None) -> pd.DataFrame:
    """Every comparative finding's verdict on each cast of the sweeps' parties."""
    found = parties(runs)
    named = resolve(runs, roles or {})
    rows = []
    for finding in FINDINGS:
        given = {r: p for r, p in named.items() if r in finding.roles}
        casts, missing = finding.cast(found, given) if finding.cast else _by_name(found, finding.roles, given)
        base = {
            C.FINDING: finding.key,
            C.STUDY: finding.study,
            C.SECTION: finding.section,
            C.DOCUMENT: finding.document,
            C.QUOTE: finding.quote,
            C.STATEMENT: finding.statement,
            C.NEEDS: finding.needs,
            C.STUDY_CONFIG: finding.config,
        }
        if not casts:
            rows.append({**base, C.SYSTEM: "", C.VERDICT: UNMEASURED, C.EVIDENCE: missing})
        for cast in casts:
            verdict, evidence = judge(finding, cast)
            system = "; ".join(f"{r}={p.name}" if r != p.name else r for r, p in cast.items())
            rows.append({**base, C.SYSTEM: system, C.VERDICT: verdict, C.EVIDENCE: evidence})
    return pd.DataFrame(rows, columns=COLUMNS)


def markdown(table: pd.DataFrame) -> str:
    """``comparative-findings.md``: a count of verdicts, one table of the findings with the
    systems each compared, and the sentences not judged across sweeps with why."""
    counted = table[C.VERDICT].value_counts()
    lines = [
        "# Findings across sweeps",
        "",
        f"{len(FINDINGS)} comparative findings of the studies, each judged on the systems cast in its roles: "
        + ", ".join(f"{counted.get(v, 0)} {v}" for v in VERDICTS)
        + ". A finding holds only where the 95% intervals of like rows on the systems lie wholly on its sentence's "
        "side; 'not measured' says what would measure it.",
        "",
        "| study | section | the study says | systems | tested here | verdict | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r[C.STUDY]} | {r[C.SECTION]} | \u201c{r[C.QUOTE]}\u201d | {r[C.SYSTEM] or '-'} | {r[C.STATEMENT]} "
            f"| {r[C.VERDICT]} | {r[C.EVIDENCE]} |"
        )
    lines += ["", "## Not judged across sweeps", "", "| study | section | the study says | why |", "|---|---|---|---|"]
    for study, _, section, sentence, why in NOT_COMPARED:
        lines.append(f"| {study} | {section} | \u201c{sentence}\u201d | {why} |")
    return "\n".join(lines) + "\n"
