"""Generating and querying real HDF5 files on real filesystems."""

import math
import os
import tempfile
import zlib
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest
from conftest import read_cases, read_selections

from h5sweep.backends.chunk_cache import ChunkCache
from h5sweep.backends.hdf5 import BACKEND as HDF5
from h5sweep.cases import WriteCase, read_cases_from_config
from h5sweep.cases.write import LIMIT_FACTOR, LIMIT_FLOOR_S
from h5sweep.cases.write.run import generate
from h5sweep.measure import pagecache, rates
from h5sweep.measure.timing import minor_faults, touched_empty
from h5sweep.storage.codecs import parse_compression
from h5sweep.storage.datasources import SyntheticSource
from h5sweep.storage.errors import VerificationError
from h5sweep.storage.layouts import Layout
from h5sweep.storage.selections import Selection
from h5sweep.sweep.plan import CHUNK_INDEX_BYTES

SHAPE = (12, 10, 4000)
CASES = {"slice": {"repeats": 4, "depth": 25}, "spectra": {"repeats": 4, "size": 5}, "subcube": {"repeats": 4}}


@pytest.fixture(scope="session")
def source():
    return SyntheticSource(SHAPE, np.uint16, seed=11)


@pytest.fixture(scope="session")
def data(source):
    return source.materialize()


def make_file(directory, data, layout, compression="none", repeats=1):
    path = os.path.join(directory, f"{layout.id}-{compression}.h5")
    rows = generate(HDF5, path, data, layout, parse_compression(compression), WriteCase({"repeats": repeats}))
    return path, rows


LAYOUTS = [(Layout(None), "none")] + [(Layout(c), z) for c in [(5, 3, 700), (1, 1, 64)] for z in ["none", "gzip-4"]]


@pytest.mark.parametrize("layout, compression", LAYOUTS, ids=[f"{lay.id}-{z}" for lay, z in LAYOUTS])
def test_generated_files_hold_the_data_with_the_requested_layout(tmp_path, data, layout, compression):
    path, rows = make_file(tmp_path, data, layout, compression, repeats=2)
    assert [r["repeat"] for r in rows] == [0, 1] and all(r["seconds"] > 0 for r in rows)
    assert not [p for p in os.listdir(tmp_path) if ".partial" in p]
    with h5py.File(path, "r") as f:
        dset = f["data"]
        assert dset.chunks == layout.chunk_shape
        assert dset.compression == (None if compression == "none" else "gzip")
        np.testing.assert_array_equal(dset[...], data)
    assert rows[-1]["query_file_bytes"] == os.stat(path).st_size
    # the write case's file (standard API) differs from the query file at most in metadata
    # (the chunk index, whose layout depends on the order chunks were allocated in)
    metadata = layout.n_chunks(SHAPE) * CHUNK_INDEX_BYTES + 64 * 1024
    assert abs(rows[-1]["file_bytes"] - os.stat(path).st_size) < metadata


def test_a_write_past_its_limit_is_stopped_recorded_and_the_query_file_made_by_the_fast_path(tmp_path, data):
    layout = Layout((4, 3, 500))
    case = WriteCase({"repeats": 3, "strategies": ["spectrum", "chunk"], "limit_s": 1e-9})
    path = str(tmp_path / "stopped.h5")
    gzip = parse_compression("gzip-1")
    limits = case.limits(data, layout, gzip, 1 << 20)
    assert limits == {"spectrum": 1e-9, "chunk": 1e-9}
    rows = generate(HDF5, path, data, layout, gzip, case, limits=limits)
    assert [r["variant"] for r in rows] == ["spectrum, fill ifset", "chunk, fill ifset"]  # no further repeats
    assert all(r["stopped"] and r["limit_s"] == 1e-9 and math.isnan(r["file_bytes"]) for r in rows)
    assert rows[0]["write_calls"] < SHAPE[0] * SHAPE[1] and rows[1]["write_calls"] < layout.n_chunks(SHAPE)
    assert rows[0]["query_file_method"] != "write-case"  # the queried variant was stopped
    assert sorted(os.listdir(tmp_path)) == ["stopped.h5"]  # partial stores removed
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["data"][...], data)
    default = WriteCase({"strategies": ["spectrum", "chunk"]})
    planned = default.limits(data, layout, gzip, 1 << 20)
    assert planned == {"spectrum": LIMIT_FLOOR_S, "chunk": LIMIT_FLOOR_S}  # a tiny write: the floor
    large = SimpleNamespace(shape=(2000, 2000, 500), dtype=np.dtype(np.uint16))  # 4 GB
    expected = LIMIT_FACTOR * rates.write_seconds(large, layout, gzip, "spectrum", 1 << 20)
    assert default.limits(large, layout, gzip, 1 << 20)["spectrum"] == pytest.approx(expected) and expected > 600
    rows = generate(HDF5, path, data, layout, gzip, WriteCase({"repeats": 2}), limits=planned)
    assert len(rows) == 2 and not any(r["stopped"] for r in rows) and rows[0]["limit_s"] == LIMIT_FLOOR_S
    assert rows[-1]["query_file_method"] == "write-case"


