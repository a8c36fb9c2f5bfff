"""AppTest: addresses in column names, file names and values are shown as text, never as clickable links
(issue 35 item 9).

Streamlit renders labels, captions, alerts, metrics and Markdown with GitHub-flavoured autolinks: ``http://…``,
``www.…`` and ``name@host`` become links. It finds them in the text after backslash escapes are resolved (a browser
probe found ``http\\://evil.example/a`` rendered as a link), so the test looks at the text as shown — escapes
removed — for an address the autolink would match; :func:`ui.common.plain` breaks each with an invisible word
joiner. This walks the pages with an upload whose column names, file name and values are addresses."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tests.app.conftest import assert_clean, flat, open_page, shown, start_on

HOST = "evil.example"
COLUMNS = (f"http://{HOST}/a", f"www.{HOST}", f"https://{HOST}/b?c=1", f"pay@{HOST}")
FILE_NAME = f"https://{HOST}/upload.csv"
#: An address as the autolink extension sees it, in the text after escapes are resolved (:func:`_rendered`).
AUTOLINK = re.compile(rf"(?:https?://|www\.|[-.\w+]@){re.escape(HOST)}")


def _rendered(markdown: str) -> str:
    """The text the autolink extension searches: backslash escapes resolved, invisible characters kept."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
#: Element types whose text Streamlit renders as Markdown.
MARKDOWN_TYPES = {"Markdown", "Caption", "Error", "Warning", "Info", "Success", "Title", "Header", "Subheader",
                  "Toast", "Latex"}


def _markdown_texts(at) -> list[tuple[str, str]]:
    """(element type, text) of every Markdown-rendered text: bodies, widget labels and help, metric labels,
    expander and tab labels."""
    out = []
    for node in (at.main, at.sidebar):
        for element in flat(node):
            kind = type(element).__name__
            if kind in MARKDOWN_TYPES:
                out.append((kind, str(element.value)))
            for attribute in ("label", "help"):
                value = getattr(element, attribute, None)
                if isinstance(value, str):
                    out.append((f"{kind}.{attribute}", value))
    for block in (*at.expander, *at.tabs):
        out.append((type(block).__name__, str(getattr(block, "label", ""))))
    return out


def _linked(at) -> list[tuple[str, str]]:
    return [(kind, text) for kind, text in _markdown_texts(at) if AUTOLINK.search(_rendered(text))]


def _frame() -> pd.DataFrame:
    n = 60
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        COLUMNS[0]: rng.normal(size=n).round(3),
        COLUMNS[1]: rng.integers(0, 9, n),
        COLUMNS[2]: ["a", "b", "c"] * (n // 3),
        COLUMNS[3]: np.arange(n) % 2,
    })


def test_the_pattern_finds_raw_addresses_and_spares_escaped_ones():
    from ui.common import plain

    for column in COLUMNS:
        assert AUTOLINK.search(column) and AUTOLINK.search(_rendered(f"a \\{column}")), column
        assert not AUTOLINK.search(_rendered(plain(column))), column
        assert shown(plain(column)) == column  # shown as typed


def test_addresses_in_column_and_file_names_are_never_links_on_any_page():
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value((FILE_NAME, _frame().to_csv(index=False).encode(), "text/csv")).run()
    assert_clean(at)
    at.selectbox(key="data.target").set_value(COLUMNS[3]).run()
    assert_clean(at)
    seen = 0
    for page in ("data", "feasibility", "mechanisms", "tradeoffs", "per_record", "workshop", "export"):
        open_page(at, page)
        if page == "mechanisms":
            at.radio(key="mechanisms.kind").set_value("gaussian").run()
            at.text_input(key="mechanisms.seed").set_value("1")
            at.button(key="mechanisms.run").click().run()
            assert_clean(at)
        texts = _markdown_texts(at)
        seen += sum(HOST in text for _, text in texts)
        assert not _linked(at), (page, _linked(at))
    assert seen >= 5  # the names are shown (escaped), not hidden


def test_a_count_table_named_by_an_address_is_not_a_link():
    content = pd.DataFrame({"region": np.repeat([f"www.{HOST}", f"http://{HOST}/r"], 3),
                            "period": np.tile([1, 2, 3], 2), "count": [5, 6, 7, 8, 9, 10]}).to_csv(index=False)
    at = start_on("public_info")
    at.radio(key="public_info.source").set_value("upload").run()
    at.file_uploader(key="public_info.file").set_value((FILE_NAME, content.encode(), "text/csv")).run()
    assert_clean(at)
    texts = _markdown_texts(at)
    assert any("upload.csv" in text for _, text in texts)
    assert not _linked(at), _linked(at)
