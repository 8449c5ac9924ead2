"""Whether runs agree: reproducibility of the best layout, its medians and rankings, the shift
along a pass, the recommendations, racing against reading every store, and the intervals'
calibration."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
from probe import PROBE_POINTS, probe_figures

from h5sweep.measure.stats import intervals_overlap, spearman


def _groups(summary: pd.DataFrame):
    """Per filesystem x read case x compression: each layout's primary row (the contiguous
    baseline belongs to every compression's group)."""
    reads = summary[summary["ratio_to_contiguous"].notna() & summary["primary"].astype(str).eq("True")]
    for (fs, case), rows in reads.groupby(["filesystem", "case"]):
        for comp in sorted(set(rows["compression"])):
            group = rows[(rows["compression"] == comp) | (rows["layout"] == "contiguous")]
            yield (fs, case, comp), group.set_index("layout_id")


def reproducibility(summary_a: pd.DataFrame, summary_b: pd.DataFrame) -> dict:
    """Do two runs of one sweep agree? Per group: is each run's best layout among the other
    run's layouts tied for best (median intervals overlapping the best's); the run-to-run
    deviation of every median; and the Spearman correlation of the layouts' medians where
    they spread by at least 1.5x."""
    b_groups = dict(_groups(summary_b))
    same_best, groups, deviations, correlations, detail, ratio_deviations = 0, 0, [], [], [], []
    order_totals = dict.fromkeys(["pairs", "discordant_pairs", "contradicted_pairs"], 0)
    second_over_first: dict[str, dict] = {}  # per filesystem and (case, layout): second run / first
    for key, a in _groups(summary_a):
        b = b_groups.get(key)
        if b is None:
            continue
        common = a.index.intersection(b.index)
        a, b = a.loc[common], b.loc[common]
        groups += 1

        def tied(run):
            best = run["median_s"].idxmin()
            best_ci = (run.loc[best, "median_ci_low_s"], run.loc[best, "median_ci_high_s"])
            return best, {
                layout
                for layout, r in run.iterrows()
                if intervals_overlap((r["median_ci_low_s"], r["median_ci_high_s"]), best_ci)
            }

        best_a, tied_a = tied(a)
        best_b, tied_b = tied(b)
        agree = best_a in tied_b and best_b in tied_a
        same_best += agree
        deviation = (a["median_s"] - b["median_s"]).abs() / ((a["median_s"] + b["median_s"]) / 2)
        deviations += list(deviation)
        moved = b["median_s"] / a["median_s"]
        second_over_first.setdefault(key[0], {}).update({(key[1], layout): r for layout, r in moved.items()})
        ratios = a["ratio_to_contiguous"], b["ratio_to_contiguous"]
        chunked = a["layout"] != "contiguous"
        ratio_deviations += list(((ratios[0] - ratios[1]).abs() / ((ratios[0] + ratios[1]) / 2))[chunked])
        spread_ratio = max(a["median_s"].max() / a["median_s"].min(), b["median_s"].max() / b["median_s"].min())
        rho = spearman(a["median_s"], b["median_s"]) if spread_ratio >= 1.5 else float("nan")
        entry = {"group": " / ".join(key), "best": [best_a, best_b], "agree": bool(agree), "spearman": rho}
        if not np.isnan(rho):
            correlations.append(rho)
            entry.update(order_disagreements(a, b))
            for name in order_totals:
                order_totals[name] += entry[name]
        detail.append(entry)
    return {
        "groups": groups,
        "groups_best_agree": same_best,
        "share_groups_best_agree": same_best / groups if groups else float("nan"),
        "median_deviation_of_medians": float(np.median(deviations)) if deviations else float("nan"),
        # the same for the paired ratios to contiguous (what the recommendation ranks by)
        "median_deviation_of_ratios": float(np.median(ratio_deviations)) if ratio_deviations else float("nan"),
        "min_spearman_spread_groups": min(correlations) if correlations else float("nan"),
        # not a goal, what a low Spearman is made of, over the groups it is computed for
        **{f"{name}_spread_groups": count for name, count in order_totals.items()},
        **run_shift(second_over_first),
        "detail": detail,
    }


