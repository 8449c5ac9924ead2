"""The studies' comparative findings, judged across finished sweeps (``python -m h5sweep.compare``).

A comparative finding (:class:`h5sweep.kit.claims.Comparative`) quotes a sentence that sets
systems against each other (OpenMSI's ``/scratch`` against ``/project``, its I/O-bound
``portal`` against ``hopper``; the I/O lab's PC, workstation and cluster; Folk & Choi's BIGDOQ
against ORIGDOQ) and names the roles it speaks of. Each *party* (one filesystem of one sweep,
named ``<results folder>:<filesystem>``, on the host and filesystem type it records) plays a
role where the user says so (``--role ROLE=NAME``), else where its filesystem, sweep or results
folder is called as the role; the lab's platforms are hosts; Folk & Choi's images are cast by
dataset size (:mod:`h5sweep.cases.parallel.sizes`). A sentence is judged under its conditions
only (OpenMSI's two filesystems on one host, its gzip-4 and m x m x 2048 chunks; else ``not
measured``, saying why). A check compares like rows only (the same case, store, variant and
cache state on each party), each by its 95% interval, from 6 or more repeats; a ratio of two
parties' medians runs from one's lower end over the other's upper end to the upper over the
lower, so the verdicts follow the single-sweep rules: ``holds`` only where the intervals lie
wholly on the sentence's side. The registry: this module's findings and each
case's ``compared_findings``; the sentences that are not judged across sweeps are listed with
why (:data:`NOT_COMPARED`)."""

from __future__ import annotations

import pandas as pd

