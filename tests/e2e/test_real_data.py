"""End-to-end on real public tables (issue 9): a survey with missing values and text columns, and a mortgage book
with a text outcome, each taken through the workflow in real Chromium with no cleaning outside the Studio.

Each test is its own browser session on the module's server (see ``tests/e2e/conftest.py``)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    choose,
    click_button,
    go,
    idle,
    import_record,
    no_exception,
    run_sweep_with_one_repetition,
    shoot,
    upload_on_data_page,
)

pytestmark = pytest.mark.e2e


def test_real_public_data_in_chromium(browser, server, tmp_path):
    """Issue 9: a real survey (carData::SLID — missing wages, missing education, text sex and language) taken
    through the workflow with no cleaning outside the Studio: upload, target and program settings, a mechanism run
    with the measured γ and the trivial-rule comparison, a sweep, and a reload that keeps everything."""
    from playwright.sync_api import expect

    from tests.real_data import write_csv

    url, _, _ = server
    csv_path = write_csv("slid", tmp_path)
    page = browser.new_page(viewport={"width": 1440, "height": 5200})  # tall: the whole Mechanisms page in one shot
    try:
        upload_on_data_page(page, url, csv_path)
        no_exception(page)
        choose(page, "Target (the outcome", "wages")
        no_exception(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar).to_contain_text("n = 3,987 people")  # rows with wages, education and language present
        shoot(page, "8-real-data")

        go(page, "mechanisms")
        page.get_by_text("Gaussian mechanism (targeted DP)", exact=True).click()
        idle(page)
        click_button(page, "Run the mechanism")
        idle(page)
        expect(page.get_by_text("Measured γ (decision agreement)").first).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Honest comparison at the same guarantee", exact=True)).to_be_visible()
        no_exception(page)
        shoot(page, "8b-real-data-mechanisms")

        # A reload keeps the upload and the run (the address holds the session's key).
        page.reload()
        idle(page)
        expect(page.get_by_text("Measured γ (decision agreement)").first).to_be_visible(timeout=120_000)
        expect(sidebar).to_contain_text("slid.csv")
        no_exception(page)
    finally:
        page.close()


def test_real_lending_data_through_sweep_and_export_in_chromium(browser, server, tmp_path):
    """Issue 9, second real table: Boston mortgage applications (Ecdat::Hmda — text outcome 'deny', yes/no text
    features, missing cells) as a lending program approving the top 80 %, through a sweep and the decision record's
    export and re-import."""
    from playwright.sync_api import expect

    from engine.decision_record import load_decision_record
    from tests.real_data import write_csv

    url, _, _ = server
    csv_path = write_csv("hmda", tmp_path)
    page = browser.new_page(viewport={"width": 1440, "height": 2400}, accept_downloads=True)

    try:
        upload_on_data_page(page, url, csv_path)
        choose(page, "Target (the outcome", "deny")
        choose(page, "Which value(s) of", "no")
        page.keyboard.press("Escape")
        choose(page, "Program", "lending — approve applicants predicted to repay; score profit")
        page.get_by_text("the top share of applicants", exact=True).click()
        idle(page)
        share = page.get_by_role("spinbutton", name="Share approved")
        share.fill("0.8")
        share.press("Tab")
        idle(page)
        no_exception(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar).to_contain_text("n = 2,380 people")

        go(page, "tradeoffs")
        page.get_by_text("custom grid (below)", exact=True).click()
        page.get_by_text("Custom grid", exact=True).click()
        b_values = page.get_by_role("textbox", name="B values")
        b_values.fill("0.5, 2")
        run_sweep_with_one_repetition(page)
        shoot(page, "9-real-lending-tradeoffs")

        go(page, "export")
        with page.expect_download() as download:
            page.get_by_role("button", name="Decision record (JSON)").first.click()
        record_path = tmp_path / "hmda-record.json"
        download.value.save_as(record_path)
        record = load_decision_record(record_path.read_bytes())
        assert record.release.data.positive_class == ("no",) and record.release.data.target == "deny"
        assert record.program.approval_rule == "top_share" and record.program.approve_share == 0.8
        assert record.data.source == "upload" and record.tradeoffs
        import_record(page, record_path)
        expect(sidebar).to_contain_text("n = 2,380 people")
    finally:
        page.close()
