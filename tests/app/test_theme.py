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


def test_every_new_figure_has_the_white_template_and_apply_theme_merges_like_update_layout():
    """apply_theme assigns attributes (faster than update_layout) and relies on the default template: the figure
    it returns is the one update_layout with the template and the same settings gives, on subplots too, and
    settings a figure function made before it (a legend's orientation, an axis title) are kept."""
    import json

    import plotly.io as pio
    from plotly.subplots import make_subplots

    assert go.Figure().layout.template.layout.plot_bgcolor == "white"

    def figure():
        fig = make_subplots(rows=1, cols=2)
        fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4]), row=1, col=1)
        fig.add_trace(go.Bar(x=[1, 2], y=[3, 4]), row=1, col=2)
        fig.update_layout(title="t", legend={"orientation": "h"}, xaxis_title="ε", font_color="red")
        return fig

    for legend_title in (None, "method"):
        expected = figure().update_layout(
            template=theme.WHITE_TEMPLATE, font_family=theme.FONT_FAMILY, font_size=theme.FONT_SIZE,
            font_color=theme.COLORS["text"], title_font_size=theme.TITLE_SIZE, height=300, margin_l=70,
            margin_r=30, margin_t=60, margin_b=60, hoverlabel_font_size=theme.FONT_SIZE - 1,
            legend_title_text=legend_title, legend_font_size=theme.FONT_SIZE - 2, colorway=list(theme.SEQUENCE),
        )
        expected.update_xaxes(gridcolor=theme.COLORS["grid"], zeroline=False, title_font_size=theme.FONT_SIZE)
        expected.update_yaxes(gridcolor=theme.COLORS["grid"], zeroline=False, title_font_size=theme.FONT_SIZE)
        themed = theme.apply_theme(figure(), height=300, legend_title=legend_title)
        assert json.loads(pio.to_json(themed)) == json.loads(pio.to_json(expected))
        assert themed.layout.legend.orientation == "h" and themed.layout.xaxis.title.text == "ε"


@pytest.mark.parametrize("position", ["top right", "top left", "bottom right", "bottom left"])
def test_vline_and_hline_are_plotlys_add_vline_and_add_hline(position):
    """The reference lines themed_figure draws (theme.vline/hline) are the shapes and annotations plotly's own
    add_vline/add_hline make, labelled or not, with or without a label font."""
    import json

    import plotly.io as pio

    line = {"color": "blue", "dash": "dash", "width": 2}
    for font in (None, {"color": "red", "size": 13}):
        expected = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
        expected.add_vline(x=0.5, line=line, annotation_text="v", annotation_position=position,
                           **({"annotation_font": font} if font else {}))
        expected.add_hline(y=0.3, line=line, annotation_text="h", annotation_position=position,
                           **({"annotation_font": font} if font else {}))
        expected.add_vline(x=0.7, line=line)
        drawn = theme.themed_figure([go.Scatter(x=[0, 1], y=[0, 1])], lines=[
            theme.vline(0.5, line=line, text="v", position=position, font=font),
            theme.hline(0.3, line=line, text="h", position=position, font=font),
            theme.vline(0.7, line=line),
        ])
        shown, wanted = json.loads(pio.to_json(drawn))["layout"], json.loads(pio.to_json(expected))["layout"]
        assert shown["shapes"] == wanted["shapes"] and shown.get("annotations") == wanted.get("annotations")


def test_apply_theme_and_themed_figure_restore_the_white_template_after_streamlit_set_its_own():
    """Importing streamlit sets plotly's default template to Streamlit's; a figure themed after that still gets
    the white template (figures drawn with theme=None and the HTML report use it as it is)."""
    import plotly.io as pio

    pio.templates.default = "plotly"  # what an import of streamlit after ui.figures.theme does, in effect
    fig = theme.apply_theme(go.Figure(go.Scatter(x=[1], y=[1])))
    assert fig.layout.template.layout.plot_bgcolor == "white" and pio.templates.default == "studio_white"
    pio.templates.default = "plotly"
    fig = theme.themed_figure([go.Scatter(x=[1], y=[1])])
    assert fig.layout.template.layout.plot_bgcolor == "white" and pio.templates.default == "studio_white"
    with pytest.raises(ValueError, match="four corners"):
        theme.vline(1.0, line={}, text="x", position="middle right")


def test_themed_figure_is_the_step_by_step_figure_with_apply_theme():
    """themed_figure builds in one go.Figure call what adding traces, update_layout, add_shape, add_annotation and
    apply_theme build step by step: the same JSON (axis titles given as text, ranges, extra axes, shapes before the
    lines' shapes, the lines' labels before further annotations)."""
    import json

    import plotly.io as pio

    traces = [go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Bar(x=[1, 2], y=[1, 2], name="b", yaxis="y2")]
    lines = [theme.hline(2.0, line={"color": "red"}, text="two", position="bottom left"), theme.vline(1.5, line={})]
    rect = {"type": "rect", "x0": 0, "x1": 1, "y0": 0, "y1": 1, "line": {"width": 0}}
    note = {"x": 1, "xref": "paper", "y": 1, "yref": "paper", "showarrow": False, "text": "note"}
    for legend_title in (None, "method"):
        step = go.Figure()
        for trace in traces:
            step.add_trace(trace)
        step.add_shape(**rect)
        for shape, label in lines:
            step.add_shape(**shape)
            if label is not None:
                step.add_annotation(**label)
        step.add_annotation(**note)
        step.update_layout(title="t", xaxis_title="ε", yaxis_title="B", legend={"orientation": "h"},
                           yaxis2={"overlaying": "y", "visible": False}, barmode="overlay")
        step.update_xaxes(range=[0, 3])
        theme.apply_theme(step, height=300, legend_title=legend_title)
        one = theme.themed_figure(traces, height=300, legend_title=legend_title, title="t",
                                  xaxis={"title": "ε", "range": [0, 3]}, yaxis={"title": "B"},
                                  yaxis2={"overlaying": "y", "visible": False}, legend={"orientation": "h"},
                                  barmode="overlay", shapes=[rect], lines=lines, annotations=[note])
        assert json.loads(pio.to_json(one)) == json.loads(pio.to_json(step))
        assert one.layout.yaxis2.gridcolor == theme.COLORS["grid"] and one.layout.xaxis.title.font.size