def test_gzip_chunks_are_what_zlib_makes_of_each_padded_chunk(tmp_path, data):
    layout = Layout((5, 3, 700))
    path, _ = make_file(tmp_path, data, layout, "gzip-4")
    with h5py.File(path, "r") as f:
        dset = f["data"]
        _, stored = dset.id.read_direct_chunk((10, 9, 3500))  # an edge chunk in every axis
    chunk = np.zeros(layout.chunk_shape, np.uint16)
    edge = data[10:15, 9:12, 3500:4200]
    chunk[: edge.shape[0], : edge.shape[1], : edge.shape[2]] = edge
    assert zlib.decompress(stored) == chunk.tobytes()


def test_every_layout_is_queried_with_the_same_selections(tmp_path, data, source):
    cases = read_cases_from_config(CASES, SHAPE)
    seen = []
    for layout, comp in [(Layout(None), "none"), (Layout((4, 4, 512)), "gzip-1"), (Layout((1, 1, 64)), "none")]:
        path, _ = make_file(tmp_path, data, layout, comp)
        rows = read_cases(HDF5, path, cases, SHAPE, 42, source, layout)
        seen.append([(r["case"], r["selection"]) for r in rows])
        assert len(rows) == 12
    assert seen[0] == seen[1] == seen[2]


def test_a_flipped_value_fails_the_query_with_a_clear_message(tmp_path, data, source):
    layout = Layout((4, 4, 512))
    path, _ = make_file(tmp_path, data, layout)
    case = read_cases_from_config({"subcube": {"repeats": 3, "size": list(SHAPE)}}, SHAPE)[0]  # all of it
    with h5py.File(path, "r+") as f:
        f["data"][3, 2, 1234] += 1
    with pytest.raises(VerificationError, match=r"case subcube repeat 0 \[0:12, 0:10, 0:4000\]: 1 of 480000 values"):
        read_selections(HDF5, path, case, case.selections(SHAPE, 0), source, layout)


