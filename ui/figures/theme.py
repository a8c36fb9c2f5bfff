"""One look for every chart: colours, fonts legible on a projector, units and number formats.

Every figure builder makes its figure with :func:`themed_figure` (one ``go.Figure`` call, the cheapest) or calls
:func:`apply_theme` last (figures with subplots). Colours have a fixed meaning across pages so a workshop
audience learns them once:

* ``COLORS["feasible"]`` / ``COLORS["infeasible"]`` — Theorem 1's feasible and ruled-out regions;
* ``COLORS["classic_dp"]`` — anything about classic DP (the B = 2 line, the classic-DP marker);
* ``COLORS["candidate"]`` — the designer's chosen configuration (B, ε, δ);
* ``COLORS["nonprivate"]`` — the non-private baseline;
* ``COLORS["trivial"]`` — the best rule that uses no data (target nobody, approve everyone, …) and the results no
  better than it;
* ``MECHANISM_COLORS[kind]`` — one colour per mechanism ``KIND``, in registration order
  (``engine.mechanisms.MECHANISMS``: a mechanism registered later gets the next colour), and the role
  ``"classic-dp"``;
* ``SEQUENCE`` — a colour-blind-safe qualitative sequence (Okabe–Ito) for anything else (e.g. one line per γ).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

#: Okabe–Ito palette: distinguishable for the common colour-vision deficiencies and in greyscale print.
SEQUENCE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",
)

COLORS: dict[str, str] = {
    "primary": "#2f6f8f",  # matches .streamlit/config.toml primaryColor
    "feasible": "#009E73",
    "infeasible": "#B8B8B8",
    "classic_dp": "#D55E00",
    "candidate": "#CC79A7",
    "nonprivate": "#000000",
    "trivial": "#5a5a5a",
    "original": "#0072B2",
    "private": "#E69F00",
    "grid": "#e3e6e5",
    "text": "#1f2a30",
}

#: Colours of the mechanisms, in registration order (Okabe–Ito without vermillion, which means classic DP).
MECHANISM_PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#CC79A7", "#009E73", "#56B4E9", "#F0E442", "#000000")


class _MechanismColors(Mapping):
    """KIND → colour: the registered mechanisms in order of registration (looked up when asked), and the
    ``"classic-dp"`` role."""

    ROLES = {"classic-dp": "#D55E00"}

    def _kinds(self) -> list[str]:
        from engine.mechanisms import MECHANISMS

        return list(MECHANISMS)

    def __getitem__(self, kind: str) -> str:
        if kind in self.ROLES:
            return self.ROLES[kind]
        kinds = self._kinds()
        if kind not in kinds:
            raise KeyError(kind)
        return MECHANISM_PALETTE[kinds.index(kind) % len(MECHANISM_PALETTE)]

    def __iter__(self):
        return iter([*self._kinds(), *self.ROLES])

    def __len__(self) -> int:
        return len(self._kinds()) + len(self.ROLES)


MECHANISM_COLORS: Mapping[str, str] = _MechanismColors()

FONT_FAMILY = "Inter, 'Source Sans Pro', 'Helvetica Neue', Arial, sans-serif"
#: Base font size (px). 16 px axis labels stay readable from the back of a room on a 1080p projector.
FONT_SIZE = 16
TITLE_SIZE = 20
LINE_WIDTH = 3
MARKER_SIZE = 11

#: Axis titles with units, reused everywhere so the same quantity is always labelled the same way.
AXIS: dict[str, str] = {
    "b": "target distance B (prepared units, L2)",
    "epsilon": "privacy loss ε",
    "delta": "δ",
    "gamma": "targeting accuracy γ",
    "gamma_max": "highest accuracy not ruled out, γ_max",
    "b_max": "largest feasible B",
    "row_norm": "row L2 norm",
}



def plain_label(text: object) -> str:
    r"""User text (a column name, a region, a file name) made safe for a Plotly text field.

    Plotly renders a subset of HTML in titles, axis and tick labels, legend entries and hover text (``<b>``,
    ``<br>``, ``<a href>``, ``<span style>``) and decodes character entities, so a column named
    ``<a href="http://x">pay</a>`` would draw a link. Escaping ``&``, ``<`` and ``>`` makes Plotly show the name as
    typed; ``%{`` (the start of a hover-template field) is broken with a zero-width space so a name cannot pull
    in another field's value.

    >>> plain_label('<a href="http://x">pay</a> & %{y}')
    '&lt;a href="http://x"&gt;pay&lt;/a&gt; &amp; %\u200b{y}'
    """
    return html.escape(str(text), quote=False).replace("%{", "%\u200b{")

def fmt(value: float | int | None, digits: int = 3) -> str:
    """Round for display: ``digits`` significant digits, scientific notation for very small/large values.

    The exact value belongs in hover text (:func:`exact`); this is for labels and metrics.

    >>> fmt(0.4)
    '0.4'
    >>> fmt(0.123456)
    '0.123'
    >>> fmt(1e-4)
    '1e-04'
    >>> fmt(12345.6)
    '12,346'
    >>> fmt(None)
    '—'
    """
    if value is None:
        return "—"
    v = float(value)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    a = abs(v)
    if a == 0:
        return "0"
    if a < 1e-3 or a >= 1e6:
        mantissa, exponent = f"{v:.{max(digits - 1, 0)}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{exponent}"
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"



def fmt_param(value: float | int | None) -> str:
    """A privacy parameter (B, ε) for display: 6 significant digits everywhere, like the guarantee's headline, so
    the sidebar, the pages and the export never show one ε as 3.9999 in one place and 4 in another.

    >>> fmt_param(3.0 + 0.9999), fmt_param(0.4)
    ('3.9999', '0.4')
    """
    return fmt(value, 6)


def exact(value: float | int | None) -> str:
    """Full precision for hover text and tooltips (``repr`` of the float).

    >>> exact(0.1 + 0.2)
    '0.30000000000000004'
    """
    if value is None:
        return "—"
    return repr(float(value))


def _white_template() -> go.layout.Template:
    """Plotly's ``plotly_white`` for the trace types the Studio draws (scatter, bar, histogram, box, heatmap) and
    2-D axes only: built and validated once, at import.

    Assigning a template copies and validates it, and ``plotly_white`` also holds defaults for 18 trace types and
    the polar, ternary, 3-D and map axes the Studio never draws: assigning it was 17 of the 39 ms of CPU that
    theming one figure took (several figures per page, at every click). The charts drawn are the same."""

    white = pio.templates["plotly_white"].to_plotly_json()
    drawn = {"scatter", "scattergl", "bar", "histogram", "box", "heatmap"}
    layout = {k: v for k, v in white["layout"].items() if k not in {"polar", "ternary", "scene", "geo", "mapbox"}}
    return go.layout.Template({"data": {k: v for k, v in white["data"].items() if k in drawn}, "layout": layout})


WHITE_TEMPLATE = _white_template()
# Every figure gets the template when it is constructed (plotly copies the default template into each new figure,
# without validating it again): the Studio's own figures are the only ones these processes draw. Importing
# streamlit sets plotly's default to its own theme; apply_theme puts ours back (and on the figure) if so.
pio.templates["studio_white"] = WHITE_TEMPLATE
pio.templates.default = "studio_white"


def _restore_white_template() -> bool:
    """Make the white template plotly's default again if streamlit, imported after this module, set its own; True
    when it did (the figure at hand was then made with streamlit's and needs ours)."""
    if pio.templates.default == "studio_white":
        return False
    pio.templates.default = "studio_white"
    return True


def apply_theme(fig: go.Figure, *, height: int = 460, legend_title: str | None = None) -> go.Figure:
    """Apply the Studio's layout (fonts, margins, grid, hover) to ``fig`` in place and return it: the settings of
    :func:`_theme_layout`, for figures with subplots (every other figure is made by :func:`themed_figure`).

    The settings are the figure's own, not the template's: Streamlit's chart theme rewrites a figure's template
    (fonts, palette, grid) but leaves the figure's own settings alone. The white template itself is plotly's
    default in this process (above)."""
    settings = _theme_layout(height, legend_title, ())
    if _restore_white_template():
        settings["template"] = WHITE_TEMPLATE
    fig.update_layout(settings)
    axis = _theme_layout(height, legend_title, ("xaxis",))["xaxis"]
    fig.update_xaxes(axis)
    fig.update_yaxes(axis)
    return fig


def _theme_layout(height: int, legend_title: str | None, axes: tuple[str, ...]) -> dict:
    """The settings :func:`apply_theme` assigns, as one layout dict (the axes named in ``axes``)."""
    axis = {"gridcolor": COLORS["grid"], "zeroline": False, "title": {"font": {"size": FONT_SIZE}}}
    return {
        "font": {"family": FONT_FAMILY, "size": FONT_SIZE, "color": COLORS["text"]},
        "title": {"font": {"size": TITLE_SIZE}},
        "height": height,
        "margin": {"l": 70, "r": 30, "t": 60, "b": 60},
        "hoverlabel": {"font": {"size": FONT_SIZE - 1}},
        "legend": {"title": {"text": legend_title or None}, "font": {"size": FONT_SIZE - 2}},
        "colorway": list(SEQUENCE),
        **{name: axis for name in axes},
    }


def _merged(mine: dict, theirs: dict) -> dict:
    """``mine`` with ``theirs`` merged in, ``theirs`` winning on a conflict; a title given as text becomes
    ``{"text": ...}`` (plotly's own shorthand)."""
    out = dict(mine)
    for key, value in theirs.items():
        current = out.get(key)
        if key == "title" and isinstance(current, str):
            current = {"text": current}
        out[key] = _merged(current, value) if isinstance(value, dict) and isinstance(current, dict) else value
    return out


def themed_figure(traces: Sequence[Any], *, height: int = 460, legend_title: str | None = None,
                  lines: Sequence[Line] = (), annotations: Sequence[dict] = (), **layout: Any) -> go.Figure:
    """A themed figure made in ONE ``go.Figure(data, layout)`` call: ``traces``, the figure's own ``layout``
    settings (``title``, ``xaxis``, ``legend``, ``shapes``, …; a title may be given as text), reference ``lines``
    (:func:`vline`, :func:`hline`) and ``annotations``, with the settings of :func:`apply_theme` merged in.

    The same figure as adding the traces one by one, ``update_layout(**layout)``, the lines' shapes and labels and
    :func:`apply_theme` (a test compares their JSON), at about a third of the CPU: plotly validates each property
    once instead of at every assignment (the figures are rebuilt at every click).
    """
    layout = {key: ({"text": value} if key == "title" and isinstance(value, str) else value)
              for key, value in layout.items()}
    axes = tuple(sorted({"xaxis", "yaxis"} | {key for key in layout if key.startswith(("xaxis", "yaxis"))}))
    _restore_white_template()  # before the figure is made: it then gets the white template as every figure does
    merged = _merged(layout, _theme_layout(height, legend_title, axes))
    shapes = [*layout.get("shapes", ()), *(shape for shape, _ in lines)]
    labels = [*layout.get("annotations", ()), *(label for _, label in lines if label is not None), *annotations]
    if shapes:
        merged["shapes"] = shapes
    if labels:
        merged["annotations"] = labels
    return go.Figure(data=traces, layout=merged)


#: Values whose spread is below this share of their size are one value to an axis (floating-point rounding).
FLAT_SPREAD = 1e-9
#: A flat axis shows its value ± this share of it (± 1 around 0).
FLAT_PAD = 0.05


def flat_axis(values: Sequence[float | None]) -> dict:
    """Axis settings for values that are all equal up to rounding: an explicit range of the value ± 5 % and ticks
    with at most 4 significant digits; ``{}`` otherwise (plotly's own autorange).

    Without it plotly zooms into the rounding differences (15,502,106.79 against 15,502,106.789999997) and labels a
    tick "15.50210678999999203M" (issue 34).

    >>> flat_axis([15502106.79, 15502106.789999997])
    {'range': [14727001.4505, 16277212.1295], 'tickformat': '.4~s'}
    >>> flat_axis([0.0, 0.0]), flat_axis([1.0, 2.0]), flat_axis([])
    ({'range': [-1.0, 1.0], 'tickformat': '.4~s'}, {}, {})
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return {}
    low, high = min(finite), max(finite)
    size = max(abs(low), abs(high))
    if high - low > FLAT_SPREAD * size:
        return {}
    centre = (low + high) / 2
    pad = FLAT_PAD * abs(centre) if centre != 0 else 1.0
    return {"range": [round(centre - pad, 6), round(centre + pad, 6)], "tickformat": ".4~s"}


#: A reference line: plotly's layout shape and, when it is labelled, its annotation (``themed_figure(lines=…)``).
Line = tuple[dict, "dict | None"]


def vline(x: float, *, line: dict, text: str | None = None, position: str = "top right",
          font: dict | None = None) -> Line:
    """A vertical line at ``x`` across the plot, labelled ``text`` at ``position``: what plotly's ``add_vline``
    makes on a figure without subplots (the same shape and annotation; a test compares them)."""
    _check_position(position)
    shape = {"type": "line", "x0": x, "x1": x, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain", "line": line}
    if text is None:
        return shape, None
    top = position.startswith("top")
    return shape, _label(text, font, x=x, xref="x", y=1 if top else 0, yref="y domain",
                         xanchor="left" if position.endswith("right") else "right",
                         yanchor="top" if top else "bottom")


def hline(y: float, *, line: dict, text: str | None = None, position: str = "top right",
          font: dict | None = None) -> Line:
    """A horizontal line at ``y`` across the plot, labelled like plotly's ``add_hline`` (see :func:`vline`)."""
    _check_position(position)
    shape = {"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": y, "y1": y, "yref": "y", "line": line}
    if text is None:
        return shape, None
    right = position.endswith("right")
    return shape, _label(text, font, x=1 if right else 0, xref="x domain", y=y, yref="y",
                         xanchor="right" if right else "left",
                         yanchor="bottom" if position.startswith("top") else "top")


def _check_position(position: str) -> None:
    if position not in ("top right", "top left", "bottom right", "bottom left"):
        raise ValueError(f"label position {position!r}: vline/hline place labels at the four corners only")


def _label(text: str, font: dict | None, **where) -> dict:
    return {"text": text, "showarrow": False, **where, **({"font": font} if font is not None else {})}
