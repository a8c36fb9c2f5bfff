"""AppTest: the Data page — demos, uploads (in memory), column choices, problems next to their controls."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.fingerprint import keyed_digest
from tests.app.conftest import assert_clean, element_after, open_page, start_on, studio


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def small_csv(n: int = 40) -> bytes:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"income": rng.normal(100, 15, n), "age": rng.integers(18, 80, n),
                          "spend": rng.normal(50, 5, n), "label": rng.integers(0, 2, n)})
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def test_demo_is_prepared_by_the_engine():
    at = start_on("data")
    demo = load_demo("togo-demo")
    prepared = prepare(demo.frame, demo.spec)
    assert metric(at, "people (n)") == f"{prepared.n:,}"
    assert metric(at, "features (d)") == str(prepared.d)
    assert metric(at, "rows clipped") == f"{prepared.clipped_rows:,}"
    assert studio(at).data_fingerprint == prepared.fingerprint
    assert any("synthetic" in m.value for m in at.markdown)
    # The preview's "after" table is the engine's prepared matrix (after the column profile and the "before" table).
    after = at.dataframe[2].value
    np.testing.assert_allclose(after.to_numpy(), np.round(prepared.x[:8], 4))


def test_switching_demo_resets_the_spec_and_results():
    at = start_on("data")
    # The list shows each demo's title with the name links and the command line use.
    assert at.selectbox(key="data.demo").options[:2] == ["Togo cash transfers (synthetic) (togo-demo)",
                                                         "Nigeria micro-loans (synthetic) (nigeria-demo)"]
    at.selectbox(key="data.demo").set_value("nigeria-demo").run()
    assert_clean(at)
    assert studio(at).demo_name == "nigeria-demo"
    assert studio(at).n == 20788
    assert studio(at).spec is None
    # The Nigeria demo is a lending program with its loan columns preselected.
    assert at.selectbox(key="data.program").value == "lending"
    assert at.selectbox(key="data.role.loan_amount").value == "loan_amount"
    rule = at.radio(key="data.approval_rule")
    assert rule.label == "Approve when" and rule.options == ["probability of repaying ≥ a threshold",
                                                             "the top share of applicants"]
    # A classification program speaks of the positive class, not of repaying (found by a new-user run).
    at.selectbox(key="data.program").set_value("classification").run()
    assert_clean(at)
    rule = at.radio(key="data.approval_rule")
    assert rule.label == "Predict the positive class when" and "repaying" not in " ".join(rule.options)


def test_choosing_a_feature_as_target_moves_it_out_of_the_features():
    at = start_on("data")
    assert "calls_out" in at.multiselect(key="data.features").value
    at.selectbox(key="data.target").set_value("calls_out").run()
    assert_clean(at)
    assert "calls_out" not in at.multiselect(key="data.features").value
    assert "calls_out" not in at.multiselect(key="data.features").options
    spec = studio(at).spec
    assert spec.target == "calls_out" and "calls_out" not in spec.features


def test_no_features_is_reported_next_to_the_features_control():
    at = start_on("data")
    at.multiselect(key="data.features").set_value([]).run()
    assert_clean(at)
    after = element_after(at, lambda e: getattr(e, "key", None) == "data.features")
    assert type(after).__name__ == "Error" and "choose at least one feature column" in after.value


def test_missing_public_bounds_are_reported_next_to_the_normalisation():
    at = start_on("data")
    at.radio(key="data.norm_method").set_value("bounds").run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("enter a lower and an upper public bound" in e for e in errors)
    assert studio(at).spec is None  # still the demo's default spec


def test_changing_the_normalisation_updates_the_spec_and_fingerprint():
    at = start_on("data")
    old = studio(at).data_fingerprint
    at.radio(key="data.norm_method").set_value("maxnorm").run()
    assert_clean(at)
    assert studio(at).spec.normalization.method == "maxnorm"
    assert studio(at).data_fingerprint != old
    assert any("Not private by itself" in w.value for w in at.warning)


def test_upload_is_kept_in_memory_and_prepared():
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    content = small_csv()
    at.file_uploader(key="data.upload").set_value(("people.csv", content, "text/csv")).run()
    assert_clean(at)
    state = studio(at)
    assert state.source == "upload" and state.upload_name == "people.csv"
    assert state.upload_bytes == content

    assert state.upload_fingerprint == keyed_digest(content)
    assert state.n == 40 and state.d == 4  # every numeric column is a feature by default
    # Choose a target: the engine prepares 3 features.
    at.multiselect(key="data.features").set_value(["income", "age", "spend"]).run()
    at.selectbox(key="data.target").set_value("label").run()
    assert_clean(at)
    assert studio(at).d == 3 and studio(at).spec.target == "label"


def test_malformed_upload_shows_the_message_next_to_the_uploader_and_keeps_everything():
    at = start_on("data")
    at.radio(key="data.norm_method").set_value("maxnorm").run()
    spec, fingerprint = studio(at).spec, studio(at).data_fingerprint
    at.radio(key="data.source").set_value("Upload a file").run()
    bad = b"a,b\n1,2\n3\n4,5,6,7\n"
    at.file_uploader(key="data.upload").set_value(("broken.csv", bad, "text/csv")).run()
    assert_clean(at)
    after = element_after(at, lambda e: type(e).__name__ == "FileUploader")
    assert type(after).__name__ == "Error"
    assert "broken.csv" in after.value and "previous data and settings are unchanged" in after.value
    state = studio(at)
    assert state.source == "demo" and state.spec == spec and state.data_fingerprint == fingerprint
    assert state.upload_bytes is None
    # The app stays usable: back to the demo, other pages work.
    at.radio(key="data.source").set_value("Built-in demo").run()
    assert_clean(at)
    open_page(at, "feasibility")


def test_upload_over_the_size_limit_is_refused(monkeypatch):
    import ui.cached

    monkeypatch.setattr(ui.cached, "MAX_UPLOAD_MB", 0)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value(("big.csv", small_csv(), "text/csv")).run()
    assert_clean(at)
    assert any("above this app's limit" in e.value for e in at.error)
    assert studio(at).source == "demo"


def test_candidate_on_the_default_delta_follows_a_new_dataset():
    at = start_on("feasibility")
    assert studio(at).candidate.delta == 1 / 4202
    open_page(at, "data")
    at.selectbox(key="data.demo").set_value("nigeria-demo").run()
    assert_clean(at)
    assert studio(at).candidate.delta == 1 / (20788 + 1)
    assert (studio(at).candidate.b, studio(at).candidate.epsilon) == (0.4, 1.0)


def test_parquet_upload_is_read():
    buf = io.BytesIO()
    pd.read_csv(io.BytesIO(small_csv(30))).to_parquet(buf, index=False)
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value(("people.parquet", buf.getvalue(), "application/octet-stream")).run()
    assert_clean(at)
    assert studio(at).source == "upload" and studio(at).n == 30 and studio(at).d == 4


def test_upload_without_numeric_columns_is_encoded_and_every_page_still_works():
    """A table of text only: the identifier-like column is left out, the text column is one-hot encoded with its
    levels read from the data (flagged as not private), and every page opens."""
    at = start_on("data")
    at.radio(key="data.source").set_value("Upload a file").run()
    content = ("name,city\n" + "\n".join(f"p{i},c{i % 3}" for i in range(30))).encode()
    at.file_uploader(key="data.upload").set_value(("names.csv", content, "text/csv")).run()
    assert_clean(at)
    assert at.multiselect(key="data.features").value == ["city"]
    spec = studio(at).spec
    assert spec.categorical["city"].levels_from_data
    assert studio(at).feature_names == ("city=c0", "city=c1", "city=c2")
    assert any("not private" in w.value.lower() or "read from the data" in w.value for w in at.warning)
    at.multiselect(key="data.features").set_value([]).run()
    after = element_after(at, lambda e: getattr(e, "key", None) == "data.features")
    assert type(after).__name__ == "Error" and "choose at least one feature column" in after.value
    for page in ("feasibility", "mechanisms", "tradeoffs", "per_record", "export", "start"):
        open_page(at, page)


def test_bounds_filled_from_the_data_work_but_are_flagged_as_not_public():
    at = start_on("data")
    at.radio(key="data.norm_method").set_value("bounds").run()
    at.button(key="data.fill_bounds").click().run()
    assert_clean(at)
    spec = studio(at).spec
    demo = load_demo("togo-demo")
    assert spec.normalization.method == "bounds"
    assert spec.normalization.lower == tuple(float(demo.frame[f].min()) for f in demo.spec.features)
    assert spec.normalization.upper == tuple(float(demo.frame[f].max()) for f in demo.spec.features)
    assert any("NOT public bounds" in w.value for w in at.warning)
    assert metric(at, "values clipped to bounds") == "0"


def test_row_norm_figure_cuts_extreme_rows_and_says_so():
    from ui.figures.data import row_norm_figure

    z = np.concatenate([np.linspace(0.1, 3, 999), [500.0]])
    fig = row_norm_figure(z, np.minimum(z, 1), method="clip")
    assert fig.layout.xaxis.range[1] < 10
    assert "1 row(s) beyond the axis, up to ‖z‖ = 500" in [a.text for a in fig.layout.annotations]
    small = row_norm_figure(np.array([0.2, 0.5]), np.array([0.2, 0.5]), method="bounds")
    assert small.layout.xaxis.range[1] == 1.05  # the unit-ball line stays inside the plot


def test_row_norm_figure_sends_bin_counts_not_the_rows_norms():
    """The histogram is counted on the server: 60 bars per series whose counts add up to the rows inside the axis,
    and no trace carries a row's own norm."""
    from ui.figures.data import row_norm_figure

    rng = np.random.default_rng(3)
    z = np.concatenate([rng.uniform(0.0, 2.0, 997), [40.0, 50.0, 60.0]])
    x = np.minimum(z, 1.0)
    fig = row_norm_figure(z, x, method="clip")
    upper = fig.layout.xaxis.range[1]
    before, after = fig.data
    assert len(before.y) == len(after.y) == 60
    assert sum(before.y) == int(np.sum(z <= upper)) and sum(after.y) == 1000
    assert not set(np.round(z, 12)) & set(np.round(np.concatenate([before.x, after.x]), 12))
    assert after.y[-1] == 0 and sum(after.y[: int(np.ceil(60 / upper))]) == 1000  # every prepared row at most 1
