"""From measurements to a decision: which layout to choose for the user's read mix.

Per filesystem, every store of the grid (backend, layout and compression) is scored by the
configured objective (:mod:`h5sweep.analyze.objectives`): by default the expected time of one
unit of the user's work, ``sum_c n_c * mean_c`` with ``n_c`` the reads of case ``c`` the
unit does (``recommend.weights``), ranked by its ratio to the reference store's. Its 95%
interval comes from a paired bootstrap over the selections (and the store copies they were
read from), every store resampled alike, with a fixed seed so that the same measurements give
the same table. A store whose score over the best's has a paired interval reaching 1 is tied
with it: the measurements cannot tell them apart, and the verdict says so instead of picking
by noise.

Layouts beyond the user's limits (file size relative to the raw data, write time) are listed
but not chosen. Nothing here imports an I/O library.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from h5sweep.analyze import calibration, objectives
from h5sweep.analyze.aggregate import DEFAULT_REFERENCE, reference_name
from h5sweep.analyze.parallel import PARALLEL_HEADING, parallel_markdown
from h5sweep.backends import REFERENCE
from h5sweep.backends import label as _backend_label
from h5sweep.host import measured_caveat
from h5sweep.storage.layouts import AUTO_LAYOUT_NAME


def reference_of(settings: dict | None) -> dict:
    return (settings or {}).get("reference") or DEFAULT_REFERENCE


def is_reference(frame: pd.DataFrame, reference: dict) -> pd.Series:
    """Rows of the reference store (the reference backend's, with the reference compression)."""
    mine = (frame["layout_id"] == reference["layout_id"]) & (frame["compression"] == reference["compression"])
    if "backend" in frame:
        mine &= frame["backend"] == REFERENCE
    return mine


STATISTICS = ("first-access", "sustained")
STATISTIC_WORDS = {
    "first-access": "first access after the file was evicted and reopened",
    "sustained": "sustained reads of an open file",
}
BOOTSTRAP_SEED = 20_261_122
CANDIDATE_KEYS = ["filesystem", "backend", "layout_id", "compression"]
COLUMNS = [
    "filesystem",
    "fs_type",
    "backend",
    "rank",
    "layout_id",
    "layout_name",
    "chunk_shape",
    "compression",
    "objective",
    "score",
    "score_ci_low",
    "score_ci_high",
    "mix_seconds",
    "mix_seconds_ci_low",
    "mix_seconds_ci_high",
    "mix_ratio",
    "mix_ratio_ci_low",
    "mix_ratio_ci_high",
    "worst_case",
    "worst_slowdown",
    "worst_slowdown_ci_low",
    "worst_slowdown_ci_high",
    "case_spread",
    "weighted_ratio",
    "weighted_ratio_ci_low",
    "weighted_ratio_ci_high",
    "to_best",
    "to_best_ci_low",
    "to_best_ci_high",
    "tied_with_best",
    "recommended",
    "meets_limits",
    "excluded_by",
    "file_bytes",
    "file_ratio",
    "write_median_s",
    "write_stopped",
    "statistic",
    "weights",
    "selections",
    "reference_store",
    "is_reference",
]


def weights_of(settings: dict) -> dict[str, float]:
    """The read mix: the configured weights, or every read case weighted equally."""
    configured = settings["recommend"].get("weights") or {}
    if not configured:
        return {case: 1.0 for case in settings["read_cases"]}
    return {case: float(configured.get(case, 0.0)) for case in settings["read_cases"] if configured.get(case, 0)}


def selected_reads(measurements: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """The timed reads the recommendation compares: the read mix's cases, in the sweep's
    first visiting policy and chunk cache, of the statistic's kind (``first-access``: reads
    after eviction and reopening, i.e. ``cold: every``, else each case's first read of the
    file; ``sustained``: the reads of an open file after its first under ``cold: first``)."""
    weights = weights_of(settings)
    reads = measurements[measurements["case"].isin(list(weights))] if "case" in measurements else measurements
    if reads.empty or "cold_mode" not in reads:  # no read case measured
        return reads.iloc[0:0]
    if "policy" in reads:
        reads = reads[reads["policy"] == settings["policy"]]
    reads = reads[_in_first_read_option(reads, settings["read_options"])]
    sustained = reads[(reads["cold_mode"] == "first") & (reads["reads_since_open"] > 0)]
    if settings["recommend"]["statistic"] == "sustained":
        return sustained
    every = reads[reads["cold_mode"] == "every"]
    # a case read only under cold: first has one first access per store: nothing to give an
    # interval; its sustained reads (repeats - 1 per store) are ranked instead, and said so
    only_first = set(reads["case"]) - set(every["case"])
    return pd.concat([every, sustained[sustained["case"].isin(only_first)]])


def ranked_statistic(reads: pd.DataFrame, settings: dict) -> str:
    """What the ranking compares, in the words of the ``statistic`` column: the configured
    statistic, and the cases whose sustained reads stand in for first accesses."""
    statistic = settings["recommend"]["statistic"]
    if statistic == "sustained" or reads.empty or "cold_mode" not in reads:
        return statistic
    instead = sorted(set(reads.loc[reads["cold_mode"] == "first", "case"]))
    if not instead:
        return statistic
    return f"{statistic}; sustained for {', '.join(instead)} (cold: first leaves one first access per store)"


def _in_first_read_option(reads: pd.DataFrame, options: dict[str, dict]) -> pd.Series:
    """Whether each read was made in its backend's first read option (HDF5: the first chunk
    cache; Zarr: the first reader), the settings ``options`` gives per backend."""
    keep = pd.Series(False, index=reads.index)
    backend = reads["backend"] if "backend" in reads else pd.Series(REFERENCE, index=reads.index)
    for name, columns in options.items():
        mine = backend == name
        for column, value in columns.items():
            if column in reads:
                mine &= reads[column].isna() if value is None else reads[column] == value
        keep |= mine
    return keep


def rank_layouts(measurements: pd.DataFrame, summary: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """The recommendation table: one row per filesystem, backend, layout and compression."""
    return rank_selected_reads(selected_reads(measurements, settings), summary, settings)


def mix_words(weights: dict[str, float], cases: list[str]) -> str:
    """The read mix as the tables say it: reads of each case per unit of the user's work."""
    return ", ".join(f"{c} {weights[c]:g}" for c in cases)


def mix_of(words: str) -> dict[str, float]:
    """The ``weights`` column back as {case: reads per unit of work} (:func:`mix_words`)."""
    out = {}
    for part in str(words).split(", "):
        case, _, count = part.rpartition(" ")
        if case:
            out[case] = float(count)
    return out


def rank_selected_reads(reads: pd.DataFrame, summary: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """:func:`rank_layouts` of the reads :func:`selected_reads` chose, ranked by the
    configured objective (:mod:`h5sweep.analyze.objectives`)."""
    weights = weights_of(settings)
    if reads.empty:
        return pd.DataFrame(columns=COLUMNS)
    reference = reference_of(settings)
    objective = settings["recommend"].get("objective", "time")
    statistic = ranked_statistic(reads, settings)
    reads = reads[reads["seconds"] > 0]
    if "backend" not in reads:
        reads = reads.assign(backend=REFERENCE)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    frames = []
    # every backend's stores are ranked together: their ratios share the reference store
    for filesystem, group in reads.groupby("filesystem", sort=True):
        mine = is_reference(group, reference)
        if not mine.any():  # nothing to pair with
            continue
        cases = [c for c in weights if (group["case"] == c).any()]
        matrices = objectives.Reads.of(group, cases)
        ref = matrices.stores.index(tuple(group.loc[mine, objectives.STORE_KEYS].iloc[0]))
        table = objectives.costs(matrices, weights, ref, rng, objective)
        samples = table.attrs.pop("score_samples")
        firsts = group.drop_duplicates(objectives.STORE_KEYS).set_index(objectives.STORE_KEYS)
        about = firsts.reindex(pd.MultiIndex.from_tuples(matrices.stores, names=objectives.STORE_KEYS))
        counts = group.groupby(objectives.STORE_KEYS)["repeat"].count()
        table = table.assign(
            filesystem=filesystem,
            fs_type=about["fs_type"].to_numpy() if "fs_type" in about else "",
            backend=[s[0] for s in matrices.stores],
            layout_id=[s[1] for s in matrices.stores],
            layout_name=about["layout_name"].fillna("").to_numpy() if "layout_name" in about else "",
            chunk_shape=about["chunk_shape"].fillna("").to_numpy() if "chunk_shape" in about else "",
            compression=[s[2] for s in matrices.stores],
            statistic=statistic,
            weights=mix_words(weights, cases),
            selections=counts.reindex(about.index).fillna(0).astype(int).to_numpy(),
            reference_store=reference_name(reference),
        )
        table["is_reference"] = is_reference(table, reference)
        table = _with_limits(_with_costs(table, summary), settings["recommend"])
        paired = objectives.to_best(samples, table["score"].to_numpy(float), table["meets_limits"].to_numpy(bool))
        frames.append(pd.concat([table, paired], axis=1))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return _ranked(pd.concat(frames, ignore_index=True))


def _with_costs(table: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """File size (and its ratio to the raw data) and the write case's median time, per store."""
    keys = CANDIDATE_KEYS
    sizes = summary.dropna(subset=["file_bytes"]).drop_duplicates(keys)[[*keys, "file_bytes", "raw_bytes"]]
    writes = summary[(summary["case"] == "write") & summary["primary"].astype(bool)]
    if "writes_stopped" not in writes:  # records from before writes could be stopped
        writes = writes.assign(writes_stopped=0)
    writes = writes.drop_duplicates(keys)[[*keys, "median_s", "writes_stopped"]]
    writes = writes.assign(write_stopped=writes["writes_stopped"].fillna(0).astype(int) > 0)
    writes = writes.drop(columns="writes_stopped").rename(columns={"median_s": "write_median_s"})
    out = table.merge(sizes, on=keys, how="left").merge(writes, on=keys, how="left")
    out["write_stopped"] = out["write_stopped"].fillna(False).astype(bool)
    out["file_ratio"] = out["file_bytes"] / out["raw_bytes"]
    return out.drop(columns="raw_bytes")


def _with_limits(table: pd.DataFrame, recommend: dict) -> pd.DataFrame:
    reasons = []
    for _, row in table.iterrows():
        why = []
        limit = recommend.get("max_file_ratio")
        if limit is not None and not row["file_ratio"] <= limit:
            why.append(f"file {row['file_ratio']:.2f}x raw > {limit:g}")
        limit = recommend.get("max_write_s")
        if row["write_stopped"]:  # slower than its limit: its time is not known
            why.append(f"write stopped at {row['write_median_s']:.3g} s (cases.write.limit_s)")
        elif limit is not None and not row["write_median_s"] <= limit:
            why.append(f"write {row['write_median_s']:.3g} s > {limit:g} s")
        reasons.append("; ".join(why))
    return table.assign(excluded_by=reasons, meets_limits=[not r for r in reasons])


def _ranked(table: pd.DataFrame) -> pd.DataFrame:
    """Ranks within each filesystem, every backend's stores together (layouts within the
    limits first, fastest first); the fastest within the limits, and those whose interval
    overlaps its interval, tied with it; of the tied, the smallest file is the recommendation."""
    out = []
    for _, group in table.groupby("filesystem", sort=True):
        group = group.sort_values(["meets_limits", "score"], ascending=[False, True], kind="stable")
        group = group.assign(rank=range(1, len(group) + 1), tied_with_best=False, recommended=False)
        eligible = group[group["meets_limits"]]
        if not eligible.empty:
            best = eligible.iloc[0]
            # tied: the paired interval of its score over the best's reaches 1 (a layout
            # without an interval is tied with nothing but itself)
            tied = (eligible["to_best_ci_low"] <= 1.0) | (eligible.index == best.name)
            group.loc[eligible.index[tied], "tied_with_best"] = True
            smallest = eligible[tied].sort_values(["file_bytes", "score"], kind="stable").index[0]
            group.loc[smallest, "recommended"] = True
        out.append(group)
    ranked = pd.concat(out, ignore_index=True)
    extra = [c for c in ranked.columns if c.startswith(("ratio_", "seconds_"))]
    return ranked[[*COLUMNS, *extra]]


def label(row, with_backend: bool = False) -> str:
    """A layout and compression as a reader would say it (ids as the config and tables spell
    them), and the backend where several are ranked together."""
    name = row["layout_id"] if not row["layout_name"] else f"{row['layout_name']} ({row['chunk_shape']})"
    if row["layout_name"] and "-zxy" in str(row["layout_id"]):  # the transposed store of a named shape
        name += " zxy"
    name = name if row["compression"] == "none" else f"{name} with {row['compression']}"
    if with_backend:
        name = f"{_backend_label(row['backend'])} {name}"
    return name


def _several_backends(group: pd.DataFrame) -> bool:
    return "backend" in group and group["backend"].nunique() > 1


def evidence(reads: pd.DataFrame, table: pd.DataFrame) -> dict[tuple, str]:
    """Why, from the model and the device, per filesystem: for the recommended
    layout and the one it is best compared with (contiguous, or if contiguous is chosen the
    fastest other layout), per read case, the chunks a read touches and the bytes the model
    says it needs (stored bytes of those chunks; contiguous: the bytes selected), and what
    the device delivered (medians of the compared reads)."""
    out = {}
    if table.empty or not {"chunks_touched", "stored_bytes_touched", "device_read_bytes"} <= set(reads.columns):
        return out
    for filesystem, group in table.groupby("filesystem", sort=True):
        chosen = group[group["recommended"]]
        others = group[group["meets_limits"] & ~group["recommended"]]
        if chosen.empty or others.empty:
            continue
        pick = chosen.iloc[0]
        if pick["is_reference"]:
            other = others.iloc[0]
        else:
            base = group[group["is_reference"]]
            other = base.iloc[0] if not base.empty else others.iloc[0]
        mine = reads[reads["filesystem"] == filesystem]
        from_device = bool((mine["device_read_bytes"] > 0).any())
        several = _several_backends(group)
        parts = []
        for case in dict.fromkeys(mine["case"]):
            of_case = mine[mine["case"] == case]
            said = [_per_read(of_case, row, from_device, several) for row in (pick, other)]
            if all(said):
                parts.append(f"{case}: " + "; ".join(said))
        if parts:
            out[filesystem] = "Why, per read (medians): " + " | ".join(parts) + "."
    return out


def _per_read(reads: pd.DataFrame, row, from_device: bool, with_backend: bool = False) -> str:
    mine = reads[(reads["layout_id"] == row["layout_id"]) & (reads["compression"] == row["compression"])]
    if "backend" in reads:
        mine = mine[mine["backend"] == row["backend"]]
    if mine.empty:
        return ""
    if pd.isna(row["chunk_shape"]) or row["chunk_shape"] == "":  # contiguous
        words = f"{label(row, with_backend)} selects {mine['bytes_selected'].median() / 1e6:.3g} MB"
    else:
        words = (
            f"{label(row, with_backend)} touches {int(mine['chunks_touched'].median())} chunks holding "
            f"{mine['stored_bytes_touched'].median() / 1e6:.3g} MB"
        )
    if from_device:
        words += f", the device delivered {mine['device_read_bytes'].median() / 1e6:.3g} MB"
    return words


def _interval(row) -> str:
    if pd.isna(row["score_ci_low"]):
        return "no interval: one read per case"
    return f"95% interval {row['score_ci_low']:.2f}-{row['score_ci_high']:.2f}"


def seconds(value: float) -> str:
    """A time as a reader would say it: milliseconds below a second."""
    if pd.isna(value):
        return ""
    return f"{value * 1e3:.3g} ms" if abs(value) < 1 else f"{value:.3g} s"


def _score_words(row, ref: str) -> str:
    """What a store's score means, by the objective it was ranked by."""
    objective = row.get("objective", "time")
    if objective == "worst-case":
        return (
            f"at most {row['score']:.2f}x the fastest store's time in any case "
            f"(its worst: {row['worst_case']}; {_interval(row)})"
        )
    if objective == "geometric":
        return f"{row['score']:.2f}x {ref}'s time, weighted geometric mean over the cases ({_interval(row)})"
    return f"{row['score']:.2f}x {ref}'s time for the mix, {seconds(row['mix_seconds'])} per unit ({_interval(row)})"


def objective_sentence(objective: str) -> str:
    """The objective a table was ranked by, in words (every verdict says which)."""
    return f"Ranked by {objectives.OBJECTIVE_WORDS[objective]} (recommend.objective: {objective})."


def verdict(group: pd.DataFrame) -> str:
    """One paragraph, in words, for one filesystem (every backend's stores ranked together)."""
    first = group.iloc[0]
    several = _several_backends(group)
    backends = ", ".join(_backend_label(b) for b in sorted(set(group["backend"])))
    where = f"On {first['filesystem']} ({first['fs_type']}, {backends})"
    name_of = partial(label, with_backend=several)
    statistic = STATISTIC_WORDS.get(first["statistic"], first["statistic"])
    mix = f"for this read mix (reads per unit of work: {first['weights']}; {statistic})"
    chosen = group[group["recommended"]]
    if chosen.empty:
        return f"{where}, no layout meets the limits; the table lists why each was excluded."
    best = group[group["tied_with_best"]].iloc[0]
    pick = chosen.iloc[0]
    tied = group[group["tied_with_best"]]
    ref = first["reference_store"]
    if best["is_reference"] and first.get("objective", "time") != "worst-case":
        text = f"{where}, {mix}, {name_of(best)} is the fastest"
        runner_up = group[(group.index != best.name) & group["meets_limits"]]
        if not runner_up.empty:
            text += f"; the next, {name_of(runner_up.iloc[0])}: {_score_words(runner_up.iloc[0], ref)}"
        text += "."
    else:
        text = f"{where}, {mix}, {name_of(best)} is the best: {_score_words(best, ref)}."
    if len(tied) > 1:
        others = ", ".join(name_of(r) for _, r in tied.iterrows() if r.name != best.name)
        text += f" The measurements cannot tell it apart from {others}."
    base = group[group["is_reference"]]
    size_words = ""
    if not base.empty and pick["file_bytes"] > 0:
        factor = base.iloc[0]["file_bytes"] / pick["file_bytes"]
        size_words = f" and {factor:.1f}x smaller than {ref}" if factor >= 1.05 else ""
    if pick.name == best.name:
        text += f" Choose {name_of(pick)}{': it is the smallest of these' if len(tied) > 1 else ''}"
        text += f"{size_words}." if size_words else "."
    else:
        text += (
            f" Choose {name_of(pick)}: {pick['to_best']:.2f}x the best's score (paired 95% interval "
            f"{pick['to_best_ci_low']:.2f}-{pick['to_best_ci_high']:.2f}){size_words}."
        )
    if pd.notna(pick.get("case_spread")) and pick["case_spread"] >= 10:
        text += (
            f" Its cases' times differ {pick['case_spread']:.0f}x: it serves {pick['worst_case']} worst "
            f"({pick['worst_slowdown']:.2f}x that case's fastest store)."
        )
    auto = group[group["layout_name"] == AUTO_LAYOUT_NAME]
    if not auto.empty:
        a = auto.iloc[0]
        text += (
            f" h5py's own chunking (chunks=True) would pick {a['chunk_shape']}: rank {int(a['rank'])} of "
            f"{len(group)}, score {a['score']:.2f}"
            f"{', tied with the best' if a['tied_with_best'] else ''}."
        )
    excluded = group[~group["meets_limits"]]
    if not excluded.empty:
        text += f" {len(excluded)} layout(s) exceed the limits and were not chosen."
    return text + " " + objective_sentence(first.get("objective", "time"))


def machine_caveat(reads: pd.DataFrame) -> str | None:
    """The caveat where the reads ranked were cold on a machine whose memory is unsteady
    (:func:`h5sweep.host.measured_caveat`), from each row's own record of its node."""
    needed = {"filesystem", "host", "free_page_reporting_ms", "cache_state"}
    if not needed <= set(reads.columns):
        return None
    cold = reads[reads["cache_state"] == "cold"]
    return measured_caveat(
        zip(cold["filesystem"], cold["host"], cold["free_page_reporting_ms"].astype(int), strict=True)
    )


def unverified_caveat(reads: pd.DataFrame) -> str | None:
    """Where ranked reads were recorded ``unverified`` (a filesystem whose device reads the
    kernel's counter cannot see), a sentence naming the filesystems."""
    if "cache_state" not in reads:
        return None
    where = sorted(set(reads.loc[reads["cache_state"] == "unverified", "filesystem"]))
    if not where:
        return None
    return (
        f"The reads ranked on {', '.join(where)} are unverified: the kernel does not count that storage's "
        "device reads (a network filesystem or a FUSE mount), so that each first access came from the storage "
        "and not from a cache is not checked."
    )


def _calibration_caveats(table: pd.DataFrame) -> list[str]:
    """Per kind of filesystem ranked, where its intervals missed their calibration on the
    reference machine (:mod:`h5sweep.analyze.calibration`), the measured figures."""
    said = [calibration.caveat(fs_type) for fs_type in dict.fromkeys(table["fs_type"].astype(str))]
    return [s for s in said if s]


def _ref(settings: dict) -> str:
    """The reference store in words (the layout every ratio is to)."""
    name = reference_name(reference_of(settings))
    return "the contiguous layout" if name == "contiguous" else f"the reference layout {name}"


def _explained(settings: dict) -> str:
    objective = settings["recommend"].get("objective", "time")
    score = {
        "time": f"the mix's expected time relative to {_ref(settings)} on the same selections",
        "worst-case": "the largest slowdown over the cases against each case's fastest store",
        "geometric": f"the weighted geometric mean of the per-case median ratios relative to {_ref(settings)} on "
        "the same selections",
    }[objective]
    return (
        f"Score: {score} (below 1 is faster than the reference; objective {objective}). Mix: the mean time of "
        "one unit of work (the weights' reads of each case); per case: the mean time of one read; worst: the "
        "case served slowest against its fastest store; spread: the slowest case's read time over the "
        "fastest case's. Intervals are 95% (paired bootstrap over selections and store copies). Layouts "
        "marked tied cannot be told apart from the best: the paired interval of their score over the best's "
        "reaches 1."
    )


def _ranking_head(group: pd.DataFrame) -> tuple[list[str], list[str]]:
    cases = [c.removeprefix("seconds_") for c in group.columns if c.startswith("seconds_") and group[c].notna().any()]
    head = ["rank", "layout", "score", "95% interval", "mix time", "mix 95% interval"]
    head += [f"{c} [ms]" for c in cases] + ["worst case", "spread", "file / raw", "write [s]", ""]
    return head, cases


def markdown(
    table: pd.DataFrame, settings: dict, why: dict | None = None, caveat: str | None = None, parallel: str = ""
) -> str:
    """``recommendation.md``: the verdicts first (and a ``caveat`` on the machine, where there
    is one), then each filesystem's ranking, then the ``parallel`` section (where there is one)."""
    lines = ["# Recommendation", ""]
    if table.empty:
        return "\n".join([*lines, *([] if parallel else [nothing_to_rank(settings)]), ""]) + parallel
    limits = settings["recommend"]
    stated = [
        f"file at most {limits['max_file_ratio']:g}x the raw data" if limits.get("max_file_ratio") else "",
        f"write at most {limits['max_write_s']:g} s" if limits.get("max_write_s") else "",
    ]
    stated = [s for s in stated if s]
    groups = list(table.groupby("filesystem", sort=True))
    for keys, group in groups:
        lines += [verdict(group) + (f" {why[keys]}" if why and keys in why else ""), ""]
    lines += [caveat, ""] if caveat else []
    lines += [c + "\n" for c in _calibration_caveats(table)]
    lines += [_explained(settings) + (f" Limits: {', '.join(stated)}." if stated else ""), ""]
    for filesystem, group in groups:
        lines += [f"## {filesystem} ({', '.join(sorted(set(group['backend'])))})", ""]
        head, cases = _ranking_head(group)
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for _, row in group.iterrows():
            lines.append("| " + " | ".join(_cells(row, cases, _several_backends(group))) + " |")
        lines.append("")
    return "\n".join(lines) + parallel


def nothing_to_rank(settings: dict) -> str:
    return f"No read case was measured against {_ref(settings)}: nothing to rank."


def _pair(low: float, high: float, digits: str = ".2f", scale: float = 1.0) -> str:
    if pd.isna(low):
        return "none (one read)"
    return f"{low * scale:{digits}}-{high * scale:{digits}}"


def _cells(row, cases: list[str], with_backend: bool = False) -> list[str]:
    """A ranking row as the tables show it: rank, layout, score and its interval, the mix's
    time and its interval, each case's time, the worst case, the spread, file / raw, write
    time, and whether it is recommended, tied or beyond a limit."""
    mark = "recommended" if row["recommended"] else ("tied" if row["tied_with_best"] else row["excluded_by"])
    worst = f"{row['worst_case']} {row['worst_slowdown']:.2f}x" if pd.notna(row["worst_slowdown"]) else ""
    return [
        str(int(row["rank"])),
        label(row, with_backend),
        f"{row['score']:.2f}",
        _pair(row["score_ci_low"], row["score_ci_high"]),
        seconds(row["mix_seconds"]),
        _pair(row["mix_seconds_ci_low"], row["mix_seconds_ci_high"], ".3g", 1e3) + " ms"
        if pd.notna(row["mix_seconds_ci_low"])
        else "none (one read)",
        *[f"{row[f'seconds_{c}'] * 1e3:.3g}" if pd.notna(row.get(f"seconds_{c}")) else "" for c in cases],
        worst,
        f"{row['case_spread']:.3g}x" if pd.notna(row["case_spread"]) else "",
        f"{row['file_ratio']:.2f}" if pd.notna(row["file_ratio"]) else "",
        _write_cell(row),
        mark,
    ]


def _write_cell(row) -> str:
    if pd.isna(row["write_median_s"]):
        return ""
    return (">" if row.get("write_stopped", False) else "") + f"{row['write_median_s']:.3g}"


def restructured(
    table: pd.DataFrame, settings: dict, why: dict | None = None, caveat: str | None = None, parallel: str = ""
) -> str:
    """The same as :func:`markdown` in reStructuredText, for the report's first page."""
    lines = ["Recommendation", "==============", ""]
    if table.empty:
        return "\n".join([*lines, *([] if parallel else [nothing_to_rank(settings)]), ""]) + parallel
    groups = list(table.groupby("filesystem", sort=True))
    for keys, group in groups:
        text = verdict(group) + (f" {why[keys]}" if why and keys in why else "")
        lines += [text.replace("*", "\\*"), ""]
    lines += [caveat, ""] if caveat else []
    lines += [c + "\n" for c in _calibration_caveats(table)]
    lines += [
        _explained(settings).replace("*", "\\*") + " The full ranking is ``recommendation.csv`` (under Results), "
        "the summary table ``summary.csv``, the figures below.",
        "",
    ]
    for filesystem, group in groups:
        title = f"{filesystem} ({', '.join(sorted(set(group['backend'])))})"
        lines += [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
        head, cases = _ranking_head(group)
        lines += ["   * - " + head[0], *[f"     - {h}" for h in head[1:]]]
        for _, row in group.iterrows():
            cells = [c or " " for c in _cells(row, cases, _several_backends(group))]
            lines += ["   * - " + cells[0], *[f"     - {c}" for c in cells[1:]]]
        lines.append("")
    return "\n".join(lines) + parallel


def recommend(
    measurements_path: str, summary_path: str, settings: dict, csv_out: str, md_out: str, rst_out: str | None = None
) -> pd.DataFrame:
    """Write ``recommendation.csv`` and ``recommendation.md`` (and the report's first page,
    ``rst_out``) from the aggregated tables."""
    from h5sweep.measure.records import read_tables, write_table

    measurements = read_tables([measurements_path])
    summary = read_tables([summary_path])
    reads = selected_reads(measurements, settings)
    table = rank_selected_reads(reads, summary, settings)
    why = evidence(reads, table)
    caveat = " ".join(c for c in (machine_caveat(reads), unverified_caveat(reads)) if c) or None
    write_table(table, csv_out)
    parallel = parallel_markdown(summary, measurements)
    with open(md_out, "w") as out:
        out.write(markdown(table, settings, why, caveat, parallel))
    if rst_out:
        with open(rst_out, "w") as out:
            title = PARALLEL_HEADING.removeprefix("## ")
            section = parallel.replace(PARALLEL_HEADING, title + "\n" + "-" * len(title))
            out.write(restructured(table, settings, why, caveat, section))
    return table
