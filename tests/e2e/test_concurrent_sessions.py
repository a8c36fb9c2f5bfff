"""Ten people at once (issue 15, concurrency): ten sessions on one server, each uploading its own table at the same
time. No session may ever receive another's file, columns or values, the server's memory after they close must stay
within a stated bound of what it was before, and no uploaded value may reach the disk (data hygiene: the Studio
keeps uploads in memory only — each session's unique marker is looked for in every file written during the test
under the checkout, the home folder and the temporary folder).

The sessions are driven by a script speaking Streamlit's own protocol (``tests/e2e/streamlit_session.py``: the
websocket and the upload endpoint a browser uses), not by ten Chromium tabs: what is checked here is the server's
behaviour, and the tabs cost about 55 CPU seconds on the 2-core machine. The check is stricter than a browser's:
every message the server sent a session is searched, shown or not. The browser's side of an upload is tested in
Chromium by the workflow, real-survey and real-lending tests. The sessions open the Data page by a link that selects
the upload mode (a link made on uploaded data), all at once; their uploads are all sent before any is awaited, so
the server prepares them concurrently.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.conftest import ROOT
from tests.e2e.streamlit_session import EventLoopThread, StreamlitSession

pytestmark = pytest.mark.e2e
STEPS = True

SESSIONS = 10
#: Resident memory the server may keep after the sessions close, over what it held before they opened (MB): modules
#: the Data page imports that the warm-up did not, the shared caches the sessions fill, and each session's upload,
#: prepared data and Streamlit bookkeeping (sessions are kept for a reload: ui.session_store, bounded by count,
#: bytes and time). The server is the test process's shared one, warmed up (tests/e2e/conftest.py); it may have
#: served other modules' sessions before.
MEMORY_BOUND_MB = 150
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


async def _ten_sessions(sessions: list[StreamlitSession], markers: list[str], values: list[int],
                        peak: list[float]) -> None:
    """Open the sessions together, then upload every table before awaiting any; the sessions stay open."""
    url = sessions[0].url
    await asyncio.gather(*(s.open() for s in sessions))
    uploads = [asyncio.create_task(s.upload(f"session-{m}.csv", _table(m, v)))
               for s, m, v in zip(sessions, markers, values, strict=True)]
    while not all(u.done() for u in uploads):
        peak[0] = max(peak[0], _server_rss_mb(url))
        await asyncio.wait(uploads, timeout=0.2)
    for upload in uploads:
        upload.result()
    peak[0] = max(peak[0], _server_rss_mb(url))


async def _close_all(sessions: list[StreamlitSession]) -> None:
    await asyncio.gather(*(s.close() for s in sessions))


@pytest.fixture(scope="module")
def sessions(server):
    """The ten sessions after their simultaneous uploads (still open), their markers and values, the server's
    memory before they opened and at its peak."""
    url, _, _ = server
    state = {
        "markers": [secrets.token_hex(4) for _ in range(SESSIONS)],
        "values": [7_000_000 + 10_000 * i for i in range(SESSIONS)],  # each session's values: its own range
        "started": time.time() - 1,  # file times have a coarse clock on some file systems
        "before": _server_rss_mb(url),  # the server before these sessions
    }
    peak = [state["before"]]
    state["sessions"] = [StreamlitSession(url, "data", "data=upload:0") for _ in range(SESSIONS)]
    loop = EventLoopThread()
    state["close"] = lambda: loop.run(_close_all(state["sessions"]))
    try:
        loop.run(_ten_sessions(state["sessions"], state["markers"], state["values"], peak))
        state["peak"] = peak[0]
        yield state
    finally:
        # every session, also when opening or uploading failed: none may stay on the shared server with its upload
        state["close"]()  # closing a closed session does nothing
        loop.close()


def test_ten_sessions_open_the_data_page_and_upload_without_an_error(sessions):
    for i, session in enumerate(sessions["sessions"]):
        assert session.uploader_id is not None, f"session {i} did not draw the Data page's file uploader"
        assert not session.exceptions, f"session {i} shows a traceback: {session.exceptions}"


def test_each_session_shows_its_own_file_and_columns(sessions):
    for i, (session, marker) in enumerate(zip(sessions["sessions"], sessions["markers"], strict=True)):
        received = session.received_bytes()
        assert f"session-{marker}.csv".encode() in received, f"session {i} does not show its own file"
        assert f"col_{marker}".encode() in received, f"session {i} does not show its own columns"
        # its own values reach it (the column profile's examples): the search for another's values below can see them
        assert str(sessions["values"][i]).encode() in received, f"session {i} does not show its own values"


def test_no_session_receives_another_sessions_file_columns_or_values(sessions):
    markers, values = sessions["markers"], sessions["values"]
    for i, session in enumerate(sessions["sessions"]):
        received = session.received_bytes()
        leaked = [m for j, m in enumerate(markers) if j != i and m.encode() in received]
        assert not leaked, f"session {i} received another session's file or column: {leaked}"
        leaked_values = [v for j, v in enumerate(values) if j != i and str(v).encode() in received]
        assert not leaked_values, f"session {i} received another session's values: {leaked_values}"


def test_after_the_sessions_close_memory_is_bounded_and_nothing_reached_the_disk(sessions, server):
    url, _, _ = server
    sessions["close"]()
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
