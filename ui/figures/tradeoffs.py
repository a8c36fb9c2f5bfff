"""Figures of the Tradeoffs page. Pure: tidy frames from the engine's sweep in, ``go.Figure`` out.

:func:`points_frame` turns the engine's sweep summary into a *points frame* with one row per grid point and
mechanism:

=============  ==============================================================================================
column         meaning
=============  ==============================================================================================
``point_id``   stable id of the grid point (goes into ``customdata`` so a click selects that configuration)
``series``     legend label (one curve per mechanism / parameter tuple)
``kind``       mechanism ``KIND`` (colour, from the theme)
``b``          target distance B of the point
``x``, ``y``   the two plotted quantities (means over repetitions)
``x_err``      optional half-width of the 95 % interval of x (``y_err`` likewise)
``pareto``     optional bool: on the Pareto frontier of this (x, y) pair
``hover``      optional extra hover text (exact values)
``no_better_than``  optional: the rule that uses no data the point is no better than ("" if none)
=============  ==============================================================================================

Reference points (non-private, classic DP, k-anonymity, the chosen configuration) are :class:`Marker` objects,
drawn as stars in fixed colours (non-private black, classic DP vermillion, chosen reddish purple).

The best rule that uses no data is a ``trivial`` pair ``(rule, value)`` (the engine's
``SweepResult.best_trivial``): a dashed line on the program-metric axis, labelled with :func:`trivial_label`;
points and bars no better than a rule that uses no data are drawn hollow with an ✕ (bars hatched) and say so on
hover (:func:`flag_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.theme import (
    COLORS,
    LINE_WIDTH,
    MARKER_SIZE,
    MECHANISM_COLORS,
    SEQUENCE,
    Line,
    flat_axis,
    fmt,
    hline,
    plain_label,
    themed_figure,
)


def _baseline_kind() -> str:
    """KIND of the non-DP baseline the charts mark (the first registered mechanism without an (ε, δ) guarantee)."""
    from engine.mechanisms import MECHANISMS

    return next((kind for kind, cls in MECHANISMS.items() if not cls.TAGS.differentially_private), "")


#: Marker role → (colour, symbol, legend text prefix).
ROLE_STYLE: dict[str, tuple[str, str]] = {
    "nonprivate": (COLORS["nonprivate"], "star"),
    "classic_dp": (COLORS["classic_dp"], "star"),
    "chosen": (COLORS["candidate"], "star"),
    "kanon": (MECHANISM_COLORS.get(_baseline_kind(), COLORS["trivial"]), "star-diamond"),
}


def points_frame(
    summary: pd.DataFrame,
    *,
    x_metric: str,
    y_metric: str,
    series: str,
    kind: str,
    pareto: Sequence[bool] | None = None,
    include_references: bool = False,
) -> pd.DataFrame:
    """The figures' points frame (see :mod:`ui.figures.tradeoffs`) from a sweep summary: TDP (and B = 2) points.

    ``point_id`` is ``"<kind>:<point>"`` so that a click identifies the mechanism and the grid point.
    """
    if summary.empty or f"{x_metric}_mean" not in summary or f"{y_metric}_mean" not in summary:
        return pd.DataFrame(columns=["point_id", "series", "kind", "b", "x", "y", "x_err", "y_err", "pareto"])
    frame = summary.copy()
    if pareto is not None:
        frame["pareto"] = list(pareto)
    keep = frame["reference"].isin(["tdp", "classic-dp"] + (["non-private"] if include_references else []))
    frame = frame[keep]
    budget = frame.apply(
        lambda r: f"ε1={r['epsilon1']:g}, ε2={r['epsilon2']:g}" if np.isfinite(r["epsilon1"]) else "", axis=1
    )
    n_budgets = budget.nunique()
    out = pd.DataFrame(
        {
            "point_id": [f"{kind}:{int(p)}" for p in frame["point"]],
            "series": [series if n_budgets <= 1 else f"{series} ({b})" for b in budget],
            "kind": kind,
            "b": frame["b"].to_numpy(float),
            "x": frame[f"{x_metric}_mean"].to_numpy(float),
            "y": frame[f"{y_metric}_mean"].to_numpy(float),
            "x_err": ((frame[f"{x_metric}_hi"] - frame[f"{x_metric}_lo"]) / 2).to_numpy(float),
            "y_err": ((frame[f"{y_metric}_hi"] - frame[f"{y_metric}_lo"]) / 2).to_numpy(float),
            "pareto": frame["pareto"].to_numpy(bool) if "pareto" in frame else False,
            "hover": [
                f"ε = {e:.6g}, δ = {d:.3g}<br>implied classic DP ε' = {ie:.4g}"
                for e, d, ie in zip(frame["epsilon"], frame["delta"], frame["implied_epsilon"], strict=True)
            ],
            "no_better_than": frame["no_better_than"].fillna("").astype(str).to_numpy()
            if "no_better_than" in frame else "",
        }
    )
    return out.reset_index(drop=True)


#: Legend entry of the points no better than a rule that uses no data.
FLAGGED_NAME = "no better than a rule that uses no data"
#: Marker symbol of a flagged point (over its series' hollow marker) and the hatch of a flagged bar.
FLAGGED_SYMBOL = "x"
FLAGGED_PATTERN = "x"


def trivial_label(rule: str, value: float) -> str:
    """The dashed line's label.

    >>> trivial_label("target nobody", 0.69712)
    'target nobody: 0.697 — a rule that uses no data'
    """
    return f"{plain_label(rule)}: {fmt(value)} — a rule that uses no data"


def flag_text(rule: str) -> str:
    """Hover text of a result no better than ``rule`` ("" when not flagged).

    >>> flag_text("target nobody"), flag_text("")
    ("no better than 'target nobody'", '')
    """
    return f"no better than '{plain_label(rule)}'" if rule else ""


def _trivial_lines(trivial: tuple[str, float] | None, position: str = "bottom left") -> list[Line]:
    if trivial is None or not _finite(trivial[1]):
        return []
    return [hline(float(trivial[1]), line={"color": COLORS["trivial"], "dash": "dash", "width": 2},
                  text=trivial_label(*trivial), position=position, font={"color": COLORS["trivial"], "size": 13})]


@dataclass(frozen=True)
class Marker:
    """A reference point drawn as a star: ``role`` in :data:`ROLE_STYLE` picks its colour."""

    label: str
    x: float
    y: float
    role: str = "nonprivate"


def series_color(kind: str, index: int) -> str:
    """The mechanism's theme colour, else the qualitative sequence."""
    return MECHANISM_COLORS.get(kind, SEQUENCE[index % len(SEQUENCE)])


