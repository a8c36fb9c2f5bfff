"""Real public tables through the dashboard (issue 9): upload, declare the preparation, run a mechanism, and see
the measured γ and the trivial-rule flags — with no cleaning outside the Studio."""

from __future__ import annotations

import io

import numpy as np
import pytest

from engine.data.preparation import prepare
from tests.app.conftest import assert_clean, open_page, start_on, studio
from tests.real_data import HMDA_ROWS, hmda, slid


def _upload(at, frame, name):
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value((name, buffer.getvalue().encode(), "text/csv")).run()
    assert_clean(at)
    return at


def _run_mechanism(at, kind="gaussian", seed="3"):
    open_page(at, "mechanisms")
    at.radio(key="mechanisms.kind").set_value(kind).run()
    at.text_input(key="mechanisms.seed").set_value(seed)
    at.button(key="mechanisms.run").click().run()
    assert_clean(at)
    return at


@pytest.mark.slow
def test_slid_survey_targeting_on_wages_with_missing_values_and_text_columns():
    at = _upload(start_on("data"), slid(), "slid.csv")
    # The suggestion: numeric and short-text columns, never the identifier 'rownames'; missing rows dropped.
    assert "rownames" not in at.multiselect(key="data.features").value
    at.selectbox(key="data.target").set_value("wages").run()
    at.selectbox(key="data.program").set_value("targeting").run()
    at.number_input(key="data.share").set_value(0.3).run()
    assert_clean(at)
    state = studio(at)
    spec = state.spec
    assert spec.target == "wages" and "wages" not in spec.features
    assert {"sex", "language"} <= set(spec.categorical)
    prepared = prepare(slid(), spec)
    assert prepared.n == 3987  # rows with wages, education and language all present (pandas: dropna on them)
    assert state.n == prepared.n and state.feature_names == prepared.feature_names
    assert state.program.quantile == 0.3 and state.program.population is None
    at = _run_mechanism(at)
    labels = [m.label for m in at.metric]
    assert "Measured γ (decision agreement)" in labels
    assert any("Theorem 1" in s.value or "Theorem 1" in getattr(s, "body", "") for s in (*at.success, *at.warning))
    table = next(df.value for df in at.dataframe if "noise sd per coordinate" in df.value.columns)
    assert "measured γ" in table.columns and len(table) == 4
    assert np.all((table["measured γ"].dropna() >= 0) & (table["measured γ"].dropna() <= 1))


@pytest.mark.slow
def test_hmda_lending_with_a_text_outcome_and_an_approval_share():
    at = _upload(start_on("data"), hmda(), "hmda.csv")
    at.selectbox(key="data.target").set_value("deny").run()
    at.multiselect(key="data.positive").set_value(["no"]).run()
    at.selectbox(key="data.program").set_value("lending").run()
    at.radio(key="data.approval_rule").set_value("top_share").run()
    at.number_input(key="data.approval_value").set_value(0.8).run()
    assert_clean(at)
    state = studio(at)
    assert state.spec.positive_class == ("no",)
    assert state.program.approval_rule == "top_share" and state.program.approve_share == 0.8
    prepared = prepare(hmda(), state.spec)
    assert prepared.n == len(hmda().dropna()) == HMDA_ROWS - 1  # the row with the two missing flags is dropped
    assert int(prepared.y.sum()) == int((hmda().dropna()["deny"] == "no").sum())
    at = _run_mechanism(at, seed="5")
    # approving 80 % is a real decision rule: the release is compared with approve-everyone / approve-no-one
    table = next(df.value for df in at.dataframe if "approve everyone" in df.value.columns)
    assert "approve no one" in table.columns
