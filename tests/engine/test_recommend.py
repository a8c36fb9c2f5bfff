"""Accuracy-first recommendation: the search finds the true frontier of a known metric, respects Theorem 1, and on
real data recommends a point whose releases meet the target."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.cli import main
from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.errors import InvalidParameterError
from engine.recommend import RecommendConfig, Target, frontier_for_b, point_verdict, recommend


def test_target_parsing_and_validation():
    assert Target.parse("accuracy >= 0.72") == Target("accuracy", ">=", 0.72)
    assert Target.parse("γ≥0.9").metric == "decision_agreement"
    assert Target.parse("extra_exclusion_errors_population<=10000").op == "<="
    rel = Target.parse("profit>=90%")
    assert rel.relative and rel.threshold(200.0) == pytest.approx(180.0)
    with pytest.raises(InvalidParameterError, match="METRIC>=VALUE"):
        Target.parse("accuracy = 0.7")
    with pytest.raises(InvalidParameterError, match="mechanism"):
        RecommendConfig(Target.parse("accuracy>=0.7"), mechanisms=("mondrian",))


def test_search_finds_the_true_frontier_of_a_known_metric_in_95_percent_of_seeds():
    """metric(B, ε) = 1 − exp(−B·ε) plus N(0, 0.01²) noise per release; target 0.8 → true ε*(B) = ln 5 / B.
    The bisection's resolution is (ε_max/ε_min)^(1/2^steps) = 2000^(1/256) ≈ 1.03; the sequential test is
    conservative (it declares "meets" only with 95 % confidence), so ε̂ may sit up to a few resolution steps above
    ε*. Success: ε* / 1.03 ≤ ε̂ ≤ ε* × 1.15."""
    config = RecommendConfig(Target.parse("m>=0.8"), b_values=(0.5,), steps=8, epsilon_min=0.01, epsilon_max=20,
                             min_repetitions=3, max_repetitions=12)
    truth = math.log(5) / 0.5
    hits = 0
    seeds = range(40)
    for seed in seeds:
        rng = np.random.default_rng(seed)

        def evaluate(b, eps, i, rng=rng):
            return 1 - math.exp(-b * eps) + rng.normal(0, 0.01)

        eps, values = frontier_for_b(evaluate, 0.5, 0.8, config)
        hits += truth / 1.03 <= eps <= truth * 1.15
    assert hits >= 0.95 * len(seeds)


def test_unreachable_target_gives_no_point():
    config = RecommendConfig(Target.parse("m>=2"), b_values=(1.0,), steps=3)
    assert frontier_for_b(lambda b, e, i: 1.0 + 0.01 * i, 1.0, 2.0, config) is None
    assert point_verdict([0.70, 0.71, 0.69], 0.7, ">=", 0.95, 5) == "open"


@pytest.fixture(scope="module")
def togo():
    demo = load_demo("togo-demo")
    return prepare(demo.frame, demo.spec), demo.program_config()


def test_recommendation_on_togo_meets_the_target_and_says_the_target_is_weak(togo):
    data, program = togo
    rec = recommend(data, program, RecommendConfig(Target.parse("accuracy>=0.70"), mechanisms=("gaussian",),
                                                   b_values=(0.25, 1.0), steps=4, seed=1))
    point = rec.recommended
    assert point is not None and point.mechanism == "gaussian"
    assert point.lower >= 0.70  # the one-sided bound at the recommended point clears the target
    # the most protective: the smallest implied ε′ among the points whose implied classic DP says something
    meaningful = [p for p in rec.frontier if not p.vacuous]
    if meaningful:
        assert not point.vacuous and point.implied_epsilon == min(p.implied_epsilon for p in meaningful)
    assert set(rec.protections) == {"protection_singling_out", "protection_attribute_inference",
                                    "protection_distinguishing"}
    # 0.70 is below "target nobody" (≈ 0.71 on togo): the recommendation says so instead of celebrating
    assert rec.no_data_rule is not None and rec.no_data_rule[0] == "target nobody"
    assert any("is met by 'target nobody'" in n for n in rec.notes)
    assert rec.to_dict()["no_data_rule"]["rule"] == "target nobody"
    for p in rec.to_dict()["frontier"]:  # δ′ and the VACUOUS flag beside every ε′
        assert 0 <= p["implied_classic_dp_delta"] <= 1 and p["vacuous"] == (p["implied_classic_dp_delta"] >= 1)


def test_vacuous_points_rank_after_meaningful_ones_and_among_themselves_by_b():
    from engine.recommend import FrontierPoint

    vacuous = FrontierPoint("gaussian", 0.1, 1.0, 1e-3, (0.8,), 0.8, 0.8, 0.8, 20.0)  # δ′ = 1 at s = 20
    meaningful = FrontierPoint("gaussian", 1.0, 12.0, 1e-6, (0.8,), 0.8, 0.8, 0.8, 24.0)
    assert vacuous.vacuous and not meaningful.vacuous
    assert min((vacuous, meaningful), key=lambda p: p.rank(-1.0)) is meaningful  # despite its larger ε′
    wider = FrontierPoint("gaussian", 0.2, 2.0, 1e-3, (0.8,), 0.8, 0.8, 0.8, 20.0)
    assert wider.vacuous and min((vacuous, wider), key=lambda p: p.rank(-1.0)) is wider  # the larger B


def test_an_agreement_target_is_not_pruned_by_theorem_1(togo):
    """Theorem 1's γ is a worst case; an agreement target is an average on these data, so ε below Theorem 1's
    min_epsilon is searched too (the old search skipped it as "ruled out for every algorithm")."""
    from engine.theory.feasibility import min_epsilon

    data, program = togo
    rec = recommend(data, program, RecommendConfig(Target.parse("gamma>=0.8"), mechanisms=("gaussian",),
                                                   b_values=(0.5, 2.0), steps=3, seed=2))
    below = [e for e in rec.evaluated
             if e["epsilon"] < float(min_epsilon(e["b"], 0.8, rec.recommended.delta if rec.recommended else 1e-4))]
    assert below, "every evaluated ε lies in Theorem 1's region: the agreement target was pruned by Theorem 1"
    if rec.recommended is not None:
        assert "worst case" in rec.theorem1["note"]
    assert all(e["epsilon"] >= rec.config.epsilon_min for e in rec.evaluated)


def test_the_suggested_target_needs_the_data_and_is_above_every_no_data_rule(togo):
    from engine.recommend import suggest_target

    data, program = togo
    s = suggest_target(data, program)
    assert s.target is not None and s.best_rule is not None
    rule, floor = s.best_rule
    assert rule == "target nobody" and floor < s.target.value < s.nonprivate  # strictly between
    assert s.target.value == pytest.approx(floor + 0.5 * (s.nonprivate - floor), rel=1e-3)
    assert "halfway between 'target nobody'" in s.text


def test_no_target_is_suggested_when_the_non_private_program_is_a_no_data_rule():
    """Lending where almost every loan is repaid: the non-private program approves everyone — say so."""
    from engine.data.spec import DataSpec
    from engine.evaluation.programs import ProgramConfig
    from engine.recommend import suggest_target

    rng = np.random.default_rng(0)
    n = 600
    import pandas as pd

    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "good": (rng.random(n) < 0.98)})
    data = prepare(frame, DataSpec(features=("a", "b"), target="good"))
    s = suggest_target(data, ProgramConfig(kind="lending", approval_threshold=0.5))
    assert s.target is None and "no better than 'approve everyone'" in s.text and "reconsider the program" in s.text


def test_the_search_goes_below_the_grid_when_the_best_point_is_at_its_smallest_b(togo):
    data, program = togo
    rec = recommend(data, program, RecommendConfig(Target.parse("accuracy>=0.72"), mechanisms=("gaussian",),
                                                   b_values=(0.5, 1.0), steps=3, seed=3))
    # on togo only B = 0.5 meets the target (at ε = 20): it is the grid's smallest B, so B = 0.25 is searched too
    assert rec.recommended is not None and rec.recommended.b == 0.5
    assert any(e["b"] == 0.25 for e in rec.evaluated)
    assert not rec.at_edge and any("is interior (B = 0.25 protects less)" in n for n in rec.notes)
    assert rec.to_dict()["at_edge_of_search"] is False
    # a grid ending below classic DP's B = 2 whose best point is its largest B says so
    top = recommend(data, program, RecommendConfig(Target.parse("accuracy>=0.70"), mechanisms=("gaussian",),
                                                   b_values=(0.25, 0.5), steps=2, seed=3))
    if top.recommended is not None and top.recommended.b == 0.5:
        assert top.at_edge and any("at the edge of the search" in n for n in top.notes)


def test_recommend_command(tmp_path, capsys):
    out = tmp_path / "rec.json"
    code = main(["recommend", "--dataset", "togo-demo", "--target", "accuracy>=0.72", "--mechanisms", "gaussian",
                 "--b-values", "0.5", "--steps", "3", "--seed", "1", "--output", str(out)])
    assert code == 0
    import json

    saved = json.loads(out.read_text())
    assert saved["target"] == "accuracy ≥ 0.72" and "not a release" in saved["simulation"]
    printed = json.loads(capsys.readouterr().out)
    assert printed["recommended"] == saved["recommended"]
    assert main(["recommend", "--dataset", "togo-demo", "--target", "accuracy=0.7", "--output", str(out)]) == 2
