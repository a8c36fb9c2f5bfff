"""AppTest: the Accuracy targets & feasibility page shows Theorem 1's numbers from the engine."""

from __future__ import annotations

import pytest

from engine.theory.feasibility import feasibility_report
from tests.app.conftest import assert_clean, element_after, open_page, shown, start_on, studio


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def set_example1_inputs(at, epsilon):
    at.text_input(key="feasibility.gammas").set_value("0.99").run()
    at.checkbox(key="feasibility.delta_default").uncheck().run()
    at.number_input(key="feasibility.delta").set_value(1e-4).run()
    at.number_input(key="feasibility.epsilon").set_value(epsilon).run()
    assert_clean(at)


@pytest.fixture(scope="module")
def page():
    return start_on("feasibility")


@pytest.mark.parametrize(("epsilon", "b_max", "b_sup", "m"), [(1.0, "0.4", "0.5", "5"), (4.0, "1", "2", "2")])
def test_example1_inputs_give_the_papers_bound(page, epsilon, b_max, b_sup, m):
    set_example1_inputs(page, epsilon)
    assert metric(page, "Largest feasible B") == b_max
    assert metric(page, "Every B below") == b_sup
    assert metric(page, "Steps m") == m
    assert metric(page, "Classic DP (B = 2)?") == "no"
    assert studio(page).delta == 1e-4


def test_example1_panel_reproduces_the_paper():
    at = start_on("feasibility")
    table = at.dataframe[0].value
    assert table["largest B (2/B whole)"].tolist() == [0.4, 1.0]
    assert table["m = ⌈ln Q / ε⌉"].tolist() == [5, 2]
    assert table["Q"].tolist() == [round(feasibility_report(0.99, e, 1e-4).q, 2) for e in (1.0, 4.0)]


def test_example1_button_sets_every_input_and_the_candidate():
    at = start_on("feasibility")
    at.button(key="feasibility.example1").click().run()
    assert_clean(at)
    c = studio(at).candidate
    assert (c.b, c.epsilon, c.delta) == (0.4, 1.0, 1e-4)
    assert studio(at).gammas == (0.99,)
    assert metric(at, "Largest feasible B") == "0.4"
    assert any("not ruled out" in s.value for s in at.success)


def test_infeasible_candidate_is_flagged_with_the_smallest_epsilon():
    at = start_on("feasibility")
    set_example1_inputs(at, 1.0)
    at.number_input(key="feasibility.b").set_value(1.0).run()
    assert_clean(at)
    message = " ".join(e.value for e in at.error)
    assert "ruled out" in message and "γ = 0.99" in message
    # B = 1 (s = 2) needs ε ≥ ε*, where the engine's min_epsilon is the boundary.
    from engine.theory.feasibility import min_epsilon

    assert f"{min_epsilon(1.0, 0.99, 1e-4):.4g}" in message


def test_largest_b_button_uses_the_engine_bound():
    at = start_on("feasibility")
    set_example1_inputs(at, 4.0)
    at.button(key="feasibility.largest_b").click().run()
    assert_clean(at)
    assert studio(at).candidate.b == 1.0


def test_bad_gamma_is_reported_next_to_its_control_and_keeps_the_last_valid_targets():
    at = start_on("feasibility")
    at.text_input(key="feasibility.gammas").set_value("0.99, 1.5").run()
    assert_clean(at)
    after = element_after(at, lambda e: getattr(e, "key", None) == "feasibility.gammas")
    assert type(after).__name__ == "Error"
    assert "gamma must be in [0.5, 1)" in shown(after.value) and "1.5" in after.value
    assert studio(at).gammas == (0.99,)


def test_several_gammas_and_candidate_survive_a_page_switch():
    at = start_on("feasibility")
    at.text_input(key="feasibility.gammas").set_value("0.95, 0.99").run()
    at.number_input(key="feasibility.epsilon").set_value(2.5).run()
    at.number_input(key="feasibility.b").set_value(0.25).run()
    open_page(at, "data")
    open_page(at, "feasibility")
    assert at.number_input(key="feasibility.epsilon").value == 2.5
    assert at.number_input(key="feasibility.b").value == 0.25
    assert at.text_input(key="feasibility.gammas").value == "0.95, 0.99"
    # The metrics are for the strictest γ (0.99) at ε = 2.5.
    assert metric(at, "Largest feasible B") == f"{feasibility_report(0.99, 2.5, 1 / 4202).b_max_integer:.4g}"


def test_default_delta_is_one_over_n_plus_one():
    at = start_on("feasibility")
    assert studio(at).delta is None
    assert studio(at).effective_delta() == 1 / 4202
    assert studio(at).candidate.delta == 1 / 4202
    assert "1/(n+1)" in at.checkbox(key="feasibility.delta_default").label


