"""A closed tab stops its work (issue 15 §5.6): a Mechanisms run on a lender's 20,788 applicants stops when its tab
closes, instead of computing for a session nobody will see.

Streamlit stops a session's script at its next Streamlit call once the tab's connection is gone. The run's
progress updates are those calls (``engine.analysis.analyse_mechanisms(progress=…)``): before them, a run inside
``st.cache_data`` made none and ran to its end (a 5,000-column upload kept the server busy for minutes).
"""

from __future__ import annotations

import time

import psutil
import pytest

from tests.e2e.conftest import click_button, go, idle, no_exception

pytestmark = pytest.mark.e2e


def _server(url: str) -> psutil.Process:
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return psutil.Process(conn.pid)
    raise AssertionError(f"no process listens on port {port}")


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds of the server and every process it started."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def test_closing_the_tab_stops_a_running_mechanisms_run(browser, server):
    url, _, _ = server
    process = _server(url)
    page = browser.new_page(viewport={"width": 1280, "height": 1200})
    page.goto(url + "?data=nigeria-demo")
    idle(page)
    go(page, "mechanisms")
    click_button(page, "Run the mechanism")
    page.get_by_text("Scoring the program").first.wait_for(timeout=60_000)  # the run's progress bar
    no_exception(page)
    page.close()  # the user closes the tab mid-run
    deadline = time.monotonic() + 10  # the whole run takes ~20 s more; one release between two updates ~1–2 s
    quiet = False
    while time.monotonic() < deadline and not quiet:
        before = _cpu_seconds(process)
        time.sleep(1.5)
        quiet = _cpu_seconds(process) - before < 0.3  # a fifth of one core over 1.5 s
    assert quiet, "the server kept computing for a closed tab"
