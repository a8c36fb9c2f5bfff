"""The shared number formats and the chart theme (ui/figures/theme.py)."""

from __future__ import annotations

import doctest
import math

import plotly.graph_objects as go
import pytest

import ui.figures.theme as theme


def test_doctests():
    assert doctest.testmod(theme).failed == 0


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.4, "0.4"), (2.0, "2"), (1 / 4202, "2.38e-04"), (0.99996, "1"), (4201, "4,201"), (2.5e7, "2.5e+07"),
     (0, "0"), (math.inf, "∞"), (math.nan, "—"), (-0.123456, "-0.123")],
)
def test_fmt_rounds_for_reading(value, shown):
    assert theme.fmt(value) == shown


def test_apply_theme_sets_projector_sized_fonts_and_the_palette():
    fig = theme.apply_theme(go.Figure(go.Scatter(x=[1], y=[1])), height=300)
    assert fig.layout.font.size == theme.FONT_SIZE >= 16
    assert fig.layout.height == 300
    assert list(fig.layout.colorway) == list(theme.SEQUENCE)


def test_the_trimmed_template_covers_every_trace_type_the_figures_draw():
    """WHITE_TEMPLATE keeps plotly_white's defaults only for the trace types drawn in ui/figures: a figure drawing
    another type would lose them silently, so this lists what the figure modules construct."""
    import re
    from pathlib import Path

    source = "".join(p.read_text() for p in (Path(theme.__file__).parent).glob("*.py"))
    drawn = {name.lower() for name in re.findall(r"\bgo\.([A-Z][a-z]+)\(", source)} - {"figure"}
    import plotly.io as pio

    white = set(pio.templates["plotly_white"].data.to_plotly_json())  # it has no defaults for some types (box)
    assert drawn and (drawn & white) <= set(theme.WHITE_TEMPLATE.data.to_plotly_json()), drawn
