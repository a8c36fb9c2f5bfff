"""AppTest: no value of an uploaded file appears in a share link or in the address bar (issue 35 item 4).

A rare text level (``Jane_Doe_HIV_positive``) names a person; levels read from the data, the outcome labels counted
as 1 and bounds read from the data are all values of the file. Column names stay (the file's schema, see
``ui/links.py``). The sidebar says what the link leaves out, and so does the Studio of whoever opens it."""

from __future__ import annotations

import urllib.parse

import pandas as pd

from tests.app.conftest import APP, TIMEOUT, assert_clean, open_page, shown, start_on, studio
from ui.data_controls import PICK

RARE = "Jane_Doe_HIV_positive"


def _upload_frame() -> pd.DataFrame:
    n = 40
    towns = ["Lome_North", "Kara_Centre"] * (n // 2)
    towns[17] = RARE
    return pd.DataFrame({
        "income": [f"{1000 + i * 7.31:.2f}" for i in range(n)],
        "spend": [f"{250 + (i * 37) % 41 * 3.17:.2f}" for i in range(n)],
        "town": towns,
        "status": ["Repaid_Qx7" if i % 3 else "Defaulted_Zk9" for i in range(n)],
    })


def _file_values(frame: pd.DataFrame) -> set[str]:
    """Every cell of the file as text (long enough not to occur by chance), and as a float's repr where numeric."""
    values = set()
    for column in frame.columns:
        for cell in frame[column]:
            text = str(cell)
            values.add(text)
            try:
                values.add(repr(float(text)))
            except ValueError:
                pass
    return {v for v in values if len(v) >= 5}


def _links(at) -> str:
    """The address bar's parameters and the sidebar's share link, URL-decoded."""
    at.toggle(key="sidebar.share").set_value(True).run()
    assert_clean(at)
    (code,) = [c.value for c in at.sidebar.code]
    params = " ".join(f"{k}={v}" for k, v in dict(at.query_params).items())
    return urllib.parse.unquote_plus(code) + " " + params


def test_no_value_of_an_uploaded_file_appears_in_any_link():
    frame = _upload_frame()
    content = frame.to_csv(index=False).encode()
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value(("loans.csv", content, "text/csv")).run()
    assert_clean(at)
    at.selectbox(key="data.target").set_value("status").run()
    at.multiselect(key="data.positive").set_value(["Repaid_Qx7"]).run()
    # the levels chosen from the data's own list: values of the file, named in the spec
    at.radio(key="data.cat.town.mode").set_value(PICK).run()
    at.multiselect(key="data.cat.town.pick").set_value(["Kara_Centre", RARE]).run()
    assert_clean(at)
    state = studio(at)
    assert state.spec.categorical["town"].levels_from_data and RARE in state.spec.categorical["town"].levels
    assert state.spec.positive_class == ("Repaid_Qx7",)
    values = _file_values(frame)
    assert RARE in values and "1007.31" in values
    for page in ("data", "feasibility", "export"):
        open_page(at, page)
        text = _links(at)
        assert "town" in text and "status" in text  # column names: the schema, kept
        leaked = sorted(v for v in values if v in text)
        assert not leaked, (page, leaked)
        caption = " ".join(shown(c.value) for c in at.sidebar.caption)
        assert "Left out of this link and of the address bar" in caption
        assert "text levels read from the uploaded file" in caption and "counted as 1" in caption
    # Whoever opens the link gets the settings back, without the file's values, and is told what is missing.
    params = {k: v for k, v in dict(at.query_params).items() if k != "sid"}
    from streamlit.testing.v1 import AppTest

    other = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    other.query_params.update(params)
    other.run()
    assert_clean(other)
    warnings = shown(" ".join(w.value for w in other.warning))
    assert "leaves out values of the uploaded file" in warnings and "choose them again" in warnings
    restored = studio(other).spec
    assert restored.target == "status" and restored.positive_class == ()
    assert restored.categorical["town"].levels == () and restored.categorical["town"].levels_from_data
    # The same file uploaded there reads the levels again.
    other.switch_page("pages/studio/data.py").run()
    other.file_uploader(key="data.upload").set_value(("loans.csv", content, "text/csv")).run()
    assert_clean(other)
    assert studio(other).upload_fingerprint == state.upload_fingerprint and studio(other).upload_name == "loans.csv"
    other.multiselect(key="data.positive").set_value(["Repaid_Qx7"]).run()  # asked for again, as the link said
    assert_clean(other)
    assert "town=" + RARE in studio(other).feature_names and studio(other).spec.positive_class == ("Repaid_Qx7",)


def test_a_demo_keeps_its_public_levels_in_the_link():
    """Demo data are public: nothing is left out of their links."""
    at = start_on("data")
    at.toggle(key="sidebar.share").set_value(True).run()
    assert_clean(at)
    assert not any("Left out of this link" in c.value for c in at.sidebar.caption)
    assert "left_out" not in dict(at.query_params)
