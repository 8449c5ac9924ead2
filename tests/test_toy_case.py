"""A new case costs one package and one registry line: a toy case (fsync a small file, timed),
with its settings, a verdict, a finding and a figure of its own, is added to a copy of the
project in exactly those two places, and a real Snakemake run measures it, summarizes it, says
its verdict in recommendation.md, checks its finding and draws its figure, caption included."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import ProjectCopy, tiny_config

TOY = '''"""A toy case: the time to write and fsync a small file, per filesystem."""

from __future__ import annotations

import os
import time

from h5sweep.kit.spec import CaseSpec, Figure
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.measure import rates
from h5sweep.measure.lock import timed_window
from h5sweep.storage import columns

TOY_SIZE = columns.column("toy_size", columns.INTEGER, "bytes")
columns.group(columns.MEASUREMENTS, (TOY_SIZE,), "Toy case: bytes written before each fsync.")


class ToyCase:
    name = "toy"
    ranks = (1, 2, 3, 4, 5)
    SETTINGS = Block(
        "toy",
        "A toy case (tests/test_toy_case.py).",
        (
            Setting("repeats", "integer", 2, "Timed fsyncs.", {"minimum": 1}),
            Setting("size", "integer", 4096, "Bytes written before each fsync.", {"minimum": 1}),
        ),
    )

    def __init__(self, settings: dict):
        self.settings = self.SETTINGS.filled(settings)
        self.repeats = int(self.settings["repeats"])
        self.size = int(self.settings["size"])

    def check(self, shape=(), itemsize: int = 1) -> None:
        if self.repeats < 1:
            raise ConfigError("cases.toy.repeats", self.repeats, "must be at least 1")


def run_toy(directory: str, case: ToyCase, data, settle_s: float = 0.0) -> list[dict]:
    os.makedirs(directory, exist_ok=True)
    path, rows = os.path.join(directory, "toy.bin"), []
    for repeat in range(case.repeats):
        with timed_window() as window:
            t0 = time.perf_counter()
            with open(path, "wb") as f:
                f.write(b"x" * case.size)
                f.flush()
                os.fsync(f.fileno())
            seconds = time.perf_counter() - t0
        rows.append({"case": "toy", "repeat": repeat, "seconds": seconds, "bytes_selected": case.size,
                     TOY_SIZE: case.size, **window.columns()})
    os.remove(path)
    return rows


FIGURE = Figure("toy", "toy-{filesystem}", "Toy", module="h5sweep.cases.toy.figures")

SPEC = CaseSpec(
    name="toy",
    scope="filesystem",
    stage="toy",
    variant_columns=(TOY_SIZE,),
    enabled=lambda sweep: sweep.toy is not None,
    figures=lambda sweep: [FIGURE.name()],
    job_cost=rates.filesystem_job(lambda sweep: 0.01 * sweep.toy.repeats, lambda sweep: sweep.toy.repeats),
    runner="h5sweep.cases.toy:run_toy",
    mem_mb=lambda sweep: 200,
    plots=(FIGURE,),
    settings_type=ToyCase,
    findings="h5sweep.cases.toy.verdict:FINDINGS",
    verdict="h5sweep.cases.toy.verdict:toy_markdown",
)
'''

VERDICT = '''"""The toy case's verdict and finding."""

from h5sweep.kit.claims import Finding, below


def toy_markdown(summary, measurements):
    rows = summary[summary["case"] == "toy"]
    if rows.empty:
        return ""
    words = ", ".join(f"{r.filesystem} {r.median_s * 1e3:.3g} ms" for r in rows.itertuples())
    return "## Toy fsync (cases.toy)\\n\\nMedian fsync of a small file: " + words + ".\\n"


def _fsync_under_a_second(summary, shape):
    rows = summary[summary["case"] == "toy"]
    if rows.empty:
        return None
    row = rows.iloc[0]
    return below(row["median_ci_low_s"], row["median_ci_high_s"], 1.0), f"median {row['median_s']:.3g} s"


