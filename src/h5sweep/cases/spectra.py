"""Case 2, spectra: ``[x0:x0+size, y0:y0+size, :]``, a square of full spectra."""

from h5sweep.kit.read import ReadCase, read_case_block
from h5sweep.storage.declared import Setting


class SpectraCase(ReadCase):
    name = "spectra"
    description = "a square of full spectra"
    SETTINGS = read_case_block(
        "spectra",
        "Case 2: [x0:x0+size, y0:y0+size, :], x0 and y0 random.",
        Setting("size", "integer", 5, "Side of the square of spectra."),
    )

    def size(self, shape):
        side = int(self.settings["size"])
        return (side, side, shape[2])
