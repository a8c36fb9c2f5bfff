"""Shared helpers for the AppTest suites: start from app.py, switch pages, check state stays picklable."""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
#: Generous: the first run of a fresh process imports scikit-learn, scipy and plotly.
TIMEOUT = 120


def start_app(**session: Any) -> AppTest:
    """A fresh AppTest of ``app.py`` run once (the Start page), with ``session`` seeded before the first run."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for key, value in session.items():
        at.session_state[key] = value
    return at.run()


def start_on(page: str) -> AppTest:
    """A fresh AppTest opened directly on ``pages/studio/<page>.py`` (as a link to the page opens it), without the
    Start page's run first; fails on any exception shown by the app. About 50-130 ms less per test than
    ``open_page(start_app(), page)``."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.switch_page(f"pages/studio/{page}.py").run()
    assert_clean(at)
    return at


def open_page(at: AppTest, page: str) -> AppTest:
    """Switch to ``pages/studio/<page>.py`` and run it; fail on any exception shown by the app."""
    at.switch_page(f"pages/studio/{page}.py").run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    """No exception element, and every session-state value picklable (enforceSerializableSessionState)."""
    assert not at.exception, [e.value for e in at.exception]
    for key in at.session_state:
        if key.startswith("$$"):
            continue
        pickle.dumps(at.session_state[key])


def shown(markdown: str) -> str:
    """What the reader sees of Markdown source whose user text was escaped (``ui.common.plain``): backslash
    escapes of punctuation removed, and the invisible word joiners that keep addresses from becoming links."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def studio(at: AppTest):
    """The session's StudioState."""
    return at.session_state["studio"]


def flat(node: Any) -> Iterator[Any]:
    """Elements of the rendered tree in document order (blocks expanded)."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for key in sorted(children):
        yield from flat(children[key])


def element_after(at: AppTest, predicate) -> Any:
    """The first element (in document order) directly after the element matching ``predicate``."""
    items = list(flat(at.main))
    for i, item in enumerate(items):
        if predicate(item) and i + 1 < len(items):
            return items[i + 1]
    raise AssertionError("no element matched")


@pytest.fixture(autouse=True)
def wait_for_the_script_without_polling(monkeypatch):
    """Wait for each AppTest script run by joining its thread instead of Streamlit's 1 ms polling loop.

    ``streamlit.testing.v1.local_script_runner.require_widgets_deltas`` (1.67) wakes every millisecond to look for
    the run's SHUTDOWN event; under py-spy that loop was about 10 % of the AppTests' CPU and, holding the GIL at
    every wake-up, slowed the script thread it waits for. Each run has its own script thread, which ends right
    after SHUTDOWN (the runner joins it next), so joining it with the same timeout waits for exactly the same
    moment. A run still going at the timeout gets Streamlit's own handling (stop, join, "timed out" error).
    """
    from streamlit.testing.v1 import local_script_runner

    polling = local_script_runner.require_widgets_deltas

    def wait(runner, timeout: float = 3) -> None:
        thread = getattr(runner, "_script_thread", None)
        if thread is not None:
            thread.join(timeout)
        if not runner.script_stopped():
            polling(runner, 0)  # stops the run and raises Streamlit's timeout error

    monkeypatch.setattr(local_script_runner, "require_widgets_deltas", wait)


@pytest.fixture(autouse=True)
def navigation_mode(monkeypatch):
    """Run every AppTest rerun through app.py's ``st.navigation``, as the live server does.

    AppTest 1.67 resets ``PagesManager.uses_pages_directory`` before each run and re-derives it from the existence
    of a ``pages/`` folder, so reruns would execute the page file alone (legacy multipage mode), skipping app.py
    and its sidebar. In the live server ``st.navigation`` sets the flag to False on the first run; we do the same.
    """
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(autouse=True, scope="session")
def _one_component_scan_and_script_cache():
    """Do once per test process what AppTest 1.67 redoes for every AppTest: the scan of every installed
    distribution's metadata for Streamlit v2 components (``BidiComponentManager.discover_and_register_components``),
    and the parse and compile of app.py and the page scripts (a fresh ``ScriptCache`` per run). The live server
    does both once per process too. Under py-spy they were about 10 % and 5 % of the AppTests' CPU.

    The Studio installs no v2 components, so the scan's result (empty) is the same for every test; the scripts are
    not edited while the tests run, so their cached bytecode is the one a fresh compile would give.
    """
    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    scan, cache_class = manifest_scanner.scan_component_manifests, app_test.ScriptCache
    found = scan()
    shared = ScriptCache()
    manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(found)
    app_test.ScriptCache = lambda: shared
    yield
    manifest_scanner.scan_component_manifests, app_test.ScriptCache = scan, cache_class
