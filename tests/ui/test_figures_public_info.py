"""Figures of the Public information page: pure functions whose drawn numbers are the engine's."""

from __future__ import annotations

import numpy as np
import pytest

from engine.public_info.count_table import counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study
from engine.public_info.sensitivity import correlated_counts_grid
from engine.rng import make_rng
from ui.figures import public_info as figs


@pytest.fixture(scope="module")
def study():
    table = counties_demo(regions=8, periods=4)
    cfg = CountStudyConfig(methods=("postprocess", "wasserstein-congenial"), epsilons=(0.5, 2.0), replicates=6)
    return build_count_study(table, cfg, rng=make_rng(3))


def test_caption_names_every_guarantee_and_the_seed(study):
    text = figs.guarantee_caption(study, seeded=True)
    for cell in study.cells:
        assert cell.guarantee.headline() in text
    assert text.endswith("simulation — not private (seeded)")
    assert "not private" not in figs.guarantee_caption(study, seeded=False)
    only = figs.guarantee_caption(study, seeded=False, epsilon=2.0)
    assert "ε = 2 " in only and "ε = 0.5 " not in only


def test_release_boxplots_hold_the_released_counts_and_the_truth(study):
    region = study.regions[1]
    fig = figs.release_boxplots(study, region, 2.0, "CAPTION")
    boxes = [t for t in fig.data if t.type == "box"]
    cells = [c for c in study.cells if c.epsilon == 2.0]
    assert [b.name for b in boxes] == [c.label for c in cells]
    for box, cell in zip(boxes, cells, strict=True):
        np.testing.assert_array_equal(np.asarray(box.y), cell.released[:, 1, :].ravel())
        assert list(box.x[: len(study.periods)]) == list(study.periods)
    truth = fig.data[-1]
    np.testing.assert_array_equal(np.asarray(truth.y), study.truth[1])
    assert "CAPTION" in fig.layout.title.text and region in fig.layout.title.text
    two = figs.release_boxplots(study, region, 2.0, "first; second")
    assert two.layout.title.text.endswith("<sup>first</sup><br><sup>second</sup>")
    rates = figs.release_boxplots(study, region, 2.0, "C", rates=True)
    np.testing.assert_allclose(np.asarray(rates.data[0].y), cells[0].released_rates[:, 1, :].ravel())


def test_error_boxes_are_the_quantiles_of_the_relative_errors(study):
    fig = figs.error_distribution(study, "C")
    assert [t.name for t in fig.data] == ["post-processing", "Wasserstein (congenial)"]
    for trace in fig.data:
        cells = [c for c in study.cells if c.label == trace.name]
        for i, cell in enumerate(cells):
            q = np.quantile(cell.relative_error, [0.05, 0.25, 0.5, 0.75, 0.95])
            got = [trace.lowerfence[i], trace.q1[i], trace.median[i], trace.q3[i], trace.upperfence[i]]
            np.testing.assert_allclose(got, q, rtol=1e-12)
            assert cell.error_quantiles["median"] == pytest.approx(trace.median[i], rel=1e-12)
    assert fig.layout.yaxis.rangemode == "tozero"


def test_contraction_bars_show_the_engines_frequencies(study):
    fig = figs.contraction_bars(study, "C")
    panels = [a.text for a in fig.layout.annotations]
    assert panels == [figs.EFFECT_LABELS[e] for e in ("CaseZeros", "SubcountZeros", "ContractedRates")]
    bars = [t for t in fig.data if t.xaxis in ("x", None)]
    assert len(bars) == len(study.cells)
    for bar, cell in zip(bars, study.cells, strict=True):
        assert list(bar.x) == list(study.regions)
        assert list(bar.y) == [cell.contraction[r]["CaseZeros"] for r in study.regions]


def test_heatmap_is_the_exact_grid_blank_below_the_diagonal():
    z = np.linspace(0, 1, 6)
    grid = correlated_counts_grid(10, z, z)
    fig = figs.sensitivity_heatmap(z, grid, 10, marked=(0.2, 0.6), marked_value=int(grid[1, 3]))
    heat = fig.data[0]
    np.testing.assert_array_equal(np.asarray(heat.z), grid)
    assert np.isnan(np.asarray(heat.z, dtype=float)[3, 1])  # z0 = 0.6 > z1 = 0.2
    assert np.asarray(heat.z)[0, 5] == 10  # z0 = 0, z1 = 1: Δ_z = n
    assert (fig.data[1].x[0], fig.data[1].y[0]) == (0.6, 0.2)
    assert fig.data[1].text[0] == f"Δ_z = {int(grid[1, 3])}"


def test_posterior_figure_marks_exact_and_importance_means():
    fig = figs.posterior_draws(np.array([0.2, 0.3, 0.4]), 0.27848, 0.281, "ε-TP")
    assert fig.data[1].x == (0.27848, 0.27848) and "0.2785" in fig.data[1].name
    assert fig.data[2].x == (0.281, 0.281)
