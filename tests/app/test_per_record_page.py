"""AppTest: the Per-record page shows the engine's policy losses, the Table 1 oracles and TDP per-record losses."""

from __future__ import annotations

import pytest

from engine.accounting.tdp import tdp_to_dp
from engine.data.demos import load_demo
from engine.per_record.baseline import GaussianSum
from engine.per_record.calibration import calibrate_accuracy
from engine.per_record.losses import record_losses
from tests.app.conftest import assert_clean, open_page, start_app, studio
from ui.figures.theme import fmt


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


@pytest.fixture(scope="module")
def page():
    return open_page(start_app(), "per_record")


def test_default_shows_calibrated_losses_of_the_establishments_demo(page):
    at = page
    assert at.session_state["per_record.source"] == "establishments"
    assert at.session_state["per_record.value"] == "payroll"
    frame = load_demo("establishments-demo").frame
    gaussian = calibrate_accuracy(GaussianSum(), 0.01, 1e5, by="relative_sd")
    expected = record_losses(frame, "payroll", gaussian, unit="rho", threshold=1.0).summary
    assert metric(at, "Median ρ") == fmt(expected.median)
    assert metric(at, "Largest ρ") == fmt(expected.max)
    assert metric(at, "Share above the threshold") == fmt(expected.share_above)
    calibration = next(df.value for df in at.dataframe if "calibrated value" in df.value.columns)
    assert calibration["noise parameter"].iloc[0] == "sigma"
    assert calibration["calibrated value"].iloc[0] == pytest.approx(gaussian.sigma, rel=1e-12)
    cells = next(df.value for df in at.dataframe if "true_sum" in df.value.columns)
    assert len(cells) == frame.groupby(["industry", "county"]).ngroups


def test_table1_walkthrough_reproduces_the_papers_examples(page):
    at = page
    at.radio(key="per_record.source").set_value("table1").run()
    assert_clean(at)
    walk = next(df.value for df in at.dataframe if "Example 4.6: 4th root (a = 0, σ = 2)" in df.value.columns)
    assert walk["Example 2.16: unit splitting (τ = 10, σ² = 50)"].tolist() == pytest.approx([1, 1, 1, 4, 9, 1e6])
    assert walk["Example 4.6: 4th root (a = 0, σ = 2)"].tolist() == pytest.approx(
        [0.279508, 0.279508, 0.395285, 0.559017, 0.684653, 12.5], abs=1e-6)
    assert walk["Example 4.8: log (a = 1, σ = 2)"].tolist() == pytest.approx(
        [0.401300, 0.401300, 0.718738, 1.158640, 1.474034, 10.604026], abs=1e-6)


def test_tdp_per_record_losses_use_the_candidate(page):
    at = page
    c = studio(at).candidate_or_default()
    worst, _ = tdp_to_dp(c.epsilon, c.delta, c.b)
    assert metric(at, "Worst case ε (t = 2)") == fmt(worst)


def test_epsilon_unit_keeps_only_additive_mechanisms(page):
    at = page
    at.radio(key="per_record.source").set_value("establishments").run()
    at.radio(key="per_record.unit").set_value("epsilon")
    at.button(key="per_record.run").click().run()
    assert_clean(at)
    calibration = next(df.value for df in at.dataframe if "guarantee unit" in df.value.columns)
    assert set(calibration["guarantee unit"]) == {"ε (per-record pure DP)"}
    assert any(m.label == "Median ε" for m in at.metric)


def test_settings_survive_a_page_switch():
    at = open_page(start_app(), "per_record")
    at.number_input(key="per_record.target").set_value(0.05)
    at.button(key="per_record.run").click().run()
    assert_clean(at)
    assert studio(at).per_record["target"] == 0.05
    assert studio(at).per_record["calibrated"][0]["kind"] == "gaussian"
    open_page(at, "start")
    open_page(at, "per_record")
    assert at.number_input(key="per_record.target").value == 0.05
