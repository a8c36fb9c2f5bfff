"""AppTest: the Mechanisms page runs the engine's mechanisms on demo data and shows the engine's numbers."""

from __future__ import annotations

import json

import pytest

from engine.data.demos import load_demo
from engine.mechanisms.gaussian import GaussianMechanism
from engine.release import ReleaseConfig, run_release
from engine.rng import make_rng
from tests.app.conftest import assert_clean, start_on, studio
from ui.figures.theme import fmt


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def run_with_seed(at, seed: str):
    at.text_input(key="mechanisms.seed").set_value(seed)
    at.button(key="mechanisms.run").click().run()
    assert_clean(at)
    return at


def last_run(at):
    """The page's last run (the session keeps its last runs under ``mechanisms.runs``, newest last)."""
    return at.session_state["mechanisms.runs"][-1][1]


@pytest.fixture(scope="module")
def projection_run():
    at = start_on("mechanisms")
    return run_with_seed(at, "7")


def test_projection_run_shows_the_release_noise_and_split(projection_run):
    at = projection_run
    state = studio(at)
    mech = state.mechanism.to_dict()
    candidate = state.candidate_or_default()
    # Prefilled from the candidate with the default split: ε2 = ε/4 (ε ≤ 4), δ1 = 2δ/3, δ2 = δ/3.
    assert mech["kind"] == "projection" and mech["b"] == pytest.approx(candidate.b)
    assert mech["epsilon1"] + mech["epsilon2"] == pytest.approx(candidate.epsilon)
    assert mech["epsilon2"] == pytest.approx(candidate.epsilon / 4)
    assert mech["delta1"] == pytest.approx(2 * candidate.delta / 3)
    assert mech["delta2"] == pytest.approx(candidate.delta / 3)
    # The page's noise sd is the engine's Release.details value for the same seed (the CLI's rng).
    demo = load_demo("togo-demo")
    _, release = run_release(demo.frame, ReleaseConfig(demo.spec, mech, seed=7), rng=make_rng(7))
    assert metric(at, "Noise sd per coordinate") == fmt(release.details["noise_sd_per_coordinate"])
    assert metric(at, "σ1 (projection noise, paper scale)") == fmt(release.details["sigma1"])
    assert state.seed == 7
    summary = last_run(at).summary
    assert summary["guarantee"]["headline"] == release.guarantee.headline()
    assert summary["seed"] == 7 and summary["seeded"] is True
    assert set(summary["protection"]) >= {"singling_out", "attribute_inference", "distinguishing"}
    assert any("covariance step (ε2, δ2) does not change the output" in i.value for i in at.info)
    assert any("not private" in m.value for m in at.markdown)
    assert at.get("download_button")  # the release can be downloaded


def test_projection_run_compares_honestly_with_the_gaussian(projection_run):
    at = projection_run
    table = next(df.value for df in at.dataframe if "noise sd per coordinate" in df.value.columns)
    assert table["mechanism"].tolist()[0] == "Private projection (Algorithm 1)"
    mech = studio(at).mechanism.to_dict()
    gauss = GaussianMechanism(b=mech["b"], epsilon=mech["epsilon1"] + mech["epsilon2"],
                              delta=mech["delta1"] + mech["delta2"])
    row = table[table["mechanism"] == GaussianMechanism.LABEL].iloc[0]
    assert row["noise sd per coordinate"] == pytest.approx(gauss.sigma, rel=1e-12)
    # On this data the simpler mechanism adds far less noise, and the page says so.
    assert any("Gaussian mechanism (targeted DP) adds less noise at the same guarantee" in w.value
               for w in at.warning)


def test_draw_again_increments_a_user_seed(projection_run):
    at = projection_run
    at.button(key="mechanisms.draw_again").click().run()
    assert_clean(at)
    assert studio(at).seed == 8
    assert at.session_state["mechanisms.args"]["seed"] == 8


