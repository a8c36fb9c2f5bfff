"""Steps the issue-31 browser tests share: a real public table (Palmer penguins, from the ``palmerpenguins`` package)
uploaded and prepared as a classification program, a seeded Mechanisms run, a pin, and reading the Data page's
editable tables (their cells are drawn on a canvas; the grid's accessible table holds the same text)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.conftest import (
    PAGES,
    choose,
    click_button,
    go,
    idle,
    no_exception,
    open_upload_on_data_page,
    upload_file,
)

#: The penguins' outcome and the label that counts as 1 (a classification program).
TARGET, POSITIVE = "sex", "male"


def write_table(folder: Path, name: str = "penguins.csv", every: int = 1) -> Path:
    """The Palmer penguins as ``folder/name`` (every ``every``-th bird: another dataset with the same columns)."""
    from tests.real_data import penguins

    frame = penguins().iloc[::every]
    path = Path(folder) / name
    frame.to_csv(path, index=False)
    return path


def load_penguins(page, url: str, path: Path) -> None:
    """Upload the table on the Data page and make it a classification program predicting the penguin's sex."""
    open_upload_on_data_page(page, url)
    upload_file(page, path)
    prepare_classification(page)


def selected(page, label: str) -> str:
    """The value a select box whose label starts with ``label`` shows."""
    box = page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator("label", has_text=re.compile("^" + re.escape(label)))).first
    return box.locator("input").first.input_value() or box.inner_text().split("\n")[-1]


def prepare_classification(page) -> None:
    """Target, its positive label and the program (each left alone when a kept setting already shows it)."""
    if selected(page, "Target (the outcome") != TARGET:
        choose(page, "Target (the outcome", TARGET)
    positive = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Which value(s) of").first
    if not any(line.startswith(f"{POSITIVE} (") for line in positive.inner_text().split("\n")):
        field = positive.locator("input")
        field.click()
        field.fill(POSITIVE)
        # every label is offered with its count ("male (168)")
        page.get_by_role("option", name=re.compile("^" + re.escape(POSITIVE) + r" \(\d")).first.click(timeout=15_000)
        idle(page)
        page.keyboard.press("Escape")
    program = "classification — predict a yes/no label"
    if selected(page, "Program") != program:
        choose(page, "Program", program)
    no_exception(page)


def set_number(page, label: str, value: str) -> None:
    box = page.get_by_role("spinbutton", name=label).first
    box.fill(value)
    box.press("Tab")


def run_mechanism(page, kind: str, *, seed: str = "7", b: str | None = None, epsilon: str | None = None) -> None:
    """On the Mechanisms page: choose ``kind`` (its label), type B, ε and the seed into the form, run, and wait for
    the result."""
    from playwright.sync_api import expect

    if page.locator("h1").first.inner_text().strip() != PAGES["mechanisms"]:
        go(page, "mechanisms")
    page.get_by_role("radiogroup", name="Mechanism").get_by_text(kind, exact=True).click()
    idle(page)
    if b is not None:
        set_number(page, "Target distance B", b)
    if epsilon is not None:
        set_number(page, "Privacy loss ε", epsilon)
    seed_box = page.get_by_role("textbox", name="Seed (leave empty for a real release)")
    seed_box.fill(seed)
    seed_box.press("Tab")
    click_button(page, "Run the mechanism")
    idle(page, timeout=180_000)
    expect(page.get_by_text("What it guarantees", exact=True)).to_be_visible(timeout=180_000)
    no_exception(page)


def pin(page, count: int) -> str:
    """Pin the page's candidate under its default label; returns the label the success message names."""
    from playwright.sync_api import expect

    click_button(page, "Pin this candidate")
    message = page.get_by_text(f"({count} of 6)")
    expect(message).to_be_visible(timeout=60_000)
    idle(page, settle=False)
    text = message.first.inner_text()
    found = re.search(r"Pinned “(.*)” \(", text)
    assert found, text
    return found.group(1)


def editor_rows(page, index: int) -> list[list[str]]:
    """The cells of the page's ``index``-th data editor (or table), row by row, as its accessible grid states them."""
    return page.evaluate(
        """(i) => [...[...document.querySelectorAll('[data-testid="stDataFrame"]')][i]
                .querySelectorAll('[role=row]')].map(r => [...r.querySelectorAll('[role=gridcell]')]
                .map(c => c.textContent)).filter(r => r.length)""", index)


