"""Figures of the Accuracy targets & feasibility page (Theorem 1). Pure: arrays from the engine in, figures out.

Orientation everywhere on this page: ε on the x axis, B on the y axis (the candidate is a point (ε, B)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.theme import AXIS, COLORS, FEASIBLE_SCALE, LINE_WIDTH, MARKER_SIZE, SEQUENCE, apply_theme, fmt


@dataclass(frozen=True)
class FeasibilitySurface:
    """Theorem 1 evaluated by the engine over an ε × B grid for one δ and several γ.

    ``gamma_max[i, j]`` and ``feasible[g][i, j]`` refer to ``b[i]`` (rows, y axis) and ``epsilon[j]`` (x axis).
    ``b_max_integer[g]`` and ``b_sup[g]`` are functions of ``epsilon``.
    """

    epsilon: np.ndarray
    b: np.ndarray
    delta: float
    gammas: tuple[float, ...]
    gamma_max: np.ndarray
    feasible: Mapping[float, np.ndarray]
    b_max_integer: Mapping[float, np.ndarray]
    b_sup: Mapping[float, np.ndarray]


def _gamma_color(i: int) -> str:
    return SEQUENCE[i % len(SEQUENCE)]


def region_figure(
    surface: FeasibilitySurface,
    *,
    candidate: tuple[float, float] | None = None,
    click_grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> go.Figure:
    """Heatmap of γ_max over (ε, B), the infeasible area for the strictest γ greyed, each γ's boundary, B = 2.

    Parameters
    ----------
    surface
        From the engine (see :class:`FeasibilitySurface`).
    candidate
        (ε, B) of the chosen candidate, drawn as a star.
    click_grid
        ``(eps, b, gamma_max)`` flattened arrays of a coarser grid drawn as nearly invisible markers: plotly
        selection events work on markers, not heatmap cells, so clicking selects the nearest grid point. Their
        hover text carries the exact values.
    """
    fig = go.Figure()
    fig.add_trace(
        go.Heatmap(
            x=surface.epsilon,
            y=surface.b,
            z=surface.gamma_max,
            colorscale=FEASIBLE_SCALE,
            zmin=0.5,
            zmax=1.0,
            colorbar={"title": {"text": "γ_max"}, "thickness": 14},
            hoverinfo="skip" if click_grid is not None else None,
            hovertemplate="ε = %{x:.6g}<br>B = %{y:.6g}<br>γ_max = %{z:.6f}<extra></extra>",
            name="highest accuracy not ruled out",
        )
    )
    strictest = max(surface.gammas)
    infeasible = np.where(surface.feasible[strictest], np.nan, 1.0)
    fig.add_trace(
        go.Heatmap(
            x=surface.epsilon,
            y=surface.b,
            z=infeasible,
            colorscale=[[0.0, COLORS["infeasible"]], [1.0, COLORS["infeasible"]]],
            showscale=False,
            opacity=0.85,
            hoverinfo="skip",
            name=f"ruled out for γ = {strictest:g}",
        )
    )
    for i, g in enumerate(sorted(surface.gammas, reverse=True)):
        # Boundary of the feasible region for this γ: the largest feasible B at each ε (staircase, 2/B whole).
        fig.add_trace(
            go.Scatter(
                x=surface.epsilon,
                y=surface.b_sup[g],
                mode="lines",
                line={"color": _gamma_color(i), "width": LINE_WIDTH, "shape": "hv"},
                name=f"boundary, γ = {g:g}",
                hovertemplate=f"γ = {g:g}: every B below %{{y:.6g}} passes at ε = %{{x:.6g}}<extra></extra>",
            )
        )
    fig.add_hline(
        y=2.0,
        line={"color": COLORS["classic_dp"], "width": LINE_WIDTH, "dash": "dash"},
        annotation_text="B = 2: classic DP",
        annotation_position="bottom right",
        annotation_font={"color": COLORS["classic_dp"]},
    )
    if click_grid is not None:
        ce, cb, cg = click_grid
        fig.add_trace(
            go.Scatter(
                x=ce,
                y=cb,
                mode="markers",
                marker={"size": 9, "color": COLORS["candidate"], "opacity": 0.02, "symbol": "square"},
                selected={"marker": {"opacity": 0.9, "color": COLORS["candidate"]}},
                unselected={"marker": {"opacity": 0.02}},
                customdata=np.column_stack([ce, cb, cg]),
                hovertemplate=(
                    "ε = %{customdata[0]:.6g}<br>B = %{customdata[1]:.6g}<br>γ_max = %{customdata[2]:.6f}"
                    "<br><i>click to choose this point</i><extra></extra>"
                ),
                name="click to choose",
                showlegend=False,
            )
        )
    if candidate is not None:
        eps, b = candidate
        fig.add_trace(
            go.Scatter(
                x=[eps],
                y=[b],
                mode="markers",
                marker={"symbol": "star", "size": MARKER_SIZE + 9, "color": COLORS["candidate"],
                        "line": {"color": "white", "width": 1.5}},
                name=f"candidate (ε = {fmt(eps)}, B = {fmt(b)})",
                hovertemplate="candidate<br>ε = %{x:.6g}<br>B = %{y:.6g}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"Feasible (B, ε) for δ = {fmt(surface.delta)} — grey: ruled out by Theorem 1 for γ = {strictest:g}",
        xaxis_title=AXIS["epsilon"],
        yaxis_title=AXIS["b"],
        clickmode="event+select",
        dragmode="select" if click_grid is not None else "zoom",
        legend={"orientation": "h", "y": -0.22},
    )
    fig.update_yaxes(range=[0, 2.06])
    return apply_theme(fig, height=520)


def b_max_figure(surface: FeasibilitySurface, *, candidate: tuple[float, float] | None = None) -> go.Figure:
    """Largest feasible B against ε for each γ: 2/m (2/B whole, solid) and the supremum 2/(m − 1) (dotted)."""
    fig = go.Figure()
    for i, g in enumerate(sorted(surface.gammas, reverse=True)):
        color = _gamma_color(i)
        fig.add_trace(
            go.Scatter(
                x=surface.epsilon,
                y=surface.b_max_integer[g],
                mode="lines",
                line={"color": color, "width": LINE_WIDTH, "shape": "hv"},
                name=f"γ = {g:g}: largest B with 2/B whole",
                hovertemplate=f"γ = {g:g}<br>ε = %{{x:.6g}}<br>B ≤ %{{y:.6g}}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=surface.epsilon,
                y=surface.b_sup[g],
                mode="lines",
                line={"color": color, "width": LINE_WIDTH - 1, "dash": "dot", "shape": "hv"},
                name=f"γ = {g:g}: supremum (not attained)",
                hovertemplate=f"γ = {g:g}<br>ε = %{{x:.6g}}<br>every B < %{{y:.6g}}<extra></extra>",
            )
        )
    fig.add_hline(y=2.0, line={"color": COLORS["classic_dp"], "dash": "dash", "width": LINE_WIDTH - 1},
                  annotation_text="classic DP (B = 2)", annotation_position="bottom right")
    if candidate is not None:
        fig.add_trace(
            go.Scatter(
                x=[candidate[0]], y=[candidate[1]], mode="markers", name="candidate",
                marker={"symbol": "star", "size": MARKER_SIZE + 7, "color": COLORS["candidate"]},
                hovertemplate="candidate<br>ε = %{x:.6g}<br>B = %{y:.6g}<extra></extra>",
            )
        )
    fig.update_layout(
        title="Largest B not ruled out, against ε", xaxis_title=AXIS["epsilon"], yaxis_title=AXIS["b_max"],
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_yaxes(range=[0, 2.06])
    return apply_theme(fig, height=480)


def gamma_max_figure(
    epsilon: np.ndarray,
    curves: Mapping[float, np.ndarray],
    gammas: Sequence[float],
    *,
    candidate_b: float | None = None,
) -> go.Figure:
    """The accuracy ceiling γ_max against ε for several B; the targets γ as horizontal lines."""
    fig = go.Figure()
    for i, (b, values) in enumerate(sorted(curves.items())):
        is_candidate = candidate_b is not None and abs(b - candidate_b) < 1e-12
        color = COLORS["classic_dp"] if b == 2.0 else (COLORS["candidate"] if is_candidate else _gamma_color(i))
        label = "B = 2 (classic DP)" if b == 2.0 else f"B = {b:g}" + (" (candidate)" if is_candidate else "")
        fig.add_trace(
            go.Scatter(
                x=epsilon,
                y=values,
                mode="lines",
                line={"color": color, "width": LINE_WIDTH + (1 if is_candidate else 0),
                      "dash": "dash" if b == 2.0 else "solid"},
                name=label,
                hovertemplate=f"B = {b:g}<br>ε = %{{x:.6g}}<br>γ_max = %{{y:.6f}}<extra></extra>",
            )
        )
    for g in gammas:
        fig.add_hline(y=g, line={"color": COLORS["text"], "dash": "dot", "width": 1.5},
                      annotation_text=f"target γ = {g:g}", annotation_position="top left")
    fig.update_layout(
        title="Accuracy ceiling: the highest γ Theorem 1 allows", xaxis_title=AXIS["epsilon"],
        yaxis_title=AXIS["gamma_max"], legend={"orientation": "h", "y": -0.25},
    )
    fig.update_yaxes(range=[0.49, 1.01])
    return apply_theme(fig, height=480)