def test_gaussian_run_shows_sigma():
    at = start_on("mechanisms")
    at.radio(key="mechanisms.kind").set_value("gaussian").run()
    at.number_input(key="mechanisms.gaussian.epsilon").set_value(2.0)
    run_with_seed(at, "3")
    state = studio(at)
    c = state.candidate_or_default()
    sigma = GaussianMechanism(b=c.b, epsilon=2.0, delta=c.delta).sigma
    assert metric(at, "σ (per coordinate)") == fmt(sigma)
    assert metric(at, "Noise sd per coordinate") == fmt(sigma)
    assert state.mechanism.to_dict() == GaussianMechanism(b=c.b, epsilon=2.0, delta=c.delta).to_dict()


def test_a_release_no_better_than_a_rule_without_data_gets_advice_read_from_the_mechanism():
    """Issue 30 §4: the advice was "raise ε or B", but a larger B adds noise. It now follows the mechanism's own
    monotonicity (engine.comparison.less_noise_advice): a larger ε or a smaller B."""
    at = start_on("mechanisms")
    at.radio(key="mechanisms.kind").set_value("gaussian").run()
    at.number_input(key="mechanisms.gaussian.epsilon").set_value(0.01)
    run_with_seed(at, "3")
    errors = " ".join(e.value for e in at.error)
    assert "No better than a rule that uses no data" in errors
    assert "raise ε or B" not in errors and "a larger ε (2 × ε" in errors and "a smaller B (B / 2" in errors
    assert "a larger B" not in errors
    # the γ check names the decision agreement and the rules that use no data, not a "measured γ"
    texts = " ".join(w.value for w in at.warning)
    assert "decision agreement on these data" in texts


def test_invalid_split_shows_message_and_keeps_the_previous_run():
    at = start_on("mechanisms")
    run_with_seed(at, "1")
    before = dict(at.session_state["mechanisms.args"])
    at.number_input(key="mechanisms.projection.epsilon2").set_value(1.5)
    at.button(key="mechanisms.run").click().run()
    assert_clean(at)
    assert any("epsilon2 must be in (0, 1)" in e.value for e in at.error)
    assert at.session_state["mechanisms.args"] == before
    assert metric(at, "Noise sd per coordinate")  # the previous results are still shown


def test_k_anonymity_is_labelled_not_dp():
    at = start_on("mechanisms")
    at.radio(key="mechanisms.kind").set_value("mondrian").run()
    run_with_seed(at, "1")
    assert any("NOT differential privacy" in e.value for e in at.error)
    assert metric(at, "Noise sd per coordinate") == "none"


def test_jl_laplace_run_shows_the_guarantee_vacuity_and_projected_release():
    from engine.mechanisms.jl_laplace import JLLaplace

    at = start_on("mechanisms")
    at.radio(key="mechanisms.kind").set_value("jl-laplace").run()
    assert_clean(at)
    at.number_input(key="mechanisms.jl-laplace.k").set_value(3)
    at.number_input(key="mechanisms.jl-laplace.epsilon").set_value(4.0)
    at.radio(key="mechanisms.jl-laplace.relation").set_value("element")
    at.number_input(key="mechanisms.jl-laplace.target_delta").set_value(0.0)  # 0 = the paper's rule
    run_with_seed(at, "5")
    state = studio(at)
    mech = state.mechanism.to_dict()
    # the paper's (d = 10, k = 3) element-wise setting: c = 2√k, the paper's bound ≥ 1 (vacuous)
    expected = JLLaplace(k=3, epsilon=4.0, d=10, relation="element", element_bound=1.0)
    assert mech == expected.to_dict()
    assert expected.delta_fail_paper >= 1
    assert metric(at, "The paper's bound") == "vacuous (≥ 1)"
    assert metric(at, "δ_fail (the guarantee's δ)") == fmt(expected.delta_fail)
    assert metric(at, "Exact probability of the proof's event") == fmt(expected.delta_fail_event)
    assert any("VACUOUS" in w.value for w in at.warning)
    assert any("P stays secret" in i.value for i in at.info)
    assert any("**3 projected columns**" in m.value for m in at.markdown)
    assert at.selectbox(key="mechanisms.z_x").options == ["z1", "z2", "z3"]
    # no original-vs-private plot on the same axes: the feature pickers are not drawn
    assert "mechanisms.feature_x" not in at.session_state
    titles = [json.dumps(json.loads(c.proto.spec)["layout"].get("title"), ensure_ascii=False)
              for c in at.get("plotly_chart")]
    assert any("Distance recovery" in t for t in titles) and any("projected columns" in t for t in titles)
    # protection is measured against the known-record adversary (2k = 6 records), and the summary says so
    assert "not the secret projection" in last_run(at).summary["protection"]["adversary"]
    assert any("knows 6 original records" in c.value for c in at.caption)


