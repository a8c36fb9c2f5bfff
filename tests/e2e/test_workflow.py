"""End-to-end: the whole workflow in real Chromium against ``streamlit run app.py``.

Walks data → feasibility → mechanism run → quick sweep → per-record → export and re-import on the built-in demo,
asserts on visible results, uploads a malformed file, saves a screenshot of every page to ``test-artifacts/`` and
measures (printed and written to ``test-artifacts/timings.json``):

* ``server_ready_s``: server process start → health endpoint answers;
* ``first_page_interactive_s``: server process start → the Start page is rendered and idle (target < 3 s);
* ``page_change_cached_s``: page → page once everything is cached (target < 1 s each).

Timings are reported, not asserted (CPU-bound CI machines vary); the report states them.

Uses Debian's Chromium (``chromium`` on PATH or /usr/bin/chromium). Outside CI a missing browser skips the test
with the reason; in CI (``CI=true``) it is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
#: Page url paths (st.navigation uses the file name) and their titles, in workflow order.
PAGES = {
    "": "Privacy Parameter Studio",
    "data": "Data",
    "feasibility": "Accuracy targets & feasibility",
    "mechanisms": "Mechanisms",
    "tradeoffs": "Tradeoffs",
    "per_record": "Per-record privacy",
    "export": "Export",
}


def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        message = "Chromium is not installed (Debian package 'chromium'; scripts/studio.sh test installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " — in CI the browser test must run")
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    """Chromium, launched before the server starts so that startup timings measure the app, not the browser."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def server(browser):
    """``streamlit run app.py`` on a free port; yields (url, process start time, health-ready seconds)."""
    port = free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "server.log", "wb")  # noqa: SIM115 - closed at teardown
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    ready = None
    deadline = started + 60
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            log.close()
            out = (ARTIFACTS / "server.log").read_text(errors="replace")
            pytest.fail(f"streamlit exited with code {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=1) as response:
                if response.status == 200:
                    ready = time.perf_counter() - started
                    break
        except OSError:
            time.sleep(0.05)
    if ready is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
        log.close()
        pytest.fail("streamlit did not answer its health check within 60 s")
    yield url, started, ready
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    log.close()


# ----------------------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------------------


def idle(page, timeout: float = 120_000, *, settle: bool = True) -> None:
    """Wait until the script run triggered by the last interaction has finished.

    ``settle`` first gives the interaction 120 ms to start its run (not needed, and not timed, when the caller
    already waited for something the new run drew).
    """
    if settle:
        page.wait_for_timeout(120)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()


def heading(page) -> str:
    return page.locator("h1").first.inner_text().strip()


def go(page, path: str, timeout: float = 120_000) -> float:
    """Click the sidebar link to ``path``; return seconds until the page's title shows and the run is idle."""
    started = time.perf_counter()
    href = '"/"]' if path == "" else f'"/{path}"]'
    page.locator(f'a[data-testid="stSidebarNavLink"][href$={href}').click()
    page.wait_for_function(
        "t => { const h = document.querySelector('h1'); return h && h.innerText.trim() === t; }",
        arg=PAGES[path], timeout=timeout,
    )
    idle(page, timeout, settle=False)
    return time.perf_counter() - started


def shoot(page, name: str) -> None:
    """Screenshot after the charts have drawn (plotly renders asynchronously)."""
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.stPlotlyChart')].every(c => c.querySelector('.main-svg'))",
            timeout=20_000,
        )
    except Exception:  # noqa: BLE001 - a chart that never draws shows up in the screenshot itself
        pass
    page.mouse.move(1435, 2395)  # no tooltip in the picture
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has=page.locator('[data-testid="stMetricLabel"]',
                                                                            has_text=label)).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def click_button(page, name: str) -> None:
    page.get_by_role("button", name=re.compile("^" + re.escape(name))).first.click()


# ----------------------------------------------------------------------------------------------------------------
# the workflow
# ----------------------------------------------------------------------------------------------------------------