def _finite(value: float | None) -> bool:
    return value is not None and bool(np.isfinite(value))


def _error(frame: pd.DataFrame, column: str) -> dict | None:
    if column not in frame or frame[column].isna().all():
        return None
    return {"type": "data", "array": frame[column].fillna(0.0).to_numpy(float), "visible": True, "thickness": 1.2}


def _marker_traces(markers: Sequence[Marker]) -> list[go.Scatter]:
    traces = []
    for marker in markers:
        if not (_finite(marker.x) and _finite(marker.y)):
            continue
        color, symbol = ROLE_STYLE.get(marker.role, (COLORS["text"], "star"))
        traces.append(
            go.Scatter(
                x=[marker.x],
                y=[marker.y],
                mode="markers",
                name=marker.label,
                marker={"symbol": symbol, "size": MARKER_SIZE + 9, "color": color, "line": {"width": 1, "color": "white"}},
                hovertemplate=f"{marker.label}<br>x = %{{x:.6g}}<br>y = %{{y:.6g}}<extra></extra>",
            )
        )
    return traces


def tradeoff_figure(
    points: pd.DataFrame,
    *,
    x_label: str,
    y_label: str,
    title: str,
    markers: Sequence[Marker] = (),
    selected: str | None = None,
    show_pareto: bool = True,
    trivial: tuple[str, float] | None = None,
    height: int = 480,
) -> go.Figure:
    """The paper's Figure 3 for any pair: one curve per series through the B grid, stars at reference points.

    Points on the Pareto frontier (``pareto`` column) are circled; the frontier itself is a thick grey line. The
    point whose ``point_id`` equals ``selected`` is ringed in the chosen colour. Every series point carries its
    ``point_id`` in ``customdata`` (so ``st.plotly_chart(on_select=...)`` reports which configuration was clicked).
    ``trivial`` = (rule, value) of the best rule that uses no data on the y quantity: a dashed horizontal line.
    Points whose ``no_better_than`` is set are hollow with an ✕ (one legend entry, :data:`FLAGGED_NAME`).
    """
    traces = []
    if show_pareto and "pareto" in points and points["pareto"].any():
        front = points[points["pareto"].astype(bool)].sort_values("x")
        traces.append(
            go.Scatter(
                x=front["x"],
                y=front["y"],
                mode="lines",
                name="Pareto frontier",
                line={"color": "rgba(80,80,80,0.35)", "width": LINE_WIDTH * 4},
                hoverinfo="skip",
            )
        )
    for index, (series, group) in enumerate(points.groupby("series", sort=False)):
        group = group.sort_values("b")
        kind = str(group["kind"].iloc[0]) if "kind" in group else ""
        color = series_color(kind, index)
        flags = [str(f) for f in group["no_better_than"]] if "no_better_than" in group else [""] * len(group)
        hover = [
            "<br>".join(t for t in (str(h), flag_text(f)) if t)
            for h, f in zip(group["hover"] if "hover" in group else [""] * len(group), flags, strict=True)
        ]
        traces.append(
            go.Scatter(
                x=group["x"],
                y=group["y"],
                mode="lines+markers",
                name=str(series),
                line={"color": color, "width": LINE_WIDTH},
                marker={
                    "size": MARKER_SIZE,
                    "color": color,
                    "symbol": ["circle-open" if f else "circle" for f in flags],
                    "line": {
                        # an open (flagged) marker's outline is its series colour, this wide
                        "width": [3 if p else 2 if f else 0 for p, f in zip(
                            group["pareto"] if "pareto" in group else [False] * len(group), flags, strict=True)],
                        "color": COLORS["text"],
                    },
                },
                error_x=_error(group, "x_err"),
                error_y=_error(group, "y_err"),
                customdata=[[str(i), float(b), str(h)] for i, b, h in zip(group["point_id"], group["b"], hover, strict=True)],
                hovertemplate=(
                    "B = %{customdata[1]:.4g}<br>" + x_label + " = %{x:.6g}<br>" + y_label
                    + " = %{y:.6g}<br>%{customdata[2]}<extra>" + str(series) + "</extra>"
                ),
            )
        )
    if "no_better_than" in points:
        flagged = points[points["no_better_than"].fillna("").astype(str) != ""]
        if not flagged.empty:
            traces.append(
                go.Scatter(
                    x=flagged["x"],
                    y=flagged["y"],
                    mode="markers",
                    name=FLAGGED_NAME,
                    marker={"symbol": FLAGGED_SYMBOL, "size": MARKER_SIZE - 1, "color": COLORS["trivial"]},
                    customdata=[[str(i), float(b), flag_text(str(f))]
                                for i, b, f in zip(flagged["point_id"], flagged["b"], flagged["no_better_than"],
                                                   strict=True)],
                    hovertemplate="B = %{customdata[1]:.4g}<br>%{customdata[2]}<extra></extra>",
                )
            )
    if selected is not None and "point_id" in points:
        chosen = points[points["point_id"].astype(str) == str(selected)]
        if not chosen.empty:
            traces.append(
                go.Scatter(
                    x=chosen["x"],
                    y=chosen["y"],
                    mode="markers",
                    name="selected configuration",
                    marker={
                        "symbol": "circle-open",
                        "size": MARKER_SIZE + 14,
                        "color": COLORS["candidate"],
                        "line": {"width": 4, "color": COLORS["candidate"]},
                    },
                    hoverinfo="skip",
                )
            )
    traces += _marker_traces(markers)
    # All values equal up to rounding (every approach approving everyone): a readable range, not a zoom into the
    # last bits of the floats.
    xs = [*points["x"].tolist(), *(m.x for m in markers)] if "x" in points else [m.x for m in markers]
    ys = [*points["y"].tolist(), *(m.y for m in markers), *([trivial[1]] if trivial is not None else [])] if (
        "y" in points) else [m.y for m in markers]
    return themed_figure(traces, height=height, title=title, xaxis={"title": x_label, **flat_axis(xs)},
                         yaxis={"title": y_label, **flat_axis(ys)}, clickmode="event+select",
                         lines=_trivial_lines(trivial))