def order_disagreements(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Not a goal, what a Spearman below 1 is made of: of every pair of layouts in a group,
    those the two runs order differently (``discordant_pairs``), and of these, those whose
    median intervals were disjoint in at least one run (``contradicted_pairs``: a difference
    one run called clear and the other reversed). Discordant pairs that are not contradicted
    are layouts both runs measured as indistinguishable, ordered by noise."""
    layouts = list(a.index)
    pairs, discordant, contradicted = 0, 0, 0
    for i, first in enumerate(layouts):
        for second in layouts[i + 1 :]:
            pairs += 1
            gap_a = a.loc[first, "median_s"] - a.loc[second, "median_s"]
            gap_b = b.loc[first, "median_s"] - b.loc[second, "median_s"]
            if gap_a * gap_b >= 0:
                continue
            discordant += 1
            contradicted += any(
                not intervals_overlap(
                    (run.loc[first, "median_ci_low_s"], run.loc[first, "median_ci_high_s"]),
                    (run.loc[second, "median_ci_low_s"], run.loc[second, "median_ci_high_s"]),
                )
                for run in (a, b)
            )
    return {"pairs": pairs, "discordant_pairs": discordant, "contradicted_pairs": contradicted}


def run_shift(second_over_first: dict[str, dict]) -> dict:
    """Not a goal, what explains a missed one: how much a filesystem's medians moved together
    from one run to the other (the median of second / first over its rows: the machine or its
    disk faster or slower in one run), and the median deviation once that run-wide factor is
    taken out of each filesystem's medians (what is left: layouts moving apart)."""
    shift, left = {}, []
    for filesystem, by_row in sorted(second_over_first.items()):
        ratios = np.array(list(by_row.values()))  # contiguous once, though in every group
        shift[filesystem] = float(np.median(ratios))
        rescaled = ratios / shift[filesystem]
        left += list(np.abs(rescaled - 1) / ((rescaled + 1) / 2))
    return {
        "run_shift_by_filesystem": shift,
        "median_deviation_after_run_shift": float(np.median(left)) if left else float("nan"),
    }


PASS_BLOCKS = 10


PAIR_KEYS = ["filesystem", "backend", "layout_id", "compression", "case", "variant", "repeat"]


def shift_along_the_pass(reads_a: pd.DataFrame, reads_b: pd.DataFrame, blocks: int = PASS_BLOCKS) -> dict:
    """Not a goal, where a run-wide shift comes from: every read of the second run over the
    same read of the first (same store, case, variant and selection), in the first run's
    order of reading, cut into ``blocks`` consecutive stretches; per filesystem, the lowest and
    highest stretch median. A narrow range around the run-wide shift says the runs differed as
    wholes (the machine's state for minutes); a wide one, that the machine moved within a pass
    (which more, or more spread, reads would average out)."""
    keys = [k for k in PAIR_KEYS if k in reads_a.columns and k in reads_b.columns]
    ordered = [df.assign(order=np.arange(len(df))).query("case != 'write'") for df in (reads_a, reads_b)]
    pairs = ordered[0].merge(ordered[1], on=keys, suffixes=("_a", "_b"))
    out = {}
    for filesystem, run in pairs.groupby("filesystem", sort=True):
        run = run.sort_values(["window_opened_at_a", "order_a"])
        logs = np.log(run["seconds_b"].to_numpy() / run["seconds_a"].to_numpy())
        stretches = [np.exp(np.median(part)) for part in np.array_split(logs, min(blocks, len(logs)))]
        out[filesystem] = {"blocks": len(stretches), "min": float(min(stretches)), "max": float(max(stretches))}
    return {"shift_along_the_pass": out}


def runs_agree(run_a: dict, run_b: dict) -> dict:
    """Everything two runs of :func:`bench_sweep` are compared by: their summaries
    (:func:`reproducibility`), their recommendations, and their reads one by one."""
    summaries = [pd.read_csv(run["summary_csv"], keep_default_na=False, na_values=[""]) for run in (run_a, run_b)]
    tables = [pd.read_csv(run["recommendation_csv"]) for run in (run_a, run_b)]
    reads = [pd.read_parquet(run["measurements_parquet"]) for run in (run_a, run_b)]
    return {
        **reproducibility(*summaries),
        **recommendations_agree(*tables),
        **shift_along_the_pass(*reads),
        "window_steal_s_total": [run["window_steal_s_total"] for run in (run_a, run_b)],
    }


def drift_lines(results: dict) -> list[str]:
    """The two runs' drift beside their goals: each filesystem's run-wide shift, the deviation
    without it, and the CPU time the hypervisor took inside each run's timed windows; and the
    machine probe's shift between the runs and its spread within seconds, where it ran."""
    repro = results.get("reproducibility", {})
    if "run_shift_by_filesystem" not in repro:
        return []
    shifts = ", ".join(f"{fs} {factor:.3f}" for fs, factor in repro["run_shift_by_filesystem"].items())
    stolen = repro.get("window_steal_s_total", [float("nan")] * 2)
    lines = [
        f"      (not a goal) second run / first, median per filesystem: {shifts}; median deviation with that"
        f" shift taken out: {repro['median_deviation_after_run_shift']:.3f}; CPU time stolen by the hypervisor"
        f" inside timed windows: {stolen[0]:.2f} s and {stolen[1]:.2f} s"
    ]
    if "discordant_pairs_spread_groups" in repro:
        lowest = min(
            (entry for entry in repro["detail"] if "discordant_pairs" in entry), key=lambda entry: entry["spearman"]
        )
        lines.append(
            "      (not a goal) layouts ordered differently by the two runs, in the groups Spearman is computed"
            f" for: {repro['discordant_pairs_spread_groups']} of {repro['pairs_spread_groups']} pairs,"
            f" {repro['contradicted_pairs_spread_groups']} of them with disjoint median intervals in either run;"
            f" lowest-Spearman group {lowest['group']}: {lowest['discordant_pairs']} of {lowest['pairs']}"
            f" pairs, {lowest['contradicted_pairs']} with disjoint intervals"
        )
    along = repro.get("shift_along_the_pass")
    if along:
        ranges = ", ".join(f"{fs} {r['min']:.3f}-{r['max']:.3f}" for fs, r in along.items())
        lines.append(
            f"      (not a goal) second run / first read by read, medians of {PASS_BLOCKS} consecutive stretches"
            f" of each filesystem's reads, lowest-highest: {ranges}"
        )
    in_sequence = results.get("reproducibility_in_sequence")
    if in_sequence:
        shifts = ", ".join(f"{fs} {factor:.3f}" for fs, factor in in_sequence["run_shift_by_filesystem"].items())
        lines.append(
            "      (not a goal) the sweep run alone against the first of the pair, minutes apart: best layouts"
            f" agree in {in_sequence['groups_best_agree']} of {in_sequence['groups']} groups, median deviation"
            f" {in_sequence['median_deviation_of_medians']:.3f}, lowest Spearman"
            f" {in_sequence['min_spearman_spread_groups']:.3f}; second / first per filesystem: {shifts}"
        )
    probes = results.get("machine_probe", {})
    if all(point in probes for point in PROBE_POINTS):
        figures = probe_figures(probes)
        shift = ", ".join(f"{name} {v:.3f}" for name, v in figures["probe_second_over_first"].items())
        spread_ = ", ".join(f"{name} {v:.3f}" for name, v in figures["probe_back_to_back_spread"].items())
        lines.append(
            f"      (not a goal) fixed work timed before, between and after the runs, second / first: {shift};"
            f" widest max / min of probes taken back to back: {spread_}"
        )
    return lines


def recommendations_agree(table_a: pd.DataFrame, table_b: pd.DataFrame) -> dict:
    """Do two runs recommend compatibly? Per filesystem (every backend's stores ranked
    together): each run's recommended store is among the other run's tied with the fastest."""
    keys = ["filesystem"]
    agree, groups, detail = 0, 0, []
    b_groups = {k: g for k, g in table_b.groupby(keys)}
    for key, a in table_a.groupby(keys):
        b = b_groups.get(key)
        if b is None:
            continue
        groups += 1

        def chosen_and_tied(run):
            ids = run["backend"] + " " + run["layout_id"] + " " + run["compression"]
            return set(ids[run["recommended"].astype(bool)]), set(ids[run["tied_with_best"].astype(bool)])

        chosen_a, tied_a = chosen_and_tied(a)
        chosen_b, tied_b = chosen_and_tied(b)
        ok = chosen_a <= tied_b and chosen_b <= tied_a and bool(chosen_a) and bool(chosen_b)
        agree += ok
        detail.append(
            {
                "group": " / ".join(key if isinstance(key, tuple) else (key,)),
                "recommended": [sorted(chosen_a), sorted(chosen_b)],
                "agree": ok,
            }
        )
    return {
        "recommendation_groups": groups,
        "share_recommendations_agree": agree / groups if groups else float("nan"),
        "recommendation_detail": detail,
    }


def _reads(run: dict) -> int:
    measured = pd.read_parquet(run["measurements_parquet"], columns=["case"])
    return int((measured["case"] != "write").sum())


def _writes(run: dict) -> tuple[int, float]:
    """A run's timed writes and the seconds they took."""
    measured = pd.read_parquet(run["measurements_parquet"], columns=["case", "seconds"])
    writes = measured[measured["case"] == "write"]
    return len(writes), float(writes["seconds"].sum())


# the careful loop and the default sweep, run in turn this many times
NAIVE_PAIRS = 3


def paired_ratios(numerators: list[float], denominators: list[float]) -> dict:
    """Each interleaved pair's ratio, with their median and range."""
    samples = [a / b for a, b in zip(numerators, denominators, strict=True)]
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": samples}


def racing_figures(with_racing: list[dict], without: dict) -> dict:
    """Racing's goals: the reads of a raced run against a run reading every store to the end,
    the recommendation of each raced run against that run's, and the two raced runs' own
    agreement (best layout per group, recommendation)."""
    tables = [pd.read_csv(run["recommendation_csv"]) for run in (*with_racing, without)]
    agree = [recommendations_agree(table, tables[-1])["share_recommendations_agree"] for table in tables[:-1]]
    own = runs_agree(with_racing[0], with_racing[1])
    return {
        "reads_with_racing": [_reads(run) for run in with_racing],
        "reads_without_racing": _reads(without),
        "ratio_reads_race_vs_off": max(_reads(run) for run in with_racing) / max(1, _reads(without)),
        "share_recommendations_agree_race_vs_off": min(agree),
        "share_groups_best_agree": own["share_groups_best_agree"],
        "share_recommendations_agree": own["share_recommendations_agree"],
        "min_spearman_spread_groups": own["min_spearman_spread_groups"],
        "writes_with_racing": [_writes(run) for run in with_racing],
        "writes_without_racing": _writes(without),
        "wall_s_with_racing": [run["sweep_wall_s"] for run in with_racing],
        "wall_s_without_racing": without["sweep_wall_s"],
    }


CALIBRATION_RUNS = 4


RATIO_KEYS = ["filesystem", "backend", "layout_id", "compression", "case", "variant", "cache_state"]


def _coverage(a: pd.DataFrame, b: pd.DataFrame, value: str, low: str, high: str, keys: list[str]) -> tuple:
    """Share of ``a``'s values inside ``b``'s intervals, and share of the two runs' intervals
    that overlap, over the rows both have (each with an interval)."""
    both = a[[*keys, value, low, high]].merge(b[[*keys, value, low, high]], on=keys, suffixes=("_a", "_b"))
    both = both.dropna(subset=[f"{low}_a", f"{low}_b"])
    if both.empty:
        return float("nan"), float("nan"), 0
    inside = (both[f"{value}_a"] >= both[f"{low}_b"]) & (both[f"{value}_a"] <= both[f"{high}_b"])
    overlap = (both[f"{low}_a"] <= both[f"{high}_b"]) & (both[f"{low}_b"] <= both[f"{high}_a"])
    return float(inside.mean()), float(overlap.mean()), len(both)


# the default sweep's read cases, whose rows the calibration counts
READ_CASES = ["slice", "spectra", "subcube"]
# a store and its read option: what the race races and bounds
STORE = ["filesystem", "backend", "layout_id", "compression", "variant"]


def _variant(rows: pd.DataFrame) -> pd.Series:
    """The read option's name, empty where a row has none (read from CSV as NaN)."""
    return rows["variant"].astype(object).where(rows["variant"].notna(), "")


def store_ratios(summary: pd.DataFrame, weights: dict[str, float] | None = None) -> pd.Series:
    """Each store's time for one unit of the read mix (its mean read time of each case, over the
    reads it made, times the case's reads per unit: one each unless ``weights``) over the
    fastest store's of its filesystem: the point value a raced-out store's one-sided bound
    (``raced_out_at_least``) is about."""
    if not {"mean_s", "repeats"} <= set(summary.columns):
        return pd.Series(dtype=float)
    reads = summary[summary["case"].isin(weights or READ_CASES)]
    reads = reads.assign(_total=reads["mean_s"] * reads["repeats"], variant=_variant(reads))
    per_case = reads.groupby([*STORE, "case"])[["_total", "repeats"]].sum()
    means = (per_case["_total"] / per_case["repeats"]).unstack("case")
    mix = sum(means[c] * (weights or {}).get(c, 1.0) for c in means.columns)
    return mix / mix.groupby(level="filesystem").transform("min")


def _bound_held(a: pd.DataFrame, b: pd.DataFrame, a_ratios: pd.Series) -> tuple[int, int, int]:
    """Rows of ``b`` raced out (one-sided bound alone) whose store in ``a`` is at least that much
    behind the best (held), the rows whose store ``a`` also raced out (their claims overlap),
    and the count of such rows."""
    out = b[b["raced_out_at_least"].notna()] if "raced_out_at_least" in b else b.iloc[0:0]
    out, a = out.assign(variant=_variant(out)), a.assign(variant=_variant(a))
    held = overlap = 0
    for _, r in out.iterrows():
        key = tuple(r[k] for k in STORE)
        mine = a_ratios.get(key, np.nan)
        inside = bool(mine >= r["raced_out_at_least"])
        held += inside
        theirs = a[(a[STORE] == pd.Series(dict(zip(STORE, key, strict=True)))).all(axis=1)]
        raced_too = "raced_out_round" in theirs and theirs["raced_out_round"].notna().any()
        overlap += inside or raced_too
    return held, overlap, len(out)


def calibration(runs: list[dict]) -> dict:
    """Runs of the default sweep back to back: per filesystem and ordered pair of runs, the
    share of one run's paired ratios (the summary's, per store and case; the reference store's
    own, 1 by construction, left out) inside the other run's 95% intervals, and the share of
    their intervals that overlap; the same for the recommendation's scores. A 95% interval
    that means what it says holds the next run's value about as often as two equally noisy
    honest estimates allow (about 83% inside)."""
    summaries, raced, ratios = [], [], []
    for run in runs:
        s = pd.read_csv(run["summary_csv"], keep_default_na=False, na_values=[""])
        ratios.append(store_ratios(s, run.get("weights")))
        out = s["raced_out_at_least"].notna() if "raced_out_at_least" in s else pd.Series(False, s.index)
        raced.append(s[out & s["case"].isin(READ_CASES)])
        s = s[~out & s["ratio_ci_low"].notna() & ~((s["ratio_ci_low"] == 1) & (s["ratio_ci_high"] == 1))]
        summaries.append(s)
    tables = [pd.read_csv(run["recommendation_csv"]) for run in runs]
    tables = [t[~t["is_reference"].astype(bool)] for t in tables]
    out: dict = {"runs": len(runs), "by_filesystem": {}}
    filesystems = sorted(set().union(*(set(s["filesystem"]) for s in summaries)))
    for fs in filesystems:
        pairs = []
        for i, a in enumerate(summaries):
            for j, b in enumerate(summaries):
                if i == j:
                    continue
                inside, overlap, n = _coverage(
                    a[a["filesystem"] == fs],
                    b[b["filesystem"] == fs],
                    "ratio_to_contiguous",
                    "ratio_ci_low",
                    "ratio_ci_high",
                    RATIO_KEYS,
                )
                # every row counted: a raced-out row of b by its one-sided bound
                rb = raced[j][raced[j]["filesystem"] == fs]
                held, met, k = _bound_held(raced[i][raced[i]["filesystem"] == fs], rb, ratios[i])
                both = n + k
                if both:
                    inside = (np.nan_to_num(inside) * n + held) / both
                    overlap = (np.nan_to_num(overlap) * n + met) / both
                n_two_sided, n = n, both
                ta, tb = tables[i], tables[j]
                score_inside, score_overlap, _ = _coverage(
                    ta[ta["filesystem"] == fs],
                    tb[tb["filesystem"] == fs],
                    "score",
                    "score_ci_low",
                    "score_ci_high",
                    ["filesystem", "backend", "layout_id", "compression"],
                )
                pairs.append(
                    {
                        "pair": [i, j],
                        "inside": inside,
                        "overlap": overlap,
                        "ratios": n,
                        "two_sided": n_two_sided,
                        "one_sided": k,
                        "one_sided_held": held,
                        "score_inside": score_inside,
                        "score_overlap": score_overlap,
                    }
                )
        figures = {
            k: float(np.nanmedian([p[k] for p in pairs]))
            for k in ("inside", "overlap", "score_inside", "score_overlap")
        }
        figures.update({f"{k}_min": float(np.nanmin([p[k] for p in pairs])) for k in ("inside", "overlap")})
        out["by_filesystem"][fs] = {**figures, "pairs": pairs}
        out[f"inside_{fs}"] = figures["inside"]
        out[f"overlap_{fs}"] = figures["overlap"]
        out[f"score_inside_{fs}"] = figures["score_inside"]
    return out


def calibration_lines(results: dict) -> list[str]:
    """The calibration's detail beside its goals: range over the pairs, and the scores'."""
    lines = []
    for fs, f in results.get("calibration", {}).get("by_filesystem", {}).items():
        lines.append(
            f"      (not a goal) {fs}: ratios inside another run's interval, lowest pair {f['inside_min']:.3f};"
            f" intervals overlapping, lowest pair {f['overlap_min']:.3f}; the recommendation's scores inside"
            f" another run's interval, median {f['score_inside']:.3f}, overlapping {f['score_overlap']:.3f}"
        )
    return lines
