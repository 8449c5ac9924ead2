"""Case 4, write: the whole dataset written with the chunk-at-a-time strategy, timed.

Each repeat regenerates the file (fsync included in the time); the last one is kept and
queried by the read cases.
"""

from __future__ import annotations

from h5sweep.errors import ConfigError


class WriteCase:
    name = "write"
    description = "write the whole dataset, one chunk (contiguous: one x-slab) per call"

    def __init__(self, settings: dict):
        self.settings = dict(settings)
        self.repeats = int(self.settings.get("repeats", 1))
        if self.repeats < 1:
            raise ConfigError("cases.write.repeats", self.repeats, "must be at least 1")
