"""Figures of the Per-record page. Pure: policy values and losses from the engine in, ``go.Figure`` out.

Units are part of every figure's signature: one axis shows ONE unit (ρ of per-record zCDP, or ε of per-record
pure DP, or the ε of targeted DP's switch lemma), named in full in the axis title. The engine converts (Lemma 5.2,
ρ = ε·tanh(ε/2)) before anything is overlaid; these functions never convert.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ui.figures.theme import COLORS, LINE_WIDTH, SEQUENCE, Line, fmt, hline, themed_figure, vline

#: Dash pattern of curves that are our own additions (not in the paper), so they stand out as such.
OURS_DASH = "dash"


def _vline(x: float, *, text: str, color: str, dash: str, log_x: bool, top: bool = True) -> Line:
    """Vertical line with a label (for ``themed_figure(lines=…)``). On a log axis plotly places
    ``add_vline`` labels wrongly, so the label is an annotation at log10(x) (annotations on log axes use exponent
    coordinates)."""
    shape, _ = vline(float(x), line={"color": color, "dash": dash, "width": 2})
    return shape, {
        "x": float(np.log10(x)) if log_x else float(x), "xref": "x", "y": 0.98 if top else 0.02, "yref": "paper",
        "yanchor": "top" if top else "bottom", "xanchor": "left", "text": text, "showarrow": False,
        "font": {"size": 13, "color": color}, "bgcolor": "rgba(255,255,255,0.75)",
    }


@dataclass(frozen=True)
class PolicyCurve:
    """One mechanism's policy function sampled at record values ``x`` (losses in the figure's single unit)."""

    label: str
    x: Sequence[float]
    loss: Sequence[float]
    ours: bool = False


def _positive(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = (xa > 0) & (ya > 0) & np.isfinite(xa) & np.isfinite(ya)
    return xa[keep], ya[keep]


def policy_figure(
    curves: Sequence[PolicyCurve],
    *,
    unit_label: str,
    value_label: str = "record value x (= its per-record sensitivity)",
    percentiles: Mapping[str, float] | None = None,
    threshold: float | None = None,
    title: str = "Policy functions at equal accuracy",
    height: int = 500,
) -> go.Figure:
    """Per-record loss against record value on log–log axes, one curve per mechanism.

    Parameters
    ----------
    curves
        Policy curves, all in the unit named by ``unit_label`` (zero losses are left out: log axes).
    unit_label
        Full name of the unit on the y axis, e.g. ``"ρ (per-record zCDP)"``.
    percentiles
        label → record value (e.g. median, p90, p99, max of the data), drawn as vertical dotted lines.
    threshold
        An acceptable loss, drawn as a horizontal dashed line.
    """
    traces = []
    for index, curve in enumerate(curves):
        x, y = _positive(curve.x, curve.loss)
        label = curve.label + (" [ours]" if curve.ours else "")
        traces.append(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=label,
                line={
                    "color": SEQUENCE[index % len(SEQUENCE)],
                    "width": LINE_WIDTH,
                    "dash": OURS_DASH if curve.ours else "solid",
                },
                hovertemplate="x = %{x:.6g}<br>loss = %{y:.6g} " + unit_label + "<extra>" + label + "</extra>",
            )
        )
    lines = [_vline(value, text=f"{label} {fmt(value)}", color=COLORS["text"], dash="dot", log_x=True,
                    top=index % 2 == 0)
             for index, (label, value) in enumerate((percentiles or {}).items())
             if value is not None and np.isfinite(value) and value > 0]
    if threshold is not None and np.isfinite(threshold) and threshold > 0:
        lines.append(hline(float(threshold), line={"color": COLORS["classic_dp"], "dash": "dash", "width": 2},
                           text=f"acceptable loss {fmt(threshold)}", position="bottom right"))
    return themed_figure(traces, height=height, title=title, xaxis={"title": value_label, "type": "log"},
                         yaxis={"title": f"per-record loss, {unit_label}", "type": "log"}, lines=lines)


def loss_ecdf_figure(
    losses: Sequence[float] | np.ndarray,
    *,
    unit_label: str,
    threshold: float | None = None,
    highlights: Mapping[str, float] | None = None,
    title: str = "Who pays what: per-record losses over the data",
    log_x: bool = True,
    height: int = 440,
) -> go.Figure:
    """Empirical CDF of the per-record losses of the data's records, with chosen quantiles marked.

    ``highlights`` maps labels (e.g. "p99", "max") to loss values drawn as vertical lines; ``threshold`` is an
    acceptable loss (the share of records above it is what a designer reads off).
    """
    values = np.sort(np.asarray(losses, dtype=float))
    values = values[np.isfinite(values)]
    share = np.arange(1, values.size + 1) / max(values.size, 1)
    if log_x:
        keep = values > 0
        values, share = values[keep], share[keep]
    trace = (
        go.Scatter(
            x=values,
            y=share,
            mode="lines",
            line={"shape": "hv", "color": COLORS["primary"], "width": LINE_WIDTH},
            name="records",
            hovertemplate="loss ≤ %{x:.6g} " + unit_label + "<br>share of records %{y:.4f}<extra></extra>",
        )
    )
    lines = [_vline(value, text=f"{label} {fmt(value)}", color=SEQUENCE[(index + 1) % len(SEQUENCE)], dash="dot",
                    log_x=log_x, top=True)
             for index, (label, value) in enumerate((highlights or {}).items())
             if value is not None and np.isfinite(value) and (value > 0 or not log_x)]
    if threshold is not None and np.isfinite(threshold) and (threshold > 0 or not log_x):
        lines.append(_vline(threshold, text=f"acceptable {fmt(threshold)}", color=COLORS["classic_dp"], dash="dash",
                            log_x=log_x, top=False))
    xaxis = {"title": f"per-record loss, {unit_label}", **({"type": "log"} if log_x else {})}
    return themed_figure([trace], height=height, title=title, xaxis=xaxis,
                         yaxis={"title": "share of records with at most this loss", "range": [0, 1.02]},
                         showlegend=False, lines=lines)


def tdp_policy_figure(
    distances: Sequence[float],
    epsilons: Sequence[float],
    *,
    b: float,
    epsilon: float,
    marks: Mapping[str, float] | None = None,
    height: int = 420,
) -> go.Figure:
    """Targeted DP as a per-record guarantee: the ε protecting a record against one at distance t (⌈t/B⌉·ε).

    ``distances``/``epsilons`` come from the engine (a step function); ``marks`` are distances to draw (e.g. the
    median nearest-neighbour distance of the data, and t = 2).
    """
    trace = (
        go.Scatter(
            x=np.asarray(distances, dtype=float),
            y=np.asarray(epsilons, dtype=float),
            mode="lines",
            line={"shape": "hv", "color": COLORS["primary"], "width": LINE_WIDTH},
            name=f"(B = {fmt(b)}, ε = {fmt(epsilon)})-TDP",
            hovertemplate="distance t = %{x:.4g}<br>ε(t) = %{y:.6g}<extra></extra>",
        )
    )
    lines = [
        vline(float(b), line={"color": COLORS["candidate"], "dash": "dash", "width": 2}, text=f"B = {fmt(b)}",
              position="top left"),
        *(vline(float(value), line={"color": SEQUENCE[(index + 1) % len(SEQUENCE)], "dash": "dot", "width": 1.5},
                text=f"{label} {fmt(value)}", position="bottom right")
          for index, (label, value) in enumerate((marks or {}).items()) if value is not None and np.isfinite(value)),
    ]
    return themed_figure([trace], height=height, title="Targeted DP's policy function ε(t)",
                         xaxis={"title": "L2 distance t between the two records (prepared units)"},
                         yaxis={"title": "privacy loss ε(t) of (ε, δ)-DP (switch lemma)"}, showlegend=False,
                         lines=lines)


def distance_loss_histogram(
    losses: Sequence[float] | np.ndarray,
    *,
    unit_label: str,
    worst_case: float | None = None,
    title: str = "Each record's loss against its nearest distinct neighbour",
    height: int = 420,
) -> go.Figure:
    """Histogram of per-record losses (e.g. ε at each record's nearest-neighbour distance), worst case marked."""
    values = np.asarray(losses, dtype=float)
    values = values[np.isfinite(values)]
    trace = (
        go.Histogram(
            x=values,
            marker_color=COLORS["primary"],
            name="records",
            hovertemplate="loss %{x}<br>%{y} records<extra></extra>",
        )
    )
    lines = [vline(float(worst_case), line={"color": COLORS["classic_dp"], "dash": "dash", "width": 2},
                   text=f"worst case (t = 2): {fmt(worst_case)}", position="top left")
             ] if worst_case is not None and np.isfinite(worst_case) else []
    return themed_figure([trace], height=height, title=title, xaxis={"title": f"per-record loss, {unit_label}"},
                         yaxis={"title": "number of records"}, showlegend=False, bargap=0.05, lines=lines)
