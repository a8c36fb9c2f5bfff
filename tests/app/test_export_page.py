"""AppTest: the Export page — the record states the session's choices; importing it restores the session."""

from __future__ import annotations

import json

from engine.decision_record import load_decision_record
from engine.mechanisms.gaussian import GaussianMechanism
from tests.app.conftest import assert_clean, element_after, open_page, shown, start_app, start_on, studio


def _shown_records(at) -> list[str]:
    return [c.value for c in at.code if c.value.lstrip().startswith('{\n  "kind": "decision-record"')]


def record_text(at) -> str:
    """The decision record JSON the page offers: shown in the 'Show the decision record' expander, which draws it
    only when opened (opened here as a user would, if it is not open yet)."""
    if not _shown_records(at):
        at.session_state["export.record_open"] = True
        at.run()
    return _shown_records(at)[0]


def test_the_record_is_drawn_only_when_its_expander_is_opened():
    """A visit of the page does not send the highlighted record (thousands of elements for the browser); opening
    the expander shows it, and closing it takes it away again."""
    at = configured_session()
    assert not _shown_records(at)
    assert [e.label for e in at.expander if e.label == "Show the decision record (JSON)"]
    at.session_state["export.record_open"] = True
    at.run()
    assert len(_shown_records(at)) == 1
    assert load_decision_record(_shown_records(at)[0]).candidate == studio(at).candidate
    at.session_state["export.record_open"] = False
    at.run()
    assert not _shown_records(at)


def configured_session():
    at = start_app()
    open_page(at, "data")
    at.radio(key="data.norm_method").set_value("maxnorm").run()
    open_page(at, "feasibility")
    at.text_input(key="feasibility.gammas").set_value("0.95, 0.99").run()
    at.checkbox(key="feasibility.delta_default").uncheck().run()
    at.number_input(key="feasibility.delta").set_value(1e-5).run()
    at.number_input(key="feasibility.epsilon").set_value(2.0).run()
    at.number_input(key="feasibility.b").set_value(0.3).run()
    studio(at).seed = 42
    studio(at).mechanism = GaussianMechanism(b=0.3, epsilon=2.0, delta=1e-5, calibration="analytic")
    open_page(at, "export")
    at.text_area(key="export.rationale").set_value("Keep 99 % of decisions; protect neighbours within B.").run()
    assert_clean(at)
    return at


def test_record_states_the_session_and_the_command():
    at = configured_session()
    record = load_decision_record(record_text(at))
    state = studio(at)
    assert record.candidate == state.candidate
    assert (record.candidate.b, record.candidate.epsilon, record.candidate.delta) == (0.3, 2.0, 1e-5)
    assert record.targets.gammas == (0.95, 0.99) and record.targets.delta_rule == "chosen"
    assert record.release.mechanism["calibration"] == "analytic" and record.release.seed == 42
    assert record.release.data.normalization.method == "maxnorm"
    assert record.rationale == "Keep 99 % of decisions; protect neighbours within B."
    assert record.data.sha256 == state.data_fingerprint and record.data.dataset == "togo-demo"
    assert any(c.value == record.command for c in at.code)
    assert record.command == "python -m engine privatize --config decision-record.json --output private.csv"
    text = shown(" ".join(m.value for m in at.markdown))
    for block in ("Protection domain", "Scope of protection", "Protection unit", "Neighbouring relation",
                  "B in the data's units", "Standard of protection", "Intensity of protection", "Out of scope"):
        assert f"**{block}" in text, block
    assert record.specification.neighbouring_relation in text
    assert any("NOT private" in w.value for w in at.warning)  # seeded


def test_import_restores_the_whole_session():
    source = configured_session()
    text = record_text(source)
    before = studio(source)

    at = start_on("export")
    at.file_uploader(key="export.import").set_value(("decision-record.json", text.encode(), "application/json")).run()
    assert_clean(at)
    after = studio(at)
    for name in ("source", "demo_name", "spec", "gammas", "delta", "candidate", "mechanism", "seed", "rationale",
                 "eps_max", "data_fingerprint"):
        assert getattr(after, name) == getattr(before, name), name
    assert any("Decision record from" in w.value for w in at.warning)
    # The restored values drive the other pages' widgets.
    open_page(at, "feasibility")
    assert at.number_input(key="feasibility.b").value == 0.3
    assert at.text_input(key="feasibility.gammas").value == "0.95, 0.99"
    assert at.checkbox(key="feasibility.delta_default").value is False
    open_page(at, "data")
    assert at.radio(key="data.norm_method").value == "maxnorm"
    # Exporting again gives the same record (apart from its creation time).
    open_page(at, "export")
    again = json.loads(record_text(at))
    first = json.loads(text)
    again.pop("created"), first.pop("created")
    assert again == first


