"""Issue 31, defect 5, in real Chromium at 1280 × 800: a Workshop at its limit — six pins from two real datasets (the
Palmer penguins, all of them and every other bird) — keeps unique labels naming dataset, mechanism and
parameters, a table whose six columns are readable (none clipped, none narrower than a short word), a chart whose
axis and legend stay inside it, and shows the candidates whose implied classic DP is vacuous (δ' = 1) as "no bound",
never at a finite ε' — in the page and in presenter mode."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import VIEWPORT, click_button, go, idle, no_exception, upload_file
from tests.e2e.decision_helpers import (
    load_penguins,
    pin,
    prepare_classification,
    run_mechanism,
    set_number,
    write_table,
)

pytestmark = pytest.mark.e2e
GAUSSIAN = "Gaussian mechanism (targeted DP)"
#: Narrowest readable column of the comparison: about a dozen characters of its text (six candidate columns beside
#: the lines' names and the sidebar at 1280 px are about 110 px each).
MIN_COLUMN_PX = 100


def layout(page) -> dict:
    """Where the comparison table's columns and the chart's parts are drawn, and the chart's data."""
    return page.evaluate("""() => {
        const table = document.querySelector('[data-testid="stTable"] table');
        const heads = [...table.querySelectorAll('thead th')].map(th => th.getBoundingClientRect().width);
        const wrap = document.querySelector('[data-testid="stTable"]');
        const plot = document.querySelector('.js-plotly-plot');
        const svg = plot.querySelector('svg.main-svg').getBoundingClientRect();
        const box = sel => { const e = plot.querySelector(sel); if (!e) return null;
                             const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
        return {heads, tableRight: table.getBoundingClientRect().right, scroll: [wrap.scrollWidth, wrap.clientWidth],
                svg: [svg.left, svg.top, svg.right, svg.bottom], legend: box('.legend'), xtitle: box('.xtitle'),
                entries: plot.querySelectorAll('.legend .traces').length,
                data: plot.data.map(t => ({name: t.name, x: t.x}))};
    }""")


def check_readable(page, rows: int, width: int) -> dict:
    page.wait_for_selector('[data-testid="stTable"] table', timeout=60_000)
    found = layout(page)
    heads = found["heads"][1:]  # the first column names the comparison's lines
    assert len(heads) == rows and min(heads) >= MIN_COLUMN_PX, heads
    assert found["tableRight"] <= width and found["scroll"][0] <= found["scroll"][1] + 1, found
    left, top, right, bottom = found["svg"]
    for part in ("legend", "xtitle"):
        x0, y0, x1, y1 = found[part]
        assert left - 1 <= x0 and x1 <= right + 1 and top - 1 <= y0 and y1 <= bottom + 1, (part, found[part], found["svg"])
    assert found["entries"] == rows
    return found


def test_six_pins_from_two_datasets_stay_readable_and_vacuous_ones_are_no_bound(page, server, tmp_path):
    from playwright.sync_api import expect

    url, _, _ = server
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        load_penguins(page, url, write_table(tmp_path))
        run_mechanism(page, GAUSSIAN, seed="1", b="0.05", epsilon="4")  # implied classic DP: δ' = 1
        labels = [pin(page, 1)]
        go(page, "feasibility")
        labels.append(pin(page, 2))
        set_number(page, "Target distance B", "2")
        idle(page)
        labels.append(pin(page, 3))
        # every other bird: another dataset with the same columns (the same settings)
        go(page, "data")
        upload_file(page, write_table(tmp_path, "penguins-half.csv", every=2))
        prepare_classification(page)
        run_mechanism(page, GAUSSIAN, seed="1", b="0.05", epsilon="4")
        labels.append(pin(page, 4))
        go(page, "feasibility")
        labels.append(pin(page, 5))
        set_number(page, "Privacy loss ε", "2")
        idle(page)
        labels.append(pin(page, 6))
        # unique labels, each naming its dataset; the two runs of the same configuration on two datasets differ
        assert len(set(labels)) == 6, labels
        assert [label.split(" · ")[0] for label in labels] == ["penguins.csv"] * 3 + ["penguins-half.csv"] * 3
        # the same mechanism and (B, ε) on two datasets (δ = 1/(n+1) differs): told apart by the dataset
        assert labels[0].split(" · ", 1)[1].split(", δ")[0] == labels[3].split(" · ", 1)[1].split(", δ")[0]
        assert re.search(r"Mechanisms run · Gaussian B = 0\.05, ε = 4, δ = ", labels[0]), labels[0]

        go(page, "workshop")
        page.wait_for_function("() => document.querySelector('.js-plotly-plot .main-svg .legend')", timeout=60_000)
        found = check_readable(page, 6, 1280)
        # the table's conversion line says which candidates bound nothing for two records further apart than B …
        implied = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stTable"] tbody tr')]
            .map(r => [...r.children].map(c => c.textContent))
            .find(cells => cells[0].startsWith("Implied classic DP")).slice(1)""")
        vacuous = {i + 1 for i, cell in enumerate(implied) if cell.startswith("no bound")}
        assert {1, 4} <= vacuous and len(vacuous) < 6, implied  # B = 0.05, ε = 4 on both datasets; B = 2 is not
        for trace in found["data"]:  # … and the chart lists them as "no bound", never placed at a finite ε'
            number = int(trace["name"].split(".")[0])
            assert trace["name"].endswith("no bound (δ' = 1)") == (number in vacuous), trace["name"]
            assert all(x is None for x in trace["x"]) == (number in vacuous), trace
        expect(page.get_by_text("No bound for any two records (δ' = 1), not plotted: "
                                + ", ".join(map(str, sorted(vacuous))))).to_be_visible()

        page.get_by_text("Presenter mode", exact=True).click()
        idle(page)
        for _ in range(6):
            click_button(page, "Next")
            idle(page)
        expect(page.get_by_text("Screen 7 of 7")).to_be_visible()
        page.wait_for_function("() => document.querySelector('.js-plotly-plot .main-svg .legend')", timeout=60_000)
        check_readable(page, 6, 1280)
        no_exception(page)
    finally:
        page.set_viewport_size(VIEWPORT)
