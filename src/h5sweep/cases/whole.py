"""The whole dataset in one read (any rank): the neuroscience study's first access pattern,
and the upper bound of every other read."""

from h5sweep.cases.base import ReadCase
from h5sweep.storage import columns as C


class WholeCase(ReadCase):
    name = "whole"
    description = "the whole dataset in one read"
    ranks = None

    def __init__(self, settings: dict):
        super().__init__({C.REPEATS: 3, **settings})

    def size(self, shape):
        return tuple(shape)
