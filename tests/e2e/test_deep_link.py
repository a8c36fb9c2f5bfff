"""A deep link opened as the FIRST request after the server starts still gets the Studio's navigation.

Streamlit's legacy multipage mechanism picks up Python files directly in ``pages/``; before the page scripts moved
to ``pages/studio/``, a first request such as ``/feasibility`` ran that page alone (auto-generated page list, no
shared sidebar) for every session until someone opened the root URL. Even with the scripts one level down, Streamlit
still routed that first request through its legacy router (because ``pages/`` exists) and showed its "Page not found"
dialog over the correctly drawn page; ``ui/serve.py`` switches the legacy router off. Its own module, so its own fresh
server.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import heading, idle, no_exception

pytestmark = pytest.mark.e2e
FRESH_SERVER = True  # the first request after start-up must be the deep link


def test_deep_link_as_first_request_runs_through_the_app(page, server):
    url, _, _ = server
    page.goto(url + "feasibility")
    page.wait_for_selector("h1", timeout=120_000)
    idle(page)
    no_exception(page)
    assert heading(page) == "Accuracy targets & feasibility"
    page.wait_for_timeout(300)  # the dialog, when sent, arrives before the page's elements; a margin all the same
    dialogs = page.locator('[role="dialog"]')
    assert dialogs.count() == 0, dialogs.first.inner_text()  # no "Page not found — running the app's main page"
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Accuracy targets & feasibility" in nav and "Per-record" in nav  # the app's titles, not file names
    assert "per record" not in nav and "app" not in nav.split()  # legacy mode would list the files
    assert page.get_by_text("Dataset", exact=True).count() >= 1  # the shared sidebar drawn by app.py