def test_jl_laplace_row_wise_target_delta_calibrates_to_the_target():
    from engine.mechanisms.jl_laplace import JLLaplace

    at = start_on("mechanisms")
    at.radio(key="mechanisms.kind").set_value("jl-laplace").run()
    at.number_input(key="mechanisms.jl-laplace.b").set_value(1.0)
    at.number_input(key="mechanisms.jl-laplace.target_delta").set_value(1e-4)
    run_with_seed(at, "2")
    mech = studio(at).mechanism.to_dict()
    assert mech["relation"] == "row" and mech["target_delta"] == 1e-4 and mech["b"] == 1.0
    jl = JLLaplace.from_dict(mech)
    assert jl.delta_fail <= 1e-4 * (1 + 1e-9)
    assert metric(at, "δ_fail (the guarantee's δ)") == fmt(jl.delta_fail)
    # honest comparison at the same (B, ε, δ) with the projection and the Gaussian mechanism
    table = next(df.value for df in at.dataframe if "noise sd per coordinate" in df.value.columns)
    assert len(table) == 4  # JL, projection, Gaussian, k-anonymity


def test_stop_returns_to_the_last_run_without_computing_the_stopped_one():
    """The Stop button shown during a run triggers a rerun that interrupts the work at its next progress update (a
    Streamlit call); that rerun sees the button pressed, goes back to the last finished run and keeps nothing of the
    stopped one."""
    at = start_on("mechanisms")
    run_with_seed(at, "5")
    finished = dict(at.session_state["mechanisms.args"])
    assert len(at.session_state["mechanisms.runs"]) == 1
    # the state the Stop click leaves: new arguments were submitted, their run was interrupted, the button is pressed
    at.session_state["mechanisms.args"] = {**finished, "seed": 6}
    at.session_state["mechanisms.stop"] = True
    at.run()
    assert_clean(at)
    assert any("Stopped" in i.value and "previous run is shown" in i.value for i in at.info)
    assert at.session_state["mechanisms.args"] == finished
    assert len(at.session_state["mechanisms.runs"]) == 1  # the stopped run was not computed
    assert metric(at, "Noise sd per coordinate")  # the last run is still shown


def test_a_long_run_is_announced_first_and_runs_or_is_cancelled_as_the_user_says(monkeypatch):
    """Issue 35: a run estimated over ``CONFIRM_SECONDS`` (a wide table; here every run, the threshold set to 0)
    first says how long it will take and why, and computes nothing until "Run it"; the same inputs with another
    seed ("Draw again") are not asked again; "Cancel" goes back to the last run without computing."""
    import engine.release_analysis as release_analysis

    monkeypatch.setattr(release_analysis, "CONFIRM_SECONDS", 0.0)
    at = start_on("mechanisms")
    run_with_seed(at, "5")
    assert any("This run will take about" in w.value and "attribute-inference attack" in w.value for w in at.warning)
    assert "mechanisms.runs" not in at.session_state  # nothing computed yet
    at.button(key="mechanisms.confirm").click().run()
    assert_clean(at)
    assert len(at.session_state["mechanisms.runs"]) == 1 and metric(at, "Noise sd per coordinate")
    at.button(key="mechanisms.draw_again").click().run()  # the same inputs, seed 6: no second question
    assert_clean(at)
    assert not any("This run will take about" in w.value for w in at.warning)
    assert last_run(at).summary["seed"] == 6
    finished = dict(at.session_state["mechanisms.args"])
    at.radio(key="mechanisms.kind").set_value("gaussian").run()
    run_with_seed(at, "6")  # other inputs: asked again
    assert any("This run will take about" in w.value for w in at.warning)
    at.button(key="mechanisms.cancel_run").click().run()
    assert_clean(at)
    assert at.session_state["mechanisms.args"] == finished  # back to the last run, shown again
    assert len(at.session_state["mechanisms.runs"]) == 2 and metric(at, "Noise sd per coordinate")
