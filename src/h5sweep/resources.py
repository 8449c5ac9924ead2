"""Resources a job needs, computed from the config (used by local runs and cluster profiles)."""

from __future__ import annotations

import math

MB = 1_000_000


def generate_mem_mb(sweep, attempt: int = 1) -> int:
    """The whole cube in memory plus the slab temporaries of the data source; more on retry."""
    need = sweep.raw_bytes + 64 * MB + 256 * MB
    return math.ceil(need / MB * (1 + 0.5 * (attempt - 1)))


def query_mem_mb(sweep, attempt: int = 1) -> int:
    """Two copies of the largest selection (buffer and expected values) plus the chunk cache."""
    largest = max((math.prod(c.size(sweep.shape)) for c in sweep.read_cases), default=0) * sweep.dtype.itemsize
    need = 3 * largest + 256 * MB
    return math.ceil(need / MB * (1 + 0.5 * (attempt - 1)))


# Deliberately pessimistic rates (a slow shared filesystem, gzip at a high level): a job
# that is given too little time is killed and resubmitted, which costs more than waiting.
WRITE_BYTES_PER_S = {"none": 40 * MB, "filtered": 8 * MB}
READ_BYTES_PER_S = 20 * MB
SECONDS_PER_CHUNK = 50e-6
MIN_RUNTIME_MIN = 5


def _minutes(seconds: float, attempt: int) -> int:
    return max(MIN_RUNTIME_MIN, math.ceil(2 * seconds / 60)) * attempt


def generate_runtime_min(sweep, layout, compression, attempt: int = 1) -> int:
    """Computing the data once, then writing it ``repeats`` times."""
    rate = WRITE_BYTES_PER_S["none" if compression.is_none else "filtered"]
    allocated = layout.allocated_elements(sweep.shape) * sweep.dtype.itemsize
    per_write = allocated / rate + layout.n_chunks(sweep.shape) * SECONDS_PER_CHUNK
    make_data = sweep.raw_bytes / (50 * MB)
    return _minutes(make_data + sweep.write_case.repeats * per_write, attempt)


def query_runtime_min(sweep, layout, compression, attempt: int = 1) -> int:
    """Every selection of every case, reading (and decompressing) all chunks it touches."""
    itemsize = sweep.dtype.itemsize
    seconds = 0.0
    for case in sweep.read_cases:
        size = case.size(sweep.shape)
        start = tuple(0 for _ in size)
        if layout.chunk_shape is None:
            touched_bytes, chunks = math.prod(size) * itemsize, 0
        else:
            chunks = layout.chunks_touched(start, size)
            touched_bytes = chunks * layout.chunk_bytes(itemsize)
        # reading it, plus checking it against the data source
        per_selection = touched_bytes / READ_BYTES_PER_S + chunks * SECONDS_PER_CHUNK + math.prod(size) * 5e-8
        seconds += case.repeats * per_selection
    return _minutes(seconds, attempt)
