"""A program's recorded reads, replayed (``cases.trace: {file: reads.jsonl}``): the selections
an analysis program read through h5py or zarr-python (:mod:`h5sweep.storage.trace`), in its order, on
every layout, cold or sustained as configured. Its reads are the mix the recommendation ranks
by: by default one unit of work is the whole recording, so the mix time is the replay's total
time."""

from __future__ import annotations

import hashlib
from pathlib import Path

from h5sweep.kit.read import RACE_SETTING, ReadCase, cold_setting
from h5sweep.storage import trace
from h5sweep.storage.declared import Block, Setting
from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Shape
from h5sweep.storage.selections import Selection


class TraceCase(ReadCase):
    name = "trace"
    description = "a program's recorded reads, replayed in their order"
    ranks = None
    SETTINGS = Block(
        "trace",
        "A program's recorded reads (h5sweep trace run -o reads.jsonl -- python my_analysis.py), "
        "replayed in their order on every layout; selections outside dataset.shape, or not boxes, are "
        "refused naming the read. Unless recommend.weights is set, one unit of work is the whole "
        "recording: the recommendation ranks by the replay's total time.",
        (
            Setting("file", "string", "", "The recording (JSON lines, h5sweep.storage.trace's format)."),
            Setting(
                "dataset",
                ["string", "null"],
                None,
                "The dataset or array whose reads are replayed (as recorded, e.g. /data); needed where "
                "the recording read several.",
            ),
            RACE_SETTING,
            cold_setting(
                "first",
                "first (the store evicted and opened once, then every recorded read: the program's own "
                "sustained reading; the default) or every (each read a first access).",
            ),
            Setting(
                "digest", "string", "", "Set by h5sweep: the recording's SHA-256 (a new recording reruns the jobs)."
            ),
        ),
        required=("file",),
    )

    def __init__(self, settings: dict):
        super().__init__(settings)
        self.path = str(self.settings["file"])
        self.dataset = self.settings["dataset"]
        self.reads = self._load()
        self.repeats = len(self.reads)
        self.default_weight = len(self.reads)  # one unit of work: the whole recording

    def _load(self) -> list[dict]:
        key = f"{self.key}.file"
        try:
            reads = trace.load(self.path)
        except (OSError, ValueError) as err:
            raise ConfigError(key, self.path, f"cannot be read as a recording: {err}") from err
        datasets = list(dict.fromkeys(r["dataset"] for r in reads))
        if self.dataset is not None:
            reads = [r for r in reads if r["dataset"] == self.dataset]
            if not reads:
                raise ConfigError(
                    f"{self.key}.dataset", self.dataset, f"has no reads (recorded: {', '.join(datasets)})"
                )
        elif len(datasets) > 1:
            raise ConfigError(
                f"{self.key}.dataset",
                None,
                f"the recording read {len(datasets)} datasets ({', '.join(datasets)}): name one",
            )
        if not reads:
            raise ConfigError(key, self.path, "records no reads")
        return reads

    def digest(self) -> str:
        """The recording's SHA-256 (in the job settings, so a new recording reruns the jobs)."""
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()

    def boxes(self) -> list[Selection]:
        return [
            Selection(tuple(a for a, _ in r["selection"]), tuple(b - a for a, b in r["selection"])) for r in self.reads
        ]

    def size(self, shape: Shape) -> Shape:
        """The largest box along each axis (what the plan and the job's memory reckon with)."""
        return tuple(max(box.size[axis] for box in self.boxes()) for axis in range(len(shape)))

    def check(self, shape: Shape) -> None:
        self.check_cold_modes()
        key = f"{self.key}.file"
        for r in self.reads:
            where = f"read {r['read']} ({r['library']} {r['dataset']}, index {r['index']})"
            if r["selection"] is None:
                raise ConfigError(
                    key, self.path, f"{where} is not a box (a step, a list or a mask): it cannot be replayed"
                )
            if len(r["selection"]) != len(shape):
                raise ConfigError(key, self.path, f"{where} has {len(r['selection'])} axes, dataset.shape {len(shape)}")
            for axis, ((start, stop), n) in enumerate(zip(r["selection"], shape, strict=True)):
                if not 0 <= start < stop <= n:
                    raise ConfigError(
                        key,
                        self.path,
                        f"{where} selects {start}:{stop} along axis {axis}, outside dataset.shape[{axis}]={n}",
                    )

    def selections(
        self, shape: Shape, seed: int, policy: str = "random", chunk: Shape | None = None
    ) -> list[Selection]:
        """The recorded boxes in the program's order, whatever the visiting policy."""
        return self.boxes()
