"""The figure check (h5sweep.kit.figcheck): each defect it names, on figures drawn for it,
and that the suite's sweeps drew every kind of figure under it."""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from h5sweep.cases import FIGURES  # noqa: E402
from h5sweep.kit import figcheck  # noqa: E402
from h5sweep.kit.style import not_measured, save  # noqa: E402


def _checked(fig) -> list[str]:
    fig.tight_layout()
    try:
        return figcheck.defects(fig)
    finally:
        plt.close(fig)


def test_a_clean_figure_has_no_defect():
    fig, (ax_time, ax_bars) = plt.subplots(1, 2, figsize=(8, 3))
    ax_time.plot([1, 2, 3], [0.01, 0.5, 2.0], "o-", label="cold")
    ax_time.set_yscale("log")
    ax_time.legend()
    ax_bars.barh(np.arange(3), [1.0, 2.0, 3.0])
    ax_bars.set_yticks(np.arange(3), ["4x4x256", "16x16x256", "contiguous"])
    assert _checked(fig) == []


def test_an_empty_panel_is_named_and_a_panel_that_says_why_is_not():
    fig, (ax_data, ax_empty, ax_why) = plt.subplots(1, 3)
    ax_data.plot([1, 2], [1, 2])
    ax_empty.set_title("ranks 4")
    ax_empty.plot([1, 2], [np.nan, np.nan])  # a line with no finite point draws nothing
    not_measured(ax_why, "parallel")
    assert _checked(fig) == ["panel 2 ('ranks 4') is empty"]


def test_a_legend_entry_for_nothing_drawn_is_named():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], label="independent")
    ax.plot([1, 2], [np.nan, np.nan], label="collective")
    ax.scatter([], [], label="beyond the limits")
    ax.legend()
    found = _checked(fig)
    assert found == [
        "legend entry 'collective' has nothing drawn",
        "legend entry 'beyond the limits' has nothing drawn",
    ]


def test_text_past_the_edge_is_named_by_its_side():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2], [1, 2])
    fig.text(0.9, 0.5, "a label far too long to fit in the figure at all", fontsize=9)
    assert _checked(fig) == ["drawn past the figure's right edge"]


def test_a_linear_axis_over_a_wide_span_is_named_and_positions_are_not_values():
    fig, (ax_lines, ax_bars, ax_cats, ax_stack) = plt.subplots(1, 4, figsize=(12, 3))
    ax_stack.barh(np.arange(3), [0.05, 0.1, 0.2])  # stacked: the stacks' totals (1-1.2) are the values
    ax_stack.barh(np.arange(3), [0.95, 1.0, 1.0], left=[0.05, 0.1, 0.2])
    ax_lines.plot([1, 2, 3], [0.01, 0.02, 5.0])
    ax_bars.bar(np.arange(30), np.linspace(1, 2, 30))  # 30 positions, values within 2x: fine
    ax_cats.barh(np.arange(12), [0.1] * 11 + [3.0])  # one bar 30x the rest
    ax_cats.set_yticks(np.arange(12), [f"layout {i}" for i in range(12)])
    found = _checked(fig)
    assert found == [
        "panel 1: a linear y axis over values spanning 500x",
        "panel 3: a linear x axis over values spanning 30x",
    ]


def test_the_strict_check_refuses_a_defect_and_otherwise_only_says_it(tmp_path, monkeypatch, capsys):
    def empty():
        fig, axes = plt.subplots(1, 2)
        axes[0].plot([1, 2], [1, 2])
        fig.canvas.draw()
        return fig

    monkeypatch.setenv(figcheck.STRICT_ENV, "strict")
    with pytest.raises(figcheck.FigureDefect, match="panel 2 is empty"):
        figcheck.report(empty(), str(tmp_path / "strict.png"))
    monkeypatch.setenv(figcheck.STRICT_ENV, "")
    assert figcheck.report(empty(), str(tmp_path / "lenient.png")) == ["panel 2 is empty"]
    assert "figure lenient.png: panel 2 is empty" in capsys.readouterr().err


