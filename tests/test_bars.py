"""The per-case figures (bars and stats) say how many reads each store rests on: one n where
every store read as many, else the range, each store that read fewer with its own n."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from h5sweep.report import bars  # noqa: E402


def summary(repeats: dict[str, int]) -> pd.DataFrame:
    rows = []
    for k, (layout, n) in enumerate(repeats.items()):
        chunk = "" if layout == "contiguous" else layout.removeprefix("chunked-")
        t = 0.01 * (k + 1)
        rows.append(
            {
                "filesystem": "disk",
                "case": "slice",
                "backend": "hdf5",
                "layout": "contiguous" if not chunk else "chunked",
                "layout_id": layout,
                "chunk_shape": chunk,
                "shard_shape": "",
                "page_size": 0,
                "layout_name": "",
                "order": "xyz",
                "compression": "none",
                "variant": "",
                "cache_state": "cold",
                "repeats": n,
                "min_s": t / 2,
                "median_s": t,
                "mean_s": t,
                "max_s": 2 * t,
                "median_ci_low_s": t * 0.9,
                "median_ci_high_s": t * 1.1,
                "ratio_to_contiguous": k + 1.0,
                "ratio_ci_low": k + 0.9,
                "ratio_ci_high": k + 1.1,
                "bytes_selected": 500_000,
            }
        )
    return pd.DataFrame(rows)


def drawn(monkeypatch, plot, table):
    figures = []
    monkeypatch.setattr(bars, "_save", lambda fig, out: (fig.canvas.draw(), figures.append(fig)))
    plot(table, "slice", "disk", "unused.png")
    return figures[0]


def test_a_figure_of_stores_that_read_as_many_gives_one_n(monkeypatch):
    for plot in (bars.plot_case_bars, bars.plot_stats):
        fig = drawn(monkeypatch, plot, summary({"contiguous": 15, "chunked-4x4x256": 15}))
        assert "n = 15 reads per layout" in fig._suptitle.get_text()
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert not any("(n=" in label for label in labels)
        plt.close(fig)


def test_stores_that_read_fewer_carry_their_own_n_and_the_title_the_range(monkeypatch):
    table = summary({"contiguous": 15, "chunked-4x4x256": 3, "chunked-16x16x256": 15})
    for plot in (bars.plot_case_bars, bars.plot_stats):
        fig = drawn(monkeypatch, plot, table)
        assert "n = 3-15 reads per layout" in fig._suptitle.get_text()
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert "4x4x256 (n=3)" in labels and "16x16x256" in labels and "contiguous" in labels
        plt.close(fig)


def test_the_ratio_panel_shows_the_ratio_of_means_the_ranking_scores_beside_the_median_of_pairs(monkeypatch):
    """A skewed case (a trace's boxes of many sizes): the median of the paired ratios and the
    ratio of mean times can differ tenfold; both are drawn, so the figure and the ranking agree."""
    table = summary({"contiguous": 15, "chunked-4x4x256": 15})
    table.loc[0, ["ratio_ci_low", "ratio_ci_high"]] = 1.0  # the reference, as the summary has it
    table.loc[1, "mean_s"] = table.loc[0, "mean_s"] * 9.8  # the median ratio is 2 (k + 1)
    fig = drawn(monkeypatch, bars.plot_case_bars, table)
    ratio_ax = fig.axes[1]
    [means] = [line for line in ratio_ax.get_lines() if line.get_label().startswith("ratio of mean times")]
    assert sorted(means.get_xdata()) == [1.0, pytest.approx(9.8)]
    assert "ratio of means" in ratio_ax.get_xlabel()
