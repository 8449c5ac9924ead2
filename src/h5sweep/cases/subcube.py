"""Case 3, subcube: ``[x0:.., y0:.., z0:..]``, a small box of spectra over a mass range."""

from h5sweep.cases.base import ReadCase


class SubcubeCase(ReadCase):
    name = "subcube"
    description = "a 3-D box"

    def size(self, shape):
        return tuple(int(v) for v in self.settings.get("size", [5, 5, 1000]))
