"""From measurements to a decision: which layout to choose for the user's read mix (the
ranking; :mod:`.wording` says it, :mod:`.recommend` writes it).

Per filesystem, every store of the grid (backend, layout and compression), read with each read
option the sweep measured (each chunk cache, each Zarr reader: a user chooses how to read as
well as how to store), is scored by the configured objective
(:mod:`h5sweep.measure.objective`): by default the expected time of one unit of the user's
work, ``sum_c n_c * mean_c`` with ``n_c`` the reads of case ``c`` the unit does
(``recommend.weights``), ranked by its ratio to the reference store's. Its 95% interval comes
from a paired bootstrap over the selections (and the store copies they were read from), every
store resampled alike, with a fixed seed so that the same measurements give the same table. A
store whose score over the best's has a paired interval reaching 1 is tied with it: the
measurements cannot tell them apart, and the verdict says so instead of picking by noise.

Layouts beyond the user's limits (file size relative to the raw data, write time) are listed
but not chosen. On an object store through the relay, a read that met a fault, a failed answer
or a retry is ``disturbed``: its time is partly the fault's. The stores are compared on the
selections every store read undisturbed (the pairing kept), or, where that leaves a case fewer
than :data:`MIN_UNDISTURBED`, not ranked, and the table says why; a store with a read failed on
an emulated fault is not ranked either. Nothing here imports an I/O library.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from h5sweep.analyze.aggregate import DEFAULT_REFERENCE, failed_reads, reference_name
from h5sweep.backends import OPTION_COLUMNS, REFERENCE
from h5sweep.measure import objective as objectives
from h5sweep.storage import columns as C
from h5sweep.storage import objectstore


def reference_of(settings: dict | None) -> dict:
    return (settings or {}).get("reference") or DEFAULT_REFERENCE


def is_reference(frame: pd.DataFrame, reference: dict) -> pd.Series:
    """Rows of the reference store (the reference backend's, with the reference compression,
    read with the backend's first read option)."""
    mine = (frame[C.LAYOUT_ID] == reference[C.LAYOUT_ID]) & (frame[C.COMPRESSION] == reference[C.COMPRESSION])
    if C.BACKEND in frame:
        mine &= frame[C.BACKEND] == REFERENCE
    if C.READ_OPTION_INDEX in frame:
        mine &= frame[C.READ_OPTION_INDEX].fillna(0) == 0
    return mine


def with_read_option(reads: pd.DataFrame) -> pd.DataFrame:
    """``reads`` with the columns that name each row's read option (records from before they
    were written: the option's settings in words, and its place taken as the first)."""
    if C.READ_OPTION not in reads:
        present = [c for c in (C.READER, *OPTION_COLUMNS) if c in reads]
        words = reads[present].apply(lambda r: " ".join(str(v) for v in r if pd.notna(v)), axis=1) if present else ""
        reads = reads.assign(**{C.READ_OPTION: words})
    if C.READ_OPTION_SETTING not in reads:
        reads = reads.assign(**{C.READ_OPTION_SETTING: ""})
    if C.READ_OPTION_INDEX not in reads:
        reads = reads.assign(**{C.READ_OPTION_INDEX: 0})
    return reads


STATISTIC_WORDS = {
    "first-access": "first access after the file was evicted and reopened",
    "sustained": "sustained reads of an open file",
}
BOOTSTRAP_SEED = 20_261_122
# where faults disturbed some reads, each case of the mix must keep at least this many selections
# read undisturbed by every store to be ranked on them (the fewest whose lowest and highest hold
# the median with 95%: the chance that all n fall on one side of it is 2 * 0.5**n, under 5% from 6)
MIN_UNDISTURBED = 6
WEIGHT_PREFIX = "weight_"  # the recommendation table's weight_<case> columns: the read mix as data
SAME_SIZE = 1.05  # files of tied stores within this factor of the smallest count as the same size
CANDIDATE_KEYS = [C.FILESYSTEM, C.BACKEND, C.LAYOUT_ID, C.COMPRESSION]


def candidate_mask(frame: pd.DataFrame, row, keys: list[str] = CANDIDATE_KEYS) -> pd.Series:
    """Which rows of ``frame`` are of the same candidate as ``row``: equal in each of ``keys``
    that both have and ``row`` sets (a read option only where the row names one)."""
    mask = pd.Series(True, index=frame.index)
    for key in keys:
        if key in frame and key in row and pd.notna(row[key]):
            mask &= frame[key] == row[key]
    return mask


def rows_of(frame: pd.DataFrame, row, keys: list[str] = CANDIDATE_KEYS) -> pd.DataFrame:
    """The rows of ``frame`` of the same candidate as ``row`` (:func:`candidate_mask`)."""
    return frame[candidate_mask(frame, row, keys)]


COLUMNS = [
    C.FILESYSTEM,
    C.FS_TYPE,
    C.BACKEND,
    C.RANK,
    C.LAYOUT_ID,
    C.LAYOUT_NAME,
    C.CHUNK_SHAPE,
    C.COMPRESSION,
    C.READ_OPTION,
    C.READ_OPTION_INDEX,
    C.READ_OPTION_SETTING,
    C.OBJECTIVE,
    C.SCORE,
    C.SCORE_CI_LOW,
    C.SCORE_CI_HIGH,
    objectives.MIX_SECONDS,
    objectives.MIX_SECONDS_CI_LOW,
    objectives.MIX_SECONDS_CI_HIGH,
    objectives.MIX_RATIO,
    objectives.MIX_RATIO_CI_LOW,
    objectives.MIX_RATIO_CI_HIGH,
    objectives.WORST_CASE,
    objectives.WORST_SLOWDOWN,
    objectives.WORST_SLOWDOWN_CI_LOW,
    objectives.WORST_SLOWDOWN_CI_HIGH,
    objectives.CASE_SPREAD,
    objectives.WEIGHTED_RATIO,
    objectives.WEIGHTED_RATIO_CI_LOW,
    objectives.WEIGHTED_RATIO_CI_HIGH,
    objectives.TO_BEST,
    objectives.TO_BEST_CI_LOW,
    objectives.TO_BEST_CI_HIGH,
    C.TIED_WITH_BEST,
    C.RECOMMENDED,
    C.MEETS_LIMITS,
    C.EXCLUDED_BY,
    C.FILE_BYTES,
    C.FILE_RATIO,
    C.WRITE_MEDIAN_S,
    C.WRITE_STOPPED,
    C.STATISTIC,
    C.WEIGHTS,
    C.SELECTIONS,
    C.REFERENCE_STORE,
    C.IS_REFERENCE,
    C.RACED_OUT_ROUND,
    C.RACED_OUT_AT_LEAST,
]


def weights_of(settings: dict) -> dict[str, float]:
    """The read mix ``recommend.weights`` holds (filled by the sweep:
    :func:`h5sweep.sweep.model.recommend_from_config`), its weighted read cases in the sweep's order."""
    return objectives.given_mix(settings["recommend"]["weights"], settings["read_cases"])


def selected_reads(measurements: pd.DataFrame, settings: dict, cases: list[str] | None = None) -> pd.DataFrame:
    """The timed reads the recommendation compares: the read mix's cases, in the sweep's
    first visiting policy and every read option (each its own candidate), of the statistic's
    kind (``first-access``: reads after eviction and reopening, i.e. ``cold: every``, else each
    case's first read of the file; ``sustained``: the reads of an open file after its first
    under ``cold: first``). ``cases``: these cases' reads instead of the mix's."""
    cases = list(weights_of(settings)) if cases is None else cases
    reads = measurements[measurements[C.CASE].isin(cases)] if C.CASE in measurements else measurements
    if reads.empty or C.COLD_MODE not in reads:  # no read case measured
        return reads.iloc[0:0]
    if C.POLICY in reads:
        reads = reads[reads[C.POLICY] == settings["policy"]]
    reads = with_read_option(reads)
    # a read failed on an emulated fault is kept whatever its kind: its store is not ranked
    failed = failed_reads(reads)
    reads, failures = reads[~failed], reads[failed]
    sustained = reads[(reads[C.COLD_MODE] == "first") & (reads[C.READS_SINCE_OPEN] > 0)]
    if settings["recommend"]["statistic"] == "sustained":
        return pd.concat([sustained, failures]) if len(failures) else sustained
    every = reads[reads[C.COLD_MODE] == "every"]
    # a case read only under cold: first has one first access per store: nothing to give an
    # interval; its sustained reads (repeats - 1 per store) are ranked instead, and said so
    only_first = set(reads[C.CASE]) - set(every[C.CASE])
    return pd.concat([every, sustained[sustained[C.CASE].isin(only_first)], *([failures] if len(failures) else [])])


def ranked_statistic(reads: pd.DataFrame, settings: dict) -> str:
    """What the ranking compares, in the words of the ``statistic`` column: the configured
    statistic, and the cases whose sustained reads stand in for first accesses."""
    statistic = settings["recommend"]["statistic"]
    if statistic == "sustained" or reads.empty or C.COLD_MODE not in reads:
        return statistic
    instead = sorted(set(reads.loc[reads[C.COLD_MODE] == "first", C.CASE]))
    if not instead:
        return statistic
    return f"{statistic}; sustained for {', '.join(instead)} (cold: first leaves one first access per store)"


def rank_layouts(measurements: pd.DataFrame, summary: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """The recommendation table: one row per filesystem, backend, layout, compression and read
    option."""
    return rank_selected_reads(selected_reads(measurements, settings), summary, settings)


def mix_words(mix: dict[str, float]) -> str:
    """The read mix in words (the ``weights`` column, for display only): reads of each case per
    unit of the user's work."""
    return ", ".join(f"{c} {n:g}" for c, n in mix.items())


def mix_columns(weights: dict[str, float], cases: list[str]) -> dict:
    """The read mix of ``cases`` as the recommendation table carries it: one ``weight_<case>``
    column per case, its reads per unit of work, beside its words (``weights``)."""
    mix = {c: float(weights[c]) for c in cases}
    return {C.WEIGHTS: mix_words(mix), **{f"{WEIGHT_PREFIX}{c}": n for c, n in mix.items()}}


def mix_in(rows: pd.Series | pd.DataFrame) -> dict[str, float]:
    """The read mix a row of the recommendation table was ranked by, {case: reads per unit of
    work}, in the mix's order, from its ``weight_<case>`` columns (of a table: its first row)."""
    row = rows.iloc[0] if isinstance(rows, pd.DataFrame) else rows
    return {
        str(name).removeprefix(WEIGHT_PREFIX): float(n)
        for name, n in row.items()
        if str(name).startswith(WEIGHT_PREFIX) and pd.notna(n)
    }


def rank_selected_reads(reads: pd.DataFrame, summary: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """:func:`rank_layouts` of the reads :func:`selected_reads` chose, ranked by the
    configured objective (:mod:`h5sweep.measure.objective`)."""
    weights = weights_of(settings)
    if reads.empty:
        return pd.DataFrame(columns=COLUMNS)
    reference = reference_of(settings)
    objective = settings["recommend"].get("objective")  # None: its declared default
    statistic = ranked_statistic(reads, settings)
    if C.BACKEND not in reads:
        reads = reads.assign(backend=REFERENCE)
    failures = reads[failed_reads(reads)]
    reads = reads[reads[C.SECONDS] > 0]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    frames = []
    # every backend's stores are ranked together: their ratios share the reference store
    for filesystem, group in reads.groupby(C.FILESYSTEM, sort=True):
        counted = group
        # a store raced out of the pass is not ranked by its partial reads: listed after, as raced out
        raced = group[C.RACED_OUT_ROUND].notna() if C.RACED_OUT_ROUND in group else pd.Series(False, group.index)
        out, group = group[raced], group[~raced]
        # a store whose read failed on an emulated fault is not ranked: listed after, with why
        why = _failures(failures[failures[C.FILESYSTEM] == filesystem])
        group = group[~_of_stores(group, why)]
        out = out[~_of_stores(out, why)]
        group, short = _undisturbed(group, [c for c in weights if (group[C.CASE] == c).any()])
        if short:  # too few undisturbed selections: no store is ranked, each says why
            why = {**{store: short for store in _stores(group)}, **why}
            group = group.iloc[0:0]
        mine = is_reference(group, reference)
        if why and not mine.any() and not group.empty:  # the store every score is a ratio to failed
            said = f"not ranked: every score is a ratio to {reference_name(reference)}, which is not ranked"
            why = {**{store: said for store in _stores(group)}, **why}
            group = group.iloc[0:0]
        listed = _not_ranked(counted, failures, why, summary, settings, statistic, filesystem)
        if not mine.any():  # nothing to pair with
            if listed is not None:
                frames.append(listed)
            continue
        cases = [c for c in weights if (group[C.CASE] == c).any()]
        matrices = objectives.Reads.of(group, cases)
        keys = objectives.CHOICE_KEYS
        ref = matrices.stores.index(tuple(group.loc[mine, keys].iloc[0]))
        table = objectives.costs(matrices, weights, ref, rng, objective)
        samples = table.attrs.pop("score_samples")
        firsts = group.drop_duplicates(keys).set_index(keys)
        about = firsts.reindex(pd.MultiIndex.from_tuples(matrices.stores, names=keys))
        counts = group.groupby(keys)[C.REPEAT].count()
        table = table.assign(
            filesystem=filesystem,
            fs_type=about[C.FS_TYPE].to_numpy() if C.FS_TYPE in about else "",
            backend=[s[0] for s in matrices.stores],
            layout_id=[s[1] for s in matrices.stores],
            layout_name=about[C.LAYOUT_NAME].fillna("").to_numpy() if C.LAYOUT_NAME in about else "",
            chunk_shape=about[C.CHUNK_SHAPE].fillna("").to_numpy() if C.CHUNK_SHAPE in about else "",
            compression=[s[2] for s in matrices.stores],
            read_option=[s[3] for s in matrices.stores],
            read_option_setting=about[C.READ_OPTION_SETTING].fillna("").to_numpy(),
            read_option_index=about[C.READ_OPTION_INDEX].fillna(0).astype(int).to_numpy(),
            statistic=statistic,
            **mix_columns(weights, cases),
            selections=counts.reindex(about.index).fillna(0).astype(int).to_numpy(),
            reference_store=reference_name(reference),
        )
        table[C.IS_REFERENCE] = is_reference(table, reference)
        per_unit = _requests_per_unit(group, keys, weights, cases)
        if per_unit is not None:
            table[objectstore.REQUESTS_PER_UNIT] = per_unit.reindex(about.index).to_numpy(float)
        table = _with_limits(_with_costs(table, summary), settings["recommend"])
        paired = objectives.to_best(samples, table[C.SCORE].to_numpy(float), table[C.MEETS_LIMITS].to_numpy(bool))
        frames.append(_with_disturbance(pd.concat([table, paired], axis=1), counted, failures))
        if not out.empty:
            frames.append(_raced_out(out, summary, settings, table.iloc[0]))
        if listed is not None:
            frames.append(listed)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    ranked = _ranked(pd.concat(frames, ignore_index=True))
    return _with_fault_cost(ranked, reads, weights)


def _stores(reads: pd.DataFrame) -> list[tuple]:
    return list(dict.fromkeys(map(tuple, reads[objectives.CHOICE_KEYS].itertuples(index=False))))


def _of_stores(reads: pd.DataFrame, stores) -> pd.Series:
    """Whether each read is of one of ``stores`` (store and read option, :data:`CHOICE_KEYS`)."""
    if not len(stores) or reads.empty:
        return pd.Series(False, index=reads.index)
    keys = reads[objectives.CHOICE_KEYS].itertuples(index=False)
    return pd.Series([tuple(k) in stores for k in keys], index=reads.index)


def _failures(failures: pd.DataFrame) -> dict[tuple, str]:
    """Per store (and read option) with a read failed on an emulated fault: why it is not ranked."""
    out = {}
    for store, reads in failures.groupby(objectives.CHOICE_KEYS, sort=False):
        first = reads.iloc[0]
        emulated = first.get(objectstore.FAULTS_EMULATED)
        out[tuple(store)] = (
            f"not ranked: {len(reads)} read{'s' if len(reads) != 1 else ''} failed on an emulated fault "
            f"({emulated or 'emulated faults'}, injected by the relay on the loopback): "
            f"{first[objectstore.READ_FAILED]}"
        )
    return out


def _undisturbed(reads: pd.DataFrame, cases: list[str]) -> tuple[pd.DataFrame, str]:
    """The reads of the selections every store read undisturbed (a selection any store's read
    of which was disturbed is left out for every store, so the pairing holds), and, where that
    leaves a case fewer than :data:`MIN_UNDISTURBED` selections, why no store can be ranked."""
    if objectstore.DISTURBED not in reads or reads.empty:
        return reads, ""
    disturbed = reads[objectstore.DISTURBED].astype("boolean").fillna(False).astype(bool)
    if not disturbed.any():
        return reads, ""
    hit = set(map(tuple, reads.loc[disturbed, [C.CASE, C.REPEAT]].itertuples(index=False)))
    keep = [tuple(k) not in hit for k in reads[[C.CASE, C.REPEAT]].itertuples(index=False)]
    kept = reads[keep]
    short = []
    for case in cases:
        total = reads.loc[reads[C.CASE] == case, C.REPEAT].nunique()
        left = kept.loc[kept[C.CASE] == case, C.REPEAT].nunique()
        if left < total and left < MIN_UNDISTURBED:
            short.append(f"{case} {left} of {total}")
    if not short:
        return kept, ""
    return kept, (
        "not ranked: too few selections read undisturbed by every store to compare the stores on (faults, "
        f"failed answers or retries disturbed the others; each case needs {MIN_UNDISTURBED}): " + ", ".join(short)
    )


def _not_ranked(
    reads: pd.DataFrame,
    failures: pd.DataFrame,
    why: dict[tuple, str],
    summary: pd.DataFrame,
    settings: dict,
    statistic: str,
    filesystem: str,
) -> pd.DataFrame | None:
    """The stores of one filesystem that are not ranked, one row each with why (``not_ranked``)."""
    if not why:
        return None
    mine = pd.concat([reads, failures[failures[C.FILESYSTEM] == filesystem]])
    mine = mine[_of_stores(mine, why)]
    stores = mine.groupby(objectives.CHOICE_KEYS, sort=False)
    first = stores.first()
    keys = list(first.index)
    weights = weights_of(settings)
    cases = [c for c in weights if (mine[C.CASE] == c).any()]
    table = pd.DataFrame(
        {
            C.FILESYSTEM: filesystem,
            C.FS_TYPE: first[C.FS_TYPE].to_numpy() if C.FS_TYPE in first else "",
            C.BACKEND: [k[0] for k in keys],
            C.LAYOUT_ID: [k[1] for k in keys],
            C.LAYOUT_NAME: first[C.LAYOUT_NAME].fillna("").to_numpy() if C.LAYOUT_NAME in first else "",
            C.CHUNK_SHAPE: first[C.CHUNK_SHAPE].fillna("").to_numpy() if C.CHUNK_SHAPE in first else "",
            C.COMPRESSION: [k[2] for k in keys],
            C.READ_OPTION: [k[3] for k in keys],
            C.READ_OPTION_SETTING: first[C.READ_OPTION_SETTING].fillna("").to_numpy(),
            C.READ_OPTION_INDEX: first[C.READ_OPTION_INDEX].fillna(0).astype(int).to_numpy(),
            C.OBJECTIVE: objectives.objective_of(settings["recommend"].get("objective")).name,
            C.STATISTIC: statistic,
            **mix_columns(weights, cases),
            C.SELECTIONS: stores[C.SECONDS].count().to_numpy(),
            C.REFERENCE_STORE: reference_name(reference_of(settings)),
            C.SCORE: np.nan,
            objectstore.NOT_RANKED: [why[k] for k in keys],
        }
    )
    table[C.IS_REFERENCE] = is_reference(table, reference_of(settings))
    table = _with_limits(_with_costs(table, summary), settings["recommend"])
    table = table.assign(excluded_by=table[objectstore.NOT_RANKED], meets_limits=False, tied_with_best=False)
    return _with_disturbance(table, reads, failures)


def _with_disturbance(table: pd.DataFrame, reads: pd.DataFrame, failures: pd.DataFrame) -> pd.DataFrame:
    """Per store on an object store through the relay: its reads of the mix disturbed, its mean
    retried requests per read, its reads failed on an emulated fault and the faults emulated."""
    if objectstore.DISTURBED not in reads or reads[objectstore.DISTURBED].isna().all():
        return table
    every = pd.concat([reads, failures[failures[C.FILESYSTEM].isin(set(table[C.FILESYSTEM]))]])
    every = every.assign(
        _disturbed=every[objectstore.DISTURBED].astype("boolean").fillna(False).astype(int),
        _failed=failed_reads(every).astype(int),
    )
    per = every.groupby([C.FILESYSTEM, *objectives.CHOICE_KEYS], sort=False).agg(
        reads_disturbed=("_disturbed", "sum"),
        retries_per_read=(objectstore.REQUESTS_RETRIED, "mean"),
        reads_failed=("_failed", "sum"),
        faults_emulated=(objectstore.FAULTS_EMULATED, "first"),
    )
    index = pd.MultiIndex.from_frame(table[[C.FILESYSTEM, *objectives.CHOICE_KEYS]])
    found = per.reindex(index)
    return table.assign(**{name: found[name].to_numpy() for name in found.columns})


def _fault_free(filesystem: str) -> str:
    """A fault variant's filesystem name without its faults' suffix (``cloud_20ms_f1``: ``cloud_20ms``)."""
    return re.sub(r"_f\d+$", "", filesystem)


def _with_fault_cost(table: pd.DataFrame, reads: pd.DataFrame, weights: dict) -> pd.DataFrame:
    """Per store on a filesystem with emulated faults: the time the faults add to one unit of
    work against the same store and read option on the variant of the same filesystem without
    faults, paired on the selections both read (each case's mean difference times its reads
    per unit), with a bootstrap interval where two or more pairs of each case exist."""
    if objectstore.FAULTS_EMULATED not in reads or reads[objectstore.FAULTS_EMULATED].isna().all():
        return table
    emulated = reads.groupby(C.FILESYSTEM)[objectstore.FAULTS_EMULATED].first()
    clean = {_fault_free(fs): fs for fs, label in emulated.items() if label == "none" and fs != _fault_free(fs)}
    faulty = [fs for fs, label in emulated.items() if label != "none" and _fault_free(fs) in clean]
    if not faulty:
        return table
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    keys = objectives.CHOICE_KEYS
    added = {}
    for fs in faulty:
        twin = clean[_fault_free(fs)]
        mine, theirs = reads[reads[C.FILESYSTEM] == fs], reads[reads[C.FILESYSTEM] == twin]
        for store, reads_here in mine.groupby(keys, sort=False):
            there = theirs[_of_stores(theirs, {tuple(store)})]
            added[(fs, *store)] = (twin, *_added_per_unit(reads_here, there, weights, rng))
    names = [
        objectstore.FAULT_FREE_FILESYSTEM,
        objectstore.ADDED_S_PER_UNIT,
        objectstore.ADDED_S_PER_UNIT_CI_LOW,
        objectstore.ADDED_S_PER_UNIT_CI_HIGH,
        objectstore.ADDED_PAIRS,
    ]
    rows = [
        added.get(tuple(k), ("", np.nan, np.nan, np.nan, 0))
        for k in table[[C.FILESYSTEM, *keys]].itertuples(index=False)
    ]
    for i, name in enumerate(names):
        table[name] = [row[i] for row in rows]
    table[objectstore.FAULT_FREE_FILESYSTEM] = table[objectstore.FAULT_FREE_FILESYSTEM].replace("", np.nan)
    return table


def _added_per_unit(faulty: pd.DataFrame, clean: pd.DataFrame, weights: dict, rng) -> tuple[float, float, float, int]:
    """One store's time added per unit of work by the faults: each case's mean per-selection
    difference (the faulty read's time less the clean read's of the same selection) times its
    reads per unit, its 95% bootstrap interval (NaN with fewer than two pairs in a case: a
    point estimate) and the pairs."""
    point, samples, pairs, interval = 0.0, 0.0, 0, True
    for case, n in weights.items():
        a = faulty[faulty[C.CASE] == case].groupby(C.REPEAT)[C.SECONDS].mean()
        b = clean[clean[C.CASE] == case].groupby(C.REPEAT)[C.SECONDS].mean()
        both = a.index.intersection(b.index)
        if not len(both):
            if a.empty and b.empty:
                continue
            return np.nan, np.nan, np.nan, 0
        diff = (a[both] - b[both]).to_numpy(float)
        point += n * diff.mean()
        pairs += len(diff)
        if len(diff) < 2:
            interval = False
            continue
        picks = rng.integers(0, len(diff), size=(objectives.BOOTSTRAP_SAMPLES, len(diff)))
        samples = samples + n * diff[picks].mean(axis=1)
    if not interval or np.isscalar(samples):
        return point, np.nan, np.nan, pairs
    low, high = np.quantile(samples, [(1 - objectives.CONFIDENCE) / 2, (1 + objectives.CONFIDENCE) / 2])
    return point, float(low), float(high), pairs


def _requests_per_unit(reads: pd.DataFrame, keys: list[str], weights: dict, cases: list[str]) -> pd.Series | None:
    """On an object store, the requests one unit of work sends per store: each case's mean
    requests per read times its reads per unit (None where the reads counted none)."""
    if objectstore.REQUESTS not in reads or reads[objectstore.REQUESTS].isna().all():
        return None
    per_case = reads.groupby([*keys, C.CASE])[objectstore.REQUESTS].mean().unstack(C.CASE)
    return sum(per_case[case] * weights[case] for case in cases)


def _raced_out(reads: pd.DataFrame, summary: pd.DataFrame, settings: dict, like: pd.Series) -> pd.DataFrame:
    """The stores raced out of the read pass (``race``), one row each: when they stopped and
    how much slower than the best they were at least then; not ranked by their partial reads."""
    mix = mix_in(like)
    stores = reads.groupby(objectives.CHOICE_KEYS, sort=False)
    first = stores.first()
    table = pd.DataFrame(
        {
            C.FILESYSTEM: like[C.FILESYSTEM],
            C.FS_TYPE: like[C.FS_TYPE],
            C.BACKEND: [k[0] for k in first.index],
            C.LAYOUT_ID: [k[1] for k in first.index],
            C.LAYOUT_NAME: first[C.LAYOUT_NAME].fillna("").to_numpy() if C.LAYOUT_NAME in first else "",
            C.CHUNK_SHAPE: first[C.CHUNK_SHAPE].fillna("").to_numpy() if C.CHUNK_SHAPE in first else "",
            C.COMPRESSION: [k[2] for k in first.index],
            C.READ_OPTION: [k[3] for k in first.index],
            C.READ_OPTION_SETTING: first[C.READ_OPTION_SETTING].fillna("").to_numpy(),
            C.READ_OPTION_INDEX: first[C.READ_OPTION_INDEX].fillna(0).astype(int).to_numpy(),
            C.OBJECTIVE: like[C.OBJECTIVE],
            C.STATISTIC: like[C.STATISTIC],
            **mix_columns(mix, list(mix)),
            C.SELECTIONS: stores[C.REPEAT].count().to_numpy(),
            C.REFERENCE_STORE: like[C.REFERENCE_STORE],
            C.IS_REFERENCE: False,
            C.RACED_OUT_ROUND: first[C.RACED_OUT_ROUND].astype(int).to_numpy(),
            C.RACED_OUT_AT_LEAST: first[C.RACED_OUT_AT_LEAST].to_numpy(float),
        }
    )
    table = _with_limits(_with_costs(table, summary), settings["recommend"])
    words = [
        f"raced out at round {r}, at least {x:.2f}x the best" + (f"; {why}" if why else "")
        for r, x, why in zip(table[C.RACED_OUT_ROUND], table[C.RACED_OUT_AT_LEAST], table[C.EXCLUDED_BY], strict=True)
    ]
    return table.assign(excluded_by=words, meets_limits=False, tied_with_best=False)


def _with_costs(table: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """File size (and its ratio to the raw data) and the write case's median time, per store."""
    keys = CANDIDATE_KEYS
    sizes = summary.dropna(subset=[C.FILE_BYTES]).drop_duplicates(keys)[[*keys, C.FILE_BYTES, C.RAW_BYTES]]
    writes = summary[(summary[C.CASE] == "write") & summary[C.PRIMARY].astype(bool)]
    if C.WRITES_STOPPED not in writes:  # records from before writes could be stopped
        writes = writes.assign(writes_stopped=0)
    writes = writes.drop_duplicates(keys)[[*keys, C.MEDIAN_S, C.WRITES_STOPPED]]
    writes = writes.assign(write_stopped=writes[C.WRITES_STOPPED].fillna(0).astype(int) > 0)
    writes = writes.drop(columns=C.WRITES_STOPPED).rename(columns={C.MEDIAN_S: C.WRITE_MEDIAN_S})
    out = table.merge(sizes, on=keys, how="left").merge(writes, on=keys, how="left")
    out[C.WRITE_STOPPED] = out[C.WRITE_STOPPED].fillna(False).astype(bool)
    out[C.FILE_RATIO] = out[C.FILE_BYTES] / out[C.RAW_BYTES]
    return out.drop(columns=C.RAW_BYTES)


def _with_limits(table: pd.DataFrame, recommend: dict) -> pd.DataFrame:
    reasons = []
    for _, row in table.iterrows():
        why = []
        limit = recommend.get("max_file_ratio")
        if limit is not None and not row[C.FILE_RATIO] <= limit:
            why.append(f"file {row[C.FILE_RATIO]:.2f}x raw > {limit:g}")
        limit = recommend.get("max_write_s")
        if row[C.WRITE_STOPPED]:  # slower than its limit: its time is not known
            why.append(f"write stopped at {row[C.WRITE_MEDIAN_S]:.3g} s (cases.write.limit_s)")
        elif limit is not None and not row[C.WRITE_MEDIAN_S] <= limit:
            why.append(f"write {row[C.WRITE_MEDIAN_S]:.3g} s > {limit:g} s")
        reasons.append("; ".join(why))
    return table.assign(excluded_by=reasons, meets_limits=[not r for r in reasons])


def _ranked(table: pd.DataFrame) -> pd.DataFrame:
    """Ranks within each filesystem, every backend's stores together (layouts within the
    limits first, fastest first); the fastest within the limits, and those whose interval
    overlaps its interval, tied with it; of the tied, the smallest file is the recommendation
    (files within 5% of the smallest count as equal: then the best score)."""
    out = []
    for _, group in table.groupby(C.FILESYSTEM, sort=True):
        # the stores raced out (no score) last, by how far behind the best they were at least
        behind = [C.RACED_OUT_AT_LEAST] if C.RACED_OUT_AT_LEAST in group else []
        group = group.sort_values([C.MEETS_LIMITS, C.SCORE, *behind], ascending=[False, True, *[True] * len(behind)])
        group = group.assign(rank=range(1, len(group) + 1), tied_with_best=False, recommended=False)
        eligible = group[group[C.MEETS_LIMITS]]
        if not eligible.empty:
            best = eligible.iloc[0]
            # tied: the paired interval of its score over the best's reaches 1 (a layout
            # without an interval is tied with nothing but itself)
            tied = (eligible[objectives.TO_BEST_CI_LOW] <= 1.0) | (eligible.index == best.name)
            group.loc[eligible.index[tied], C.TIED_WITH_BEST] = True
            # the smallest file; files within SAME_SIZE of the smallest count as equal, and of
            # those the best score is chosen (a few kB of metadata decide nothing)
            candidates = eligible[tied]
            small = candidates[candidates[C.FILE_BYTES] <= candidates[C.FILE_BYTES].min() * SAME_SIZE]
            chosen = small.sort_values([C.SCORE, C.FILE_BYTES], kind="stable").index[0]
            group.loc[chosen, C.RECOMMENDED] = True
        out.append(group)
    ranked = pd.concat(out, ignore_index=True)
    faults = (
        objectstore.READS_DISTURBED,
        objectstore.RETRIES_PER_READ,
        objectstore.READS_FAILED,
        objectstore.FAULTS_EMULATED,
        objectstore.NOT_RANKED,
    )
    extra = [
        c
        for c in ranked.columns
        if c.startswith(("ratio_", "seconds_", WEIGHT_PREFIX)) or c == objectstore.REQUESTS_PER_UNIT or c in faults
    ]
    return ranked.reindex(columns=[*COLUMNS, *extra])
