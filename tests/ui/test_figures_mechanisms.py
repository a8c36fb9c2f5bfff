"""Pure figure functions of the Mechanisms page (ui.figures.mechanisms): data in, traces out."""

from __future__ import annotations

import numpy as np
import pytest

from ui.figures import mechanisms as fm
from ui.figures.theme import COLORS, MECHANISM_COLORS


def test_display_rows_is_deterministic_and_bounded():
    rows = fm.display_rows(10_000, 2000)
    assert rows.size == 2000 and rows[0] == 0 and rows[-1] == 9999
    assert np.all(np.diff(rows) > 0)
    assert fm.display_rows(5, 2000).tolist() == [0, 1, 2, 3, 4]


def test_original_vs_private_plots_the_chosen_columns_of_the_same_rows():
    x = np.arange(12.0).reshape(4, 3) / 20
    x_priv = x + 1.0
    fig = fm.original_vs_private_figure(x, x_priv, ["a", "b", "c"], 0, 2)
    private, original = fig.data  # the release is drawn first so that the original stays visible on top
    assert list(original.x) == pytest.approx(x[:, 0].tolist())
    assert list(original.y) == pytest.approx(x[:, 2].tolist())
    assert list(private.x) == pytest.approx(x_priv[:, 0].tolist())
    assert list(private.customdata) == [0, 1, 2, 3]
    assert original.marker.color == COLORS["original"] and private.marker.color == COLORS["private"]
    assert "a (prepared scale)" == fig.layout.xaxis.title.text


def test_original_vs_private_subsamples_large_data_and_says_so():
    x = np.zeros((5000, 2))
    fig = fm.original_vs_private_figure(x, x, ["a", "b"], 0, 1, max_points=100)
    assert len(fig.data[0].x) == 100
    assert fig.layout.title.subtitle.text == "100 of 5,000 rows shown"


def test_noise_by_coordinate_bars_and_reference_lines():
    fig = fm.noise_by_coordinate_figure(["a", "b"], [1.2, 1.4], reported_sd=1.37, comparison_sd={"Gaussian": 0.26})
    (bar,) = fig.data
    assert list(bar.x) == ["a", "b"] and list(bar.y) == [1.2, 1.4]
    lines = sorted(shape.y0 for shape in fig.layout.shapes)
    assert lines == [0.26, 1.37]


def test_noise_by_coordinate_without_reported_noise_draws_no_line():
    fig = fm.noise_by_coordinate_figure(["a"], [0.1], reported_sd=None)
    assert len(fig.layout.shapes) == 0


def test_comparison_figure_two_panels_in_mechanism_colours():
    fig = fm.comparison_figure(
        ["projection", "Gaussian"], ["projection", "gaussian"], [1.37, 0.2], [0.85, 0.9],
        utility_label="accuracy", nonprivate_utility=0.91,
    )
    noise, utility = fig.data
    assert list(noise.y) == [1.37, 0.2] and list(utility.y) == [0.85, 0.9]
    assert list(noise.marker.color) == [MECHANISM_COLORS["projection"], MECHANISM_COLORS["gaussian"]]
    assert noise.xaxis == "x" and utility.xaxis == "x2"
    assert [s.y0 for s in fig.layout.shapes] == [0.91]


def test_comparison_figure_drops_missing_values():
    fig = fm.comparison_figure(["k-anon"], ["mondrian"], [None], [float("nan")], utility_label="accuracy")
    assert list(fig.data[0].y) == [None] and list(fig.data[1].y) == [None]


def test_projected_columns_figure_colours_by_class_and_handles_k_1():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 3))
    labels = np.array([0, 1] * 25)
    fig = fm.projected_columns_figure(z, 0, 2, labels=labels)
    assert [t.name for t in fig.data] == ["outcome = 0", "outcome = 1"]
    np.testing.assert_allclose(fig.data[0].x, z[labels == 0, 0])
    np.testing.assert_allclose(fig.data[1].y, z[labels == 1, 2])
    assert fig.layout.xaxis.title.text == "projected column z1" and fig.layout.yaxis.title.text == "projected column z3"
    single = fm.projected_columns_figure(z[:, :1])
    assert len(single.data) == 1 and list(single.data[0].x[:3]) == [0.0, 1.0, 2.0]
    np.testing.assert_allclose(single.data[0].y, z[:, 0])


def test_distance_recovery_figure_diagonal_and_error_bars():
    fig = fm.distance_recovery_figure(np.array([0.5, 1.0, 2.0]), np.array([0.7, 0.8, 2.5]), np.array([0.1, 0.2, 0.3]),
                                      color=MECHANISM_COLORS["jl-laplace"])
    diagonal, pairs = fig.data
    assert list(diagonal.x) == [0.0, 2.0] and list(diagonal.y) == [0.0, 2.0]
    assert list(pairs.y) == [0.7, 0.8, 2.5] and list(pairs.error_y.array) == [0.1, 0.2, 0.3]
    assert pairs.marker.color == MECHANISM_COLORS["jl-laplace"] == "#CC79A7"  # the JL release's colour, as before
