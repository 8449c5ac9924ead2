"""The studies' comparative findings, judged across finished sweeps (h5sweep.compare.comparative
and the parallel case's compared_findings): each quotes its seed, casts its roles among the
sweeps' filesystems and reaches each verdict on summaries shaped as the sweeps write them; the
shipped ORIGDOQ/BIGDOQ pair compares through the real entry point."""

from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO
from test_findings import SEEDS, _plain

from h5sweep.cases import claims
from h5sweep.compare import Run, main
from h5sweep.compare import comparative as cf

STUDY = REPO / "config" / "studies" / "folk-choi"


def _run(tmp: Path, name: str, shape: tuple, rows: list[dict], write: bool = True) -> Run:
    """A finished sweep's results folder (its summary and measurements), written where
    ``write``, and loaded as compare loads it."""
    folder = tmp / name
    summary = pd.DataFrame(rows)
    measurements = pd.DataFrame({"sweep": [name], "dataset_shape": ["x".join(map(str, shape))], "case": ["parallel"]})
    if write:
        folder.mkdir(parents=True, exist_ok=True)
        summary.to_parquet(folder / "summary.parquet")
        measurements.to_parquet(folder / "measurements.parquet")
    return Run(folder, measurements, summary, None)


def _pass(filesystem, operation, mode, p, chunk, k, rate, spread=0.05) -> dict:
    return {
        "filesystem": filesystem,
        "backend": "hdf5",
        "case": "parallel",
        "primary": True,
        "compression": "none",
        "chunk_shape": chunk,
        "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
        "operation": operation,
        "mode": mode,
        "processes": p,
        "units_per_access": k,
        "bytes_per_s_median": rate,
        "bytes_per_s_ci_low": rate * (1 - spread),
        "bytes_per_s_ci_high": rate * (1 + spread),
        "bytes_per_s_max": rate * (1 + spread),
    }


def _shipped(name: str) -> dict:
    return yaml.safe_load((STUDY / name).read_text())


def _image(config: dict, rate, processes=None, spread=0.05) -> list[dict]:
    """The summary rows of a shipped Folk & Choi config's parallel passes (its filesystem,
    modes, process counts, units per access and layouts), each pass at ``rate(operation, mode,
    P, kind, k)``."""
    (filesystem,) = config["filesystems"]
    case = config["cases"]["parallel"]
    chunk = "x".join(map(str, config["layouts"]["shapes"][0]["chunk"]))
    rows = []
    for operation in case["operations"]:
        for kind, chunk_shape in (("contiguous", ""), ("chunked", chunk)):
            ks = case["units_per_access"]["writes" if operation == "write" else kind]
            for k in ks:
                for mode in case["modes"]:
                    for p in [1] if mode == "serial" else processes or case["processes"]:
                        value = rate(operation, mode, p, kind, k)
                        rows.append(_pass(filesystem, operation, mode, p, chunk_shape, k, value, spread))
    return rows


def _pair(tmp, orig_rate, big_rate, orig_processes=None, big_processes=None, spread=0.05, write=False):
    orig, big = _shipped("origdoq.yaml"), _shipped("bigdoq.yaml")
    return [
        _run(
            tmp, orig["sweep"], tuple(orig["dataset"]["shape"]), _image(orig, orig_rate, orig_processes, spread), write
        ),
        _run(tmp, big["sweep"], tuple(big["dataset"]["shape"]), _image(big, big_rate, big_processes, spread), write),
    ]


def _verdicts(runs, roles=None) -> dict[str, str]:
    table = cf.evaluate(runs, roles or {})
    return dict(zip(table["finding"], table["verdict"], strict=True))


def test_each_comparative_finding_quotes_its_seed_verbatim_and_names_its_configs():
    keys = [f.key for f in cf.FINDINGS]
    assert len(keys) == len(set(keys)) == 17
    assert {f.study for f in cf.FINDINGS} == {"OpenMSI", "I/O lab", "Folk & Choi"}
    for f in cf.FINDINGS:
        assert isinstance(f, claims.Comparative) and f.statement and f.section and f.needs, f.key
        for config in f.config.split(" and "):
            assert (REPO / config).is_file(), (f.key, config)
    if SEEDS.is_dir():
        for f in cf.FINDINGS:
            assert _plain(f.quote) in _plain((REPO / f.document).read_text(encoding="utf-8")), f.key
        for _, document, _, sentence, why in cf.NOT_COMPARED:
            assert _plain(sentence) in _plain((REPO / document).read_text(encoding="utf-8")) and why, sentence


def _flat(operation, mode, p, kind, k) -> float:
    return 100e6


