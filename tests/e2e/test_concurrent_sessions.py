"""Ten people at once (issue 15, concurrency): ten browser sessions on one server, each uploading its own table at
the same time. No session may ever show another's file, columns or values, the server's memory after they close
must stay within a stated bound of what it was before, and no uploaded value may reach the disk (data hygiene: the
Studio keeps uploads in memory only — each session's unique marker is looked for in every file written during the
test under the checkout, the home folder and the temporary folder).

The sessions are ten tabs of one browser context. Each tab is its own Streamlit session (its own websocket, its
own ``st.session_state``, its own ``?sid=`` key in its address); the Studio does not tell sessions apart by cookies
or browser storage, and tabs sharing them can only make a leak between sessions more likely, not less. The tabs
share the browser's HTTP cache, so the frontend is loaded once instead of ten times (ten isolated contexts cost
Chromium about 13 CPU seconds more on the 2-core machine). Their uploads are sent before any of them is awaited, so
the server prepares them concurrently. The
steps run in file order on the module's server and share the sessions; a step after a failed one is skipped.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.conftest import ROOT, go, idle, no_exception

pytestmark = pytest.mark.e2e
FRESH_SERVER = True  # the server's memory is measured from its start
STEPS = True

SESSIONS = 10
#: Resident memory the server may keep after the sessions close, over what it held as started (MB): the engine and
#: page modules the first session imports, the shared caches it fills, and each session's upload, prepared data
#: and Streamlit bookkeeping (sessions are kept for a reload: ui.session_store, bounded by count, bytes and time).
MEMORY_BOUND_MB = 400
#: Folders not searched for uploaded values: the virtual environment, git and tool caches (nothing the server
#: writes), toolchains a developer's home may hold, and the browser's own profile (Chromium's cache is the
#: browser's, not the Studio's; a real user's browser keeps its own).
_NOT_SEARCHED = {".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis", ".pyenv", ".rustup",
                 ".cargo", ".m2", ".npm", "pip", "node_modules", "site-packages"}


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


def _files_written_since(started: float) -> list[Path]:
    """Regular files modified since ``started`` under the checkout, the home folder and the temporary folder."""
    found = []
    for top in {ROOT, Path.home(), Path(tempfile.gettempdir())}:
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in _NOT_SEARCHED and not d.startswith("playwright")]
            for name in files:
                path = Path(folder) / name
                try:
                    info = path.lstat()
                except OSError:
                    continue  # removed while walking
                if path.is_file() and not path.is_symlink() and info.st_mtime >= started and info.st_size < 2**26:
                    found.append(path)
    return found


def _files_holding(markers: list[str], paths: list[Path]) -> list[str]:
    hits = []
    for path in paths:
        try:
            content = path.read_bytes()
        except OSError:
            continue
        hits += [f"{path}: {m}" for m in markers if f"col_{m}".encode() in content]
    return hits


@pytest.fixture(scope="module")
def sessions(browser, server):
    """Ten sessions (tabs), their markers and values, and the server's memory as started."""
    url, _, _ = server
    state = {
        "markers": [secrets.token_hex(4) for _ in range(SESSIONS)],
        "values": [7_000_000 + 10_000 * i for i in range(SESSIONS)],  # each session's values: its own range
        "contexts": [browser.new_context(viewport={"width": 1000, "height": 1200})],
        "started": time.time() - 1,  # file times have a coarse clock on some file systems
        "before": _server_rss_mb(url),  # the server as started, before any session
    }
    state["pages"] = [state["contexts"][0].new_page() for _ in range(SESSIONS)]
    state["peak"] = state["before"]
    yield state
    for context in state["contexts"]:
        context.close()


def test_ten_sessions_open_the_data_page(sessions, server):
    url, _, _ = server
    pages = sessions["pages"]
    # The first session after the server starts opens the root: a deep link as the very first request shows
    # Streamlit's "Page not found" dialog (streamlit/streamlit#9624). The other nine open the Data page at once by a
    # link that selects the upload mode (a link made on uploaded data), then all are awaited.
    pages[0].goto(url)
    idle(pages[0])
    go(pages[0], "data")
    pages[0].get_by_text("Upload a file", exact=True).click()
    for page in pages[1:]:
        page.goto(url + "data?data=upload:0", wait_until="commit")
    for page in pages:
        idle(page)
        no_exception(page)


def test_ten_simultaneous_uploads_each_show_their_own_file(sessions, server):
    url, _, _ = server
    pages, markers, values = sessions["pages"], sessions["markers"], sessions["values"]
    for i, page in enumerate(pages):  # all uploads sent before any is awaited
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
            {"name": f"session-{markers[i]}.csv", "mimeType": "text/csv", "buffer": _table(markers[i], values[i])}
        )
    sessions["peak"] = max(sessions["peak"], _server_rss_mb(url))
    for i, page in enumerate(pages):
        idle(page)
        no_exception(page)
        page.locator('[data-testid="stSidebar"]').get_by_text(f"session-{markers[i]}.csv").wait_for()
        sessions["peak"] = max(sessions["peak"], _server_rss_mb(url))


def test_no_session_shows_another_sessions_columns_or_values(sessions):
    pages, markers, values = sessions["pages"], sessions["markers"], sessions["values"]
    for i, page in enumerate(pages):
        text = page.locator("body").inner_text()
        assert f"_{markers[i]}" in text, f"session {i} does not show its own columns"
        leaked = [m for j, m in enumerate(markers) if j != i and m in text]
        assert not leaked, f"session {i} shows another session's file or column: {leaked}"
        assert not any(str(v) in text for j, v in enumerate(values) if j != i), f"session {i} shows another's value"


def test_after_the_sessions_close_memory_is_bounded_and_nothing_reached_the_disk(sessions, server):
    url, _, _ = server
    for context in sessions["contexts"]:
        context.close()
    sessions["contexts"] = []
    # A positive control: a file holding a marker, written now where a careless server would write, is found.
    canary_marker = secrets.token_hex(4)
    with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as canary:
        canary.write(_table(canary_marker, 1))
    try:
        written = _files_written_since(sessions["started"])
        assert _files_holding([canary_marker], written), "the search for uploaded values on disk is broken"
    finally:
        os.unlink(canary.name)
    on_disk = _files_holding(sessions["markers"], written)
    assert not on_disk, f"uploaded values written to disk: {on_disk}"
    before, peak, after = sessions["before"], sessions["peak"], _server_rss_mb(url)
    print(f"\n{SESSIONS} sessions: server RSS {before:.0f} MB before, peak {peak:.0f} MB, {after:.0f} MB after close")
    assert after - before <= MEMORY_BOUND_MB, (before, peak, after)
