"""AppTest: the Per-record page shows the engine's policy losses, the Table 1 oracles and TDP per-record losses."""

from __future__ import annotations

import pytest

from engine.accounting.tdp import tdp_to_dp
from engine.data.demos import load_demo
from engine.data.establishments import CELL_LEVELS
from engine.per_record.baseline import GaussianSum
from engine.per_record.calibration import calibrate_accuracy
from engine.per_record.cells import PUBLIC_COLUMNS
from engine.per_record.losses import record_losses
from tests.app.conftest import assert_clean, open_page, start_on, studio
from ui.figures.theme import fmt


def table(at, column):
    """The first dataframe on the page with ``column`` (AppTest cannot look dataframes up by key)."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def published(at):
    """The public table of the cell release: the only dataframe with the output but no true sums."""
    return next(df.value for df in at.dataframe if "output" in df.value.columns and "true_sum" not in df.value.columns)


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


@pytest.fixture(scope="module")
def page():
    return start_on("per_record")


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
    # the whole public cell universe (8 industries × 12 counties) is released, empty cells included
    universe = len(CELL_LEVELS["industry"]) * len(CELL_LEVELS["county"])
    internal = next(df.value for df in at.dataframe if "true_sum" in df.value.columns)
    assert len(internal) == universe and "n_records_internal" in internal.columns
    assert internal["n_records_internal"].sum() == len(frame)
    public = published(at)
    assert list(public.columns) == ["industry", "county", *PUBLIC_COLUMNS]
    assert len(public) == universe
    assert not any("must be public" in w.value for w in at.warning)  # the demo's levels are declared


def test_internal_sections_are_labelled(page):
    at = page
    texts = " ".join(e.value for e in at.error) + " ".join(m.value for m in at.markdown)
    assert texts.count("do not publish") >= 3  # record losses, cell evaluation, TDP losses


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
    top = table(at, "nn_distance")
    assert "multiplicity" in top.columns and (top["multiplicity"] >= 1).all()


def test_undeclared_levels_of_other_data_show_the_public_levels_warning(page):
    at = page
    at.radio(key="per_record.source").set_value("table1").run()
    at.multiselect(key="per_record.by").set_value(["industry"]).run()
    assert_clean(at)
    assert any("must be public" in w.value for w in at.warning)
    assert len(published(at)) == 4  # the 4 industries observed in Table 1
    at.text_area(key="per_record.levels.industry").set_value("Retail\nServices\nHospitality\nTechnology\nFarming")
    at.run()
    assert_clean(at)
    assert not any("must be public" in w.value for w in at.warning)
    assert published(at)["industry"].tolist() == ["Retail", "Services", "Hospitality", "Technology", "Farming"]
    internal = table(at, "n_records_internal")
    assert internal["n_records_internal"].tolist() == [3, 1, 1, 1, 0]
    at.text_area(key="per_record.levels.industry").set_value("Retail, Services")  # Hospitality is not declared
    at.run()
    assert any("not among the declared levels of 'industry'" in e.value for e in at.error)
    at.multiselect(key="per_record.by").set_value([]).run()


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
    at = start_on("per_record")
    at.number_input(key="per_record.target").set_value(0.05)
    at.button(key="per_record.run").click().run()
    assert_clean(at)
    assert studio(at).per_record["target"] == 0.05
    assert studio(at).per_record["calibrated"][0]["kind"] == "gaussian"
    open_page(at, "start")
    open_page(at, "per_record")
    assert at.number_input(key="per_record.target").value == 0.05


def test_public_table_uses_os_randomness_and_a_typed_seed_is_labelled_a_simulation():
    """Issue 15: the table labelled publishable was drawn with the default seed 0 (anyone could regenerate the
    noise). Now it is drawn from the operating system's randomness unless a seed is typed, and a seeded table is
    labelled a simulation, not private, next to the table and in the CSV name."""
    at = start_on("per_record")
    assert at.text_input(key="per_record.seed").value == ""
    assert any(m.value.startswith("**Public table**") for m in at.markdown)
    assert not any("simulation, not private" in m.value for m in at.markdown)
    at.text_input(key="per_record.seed").set_value("0").run()
    assert_clean(at)
    assert any(m.value.startswith("**Simulated table — simulation, not private**") for m in at.markdown)
    assert not any(m.value.startswith("**Public table**") for m in at.markdown)
    assert any("not private" in w.value for w in at.warning)
    seeded = published(at)
    at.text_input(key="per_record.seed").set_value("0").run()
    assert published(at).equals(seeded)  # a seed reproduces the same draw: exactly why it is not private


def test_an_upload_is_the_default_source_and_asks_for_a_public_planning_total():
    from tests.real_data import slid

    at = start_on("data")
    content = slid().to_csv(index=False).encode()
    at.radio(key="data.source").set_value("Upload a file").run()
    at.file_uploader(key="data.upload").set_value(("slid.csv", content, "text/csv")).run()
    open_page(at, "per_record")
    assert at.session_state["per_record.source"] == "loaded"
    assert at.session_state["per_record.q_ref"] == 0.0
    assert any("planning total q₀" in i.value for i in at.info)
