"""The whole dataset in one read (any rank): the neuroscience study's first access pattern,
and the upper bound of every other read."""

from h5sweep.kit.read import ReadCase, read_case_block, repeats_setting


class WholeCase(ReadCase):
    name = "whole"
    description = "the whole dataset in one read"
    ranks = None
    SETTINGS = read_case_block(
        "whole",
        "The whole dataset in one read (any rank; the neuroscience study's whole-array read).",
        repeats=repeats_setting(3, "Reads per file."),
    )

    def size(self, shape):
        return tuple(shape)
