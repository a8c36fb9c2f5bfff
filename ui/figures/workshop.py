"""The Workshop's chart: each pinned candidate's program metric (with its interval) against the privacy loss for any
two records (the implied classic-DP ε', log scale) — up and to the left is better. Candidates without a program
metric (not measured yet, or no outcome and program) are drawn on the axis' floor as open markers."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engine.workshop import ComparisonRow
from ui.figures.theme import COLORS, MARKER_SIZE, SEQUENCE, plain_label, themed_figure


def workshop_figure(rows: Sequence[ComparisonRow], *, height: int = 460) -> go.Figure:
    """Program metric ± interval against ε' per candidate; the chosen one outlined; the metric's name on the y axis."""
    traces = []
    metrics = {r.evidence.metric for r in rows if r.evidence is not None and r.evidence.value is not None}
    measured = [r for r in rows if r.evidence is not None and r.evidence.value is not None]
    floor = min((r.evidence.value.mean for r in measured), default=0.0)  # type: ignore[union-attr]
    for r in rows:
        colour = SEQUENCE[r.index % len(SEQUENCE)]
        ev = r.evidence
        value = ev.value if ev is not None else None
        name = plain_label(f"{r.index + 1}. {r.label}")
        error = None
        if value is not None and value.low is not None and value.high is not None:
            error = {"type": "data", "symmetric": False, "array": [value.high - value.mean],
                     "arrayminus": [value.mean - value.low], "thickness": 2}
        traces.append(go.Scatter(
            x=[r.implied_epsilon], y=[value.mean if value is not None else floor], mode="markers+text", name=name,
            text=[f"{r.index + 1}" + (" ✓" if r.chosen else "")], textposition="top center", error_y=error,
            marker={"size": MARKER_SIZE + (6 if r.chosen else 2), "color": colour,
                    "line": {"width": 3 if r.chosen else 2, "color": COLORS["text"] if r.chosen else colour},
                    "symbol": "circle" if value is not None else "circle-open"},
            hovertemplate=f"{name}<br>ε' = %{{x:.4g}}<br>metric = %{{y:.4g}}"
            + ("" if value is not None else " (no program metric yet)") + "<extra></extra>",
        ))
    fig = themed_figure(
        traces, height=height, legend_title="Candidate",
        xaxis={"type": "log", "tickformat": ".3g",
               "title": "privacy loss for any two records ε' (implied classic DP, log)"},
        yaxis={"title": plain_label(" / ".join(sorted(m for m in metrics if m)) or "program metric")
               + " [95 % interval]"},
    )
    # below the plot: a side-by-side column at 1280 px is too narrow for a legend beside it
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.25, "xanchor": "left", "x": 0},
                      margin={"l": 70, "r": 20, "t": 30, "b": 40})
    return fig
