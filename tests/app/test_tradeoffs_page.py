"""AppTest: the Tradeoffs page runs engine sweeps with progress, draws the tradeoffs and selects a configuration."""

from __future__ import annotations

import json

import pytest

from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.sweeps import SweepResult, run_sweep
from tests.app.conftest import assert_clean, open_page, start_app, start_on, studio
from ui.figures.theme import fmt


@pytest.fixture(scope="module")
def swept():
    at = start_on("tradeoffs")
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.text_input(key="tradeoffs.b_values").set_value("0.25, 2")
    at.text_input(key="tradeoffs.epsilon1").set_value("3")
    at.text_input(key="tradeoffs.epsilon2").set_value("0.9999")
    at.number_input(key="tradeoffs.reps").set_value(1)
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    return at


def test_sweep_runs_both_mechanisms_and_shows_the_engines_numbers(swept):
    at = swept
    results = studio(at).sweeps
    assert [r.config.mechanism for r in results] == ["projection", "gaussian"]
    assert all(isinstance(r, SweepResult) and r.complete for r in results)
    assert results[0].config.b_values == (0.25, 2.0)
    # The table on the page is the engine's summary: recompute the projection sweep independently.
    demo = load_demo("togo-demo")
    fresh = run_sweep(prepare(demo.frame, demo.spec), results[0].config, use_cache=False).summary()
    table = next(df.value for df in at.dataframe if "accuracy_mean" in df.value.columns)
    from engine.mechanisms import MECHANISMS

    # the table names the mechanism (its label), not its code
    shown = table[(table["mechanism"] == MECHANISMS["projection"].LABEL) & (table["b"] == 0.25)]["accuracy_mean"].iloc[0]
    expected = fresh[(fresh["reference"] == "tdp") & (fresh["b"] == 0.25)]["accuracy_mean"].iloc[0]
    assert shown == pytest.approx(expected, abs=0)
    assert len(table) == 5  # non-private once, then 2 mechanisms × (B = 0.25, B = 2)
    assert {"tradeoffs.fig3.singling_out", "tradeoffs.fig3.attribute_inference"} <= set(at.session_state)
    assert at.get("download_button")


def test_a_sweep_run_again_says_it_came_from_the_sessions_results(swept):
    """The toast of a finished sweep gives its time; running the same sweep again takes the stored results, and the
    toast says so instead of claiming the time again. Same results on the page."""
    at = swept
    assert any("Sweep finished:" in t.value and " cells in " in t.value for t in at.toast)
    before = [r.table for r in studio(at).sweeps]
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    assert any(t.value.startswith("Same sweep as before: its ") and "taken from this session's results" in t.value
               for t in at.toast)
    assert not any("Sweep finished:" in t.value for t in at.toast)
    for old, new in zip(before, (r.table for r in studio(at).sweeps), strict=True):
        assert new.equals(old)


def test_one_release_per_point_is_warned_and_the_charts_draw_the_engines_trivial_rule(swept):
    from ui.sections.tradeoffs_results import SINGLE_RUN_WARNING

    at = swept
    results = studio(at).sweeps
    assert all((r.summary()["runs"] == 1).all() for r in results)  # the fixture's repetitions = 1
    assert sum(w.value == SINGLE_RUN_WARNING for w in at.warning) == 2  # by the charts' flags and the table's
    best = results[0].best_trivial()
    assert best is not None
    specs = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    lines = [shape["y0"] for spec in specs.values() for shape in spec["layout"].get("shapes", [])
             if shape.get("line", {}).get("dash") == "dash"]
    # Figure 3 (one tab per attack run) and Figure 2 each draw the engine's value
    charts = len(results[0].config.attacks) + 1
    assert charts >= 3 and lines == [best.value] * charts
    # ... and name it: on the line in Figure 3, in the legend in Figure 2 (where a label on the line hid bar values)
    texts = [a["text"] for spec in specs.values() for a in spec["layout"].get("annotations", [])]
    texts += [t.get("name") for spec in specs.values() for t in spec["data"] if t.get("type") == "scatter"
              and t.get("line", {}).get("dash") == "dash"]
    assert texts.count(f"{best.rule}: {fmt(best.value)} — a rule that uses no data") == charts
    # every Figure 3 tab marks exactly the configurations the engine flags (the table's no_better_than column)
    from engine.sweeps import combined_summary
    from ui.figures.tradeoffs import FLAGGED_NAME

    table = combined_summary(results, results[0].config.program.headline_metric)
    flagged = {f"{m}:{p}" for m, p, f, r in zip(table["mechanism"], table["point"], table["no_better_than"],
                                                 table["reference"], strict=True) if f and r != "non-private"}
    marked = [{c[0] for c in t["customdata"]} for spec in specs.values() for t in spec["data"]
              if t.get("name") == FLAGGED_NAME]
    assert marked == [flagged] * (charts - 1) if flagged else marked == []


