"""AppTest: the hostile-input corpus (tests/hostile_inputs.py) through the Data page's uploader (issue 15 §4, §5.1,
§5.3, §5.6; issue 34 §1).

One session uploads every file one after another. A file no choice on the Data page can fix (unreadable, too large
or wide, too few rows, no column with two usable values) shows a message naming the file, the problem and the fix
next to the uploader, and leaves the session's earlier data and settings exactly as they were; a usable one is
taken; one whose suggestion leaves a problem that a choice fixes (no column suggested: identifiers, dates, text,
infinite values) is taken with the problem next to the control that fixes it. No file may end in an exception
element.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tests.app.conftest import assert_clean, element_after, flat, open_page, shown, start_on, studio
from tests.hostile_inputs import MARKDOWN_COLUMNS, hostile_files, valid_csv

#: Files the engine reads correctly (delimiter detection, byte-order mark, odd but legal column names …).
USABLE = frozenset({
    "bom.csv", "booleans.csv", "formula-injection.csv", "long-column-name.csv", "markdown-column-names.csv",
    "mixed-types.csv", "one-column.csv", "script-column-name.csv", "semicolons.csv", "tsv-as-csv.csv",
})


#: Files read correctly whose suggestion has no feature, but where a choice on the Data page makes one (an identifier
#: or a date column chosen as a feature, a text column encoded, the finite column of one with infinite values):
#: taken, with "choose at least one feature column" next to the features (issue 34: refused only for what no
#: choice can fix).
FIXABLE = frozenset({
    "dates.csv", "deep-quotes.csv", "empty-column-names.csv", "huge-1e308.csv", "nan-inf.csv", "text-only.csv",
})


def _upload(at, name: str, content: bytes):
    at.file_uploader(key="data.upload").set_value((name, content, "text/csv")).run()
    return at


def _uploader_message(at) -> str | None:
    after = element_after(at, lambda e: type(e).__name__ == "FileUploader")
    return shown(after.value) if type(after).__name__ == "Error" else None


@pytest.mark.slow
def test_every_unusable_file_is_refused_with_a_message_and_the_session_kept():
    files = hostile_files()
    assert len(files) >= 35
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "good.csv", valid_csv())
    assert_clean(at)
    at.radio(key="data.norm_method").set_value("maxnorm").run()  # a setting the user made
    before = studio(at)
    kept = (before.upload_name, before.upload_fingerprint, before.spec, before.data_fingerprint)
    assert kept[0] == "good.csv" and before.spec.normalization.method == "maxnorm"
    tried = refused = 0
    for name, content in sorted(files.items()):
        if name in USABLE or name in FIXABLE or name.endswith(".xlsx"):  # the picker refuses other extensions
            continue
        tried += 1
        _upload(at, name, content)
        assert not at.exception, (name, [e.value for e in at.exception])
        message = _uploader_message(at)
        assert message is not None, name
        assert name in message and "previous data and settings are unchanged" in message, (name, message)
        assert " — " in message or "Fix the file" in message, (name, message)  # names the fix
        state = studio(at)
        assert (state.upload_name, state.upload_fingerprint, state.spec, state.data_fingerprint) == kept, name
        refused += 1
    assert tried == refused >= 19
    # The session still works with its previous data.
    open_page(at, "feasibility")


@pytest.mark.slow
def test_every_usable_odd_file_is_taken_without_an_exception():
    """Odd but legal files (byte-order mark, semicolons, tabs, formula-like and HTML-like column names …) load."""
    files = hostile_files(large=False)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    for name in sorted(USABLE):
        _upload(at, name, files[name])
        assert not at.exception, (name, [e.value for e in at.exception])
        assert _uploader_message(at) is None, name
        state = studio(at)
        assert state.upload_name == name and state.source == "upload" and state.n == 40, name


@pytest.mark.slow
def test_a_file_a_choice_can_fix_is_taken_with_the_problem_beside_its_control():
    files = hostile_files(large=False)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    for name in sorted(FIXABLE):
        _upload(at, name, files[name])
        assert not at.exception, (name, [e.value for e in at.exception])
        assert _uploader_message(at) is None, name
        assert studio(at).upload_name == name and studio(at).source == "upload", name
        assert any("choose at least one feature column" in e.value for e in at.error), name
    # text-only.csv: encode one of its text columns (every level read from the data) and it prepares
    _upload(at, "text-only.csv", files["text-only.csv"])
    at.multiselect(key="data.features").set_value(["city"]).run()
    assert_clean(at)
    assert studio(at).n == 40 and len(studio(at).feature_names) == 40


def test_a_readable_but_invalid_upload_keeps_the_previous_data_and_settings():
    """§5.3: 19 rows must not replace a valid upload (today the session switched to the file first)."""
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "good.csv", valid_csv())
    at.radio(key="data.norm_method").set_value("maxnorm").run()
    spec, fingerprint = studio(at).spec, studio(at).data_fingerprint
    _upload(at, "nineteen-rows.csv", hostile_files(large=False)["nineteen-rows.csv"])
    assert_clean(at)
    message = _uploader_message(at)
    assert message is not None and "19 data rows" in message and "at least 20" in message
    state = studio(at)
    assert state.upload_name == "good.csv" and state.spec == spec and state.data_fingerprint == fingerprint
    assert at.radio(key="data.norm_method").value == "maxnorm"


def test_too_many_columns_are_refused_before_any_work():
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "wide.csv", hostile_files(large=False)["five-thousand-columns.csv"])
    assert_clean(at)
    message = _uploader_message(at)
    assert message is not None and "5,000 columns" in message and "at most 500" in message
    assert studio(at).source == "demo"


def _markdown_nodes(at) -> list:
    """Every element whose text Streamlit renders as Markdown (markdown, captions, alerts, subheaders …)."""
    return [e for e in flat(at.main) if type(e).__name__ in
            ("Markdown", "Caption", "Error", "Warning", "Info", "Success", "Subheader", "Header", "Title")]


def test_markdown_in_column_and_file_names_is_shown_literally():
    """§5.1: a column named ``![px](http://127.0.0.1:9/t.png)`` must not become an image (a request to that address)
    and ``**Approved by**`` must not become bold, wherever a name is shown."""
    content = hostile_files(large=False)["markdown-column-names.csv"]
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "**Approved by** ![f](http://127.0.0.1:9/f.png).csv", content)
    assert_clean(at)
    # Make the columns appear in messages: choose the image-named column as the target and as a program column.
    at.selectbox(key="data.target").set_value(MARKDOWN_COLUMNS[0]).run()
    assert_clean(at)
    texts = [e.value for e in _markdown_nodes(at)]
    joined = " ".join(texts)
    assert "Approved by" in joined  # the file name is shown …
    for text in texts:  # … but no Markdown image, link or bold survives un-escaped
        assert not re.search(r"(?<!\\)\*(?<!\\)\*Approved|(?<!\\)\]\(", text), text
    from ui.common import plain

    assert plain(MARKDOWN_COLUMNS[0]) in joined or plain("**Approved by** ![f](http://127.0.0.1:9/f.png).csv") in joined


def test_text_levels_read_from_the_data_are_listed_escaped_one_note_per_column():
    """A text feature's levels read from the data are quoted in the normalisation's privacy notes: as text (a level
    ``![f](http://127.0.0.1:9/f.png)`` is no image), one point per column."""
    frame = pd.DataFrame({"income": np.arange(30.0), "town": ["![f](http://127.0.0.1:9/f.png)", "**b**", "c"] * 10,
                          "tenure": ["own", "rent", "rent"] * 10})
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "levels.csv", frame.to_csv(index=False).encode())
    assert_clean(at)
    notes = [w.value for w in at.warning if "Not private by itself" in w.value]
    assert len(notes) == 1
    points = [line for line in notes[0].splitlines() if line.startswith("- ")]
    assert [p.count("Not private by itself") for p in points] == [1, 1]  # town, tenure: a point each
    assert not re.search(r"(?<!\\)\]\(|(?<!\\)\*(?<!\\)\*b", notes[0]), notes[0]
    from ui.common import plain

    assert plain("![f](http://127.0.0.1:9/f.png)") in notes[0]


# ---- issue 35 item 6: bounded decoding, nothing refused kept in the cache -------------------------------------

def _counting_reads(monkeypatch) -> list[str]:
    """Every file the upload cache parses (a cached file is not parsed again)."""
    import ui.cached

    reads: list[str] = []
    original = ui.cached.load_table

    def counted(source, *, filename=None, **kwargs):
        reads.append(filename)
        return original(source, filename=filename, **kwargs)

    monkeypatch.setattr(ui.cached, "load_table", counted)
    return reads


def test_a_parquet_bomb_is_refused_and_nothing_of_it_is_cached(monkeypatch):
    from tests.hostile_inputs import parquet_bomb

    reads = _counting_reads(monkeypatch)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    bomb = parquet_bomb()
    for attempt in (1, 2):
        _upload(at, "bomb.parquet", bomb)
        assert_clean(at)
        message = _uploader_message(at)
        assert message is not None and "30,000,000 rows × 1 columns" in message and "limit of 10,000,000" in message
        assert "previous data and settings are unchanged" in message
        assert reads.count("bomb.parquet") == attempt  # refused, so not cached: read (the metadata) again
    assert studio(at).source == "demo"


def test_a_file_refused_after_reading_is_dropped_from_the_cache(monkeypatch):
    """A readable but unusable file (19 rows) is not kept in the cache for its hour; a usable one is."""
    reads = _counting_reads(monkeypatch)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    nineteen = hostile_files(large=False)["nineteen-rows.csv"]
    for attempt in (1, 2):
        _upload(at, "nineteen.csv", nineteen)
        assert "19 data rows" in (_uploader_message(at) or "")
        assert reads.count("nineteen.csv") == attempt
    import ui.cached

    for _ in (1, 2):
        ui.cached.uploaded_table(ui.cached.sha256_bytes(valid_csv()), "good.csv", valid_csv())
    assert reads.count("good.csv") == 1  # the cache itself works: a kept file is parsed once


def test_the_column_limit_is_checked_from_the_header(monkeypatch):
    """A 5,000-column file is refused from its header line, before pandas parses a row."""
    import engine.data.io

    def never(*args, **kwargs):
        raise AssertionError("the table was parsed")

    monkeypatch.setattr(engine.data.io.pd, "read_csv", never)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    _upload(at, "wide.csv", hostile_files(large=False)["five-thousand-columns.csv"])
    assert_clean(at)
    message = _uploader_message(at)
    assert message is not None and "5,000 columns" in message and "at most 500" in message


def test_a_parquet_bomb_as_a_count_table_is_refused_on_the_public_information_page():
    from tests.hostile_inputs import parquet_bomb

    at = start_on("public_info")
    at.radio(key="public_info.source").set_value("upload").run()
    at.file_uploader(key="public_info.file").set_value(("counts.parquet", parquet_bomb(), "application/octet-stream"))
    at.run()
    assert_clean(at)
    errors = " ".join(e.value for e in at.error)
    assert "30,000,000 rows" in errors and "limit of 10,000,000" in errors, errors