_HEADERS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(e => [...e
                .querySelectorAll('[role=columnheader]')].map(c => c.textContent))"""


def editor_index(page, column: str) -> int:
    """The index of the data editor (or table) that has a column headed ``column`` (waits until the grid is drawn:
    its accessible table fills in after the page's run)."""
    page.wait_for_function(f"c => ({_HEADERS})().some(h => h.includes(c))", arg=column, timeout=30_000)
    return next(i for i, h in enumerate(page.evaluate(_HEADERS)) if column in h)


def settle(page) -> None:
    """Wait for the run an edit starts: until the app reports a running script (at most 2 s), then until it is idle
    (as :func:`tests.e2e.conftest.settled_click`, for edits made with the keyboard)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    try:
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="running"]', timeout=2_000)
    except PlaywrightTimeoutError:
        pass
    idle(page, settle=False)


def _stable_box(page, locator) -> dict:
    """The element's box once it stopped moving (alerts drawn above it by the last run shift the page)."""
    box = locator.bounding_box()
    for _ in range(20):
        page.wait_for_timeout(150)
        again = locator.bounding_box()
        if again == box:
            break
        box = again
    assert box is not None
    return box


def focus_cell(page, index: int, row: int, column: int) -> None:
    """Select a cell of a data editor with the keyboard: click its first cell in ``row``, then arrow right. The
    keys go to the grid only: the focus is checked to be inside it first (a click that a shifting page moved onto
    another control is tried again, never followed by keys)."""
    grid = page.locator('[data-testid="stDataFrame"]').nth(index)
    for _ in range(3):
        idle(page)
        grid.scroll_into_view_if_needed()
        box = _stable_box(page, grid)
        page.mouse.click(box["x"] + 20, box["y"] + 35 * (row + 1) + 17)  # below the header row, first column
        page.wait_for_timeout(200)
        if grid.evaluate("g => g.contains(document.activeElement)"):
            break
    else:
        raise AssertionError(f"could not put the keyboard focus into data editor {index}")
    for _ in range(column):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(100)


def edit_text_cell(page, index: int, row: int, column: int, text: str) -> None:
    """Type ``text`` into a text cell: Enter opens the cell's editor (a text area over the grid), Enter commits."""
    for _ in range(3):
        focus_cell(page, index, row, column)
        page.keyboard.press("Enter")
        editor = page.locator("#portal textarea, #portal input").first
        try:
            editor.wait_for(state="visible", timeout=5_000)
        except Exception:  # noqa: BLE001 - the editor did not open: select the cell again
            page.keyboard.press("Escape")
            continue
        editor.fill(text)
        page.keyboard.press("Enter")
        settle(page)
        if text in editor_rows(page, index)[row]:
            return
    raise AssertionError(f"could not type {text!r} into cell ({row}, {column}) of data editor {index}")


def choose_in_cell(page, index: int, row: int, column: int, option: str) -> None:
    """Choose ``option`` in a select box cell; tried again when the choice did not reach the grid (on a loaded
    machine the menu's click can land while the grid is redrawn: seen once in CI, the cell kept its old value)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for _ in range(3):
        idle(page)
        focus_cell(page, index, row, column)
        page.keyboard.press("Enter")  # opens the select box's menu
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
        except PlaywrightTimeoutError:  # the menu did not open: select the cell again
            page.keyboard.press("Escape")
            continue
        settle(page)
        for _ in range(10):  # the grid's accessible text follows the drawing
            if option in editor_rows(page, index)[row]:
                return
            page.wait_for_timeout(300)
    raise AssertionError(f"could not choose {option!r} in cell ({row}, {column}) of data editor {index}")


def toggle_cell(page, index: int, row: int, column: int) -> None:
    """Tick (or untick) a check box cell; tried again when the click landed while the page was still drawing."""
    before = editor_rows(page, index)[row][-1]
    for _ in range(3):
        idle(page)
        focus_cell(page, index, row, column)
        page.keyboard.press("Enter")
        settle(page)
        for _ in range(10):  # the grid's accessible text follows the drawing
            page.wait_for_timeout(300)
            if editor_rows(page, index)[row][-1] != before:
                return
    raise AssertionError(f"the cell ({row}, {column}) of data editor {index} did not toggle")


def sidebar_size(page) -> str:
    """"n = 3,987 people · d = 7 features" as the sidebar states it."""
    return page.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"^n = .* features$")).first.inner_text()