FINDINGS = (
    Finding(
        "toy-fsync",
        "Toy",
        "tests/test_toy_case.py",
        "fsync",
        "An fsync of a small file takes under a second.",
        "the median fsync of cases.toy.size bytes is below 1 s",
        "cases.toy",
        "",
        _fsync_under_a_second,
    ),
)
'''

FIGURES = '''"""The toy case's figure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from h5sweep.kit.style import save  # noqa: E402


def plot_toy(summary, filesystem, out):
    rows = summary[(summary["case"] == "toy") & (summary["filesystem"] == filesystem)]
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["fsync"], rows["median_s"])
    save(fig, out)
'''


@pytest.mark.workflow
def test_a_new_case_is_one_package_and_one_registry_line(tmp_path):
    project = ProjectCopy(tmp_path / "project")
    root = project.root
    package = root / "src" / "h5sweep" / "cases" / "toy"
    package.mkdir()
    (package / "__init__.py").write_text(TOY)
    (package / "figures.py").write_text(FIGURES)
    (package / "verdict.py").write_text(VERDICT)
    (package / "toy.rst").write_text("The toy case's fsync time on {{ snakemake.wildcards.filesystem }}.\n")
    # the registry line
    registry = root / "src" / "h5sweep" / "cases" / "__init__.py"
    line = 'CASE_MODULES = ("write", "read", "scaling", "metadata", "iosize", "parallel")'
    assert line in registry.read_text()
    registry.write_text(registry.read_text().replace(line, line[:-1] + ', "toy")'))
    # and nothing else: not the schema, not analysis, report or rules
    untouched = project.code()

    config = tiny_config(tmp_path, sweep="toy", figures=["toy"])
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["cases"]["toy"] = {"repeats": 3}
    (root / "toy.yaml").write_text(yaml.safe_dump(config))
    run = project.run("snakemake", "--cores", "2", "--configfile", "toy.yaml")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = root / "results" / "toy"
    rows = pd.read_parquet(results / "measurements.parquet").query("case == 'toy'")
    assert len(rows) == 3 and set(rows["toy_size"]) == {4096} and set(rows["filesystem"]) == {"disk"}
    summary = pd.read_parquet(results / "summary.parquet").query("case == 'toy'")
    assert len(summary) == 1 and int(summary["repeats"].iloc[0]) == 3
    typed = pd.read_parquet(results / "summary.parquet")["toy_size"]
    assert str(typed.dtype) == "Int64"  # its registered type: empty, not NaN, in other cases' rows
    docs = project.run("python", "-m", "h5sweep.sweep.config", "config/README.md")
    assert (
        docs.returncode == 0
        and "| `toy_size` | Toy case: bytes written before each fsync. |" in (root / "config" / "README.md").read_text()
    )
    assert (results / "plots" / "toy-disk.png").stat().st_size > 1_000
    # its verdict in recommendation.md, its finding checked on the sweep's summary
    assert (
        "## Toy fsync (cases.toy)\n\nMedian fsync of a small file: disk " in (results / "recommendation.md").read_text()
    )
    findings = pd.read_csv(results / "findings.csv").set_index("finding")
    assert findings.loc["toy-fsync", "verdict"] in ("holds", "inconclusive", "does not hold")
    assert "median " in findings.loc["toy-fsync", "evidence"]
    # its settings: declared in its package, in the schema the workflow checked and in the key table
    assert (
        "| `cases.toy.size` | `4096` | Bytes written before each fsync. |"
        in (root / "config" / "README.md").read_text()
    )
    assert project.changed_since(untouched) == []
    report = project.run("snakemake", "--configfile", "toy.yaml", "--report", str(results / "report.html"))
    assert report.returncode == 0, report.stderr[-3000:]
    assert "fsync time on disk" in (results / "report.html").read_text(errors="replace")
