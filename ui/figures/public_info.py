"""Figures of the "Public information" page (the partially-private-data paper's Figures 1–4). Pure: engine results
in, ``go.Figure`` out. Every figure states the guarantee it was made under in its title (``guarantee_text``) and
carries the "simulation — not private" label when the run was seeded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.theme import COLORS, SEQUENCE, apply_theme, fmt, plain_label, themed_figure

__all__ = ["guarantee_caption", "sensitivity_heatmap", "release_boxplots", "error_distribution", "contraction_bars",
           "posterior_draws"]

EFFECT_LABELS = {
    "CaseZeros": "count → 0",
    "SubcountZeros": "sub-count → 0",
    "ContractedRates": "sub-count = count",
}
#: What each effect counts (figure hover and the page's caption).
EFFECT_TEXT = {
    "CaseZeros": "count released as 0 while the true count is positive",
    "SubcountZeros": "sub-count released as 0 while the true sub-count is positive",
    "ContractedRates": "sub-count released equal to a positive count while the true sub-count is smaller "
                       "(deaths = cases)",
}


def guarantee_caption(results, *, seeded: bool, epsilon: float | None = None) -> str:
    """Every guarantee of the study's cells (TPGuarantee headlines; only those at ``epsilon`` when given), plus the
    seeded label."""
    heads = list(dict.fromkeys(c.guarantee.headline() for c in results.cells
                               if epsilon is None or c.epsilon == epsilon))
    text = "Made under: " + "; ".join(heads)
    if seeded:
        text += " — simulation — not private (seeded)"
    return text


def _title(fig: go.Figure, title: str, caption: str) -> go.Figure:
    lines = caption.split("; ")
    sub = "<br>".join(f"<sup>{line}</sup>" for line in lines)
    fig.update_layout(title={"text": f"{title}<br>{sub}"}, margin={"t": 90 + 18 * len(lines)})
    return fig


def _cell_name(cell) -> str:
    return f"{cell.label}, ε = {fmt(cell.epsilon)}"


def sensitivity_heatmap(z: Sequence[float] | np.ndarray, grid: np.ndarray, n: int, marked: tuple[float, float] | None = None,
                        marked_value: int | None = None) -> go.Figure:
    """Figure 4: Δ_z(n, z0, z1) over z0 (rows) and z1 (columns); blank where z0 > z1."""
    traces = [go.Heatmap(
        x=list(map(float, z)), y=list(map(float, z)), z=grid, colorscale="Viridis", zmin=1, zmax=n,
        colorbar={"title": {"text": "Δ_z"}},
        hovertemplate="z0 = %{y:.3g}, z1 = %{x:.3g}<br>Δ_z = %{z}<extra></extra>",
    )]
    if marked is not None:
        traces.append(go.Scatter(x=[marked[1]], y=[marked[0]], mode="markers+text", name="your model",
                                 text=[f"Δ_z = {marked_value}"], textposition="top right",
                                 marker={"symbol": "x", "size": 14, "color": COLORS.get("text", "#222")}))
    fig = themed_figure(traces, height=480, showlegend=False,
                        xaxis={"title": "z1 (upper bound on P(others = 1 | secret 1))", "range": [-0.03, 1.03]},
                        yaxis={"title": "z0 (lower bound on P(others = 1 | secret 0))", "range": [-0.03, 1.03]})
    return _title(fig, f"Δ_z of one count for groups of n = {n} correlated people (Figure 4)",
                  "Exact W∞(1 + Bin(n−1, z1), Bin(n−1, z0)); z0 = z1 is independence (Δ_z = 1)")


def release_boxplots(results, region: str, epsilon: float, caption: str, *, rates: bool = False) -> go.Figure:
    """Figure 1: released counts (or rates per 100,000) of ``region`` against period, boxes over replicates, one
    colour per method at ``epsilon``, with the truth line."""
    k = results.regions.index(region)
    traces = []
    periods = list(results.periods)
    cells = [c for c in results.cells if c.epsilon == epsilon]
    for i, cell in enumerate(cells):
        values = cell.released_rates if rates and cell.released_rates is not None else cell.released
        v = values[:, k, :]  # (R, T)
        traces.append(go.Box(
            x=np.tile(periods, v.shape[0]), y=v.ravel(), name=cell.label, boxpoints=False,
            marker={"color": SEQUENCE[i % len(SEQUENCE)]}, line={"width": 1.5},
        ))
    truth = results.truth_rates if rates and results.truth_rates is not None else results.truth
    traces.append(go.Scatter(x=periods, y=truth[k], mode="lines+markers", name="truth (confidential)",
                             line={"color": "black", "width": 2}, marker={"size": 6}))
    fig = themed_figure(traces, height=460, legend_title="method", boxmode="group",
                        xaxis={"title": "period", "type": "category"},
                        yaxis={"title": "released rate per 100,000" if rates else "released count"})
    title = f"{plain_label(region)}: release against period at ε = {fmt(epsilon)} (boxes over replicates)"
    return _title(fig, title, caption)


def _box_stats(values: np.ndarray) -> dict[str, float]:
    q = np.quantile(values, [0.05, 0.25, 0.5, 0.75, 0.95]) if values.size else np.full(5, np.nan)
    return {"lowerfence": float(q[0]), "q1": float(q[1]), "median": float(q[2]), "q3": float(q[3]),
            "upperfence": float(q[4])}


def error_distribution(results, caption: str) -> go.Figure:
    """Figure 2: relative error |ŷ − x| / x over all cells with x > 0, by method (colour) and ε (x axis); boxes are
    5–25–50–75–95 % quantiles (precomputed, so the page never ships millions of points). A linear axis: many
    errors are exactly 0, which a log axis cannot show."""
    traces = []
    methods = list(dict.fromkeys(c.label for c in results.cells))
    for i, label in enumerate(methods):
        cells = [c for c in results.cells if c.label == label]
        stats = [_box_stats(c.relative_error) for c in cells]
        traces.append(go.Box(
            x=[f"ε = {fmt(c.epsilon)}" for c in cells], name=label, marker={"color": SEQUENCE[i % len(SEQUENCE)]},
            q1=[s["q1"] for s in stats], median=[s["median"] for s in stats], q3=[s["q3"] for s in stats],
            lowerfence=[s["lowerfence"] for s in stats], upperfence=[s["upperfence"] for s in stats],
        ))
    fig = themed_figure(traces, height=460, legend_title="method", boxmode="group",
                        yaxis={"title": "relative error |ŷ − x| / x", "rangemode": "tozero"},
                        xaxis={"title": "privacy loss ε per period"})
    return _title(fig, "Relative error over every region × period (5/25/50/75/95 % quantiles)", caption)


def contraction_bars(results, caption: str, regions: Sequence[str] | None = None) -> go.Figure:
    """Figure 3: frequency of the contraction effects for the highlighted regions, one panel per effect, bars per
    (method, ε)."""
    regions = list(regions or results.regions)
    effects = [e for e in EFFECT_LABELS if any(e in c.contraction[regions[0]] for c in results.cells)]
    fig = make_subplots(rows=1, cols=len(effects), subplot_titles=[EFFECT_LABELS[e] for e in effects],
                        shared_yaxes=True)
    for i, cell in enumerate(results.cells):
        for j, effect in enumerate(effects):
            fig.add_trace(go.Bar(
                x=[plain_label(r) for r in regions], y=[cell.contraction[r].get(effect, np.nan) for r in regions],
                name=_cell_name(cell),
                legendgroup=_cell_name(cell), showlegend=j == 0, marker={"color": SEQUENCE[i % len(SEQUENCE)]},
                hovertemplate="%{x}: %{y:.3g} — " + EFFECT_TEXT[effect] + "<extra>" + _cell_name(cell) + "</extra>",
            ), row=1, col=j + 1)
    fig.update_yaxes(title="frequency over replicates × periods", row=1, col=1)
    apply_theme(fig, height=460, legend_title="method, ε")
    fig.update_layout(barmode="group")
    _title(fig, "How often the release contracts onto the boundary", caption)
    fig.update_layout(margin={"t": fig.layout.margin.t + 30})
    return fig


def posterior_draws(draws: np.ndarray, exact_mean: float, alg2_mean: float, caption: str) -> go.Figure:
    """Inference demo: Algorithm 1's posterior draws of θ with the exact posterior mean and Algorithm 2's estimate."""
    traces = [go.Histogram(x=np.asarray(draws, dtype=float), nbinsx=40, name="Algorithm 1 draws",
                           histnorm="probability density", marker={"color": SEQUENCE[0]})]
    for x, name, color in ((exact_mean, "exact posterior mean", "black"), (alg2_mean, "Algorithm 2 estimate",
                                                                              SEQUENCE[1])):
        traces.append(go.Scatter(x=[x, x], y=[0, 1], yaxis="y2", mode="lines", name=f"{name} = {fmt(x, 4)}",
                                 line={"color": color, "width": 3, "dash": "dash"}))
    fig = themed_figure(traces, height=400, yaxis2={"overlaying": "y", "range": [0, 1], "visible": False},
                        xaxis={"title": "θ", "range": [0, 1]}, yaxis={"title": "density"})
    return _title(fig, "Posterior of θ given the release and Z (k-anonymity)", caption)
