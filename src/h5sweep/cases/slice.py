"""Case 1, m/z slices: ``[:, :, z0:z0+depth]``, full images over a short mass range."""

from h5sweep.kit.read import ReadCase, read_case_block
from h5sweep.storage.declared import Setting


class SliceCase(ReadCase):
    name = "slice"
    description = "consecutive full z-slices (ion images)"
    SETTINGS = read_case_block(
        "slice",
        "Case 1: [:, :, z0:z0+depth], z0 random.",
        Setting("depth", "integer", 25, "Number of consecutive z-slices."),
    )

    def size(self, shape):
        return (shape[0], shape[1], int(self.settings["depth"]))