def test_saving_mends_what_measured_values_would_break(tmp_path, monkeypatch):
    """Whatever a sweep measured: a panel whose values were all missing says so, a series
    with nothing drawn leaves the legend, text past the edge is kept in the image."""
    import matplotlib.image

    monkeypatch.setenv(figcheck.STRICT_ENV, "strict")
    fig, (ax_data, ax_missing) = plt.subplots(1, 2, figsize=(4, 2))
    ax_data.plot([1, 2], [1, 2], label="cold")
    ax_data.plot([1, 2], [np.nan, np.nan], label="warm")
    ax_data.legend()
    ax_missing.set_title("write")
    ax_missing.plot([1, 2], [np.nan, np.nan])
    fig.text(0.9, 0.5, "a label far too long to fit in the figure at all")
    save(fig, str(tmp_path / "mended.png"))  # strict: no defect left
    assert [t.get_text() for t in ax_data.get_legend().get_texts()] == ["cold"]
    assert not ax_missing.axison and [t.get_text() for t in ax_missing.texts] == ["nothing measured to draw"]
    width = matplotlib.image.imread(tmp_path / "mended.png").shape[1]
    assert width > 4 * 110  # wider than the figure: the long label is not cut


@pytest.mark.serial  # after every other test (`make test` runs the serial ones last)
def test_the_suites_sweeps_drew_every_kind_of_figure_under_the_check():
    """Every kind of figure was drawn by some test sweep and passed the strict check (a
    defect fails the sweep's plot job): the kinds the plot jobs recorded in `make test`'s
    log (H5SWEEP_FIGURE_LOG)."""
    log = os.environ.get(figcheck.LOG_ENV)
    if not log or not Path(log).exists():
        if os.environ.get("CI"):
            pytest.fail(f"no log of the figures drawn ({figcheck.LOG_ENV}): run the suite with `make test`")
        pytest.skip("the kinds drawn are logged by `make test` only")
    drawn = {line.split("\t")[0] for line in Path(log).read_text().splitlines() if line}
    assert set(FIGURES) - drawn == set()


def test_a_panel_turned_off_without_words_is_blank_space_not_an_empty_panel():
    fig, (ax_data, ax_blank, ax_titled) = plt.subplots(1, 3)
    ax_data.plot([1, 2], [1, 2])
    ax_blank.set_axis_off()  # a grid's unused cell
    ax_titled.set_axis_off()
    ax_titled.set_title("no cold reads")
    assert _checked(fig) == ["panel 3 ('no cold reads') is empty"]


def test_saving_puts_a_wide_linear_axis_on_a_log_scale_whatever_the_values(tmp_path, monkeypatch):
    monkeypatch.setenv(figcheck.STRICT_ENV, "strict")
    fig, (ax_wide, ax_narrow) = plt.subplots(1, 2)
    ax_wide.plot([1, 2, 4, 8], [0.09, 0.5, 1.0, 1.9])  # a speed-up of 0.09 to 1.9: 21x
    ax_narrow.plot([1, 2, 4, 8], [0.9, 1.0, 1.4, 1.9])
    save(fig, str(tmp_path / "speed-up.png"))  # no defect raised
    assert (ax_wide.get_xscale(), ax_wide.get_yscale()) == ("linear", "log")
    assert (ax_narrow.get_xscale(), ax_narrow.get_yscale()) == ("linear", "linear")


def test_a_legend_rebuilt_without_an_undrawn_entry_stays_where_it_was_anchored(tmp_path):
    """A legend anchored beside its panel (bbox_to_anchor in the panel's fractions) and
    rebuilt without a series that drew nothing keeps its place at the resolution the figure
    is saved at: the image stays the figure's size, not thousands of inches."""
    import matplotlib.image

    fig, ax = plt.subplots(figsize=(4, 2))
    ax.bar([0, 1], [np.nan, np.nan], label="none")
    ax.bar([0, 1], [1, 2], label="contiguous")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, str(tmp_path / "legend.png"))
    height, width = matplotlib.image.imread(tmp_path / "legend.png").shape[:2]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["contiguous"]
    assert width < 6 * 200 and height < 3 * 200  # inches at the saved resolution, with the legend beside
