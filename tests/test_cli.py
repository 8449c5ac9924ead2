"""The one command, ``h5sweep`` (the console script the package installs): its help names
each subcommand with its ``python -m`` form, each subcommand's help is its module's, and a
subcommand prints what its ``python -m`` form prints. Run as a user runs it: the installed
script in the environment's ``bin`` (``make install`` installs the package, and the script
with it)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from h5sweep.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "h5sweep"
FORMS = {
    "plan": "h5sweep.sweep",
    "whatif": "h5sweep.compare.whatif",
    "compare": "h5sweep.compare",
    "trace": "h5sweep.storage.trace",
    "s3": "h5sweep.host.seaweed",
}


def run(*args: str) -> subprocess.CompletedProcess:
    assert SCRIPT.is_file(), f"{SCRIPT} is missing: install the package (`pip install -e .`, `make install`)"
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def long_form(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_the_help_names_every_subcommand_and_its_python_m_form():
    assert set(COMMANDS) == set(FORMS)
    ran = run("--help")
    assert ran.returncode == 0 and ran.stdout.startswith("usage: h5sweep ")
    said = " ".join(ran.stdout.split())  # argparse wraps the lines
    for name, module in FORMS.items():
        assert re.search(rf"^    {name} ", ran.stdout, re.M), name
        assert f"(python -m {module})" in said
    alone = run()
    assert alone.returncode == 2 and alone.stdout == "" and alone.stderr == ran.stdout
    unknown = run("sweep")
    assert unknown.returncode == 2 and "h5sweep: unknown command 'sweep' (known: plan, whatif" in unknown.stderr


@pytest.mark.parametrize("name", list(FORMS))
def test_each_subcommands_help_is_its_modules(name):
    ran = run(name, "--help")
    same = long_form(FORMS[name], "--help")
    assert ran.returncode == same.returncode == 0
    assert ran.stdout == same.stdout and ran.stdout.startswith("usage: ")


def _free_space_unsaid(text: str) -> str:
    """A plan with the free space of each filesystem left out (others may write meanwhile)."""
    return re.sub(r"free [0-9.]+ [kMGTP]?B", "free ?", text)


def test_the_plan_of_the_default_config_is_the_python_m_forms_plan():
    args = ("--configfile", "config/config.yaml", "--cores", "2", "-q")
    ran, same = run("plan", *args), long_form("h5sweep.sweep", *args)
    assert ran.returncode == same.returncode == 0, ran.stderr
    assert ran.stdout.startswith("h5sweep plan: ") and " measuring jobs, " in ran.stdout
    assert _free_space_unsaid(ran.stdout) == _free_space_unsaid(same.stdout)
    # a refused config is refused alike, with the same exit status
    bad = ("--configfile", "config/config.yaml", "--cores", "two")
    refused, also = run("plan", *bad), long_form("h5sweep.sweep", *bad)
    assert refused.returncode == also.returncode == 2 and refused.stderr == also.stderr != ""
