"""End-to-end on a survey with a text outcome of more than eight levels (issue 34 §2): wooldridge::happiness (General
Social Survey 1994–2006, 17,137 × 34; 'income' in 12 brackets, the lowest the rarest; text features of 8–10 levels;
columns asked in some years only) in real Chromium, with no cleaning outside the Studio.

The upload keeps more than half the rows (the columns asked in some years only are left out, with the reason); every
income bracket is offered as the positive class — the rarest ones were not among the 8 the page used to offer — and a
10-level text feature's levels are chosen from the full list (the rest in '(other)').

One user's session: the steps share one browser page (module scope) and run in file order; a step after a failed
one is skipped (``STEPS``, see ``tests/e2e/conftest.py``)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import (
    choose,
    idle,
    no_exception,
    open_upload_on_data_page,
    settled_click,
    upload_file,
)

pytestmark = pytest.mark.e2e
STEPS = True
#: The lowest income brackets, with their counts in the table (the five rarest of the twelve among them).
LOW = ("lt $1000 (176)", "$1000 to 2999 (182)", "$3000 to 3999 (150)")


def test_open_the_data_page_to_upload(page, server):
    url, _, _ = server
    open_upload_on_data_page(page, url)


def test_the_survey_is_taken_keeping_more_than_half_its_rows(page, sidebar, tmp_path_factory):
    from playwright.sync_api import expect

    from tests.real_data import write_csv

    upload_file(page, write_csv("happiness", tmp_path_factory.mktemp("happiness")))
    expect(sidebar).to_contain_text("happiness.csv", timeout=60_000)
    idle(page)
    expect(sidebar).to_contain_text("n = 9,723 people", timeout=30_000)
    expect(page.get_by_text("These choices keep 9,723 of 17,137 rows")).to_be_visible()
    page.get_by_text(re.compile(r"^Left out of the suggestion: \d+ columns")).click()
    expect(page.get_by_text(re.compile(r"^divorce — missing in 7,383 of 17,137 rows"))).to_be_visible()
    no_exception(page)


def test_every_income_bracket_is_offered_and_the_rarest_code_one(page, sidebar):
    from playwright.sync_api import expect

    choose(page, "Target (the outcome", "income")
    expect(page.get_by_text(re.compile(r"count as 1\? — 12 labels"))).to_be_visible()
    for label in LOW:
        choose(page, "Which value(s) of", label)
    page.keyboard.press("Escape")
    idle(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(
        has=page.locator("label", has_text=re.compile("^Which value")))
    for label in LOW:
        expect(box).to_contain_text(label)
    choose(page, "Program", "classification — predict a yes/no label")
    no_exception(page)
    expect(sidebar).to_contain_text("n = 9,723 people")


def test_a_ten_level_feature_keeps_the_levels_chosen_from_the_full_list(page):
    from playwright.sync_api import expect

    page.get_by_text("reg16 — 10 levels", exact=True).click()
    panel = page.locator('[data-testid="stExpander"]').filter(has_text="reg16 — 10 levels")
    settled_click(page, panel.get_by_text("choose the levels", exact=True))
    settled_click(page, panel.get_by_role("button", name="Clear", exact=True))
    for label in ("pacific (1,738)", "new england (808)"):
        choose(page, "Levels of 'reg16'", label)
    page.keyboard.press("Escape")
    idle(page)
    no_exception(page)
    # read from the data, so flagged as not private — with the levels chosen; every other region goes to '(other)'
    expect(page.get_by_text(re.compile(r"the levels of 'reg16' \(pacific, new england\) were read from the data"))
           ).to_be_visible()