@pytest.mark.parametrize(
    ("factor", "verdict"),
    [(1.0, claims.HOLDS), (2.0, claims.FAILS), (1.2, claims.INCONCLUSIVE)],
)
def test_table_8_parallel_access_unaffected_by_size_reaches_each_verdict_on_intervals(tmp_path, factor, verdict):
    """BIGDOQ's independent and collective passes at `factor` times ORIGDOQ's, each median
    within 5%: 1.0 lies within 25% either way, 2.0 wholly outside, 1.2's ratio interval
    (1.09-1.33) straddles 1.25."""

    def big(operation, mode, p, kind, k):
        return 100e6 * (factor if mode != "serial" else 1.0)

    runs = _pair(tmp_path, _flat, big)
    assert _verdicts(runs)["size-parallel"] == verdict


def test_without_two_sizes_the_size_findings_are_not_measured_and_say_what_is_missing(tmp_path):
    orig = _shipped("origdoq.yaml")
    same = [
        _run(tmp_path, name, tuple(orig["dataset"]["shape"]), _image(orig, _flat), write=False) for name in ("a", "b")
    ]
    table = cf.evaluate(same)
    sizes = table[table["finding"] == "size-parallel"].iloc[0]
    assert sizes["verdict"] == claims.UNMEASURED and "two dataset sizes" in sizes["evidence"]


def test_the_size_findings_need_the_studys_two_images_one_width_and_ten_times_the_rows(tmp_path):
    orig, big = _shipped("origdoq.yaml"), _shipped("bigdoq.yaml")
    rows = _image(big, _flat)
    for shape, why in (((16000, 6308), "less than 10x"), ((160419, 6000), "not two images of one width")):
        runs = [_run(tmp_path, "o", tuple(orig["dataset"]["shape"]), _image(orig, _flat), False)]
        runs.append(_run(tmp_path, "b", shape, rows, False))
        table = cf.evaluate(runs).set_index("finding")
        assert (
            table.loc["size-parallel", "verdict"] == claims.UNMEASURED and why in table.loc["size-parallel", "evidence"]
        )


def _teragrid(orig_serial=8.0, serial_ratio=17.0):
    """Rates as Folk & Choi report them: ORIG's serial contiguous pass ``orig_serial`` times the
    parallel passes and ``serial_ratio`` times BIG's serial pass; BIG's chunked serial 35% and
    1-column serial 55% ahead of ORIG's; BIG's 1-column independent passes 84% and collective
    67% ahead at 4 or more processes; the parallel contiguous passes alike on both images."""

    def orig(operation, mode, p, kind, k):
        return 100e6 * (orig_serial if kind == "contiguous" and mode == "serial" else 1.0)

    def big(operation, mode, p, kind, k):
        if kind == "contiguous":
            return 100e6 * (orig_serial / serial_ratio if mode == "serial" else 1.0)
        if mode == "serial":
            return 100e6 * (1.35 if k > 1 else 1.55)
        if k == 1 and p >= 4:
            return 100e6 * (1.84 if mode == "independent" else 1.67)
        return 100e6

    return orig, big


def test_the_teragrid_numbers_hold_and_the_12_process_sentences_need_orig_at_4_or_more(tmp_path):
    verdicts = _verdicts(_pair(tmp_path, *_teragrid(), spread=0.02))
    for key in ("size-parallel", "size-serial", "big-serial-worst", "size-chunked-serial", "size-column-serial"):
        assert verdicts[key] == claims.HOLDS, key
    # Table 5's 3-10x over "the other three" cannot also hold where Table 8's 17x over BIG's serial does
    assert verdicts["orig-serial-fastest"] == claims.FAILS
    # as shipped, ORIGDOQ runs 1 and 2 processes: Table 11's sentences at 4 or more are not measured
    assert verdicts["size-column-independent"] == verdicts["size-column-collective"] == claims.UNMEASURED
    wide = _verdicts(_pair(tmp_path, *_teragrid(), orig_processes=[1, 2, 4, 8, 12], spread=0.02))
    assert wide["size-column-independent"] == wide["size-column-collective"] == claims.HOLDS


def test_table_5_holds_where_orig_serial_is_3_to_10_times_the_rest_and_fails_where_it_is_not(tmp_path):
    verdicts = _verdicts(_pair(tmp_path, *_teragrid(orig_serial=5.0, serial_ratio=7.0), spread=0.02))
    assert verdicts["orig-serial-fastest"] == verdicts["big-serial-worst"] == claims.HOLDS
    assert verdicts["size-serial"] == claims.FAILS  # 7x, not about 17x
    flat = _verdicts(_pair(tmp_path, *_teragrid(orig_serial=1.0), spread=0.02))
    assert flat["orig-serial-fastest"] == claims.FAILS  # ORIG's serial pass no faster than its parallel ones
    noisy = _verdicts(_pair(tmp_path, *_teragrid(), spread=0.6))  # intervals too wide to tell
    assert noisy["size-serial"] == noisy["size-chunked-serial"] == noisy["big-serial-worst"] == claims.INCONCLUSIVE


