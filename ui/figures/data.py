"""Figures of the Data page: the row-norm distribution before and after preparation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.figures.theme import AXIS, COLORS, themed_figure, vline


def row_norm_figure(input_norms: np.ndarray, prepared_norms: np.ndarray, *, method: str) -> go.Figure:
    """Overlaid histograms of ‖z_i‖ (after centring/scaling, before the row map) and of the prepared ‖x_i‖ ≤ 1.

    The vertical line at 1 is the unit ball every prepared row must lie in.
    """
    traces = []
    largest = float(np.max(input_norms, initial=1.0))
    # A few extreme rows would squeeze everything else into one bar: cut the axis at the 99.5th percentile.
    upper = max(1.05, 1.05 * float(np.quantile(input_norms, 0.995))) if len(input_norms) else 1.05
    upper = max(1.05, min(upper, largest * 1.0001))
    beyond = int(np.sum(np.asarray(input_norms) > upper))
    # Counted here, not in the browser: the page sends 60 bin counts per series instead of every row's norm (less
    # to draw, and no per-person value leaves the server). Bins [0, upper] in 60 equal steps, as before.
    edges = np.linspace(0.0, upper, 61)
    centres, width = (edges[:-1] + edges[1:]) / 2, upper / 60
    ranges = np.column_stack([edges[:-1], edges[1:]])
    for norms, name, color, opacity, symbol in (
        (input_norms, "before the row map (‖z‖)", COLORS["original"], 0.55, "‖z‖"),
        (prepared_norms, "prepared (‖x‖ ≤ 1)", COLORS["private"], 0.75, "‖x‖"),
    ):
        counts, _ = np.histogram(np.asarray(norms, dtype=float), bins=edges)
        traces.append(
            go.Bar(
                x=centres, y=counts, width=width, name=name, marker_color=color, opacity=opacity,
                customdata=ranges,
                hovertemplate=symbol + " in [%{customdata[0]:.3g}, %{customdata[1]:.3g}]<br>%{y} rows<extra></extra>",
            )
        )
    beyond_note = [{"x": 1, "xref": "paper", "y": 1, "yref": "paper", "xanchor": "right", "showarrow": False,
                    "text": f"{beyond} row(s) beyond the axis, up to ‖z‖ = {largest:.3g}"}] if beyond else []
    return themed_figure(
        traces, height=400, barmode="overlay", bargap=0, title=f"Row norms before and after preparation ({method})",
        xaxis={"title": AXIS["row_norm"], "range": [0, upper]}, yaxis={"title": "rows"},
        legend={"orientation": "h", "y": -0.25},
        lines=[vline(1.0, line={"color": COLORS["classic_dp"], "dash": "dash", "width": 2}, text="unit ball")],
        annotations=beyond_note,
    )
