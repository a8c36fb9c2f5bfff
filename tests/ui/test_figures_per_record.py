"""Pure figure functions of the Per-record page (ui.figures.per_record): data in, traces out."""

from __future__ import annotations

import numpy as np
import pytest

from ui.figures import per_record as fp


def test_policy_figure_log_axes_drop_zero_losses_and_label_ours():
    curves = [
        fp.PolicyCurve("4th root", [0.0, 5.0, 10.0], [0.0, 0.279508, 0.395285]),
        fp.PolicyCurve("EPL p=2", [5.0, 10.0], [0.1, 0.2], ours=True),
    ]
    fig = fp.policy_figure(curves, unit_label="ρ (per-record zCDP)", percentiles={"median": 10.0}, threshold=1.0)
    root, epl = fig.data
    assert list(root.x) == [5.0, 10.0] and list(root.y) == pytest.approx([0.279508, 0.395285])
    assert epl.name == "EPL p=2 [ours]" and epl.line.dash == "dash" and root.line.dash == "solid"
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "ρ (per-record zCDP)" in fig.layout.yaxis.title.text
    assert sorted((s.x0, s.y0) for s in fig.layout.shapes) == [(0, 1.0), (10.0, 0)]
    # Labels of vertical lines on a log axis sit at log10(x) (plotly's annotation coordinates on log axes).
    (label,) = [a for a in fig.layout.annotations if a.text.startswith("median")]
    assert label.x == pytest.approx(1.0) and label.text == "median 10"


def test_loss_ecdf_is_a_sorted_step_function():
    fig = fp.loss_ecdf_figure([3.0, 1.0, 2.0, 4.0], unit_label="ρ", highlights={"max": 4.0}, threshold=2.5)
    (trace,) = fig.data
    assert list(trace.x) == [1.0, 2.0, 3.0, 4.0]
    assert list(trace.y) == [0.25, 0.5, 0.75, 1.0]
    assert trace.line.shape == "hv"
    assert sorted(s.x0 for s in fig.layout.shapes) == [2.5, 4.0]


def test_tdp_policy_and_histogram():
    fig = fp.tdp_policy_figure([0.0, 0.5, 1.0], [0.0, 1.0, 2.0], b=0.5, epsilon=1.0, marks={"t = 2": 2.0})
    assert list(fig.data[0].y) == [0.0, 1.0, 2.0]
    assert sorted(s.x0 for s in fig.layout.shapes) == [0.5, 2.0]
    hist = fp.distance_loss_histogram([1.0, 1.0, 2.0, np.inf], unit_label="ε", worst_case=5.0)
    assert list(hist.data[0].x) == [1.0, 1.0, 2.0]
    assert [s.x0 for s in hist.layout.shapes] == [5.0]
