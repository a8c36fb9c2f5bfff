"""Figures of the Mechanisms page. Pure: arrays and numbers from the engine in, ``go.Figure`` out.

* :func:`original_vs_private_figure` — two chosen features of the original rows and of the private release;
* :func:`noise_by_coordinate_figure` — measured per-coordinate distortion of this run against the noise sd the
  mechanism reports (``Release.details["noise_sd_per_coordinate"]``);
* :func:`comparison_figure` — the honest comparison panel: noise per coordinate and program effectiveness of
  several mechanisms at the same (B, ε, δ), side by side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.theme import (
    COLORS,
    MECHANISM_COLORS,
    SEQUENCE,
    apply_theme,
    fmt,
    hline,
    plain_label,
    themed_figure,
)

#: Most points drawn per trace in the scatter (every point is an SVG element; thousands make the page slow).
MAX_SCATTER_POINTS = 2000


def display_rows(n: int, max_points: int = MAX_SCATTER_POINTS) -> np.ndarray:
    """Evenly spaced row indices (deterministic, no randomness) of at most ``max_points`` rows.

    >>> display_rows(10, 4).tolist()
    [0, 3, 6, 9]
    >>> display_rows(3, 10).tolist()
    [0, 1, 2]
    """
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def original_vs_private_figure(
    x: np.ndarray,
    x_priv: np.ndarray,
    feature_names: Sequence[str],
    i: int,
    j: int,
    *,
    max_points: int = MAX_SCATTER_POINTS,
    private_label: str = "private release",
) -> go.Figure:
    """Scatter of feature ``i`` against feature ``j``: original rows and released rows, on the prepared scale.

    Both traces show the same rows (at most ``max_points`` of them, evenly spaced); hovering shows the row number
    so a user can find a person's original and private position.
    """
    x = np.asarray(x, dtype=float)
    x_priv = np.asarray(x_priv, dtype=float)
    name_i, name_j = plain_label(feature_names[i]), plain_label(feature_names[j])
    rows = display_rows(x.shape[0], max_points)
    traces = []
    # The private release first, the original on top: the original is often a small cloud inside the noise.
    for label, data, color, opacity in (
        (private_label, x_priv, COLORS["private"], 0.5),
        ("original (prepared)", x, COLORS["original"], 0.7),
    ):
        traces.append(
            go.Scattergl(
                x=data[rows, i],
                y=data[rows, j],
                mode="markers",
                name=label,
                marker={"color": color, "size": 6, "opacity": opacity},
                customdata=rows,
                hovertemplate=(
                    f"row %{{customdata}}<br>{name_i} = %{{x:.4g}}<br>"
                    f"{name_j} = %{{y:.4g}}<extra>{label}</extra>"
                ),
            )
        )
    shown = "" if rows.size == x.shape[0] else f"{rows.size:,} of {x.shape[0]:,} rows shown"
    return themed_figure(
        traces, height=480,
        title={"text": "Original vs private", "subtitle": {"text": shown}} if shown else "Original vs private",
        legend={"orientation": "h", "y": -0.2, "x": 0.0}, xaxis={"title": f"{name_i} (prepared scale)"},
        yaxis={"title": f"{name_j} (prepared scale)"},
    )


def noise_by_coordinate_figure(
    feature_names: Sequence[str],
    measured_sd: Sequence[float] | np.ndarray,
    *,
    reported_sd: float | None = None,
    comparison_sd: Mapping[str, float] | None = None,
    measured_label: str = "measured in this run: sd of (private − original)",
) -> go.Figure:
    """Bars: the measured spread of (private − original) per feature; lines: noise sd reported by mechanisms.

    Parameters
    ----------
    feature_names, measured_sd
        One bar per feature (computed from this run's release).
    reported_sd
        The mechanism's own per-coordinate noise sd (``Release.details["noise_sd_per_coordinate"]``), drawn as a
        dashed line; None for mechanisms without additive noise (k-anonymity).
    comparison_sd
        label → per-coordinate sd of other mechanisms at the same (B, ε, δ) (e.g. the Gaussian mechanism),
        drawn as dotted lines.
    """
    bars = (
        go.Bar(
            x=[plain_label(name) for name in feature_names],
            y=list(measured_sd),
            name=measured_label,
            marker_color=COLORS["private"],
            hovertemplate="%{x}: sd %{y:.6g}<extra></extra>",
        )
    )
    lines = []
    if reported_sd is not None and np.isfinite(reported_sd):
        lines.append(hline(float(reported_sd), line={"color": COLORS["text"], "dash": "dash", "width": 2},
                           text=f"reported {fmt(reported_sd)}"))
    for index, (label, sd) in enumerate((comparison_sd or {}).items()):
        if sd is None or not np.isfinite(sd):
            continue
        lines.append(hline(float(sd), line={"color": SEQUENCE[(index + 2) % len(SEQUENCE)], "dash": "dot", "width": 2},
                           text=f"{label}: {fmt(sd)}", position="bottom right"))
    return themed_figure([bars], height=420, title="Noise per coordinate (prepared scale)", xaxis={"title": ""},
                         yaxis={"title": "standard deviation"}, showlegend=True,
                         legend={"orientation": "h", "y": -0.35, "x": 0.0}, lines=lines)


def comparison_figure(
    labels: Sequence[str],
    kinds: Sequence[str],
    noise_sd: Sequence[float | None],
    utility: Sequence[float | None],
    *,
    utility_label: str,
    nonprivate_utility: float | None = None,
) -> go.Figure:
    """Two panels of bars, one bar per mechanism: noise per coordinate (left) and program effectiveness (right).

    ``kinds`` gives each mechanism's ``KIND`` for its colour. A missing value (None/NaN) is drawn as no bar. The
    non-private program effectiveness, if given, is a dashed line in the right panel.
    """
    colors = [MECHANISM_COLORS.get(kind, COLORS["primary"]) for kind in kinds]

    def clean(values: Sequence[float | None]) -> list[float | None]:
        return [None if v is None or not np.isfinite(v) else float(v) for v in values]

    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Noise sd per coordinate (lower = less noise)", utility_label),
        horizontal_spacing=0.14,
    )
    fig.add_trace(
        go.Bar(
            x=list(labels),
            y=clean(noise_sd),
            marker_color=colors,
            name="noise sd per coordinate",
            text=[fmt(v) for v in clean(noise_sd)],
            textposition="outside",
            hovertemplate="%{x}<br>noise sd %{y:.6g}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=list(labels),
            y=clean(utility),
            marker_color=colors,
            name=utility_label,
            text=[fmt(v) for v in clean(utility)],
            textposition="outside",
            hovertemplate="%{x}<br>" + utility_label + " %{y:.6g}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    if nonprivate_utility is not None and np.isfinite(nonprivate_utility):
        fig.add_hline(
            y=float(nonprivate_utility),
            line={"color": COLORS["nonprivate"], "dash": "dash", "width": 2},
            annotation_text=f"non-private {fmt(nonprivate_utility)}",
            annotation_position="top left",
            row=1,
            col=2,
        )
    fig.update_layout(title="Same (B, ε, δ), different mechanisms", bargap=0.35)
    return apply_theme(fig, height=440)


def projected_columns_figure(
    z: np.ndarray,
    i: int = 0,
    j: int = 1,
    *,
    labels: np.ndarray | None = None,
    max_points: int = MAX_SCATTER_POINTS,
) -> go.Figure:
    """The JL release's projected columns z_i against z_j (k ≥ 2), coloured by the outcome class when given.

    Z = XP + noise lives in k projected dimensions with P secret: its columns are not the data's features, so no
    original-vs-private comparison on the same axes is possible (or meaningful). With k = 1 the single column is
    drawn against the row number.
    """
    z = np.asarray(z, dtype=float)
    rows = display_rows(z.shape[0], max_points)
    one = z.shape[1] == 1
    xs = rows.astype(float) if one else z[rows, i]
    ys = z[rows, 0] if one else z[rows, j]
    traces = []
    groups = [(None, np.ones(rows.size, dtype=bool))]
    if labels is not None:
        lab = np.asarray(labels)[rows]
        classes = np.unique(lab)
        if classes.size <= 10:
            groups = [(c, lab == c) for c in classes]
    for index, (cls, mask) in enumerate(groups):
        name = "released rows" if cls is None else f"outcome = {fmt(float(cls))}"
        traces.append(
            go.Scattergl(
                x=xs[mask],
                y=ys[mask],
                mode="markers",
                name=name,
                marker={"color": COLORS["private"] if cls is None else SEQUENCE[index % len(SEQUENCE)], "size": 6,
                        "opacity": 0.6},
                customdata=rows[mask],
                hovertemplate="row %{customdata}<br>x = %{x:.4g}<br>y = %{y:.4g}<extra>" + name + "</extra>",
            )
        )
    shown = "" if rows.size == z.shape[0] else f"{rows.size:,} of {z.shape[0]:,} rows shown"
    title = "The release: projected columns (P is secret)"
    return themed_figure(
        traces, height=480, title={"text": title, "subtitle": {"text": shown}} if shown else title,
        legend={"orientation": "h", "y": -0.2, "x": 0.0},
        xaxis={"title": "row" if one else f"projected column z{i + 1}"},
        yaxis={"title": "projected column z1" if one else f"projected column z{j + 1}"},
    )


def distance_recovery_figure(true: np.ndarray, estimate: np.ndarray, sd: np.ndarray,
                             color: str | None = None) -> go.Figure:
    """Algorithm 2 (Recover Distance): the unbiased estimate of ‖x_i − x_j‖² from Z against the true value.

    Error bars: ± 1 sd of the estimator (the corrected variance). The diagonal is a perfect recovery; the
    estimator is unbiased, so the cloud is centred on it, and its spread is what a data user working on Z faces.
    """
    true = np.asarray(true, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    sd = np.asarray(sd, dtype=float)
    top = float(max(true.max(initial=0.0), 1e-9))
    traces = [
        go.Scatter(x=[0.0, top], y=[0.0, top], mode="lines", name="perfect recovery",
                   line={"color": COLORS["nonprivate"], "dash": "dash", "width": 1.5}, hoverinfo="skip"),
        go.Scatter(
            x=true,
            y=estimate,
            mode="markers",
            name="pair of records",
            marker={"color": color or COLORS["private"], "size": 6, "opacity": 0.6},
            error_y={"type": "data", "array": sd.tolist(), "visible": True, "thickness": 0.6,
                     "color": "rgba(120,120,120,0.35)"},
            hovertemplate="true ‖x_i − x_j‖² = %{x:.4g}<br>estimate = %{y:.4g}<extra></extra>",
        ),
    ]
    return themed_figure(
        traces, height=480, title="Distance recovery from the release (Algorithm 2)",
        xaxis={"title": "true squared distance ‖x_i − x_j‖² (prepared scale)"},
        yaxis={"title": "estimate ‖z_i − z_j‖² − 2kσ²"}, legend={"orientation": "h", "y": -0.2, "x": 0.0},
    )
