"""Figures of the Data page: the row-norm distribution before and after preparation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.figures.theme import AXIS, COLORS, add_lines, apply_theme, vline


def row_norm_figure(input_norms: np.ndarray, prepared_norms: np.ndarray, *, method: str) -> go.Figure:
    """Overlaid histograms of ‖z_i‖ (after centring/scaling, before the row map) and of the prepared ‖x_i‖ ≤ 1.

    The vertical line at 1 is the unit ball every prepared row must lie in.
    """
    fig = go.Figure()
    largest = float(np.max(input_norms, initial=1.0))
    # A few extreme rows would squeeze everything else into one bar: cut the axis at the 99.5th percentile.
    upper = max(1.05, 1.05 * float(np.quantile(input_norms, 0.995))) if len(input_norms) else 1.05
    upper = max(1.05, min(upper, largest * 1.0001))
    beyond = int(np.sum(np.asarray(input_norms) > upper))
    bins = {"start": 0.0, "end": upper, "size": upper / 60}
    fig.add_trace(
        go.Histogram(
            x=input_norms, xbins=bins, name="before the row map (‖z‖)", marker_color=COLORS["original"],
            opacity=0.55, hovertemplate="‖z‖ in %{x}<br>%{y} rows<extra></extra>",
        )
    )
    fig.add_trace(
        go.Histogram(
            x=prepared_norms, xbins=bins, name="prepared (‖x‖ ≤ 1)", marker_color=COLORS["private"],
            opacity=0.75, hovertemplate="‖x‖ in %{x}<br>%{y} rows<extra></extra>",
        )
    )
    add_lines(fig, [vline(1.0, line={"color": COLORS["classic_dp"], "dash": "dash", "width": 2}, text="unit ball")])
    if beyond:
        fig.add_annotation(x=1, xref="paper", y=1, yref="paper", xanchor="right", showarrow=False,
                           text=f"{beyond} row(s) beyond the axis, up to ‖z‖ = {largest:.3g}")
    fig.update_xaxes(range=[0, upper])
    fig.update_layout(
        barmode="overlay",
        title=f"Row norms before and after preparation ({method})",
        xaxis_title=AXIS["row_norm"],
        yaxis_title="rows",
        legend={"orientation": "h", "y": -0.25},
    )
    return apply_theme(fig, height=400)
