"""Case 1, m/z slices: ``[:, :, z0:z0+depth]``, full images over a short mass range."""

from h5sweep.cases.base import ReadCase


class SliceCase(ReadCase):
    name = "slice"
    description = "consecutive full z-slices (ion images)"

    def size(self, shape):
        return (shape[0], shape[1], int(self.settings.get("depth", 25)))