def test_the_sizes_pair_by_filesystem_name_else_one_each_else_as_the_user_names_them(tmp_path):
    orig, big = _shipped("origdoq.yaml"), _shipped("bigdoq.yaml")
    small_shape, large_shape = tuple(orig["dataset"]["shape"]), tuple(big["dataset"]["shape"])
    two = _image(orig, _flat) + [{**r, "filesystem": "tmpfs"} for r in _image(orig, _flat)]
    runs = [
        _run(tmp_path, "teragrid", small_shape, two, False),
        _run(tmp_path, "cluster", large_shape, _image(big, _flat)),
    ]
    found = claims.parties(runs)
    from h5sweep.cases.parallel.sizes import cast_sizes

    casts, missing = cast_sizes(found, {})
    assert casts == [] and "--role orig=NAME --role big=NAME" in missing
    table = cf.evaluate(runs)
    assert table.loc[table["finding"] == "size-parallel", "verdict"].iloc[0] == claims.UNMEASURED
    named = cf.evaluate(runs, {"orig": "teragrid:disk", "big": "shared"})
    row = named[named["finding"] == "size-parallel"].iloc[0]
    assert row["verdict"] == claims.HOLDS and row["system"] == "orig=teragrid:disk; big=cluster:shared"
    # filesystems named alike pair by name
    alike = [_run(tmp_path, "teragrid", small_shape, two, False)]
    alike.append(_run(tmp_path, "cluster", large_shape, [{**r, "filesystem": "tmpfs"} for r in _image(big, _flat)]))
    casts, _ = cast_sizes(claims.parties(alike), {})
    assert [(c["orig"].name, c["big"].name) for c in casts] == [("teragrid:tmpfs", "cluster:tmpfs")]


def _reads(filesystem, time, compression="none", chunk="", cases=("slice", "spectra", "subcube"), spread=0.05):
    """Summary rows of primary reads (each selection case) of one store."""
    return [
        {
            "filesystem": filesystem,
            "backend": "hdf5",
            "case": case,
            "primary": True,
            "variant": "",
            "cache_state": "cold",
            "compression": compression,
            "chunk_shape": chunk,
            "layout_id": f"chunked-{chunk}" if chunk else "contiguous",
            "median_s": time(case),
            "median_ci_low_s": time(case) * (1 - spread),
            "median_ci_high_s": time(case) * (1 + spread),
        }
        for case in cases
    ]


def _openmsi(project_over_scratch: float, spread=0.05) -> list[dict]:
    """One sweep on two filesystems named as the study's, contiguous and 4x4x2048 chunks,
    uncompressed and gzip-4, and a contiguous write each."""
    rows = []
    for filesystem, slow in (("scratch", 1.0), ("project", project_over_scratch)):
        rows += _reads(filesystem, lambda c, s=slow: 0.01 * s, spread=spread)
        rows += _reads(filesystem, lambda c, s=slow: 0.005 * s, chunk="4x4x2048", spread=spread)
        rows += _reads(filesystem, lambda c, s=slow: 0.02 * s, "gzip-4", "4x4x2048", spread=spread)
        write = 2.0 if filesystem == "scratch" else 1.0
        rows += _reads(filesystem, lambda c, w=write: w, cases=("write",), spread=spread)
    return rows


@pytest.mark.parametrize(
    ("project_over_scratch", "spread", "verdict"),
    [(3.0, 0.05, claims.HOLDS), (1.0, 0.05, claims.FAILS), (2.0, 0.05, claims.INCONCLUSIVE)],
)
def test_openmsi_scratch_against_project_reaches_each_verdict(tmp_path, project_over_scratch, spread, verdict):
    run = _run(tmp_path, "openmsi", (100, 100, 100000), _openmsi(project_over_scratch, spread), False)
    verdicts = _verdicts([run])  # one sweep, its filesystems named as the study's: cast by name
    assert verdicts["scratch-faster-selections"] == verdict
    assert verdicts["project-better-writes"] == claims.HOLDS  # /project writes in half the time


