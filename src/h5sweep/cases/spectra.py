"""Case 2, spectra: ``[x0:x0+size, y0:y0+size, :]``, a square of full spectra."""

from h5sweep.cases.base import ReadCase


class SpectraCase(ReadCase):
    name = "spectra"
    description = "a square of full spectra"

    def size(self, shape):
        side = int(self.settings.get("size", 5))
        return (side, side, shape[2])
