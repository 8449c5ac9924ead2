"""``h5sweep whatif`` prints, per mix and filesystem, every store ranked for that mix as a table
(rank, store, mix time with its interval, ratio to the choice, tied, file size, write, worst
case), and its words name the sweep's own choice where the mix chooses another. On reads and
summaries shaped as the sweep writes them (those of test_recommend, test_decision and
test_resume), and through the command on a results folder made of them."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from test_decision import FILES, decision_settings, summary
from test_recommend import MEASURED
from test_resume import _chosen, _settings, raced_measurements

from h5sweep.analyze.whatif import TABLE_HEAD, TABLE_LEGEND, decide, rank_for
from h5sweep.measure import objective as objectives
from h5sweep.measure.records import write_table
from h5sweep.storage import columns as C
from h5sweep.storage.sizes import duration, duration_range, size

BIN = Path(sys.executable).parent


def tables(lines: list[str]) -> dict[str, list[list[str]]]:
    """The tables among printed lines, by filesystem: each row's cells (the head first)."""
    out, current = {}, None
    for line in lines:
        if line.endswith(":") and not line.startswith("|"):
            current = out.setdefault(line[:-1], [])
        elif line.startswith("| ") and current is not None:
            current.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return out


def test_every_store_of_a_mix_is_a_row_with_its_time_ratio_tie_size_write_and_worst_case():
    settings = _settings()
    weights = {"slice": 1.0}
    lines = decide(raced_measurements(), summary(), settings, "slices", weights, _chosen(settings), with_table=True)
    rows = tables(lines)["disk"]
    assert rows[0] == list(TABLE_HEAD)
    ranked, _ = rank_for(raced_measurements(), summary(), settings, weights)
    ranked = ranked.sort_values(C.RANK)
    assert len(rows) == 1 + len(ranked)
    pick = ranked[ranked[C.RECOMMENDED]].iloc[0]
    for cells, (_, row) in zip(rows[1:], ranked.iterrows(), strict=True):
        cell = dict(zip(TABLE_HEAD, cells, strict=True))
        assert cell["rank"] == str(int(row[C.RANK]))
        assert cell["file"] == size(row[C.FILE_BYTES]) and cell["write"] == duration(row[C.WRITE_MEDIAN_S])
        if pd.notna(row[C.RACED_OUT_ROUND]):
            assert cell["store"] == "chunked-4x4x256 with gzip-4"
            assert cell["mix time (95% interval)"] == "not measured to the end" and cell["tied"] == ""
            # the reads it made before the race stopped it say this mix could favour it
            assert cell["note"] == "raced out at round 4; on its 4 reads 0.556x this mix's fastest: could be favoured"
            continue
        interval = duration_range(row[objectives.MIX_SECONDS_CI_LOW], row[objectives.MIX_SECONDS_CI_HIGH])
        assert cell["mix time (95% interval)"] == f"{duration(row[objectives.MIX_SECONDS])} ({interval})"
        assert cell["to the choice"] == f"{row[objectives.MIX_SECONDS] / pick[objectives.MIX_SECONDS]:.2f}x"
        assert cell["worst case"].startswith(f"{row[objectives.WORST_CASE]} ")
    by_store = {cells[1]: dict(zip(TABLE_HEAD, cells, strict=True)) for cells in rows[1:]}
    # slices alone favour the 16x16x256 chunks; the sweep chose contiguous for spectra
    assert by_store["chunked-16x16x256"]["note"] == "choice" and by_store["chunked-16x16x256"]["tied"] == "fastest"
    assert by_store["chunked-16x16x256"]["to the choice"] == "1.00x"
    assert by_store["contiguous"]["note"] == "sweep's choice" and by_store["contiguous"]["tied"] == ""
    assert by_store["contiguous"]["to the choice"] == "1.11x"
    # the words before the table name the sweep's choice and where it ranks
    assert "; the sweep's choice, contiguous, ranks 2: 1.11x the fastest's score" in lines[0]


