"""The workflow and the code pass the linters the project holds itself to."""

import subprocess

import pytest
from conftest import BIN, REPO, SNAKEMAKE


def run(*cmd):
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.workflow  # Snakemake parses the workflow (`make lint` runs it too)
@pytest.mark.parametrize("profile", [[], ["--profile", "profiles/slurm"]], ids=["default", "slurm"])
def test_snakemake_lint_is_clean(profile):
    proc = run(SNAKEMAKE, "--lint", *profile)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "good condition" in proc.stdout + proc.stderr


def test_snakefmt_check_is_clean():
    proc = run(str(BIN / "snakefmt"), "--check", "Snakefile", "rules")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff_is_clean(args):
    proc = run(str(BIN / "ruff"), *args, "src", "tests", "workflow/scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_figure_a_case_can_plan_has_its_caption_and_every_caption_a_figure():
    """``snakemake --report`` fails on a figure whose caption file is missing."""
    from h5sweep.cases import FIGURES

    report = REPO / "workflow" / "report"
    files = {f.caption_file(report) for f in FIGURES.values()}
    missing = sorted(str(f) for f in files if not f.is_file())
    assert missing == []
    # a case package keeps its figures' captions beside them
    assert all(f.caption_file(report).parent != report for f in FIGURES.values() if f.module)
    # the tables' captions and the workflow's description are the rest
    spare = {p.stem for p in report.glob("*.rst")} - {f.stem for f in files if f.parent == report}
    assert spare == {"findings", "recommendation", "summary", "workflow"}


def pins(path):
    """``{name: version}`` of a requirements file's ``name==version`` lines (names normalized)."""
    found = {}
    for line in (REPO / path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[name.strip().lower().replace("_", "-").replace(".", "-")] = version.strip()
    return found


def test_the_lock_pins_every_direct_dependency_at_its_version():
    """`make install` installs requirements.lock alone (without dependencies), so a pin of
    requirements.txt the lock lacks or contradicts would not be installed: every one is there,
    and every line of both is ``name==version``."""
    direct, locked = pins("requirements.txt"), pins("requirements.lock")
    assert all(direct.values()) and all(locked.values())
    assert {name: version for name, version in direct.items() if locked.get(name) != version} == {}