def test_openmsi_claims_without_their_roles_are_not_measured_and_say_how_to_name_them(tmp_path):
    rows = [r for r in _openmsi(3.0) if r["filesystem"] == "scratch"]
    table = cf.evaluate([_run(tmp_path, "alone", (100, 100, 100000), rows, False)])
    row = table[table["finding"] == "scratch-faster-selections"].iloc[0]
    assert row["verdict"] == claims.UNMEASURED and "--role scratch=NAME --role project=NAME" in row["evidence"]


def _system(name, filesystem, slice_plain, slice_gzip, tmp, spread=0.05) -> Run:
    """A sweep of the compression study on one system: z-slices (and spectra, sub-cubes) of
    4x4x2048 chunks, uncompressed and gzip-4."""
    rows = _reads(filesystem, lambda c: slice_plain, chunk="4x4x2048", spread=spread)
    rows += _reads(filesystem, lambda c: slice_gzip, "gzip-4", "4x4x2048", spread=spread)
    return _run(tmp, name, (100, 100, 100000), rows, False)


def test_compression_helps_the_io_bound_portal_and_hurts_hopper(tmp_path):
    portal = _system("portal-sweep", "project", 0.5, 0.1, tmp_path)  # slow I/O: gzip reads less
    hopper = _system("hopper-sweep", "project", 0.01, 0.05, tmp_path)  # fast I/O: decompression costs
    roles = {"portal": "portal-sweep", "hopper": "hopper-sweep"}
    verdicts = _verdicts([portal, hopper], roles)
    assert verdicts["compression-helps-portal"] == verdicts["compression-contrast"] == claims.HOLDS
    assert verdicts["hopper-project-faster"] == claims.HOLDS
    # the same measurements with the roles swapped: the "portal" is not the I/O-bound one
    swapped = cf.evaluate([portal, hopper], {"portal": "hopper-sweep", "hopper": "portal-sweep"})
    helps = swapped[swapped["finding"] == "compression-helps-portal"].iloc[0]
    assert helps["verdict"] == claims.UNMEASURED and "not the I/O-bound system" in helps["evidence"]
    assert _verdicts([portal, hopper], {"portal": "hopper-sweep", "hopper": "portal-sweep"})[
        "compression-contrast"
    ] == (claims.FAILS)
    # alike on both: compression's cost cannot be told apart
    same = _verdicts([_system("a", "project", 0.01, 0.05, tmp_path), hopper], {"portal": "a", "hopper": "hopper-sweep"})
    assert same["compression-contrast"] == claims.INCONCLUSIVE


def _iosize(filesystem, time, spread=0.05) -> list[dict]:
    return [
        {
            "filesystem": filesystem,
            "backend": "hdf5",
            "case": "iosize",
            "variant": f"{api} {direction}{' cold' if direction == 'read' else ''}, {size} B",
            "cache_state": "cold" if direction == "read" else "",
            "median_s": time * 4096 / size,
            "median_ci_low_s": time * 4096 / size * (1 - spread),
            "median_ci_high_s": time * 4096 / size * (1 + spread),
        }
        for api in ("hdf5", "raw")
        for direction in ("write", "read")
        for size in (4096, 1 << 20)
    ]


def test_the_labs_platforms_the_pc_slowest_and_the_platforms_apart(tmp_path):
    pc, workstation, cluster = (
        _run(tmp_path, name, (1 << 24,), _iosize("disk", t), False)
        for name, t in (("pc", 1.0), ("workstation", 0.3), ("cluster", 0.2))
    )
    verdicts = _verdicts([pc, workstation, cluster])  # each sweep named as its role
    assert verdicts["better-than-pc"] == verdicts["platforms-vary"] == claims.HOLDS
    slow_cluster = _run(tmp_path, "cluster", (1 << 24,), _iosize("disk", 1.5), False)
    assert _verdicts([pc, workstation, slow_cluster])["better-than-pc"] == claims.FAILS
    alike = _run(tmp_path, "cluster", (1 << 24,), _iosize("disk", 1.0), False)
    verdicts = _verdicts([pc, alike])
    assert verdicts["platforms-vary"] == claims.FAILS and verdicts["better-than-pc"] == claims.INCONCLUSIVE


