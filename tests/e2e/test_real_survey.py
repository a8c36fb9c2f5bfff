"""End-to-end on a real public survey (issue 9): carData::SLID — wages missing in 3,278 rows, missing education,
text sex and language — taken through the workflow in real Chromium with no cleaning outside the Studio: upload,
target, a mechanism run with the decision agreement and the trivial-rule comparison, and a reload that keeps everything.

One user's session: the steps share one browser page (module scope) and run in file order; a step after a failed
one is skipped (``STEPS``, see ``tests/e2e/conftest.py``)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    choose,
    click_button,
    go,
    idle,
    no_exception,
    open_upload_on_data_page,
    shoot,
    upload_file,
)

pytestmark = pytest.mark.e2e
STEPS = True


def test_open_the_data_page_to_upload(page, server):
    url, _, _ = server
    open_upload_on_data_page(page, url)


def test_upload_the_survey(page, sidebar, tmp_path_factory):
    from playwright.sync_api import expect

    from tests.real_data import write_csv

    upload_file(page, write_csv("slid", tmp_path_factory.mktemp("slid")))
    expect(sidebar).to_contain_text("slid.csv")


def test_choose_wages_as_the_target(page, sidebar):
    from playwright.sync_api import expect

    choose(page, "Target (the outcome", "wages")
    no_exception(page)
    expect(sidebar).to_contain_text("n = 3,987 people")  # rows with wages, education and language present
    shoot(page, "8-real-data")


def test_a_gaussian_run_states_the_decision_agreement_and_the_honest_comparison(page):
    from playwright.sync_api import expect

    go(page, "mechanisms")
    page.get_by_text("Gaussian mechanism (targeted DP)", exact=True).click()
    idle(page)
    click_button(page, "Run the mechanism")
    idle(page)
    expect(page.get_by_text("Decision agreement").first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Honest comparison at the same guarantee", exact=True)).to_be_visible()
    no_exception(page)
    shoot(page, "8b-real-data-mechanisms")


def test_a_reload_keeps_the_upload_and_the_run(page, sidebar):
    from playwright.sync_api import expect

    page.reload()  # the address holds the session's key
    idle(page)
    expect(page.get_by_text("Decision agreement").first).to_be_visible(timeout=120_000)
    expect(sidebar).to_contain_text("slid.csv")
    no_exception(page)
