"""Shared browser fixtures and helpers of the end-to-end tests: Chromium (``browser``), ``streamlit run app.py`` on a
free port (``server``, one per test module), and small page helpers (``idle``, ``go``, ``shoot``, ...)."""

from __future__ import annotations

import contextlib
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
    "public_info": "Public information",
    "workshop": "Workshop",
    "export": "Export",
}


#: Screenshots are taken only when asked for (``STUDIO_SCREENSHOTS=1``): each costs Chromium a full render and a PNG
#: encode plus a settle wait, about 25 of them a run, so the default test command leaves them out. The README's tour
#: pictures come from ``STUDIO_SCREENSHOTS=1 bash scripts/studio.sh test tests/e2e``.
SCREENSHOTS = os.environ.get("STUDIO_SCREENSHOTS", "") not in ("", "0")
#: The browser window: tall for the README's pictures; a laptop's screen otherwise (Chromium draws and rasterises
#: what is in view, so the smaller window costs less CPU on the 2-core machine).
VIEWPORT = {"width": 1440, "height": 2400} if SCREENSHOTS else {"width": 1280, "height": 1000}


def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        message = "Chromium is not installed (Debian package 'chromium'; scripts/studio.sh test installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " — in CI the browser test must run")
        pytest.skip(message)
    return path


def stop_process_group(proc: subprocess.Popen, *, timeout: float = 15) -> None:
    """End a server started in its own process group: SIGTERM, then SIGKILL if it has not exited in ``timeout`` s."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    """Chromium, one per test process, launched before any server starts so that startup timings measure the app,
    not the browser. Each module's session opens its own page (or isolated context) in it."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@contextlib.contextmanager
def _streamlit_server():
    """The app's server (``python -m ui.serve``, i.e. ``streamlit run app.py``) on a free port; yields (url, process
    start time, health-ready seconds)."""
    port = free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"server-{port}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed at teardown
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    ready = None
    deadline = started + 60
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            log.close()
            out = log_path.read_text(errors="replace")
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
    try:
        yield url, started, ready
    finally:
        stop_process_group(proc, timeout=10)
        log.close()


async def _first_session(url: str) -> None:
    """One session that opens the Start page twice: the first run starts the server's background warm-up (the
    imports later pages need, ``ui.common.warm_up``), the second waits for it to finish."""
    from tests.e2e.streamlit_session import StreamlitSession

    session = StreamlitSession(url, "")
    try:
        await session.open()
        await session.rerun()
    finally:
        await session.close()


@pytest.fixture(scope="session")
def _shared_server(browser):
    """The server the modules of a test process share, warmed up before the first of them starts: its start-up
    costs are set-up, not a step's time (the modules that measure start-up have a fresh server of their own)."""
    from tests.e2e.streamlit_session import EventLoopThread

    with _streamlit_server() as server:
        loop = EventLoopThread()
        try:
            loop.run(_first_session(server[0]))
        finally:
            loop.close()
        yield server


@pytest.fixture(scope="module")
def server(request, browser):
    """The app's server for a test module: one server shared by the modules of a test process, or a fresh one of
    its own for a module that sets ``FRESH_SERVER = True`` (a first request after start-up, start-up timings,
    the server's memory as started). Starting a server and importing the engine in it costs several CPU seconds;
    the modules' sessions are separate either way (each has its own browser page and Streamlit session)."""
    if getattr(request.module, "FRESH_SERVER", False):
        with _streamlit_server() as server:
            yield server
    else:
        yield request.getfixturevalue("_shared_server")


@pytest.fixture(scope="session")
def _process_pages():
    pages: list = []
    yield pages
    for page in pages:
        if not page.is_closed():
            page.close()


@pytest.fixture(scope="module")
def page(browser, _process_pages):
    """One user's session for a module of steps (``STEPS = True``): a browser page that every step continues.

    The modules of a test process take turns with one page: each module's first step opens its own address,
    which starts a new Streamlit session (the Studio keeps nothing in cookies or browser storage, and a session is
    found again only by the ``sid`` in its address). Keeping the page keeps its renderer with the frontend's
    compiled scripts: about 3 CPU seconds of Chromium per module on the 2-core machine. A page a module closed
    (or whose renderer crashed) is replaced for the next module."""
    if not _process_pages or _process_pages[-1].is_closed() or getattr(_process_pages[-1], "_studio_crashed", False):
        page = browser.new_page(viewport=VIEWPORT, accept_downloads=True)
        page.on("crash", lambda crashed: setattr(crashed, "_studio_crashed", True))
        _process_pages.append(page)
    yield _process_pages[-1]