def privacy_privacy_figure(
    points: pd.DataFrame,
    *,
    x_label: str = "singling-out protection",
    y_label: str = "attribute-inference protection",
    markers: Sequence[Marker] = (),
    height: int = 480,
) -> go.Figure:
    """Singling-out against attribute-inference protection, one marker per grid point coloured by log10(B).

    The two protections need not move together (attribute inference is neither monotone in B nor tends to 1),
    which is what this plot shows. Series are told apart by marker symbol.
    """
    traces = []
    symbols = ("circle", "square", "diamond", "triangle-up", "cross", "x")
    b_all = points["b"].to_numpy(float) if not points.empty else np.array([1.0])
    cmin, cmax = float(np.log10(b_all.min())), float(np.log10(b_all.max()))
    if cmin == cmax:
        cmin, cmax = cmin - 0.5, cmax + 0.5
    ticks = np.array([0.05, 0.1, 0.25, 0.5, 1.0, 2.0])
    for index, (series, group) in enumerate(points.groupby("series", sort=False)):
        group = group.sort_values("b")
        traces.append(
            go.Scatter(
                x=group["x"],
                y=group["y"],
                mode="lines+markers",
                name=str(series),
                line={"color": "rgba(120,120,120,0.4)", "width": 1.5},
                marker={
                    "size": MARKER_SIZE + 3,
                    "symbol": symbols[index % len(symbols)],
                    "color": np.log10(group["b"].to_numpy(float)),
                    "colorscale": "Viridis",
                    "cmin": cmin,
                    "cmax": cmax,
                    "showscale": index == 0,
                    "colorbar": {
                        "title": {"text": "B"},
                        "tickvals": np.log10(ticks).tolist(),
                        "ticktext": [fmt(t) for t in ticks],
                        "thickness": 14,
                    },
                    "line": {"width": 1, "color": "white"},
                },
                customdata=[[str(i), float(b)] for i, b in zip(group["point_id"], group["b"], strict=True)],
                hovertemplate=(
                    "B = %{customdata[1]:.4g}<br>" + x_label + " = %{x:.6g}<br>" + y_label
                    + " = %{y:.6g}<extra>" + str(series) + "</extra>"
                ),
            )
        )
    traces += _marker_traces(markers)
    # The subtitle keeps the title inside a half-width column (as one line it was cut off there).
    return themed_figure(traces, height=height,
                         title={"text": "Privacy against privacy", "subtitle": {"text": "the two attacks need not agree"}},
                         xaxis={"title": x_label}, yaxis={"title": y_label},
                         legend={"x": 0.0, "y": -0.25, "orientation": "h"})