def test_corrupted_record_shows_a_message_next_to_the_uploader_and_loses_nothing():
    at = configured_session()
    before = studio(at)
    snapshot = (before.candidate, before.gammas, before.spec, before.rationale)
    broken = record_text(at).replace('"schema_version": 1', '"schema_version": 7').encode()
    at.file_uploader(key="export.import").set_value(("old.json", broken, "application/json")).run()
    assert_clean(at)
    after = element_after(at, lambda e: getattr(e, "key", None) == "export.import")
    assert type(after).__name__ == "Error"
    assert "schema version 7" in after.value and "Nothing in your session was changed" in after.value
    state = studio(at)
    assert (state.candidate, state.gammas, state.spec, state.rationale) == snapshot

    at.file_uploader(key="export.import").set_value(("junk.json", b"{not json", "application/json")).run()
    assert_clean(at)
    assert any("not valid JSON" in e.value for e in at.error)


def test_record_made_on_an_upload_asks_for_the_same_file():
    at = start_app()
    open_page(at, "data")
    at.radio(key="data.source").set_value("Upload a file").run()
    content = "a,b,c\n" + "\n".join(f"{i},{i * i % 7},{(3 * i) % 5}" for i in range(30))
    at.file_uploader(key="data.upload").set_value(("mine.csv", content.encode(), "text/csv")).run()
    open_page(at, "export")
    text = record_text(at)
    assert "mine.csv" in text and "0,0,0" not in text
    record = load_decision_record(text)
    assert "--input YOUR_DATA.csv" in record.command

    fresh = start_on("export")
    fresh.file_uploader(key="export.import").set_value(("r.json", text.encode(), "application/json")).run()
    assert_clean(fresh)
    state = studio(fresh)
    assert state.source == "upload" and state.upload_bytes is None
    assert state.upload_fingerprint == record.data.file_sha256
    assert any("Upload the same file" in w.value for w in fresh.warning)


def test_html_report_is_self_contained_escaped_and_complete():
    import plotly.graph_objects as go

    from engine.data.demos import load_demo
    from engine.data.preparation import prepare
    from engine.decision_record import build_decision_record
    from engine.guarantee import Guarantee
    from ui.report import html_report

    demo = load_demo("togo-demo")
    prepared = prepare(demo.frame, demo.spec)
    candidate = Guarantee(epsilon=1.0, delta=1e-4, b=0.4)
    record = build_decision_record(
        prepared=prepared, source="demo", dataset="togo-demo", title=demo.title, synthetic=True,
        columns=tuple(demo.frame.columns), candidate=candidate, gammas=(0.99,), delta_is_default=False,
        mechanism={"kind": "gaussian", "b": 0.4, "epsilon": 1.0, "delta": 1e-4},
        rationale="<script>alert('x')</script> because",
    )
    figures = [("one", go.Figure(go.Scatter(x=[1], y=[2]))), ("two", go.Figure(go.Bar(x=[1], y=[3])))]
    page = html_report(record, figures, [("table", __import__("pandas").DataFrame({"a": [1.5]}))])
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>")
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    # plotly.js is embedded exactly once (no CDN link) and both charts are present.
    assert 'src="https://cdn.plot.ly' not in page
    assert page.count("plotGlPixelRatio:{valType") == 1  # a marker inside the plotly.js bundle
    assert page.count("Plotly.newPlot") == 2
    for block in ("Protection domain", "Scope of protection", "Protection unit", "Neighbouring relation",
                  "Standard of protection", "Intensity of protection", "Out of scope"):
        assert block in page
    assert record.command in page and record.data.sha256 in page


def test_sweep_results_survive_export_and_import():
    import numpy as np
    import pandas as pd

    from engine.sweeps import SweepResult, preset

    at = start_on("export")
    state = studio(at)
    table = pd.DataFrame({"point": [0, 1], "rep": [0, 0], "reference": ["non-private", "tdp"], "b": [2.0, 0.5],
                          "accuracy": [0.76, 0.71], "noise_sd": [0.0, np.pi]})
    results = [
        SweepResult(config=preset("quick", n=4201, mechanism=m), table=table, fingerprint=state.data_fingerprint,
                    n_released=3361, n_holdout=840)
        for m in ("projection", "gaussian")
    ]
    state.sweeps = tuple(results)
    at.run()
    assert_clean(at)
    text = record_text(at)
    assert len(load_decision_record(text).tradeoffs) == 2

    fresh = start_on("export")
    fresh.file_uploader(key="export.import").set_value(("r.json", text.encode(), "application/json")).run()
    assert_clean(fresh)
    restored = studio(fresh).sweeps
    assert [r.config.mechanism for r in restored] == ["projection", "gaussian"]
    pd.testing.assert_frame_equal(restored[0].table, table)


def test_the_export_page_offers_the_record_as_a_notebook_and_a_script():
    at = start_on("export")
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Notebook (.ipynb)" in labels and "Script (.py)" in labels, labels