def test_region_figure_draws_the_engines_boundary_and_stays_selectable():
    import numpy as np

    from engine.theory.feasibility import b_supremum
    from ui.figures.feasibility import FeasibilitySurface, region_figure

    eps = np.linspace(0.05, 8, 160)
    gammas = (0.9, 0.99)
    surface = FeasibilitySurface(
        epsilon=eps, delta=1e-4, gammas=gammas,
        b_max_integer={g: np.zeros_like(eps) for g in gammas},
        b_sup={g: np.asarray(b_supremum(g, eps, 1e-4)) for g in gammas},
    )
    grid = (np.array([1.0]), np.array([0.4]), np.array([0.99]), np.array(["γ = 0.99: not ruled out"]))
    fig = region_figure(surface, candidate=(1.0, 0.4), click_grid=grid)
    # Streamlit's selection events break with heatmap/contour traces: the map is made of scatter traces only.
    assert {t.type for t in fig.data} == {"scatter"}
    fills = [t for t in fig.data if t.fill == "tozeroy"]
    assert [t.name for t in fills] == ["not ruled out for γ = 0.9", "not ruled out for γ = 0.99"]
    np.testing.assert_array_equal(fills[1].y[1:], b_supremum(0.99, eps, 1e-4))
    clickable = next(t for t in fig.data if t.name == "click to choose")
    assert clickable.customdata.tolist() == [[1.0, 0.4, 0.99]]


def test_pure_dp_delta_zero_uses_theorem_1_with_q_gamma_over_one_minus_gamma():
    at = start_on("feasibility")
    at.checkbox(key="feasibility.delta_default").uncheck().run()
    at.number_input(key="feasibility.delta").set_value(0.0).run()
    at.number_input(key="feasibility.epsilon").set_value(1.0).run()
    assert_clean(at)
    assert studio(at).delta == 0.0 and studio(at).candidate.delta == 0.0
    # δ = 0: Q = γ/(1−γ) = 99, ln 99 / 1 = 4.595 → m = 5 → B ≤ 0.4.
    assert metric(at, "Largest feasible B") == "0.4"
    assert metric(at, "Steps m") == "5"


def test_recommendation_section_searches_and_sets_the_candidate():
    """Issue 12: a target stated as the program states it → the engine's recommendation, its frontier, and one
    click makes the recommended point the candidate."""
    from engine.data.demos import load_demo
    from engine.data.preparation import prepare
    from engine.recommend import RecommendConfig, recommend

    at = start_on("feasibility")
    at.text_input(key="feasibility.rec_target").set_value("accuracy>=0.72")
    at.multiselect(key="feasibility.rec_mechanisms").set_value(["gaussian"])
    at.button(key="feasibility.recommend").click().run()
    assert_clean(at)
    config = RecommendConfig.from_json(at.session_state["feasibility.rec_config"])
    demo = load_demo("togo-demo")
    result = recommend(prepare(demo.frame, demo.spec), demo.program_config(), config)
    expected = result.recommended
    from engine.mechanisms import MECHANISMS
    from ui.figures.theme import fmt

    assert any(s.value.startswith(f"**Recommended:** {MECHANISMS['gaussian'].LABEL}, B = ") for s in at.success)
    # (mechanism, B) pairs the search found no ε for are named under the frontier (the engine's Recommendation.unmet)
    for kind, b in result.unmet():
        assert any(f"{MECHANISMS[kind].LABEL} at B = {fmt(b)}" in c.value for c in at.caption)
    # The implied classic-DP statement is the engine's headline, flagged VACUOUS (as a warning) when it is.
    implied = expected.implied_dp()
    shown = at.warning if implied.vacuous else at.caption
    assert any(f"Implied classic DP for any two records: {implied.headline()}." in e.value for e in shown)
    at.button(key="feasibility.use_recommended").click().run()
    assert_clean(at)
    cand = studio(at).candidate
    assert (cand.b, cand.epsilon, cand.delta) == (expected.b, expected.epsilon, expected.delta)
    # ... and the recommended mechanism is the one the Mechanisms page opens on (it opened on the projection)
    assert studio(at).mechanism.to_dict() == expected.build_mechanism().to_dict()
    open_page(at, "mechanisms")
    assert at.radio(key="mechanisms.kind").value == "gaussian"
    open_page(at, "feasibility")
    # The Stop button shown during a search: its rerun drops the search and says so; nothing is recomputed.
    kept = at.session_state["feasibility.recommendation"]
    at.session_state["feasibility.rec_stop"] = True
    at.run()
    assert_clean(at)
    assert any(i.value.startswith("Stopped: the search was interrupted") for i in at.info)
    assert "feasibility.rec_config" not in at.session_state
    assert not any(s.value.startswith("**Recommended:**") for s in at.success)
    assert at.session_state["feasibility.recommendation"] is kept


def test_the_recommenders_default_target_needs_the_data():
    """Issue 30 §4: on togo (29 % targeted) the old default "accuracy ≥ 0.75" was what targeting nobody scores; the
    default now sits halfway between the best rule that uses no data and the non-private program."""
    from engine.data.demos import load_demo
    from engine.data.preparation import prepare
    from engine.recommend import Target, suggest_target

    at = start_on("feasibility")
    demo = load_demo("togo-demo")
    suggestion = suggest_target(prepare(demo.frame, demo.spec), demo.program_config())
    shown = Target.parse(at.text_input(key="feasibility.rec_target").value)
    assert shown.metric == "accuracy" and shown.value == pytest.approx(suggestion.target.value)
    rule, floor = suggestion.best_rule
    assert floor < shown.value < suggestion.nonprivate
