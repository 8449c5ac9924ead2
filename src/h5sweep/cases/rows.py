"""A block of consecutive time steps of every channel, ``[t0:t0+size, :]`` of a 2-D
``[time, channels]`` dataset: reading a stretch of a recording (the neuroscience study's
"row" access)."""

from h5sweep.cases.base import ReadCase


class RowsCase(ReadCase):
    name = "rows"
    description = "a block of time steps, every channel"
    ranks = (2,)

    def size(self, shape):
        return (int(self.settings.get("size", 1000)), shape[1])
