"""User text in charts is shown as typed: Plotly renders a subset of HTML (links, bold, line breaks) in titles,
axis and tick labels and hover text, so a column or region named like markup must reach the figure escaped
(issue 15: "Plotly chart texts may render HTML from column names")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.public_info.count_table import counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study
from engine.rng import make_rng
from ui.figures import public_info as pi_figs
from ui.figures.mechanisms import noise_by_coordinate_figure, original_vs_private_figure
from ui.figures.theme import plain_label

HOSTILE = '<a href="http://127.0.0.1:9/x">pay</a><b>%{y}</b>'
ESCAPED = '&lt;a href="http://127.0.0.1:9/x"&gt;pay&lt;/a&gt;&lt;b&gt;%\u200b{y}&lt;/b&gt;'



def _assert_escaped(fig) -> None:
    text = fig.to_json().encode().decode("unicode_escape")  # undo JSON's \u escapes to compare the characters
    assert "<a href" not in text and "<b>%" not in text
    assert ESCAPED in text


def test_plain_label_escapes_markup_and_template_fields_only():
    assert plain_label(HOSTILE) == ESCAPED
    assert plain_label("wages & hours (€)") == "wages &amp; hours (€)"  # Plotly decodes &amp; back to &
    assert plain_label(3) == "3"


def test_feature_names_in_the_mechanism_figures_are_escaped():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 2))
    names = (HOSTILE, "age")
    scatter = original_vs_private_figure(x, x + 0.1, names, 0, 1)
    _assert_escaped(scatter)
    assert scatter.layout.xaxis.title.text == ESCAPED + " (prepared scale)"
    bars = noise_by_coordinate_figure(names, [0.1, 0.2], reported_sd=0.15)
    _assert_escaped(bars)
    assert list(bars.data[0].x) == [ESCAPED, "age"]


@pytest.fixture(scope="module")
def hostile_study():
    table = counties_demo(regions=4, periods=3)
    table = dataclasses.replace(table, regions=(HOSTILE, *table.regions[1:]))
    cfg = CountStudyConfig(methods=("postprocess",), epsilons=(1.0,), replicates=2)
    return build_count_study(table, cfg, rng=make_rng(1))


def test_region_names_in_the_public_information_figures_are_escaped(hostile_study):
    _assert_escaped(pi_figs.release_boxplots(hostile_study, HOSTILE, 1.0, "caption"))
    _assert_escaped(pi_figs.contraction_bars(hostile_study, "caption"))
