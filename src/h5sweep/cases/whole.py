"""The whole dataset in one read (any rank): the neuroscience study's first access pattern,
and the upper bound of every other read."""

from h5sweep.cases.base import ReadCase


class WholeCase(ReadCase):
    name = "whole"
    description = "the whole dataset in one read"
    ranks = None

    def __init__(self, settings: dict):
        super().__init__({"repeats": 3, **settings})

    def size(self, shape):
        return tuple(shape)