def test_the_shipped_origdoq_and_bigdoq_pair_compares_through_the_entry_point(tmp_path, capsys):
    """Sweeps shaped as the shipped configs write them (ORIGDOQ on `disk`, BIGDOQ on `shared`,
    their processes, modes and units per access): compare accepts them as shipped, writes Fig.
    7's ratios with their intervals and Table 8 judged on them, and the comparative findings."""
    orig, big = _teragrid()
    runs = _pair(tmp_path, orig, big, spread=0.02, write=True)
    out = tmp_path / "out"
    assert main([str(runs[0].path), str(runs[1].path), "--out", str(out)]) == 0
    text = (out / "comparison.md").read_text()
    assert "| teragrid:disk | teragrid-cluster:shared | read | independent | 2 | contiguous | 525 | 1.00 |" in text
    assert "Neither type of parallel access was affected appreciably by the size of the file." in text
    assert "teragrid:disk against teragrid-cluster:shared: **holds**" in text
    sizes = pd.read_csv(out / "parallel-sizes.csv")
    assert {"large_over_small_ci_low", "large_over_small_ci_high", "units_per_access"} <= set(sizes.columns)
    assert (sizes["large_over_small_ci_low"] <= sizes["large_over_small"]).all()
    assert set(sizes["processes"]) == {1, 2}  # the process counts both ran
    found = pd.read_csv(out / "comparative-findings.csv")
    assert len(found) == len(cf.FINDINGS) and set(found["verdict"]) <= set(claims.VERDICTS)
    mine = found[found["study"] == "Folk & Choi"].set_index("finding")
    assert mine.loc["size-parallel", "verdict"] == claims.HOLDS
    assert mine.loc["size-parallel", "system"] == "orig=teragrid:disk; big=teragrid-cluster:shared"
    md = (out / "comparative-findings.md").read_text()
    assert md.startswith("# Findings across sweeps") and "## Not judged across sweeps" in md
    assert (out / "parallel-sizes.png").stat().st_size > 5_000
    # a role no system plays is refused, naming it and the systems there are
    assert main([str(runs[0].path), str(runs[1].path), "--out", str(out), "--role", "orig=nowhere"]) == 2
    err = capsys.readouterr().err
    assert "--role orig=nowhere" in err and "teragrid:disk" in err


MPI_PYTHON = REPO / ".venv-mpi" / "bin" / "python"


def _shrunk(tmp: Path, name: str, rows: int) -> Path:
    """A shipped Folk & Choi config as shipped (its sweep, its filesystem's name, modes,
    operations and the study's dealing), on an image of ``rows`` x 64 bytes in chunks of all
    rows x 8 columns, 8 columns per access (1 for the chunked image's reads), 1 and 2
    processes, run by the real workflow; its results folder."""
    from conftest import Workflow

    config = _shipped(name)
    (filesystem,) = config["filesystems"]
    config["filesystems"] = {filesystem: str(tmp / name / filesystem)}
    config["dataset"]["shape"] = [rows, 64]
    config["layouts"]["shapes"][0]["chunk"] = [rows, 8]
    case = config["cases"]["parallel"]
    case.update(processes=[1, 2], units_per_access={"contiguous": [8], "chunked": [1, 8], "writes": [8]}, repeats=3)
    workflow = Workflow(tmp / name / "wf")
    workflow.run("--cores", "2", "--configfile", str(workflow.write_config(config, name)), check=True)
    return workflow.root / "results" / config["sweep"]


@pytest.mark.skipif(not MPI_PYTHON.exists(), reason="no .venv-mpi: run `make install-mpi`")
@pytest.mark.workflow
def test_the_shipped_pair_run_small_by_the_workflow_compares_as_shipped(tmp_path):
    """The shipped ORIGDOQ and BIGDOQ configs, shrunk but with their filesystems named as shipped
    (`disk`, `shared`), run for real: compare pairs their passes and writes every output."""
    orig, big = _shrunk(tmp_path, "origdoq.yaml", 48), _shrunk(tmp_path, "bigdoq.yaml", 480)  # 10x the rows
    out = tmp_path / "out"
    assert main([str(orig), str(big), "--out", str(out)]) == 0
    sizes = pd.read_csv(out / "parallel-sizes.csv")
    assert set(sizes["small"]) == {"teragrid:disk"} and set(sizes["large"]) == {"teragrid-cluster:shared"}
    # every pass both ran: 2 operations x (serial + 2 modes x 2 P) contiguous, and chunked reads at 1 and 8
    # columns and writes at 8
    assert len(sizes) == 5 * (2 + 2 + 1) and sizes["large_over_small_ci_low"].notna().all()
    assert (sizes["large_over_small_ci_low"] <= sizes["large_over_small_ci_high"]).all()
    found = pd.read_csv(out / "comparative-findings.csv").set_index("finding")
    folk = found[found["study"] == "Folk & Choi"]
    assert (folk["system"].dropna() == "orig=teragrid:disk; big=teragrid-cluster:shared").all()
    measured = folk[folk["verdict"] != "not measured"].index
    assert {"size-parallel", "size-serial", "size-chunked-serial", "size-column-serial"} <= set(measured)
    assert "Folk & Choi, Table 8 (contiguous storage)" in (out / "comparison.md").read_text()
