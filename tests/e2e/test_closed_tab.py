"""A closed tab stops its work (issue 15 §5.6): a Mechanisms run on a lender's 20,788 applicants stops when its tab
closes, instead of computing for a session nobody will see.

Streamlit stops a session's script at its next Streamlit call once the tab's connection is gone. The run's
progress updates are those calls (``engine.analysis.analyse_mechanisms(progress=…)``): before them, a run inside
``st.cache_data`` made none and ran to its end (a 5,000-column upload kept the server busy for minutes).

What is checked is the server's behaviour when the tab's websocket closes, so the tab is a session driven over the
server's own protocol (tests/e2e/streamlit_session.py), as a browser's tab drives it: it opens the Mechanisms page on
the demo, presses Run the mechanism, sees the run's progress, and closes its connection as a closed tab does. A
Chromium page of its own cost about 3 CPU seconds more for the same check, and drawing the page during the run more.
"""

from __future__ import annotations

import time

import psutil
import pytest

from tests.e2e.streamlit_session import EventLoopThread, StreamlitSession

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


async def _run_then_close_the_tab(url: str) -> None:
    """Open the Mechanisms page on the demo, press Run the mechanism, see its progress, then close the tab."""
    tab = StreamlitSession(url, "mechanisms", "data=nigeria-demo")
    try:
        await tab.open()
        assert not tab.exceptions, tab.exceptions
        await tab.press("mechanisms.run")
        await tab.wait_for_text("Scoring the program", timeout=60)  # the run's progress bar
        assert not tab.exceptions, tab.exceptions
    finally:
        await tab.close()  # the user closes the tab mid-run


def test_closing_the_tab_stops_a_running_mechanisms_run(server):
    url, _, _ = server
    process = _server(url)
    loop = EventLoopThread()
    try:
        loop.run(_run_then_close_the_tab(url))
    finally:
        loop.close()
    deadline = time.monotonic() + 10  # the whole run takes ~20 s more; one release between two updates ~1–2 s
    quiet = False
    while time.monotonic() < deadline and not quiet:
        before = _cpu_seconds(process)
        time.sleep(1.5)
        quiet = _cpu_seconds(process) - before < 0.3  # a fifth of one core over 1.5 s
    assert quiet, "the server kept computing for a closed tab"