def test_choosing_a_point_makes_it_the_candidate(swept):
    at = swept
    results = studio(at).sweeps
    point = int(results[0].summary().query("reference == 'tdp' and b == 0.25")["point"].iloc[0])
    at.selectbox(key="tradeoffs.point").set_value(f"projection:{point}")
    at.button(key="tradeoffs.use_point").click().run()
    assert_clean(at)
    state = studio(at)
    budget = results[0].config.budgets[0]
    assert state.candidate.b == 0.25
    assert state.candidate.epsilon == pytest.approx(budget.epsilon)
    assert state.candidate.delta == pytest.approx(budget.delta)
    assert state.mechanism.KIND == "projection" and state.mechanism.epsilon1 == 3.0
    assert state.selected_point.point_id == f"projection:{point}"
    # The chosen point's measured γ (decision agreement over its repetitions) is held against the γ target and
    # Theorem 1, with the engine's words.
    from engine.analysis import gamma_check

    row = results[0].summary().query(f"point == {point}").iloc[0]
    check = gamma_check(0.99, (row["decision_agreement_mean"], row["decision_agreement_lo"],
                               row["decision_agreement_hi"]), b=0.25, epsilon=budget.epsilon, delta=budget.delta)
    assert any(check.text == w.value for w in (*at.warning, *at.success))
    # The Mechanisms page opens on exactly that configuration.
    open_page(at, "mechanisms")
    assert at.number_input(key="mechanisms.projection.epsilon1").value == 3.0
    assert at.number_input(key="mechanisms.projection.b").value == 0.25


def test_invalid_grid_shows_the_message_and_keeps_results(swept):
    at = open_page(swept, "tradeoffs")
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.text_input(key="tradeoffs.epsilon2").set_value("1.5")
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    assert any("ε2 values must be in (0, 1)" in e.value for e in at.error)
    assert studio(at).sweeps


