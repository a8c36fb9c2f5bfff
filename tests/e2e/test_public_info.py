"""End-to-end in Chromium: declare public information → run a tiny seeded study → figures → export → re-import,
then Stop during a larger study, as ordered steps of one session (a step after a failed one is skipped)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    ARTIFACTS,
    PAGES,
    SCREENSHOTS,
    export_record,
    go,
    idle,
    import_record,
    no_exception,
    settled_click,
    shoot,
)

pytestmark = pytest.mark.e2e
STEPS = True


@pytest.fixture(scope="module")
def record_path(tmp_path_factory):
    return tmp_path_factory.mktemp("public-info") / "decision-record-public-info.json"


def open_public_info(page, url) -> None:
    """Open the Public information page by its address (the shared server has served a session before, so a deep
    link is not its first request; the Start page is walked by the workflow test)."""
    page.goto(url + "public_info")
    page.wait_for_function(
        "t => { const h = document.querySelector('h1'); return h && h.innerText.trim() === t; }",
        arg=PAGES["public_info"], timeout=60_000,
    )
    idle(page, settle=False)
    no_exception(page)


def test_declare_what_is_public_and_a_correlated_dependence_model(page, server):
    from playwright.sync_api import expect

    url, _, _ = server
    open_public_info(page, url)
    expect(page.get_by_text("SYNTHETIC data: 67 regions").first).to_be_visible()
    # declare: the last period's counts are NOT public; a correlated dependence model
    settled_click(page, page.get_by_text("Last period's counts of every region", exact=True))
    settled_click(page, page.get_by_text("correlated counts (z0, z1)", exact=True))
    expect(page.get_by_text("Figure 4")).to_be_visible(timeout=30_000)
    for label, value in (("ε per period (comma-separated)", "2, 8"), ("Seed (empty = fresh randomness)", "11")):
        box = page.get_by_role("textbox", name=label)
        box.fill(value)
        box.press("Tab")
        idle(page)
    reps = page.get_by_role("spinbutton", name="Replicates")
    reps.fill("2")
    reps.press("Tab")
    idle(page)
    no_exception(page)
    shoot(page, "pi-1-declared")


def test_a_seeded_study_draws_its_figures_labelled_a_simulation(page):
    from playwright.sync_api import expect

    page.get_by_role("button", name="Run the release study").click()
    idle(page)
    expect(page.get_by_text("Release against period (Figure 1)")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Simulation — not private").first).to_be_visible()
    # heatmap + 3 regions + errors + contraction; the charts mount one after another, so wait for the fifth
    expect(page.locator(".stPlotlyChart").nth(4)).to_be_attached(timeout=30_000)
    no_exception(page)
    shoot(page, "pi-2-results")
    if SCREENSHOTS:
        for name, title in (("pi-2b-figure1", "Release against period (Figure 1)"),
                            ("pi-2c-figures23", "Relative error (Figure 2)")):
            page.get_by_text(title).scroll_into_view_if_needed()
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_the_decision_record_carries_the_declared_configuration(page, record_path):
    from playwright.sync_api import expect

    go(page, "export")
    expect(page.get_by_text("Public information (count-table study)")).to_be_visible()
    block = export_record(page, record_path).public_information
    assert block["epsilon_per_period"] == [2.0, 8.0] and list(block["public"]) == ["total", "subcount"]
    assert block["dependence_model"]["kind"] == "correlated" and block["seed"] == 11
    shoot(page, "pi-3-export")


def test_reimporting_the_record_restores_the_configuration(page, record_path):
    from playwright.sync_api import expect

    # change the page, then re-import: the declared configuration comes back
    go(page, "public_info")
    box = page.get_by_role("textbox", name="ε per period (comma-separated)")
    box.fill("7")
    box.press("Tab")
    idle(page)
    go(page, "export")
    expect(page.get_by_text("ε = 7 per period", exact=False).first).to_be_visible()  # the change took
    import_record(page, record_path)
    go(page, "public_info")
    expect(page.get_by_role("textbox", name="ε per period (comma-separated)")).to_have_value("2, 8")
    no_exception(page)
    shoot(page, "pi-4-reimported")


def test_stop_keeps_the_finished_cells_in_chromium(page):
    """The session goes on with a larger study (four ε, 40 replicates) and presses Stop once the first cell is done."""
    from playwright.sync_api import expect

    box = page.get_by_role("textbox", name="ε per period (comma-separated)")
    box.fill("0.5, 1, 2, 4")
    box.press("Tab")
    idle(page)
    reps = page.get_by_role("spinbutton", name="Replicates")
    reps.fill("40")
    reps.press("Tab")
    idle(page)
    page.get_by_role("button", name="Run the release study").click()
    page.get_by_role("button", name="Stop").wait_for(state="visible", timeout=30_000)
    # wait until the first (method, ε) cell is finished: the progress text passes its 24 periods
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stProgress\"]')].some(p => /^(2[5-9]|[3-9][0-9]|1[0-9]{2}) of/.test(p.innerText))",
        timeout=120_000,
    )
    page.get_by_role("button", name="Stop").click()
    idle(page)
    expect(page.get_by_text("The study was stopped")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Release against period (Figure 1)")).to_be_visible()
    no_exception(page)
    shoot(page, "pi-5-stopped")
