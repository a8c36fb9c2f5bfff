"""AppTest: the Start page and the shell around every page (navigation, sidebar, scenario links)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, TIMEOUT, assert_clean, open_page, start_app, start_on, studio


def test_start_page_shows_the_loaded_demo_and_sidebar():
    at = start_app()
    assert_clean(at)
    assert at.title[0].value == "Privacy Parameter Studio"
    # The default demo is loaded: n = 4,201 synthetic Togo records, default δ = 1/(n+1).
    assert [m.value for m in at.metric] == ["4,201", "10", f"{1 / 4202:.2e}"]
    sidebar = " ".join(str(m.value) for m in at.sidebar.markdown)
    assert "synthetic" in sidebar
    assert "B = 0.4 · ε = 1" in sidebar  # default candidate: Example 1's point
    assert "fresh randomness" in sidebar  # no seed: not the "not private" badge


def test_open_demo_button_goes_to_the_data_page():
    at = start_app()
    studio(at).demo_name = "nigeria-demo"
    at.button(key="start.open_demo").click().run()
    assert_clean(at)
    assert at.title[0].value == "Data"
    assert studio(at).demo_name == "togo-demo"


def test_seeded_run_is_labelled_not_private_in_the_sidebar():
    at = start_app()
    studio(at).seed = 7
    at.run()
    assert "seed 7 — not private" in " ".join(str(m.value) for m in at.sidebar.markdown)


def test_scenario_link_round_trip():
    at = start_app()
    at = open_page(at, "feasibility")
    at.text_input(key="feasibility.gammas").set_value("0.99, 0.95").run()
    at.number_input(key="feasibility.epsilon").set_value(2.0).run()
    assert_clean(at)
    params = dict(at.query_params)
    params.pop("sid")  # the session's private key: a shared link never carries it
    assert params["data"] == "togo-demo"
    assert params["gamma"] == "0.99,0.95"
    assert float(params["eps"]) == 2.0

    # A participant opens the link in a fresh session: the same scenario comes back.
    other = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    other.query_params.update(params)
    other.run()
    assert_clean(other)
    state = studio(other)
    assert state.gammas == (0.99, 0.95)
    assert state.candidate.epsilon == 2.0
    assert state.candidate.b == studio(at).candidate.b


def test_broken_link_parts_are_reported_and_the_rest_restored():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"data": "no-such-demo", "gamma": "0.9", "B": "abc", "eps": "1", "mech": "{bad",
                            "seed": "-3"})
    at.run()
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "no-such-demo" in warnings and "'B' must be a number" in warnings
    assert "mechanism could not be restored" in warnings and "seed could not be restored" in warnings
    assert studio(at).mechanism is None and studio(at).seed is None
    assert studio(at).gammas == (0.9,)
    assert studio(at).demo_name == "togo-demo"


def test_link_made_on_an_upload_restores_its_settings_once_the_same_file_is_uploaded():
    from engine.fingerprint import keyed_digest

    content = ("x,y,z,t\n" + "\n".join(f"{i},{(i * 7) % 11},{(i * 3) % 5},{i % 2}" for i in range(40))).encode()
    fingerprint = keyed_digest(content)
    spec = '{"features":["x","y"],"target":"t","roles":null,"normalization":{"method":"maxnorm","standardize":true,"lower":[],"upper":[]}}'
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"data": f"upload:{fingerprint}", "spec": spec, "gamma": "0.95"})
    at.run()
    assert_clean(at)
    assert any("Upload the same file" in w.value for w in at.warning)
    assert studio(at).source == "upload" and studio(at).upload_bytes is None
    open_page(at, "data")
    at.file_uploader(key="data.upload").set_value(("again.csv", content, "text/csv")).run()
    assert_clean(at)
    state = studio(at)
    assert state.upload_bytes == content
    assert state.spec.features == ("x", "y") and state.spec.normalization.method == "maxnorm"
    assert state.n == 40 and state.d == 2 and state.gammas == (0.95,)
    # Links never carry the data: only its fingerprint.
    params = dict(at.query_params)
    assert params["data"] == f"upload:{fingerprint}" and "0,0,0" not in "".join(params.values())


def test_link_opens_the_page_it_was_made_on():
    at = start_on("feasibility")
    params = dict(at.query_params)
    params.pop("sid")
    assert params["page"] == "feasibility"
    other = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    other.query_params.update(params)
    other.run()
    assert_clean(other)
    assert other.title[0].value == "Accuracy targets & feasibility"


def test_a_reload_keeps_the_upload_and_the_results_and_a_shared_link_does_not():
    """Issue 9: a page reload used to drop the upload, every run and a long sweep. The session is kept in memory
    under the address's private key; the share link carries the scenario only."""
    from tests.real_data import penguins
    from ui.common import share_link

    at = start_on("data")
    content = penguins().to_csv(index=False).encode()
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value(("penguins.csv", content, "text/csv")).run()
    at.selectbox(key="data.target").set_value("body_mass_g").run()
    assert_clean(at)
    address = dict(at.query_params)
    sid = address["sid"]
    assert len(sid) >= 20

    reload = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    reload.query_params.update(address)  # the same address: a reload
    reload.run()
    assert_clean(reload)
    kept = studio(reload)
    assert kept.upload_bytes == content and kept.spec.target == "body_mass_g"
    assert kept is not studio(at)  # a private copy, not the other session's object

    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()  # a new tab without the key
    assert studio(fresh).upload_bytes is None and dict(fresh.query_params)["sid"] != sid
    assert "sid=" not in share_link(studio(at), "data")


def test_the_share_toggle_shows_the_scenario_link_without_the_private_key():
    """The sidebar's link is drawn only when asked for (its code block costs the browser's first paint); it is the
    engine-free ``share_link`` of the session, and never holds the address's private key."""
    from ui.common import share_link

    at = start_on("feasibility")
    assert not [c for c in at.sidebar.code]
    at.toggle(key="sidebar.share").set_value(True).run()
    assert_clean(at)
    shown = [c.value for c in at.sidebar.code]
    assert shown == [share_link(studio(at), "feasibility")]
    assert "sid=" not in shown[0] and "data=togo-demo" in shown[0]
    assert "sid" in dict(at.query_params)  # the address bar keeps it: a reload finds the session again


def test_a_page_that_ends_early_still_draws_the_sidebar_and_writes_the_address():
    """The Mechanisms page before a run ends early; with st.stop() Streamlit dropped the shell's sidebar and the
    address-bar update (so a reload lost the session). ui.common.stop_page ends the page and keeps both."""
    at = start_on("mechanisms")
    assert any("Set the parameters" in i.value for i in at.info)
    assert "Candidate" in " ".join(str(m.value) for m in at.sidebar.markdown)
    params = dict(at.query_params)
    assert params["page"] == "mechanisms" and len(params["sid"]) >= 20
