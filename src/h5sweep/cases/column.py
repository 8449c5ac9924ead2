"""One channel over the whole recording, ``[:, c]`` of a 2-D ``[time, channels]`` dataset
(the neuroscience study's "column" access: the one that touches every chunk along time)."""

from h5sweep.cases.base import ReadCase


class ColumnCase(ReadCase):
    name = "column"
    description = "one channel over all time steps"
    ranks = (2,)

    def size(self, shape):
        return (shape[0], int(self.settings.get("size", 1)))
