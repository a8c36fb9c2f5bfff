"""Pure figure functions of the Tradeoffs page (ui.figures.tradeoffs) and the sweep-summary adapter feeding them:
data in, traces out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ui.figures import tradeoffs as ft
from ui.figures.theme import COLORS, MECHANISM_COLORS


def _points() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point_id": ["p0", "p1", "p2", "g0", "g1"],
            "series": ["projection"] * 3 + ["Gaussian"] * 2,
            "kind": ["projection"] * 3 + ["gaussian"] * 2,
            "b": [0.5, 0.1, 2.0, 0.1, 2.0],
            "x": [0.4, 0.8, 0.2, 0.7, 0.3],
            "y": [0.88, 0.8, 0.9, 0.85, 0.9],
            "y_err": [0.01, 0.02, 0.0, 0.01, 0.01],
            "pareto": [False, True, True, True, False],
        }
    )


def test_tradeoff_figure_one_curve_per_series_sorted_by_b_with_ids():
    fig = ft.tradeoff_figure(
        _points(), x_label="singling-out protection", y_label="accuracy", title="t",
        markers=[ft.Marker("non-private", 0.0, 0.91, "nonprivate"), ft.Marker("classic DP", 0.9, 0.8, "classic_dp")],
        selected="p1",
    )
    names = [trace.name for trace in fig.data]
    assert names == ["Pareto frontier", "projection", "Gaussian", "selected configuration", "non-private", "classic DP"]
    front, proj, gauss, sel, nonpriv, dp = fig.data
    assert list(proj.x) == [0.8, 0.4, 0.2]  # sorted by B: 0.1, 0.5, 2
    assert [c[0] for c in proj.customdata] == ["p1", "p0", "p2"]
    assert [c[1] for c in proj.customdata] == [0.1, 0.5, 2.0]
    assert list(proj.error_y.array) == [0.02, 0.01, 0.0]
    assert proj.line.color == MECHANISM_COLORS["projection"] and gauss.line.color == MECHANISM_COLORS["gaussian"]
    assert list(front.x) == [0.2, 0.7, 0.8]  # Pareto points sorted by x
    assert list(sel.x) == [0.8] and list(sel.y) == [0.8]
    assert nonpriv.marker.color == COLORS["nonprivate"] and dp.marker.color == COLORS["classic_dp"]
    assert nonpriv.marker.symbol == "star"


def test_tradeoff_figure_skips_markers_without_values_and_missing_selection():
    fig = ft.tradeoff_figure(
        _points(), x_label="x", y_label="y", title="t", markers=[ft.Marker("DP", float("nan"), 0.5, "classic_dp")],
        selected="nope", show_pareto=False,
    )
    assert [trace.name for trace in fig.data] == ["projection", "Gaussian"]


def test_privacy_privacy_colours_by_log_b():
    fig = ft.privacy_privacy_figure(_points())
    proj = fig.data[0]
    assert list(proj.marker.color) == pytest.approx(np.log10([0.1, 0.5, 2.0]).tolist())
    assert proj.marker.showscale is True and fig.data[1].marker.showscale is False
    assert fig.data[0].marker.symbol != fig.data[1].marker.symbol


def test_comparison_bars_roles_pick_colours():
    fig = ft.comparison_bars_figure(
        ["non-private", "classic DP", "TDP B = 0.25"], [0.91, 0.85, 0.9],
        roles=["nonprivate", "classic_dp", "chosen"], errors=[None, 0.01, 0.005], y_label="accuracy",
    )
    (bar,) = fig.data
    assert list(bar.y) == [0.91, 0.85, 0.9]
    assert list(bar.marker.color) == [COLORS["nonprivate"], COLORS["classic_dp"], COLORS["candidate"]]
    assert list(bar.error_y.array) == [0.0, 0.01, 0.005]


def test_hypothesis_testing_figure_has_coin_flip_and_curves():
    alphas = [0.0, 0.5, 1.0]
    fig = ft.hypothesis_testing_figure(
        [("Gaussian", "gaussian", alphas, [0.9, 0.3, 0.0])], distance=2.0
    )
    diag, gauss = fig.data
    assert list(diag.x) == [0.0, 1.0] and list(diag.y) == [1.0, 0.0]
    assert list(gauss.y) == [0.9, 0.3, 0.0]
    assert gauss.line.color == MECHANISM_COLORS["gaussian"]


def test_points_frame_from_a_sweep_summary():
    from ui.figures.tradeoffs import points_frame

    summary = pd.DataFrame(
        {
            "point": [0, 1, 2],
            "reference": ["non-private", "tdp", "classic-dp"],
            "b": [np.nan, 0.25, 2.0],
            "epsilon1": [np.nan, 3.0, 3.0],
            "epsilon2": [np.nan, 0.9999, 0.9999],
            "epsilon": [np.nan, 3.9999, 3.9999],
            "delta": [np.nan, 2e-4, 2e-4],
            "implied_epsilon": [np.nan, 31.9992, 3.9999],
            "accuracy_mean": [0.9, 0.8, 0.7],
            "accuracy_lo": [0.9, 0.78, 0.69],
            "accuracy_hi": [0.9, 0.82, 0.71],
            "protection_singling_out_mean": [0.0, 0.5, 0.9],
            "protection_singling_out_lo": [0.0, 0.4, 0.85],
            "protection_singling_out_hi": [0.0, 0.6, 0.95],
        }
    )
    frame = points_frame(summary, x_metric="protection_singling_out", y_metric="accuracy", series="TDP",
                         kind="projection")
    assert frame["point_id"].tolist() == ["projection:1", "projection:2"]  # the non-private point is a marker
    assert frame["x"].tolist() == [0.5, 0.9] and frame["y"].tolist() == [0.8, 0.7]
    assert frame["y_err"].tolist() == pytest.approx([0.02, 0.01])
    assert frame["x_err"].tolist() == pytest.approx([0.1, 0.05])
    assert frame["series"].unique().tolist() == ["TDP"]
    empty = points_frame(summary, x_metric="missing", y_metric="accuracy", series="TDP", kind="projection")
    assert empty.empty


def test_delta_fail_figure_log_axis_vacuous_band_and_one_trace_per_quantity():
    from engine.mechanisms.jl_laplace import delta_fail_curve

    eps = np.linspace(0.5, 8.0, 16)
    row = delta_fail_curve(eps, laplace_scale=2.0, k=2, relation="row", d=3, b=1.0)
    element = delta_fail_curve(eps, laplace_scale=2.0, k=2, relation="element", d=3)
    fig = ft.delta_fail_figure([("row-wise", "row", row), ("element-wise", "element", element)], floor=1e-12)
    assert fig.layout.yaxis.type == "log"
    band = fig.data[0]
    assert "vacuous" in band.name and band.fill == "toself" and min(band.y) == 1.0
    assert list(band.x[:2]) == [0.5, 8.0]
    lines = fig.data[1:]
    assert len(lines) == 2 * 3
    assert [t.line.dash for t in lines[:3]] == ["solid", "dash", "dot"]
    assert {t.line.color for t in lines[:3]} == {ft.RELATION_COLORS["row"]}
    assert {t.line.color for t in lines[3:]} == {ft.RELATION_COLORS["element"]}
    # plotted values: the engine's, clipped into [floor, 10] for the log axis; hover keeps the exact value
    np.testing.assert_allclose(lines[0].y, np.clip(row["delta_fail"], 1e-12, 10.0))
    paper = element["delta_fail_paper"]
    assert np.isinf(paper[0])  # c/bound ≤ √k: the paper's bound gives nothing; drawn at the top
    assert lines[5].y[0] == 10.0 and lines[5].customdata[0][0] == "inf"
    # at fixed noise a larger claimed ε means a larger c and a smaller failure probability
    assert np.all(np.diff(row["delta_fail_proof_event"]) <= 0)


def _flagged_sweep():
    """A sweep table by hand: the non-private point and two TDP points, 2 runs each; "target nobody" scores 0.7.
    Point 1 (0.55, 0.6: interval of the mean ≈ [−0.06, 1.21]) clears it only at the favourable end; point 2
    (0.5, 0.5: interval [0.5, 0.5]) is no better than target nobody."""
    from engine.sweeps import SweepResult, preset

    rows = []
    values = {0: (0.9, 0.9), 1: (0.55, 0.6), 2: (0.5, 0.5)}
    for point, reference, b in ((0, "non-private", np.nan), (1, "tdp", 0.25), (2, "tdp", 0.5)):
        for rep in (0, 1):
            rows.append({"point": point, "reference": reference, "mechanism": "projection", "b": b,
                         "epsilon1": 3.0, "delta1": 1e-4, "epsilon2": 0.9, "delta2": 5e-5, "epsilon": 3.9,
                         "delta": 1.5e-4, "implied_epsilon": 3.9 * 2 / b if b == b else np.nan, "rep": rep,
                         "accuracy": values[point][rep], "protection_singling_out": 0.1 * point + 0.01 * rep,
                         "baseline:target everybody:accuracy": 0.3, "baseline:target nobody:accuracy": 0.7})
    return SweepResult(preset("quick", n=100), pd.DataFrame(rows))


def test_tradeoff_figure_draws_the_engines_best_trivial_rule_and_marks_flagged_points():
    result = _flagged_sweep()
    best = result.best_trivial("accuracy")
    assert best.rule == "target nobody" and best.value == pytest.approx(0.7, abs=1e-12)
    summary = result.flagged_summary("accuracy")
    frame = ft.points_frame(summary, x_metric="protection_singling_out", y_metric="accuracy", series="TDP",
                            kind="projection")
    assert frame["no_better_than"].tolist() == ["", "target nobody"]
    fig = ft.tradeoff_figure(frame, x_label="x", y_label="accuracy", title="t", trivial=(best.rule, best.value))
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == best.value and line.line.dash == "dash"
    assert line.line.color == COLORS["trivial"]
    assert fig.layout.annotations[0].text == "target nobody: 0.7 — a rule that uses no data"
    series = next(t for t in fig.data if t.name == "TDP")
    assert list(series.marker.symbol) == ["circle", "circle-open"]  # B = 0.25, then the flagged B = 0.5
    assert series.customdata[1][2].endswith("no better than 'target nobody'") and "no better" not in (
        series.customdata[0][2])
    flagged = next(t for t in fig.data if t.name == ft.FLAGGED_NAME)
    assert flagged.marker.symbol == ft.FLAGGED_SYMBOL and list(flagged.y) == [0.5]
    assert flagged.customdata[0][0] == "projection:2"  # a click on the ✕ still selects the configuration
    # no rule, no line and no flag trace
    plain = ft.tradeoff_figure(frame.drop(columns="no_better_than"), x_label="x", y_label="y", title="t")
    assert not plain.layout.shapes and ft.FLAGGED_NAME not in [t.name for t in plain.data]


def test_comparison_bars_hatch_flagged_bars_and_draw_the_trivial_line():
    result = _flagged_sweep()
    best = result.best_trivial("accuracy")
    flags = result.flagged_summary("accuracy")["no_better_than"].tolist()
    fig = ft.comparison_bars_figure(["non-private", "TDP B = 0.25", "TDP B = 0.5"], [0.9, 0.575, 0.5],
                                    roles=["nonprivate", "chosen", "chosen"], y_label="accuracy", flags=flags,
                                    trivial=(best.rule, best.value))
    bar, key = fig.data
    assert key.name == "target nobody: 0.7 — a rule that uses no data" and fig.layout.showlegend  # not on the bars
    assert not fig.layout.annotations and bar.showlegend is False  # the legend names only the dashed line
    assert fig.layout.margin.t == 100  # the legend's line sits between the title and the plot, not on the title
    assert list(bar.marker.pattern.shape) == ["", "", ft.FLAGGED_PATTERN]
    assert list(bar.text) == ["0.9", "0.575", "0.5 ✕"]
    assert [c[0] for c in bar.customdata] == ["", "", "no better than 'target nobody'"]
    assert fig.layout.shapes[0].y0 == best.value


def test_the_reports_sweep_charts_carry_the_trivial_line_and_the_flags():
    """The HTML report draws the stored sweep as the Tradeoffs page does: a result no better than a rule that uses
    no data is flagged where it is shown, in the report too."""
    result = _flagged_sweep()
    ((title, fig),) = ft.sweep_report_figures(result)  # the sweep measured singling out only
    assert title == "Program effectiveness against singling out protection"
    assert fig.layout.shapes[0].y0 == pytest.approx(0.7, abs=1e-12)
    flagged = next(t for t in fig.data if t.name == ft.FLAGGED_NAME)
    assert list(flagged.y) == [0.5]


def test_a_figure_whose_values_tie_to_rounding_gets_a_readable_axis():
    """Issue 34 §5: every approach approving everyone ties at one profit up to rounding; plotly zoomed into the last
    bits and labelled a tick "15.50210678999999203M". The axis now spans the value ± 5 % with 4-digit ticks."""
    profit = 15502106.79
    points = pd.DataFrame({"point_id": ["g:1", "g:2"], "series": ["Gaussian"] * 2, "kind": ["gaussian"] * 2,
                           "b": [0.5, 2.0], "x": [0.2, 0.9], "y": [profit, 15502106.789999997],
                           "no_better_than": ["approve everyone"] * 2})
    fig = ft.tradeoff_figure(points, x_label="protection", y_label="profit", title="t",
                             markers=[ft.Marker("non-private", 0.1, profit)], trivial=("approve everyone", profit))
    assert list(fig.layout.yaxis.range) == pytest.approx([0.95 * profit, 1.05 * profit])
    assert fig.layout.yaxis.tickformat == ".4~s" and fig.layout.xaxis.range is None  # x varies: plotly's own
    spread = points.assign(y=[profit, profit * 1.01])
    assert ft.tradeoff_figure(spread, x_label="p", y_label="y", title="t").layout.yaxis.range is None