def test_whole_workflow_in_chromium(browser, server):
    from playwright.sync_api import expect

    url, started, ready = server
    timings: dict[str, object] = {"server_ready_s": round(ready, 3)}
    page = browser.new_page(viewport={"width": 1440, "height": 2400}, accept_downloads=True)
    try:
        # ---- Start: first page interactive -----------------------------------------------------------------
        t0 = time.perf_counter()
        page.goto(url)
        # wait_for_* (not expect, which polls with back-off) so the timing is not rounded up
        page.wait_for_function(
            "t => { const h = document.querySelector('h1'); return h && h.innerText.trim() === t; }",
            arg=PAGES[""], timeout=60_000,
        )
        idle(page, settle=False)
        page.get_by_role("button", name=re.compile("Open the demo")).wait_for(state="visible")
        timings["first_page_interactive_s"] = round(time.perf_counter() - started, 3)
        timings["first_page_load_s"] = round(time.perf_counter() - t0, 3)
        no_exception(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar).to_contain_text("n = 4,201 people")
        expect(sidebar).to_contain_text("synthetic")
        shoot(page, "1-start")

        # ---- Data: demo preview, then a malformed upload that keeps everything ----------------------------
        go(page, "data")
        assert metric_value(page, "people (n)") == "4,201"
        shoot(page, "2-data")
        page.get_by_text("Upload a file", exact=True).click()
        idle(page)
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
            {"name": "broken.csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n3\n4,5,6,7\n"}
        )
        idle(page)
        error = page.locator('[data-testid="stAlert"]').filter(has_text="broken.csv")
        expect(error).to_contain_text("previous data and settings are unchanged")
        no_exception(page)
        shoot(page, "2b-data-malformed-upload")
        expect(sidebar).to_contain_text("n = 4,201 people")  # still the demo
        page.get_by_text("Built-in demo", exact=True).click()
        idle(page)
        assert metric_value(page, "people (n)") == "4,201"

        # ---- Feasibility: Example 1, then pick a point on the map -----------------------------------------
        go(page, "feasibility")
        click_button(page, "Load the paper's Example 1 inputs")
        idle(page)
        assert metric_value(page, "Largest feasible B") == "0.4"
        assert metric_value(page, "Every B below") == "0.5"
        expect(sidebar).to_contain_text("B = 0.4 · ε = 1 · δ = 1e-04")
        chart = page.locator(".stPlotlyChart").first
        chart.scroll_into_view_if_needed()
        page.wait_for_function("() => document.querySelector('.stPlotlyChart .nsewdrag')", timeout=20_000)
        box = chart.locator(".nsewdrag").first.bounding_box()
        x, y = box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.75  # ε ≈ 4.4, B ≈ 0.5: feasible
        page.mouse.move(x, y)
        page.wait_for_timeout(300)
        page.mouse.click(x, y)
        idle(page)
        expect(sidebar).not_to_contain_text("B = 0.4 · ε = 1 ·", timeout=10_000)
        no_exception(page)
        shoot(page, "3-feasibility")

        # ---- Mechanisms: run once ------------------------------------------------------------------------
        go(page, "mechanisms")
        click_button(page, "Run the mechanism")
        idle(page)
        expect(page.get_by_text("What it guarantees", exact=True)).to_be_visible(timeout=120_000)
        no_exception(page)
        shoot(page, "4-mechanisms")

        # ---- Tradeoffs: a quick sweep with one repetition --------------------------------------------------
        go(page, "tradeoffs")
        reps = page.get_by_role("spinbutton", name="Repetitions per point")
        reps.fill("1")
        reps.press("Tab")
        click_button(page, "Run the sweep")
        idle(page, timeout=300_000)
        expect(page.get_by_text("Results table", exact=True)).to_be_visible(timeout=300_000)
        no_exception(page)
        shoot(page, "5-tradeoffs")

        # ---- Per-record --------------------------------------------------------------------------------------
        go(page, "per_record")
        expect(page.get_by_text("1 · Policy functions at equal accuracy", exact=True)).to_be_visible(timeout=60_000)
        no_exception(page)
        shoot(page, "6-per-record")

        # ---- Export and re-import --------------------------------------------------------------------------
        go(page, "export")
        rationale = page.get_by_role("textbox", name="Rationale")
        rationale.fill("Targeting must keep 99 % of decisions (browser test).")
        rationale.press("Tab")
        idle(page)
        expect(page.get_by_text("python -m engine privatize --config decision-record.json --output private.csv",
                                exact=True)).to_be_visible()
        with page.expect_download() as download:
            page.get_by_role("button", name="Decision record (JSON)").first.click()
        record_path = ARTIFACTS / "decision-record.json"
        download.value.save_as(record_path)
        with page.expect_download() as report:
            page.get_by_role("button", name="HTML report").first.click()
        report.value.save_as(ARTIFACTS / "report.html")
        shoot(page, "7-export")

        from engine.decision_record import load_decision_record
        from ui.figures.theme import fmt

        record = load_decision_record(record_path.read_bytes())
        assert record.rationale == "Targeting must keep 99 % of decisions (browser test)."
        assert len(record.tradeoffs) == 2 and record.data.dataset == "togo-demo"  # both swept mechanisms
        assert (ARTIFACTS / "report.html").stat().st_size > 1_000_000  # plotly.js embedded

        # Change something, then import the record: the session comes back.
        go(page, "feasibility")
        eps = page.get_by_role("spinbutton", name="Privacy loss ε")
        eps.fill("7")
        eps.press("Tab")
        idle(page)
        go(page, "export")
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(record_path))
        idle(page)
        expect(page.get_by_text("Decision record from")).to_be_visible(timeout=30_000)
        expect(sidebar).to_contain_text(f"ε = {fmt(record.candidate.epsilon)} ·")
        no_exception(page)
        shoot(page, "7b-export-reimported")

        # ---- Page changes once cached -----------------------------------------------------------------------
        changes: dict[str, float] = {}
        for _ in range(2):  # the first lap warms every cache, the second is measured
            for path in ("", "data", "feasibility", "mechanisms", "tradeoffs", "per_record", "export"):
                changes[path or "start"] = round(go(page, path), 3)
        no_exception(page)
        timings["page_change_cached_s"] = changes
        timings["page_change_cached_max_s"] = max(changes.values())
    finally:
        page.close()
        (ARTIFACTS / "timings.json").write_text(json.dumps(timings, indent=2))
        print("\nE2E timings:", json.dumps(timings, indent=2))


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
        page.goto(url)
        idle(page)
        go(page, "data")
        page.get_by_text("Upload a file", exact=True).click()
        idle(page)
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv_path))
        idle(page)
        no_exception(page)
        target = page.locator('[data-testid="stSelectbox"]').filter(has_text="Target (the outcome").first
        target.locator("input").click()
        page.keyboard.type("wages")
        page.keyboard.press("Enter")
        idle(page)
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

    def choose(label: str, option: str) -> None:
        """Type ``option`` into the select box whose label starts with ``label`` (case-sensitive)."""
        box = page.locator('[data-testid="stSelectbox"], [data-testid="stMultiSelect"]').filter(
            has=page.locator("label", has_text=re.compile("^" + re.escape(label)))).first
        box.locator("input").click()
        page.keyboard.type(option)
        page.keyboard.press("Enter")
        idle(page)

    try:
        page.goto(url)
        idle(page)
        go(page, "data")
        page.get_by_text("Upload a file", exact=True).click()
        idle(page)
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv_path))
        idle(page)
        choose("Target (the outcome", "deny")
        choose("Which value(s) of", "no")
        page.keyboard.press("Escape")
        choose("Program", "lending — approve")
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
        reps = page.get_by_role("spinbutton", name="Repetitions per point")
        reps.fill("1")
        reps.press("Tab")
        click_button(page, "Run the sweep")
        idle(page, timeout=300_000)
        expect(page.get_by_text("Results table", exact=True)).to_be_visible(timeout=300_000)
        no_exception(page)
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
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(record_path))
        idle(page)
        expect(page.get_by_text("Decision record from")).to_be_visible(timeout=30_000)
        no_exception(page)
        expect(sidebar).to_contain_text("n = 2,380 people")
    finally:
        page.close()
