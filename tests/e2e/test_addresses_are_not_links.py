"""In the browser: addresses in column names are shown as text, never as clickable links (issue 35 item 9).

Streamlit's Markdown turns ``http://…``, ``www.…`` and ``name@host`` into links even when their punctuation is
backslash-escaped (a probe of the Data and Export pages found every such column name as an ``<a href>``);
``ui.common.plain`` breaks them with an invisible word joiner. The AppTest in tests/app/test_urls_are_not_links.py
walks every page; this checks the rendered page itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.e2e.conftest import go, no_exception, open_upload_on_data_page, upload_file

pytestmark = pytest.mark.e2e

HOST = "evil.example"
COLUMNS = (f"http://{HOST}/a", f"www.{HOST}", f"https://{HOST}/b?c=1", f"pay@{HOST}")


def _links_to_the_host(page) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    return [h for h in hrefs if HOST in h and not h.startswith(page.url.split("?")[0].rsplit("/", 1)[0])]


def test_column_names_that_are_addresses_are_not_links(page, server, tmp_path):
    url, _, _ = server
    open_upload_on_data_page(page, url)  # by its address: the Start page is walked by the workflow test
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({COLUMNS[0]: rng.normal(size=60).round(3), COLUMNS[1]: rng.integers(0, 9, 60),
                          COLUMNS[2]: ["a", "b", "c"] * 20, COLUMNS[3]: np.arange(60) % 2})
    path = tmp_path / "addresses.csv"
    frame.to_csv(path, index=False)
    upload_file(page, path)
    from playwright.sync_api import expect

    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("n = 60 people", timeout=60_000)
    no_exception(page)
    assert page.locator('[data-testid="stMain"]').inner_text().count(HOST) >= 4  # the names are shown …
    assert _links_to_the_host(page) == []  # … as text
    go(page, "export")
    no_exception(page)
    assert _links_to_the_host(page) == []
