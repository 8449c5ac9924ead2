"""Shared fixtures: small real HDF5 files and a throw-away copy of the workflow."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
WORKFLOW_PARTS = ["Snakefile", "rules", "workflow", "config", "profiles"]

# Every figure a test draws (in process or in a sweep's plot job) is checked, and a defect
# fails its test (h5sweep.kit.figcheck); `make test` also keeps the kinds drawn, for
# tests/test_figcheck.py's check that the suite drew every kind.
os.environ.setdefault("H5SWEEP_FIGURE_CHECK", "strict")

# Tests run in parallel (pytest-xdist, `make test`): each worker's sweeps share measurement
# windows among themselves (a window of a sweep never overlaps its own heavy work), not with
# the other worker's, whose sweeps are other sweeps.
if os.environ.get("PYTEST_XDIST_WORKER"):
    _locks = Path(tempfile.gettempdir()) / f"h5sweep-test-locks-{os.environ['PYTEST_XDIST_WORKER']}"
    _locks.mkdir(exist_ok=True)
    os.environ.setdefault("H5SWEEP_LOCK_DIR", str(_locks))


@functools.cache
def _shared_modules() -> frozenset[str]:
    """The test modules whose tests share a sweep (a session-scoped fixture: it runs once per
    worker) or the one SLURM cluster: each runs on one worker."""
    here = Path(__file__).parent
    return frozenset(
        f"tests/{path.name}"
        for path in here.glob("test_*.py")
        if 'scope="session"' in (text := path.read_text(encoding="utf-8")) or "pytest.mark.slurm" in text
    )


@contextlib.contextmanager
def machine_delay_held_still():
    """One at a time across the test workers: a test that changes this machine's free page
    reporting delay (h5sweep.host), or runs a sweep whose rows record it and checks them."""
    with open(Path(tempfile.gettempdir()) / "h5sweep-tests-page-reporting.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def machine_delay():
    with machine_delay_held_still():
        yield


@pytest.hookimpl(optionalhook=True)  # without pytest-xdist (the serial tests) it is not called
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling, load-balanced test by test, except that each module of
    :func:`_shared_modules` goes to one worker whole (xdist's own ``xdist_group`` marks need
    node ids it can rewrite, which this pytest no longer has)."""
    from xdist.scheduler import LoadScopeScheduling

    shared = _shared_modules()
    config.option.loadscopereorder = False  # the order is pytest_collection_modifyitems's

    class SharedModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in shared else nodeid

    return SharedModules(config, log)


def pytest_collection_modifyitems(config, items):
    """The longest work first, so that it does not start last: the SLURM tests (one worker,
    minutes of waiting for the cluster), then the other modules one worker takes whole (the
    most tests first), then the tests that run Snakemake, then the rest."""
    from collections import Counter

    shared = _shared_modules()
    module = {item: item.nodeid.split("::", 1)[0] for item in items}
    sizes = Counter(module.values())

    def rank(item) -> tuple:
        module_of = module[item]
        if item.get_closest_marker("slurm"):
            return (0, 0, module_of)
        if module_of in shared:
            return (1, -sizes[module_of], module_of)
        return (2 if item.get_closest_marker("workflow") else 3, 0, module_of)

    items.sort(key=rank)


_RUNNING: list = []  # the test whose setup, call or teardown runs now


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _RUNNING[:] = [item]


def _may_start_snakemake() -> None:
    """Only a test marked ``workflow`` or ``slurm`` starts Snakemake (`make test-fast`, which
    deselects those, runs none): any other fails here, naming the mark it lacks."""
    if _RUNNING and not any(_RUNNING[0].get_closest_marker(mark) for mark in ("workflow", "slurm")):
        pytest.fail(f"{_RUNNING[0].nodeid} starts Snakemake: mark it @pytest.mark.workflow", pytrace=False)


def interrupt(proc: subprocess.Popen, stopping=lambda: False, again_after_s: float = 5.0, timeout: float = 120) -> None:
    """Ctrl-C to a Snakemake run (its process group), pressed again while it goes on as if
    nothing happened: a first one that lands while Snakemake's log handler writes is
    swallowed there (it ignores KeyboardInterrupt), as a user at a terminal would see.
    ``stopping()``: whether Snakemake said it is stopping (then it is left to finish that)."""
    import signal
    import time

    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if not stopping():
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=again_after_s)
        except subprocess.TimeoutExpired:
            continue
    proc.wait(timeout=1)


def read_config_file(path) -> dict:
    """A config file's contents (an empty file: an empty config)."""
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def tiny_config(tmp: Path, sweep: str = "tiny", memory: bool = False, figures=False, **overrides) -> dict:
    """A sweep that runs in seconds on a directory under ``tmp`` (``memory``: and on /dev/shm,
    if present), drawing the figures its test looks at (``figures``: the config key)."""
    with open(REPO / "tests" / "configs" / "tiny.yaml", encoding="utf-8") as f:
        config = yaml.safe_load(f)
    config["sweep"] = sweep
    config["figures"] = figures
    config["filesystems"] = {"disk": str(tmp / "disk")}
    if memory and os.path.isdir("/dev/shm"):
        config["filesystems"]["tmpfs"] = {"path": f"/dev/shm/h5sweep-test-{os.getpid()}-{tmp.name}", "required": False}
    for key, value in overrides.items():
        config[key] = value
    return config


