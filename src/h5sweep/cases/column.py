"""One channel over the whole recording, ``[:, c]`` of a 2-D ``[time, channels]`` dataset
(the neuroscience study's "column" access: the one that touches every chunk along time)."""

from h5sweep.kit.read import ReadCase, read_case_block
from h5sweep.storage.declared import Setting


class ColumnCase(ReadCase):
    name = "column"
    description = "one channel over all time steps"
    ranks = (2,)
    SETTINGS = read_case_block(
        "column",
        "[time, channels] datasets: [:, c:c+size], channels over all time steps, c random.",
        Setting("size", "integer", 1, "Channels per read.", {"minimum": 1}),
    )

    def size(self, shape):
        return (shape[0], int(self.settings["size"]))
