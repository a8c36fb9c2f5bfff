"""The Workshop's chart: each pinned candidate's program metric (with its interval) against the privacy loss for any
two records (the implied classic-DP ε', log scale) — up and to the left is better. Candidates without a program
metric (not measured yet, or no outcome and program) are drawn on the axis' floor as open markers; candidates whose
implied classic DP is vacuous (δ' = 1) are listed as "no bound", never placed at a number."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engine.workshop import ComparisonRow
from ui.figures.theme import COLORS, MARKER_SIZE, SEQUENCE, plain_label, themed_figure

#: Longest legend entry (the comparison table carries the full label): fits a half-width chart at 1280 px.
LEGEND_CHARS = 56
#: Height of one legend line below the chart, in pixels (one entry per line: six pins stay inside the figure).
LEGEND_LINE = 21


def legend_name(row: ComparisonRow, chars: int = LEGEND_CHARS) -> str:
    text = f"{row.index + 1}. {row.label}"
    return text if len(text) <= chars else text[:chars - 1] + "…"


def workshop_figure(rows: Sequence[ComparisonRow], *, height: int = 460, legend_chars: int = LEGEND_CHARS) -> go.Figure:
    """Program metric ± interval against ε' per candidate; the chosen one outlined; the metric's name on the y axis.

    A candidate whose implied classic DP is vacuous (δ' = 1) has no ε' for any two records: it is not plotted at a
    number but listed in the legend and in a note as "no bound". The legend sits below the plot, one entry per line,
    and the figure grows with it, so that six pins keep their axis and legend inside the chart."""
    traces = []
    metrics = {r.evidence.metric for r in rows if r.evidence is not None and r.evidence.value is not None}
    measured = [r for r in rows if r.evidence is not None and r.evidence.value is not None]
    floor = min((r.evidence.value.mean for r in measured), default=0.0)  # type: ignore[union-attr]
    unbounded = [r for r in rows if r.implied_vacuous]
    for r in rows:
        colour = SEQUENCE[r.index % len(SEQUENCE)]
        ev = r.evidence
        value = ev.value if ev is not None else None
        name = plain_label(legend_name(r, legend_chars))
        if r.implied_vacuous:  # listed, never placed at a finite ε'
            traces.append(go.Scatter(x=[None], y=[None], mode="markers", name=name + " — no bound (δ' = 1)",
                                     marker={"size": MARKER_SIZE, "color": colour, "symbol": "x-thin-open",
                                             "line": {"width": 2, "color": colour}},
                                     hoverinfo="skip"))
            continue
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
    annotations = []
    if unbounded:
        annotations.append({
            "text": "No bound for any two records (δ' = 1), not plotted: "
                    + ", ".join(str(r.index + 1) for r in unbounded),
            "xref": "paper", "yref": "paper", "x": 1, "y": 1.02, "xanchor": "right", "yanchor": "bottom",
            "showarrow": False, "font": {"size": 12, "color": COLORS["text"]},
        })
    legend_height = LEGEND_LINE * len(rows)
    fig = themed_figure(
        traces, height=height + legend_height, legend_title="Candidate", annotations=annotations,
        xaxis={"type": "log", "tickformat": ".3~g",
               "title": "privacy loss for any two records ε' (implied classic DP, log)"},
        yaxis={"title": plain_label(" / ".join(sorted(m for m in metrics if m)) or "program metric")
               + " [95 % interval]"},
    )
    # below the plot, one entry per line, inside the figure (the container's bottom): a side-by-side column at
    # 1280 px is too narrow for a legend beside the plot, and six long names cut a horizontal legend off
    fig.update_layout(legend={"orientation": "v", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0,
                              "xanchor": "left", "title": {"side": "top"}},
                      margin={"l": 70, "r": 20, "t": 40, "b": 70 + legend_height + LEGEND_LINE})
    return fig
