"""Case 3, subcube: ``[x0:.., y0:.., z0:..]``, a small box of spectra over a mass range."""

from h5sweep.kit.read import ReadCase, read_case_block
from h5sweep.storage.declared import Setting


class SubcubeCase(ReadCase):
    name = "subcube"
    description = "a 3-D box"
    SETTINGS = read_case_block(
        "subcube",
        "Case 3: a box of the given size at a random position.",
        Setting(
            "size",
            "array",
            [5, 5, 1000],
            "Box size [x, y, z].",
            {"items": {"type": "integer"}, "minItems": 3, "maxItems": 3},
        ),
    )

    def size(self, shape):
        return tuple(int(v) for v in self.settings["size"])
