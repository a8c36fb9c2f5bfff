"""Ten people at once (issue 15, concurrency): ten browser sessions on one server, each uploading its own table at
the same time. No session may ever show another's file, columns or values, and the server's memory after they close
must stay within a stated bound of what it was before.

The sessions are ten isolated browser contexts (own cookies and storage, like ten people's browsers) of one
Chromium; their uploads are sent before any of them is awaited, so the server prepares them concurrently.
"""

from __future__ import annotations

import secrets

import psutil
import pytest

from tests.e2e.conftest import ARTIFACTS, go, idle, no_exception

pytestmark = pytest.mark.e2e

SESSIONS = 10
#: Resident memory the server may keep after the sessions close, over what it held as started (MB): the engine and
#: page modules the first session imports, the shared caches it fills, and each session's upload, prepared data
#: and Streamlit bookkeeping (sessions are kept for a reload: ui.session_store, bounded by count, bytes and time).
MEMORY_BOUND_MB = 400


def _server_rss_mb(url: str) -> float:
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return psutil.Process(conn.pid).memory_info().rss / 2**20
    raise AssertionError(f"no process listens on port {port}")


def _table(marker: str, value: int) -> bytes:
    """A small table whose column name and values are unique to one session."""
    rows = [f"col_{marker},age_{marker},outcome_{marker}"]  # every column: whichever the page picks as target
    rows += [f"{value + i},{20 + i % 40},{(i * 7) % 5}" for i in range(60)]
    return ("\n".join(rows) + "\n").encode()


def test_ten_simultaneous_sessions_never_see_each_others_data(browser, server):
    url, _, _ = server
    markers = [secrets.token_hex(4) for _ in range(SESSIONS)]
    values = [7_000_000 + 10_000 * i for i in range(SESSIONS)]  # each session's values: its own range
    contexts = [browser.new_context(viewport={"width": 1000, "height": 1200}) for _ in range(SESSIONS)]
    pages = [context.new_page() for context in contexts]
    before = _server_rss_mb(url)  # the server as started, before any session
    try:
        # The first session after the server starts opens the root: a deep link as the very first request shows
        # Streamlit's "Page not found" dialog (streamlit/streamlit#9624). The other nine open the Data page at once
        # by a link that selects the upload mode (a link made on uploaded data), then all are awaited.
        pages[0].goto(url)
        idle(pages[0])
        go(pages[0], "data")
        pages[0].get_by_text("Upload a file", exact=True).click()
        for page in pages[1:]:
            page.goto(url + "data?data=upload:0", wait_until="commit")
        for page in pages:
            idle(page)
        for i, page in enumerate(pages):  # all uploads sent before any is awaited
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                {"name": f"session-{markers[i]}.csv", "mimeType": "text/csv", "buffer": _table(markers[i], values[i])}
            )
        peak = _server_rss_mb(url)
        for i, page in enumerate(pages):
            idle(page)
            no_exception(page)
            page.locator('[data-testid="stSidebar"]').get_by_text(f"session-{markers[i]}.csv").wait_for()
            peak = max(peak, _server_rss_mb(url))
        for i, page in enumerate(pages):
            text = page.locator("body").inner_text()
            assert f"_{markers[i]}" in text, f"session {i} does not show its own columns"
            others = [m for j, m in enumerate(markers) if j != i]
            leaked = [m for m in others if m in text]
            assert not leaked, f"session {i} shows another session's file or column: {leaked}"
            assert not any(str(v) in text for j, v in enumerate(values) if j != i), f"session {i} shows another's value"
        page = pages[0]
        page.screenshot(path=str(ARTIFACTS / "concurrent-session-0.png"))
    finally:
        for context in contexts:
            context.close()
    after = _server_rss_mb(url)
    print(f"\n{SESSIONS} sessions: server RSS {before:.0f} MB before, peak {peak:.0f} MB, {after:.0f} MB after close")
    assert after - before <= MEMORY_BOUND_MB, (before, peak, after)
