"""A block of consecutive time steps of every channel, ``[t0:t0+size, :]`` of a 2-D
``[time, channels]`` dataset: reading a stretch of a recording (the neuroscience study's
"row" access)."""

from h5sweep.kit.read import ReadCase, read_case_block
from h5sweep.storage.declared import Setting


class RowsCase(ReadCase):
    name = "rows"
    description = "a block of time steps, every channel"
    ranks = (2,)
    SETTINGS = read_case_block(
        "rows",
        "[time, channels] datasets: [t0:t0+size, :], a block of time steps of every channel, t0 random.",
        Setting("size", "integer", 1000, "Time steps per read.", {"minimum": 1}),
    )

    def size(self, shape):
        return (int(self.settings["size"]), shape[1])
