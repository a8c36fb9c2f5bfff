"""Figures of the Accuracy targets & feasibility page (Theorem 1). Pure: arrays from the engine in, figures out.

Orientation everywhere on this page: ε on the x axis, B on the y axis (the candidate is a point (ε, B)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.theme import (
    AXIS,
    COLORS,
    LINE_WIDTH,
    MARKER_SIZE,
    SEQUENCE,
    fmt,
    hline,
    themed_figure,
)


@dataclass(frozen=True)
class FeasibilitySurface:
    """Theorem 1's largest feasible B, evaluated by the engine along an ε grid, for one δ and several γ.

    ``b_sup[g]`` (every smaller B passes) and ``b_max_integer[g]`` (largest B with 2/B whole) are arrays over
    ``epsilon``.
    """

    epsilon: np.ndarray
    delta: float
    gammas: tuple[float, ...]
    b_max_integer: Mapping[float, np.ndarray]
    b_sup: Mapping[float, np.ndarray]


def _gamma_color(i: int) -> str:
    return SEQUENCE[i % len(SEQUENCE)]


def _green(i: int, n: int) -> str:
    """Fill colour of the i-th feasible region (0 = weakest γ, lightest) out of n."""
    alpha = 0.30 + 0.55 * (i + 1) / max(n, 1)
    return f"rgba(0, 158, 115, {alpha:.2f})"


def region_figure(
    surface: FeasibilitySurface,
    *,
    candidate: tuple[float, float] | None = None,
    click_grid: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> go.Figure:
    """The feasible (ε, B) region of each γ, the area ruled out for every γ in grey, the B = 2 line, the candidate.

    Drawn with filled scatter traces (not a heatmap) because Streamlit's plotly selection events stop working as soon
    as a figure holds a heatmap or contour trace.

    Parameters
    ----------
    surface
        From the engine (see :class:`FeasibilitySurface`).
    candidate
        (ε, B) of the chosen candidate, drawn as a star.
    click_grid
        ``(eps, b, gamma_max, verdict)`` flattened arrays of a grid drawn as nearly invisible markers: clicking
        picks the nearest grid point, and their hover text carries the exact values and the verdict per γ.
    """
    traces = []
    eps = surface.epsilon
    ruled_out = {"type": "rect", "x0": 0, "x1": float(eps[-1]), "y0": 0, "y1": 2, "layer": "below",
                 "line": {"width": 0}, "fillcolor": COLORS["infeasible"], "opacity": 0.55}
    ordered = sorted(surface.gammas)  # weakest first: its region is the largest, stricter ones drawn on top
    for i, g in enumerate(ordered):
        traces.append(
            go.Scatter(
                x=np.concatenate([[0.0], eps]),
                y=np.concatenate([[0.0], surface.b_sup[g]]),
                mode="lines",
                fill="tozeroy",
                fillcolor=_green(i, len(ordered)),
                line={"color": _gamma_color(len(ordered) - 1 - i), "width": LINE_WIDTH, "shape": "hv"},
                name=f"not ruled out for γ = {g:g}",
                hovertemplate=f"γ = {g:g}: every B below %{{y:.6g}} passes at ε = %{{x:.6g}}<extra></extra>",
            )
        )
    if click_grid is not None:
        ce, cb, cg, verdict = click_grid
        traces.append(
            go.Scatter(
                x=ce,
                y=cb,
                mode="markers",
                marker={"size": 10, "color": COLORS["candidate"], "opacity": 0.02, "symbol": "square"},
                customdata=np.column_stack([ce, cb, cg]),
                text=verdict,
                hovertemplate=(
                    "ε = %{customdata[0]:.6g}<br>B = %{customdata[1]:.6g}<br>γ_max = %{customdata[2]:.6f}"
                    "<br>%{text}<br><i>click to choose this point</i><extra></extra>"
                ),
                name="click to choose",
                showlegend=False,
            )
        )
    if candidate is not None:
        c_eps, c_b = candidate
        traces.append(
            go.Scatter(
                x=[c_eps],
                y=[c_b],
                mode="markers",
                marker={"symbol": "star", "size": MARKER_SIZE + 9, "color": COLORS["candidate"],
                        "line": {"color": "white", "width": 1.5}},
                name=f"candidate (ε = {fmt(c_eps)}, B = {fmt(c_b)})",
                hovertemplate="candidate<br>ε = %{x:.6g}<br>B = %{y:.6g}<extra></extra>",
            )
        )
    return themed_figure(
        traces, height=520, title=f"Feasible (B, ε) at δ = {fmt(surface.delta)}; grey: ruled out",
        xaxis={"title": AXIS["epsilon"], "range": [0, float(eps[-1])]}, yaxis={"title": AXIS["b"], "range": [0, 2.06]},
        legend={"orientation": "h", "y": -0.22}, shapes=[ruled_out],
        lines=[hline(2.0, line={"color": COLORS["classic_dp"], "width": LINE_WIDTH, "dash": "dash"},
                     text="B = 2: classic DP", position="bottom left", font={"color": COLORS["classic_dp"]})],
    )


def b_max_figure(surface: FeasibilitySurface, *, candidate: tuple[float, float] | None = None) -> go.Figure:
    """Largest feasible B against ε for each γ: 2/m (2/B whole, solid) and the supremum 2/(m − 1) (dotted)."""
    traces = []
    for i, g in enumerate(sorted(surface.gammas, reverse=True)):
        color = _gamma_color(i)
        traces.append(
            go.Scatter(
                x=surface.epsilon,
                y=surface.b_max_integer[g],
                mode="lines",
                line={"color": color, "width": LINE_WIDTH, "shape": "hv"},
                name=f"γ = {g:g}: largest B with 2/B whole",
                hovertemplate=f"γ = {g:g}<br>ε = %{{x:.6g}}<br>B ≤ %{{y:.6g}}<extra></extra>",
            )
        )
        traces.append(
            go.Scatter(
                x=surface.epsilon,
                y=surface.b_sup[g],
                mode="lines",
                line={"color": color, "width": LINE_WIDTH - 1, "dash": "dot", "shape": "hv"},
                name=f"γ = {g:g}: supremum (not attained)",
                hovertemplate=f"γ = {g:g}<br>ε = %{{x:.6g}}<br>every B < %{{y:.6g}}<extra></extra>",
            )
        )
    if candidate is not None:
        traces.append(
            go.Scatter(
                x=[candidate[0]], y=[candidate[1]], mode="markers", name="candidate",
                marker={"symbol": "star", "size": MARKER_SIZE + 7, "color": COLORS["candidate"]},
                hovertemplate="candidate<br>ε = %{x:.6g}<br>B = %{y:.6g}<extra></extra>",
            )
        )
    return themed_figure(
        traces, height=480, title="Largest B not ruled out", xaxis={"title": AXIS["epsilon"]},
        yaxis={"title": AXIS["b_max"], "range": [0, 2.06]}, legend={"orientation": "h", "y": -0.25},
        lines=[hline(2.0, line={"color": COLORS["classic_dp"], "dash": "dash", "width": LINE_WIDTH - 1},
                     text="classic DP (B = 2)", position="bottom right")],
    )


def gamma_max_figure(
    epsilon: np.ndarray,
    curves: Mapping[float, np.ndarray],
    gammas: Sequence[float],
    *,
    candidate_b: float | None = None,
) -> go.Figure:
    """The accuracy ceiling γ_max against ε for several B; the targets γ as horizontal lines."""
    traces = []
    for i, (b, values) in enumerate(sorted(curves.items())):
        is_candidate = candidate_b is not None and abs(b - candidate_b) < 1e-12
        color = COLORS["classic_dp"] if b == 2.0 else (COLORS["candidate"] if is_candidate else _gamma_color(i))
        label = "B = 2 (classic DP)" if b == 2.0 else f"B = {b:g}" + (" (candidate)" if is_candidate else "")
        traces.append(
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
    return themed_figure(
        traces, height=480, title="Accuracy ceiling γ_max", xaxis={"title": AXIS["epsilon"]},
        yaxis={"title": AXIS["gamma_max"], "range": [0.49, 1.01]}, legend={"orientation": "h", "y": -0.25},
        lines=[hline(g, line={"color": COLORS["text"], "dash": "dot", "width": 1.5}, text=f"target γ = {g:g}",
                     position="bottom right") for g in gammas],
    )