def test_results_of_another_dataset_are_set_aside(swept):
    """A sweep of other data is never shown as these data's; it is kept, filed under its own fingerprint (a record
    imported before its upload gets its sweeps back when the file arrives: tests/e2e/test_decision_state.py)."""
    at = start_app()
    state = studio(at)
    state.sweeps = studio(swept).sweeps
    state.demo_name = "nigeria-demo"
    state.spec = None
    open_page(at, "tradeoffs")
    assert studio(at).sweeps == studio(swept).sweeps
    assert any("last sweep was computed on other data" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.dataframe  # nothing of it is drawn


def test_form_settings_survive_a_visit_to_another_page():
    """Found by a new-user run: one repetition per point typed into the form was back to 0 (10 repetitions) after a
    visit to another page, so the next sweep ran ten times longer than asked."""
    at = start_on("tradeoffs")
    at.number_input(key="tradeoffs.reps").set_value(1)
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.multiselect(key="tradeoffs.mechanisms").set_value(["gaussian"])
    at.text_input(key="tradeoffs.b_values").set_value("0.5, x")  # submitted, refused: no sweep runs
    at.button(key="tradeoffs.run").click().run()
    assert any("B values must be numbers" in e.value for e in at.error)
    open_page(at, "per_record")
    assert "tradeoffs.reps" in at.session_state  # kept through a run that did not draw the form
    open_page(at, "tradeoffs")
    assert at.number_input(key="tradeoffs.reps").value == 1
    assert at.radio(key="tradeoffs.preset").value == "custom"
    assert at.multiselect(key="tradeoffs.mechanisms").value == ["gaussian"]


def test_quick_preset_uses_its_own_repetitions_and_the_papers_grid():
    from engine.sweeps import PAPER_B_VALUES

    at = start_on("tradeoffs")
    at.multiselect(key="tradeoffs.mechanisms").set_value(["gaussian"])
    at.multiselect(key="tradeoffs.attacks").set_value(["distinguishing"])
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    (result,) = studio(at).sweeps
    config = result.config
    n_released = 4201  # no attribute inference: no holdout, every row is privatized
    assert config.repetitions == 10 and config.b_values == PAPER_B_VALUES and config.mechanism == "gaussian"
    (budget,) = config.budgets
    assert (budget.epsilon1, budget.epsilon2) == (3.0, 0.9999)
    assert budget.delta == pytest.approx(1 / (n_released + 1))
    assert len(result.table) == config.n_cells == 90


def test_jl_laplace_sweep_and_its_delta_fail_curve():
    from engine.mechanisms.jl_laplace import JLLaplace

    at = start_on("tradeoffs")
    at.multiselect(key="tradeoffs.mechanisms").set_value(["jl-laplace"])
    at.multiselect(key="tradeoffs.attacks").set_value(["singling_out", "distinguishing"])
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.text_input(key="tradeoffs.b_values").set_value("0.5, 2")
    at.text_input(key="tradeoffs.epsilon1").set_value("3")
    at.text_input(key="tradeoffs.epsilon2").set_value("0.9999")
    at.number_input(key="tradeoffs.reps").set_value(1)
    at.number_input(key="tradeoffs.jl-laplace.k").set_value(3)
    at.number_input(key="tradeoffs.jl-laplace.known_records").set_value(9)
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    (result,) = studio(at).sweeps
    config = result.config
    assert config.mechanism == "jl-laplace" and config.k == 3 and config.relation == "row"
    assert config.known_records == 9 and config.target_delta is None
    # no attribute inference: no holdout, so the custom grid's default δ is 1/(n + 1) with n = all 4201 rows
    assert config.budgets[0].delta == pytest.approx(1 / 4202)
    assert list(result.summary()["reference"]) == ["non-private", "tdp", "classic-dp"]
    # the ε–δ_fail curve at the noise of the first grid point, with the engine's δ_fail at the swept ε
    mech = JLLaplace(k=3, epsilon=config.budgets[0].epsilon, d=10, relation="row", b=0.5,
                     target_delta=config.budgets[0].delta)
    assert any(m.label.startswith("δ_fail at the swept ε") and m.value == fmt(mech.delta_fail) for m in at.metric)
    titles = [json.dumps(json.loads(c.proto.spec)["layout"].get("title"), ensure_ascii=False)
              for c in at.get("plotly_chart")]
    assert any("ε against δ_fail at fixed noise" in t for t in titles)
    # choosing the B = 0.5 point makes the JL release the configured mechanism and (row-wise) the candidate
    point = int(result.summary().query("reference == 'tdp'")["point"].iloc[0])
    at.selectbox(key="tradeoffs.point").set_value(f"jl-laplace:{point}")
    at.button(key="tradeoffs.use_point").click().run()
    assert_clean(at)
    state = studio(at)
    assert state.mechanism.to_dict() == mech.to_dict()
    assert state.candidate.b == 0.5 and state.candidate.delta == pytest.approx(mech.delta_fail)
    # the distinguishing attacker's view includes the configured JL release
    assert any(f"{JLLaplace.LABEL}, as configured: smallest total error" in c.value for c in at.caption)
    # the Mechanisms page opens on exactly that JL configuration
    open_page(at, "mechanisms")
    assert at.radio(key="mechanisms.kind").value == "jl-laplace"
    assert at.number_input(key="mechanisms.jl-laplace.k").value == 3
    assert at.number_input(key="mechanisms.jl-laplace.b").value == 0.5
    assert at.number_input(key="mechanisms.jl-laplace.target_delta").value == pytest.approx(mech.target_delta)


def test_compute_on_a_dask_cluster_gives_the_local_table_and_a_bad_address_is_a_message(monkeypatch):
    """Issue 14 §2: "Compute on" a Dask cluster at a typed address. An unreachable address is a message next to the
    form and nothing runs; a running cluster computes the sweep, and the table is the local one."""
    from distributed import LocalCluster

    import ui.compute_target

    monkeypatch.setattr(ui.compute_target, "CONNECT_SECONDS", 1.0)
    at = start_on("tradeoffs")
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.text_input(key="tradeoffs.b_values").set_value("0.5, 2")
    at.text_input(key="tradeoffs.epsilon1").set_value("2")
    at.text_input(key="tradeoffs.epsilon2").set_value("0.5")
    at.number_input(key="tradeoffs.reps").set_value(1)
    at.multiselect(key="tradeoffs.attacks").set_value(["distinguishing"])
    at.radio(key="tradeoffs.compute_on").set_value("dask")
    at.text_input(key="tradeoffs.scheduler").set_value("tcp://127.0.0.1:1")  # nothing listens on port 1
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    assert any("cannot reach a Dask scheduler at tcp://127.0.0.1:1 within 1 s" in e.value.replace("\\", "")
               for e in at.error)
    assert studio(at).sweeps == ()

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        at.text_input(key="tradeoffs.scheduler").set_value(cluster.scheduler_address)
        at.button(key="tradeoffs.run").click().run()
        assert_clean(at)
        assert any(c.value.startswith(f"Computing on the Dask cluster at {cluster.scheduler_address}: 1 workers")
                   for c in at.caption)
    results = studio(at).sweeps
    demo = load_demo("togo-demo")
    local = run_sweep(prepare(demo.frame, demo.spec), results[0].config, use_cache=False).table
    import pandas as pd

    pd.testing.assert_frame_equal(results[0].table, local, check_exact=True)