from h5sweep.backends import REFERENCE
from h5sweep.cases import CASE_SPECS
from h5sweep.kit.claims import (
    FAILS,
    FEW_REPEATS,
    FOLK_CHOI,
    HOLDS,
    INCONCLUSIVE,
    IO_LAB,
    MIN_REPEATS,
    OPENMSI,
    STUDIES,
    UNMEASURED,
    VERDICTS,
    Comparative,
    Party,
    Result,
    above,
    below,
    chunked_rows,
    contiguous_rows,
    counts,
    every,
    majority,
    matching,
    parties,
    primary_reads,
    shape_of,
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
FEWEST = "_fewest"  # the fewest repeats a compared row's medians rest on


def _keys(rows: pd.DataFrame) -> list[str]:
    """What makes two parties' rows alike: the case, the store, the variant and cache state."""
    keys = [C.CASE, C.LAYOUT_ID, C.COMPRESSION, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE]
    return [k for k in keys if k in rows]


def _reads(party: Party, cases, compression: str | None = None) -> pd.DataFrame:
    """A party's primary rows of ``cases`` on the reference backend, with their median
    intervals (of one compression, or all) and how many repeats each rests on (``_fewest``)."""
    rows = pd.concat([primary_reads(party.summary, case, REFERENCE) for case in cases])
    if compression is not None:
        rows = rows[rows[C.COMPRESSION] == compression]
    rows = rows.dropna(subset=[C.MEDIAN_S])
    return rows.assign(**{k: rows[k].fillna("") for k in _keys(rows)}, **{FEWEST: _repeats(rows)})


def _repeats(rows: pd.DataFrame) -> pd.Series:
    """Each row's timed operations (0 where the row does not say)."""
    if C.REPEATS not in rows:
        return pd.Series(0, index=rows.index)
    return pd.to_numeric(rows[C.REPEATS], errors="coerce").fillna(0)


def _ratio(both: pd.DataFrame) -> pd.DataFrame:
    """Rows merged with a ``_b`` side: the median time over ``_b``'s (``ratio``), its interval,
    and the fewer repeats of the two (``_fewest``)."""
    return both.assign(
        ratio=both[C.MEDIAN_S] / both[f"{C.MEDIAN_S}_b"],
        **{
            LOW: both[C.MEDIAN_CI_LOW_S] / both[f"{C.MEDIAN_CI_HIGH_S}_b"],
            HIGH: both[C.MEDIAN_CI_HIGH_S] / both[f"{C.MEDIAN_CI_LOW_S}_b"],
            FEWEST: both[[FEWEST, f"{FEWEST}_b"]].min(axis=1),
        },
    )


def _times(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Like rows of two parties, each with ``a``'s median time over ``b``'s (``ratio``) and its
    interval."""
    keys = [k for k in _keys(a) if k in b]
    return _ratio(a.merge(b, on=keys, suffixes=("", "_b")))


def _measured(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows compared whose every median rests on :data:`MIN_REPEATS` or more repeats (a
    median's interval from fewer covers less than 95%), and where some do not, how many were
    left out and why."""
    fewest = rows[[c for c in rows.columns if c.startswith(FEWEST)]].min(axis=1)
    short = ~(fewest >= MIN_REPEATS)
    if not short.any():
        return rows, ""
    return rows[~short], f"{int(short.sum())} of {len(rows)} compared rows left out: {FEW_REPEATS}"


def _too_few(rows: pd.DataFrame, said: str) -> Result:
    """Where every row to compare was left out for its repeats, not measured and why; where
    there were none, None."""
    return (UNMEASURED, said) if said else None


def _with(words: str, left_out: str) -> str:
    return f"{words}; {left_out}" if left_out else words


# OpenMSI's compression sentences speak of its chosen codec and chunking: "we here generally
# set the aggression parameter to 4 for all tests" (Compression, line 358 of the seed) and "the
# different m x m x 2048 chunked data layouts (with m in [1, 10])" (Selection Performance, line
# 404): other levels and z-chunks are not compared.
STUDY_CODEC = "gzip-4"
STUDY_Z_CHUNK = 2048


def _study_chunking(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of m x m x 2048 chunks."""

    def theirs(chunk: str) -> bool:
        shape = shape_of(chunk)
        return len(shape) == 3 and shape[0] == shape[1] and shape[2] == STUDY_Z_CHUNK

    return rows[rows[C.CHUNK_SHAPE].map(theirs).astype(bool)]


def _codec_cost(party: Party) -> pd.DataFrame:
    """Per selection case and m x m x 2048 chunk shape: the gzip-4 store's median time over the
    uncompressed store's of the same chunk shape (``ratio``), with the interval."""
    rows = chunked_rows(_reads(party, SELECTIONS))
    rows = _study_chunking(rows)
    plain, packed = rows[rows[C.COMPRESSION] == "none"], rows[rows[C.COMPRESSION] == STUDY_CODEC]
    keys = [k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE) if k in rows]
    both = _ratio(packed.merge(plain, on=keys, suffixes=("", "_b")))
    return both[[*keys, C.COMPRESSION, "ratio", LOW, HIGH, FEWEST]]


def _range(rows: pd.DataFrame, column: str = "ratio") -> str:
    values = rows[column]
    return f"{values.median():.2f}x median ({values.min():.2f}-{values.max():.2f}) over {len(rows)}"


# OpenMSI compared /scratch and /project from one system: "On hopper we utilized the
# LUSTRE-based /scratch file system, as well as the global GPFS-based /project file system"
# (Test Platforms, line 14 of the seed).
def _on_hopper(cast) -> str:
    """Where the /scratch and /project parties were not measured on one host, why ("")."""
    scratch, project = cast["scratch"], cast["project"]
    if not scratch.host or not project.host:
        return f"{scratch.name} or {project.name} does not record its host: the study compared hopper's two filesystems"
    if scratch.host != project.host:
        return (
            f"{scratch.name} was measured on host {scratch.host}, {project.name} on {project.host}: the study "
            "compared /scratch and /project on one system, hopper"
        )
    return ""


def _filesystems(check):
    """A /scratch-against-/project check judged only where both are on one host."""

    def judged(cast) -> Result:
        if not {"scratch", "project"} <= set(cast):
            return None
        why = _on_hopper(cast)
        return (UNMEASURED, why) if why else check(cast)

    return judged


def _scratch_selections(cast) -> Result:
    scratch, project = (
        contiguous_rows(_reads(cast[r], ("spectra", "subcube"), "none")) for r in ("scratch", "project")
    )
    rows, left_out = _measured(_times(project, scratch))
    if rows.empty or set(rows[C.CASE]) != {"spectra", "subcube"}:
        return _too_few(rows, left_out)
    states = [above(r[LOW], r[HIGH], 2.0) for _, r in rows.iterrows()]
    said = "; ".join(f"{r[C.CASE]} {r['ratio']:.2f}x ({r[LOW]:.2f}-{r[HIGH]:.2f})" for _, r in rows.iterrows())
    return every(states), _with(f"contiguous, {cast['project'].name} over {cast['scratch'].name}: {said}", left_out)


def _project_writes(cast) -> Result:
    scratch, project = (contiguous_rows(_reads(cast[r], ("write",), "none")) for r in ("scratch", "project"))
    rows, left_out = _measured(_times(scratch, project))
    if rows.empty:
        return _too_few(rows, left_out)
    states = [above(r[LOW], r[HIGH], 1.0) for _, r in rows.iterrows()]
    said = "; ".join(f"{r['ratio']:.2f}x ({r[LOW]:.2f}-{r[HIGH]:.2f})" for _, r in rows.iterrows())
    words = f"contiguous write, {cast['scratch'].name}'s time over {cast['project'].name}'s: {said}"
    return every(states), _with(words, left_out)


def _io_bound(cast) -> tuple[bool | None | str, str]:
    """The sentence's condition: portal is the I/O-bound one, its uncompressed m x m x 2048
    chunked z-slices surely slower than hopper's (UNMEASURED where hopper has none)."""
    portal, hopper = (chunked_rows(_reads(cast[r], ("slice",), "none")) for r in ("portal", "hopper"))
    portal, hopper = (_study_chunking(rows) for rows in (portal, hopper))
    rows, left_out = _measured(_times(portal, hopper))
    if rows.empty:
        why = left_out or f"no uncompressed m x m x {STUDY_Z_CHUNK} z-slices on both systems"
        return UNMEASURED, f"{why}: whether portal is the I/O-bound system cannot be told"
    states = [above(r[LOW], r[HIGH], 1.0) for _, r in rows.iterrows()]
    return majority(states), f"uncompressed z-slices, portal over hopper: {counts(states)} slower"


def _compression_helps_portal(cast) -> Result:
    if not {"portal", "hopper"} <= set(cast):
        return None
    cost = _codec_cost(cast["portal"])
    cost, left_out = _measured(cost[cost[C.CASE] == "slice"])
    if cost.empty:
        return _too_few(cost, left_out)
    bound, said = _io_bound(cast)
    if bound == UNMEASURED:
        return UNMEASURED, said
    if bound is False:
        return UNMEASURED, f"{said}: portal is not the I/O-bound system the sentence speaks of"
    states = [below(r[LOW], r[HIGH], 1.0) for _, r in cost.iterrows()]
    words = f"{said}; on portal, {STUDY_CODEC} over uncompressed z-slices {_range(cost)}: {counts(states)} faster"
    return (majority(states) if bound else None), _with(words, left_out)


# "a general decrease (of up to 1 order of magnitude)" (Compression: Selection Performance,
# line 406 of the seed): no slowdown surely beyond 10x.
ORDER_OF_MAGNITUDE = 10.0


def _compression_contrast(cast) -> Result:
    if not {"portal", "hopper"} <= set(cast):
        return None
    hopper, portal = _codec_cost(cast["hopper"]), _codec_cost(cast["portal"])
    keys = [k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE, C.COMPRESSION) if k in hopper and k in portal]
    both, left_out = _measured(hopper.merge(portal, on=keys, suffixes=("", "_b")))
    if both.empty:
        return _too_few(both, left_out)
    states = []
    for _, r in both.iterrows():
        slower = above(r[LOW], r[HIGH], 1.0)  # compression slows hopper's reads
        unlike = above(r[LOW] / r[f"{HIGH}_b"], r[HIGH] / r[f"{LOW}_b"], 1.0)  # more than portal's
        states.append(True if slower and unlike else False if False in (slower, unlike) else None)
    worst = both.loc[both["ratio"].idxmax()]
    beyond = above(worst[LOW], worst[HIGH], ORDER_OF_MAGNITUDE)
    words = (
        f"{STUDY_CODEC} over uncompressed, hopper {_range(both)}, portal {_range(both, 'ratio_b')}; hopper slower "
        f"and slowed more than portal: {counts(states)} (case, chunk shape); hopper's largest slowdown "
        f"{worst['ratio']:.2f}x ({worst[LOW]:.2f}-{worst[HIGH]:.2f}), stated: up to 10x"
    )
    if beyond is True:
        return False, words + " (surely beyond it)"
    return majority(states), _with(words, left_out)


def _compression_worse_on_scratch(cast) -> Result:
    scratch, project = _codec_cost(cast["scratch"]), _codec_cost(cast["project"])
    keys = [
        k for k in (C.CASE, C.CHUNK_SHAPE, C.VARIANT, C.CACHE_STATE, C.COMPRESSION) if k in scratch and k in project
    ]
    both, left_out = _measured(scratch.merge(project, on=keys, suffixes=("", "_b")))
    if both.empty:
        return _too_few(both, left_out)
    states = []
    for _, r in both.iterrows():
        negative = above(r[LOW], r[HIGH], 1.0)  # compression surely slows /scratch's reads
        stronger = above(r[LOW] / r[f"{HIGH}_b"], r[HIGH] / r[f"{LOW}_b"], 1.0)  # more than /project's
        states.append(True if negative and stronger else False if False in (negative, stronger) else None)
    return majority(states), _with(
        f"{STUDY_CODEC} over uncompressed, scratch {_range(both)}, project {_range(both, 'ratio_b')}; slowed on "
        f"scratch, and more than on project: {counts(states)} (case, chunk shape)",
        left_out,
    )


def _selections_faster(fast: str, slow: str, threshold: float = 1.0, same_fs_type: bool = False):
    """Most like selection rows (case, store, variant) surely faster on ``fast`` than on ``slow``:
    ``slow``'s median time over ``fast``'s above ``threshold``; with ``same_fs_type``, only
    where both parties are on one filesystem type."""

    def check(cast) -> Result:
        if not {fast, slow} <= set(cast):
            return None
        a, b = cast[fast], cast[slow]
        if same_fs_type and (not a.fs_type or a.fs_type != b.fs_type):
            return UNMEASURED, (
                f"{b.name} is on {b.fs_type or 'an unrecorded filesystem type'}, {a.name} on "
                f"{a.fs_type or 'an unrecorded one'}: the sentence compares one filesystem, /project, from both systems"
            )
        rows, left_out = _measured(_times(_reads(b, SELECTIONS), _reads(a, SELECTIONS)))
        if rows.empty:
            return _too_few(rows, left_out)
        states = [above(r[LOW], r[HIGH], threshold) for _, r in rows.iterrows()]
        return majority(states), _with(
            f"{b.name}'s time over {a.name}'s {_range(rows)} (case, store): {counts(states)} above {threshold:g}x",
            left_out,
        )

    return check


def _iosize(party: Party) -> pd.DataFrame:
    s = party.summary
    if C.CASE not in s or C.MEDIAN_S not in s:
        return s.iloc[0:0]
    rows = s[s[C.CASE] == "iosize"].dropna(subset=[C.MEDIAN_S])
    rows = rows.assign(**{k: rows[k].fillna("") for k in (C.VARIANT, C.CACHE_STATE) if k in rows})
    return rows.assign(**{FEWEST: _repeats(rows)})


# The lab's platforms are machines: "three totally different platforms" (Figure 1, line 120 of
# the seed), "a DELL PC, a Huawei Workstation and a DELL cluster" (line 146).
def _hosts_apart(cast) -> str:
    """Where two of the cast share a host (or one records none), why: a platform is a host."""
    hosts = {role: p.host for role, p in cast.items()}
    unknown = sorted(role for role, host in hosts.items() if not host)
    if unknown:
        return f"{', '.join(unknown)} does not record its host: a platform is a machine"
    if len(set(hosts.values())) < len(hosts):
        return "two of them were measured on one host (" + ", ".join(f"{r}: {h}" for r, h in hosts.items()) + ")"
    return ""


def _platforms_vary(cast) -> Result:
    why = _hosts_apart(cast)
    if why:
        return UNMEASURED, f"{why}; the sentence speaks of different platforms"
    tables = [(name, _iosize(p)) for name, p in cast.items()]
    tables = [(n, t) for n, t in tables if not t.empty]
    if len(tables) < 2:
        return None
    keys = [k for k in (C.VARIANT, C.CACHE_STATE) if all(k in t for _, t in tables)]
    states, said, short = [], [], 0
    for variant, rows in pd.concat([t.assign(_party=n) for n, t in tables], ignore_index=True).groupby(keys):
        if rows["_party"].nunique() < len(tables) or len(rows) != len(tables):
            continue
        if (rows[FEWEST] < MIN_REPEATS).any():
            short += 1
            continue
        fast, slow = rows.loc[rows[C.MEDIAN_S].idxmin()], rows.loc[rows[C.MEDIAN_S].idxmax()]
        low, high = (
            slow[C.MEDIAN_CI_LOW_S] / fast[C.MEDIAN_CI_HIGH_S],
            slow[C.MEDIAN_CI_HIGH_S] / fast[C.MEDIAN_CI_LOW_S],
        )
        states.append(above(low, high, 2.0))
        said.append(f"{variant[0]}: {slow['_party']} over {fast['_party']} {slow[C.MEDIAN_S] / fast[C.MEDIAN_S]:.2f}x")
    left_out = f"{short} of {short + len(states)} variants left out: {FEW_REPEATS}" if short else ""
    if not states:
        return _too_few(pd.DataFrame(), left_out)
    words = "; ".join(said[:4]) + (" ..." if len(said) > 4 else "") + f" ({counts(states)} 2x apart)"
    return majority(states), _with(words, left_out)


def _better_than_pc(cast) -> Result:
    others = [r for r in ("workstation", "cluster") if r in cast]
    if "pc" not in cast or not others:
        return None
    why = _hosts_apart(cast)
    if why:
        return UNMEASURED, f"{why}; the sentence sets the workstation and the cluster against the PC"
    pc = _iosize(cast["pc"])
    states, said, left = [], [], []
    for role in others:
        rows, left_out = _measured(_times(_iosize(cast[role]), pc))
        states += [below(r[LOW], r[HIGH], 1.0) for _, r in rows.iterrows()]
        if len(rows):
            said.append(f"{role} over pc, time: {_range(rows)}")
        if left_out:
            left.append(f"{role}: {left_out}")
    if not states:
        return _too_few(pd.DataFrame(), "; ".join(left))
    words = _with("; ".join(said) + f" ({counts(states)} faster)", "; ".join(left))
    verdict = every(states)
    missing = [r for r in ("workstation", "cluster") if r not in others]
    if missing and verdict is not False:  # "their performances": the workstation's and the cluster's
        return UNMEASURED, f"{words}; the {missing[0]} was not measured, and the sentence speaks of both"
    return verdict, words


def _everyone(found: list[Party], given: dict) -> tuple[list[dict], str]:
    """The platforms named (``--role pc=, workstation=, cluster=``, two or more), else every
    party with I/O-size rows under its own name, one per host."""
    if len(given) >= 2:
        return [dict(given)], ""
    mine = [p for p in found if not _iosize(p).empty]
    hosts = {p.host for p in mine}
    if len(hosts) < 2:
        return [], "cases.iosize on two or more platforms (hosts)"
    if len(hosts) < len(mine) or "" in hosts:
        return [], (
            "the platforms are hosts, and some host has several filesystems with I/O-size rows (or records none): "
            "name them with --role pc=NAME --role workstation=NAME --role cluster=NAME"
        )
    return [{p.name: p for p in mine}], ""


OPENMSI_CONFIG = STUDIES + "openmsi/chunking.yaml"
TWO_FILESYSTEMS = (
    "filesystems: {scratch: ..., project: ...} on one host (or --role scratch=NAME --role project=NAME), "
    "repeats 6 or more"
)
PORTAL_HOPPER = "the same sweep on two systems, named with --role portal=NAME --role hopper=NAME, repeats 6 or more"
LAB_SECTION = "Lab - Timing the IO with Different Tools (Figure 1)"
FINDINGS: list[Comparative] = [
    Comparative(
        "scratch-faster-selections",
        "OpenMSI",
        OPENMSI,
        "Baseline Performance",
        "We observe that ``hopper`` using ``/scratch`` provides much better performance for selection of spectra "
        "and 3D subcubes of the data.",
        "on one host (hopper's two filesystems), the contiguous uncompressed store (the baseline): /project's "
        "median time over /scratch's 2x or more (interval wholly above) for spectra and for sub-cubes",
        "cases.spectra and cases.subcube, layouts.contiguous, on " + TWO_FILESYSTEMS,
        OPENMSI_CONFIG,
        _filesystems(_scratch_selections),
        roles=("scratch", "project"),
    ),
    Comparative(
        "scratch-better-reads",
        "OpenMSI",
        OPENMSI,
        "Discussion: System Performance",
        "In a serial setting we observe that ``hopper``'s ``/scratch`` filesystem generally provides better selective "
        "read performance than the ``/project`` file system.",
        "on one host (hopper's two filesystems), most selections (case and store alike on both) surely faster on "
        "/scratch: /project's median time over /scratch's wholly above 1",
        "cases.slice, spectra, subcube on " + TWO_FILESYSTEMS,
        OPENMSI_CONFIG,
        _filesystems(_selections_faster("scratch", "project")),
        roles=("scratch", "project"),
    ),
    Comparative(
        "hopper-project-faster",
        "OpenMSI",
        OPENMSI,
        "Discussion: System Performance",
        "Since the performance using ``/project`` is significantly higher on ``hopper`` login nodes than on ``portal``",
        "both systems on one filesystem type (/project, GPFS, on both), most selections (case and store alike on "
        "both) surely faster on hopper than on portal: portal's median time over hopper's wholly above 1",
        "cases.slice, spectra, subcube on " + PORTAL_HOPPER,
        OPENMSI_CONFIG,
        _selections_faster("hopper", "portal", same_fs_type=True),
        roles=("portal", "hopper"),
    ),
    Comparative(
        "project-better-writes",
        "OpenMSI",
        OPENMSI,
        "Baseline Performance",
        "For serial data write performance we observe that ``/project`` provides better write performance.",
        "on one host (hopper's two filesystems), the contiguous uncompressed store's serial write: /scratch's "
        "median time over /project's surely above 1",
        "cases.write, layouts.contiguous, on " + TWO_FILESYSTEMS,
        STUDIES + "openmsi/write-strategies.yaml",
        _filesystems(_project_writes),
        roles=("scratch", "project"),
    ),
    Comparative(
        "compression-helps-portal",
        "OpenMSI",
        OPENMSI,
        "Compression: Selection Performance",
        "For ``portal`` we observe that using compression can significantly improve the median selection time "
        "for the z-slice selection test case (see Figure :ref:`hdf5compSlice_figure`).",
        "m x m x 2048 chunks, gzip level 4 (the study's): where portal is the I/O-bound system (most uncompressed "
        "z-slices surely slower than on hopper; not measured without hopper's), most gzip-4 stores read z-slices "
        "surely faster on portal than the uncompressed store of the same chunk shape",
        "cases.slice, layouts m x m x 2048, compression: [none, gzip-4], on " + PORTAL_HOPPER,
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
        "m x m x 2048 chunks, gzip level 4: for most chunk shapes and selection cases, gzip-4 surely slows "
        "hopper's reads (time over the uncompressed store's of the same chunk shape above 1) and surely more than "
        "portal's; does not hold where hopper's largest slowdown is surely beyond 10x (up to 1 order of magnitude)",
        "cases.slice, spectra, subcube, layouts m x m x 2048, compression: [none, gzip-4], on " + PORTAL_HOPPER,
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
        "on one host, m x m x 2048 chunks, gzip level 4: for most chunk shapes and selection cases, gzip-4's cost "
        "(time over the uncompressed store's of the same chunk shape) surely above 1 on /scratch and surely larger "
        "there than on /project",
        "cases.slice, spectra, subcube, layouts m x m x 2048, compression: [none, gzip-4], on " + TWO_FILESYSTEMS,
        STUDIES + "openmsi/compression.yaml",
        _filesystems(_compression_worse_on_scratch),
        roles=("scratch", "project"),
    ),
    Comparative(
        "platforms-vary",
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "In one word, the IO performance obviously varies in different platfroms.",
        "platforms are hosts (two or more): for most I/O-size variants (API, direction, cache state, request size) "
        "measured on every one, the slowest platform's median time 2x or more the fastest's (interval wholly above)",
        "cases.iosize (repeats 6 or more) on two or more hosts (or named with --role pc=NAME --role "
        "workstation=NAME --role cluster=NAME)",
        STUDIES + "io-lab/chunk-io.yaml",
        _platforms_vary,
        roles=("pc", "workstation", "cluster"),
        cast=_everyone,
    ),
    Comparative(
        "better-than-pc",
        "I/O lab",
        IO_LAB,
        LAB_SECTION,
        "their performances are always better than the PC.",
        "the workstation and the cluster, each on its own host, both surely faster than the PC (median time over "
        "the PC's wholly below 1) in every I/O-size variant (API, direction, cache state, request size); with one "
        "of them measured it can only fail",
        "cases.iosize (repeats 6 or more) on the PC, the workstation and the cluster, named with --role pc=NAME "
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
            named = [p for p in found if role in (p.filesystem, p.sweep, p.name.split(":")[0].rsplit("/", 1)[-1])]
            if len(named) == 1:
                cast[role] = named[0]
    if len(cast) < 2:
        return [], f"name the systems with {' '.join(f'--role {r}=NAME' for r in roles)}"
    return [cast], ""


def resolve(runs, roles: dict[str, str]) -> dict[str, Party]:
    """The parties the user named per role (``--role ROLE=NAME``). Refused, naming what is
    wrong and what there is: a role no finding names, a name no party has, a name several
    parties answer to, and one party in two roles of one finding (``scratch`` and ``project``,
    say; ``hopper`` and ``project`` may be one party, hopper's /project)."""
    found = parties(runs)
    out = {}
    for role, name in roles.items():
        if role not in ROLES:
            raise ValueError(f"--role {role}={name}: no comparative finding names the role {role} ({', '.join(ROLES)})")
        named = matching(found, name)
        if not named:
            raise ValueError(
                f"--role {role}={name}: no sweep's filesystem is called {name} "
                f"({', '.join(p.name for p in found) or 'no filesystem'})"
            )
        if len(named) > 1:
            raise ValueError(
                f"--role {role}={name}: {name} names {len(named)} systems ({', '.join(p.name for p in named)}): "
                "give one of their names"
            )
        out[role] = named[0]
    for finding in FINDINGS:
        mine = [r for r in finding.roles if r in out]
        for i, role in enumerate(mine):
            for other in mine[i + 1 :]:
                if out[role] is out[other]:
                    raise ValueError(
                        f"--role {role}={roles[role]} --role {other}={roles[other]}: one system, "
                        f"{out[role].name}, in two roles of {finding.key}"
                    )
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