def comparison_bars_figure(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    roles: Sequence[str],
    errors: Sequence[float | None] | None = None,
    y_label: str,
    title: str = "Program effectiveness by approach",
    flags: Sequence[str] | None = None,
    trivial: tuple[str, float] | None = None,
) -> go.Figure:
    """The paper's Figure 2: one bar per approach (non-private, classic DP, k-anonymity, targeted DP, …).

    ``roles`` picks each bar's colour: ``"nonprivate"``, ``"classic_dp"``, ``"chosen"``, ``"kanon"`` or a
    mechanism ``KIND``. ``errors`` are half-widths of 95 % intervals (None = no bar). ``flags`` names, per bar, the
    rule that uses no data it is no better than ("" if none): such a bar is hatched (:data:`FLAGGED_PATTERN`), its
    label ends in ✕ and its hover says so. ``trivial`` = (rule, value): a dashed horizontal line.
    """
    marks = [str(f) for f in flags] if flags is not None else [""] * len(values)
    palette = {role: style[0] for role, style in ROLE_STYLE.items()}
    colors = [palette.get(role, MECHANISM_COLORS.get(role, COLORS["primary"])) for role in roles]
    error_y = None
    if errors is not None:
        arr = [0.0 if e is None or not np.isfinite(e) else float(e) for e in errors]
        error_y = {"type": "data", "array": arr, "visible": True}
    traces = [
        go.Bar(
            x=list(labels),
            y=[float(v) for v in values],
            marker={"color": colors, "pattern": {"shape": [FLAGGED_PATTERN if f else "" for f in marks],
                                                 "fgcolor": COLORS["trivial"], "solidity": 0.3}},
            error_y=error_y,
            text=[fmt(v) + (" ✕" if f else "") for v, f in zip(values, marks, strict=True)],
            textposition="outside",
            customdata=[[flag_text(f)] for f in marks],
            hovertemplate="%{x}<br>" + y_label + " = %{y:.6g}<br>%{customdata[0]}<extra></extra>",
            showlegend=False,  # the bars are named on the axis; the legend names only the dashed line
        )
    ]
    legend = False
    lines = []
    if trivial is not None and _finite(trivial[1]):
        # The line's label goes in the legend above the plot: written on the line it overlapped the bars' values.
        lines.append(hline(float(trivial[1]), line={"color": COLORS["trivial"], "dash": "dash", "width": 2}))
        traces.append(go.Scatter(x=[None], y=[None], mode="lines", name=trivial_label(*trivial), hoverinfo="skip",
                                 line={"color": COLORS["trivial"], "dash": "dash", "width": 2}))
        legend = True
    fig = themed_figure(traces, height=440, title=title, yaxis={"title": y_label}, xaxis={"title": ""}, bargap=0.35,
                        showlegend=legend, lines=lines,
                        legend={"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.02, "yanchor": "bottom"})
    if legend:  # room for the legend's line between the title and the plot (in a half-width column they overlapped)
        fig.update_layout(margin_t=100)
    return fig


def hypothesis_testing_figure(
    curves: Sequence[tuple[str, str, Sequence[float], Sequence[float]]],
    *,
    distance: float,
    height: int = 460,
) -> go.Figure:
    """The best distinguishing attacker's false-negative rate against its false-positive rate.

    ``curves`` holds ``(label, kind, alphas, betas)``, one per mechanism (β is a lower bound, exact for the
    Gaussian). The diagonal β = 1 − α is a coin flip: a curve on it means perfect protection; a curve at the
    axes means the two records can be told apart without error.
    """
    traces = [
        go.Scatter(
            x=[0.0, 1.0],
            y=[1.0, 0.0],
            mode="lines",
            name="coin flip (perfect protection)",
            line={"color": COLORS["infeasible"], "dash": "dash", "width": 2},
            hoverinfo="skip",
        )
    ]
    for index, (label, kind, alphas, betas) in enumerate(curves):
        traces.append(
            go.Scatter(
                x=np.asarray(alphas, dtype=float),
                y=np.asarray(betas, dtype=float),
                mode="lines",
                name=label,
                line={"color": series_color(kind, index), "width": LINE_WIDTH},
                hovertemplate="false-positive rate %{x:.4f}<br>false-negative rate ≥ %{y:.6f}<extra>"
                + label
                + "</extra>",
            )
        )
    return themed_figure(traces, height=height,
                         title=f"What a distinguishing attacker can do (two records {fmt(distance)} apart)",
                         xaxis={"title": "false-positive rate α", "range": [0, 1]},
                         yaxis={"title": "smallest false-negative rate β", "range": [0, 1.02]})


#: Line dash per δ_fail quantity of :func:`delta_fail_figure`.
DELTA_FAIL_STYLES: dict[str, tuple[str, str]] = {
    "delta_fail": ("solid", "per-pair bound (the guarantee's δ)"),
    "delta_fail_proof_event": ("dash", "exact probability of the proof's event"),
    "delta_fail_paper": ("dot", "the paper's printed bound"),
}
#: Relation → colour of :func:`delta_fail_figure`.
RELATION_COLORS: dict[str, str] = {"row": COLORS["primary"], "element": COLORS["classic_dp"]}


def delta_fail_figure(
    curves: Sequence[tuple[str, str, Mapping[str, Sequence[float]]]],
    *,
    floor: float = 1e-12,
    title: str = "JL projection + Laplace: ε against δ_fail at fixed noise",
    height: int = 460,
) -> go.Figure:
    """Privacy against privacy for the JL release: ε against δ_fail at FIXED noise (fixed utility), log δ axis.

    ``curves`` holds ``(label, relation, curve)``; ``curve`` is the engine's
    ``engine.mechanisms.jl_laplace.delta_fail_curve`` dict (``epsilon``, ``delta_fail``,
    ``delta_fail_proof_event``, ``delta_fail_paper``). One colour per relation, one dash per quantity
    (:data:`DELTA_FAIL_STYLES`). δ ≥ 1 guarantees nothing: that band is shaded and labelled "vacuous"; values
    above the axis (the paper's bound is not capped and is infinite where it gives no bound) are drawn at the top,
    values below ``floor`` at the floor (hover shows the exact value).
    """
    traces = []
    eps_all = [float(e) for _, _, c in curves for e in c["epsilon"]] or [0.0, 1.0]
    top = 10.0
    traces.append(
        go.Scatter(
            x=[min(eps_all), max(eps_all), max(eps_all), min(eps_all), min(eps_all)],
            y=[1.0, 1.0, top, top, 1.0],
            fill="toself",
            fillcolor="rgba(184,184,184,0.35)",
            line={"width": 0},
            mode="lines",
            name="δ ≥ 1: vacuous (no guarantee)",
            hoverinfo="skip",
        )
    )
    for index, (label, relation, curve) in enumerate(curves):
        eps = np.asarray(curve["epsilon"], dtype=float)
        color = RELATION_COLORS.get(relation, SEQUENCE[index % len(SEQUENCE)])
        for key, (dash, text) in DELTA_FAIL_STYLES.items():
            if key not in curve:
                continue
            raw = np.asarray(curve[key], dtype=float)
            shown = np.clip(np.where(np.isfinite(raw), raw, top), floor, top)
            traces.append(
                go.Scatter(
                    x=eps,
                    y=shown,
                    mode="lines",
                    name=f"{label}: {text}",
                    line={"color": color, "dash": dash, "width": LINE_WIDTH},
                    customdata=[[f"{v:.3g}"] for v in raw],
                    hovertemplate="ε = %{x:.4g}<br>δ_fail = %{customdata[0]}<extra>" + f"{label}: {text}"
                    + "</extra>",
                )
            )
    return themed_figure(
        traces, height=height, title=title,
        xaxis={"title": "ε claimed (the noise stays the same: c = ε × Laplace scale)"},
        yaxis={"title": "δ_fail (log scale)", "type": "log", "range": [float(np.log10(floor)), float(np.log10(top))],
               "exponentformat": "power"},
        legend={"x": 0.0, "y": -0.3, "orientation": "h"},
    )


def sweep_report_figures(result: Any) -> list[tuple[str, go.Figure]]:
    """The report's Figure-3-style charts of a stored sweep (:class:`engine.sweeps.SweepResult`): the headline
    program metric against each measured protection, with the best rule that uses no data as a dashed line and the
    points no better than it flagged, as on the Tradeoffs page. One (title, figure) per protection with points."""
    from engine.evaluation.programs import METRICS
    from engine.sweeps import PROTECTION_COLUMNS

    config = result.config
    metric = config.program.headline_metric
    summary = result.flagged_summary(metric)
    best = result.best_trivial(metric)
    trivial = None if best is None else (best.rule, best.value)
    frames = []
    for protection in result.protection_columns:
        points = points_frame(summary, x_metric=protection, y_metric=metric, series=config.mechanism,
                              kind=config.mechanism)
        if points.empty:
            continue
        label = next((k for k, v in PROTECTION_COLUMNS.items() if v == protection), protection).replace("_", " ")
        frames.append((f"Program effectiveness against {label} protection",
                       tradeoff_figure(points, x_label=f"{label} protection",
                                       y_label=METRICS[metric].label if metric in METRICS else metric,
                                       title=f"{config.mechanism}: {metric} vs {label}", trivial=trivial)))
    return frames