def test_where_the_mix_chooses_a_smaller_tied_store_the_words_name_the_sweeps_choice_and_why():
    """The fastest store for this mix is the sweep's own choice; another is tied with it and
    has the smaller file: the mix chooses that one, and says so instead of 'ranks 1 (tied)'."""
    files = {**FILES, ("chunked-16x16x256", "none"): (300, 1.1)}
    settings, weights = decision_settings(), {"slice": 1.0, "spectra": 1.0}
    ranked, _ = rank_for(MEASURED, summary(files=files), settings, weights)
    fastest = ranked[ranked[C.RANK] == 1]
    assert fastest.iloc[0][C.LAYOUT_ID] == "chunked-16x16x512" and not fastest.iloc[0][C.RECOMMENDED]
    lines = decide(MEASURED, summary(files=files), settings, "both", weights, fastest, with_table=True)
    assert lines[0].startswith("both (slice 1, spectra 1) on disk: HDF5 chunked-16x16x256, ")
    assert (
        ", rank 2, tied with the fastest; the sweep's choice, chunked-16x16x512 with gzip-4, is the fastest: "
        in (lines[0])
    )
    assert lines[0].endswith("and of them this one is chosen for its smaller file (300 B against 350 B).")
    rows = {cells[1]: cells for cells in tables(lines)["disk"][1:]}
    assert rows["chunked-16x16x512 with gzip-4"][0] == "1" and rows["chunked-16x16x512 with gzip-4"][4] == "fastest"
    assert rows["chunked-16x16x512 with gzip-4"][-1] == "sweep's choice"
    assert rows["chunked-16x16x256"][0] == "2" and rows["chunked-16x16x256"][4] == "tied"
    assert rows["chunked-16x16x256"][-1] == "choice"
    assert rows["contiguous"][4] == "" and rows["chunked-4x4x256 with gzip-4"][4] == ""


def finished_folder(root: Path) -> Path:
    """A results folder as a finished sweep leaves it for whatif: the recommend job's
    settings, the measurements and the summary (here those of the raced reads)."""
    results = root / "results" / "demo"
    results.mkdir(parents=True)
    (results / "recommend.json").write_text(json.dumps(_settings()))
    write_table(raced_measurements(), str(results / "measurements.parquet"))
    write_table(summary(), str(results / "summary.parquet"))
    return results


def test_the_command_prints_each_mix_then_its_table_and_what_the_columns_mean(tmp_path):
    results = finished_folder(tmp_path)
    args = ["whatif", str(results), "--weights", "slice=1,spectra=100", "--weights", "slice=1"]
    ran = subprocess.run([str(BIN / "h5sweep"), *args], capture_output=True, text=True, check=True)
    same = subprocess.run([sys.executable, "-m", "h5sweep.compare.whatif", *args[1:]], capture_output=True, text=True)
    assert same.stdout == ran.stdout
    out = ran.stdout.splitlines()
    assert out[0].startswith("mix 1 (slice 1, spectra 100) on disk: HDF5 contiguous, ")
    assert out[0].endswith("; the same as the sweep's choice.")
    heads = [line for line in out if line.startswith("| rank ")]
    assert len(heads) == 2 and all([c.strip() for c in h.strip("|").split(" | ")] == list(TABLE_HEAD) for h in heads)
    assert out[-1] == TABLE_LEGEND
    first = tables(out[: out.index(next(line for line in out if line.startswith("mix 2 ")))])["disk"]
    assert [cells[1] for cells in first[1:]] == ["contiguous", "chunked-16x16x256", "chunked-4x4x256 with gzip-4"]
    assert first[1][-1] == "choice; sweep's choice" and first[1][3] == "1.00x"
    # the columns line up: every line of a table is as long as its head
    table_lines = [line for line in out if line.startswith("|")]
    assert len({len(line) for line in table_lines[: len(first) + 1]}) == 1


def test_where_no_store_meets_the_limits_the_table_lists_every_store_and_why_none_is_chosen():
    settings = decision_settings(max_file_ratio=0.1)  # every file is at least 0.35x raw
    weights = {"slice": 1.0}
    lines = decide(MEASURED, summary(), settings, "slices", weights, summary().iloc[0:0], with_table=True)
    assert lines[0] == "slices (slice 1) on disk: no store meets the limits."
    rows = tables(lines)["disk"][1:]
    assert len(rows) == 4
    for cells in rows:
        cell = dict(zip(TABLE_HEAD, cells, strict=True))
        assert cell["to the choice"] == "" and cell["tied"] == "" and "choice" not in cell["note"]
        assert cell["note"].startswith("beyond a limit: file ") and cell["note"].endswith("x raw > 0.1")
