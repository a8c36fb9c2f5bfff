"""The Workshop's chart scales to six pins: a vacuous candidate (δ' = 1) is "no bound", never a point at a finite ε';
the legend, one entry per line, stays inside the figure."""

from __future__ import annotations

import math

from engine.mechanisms.gaussian import GaussianMechanism
from engine.workshop import Candidate, Evidence, Interval, comparison_rows
from ui.figures.workshop import LEGEND_LINE, workshop_figure


def pins() -> list[Candidate]:
    out = []
    for i, (b, eps) in enumerate(((0.05, 4.0), (2.0, 4.0), (0.1, 7.43), (0.25, 0.61), (2.0, 1.0), (0.05, 1.0))):
        ev = Evidence("accuracy", Interval(0.7 + i / 100, 0.68 + i / 100, 0.72 + i / 100), 5, seed=0)
        out.append(Candidate.of(f"dataset {i % 2} · Sweep · Gaussian B = {b}, ε = {eps}", "tradeoffs",
                                GaussianMechanism(b=b, epsilon=eps, delta=1e-3), ev))
    return out


def test_vacuous_candidates_are_listed_as_no_bound_and_never_plotted_at_a_number():
    rows = comparison_rows(pins())
    vacuous = [r for r in rows if r.implied_vacuous]
    assert vacuous and len(vacuous) < len(rows)
    fig = workshop_figure(rows)
    for r in rows:
        trace = next(t for t in fig.data if t.name.startswith(f"{r.index + 1}. "))
        xs = [x for x in (trace.x or ()) if x is not None]
        if r.implied_vacuous:
            assert xs == [] and trace.name.endswith("no bound (δ' = 1)")
        else:
            assert xs == [r.implied_epsilon] and math.isfinite(xs[0])
    note = fig.layout.annotations[0].text
    assert note.startswith("No bound for any two records") and note.endswith(
        ", ".join(str(r.index + 1) for r in vacuous))


def test_six_pins_keep_their_legend_inside_the_figure():
    rows = comparison_rows(pins())
    fig = workshop_figure(rows, height=380)
    assert len(rows) == 6 and fig.layout.legend.yref == "container" and fig.layout.legend.y == 0
    assert fig.layout.margin.b >= LEGEND_LINE * (len(rows) + 1)  # every line of the legend below the plot
    assert fig.layout.height == 380 + LEGEND_LINE * len(rows)
