"""The read-amplification figure names every point it draws: a number beside each, the
numbers' stores in a key."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from h5sweep.report import stores  # noqa: E402


def test_every_point_of_the_amplification_figure_is_numbered_and_its_store_in_the_key(monkeypatch):
    rows = []
    for k, (layout, comp) in enumerate(
        [("chunked-4x4x256", "none"), ("chunked-4x4x256", "gzip-4"), ("contiguous", "none")]
    ):
        chunk = layout.removeprefix("chunked-") if layout != "contiguous" else ""
        for case in ("slice", "spectra"):
            rows.append(
                {
                    "filesystem": "disk", "case": case, "backend": "hdf5", "cache_state": "cold",
                    "layout": "chunked" if chunk else "contiguous", "layout_id": layout, "chunk_shape": chunk,
                    "shard_shape": "", "page_size": 0, "layout_name": "", "order": "xyz", "compression": comp,
                    "stored_bytes_touched_median": 1e6 * (k + 1), "bytes_selected": 5e5,
                    "device_read_bytes_median": 2e6 * (k + 1),
                }
            )  # fmt: skip
    figures = []
    monkeypatch.setattr(stores, "_save", lambda fig, out: (fig.canvas.draw(), figures.append(fig)))
    stores.plot_amplification(pd.DataFrame(rows), "disk", "unused.png")
    [fig] = figures
    key = fig.axes[1].texts[-1].get_text().splitlines()
    assert key == [" 1 4x4x256", " 2 4x4x256 gzip-4", " 3 contiguous"]
    for ax in fig.axes:
        points = sum(len(c.get_offsets()) for c in ax.collections)
        numbers = sorted(t.get_text() for t in ax.texts if t.get_text().strip().isdigit())
        assert points == 3 and numbers == ["1", "2", "3"]