def without_rest(config: dict) -> dict:
    """A config whose filesystems take no rest after a removal (``settle_s: 0``) unless it sets
    one. The tests' directories are on a disk mounted with ``discard``, where a timed write
    would wait 2 s after each removal (h5sweep.measure.settle): in a workflow test that is
    only sleep, inside a measurement window; the rest itself is tested in test_settle.py."""
    filesystems = config.get("filesystems")
    if not isinstance(filesystems, dict):
        return config
    rested = {}
    for name, entry in filesystems.items():
        if isinstance(entry, str):
            entry = {"path": entry, "settle_s": 0}
        elif isinstance(entry, dict) and "path" in entry:
            entry = {"settle_s": 0, **entry}
        rested[name] = entry
    return {**config, "filesystems": rested}


class ProjectCopy:
    """A copy of the workflow and of the package's source under ``root``, run with the real
    Snakemake on that source (a plug-in added to the copy, never to the project)."""

    PARTS = ("Snakefile", "rules", "workflow", "config", "profiles", "src")

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True)
        for part in self.PARTS:
            src = REPO / part
            if src.is_dir():
                shutil.copytree(src, root / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            else:
                shutil.copy2(src, root / part)
        self.env = {**os.environ, "PYTHONPATH": str(root / "src"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    def code(self) -> dict[Path, bytes]:
        """Its code and configs as they are now, to tell later what changed."""
        return {p: p.read_bytes() for p in self.root.rglob("*") if p.suffix in (".py", ".smk", ".yaml")}

    def changed_since(self, code: dict[Path, bytes]) -> list[Path]:
        return [p for p, text in code.items() if p.read_bytes() != text]

    def run(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        """A command of the copy's environment (``snakemake``, ``python``) in the copy."""
        if args[0] == "snakemake":
            _may_start_snakemake()
        return subprocess.run(
            [str(BIN / args[0]), *args[1:]],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
        )


class Workflow:
    """A copy of the workflow in a temporary directory, run with the real Snakemake."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for part in WORKFLOW_PARTS:
            src = REPO / part
            if src.is_dir():
                shutil.copytree(src, root / part)
            else:
                shutil.copy2(src, root / part)

    def write_config(self, config: dict, name: str = "test.yaml") -> Path:
        path = self.root / name
        path.write_text(yaml.safe_dump(without_rest(config)), encoding="utf-8")
        return path

    def command(self, *args: str) -> list[str]:
        _may_start_snakemake()
        return [SNAKEMAKE, *args]

    def run(self, *args: str, timeout: float = 600, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            self.command(*args), cwd=self.root, capture_output=True, text=True, timeout=timeout, env=_env()
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            self.command(*args),
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_env(),
            start_new_session=True,
            preexec_fn=_ctrl_c_ends_it,
        )


def _ctrl_c_ends_it() -> None:
    """In a Snakemake started by a test: Ctrl-C (SIGINT) stops it as at a terminal, also where
    the tests themselves run in the background of a non-interactive shell, which starts them
    with SIGINT ignored (a child inherits that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_test_config(tmp_path: Path, name: str, report: bool = False, figures=False):
    """Run ``tests/configs/<name>`` for real with its filesystem in ``tmp_path``, drawing the
    figures its test looks at (``figures``: the config key), and with ``report``, build its
    ``snakemake --report`` (which fails on a missing caption); return the config, the results
    folder and the summary."""
    import pandas as pd

    config = yaml.safe_load((REPO / "tests" / "configs" / name).read_text())
    config["filesystems"] = {"disk": str(tmp_path / "disk")}
    config["figures"] = figures
    wf = Workflow(tmp_path / "wf")
    path = wf.write_config(config)
    wf.run("--cores", "2", "--configfile", str(path), check=True)
    results = wf.root / "results" / config["sweep"]
    if report:
        wf.run("--configfile", str(path), "--report", str(results / "report.html"), check=True)
        assert (results / "report.html").stat().st_size > 100_000
    return config, results, pd.read_csv(results / "summary.csv", keep_default_na=False)


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture
def workflow(tmp_path: Path) -> Workflow:
    wf = Workflow(tmp_path / "wf")
    yield wf
    for fs_dir in Path("/dev/shm").glob(f"h5sweep-test-{os.getpid()}-{tmp_path.name}*"):
        shutil.rmtree(fs_dir, ignore_errors=True)


def job_counts(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run, as {rule: count}."""
    counts: dict[str, int] = {}
    lines = dry_run_output.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Job stats:"))
    except StopIteration:
        return counts
    for line in lines[start + 3 :]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts


class ColdAs:
    """A read case read in one given cold mode (the engine asks a case only for its name,
    cold modes and selections)."""

    def __init__(self, case, cold: str):
        self.case, self.name, self.cold_modes = case, case.name, [cold]

    def selections(self, *args, **kwargs):
        return self.case.selections(*args, **kwargs)


def read_selections(
    backend, path, case, selections, source, layout, options=None, cold=None, evict=True, readahead=True
) -> list[dict]:
    """Chosen selections of one case read from one store through the workflow's read engine."""
    from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store

    case = ColdAs(case, cold) if cold else case
    plan = ReadPlan([case], source.shape, 0, selections={case.name: selections}, evict=evict, readahead=readahead)
    store = StoreUnderTest(backend, path, layout, source, read_options=[options] if options else None)
    return read_store(store, plan)


def read_cases(backend, path, cases, shape, seed, source, layout, options=None, split=False, copies=None):
    """Every read case on one store through the workflow's read engine, as a query job reads."""
    from h5sweep.measure.engine import ReadPlan, StoreUnderTest, read_store

    store = StoreUnderTest(backend, path, layout, source, read_options=options, copies=copies or [])
    return read_store(store, ReadPlan(cases, shape, seed, split=split))