@pytest.fixture
def disk_dir():
    """A directory on the checkout's own disk (not tmpfs), removed afterwards."""
    directory = Path(tempfile.mkdtemp(dir=Path(__file__).parent))
    from h5sweep.storage.filesystems import mount_info

    if mount_info(str(directory)).fs_type in ("tmpfs", "ramfs", "overlay"):
        directory.rmdir()
        pytest.skip("the checkout is not on a block device")
    yield directory
    for p in sorted(directory.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    directory.rmdir()


def test_cold_first_reads_the_device_once_then_sustains_from_caches(disk_dir, data, source):
    layout = Layout((4, 4, 512))
    path, _ = make_file(disk_dir, data, layout)
    with h5py.File(path, "r") as f:  # warm the whole file
        f["data"][...]
    case = read_cases_from_config({"slice": {"repeats": 3, "cold": "first"}}, SHAPE)[0]
    same = [case.selections(SHAPE, 0)[0]] * 3  # the same nine chunks three times
    rows = read_selections(HDF5, path, case, same, source, layout, cold="first")
    assert rows[0]["resident_fraction_at_open"] < 0.01 and rows[0]["cache_state"] == "cold"
    assert rows[0]["device_read_bytes"] >= rows[0]["stored_bytes_touched"] * 0.9
    assert rows[0]["library_read_bytes"] >= rows[0]["stored_bytes_touched"]
    assert rows[0]["open_s"] > 0 and np.isnan(rows[1]["open_s"])
    # the chunks stay in HDF5's chunk cache (9 x 16 KiB < 1 MiB): no read reaches the file
    for row in rows[1:]:
        assert (row["cache_state"], row["device_read_bytes"], row["library_read_bytes"], row["read_calls"]) == (
            "warm",
            0,
            0,
            0,
        )
    assert [r["reads_since_open"] for r in rows] == [0, 1, 2]


def test_cold_every_evicts_and_reopens_before_each_read(disk_dir, data, source):
    layout = Layout((4, 4, 512))
    path, _ = make_file(disk_dir, data, layout)
    case = read_cases_from_config({"slice": {"repeats": 3}}, SHAPE)[0]
    assert case.cold_modes == ["every"]  # the default
    pagecache.evict(path)
    assert pagecache.resident_fraction(path) == 0
    rows = read_selections(HDF5, path, case, [case.selections(SHAPE, 0)[0]] * 3, source, layout, cold="every")
    # primed before the first eviction: it freed the whole store, as later ones free what the
    # read before pulled in
    assert rows[0]["resident_fraction_before_evict"] == 1.0
    for row in rows:
        assert row["cache_state"] == "cold" and row["resident_fraction_at_open"] < 0.01
        assert row["resident_fraction_before_evict"] > 0.01
        assert row["device_read_bytes"] >= row["stored_bytes_touched"] * 0.9
        assert row["reads_since_open"] == 0 and row["open_s"] > 0 and row["cold_mode"] == "every"
    # the three reads were one timed window (one batch of values to check)
    assert len({(r["window_opened_at"], r["window_closed_at"]) for r in rows}) == 1
    assert rows[0]["window_opened_at"] <= rows[0]["window_closed_at"] and rows[0]["window_wait_s"] >= 0
    # the hypervisor's share of the window, from /proc/stat (0 on bare metal)
    stolen = rows[0]["window_steal_s"]
    assert 0 <= stolen <= (rows[0]["window_closed_at"] - rows[0]["window_opened_at"]) * os.cpu_count() + 0.02


def test_priming_reads_what_is_not_cached_and_nothing_else(disk_dir):
    path = os.path.join(disk_dir, "primed.bin")
    size = 3 * (8 << 20) + 12345  # more than one priming block, not a whole number of pages
    with open(path, "wb") as f:
        f.write(np.arange(size // 8 + 1, dtype=np.uint64).tobytes()[:size])
    empty = os.path.join(disk_dir, "empty.bin")
    open(empty, "wb").close()
    pagecache.evict(path)
    assert pagecache.resident_fraction(path) == 0
    assert pagecache.prime([path, empty]) == size
    assert pagecache.resident_fraction(path) == 1.0
    assert pagecache.prime([path, empty]) == 0  # wholly cached already


def test_priming_stops_at_its_memory_budget(disk_dir):
    # stores that together would not fit in memory are primed only as far as they fit
    sizes = (5 << 20, 3 << 20, 1 << 20)
    paths = []
    for k, size in enumerate(sizes):
        paths.append(os.path.join(disk_dir, f"budget-{k}.bin"))
        with open(paths[-1], "wb") as f:
            f.write(np.full(size, k + 1, dtype=np.uint8).tobytes())
        pagecache.evict(paths[-1])
    assert pagecache.prime(paths, budget_bytes=sizes[0] + sizes[1] + 10) == sizes[0] + sizes[1]
    assert [pagecache.resident_fraction(p) for p in paths] == [1.0, 1.0, 0.0]
    # the budget counts files already cached too, and nothing after the first that overflows it
    assert pagecache.prime(paths, budget_bytes=sizes[0]) == 0
    assert pagecache.resident_fraction(paths[2]) == 0.0
    # by default half of the memory the kernel reports available: these few MiB fit
    assert 0 < pagecache.memory_available() <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert pagecache.prime(paths) == sizes[2]
    assert pagecache.resident_fraction(paths[2]) == 1.0


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this machine")
def test_tmpfs_cannot_be_evicted_and_the_record_says_so(data, source):
    directory = tempfile.mkdtemp(dir="/dev/shm")
    try:
        layout = Layout((4, 4, 512))
        path, _ = make_file(directory, data, layout)
        case = read_cases_from_config({"slice": {"repeats": 2}}, SHAPE)[0]
        rows = read_selections(HDF5, path, case, case.selections(SHAPE, 0), source, layout, cold="every")
        assert all(r["cache_state"] == "memory" and r["resident_fraction_at_open"] > 0.99 for r in rows)
        assert pagecache.prime([path]) == 0  # tmpfs files are always wholly in memory: nothing to read
        assert rows[0]["device_read_bytes"] == 0
    finally:
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
        os.rmdir(directory)


def test_a_corrupt_chunk_fails_naming_file_case_repeat_and_selection(tmp_path, data, source):
    layout = Layout((4, 4, 512))
    path, _ = make_file(tmp_path, data, layout, "gzip-4")
    with h5py.File(path, "r") as f:
        info = f["data"].id.get_chunk_info_by_coord((0, 0, 0))
    with open(path, "r+b") as f:  # overwrite the middle of the first chunk's deflate stream
        f.seek(info.byte_offset + info.size // 2)
        f.write(b"\xff" * 16)
    case = read_cases_from_config({"subcube": {"repeats": 2, "size": [2, 2, 10]}}, SHAPE)[0]
    origin = Selection((0, 0, 0), (2, 2, 10))
    with pytest.raises(VerificationError, match=r"case subcube repeat 0 \[0:2, 0:2, 0:10\]: HDF5 could not read"):
        read_selections(HDF5, path, case, [origin], source, layout)


def test_h5py_call_overhead_is_measured_apart_from_the_timed_read(tmp_path, data, source):
    path, _ = make_file(tmp_path, data, Layout((4, 4, 512)))
    cases = read_cases_from_config({"subcube": {"repeats": 2, "size": [1, 1, 1]}}, SHAPE)
    rows = read_cases(HDF5, path, cases, SHAPE, 0, source, Layout((4, 4, 512)))
    overheads = {r["h5py_call_overhead_s"] for r in rows}
    assert len(overheads) == 1 and 0 < overheads.pop() < 1e-3  # one figure per file, microseconds


def test_chunk_cache_thrashing_shows_in_the_bytes_hdf5_reads_again(tmp_path, data, source):
    """Consecutive 25-slice slabs inside one z-chunk: a cache that holds the slab's chunks
    reads them from the file once; the default 1 MiB cannot hold them and re-reads them for
    every slab."""
    layout = Layout((4, 4, 512))
    path, _ = make_file(tmp_path, data, layout, "gzip-1")
    case = read_cases_from_config({"slice": {"repeats": 8, "cold": "first"}}, SHAPE)[0]
    slabs = case.selections(SHAPE, 0, "sweep", layout.chunk_shape)
    read = {}
    for cache in (ChunkCache(16 * 1024, 521, 0.75), ChunkCache(64 * 2**20, 521, 0.75)):
        rows = read_selections(HDF5, path, case, slabs, source, layout, cache, cold="first")
        read[cache.nbytes] = sum(r["library_read_bytes"] for r in rows[1:])
    assert read[64 * 2**20] == 0  # after the first slab, every chunk comes from the cache
    assert read[16 * 1024] > 0


def test_a_timed_reads_buffer_is_faulted_in_before_the_clock():
    """A new array's pages are mapped at their first write: a buffer from ``touched_empty``
    takes no page fault when a read writes into it, a bare ``np.empty`` takes one per page
    (or per huge page)."""

    def faults_while_writing(buffer):
        before = minor_faults()
        buffer.fill(7)
        return minor_faults() - before

    # 64 MiB: above malloc's largest mmap threshold (32 MiB), so new pages every time; at
    # least one fault per 2 MiB even where the kernel maps huge pages
    size = 64 * 2**20
    assert faults_while_writing(np.empty(size, dtype=np.uint8)) >= size // 2**21
    assert faults_while_writing(touched_empty(size, np.uint8)) == 0


def test_page_faults_count_what_the_library_maps_on_the_clock(tmp_path):
    """``page_faults``: pages mapped during the timed read only. Inflating a chunk larger
    than malloc's largest mmap threshold (32 MiB) maps new pages in every read; a contiguous
    read into the pre-touched buffer maps none (the copy of the values after it is not counted)."""
    shape = (64, 64, 5120)  # one 42 MB chunk
    source = SyntheticSource(shape, np.uint16, seed=3)
    data = source.materialize()
    (case,) = read_cases_from_config({"spectra": {"repeats": 3, "size": 2}}, shape)
    selections = case.selections(shape, 0)
    faults = {}
    for layout, compression in [(Layout(shape), "gzip-1"), (Layout(None), "none")]:
        path = os.path.join(tmp_path, f"{layout.id}.h5")
        generate(HDF5, path, data, layout, parse_compression(compression), WriteCase({"repeats": 1}))
        rows = read_selections(HDF5, path, case, selections, source, layout, evict=False, cold="first")
        faults[compression] = [r["page_faults"] for r in rows]
        os.remove(path)
    assert all(n >= 42_000_000 // 2**21 for n in faults["gzip-1"]), faults
    assert sorted(faults["none"])[1] == 0, faults  # the median of three


def test_the_call_overhead_reads_a_chunk_larger_than_the_default_cache_once(tmp_path):
    """h5py's per-call overhead is timed on one-element reads: through a cache that holds the
    element's chunk, so 400 calls read the 42 MB gzip chunk from the file once, not each time."""
    from h5sweep.backends.hdf5 import call_overhead_s

    shape = (64, 64, 5120)
    path = str(tmp_path / "one-chunk.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset(
            "data",
            data=SyntheticSource(shape, np.uint16, seed=3).materialize(),
            chunks=shape,
            compression="gzip",
            compression_opts=1,
        )
    stored = os.path.getsize(path)

    def read_bytes() -> int:
        return int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"])

    before = read_bytes()
    assert call_overhead_s(path, calls=200) >= 0
    assert stored < read_bytes() - before < 2 * stored
