"""Sizes and durations as a reader says them, and sizes as a config gives them ("12 TB",
"800 GiB", or a number of bytes)."""

from __future__ import annotations

import math
import re

from h5sweep.storage.errors import ConfigError

UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}


def parse_size(key: str, value) -> int | None:
    """A size in bytes from a config value: a number of bytes, or a number and a unit (B, kB,
    MB, GB, TB, PB decimal; KiB to PiB binary); None stays None. A value that is neither is
    refused naming ``key``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(key, value, "must be a size: a number of bytes or a number and a unit, e.g. 12 TB")
    if isinstance(value, int | float):
        number, unit = float(value), "b"
    else:
        found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
        if not found:
            raise ConfigError(key, value, "must be a size: a number of bytes or a number and a unit, e.g. 12 TB")
        number, unit = float(found[1]), (found[2] or "b").lower()
        if unit not in UNITS:
            raise ConfigError(key, value, f"unknown unit {found[2]!r} (known: B, kB, MB, GB, TB, PB, KiB to PiB)")
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(key, value, "must be a positive size")
    return int(round(number * UNITS[unit]))


def binary_size(nbytes: int) -> str:
    """Bytes in binary units, as settings given in them read: ``8 MiB``, ``64 KiB``, ``512 B``."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def size(nbytes: float) -> str:
    """Bytes in decimal units, three significant digits: ``2.4 MB``, ``14 TB``."""
    if nbytes is None or not math.isfinite(nbytes):
        return ""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(nbytes) < 999.5 or unit == "PB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.3g} {unit}"
        nbytes /= 1000
    return ""


def duration(seconds: float) -> str:
    """A time in the unit that reads: µs, ms, s, min or h, three significant digits."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    a = abs(seconds)
    if a < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if a < 1:
        return f"{seconds * 1e3:.3g} ms"
    if a < 120:
        return f"{seconds:.3g} s"
    if a < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def duration_range(low: float, high: float) -> str:
    """An interval of times in the unit of its upper end: ``3.51-3.58 ms``."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    unit = duration(high).split(" ")[1]
    scale = {"µs": 1e6, "ms": 1e3, "s": 1, "min": 1 / 60, "h": 1 / 3600}[unit]
    return f"{low * scale:.3g}-{high * scale:.3g} {unit}"


def rate(nbytes: float, seconds: float) -> str:
    """Bytes per second in MB/s or GB/s (empty where either is unknown or zero)."""
    if not nbytes or not seconds or not (math.isfinite(nbytes) and math.isfinite(seconds)) or seconds <= 0:
        return ""
    per_s = nbytes / seconds
    return f"{per_s / 1e9:.3g} GB/s" if per_s >= 1e9 else f"{per_s / 1e6:.3g} MB/s"


def factor(x: float) -> str:
    """A ratio as a reader says it: ``1.15x``, ``230x``; never ``0.00x`` (``<0.01x``)."""
    if x is None or not math.isfinite(x):
        return ""
    if 0 < abs(x) < 0.01:
        return "<0.01x"
    return f"{x:,.0f}x" if abs(x) >= 1000 else f"{x:.3g}x"


def count(x: float) -> str:
    """A counted amount as a reader says it: ``7``, ``27.8``, ``10,009`` (never ``1e+04``)."""
    if x is None or not math.isfinite(x):
        return ""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"
