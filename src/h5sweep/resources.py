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