@pytest.fixture(scope="module")
def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember a failed step of a module whose tests are the steps of one session (``STEPS = True``)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and getattr(item.module, "STEPS", False):
        item.module.FAILED_STEP = item.name


@pytest.fixture(autouse=True)
def _earlier_steps_passed(request):
    """In a module of steps, a step after a failed one starts from the page the failure left behind: skip it. Only
    the steps of the shared session (tests that take the module's ``page`` or ``sessions`` fixture) are skipped; a
    test with a browser page of its own still runs."""
    failed = getattr(request.module, "FAILED_STEP", None)
    if failed is not None and {"page", "sessions"} & set(request.fixturenames):
        pytest.skip(f"the earlier step {failed} failed; this step continues its session")


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
    """Screenshot (when ``STUDIO_SCREENSHOTS`` is set) after the charts have drawn (plotly renders asynchronously)."""
    if not SCREENSHOTS:
        return
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


def settled_click(page, locator, timeout: float = 120_000) -> None:
    """Click ``locator``, then wait for the run the click starts: until the app reports a running script (at most
    2 s; a click that starts no run, or a run over before it is seen, passes), then until it is idle. Unlike
    ``idle``'s fixed 120 ms settle, the next interaction cannot land before this one's run has begun (a fresh-clone
    CI run lost a radio click made while the run of the checkbox clicked just before had not started yet)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    locator.click()
    try:
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="running"]', timeout=2_000)
    except PlaywrightTimeoutError:
        pass
    idle(page, timeout, settle=False)


def click_button(page, name: str) -> None:
    page.get_by_role("button", name=re.compile("^" + re.escape(name))).first.click()


# ----------------------------------------------------------------------------------------------------------------
# the workflow


def run_sweep_with_one_repetition(page) -> None:
    """On the Tradeoffs page: one repetition per point, run, and wait for the results table."""
    from playwright.sync_api import expect

    reps = page.get_by_role("spinbutton", name="Repetitions per point")
    reps.fill("1")
    reps.press("Tab")
    # Let the reruns of the edits finish first: on a loaded machine a click that lands while the button is being
    # redrawn by them was lost once in a full run (the page still said "press Run the sweep" five minutes later).
    idle(page)
    click_button(page, "Run the sweep")
    idle(page, timeout=300_000)
    expect(page.get_by_text("Results table", exact=True)).to_be_visible(timeout=300_000)
    no_exception(page)


def export_record(page, path):
    """On the Export page: download the decision record to ``path`` and load it (validated)."""
    from engine.decision_record import load_decision_record

    with page.expect_download() as download:
        page.get_by_role("button", name="Decision record (JSON)").first.click()
    download.value.save_as(path)
    return load_decision_record(Path(path).read_bytes())


def import_record(page, path) -> None:
    """On the Export page: upload a decision record and wait until the page says it was imported."""
    from playwright.sync_api import expect

    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    idle(page)
    expect(page.get_by_text("Decision record from")).to_be_visible(timeout=30_000)
    no_exception(page)


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the select box (or multiselect) whose label starts with ``label``: type to filter, then
    click the option itself (pressing Enter races the filtering on a busy machine and may pick another option)."""
    box = page.locator('[data-testid="stSelectbox"], [data-testid="stMultiSelect"]').filter(
        has=page.locator("label", has_text=re.compile("^" + re.escape(label)))).first
    field = box.locator("input")
    for attempt in range(3):  # the menu opens on focus; on a busy machine the first click may land before it can
        field.click()
        field.fill(option)
        choice = page.get_by_role("option", name=option, exact=True).first
        try:
            choice.click(timeout=15_000)
            break
        except Exception:  # noqa: BLE001 - retried; the last attempt re-raises below
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
    idle(page)


def open_upload_on_data_page(page, url: str) -> None:
    """Open the Data page and switch it to "Upload a file" (a step of its own: with the upload after it, the first
    step of a real-data module took up to 19 s under load, near the 20 s a test may take).

    The page is opened by its address, not through the Start page (which the workflow test walks): about 2 CPU
    seconds of Chromium per module. (A link with ``data=upload:…`` would skip the switch too, but it is a link made
    on another file, and the page rightly says so above the upload.) The shared server has served a session
    before (``_shared_server``), so the address is not its first request."""
    page.goto(url + "data")
    idle(page)
    assert heading(page) == PAGES["data"]
    page.get_by_text("Upload a file", exact=True).click()
    idle(page)
    no_exception(page)


def upload_file(page, path) -> None:
    """Upload the file at ``path`` on the Data page switched to "Upload a file" (:func:`open_upload_on_data_page`)."""
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    idle(page)
    no_exception(page)
