"""End-to-end on a real public loan book (issue 9): Boston mortgage applications (Ecdat::Hmda — text outcome
'deny', yes/no text features, missing cells) as a lending program approving the top 80 %, through a sweep and the
decision record's export and re-import, in real Chromium with no cleaning outside the Studio.

One user's session: the steps share one browser page (module scope) and run in file order; a step after a failed
one is skipped (``STEPS``, see ``tests/e2e/conftest.py``)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    choose,
    export_record,
    go,
    idle,
    import_record,
    no_exception,
    open_upload_on_data_page,
    run_sweep_with_one_repetition,
    shoot,
    upload_file,
)

pytestmark = pytest.mark.e2e
STEPS = True


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("hmda")


def test_open_the_data_page_to_upload(page, server):
    url, _, _ = server
    open_upload_on_data_page(page, url)


def test_upload_the_loan_book(page, sidebar, folder):
    from playwright.sync_api import expect

    from tests.real_data import write_csv

    upload_file(page, write_csv("hmda", folder))
    expect(sidebar).to_contain_text("hmda.csv")


def test_choose_the_text_outcome_and_its_positive_value(page, sidebar):
    from playwright.sync_api import expect

    choose(page, "Target (the outcome", "deny")
    choose(page, "Which value(s) of", "no (2,096)")  # every label is offered with its count
    page.keyboard.press("Escape")
    no_exception(page)
    expect(sidebar).to_contain_text("n = 2,380 people")


def test_a_lending_program_approving_the_top_share(page, sidebar):
    from playwright.sync_api import expect

    choose(page, "Program", "lending — approve applicants predicted to repay; score profit")
    page.get_by_text("the top share of applicants", exact=True).click()
    idle(page)
    share = page.get_by_role("spinbutton", name="Share approved")
    share.fill("0.8")
    share.press("Tab")
    idle(page)
    no_exception(page)
    expect(sidebar).to_contain_text("n = 2,380 people")


def test_a_sweep_on_a_custom_grid(page):
    go(page, "tradeoffs")
    page.get_by_text("custom grid (below)", exact=True).click()
    page.get_by_text("Custom grid", exact=True).click()
    b_values = page.get_by_role("textbox", name="B values")
    b_values.fill("0.5, 2")
    run_sweep_with_one_repetition(page)
    shoot(page, "9-real-lending-tradeoffs")


def test_the_decision_record_states_the_preparation_and_the_program(page, folder):
    go(page, "export")
    record = export_record(page, folder / "hmda-record.json")
    assert record.release.data.positive_class == ("no",) and record.release.data.target == "deny"
    assert record.program.approval_rule == "top_share" and record.program.approve_share == 0.8
    assert record.data.source == "upload" and record.tradeoffs


def test_reimporting_the_record_restores_the_session(page, sidebar, folder):
    from playwright.sync_api import expect

    import_record(page, folder / "hmda-record.json")
    expect(sidebar).to_contain_text("n = 2,380 people")
