"""The workshop: pinned candidates, their comparison (every number an existing engine function's), the odds bound,
the six-candidate limit and the JSON round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.accounting.tdp import tdp_to_dp
from engine.analysis import AnalysisConfig, Metrics
from engine.data.demos import load_demo
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.mondrian import MondrianKAnonymity
from engine.per_record.tdp_losses import tdp_record_losses
from engine.release import ReleaseConfig
from engine.release_analysis import analyse_release
from engine.workshop import (
    MAX_PINNED,
    Candidate,
    Evidence,
    Interval,
    Workshop,
    candidate_from_run,
    comparison_cells,
    comparison_rows,
    evidence_from_runs,
    odds_bound,
    odds_headline,
    odds_statement,
)
from tests.engine.test_decision_record import make_record, togo  # noqa: F401  (fixture)


def budget(label: str, b: float = 0.4, epsilon: float = 1.0, delta: float = 1e-6) -> Candidate:
    return Candidate(label=label, source="feasibility", guarantee=Guarantee(epsilon=epsilon, delta=delta, b=b))


def test_odds_bound_is_e_to_the_epsilon_times_the_prior_odds():
    assert odds_bound(1.0) == pytest.approx(2.718281828, rel=1e-9)  # 50:50 → at most e:1
    assert odds_bound(math.log(3.0), prior_odds=0.5) == pytest.approx(1.5, rel=1e-12)
    assert odds_bound(0.0) == 1.0  # ε = 0: nothing can be learnt
    assert odds_bound(800.0) == math.inf
    with pytest.raises(InvalidParameterError, match="prior odds"):
        odds_bound(1.0, prior_odds=0.0)


def test_odds_statement_is_labelled_a_bound_and_states_what_delta_is():
    pure = odds_statement(Guarantee(epsilon=1.0, delta=0.0))
    assert pure.startswith("Bound:") and "2.72:1" in pure and "exactly, for every outcome" in pure
    targeted = odds_statement(Guarantee(epsilon=1.0, delta=1e-6, b=0.4))
    # within B: e^1; any two records: e^5 (implied classic DP, s = ⌈2/0.4⌉ = 5 steps of ε = 1) ≈ 148:1
    assert "2.72:1" in targeted and "148:1" in targeted and "δ = 1e-06" in targeted
    assert odds_headline(Guarantee(epsilon=1.0, delta=1e-6, b=0.4)).startswith("50:50 → at most 2.72:1 within B = 0.4")
    # B = 0.55, ε = 4.4, δ = 1e-4: s = 4 steps give δ' = 1, so nothing follows for two records further apart
    vacuous = Guarantee(epsilon=4.4, delta=1e-4, b=0.55)
    assert vacuous.implied_dp().vacuous and "nothing is bounded" in odds_statement(vacuous)
    assert "81.5:1" in odds_statement(vacuous) and "any record: no bound (vacuous)" in odds_headline(vacuous)


def test_comparison_uses_the_guarantee_modules_values_and_the_per_record_losses():
    demo = load_demo("togo-demo")
    from engine.data.preparation import prepare

    prepared = prepare(demo.frame.head(400), demo.spec)
    a, b = budget("Example 1"), budget("classic", b=2.0, epsilon=2.0)
    rows = comparison_rows((a, b), x=prepared.x, chosen=1)
    implied = a.guarantee.implied_dp()
    assert rows[0].implied_epsilon == pytest.approx(implied.epsilon, rel=1e-12)
    assert rows[0].implied_delta == pytest.approx(implied.delta, rel=1e-12)
    assert (rows[0].implied_epsilon, rows[0].implied_delta) == pytest.approx(tdp_to_dp(1.0, 1e-6, 0.4), rel=1e-12)
    assert rows[0].loss_t2 == pytest.approx(a.guarantee.loss_at_distance(2.0), rel=1e-12)
    losses = tdp_record_losses(prepared, 1.0, 1e-6, 0.4).records
    assert rows[0].loss_nn_median == pytest.approx(float(np.median(losses["epsilon_nn"])), rel=1e-12)
    assert rows[0].loss_nn_max == pytest.approx(float(losses["epsilon_nn"].max()), rel=1e-12)
    assert rows[0].odds == pytest.approx(math.e, rel=1e-12)
    assert rows[0].odds_classic == pytest.approx(math.exp(implied.epsilon), rel=1e-12)
    assert rows[1].implied_epsilon == 2.0 and rows[1].chosen and not rows[0].chosen  # B = 2 is classic DP already
    assert "spending the pinned budget" in rows[0].mechanism  # a budget is measured with the Gaussian mechanism


def test_seventh_pin_is_refused_and_unpin_keeps_the_choice_on_its_candidate():
    w = Workshop()
    for i in range(MAX_PINNED):
        w = w.pin(budget(f"c{i}", epsilon=1.0 + i))
    with pytest.raises(InvalidParameterError, match="6 candidates are already pinned"):
        w.pin(budget("seventh", epsilon=9.0))
    with pytest.raises(InvalidParameterError, match="already pinned as 'c0'"):
        Workshop().pin(budget("c0")).pin(budget("again"))
    w = w.choose(3).unpin(1)
    assert len(w.pinned) == 5 and w.choice is not None and w.choice.label == "c3"
    assert w.unpin(2).chosen is None  # the chosen one removed: no choice left
    with pytest.raises(InvalidParameterError, match="at most 6"):
        Workshop(pinned=tuple(budget(f"x{i}", epsilon=1.0 + i) for i in range(7)))


def test_json_round_trip_and_edited_files_are_refused():
    evidence = Evidence(metric="accuracy", value=Interval(0.74, 0.72, 0.76), repetitions=5,
                        protections={"distinguishing": 0.4}, distinguishing_exact=True, noise_sd=0.3, seed=7)
    seeded = Candidate.of("seeded run", "mechanisms", GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-5), evidence)
    w = Workshop(pinned=(budget("Example 1"), seeded), chosen=1, rationale="*not* markdown")
    back = Workshop.from_json(w.to_json())
    assert back == w and back.pinned[1].seeded and not back.pinned[0].seeded
    data = w.to_dict()
    data["pinned"][1]["guarantee"]["epsilon"] = 0.5  # the mechanism still gives ε = 2
    with pytest.raises(InvalidParameterError, match="the file was edited"):
        Workshop.from_dict(data)
    data = w.to_dict()
    data["chosen"] = 2
    with pytest.raises(InvalidParameterError, match="chosen candidate"):
        Workshop.from_dict(data)
    with pytest.raises(InvalidParameterError, match="needs a label"):
        budget("  ")
    with pytest.raises(InvalidParameterError, match="no \\(B, ε, δ\\) guarantee"):
        Candidate.of("k-anon", "mechanisms", MondrianKAnonymity(k=5))


def test_evidence_from_runs_is_the_mean_and_interval_of_the_rows():
    rows = [{"accuracy": 0.70, "decision_agreement": 0.9, "noise_sd": 0.2, "protection_distinguishing": 0.5,
             "distinguishing_exact": 0.0},
            {"accuracy": 0.72, "decision_agreement": 0.92, "noise_sd": 0.2},
            {"accuracy": 0.74, "decision_agreement": 0.94, "noise_sd": 0.2}]
    ev = evidence_from_runs([Metrics.from_row(r, "accuracy") for r in rows], "accuracy", seed=None)
    # mean 0.72, sd 0.02, t(0.975, 2) = 4.302653 → half-width 4.302653 · 0.02/√3 = 0.049683
    assert ev.value is not None and ev.value.mean == pytest.approx(0.72, abs=1e-12)
    assert ev.value.high - ev.value.mean == pytest.approx(0.049683, abs=1e-6)
    assert ev.protections == {"distinguishing": 0.5} and ev.distinguishing_exact is False
    assert ev.extra_exclusion_errors is None and not ev.seeded and ev.repetitions == 3
    # The comparison says what a score means: 0.5 is in the band [0.25, 0.75) of threat_model.PROTECTION_BANDS.
    cells = comparison_cells(comparison_rows((Candidate.of("run", "mechanisms", GaussianMechanism(0.5, 1.0, 1e-4),
                                                           ev),))[0])
    assert cells["Distinguishing protection"] == "0.500 (bound): partial — telling two records apart errs often"
    assert cells["Singling-out protection"] == "not measured"


def test_a_candidate_no_better_than_a_rule_that_uses_no_data_is_flagged_in_the_comparison():
    # The rows carry the trivial rules' values as the analysis writes them (baseline:<rule>:<metric>).
    rows = [{"accuracy": a, "baseline:target nobody:accuracy": 0.70, "baseline:target everybody:accuracy": 0.30}
            for a in (0.66, 0.67, 0.68)]
    ev = evidence_from_runs([Metrics.from_row(r, "accuracy") for r in rows], "accuracy", seed=None)
    assert ev.baselines == pytest.approx({"target nobody": 0.70, "target everybody": 0.30}, abs=1e-12)
    # interval 0.67 ± 4.302653 · 0.01/√3 = [0.6452, 0.6948]: even its top is below target nobody's 0.70
    assert ev.no_better_than == ["target nobody"]
    row = comparison_rows((Candidate.of("weak", "mechanisms", GaussianMechanism(0.5, 1.0, 1e-4), ev),))[0]
    assert comparison_cells(row)["Program metric [95 % interval]"].endswith(
        "— NO BETTER than 'target nobody' (0.7), a rule that uses no data")
    good = evidence_from_runs([Metrics.from_row({**r, "accuracy": r["accuracy"] + 0.1}, "accuracy") for r in rows],
                              "accuracy", seed=None)
    assert good.no_better_than == []
    assert Evidence.from_json(ev.to_json()) == ev  # the baselines travel with the record


def test_a_mechanisms_run_becomes_a_candidate_with_its_measured_evidence():
    demo = load_demo("togo-demo")
    mechanism = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-4)
    config = ReleaseConfig.of(demo.spec, mechanism, seed=3)
    run = analyse_release(demo.frame.head(300), config, AnalysisConfig(attacks=("distinguishing",)),
                          mechanism.guarantee(), seed=3, repetitions=2)
    c = candidate_from_run(run, "run 1")
    assert c.seeded and c.evidence is not None and c.evidence.seed == 3  # labelled "simulation — not private"
    assert c.guarantee == mechanism.guarantee()
    mean, _, lo, hi = run.points[0].interval(run.program.headline_metric)
    assert c.evidence.value == Interval(mean, lo, hi)
    assert c.evidence.noise_sd == pytest.approx(run.analysis.noise_sd, rel=1e-12)
    assert c.evidence.protections["distinguishing"] == pytest.approx(run.distinguishing.protection, rel=1e-12)
    from engine.data.preparation import prepare

    here = prepare(demo.frame.head(300), demo.spec).fingerprint
    assert c.evidence.data == here  # measured on these rows: compared as is; on other data: flagged
    assert not comparison_rows((c,), fingerprint=here)[0].other_data
    other = comparison_rows((c,), fingerprint="0" * 64)[0]
    assert other.other_data and comparison_cells(other)["Evidence"].startswith("measured on OTHER data")


def test_decision_record_carries_the_workshop_and_old_records_still_load(togo):  # noqa: F811
    import json

    from engine.decision_record import load_decision_record

    w = Workshop(pinned=(budget("Example 1"), budget("classic", b=2.0, epsilon=2.0)), chosen=0,
                 rationale="Protect neighbours within B.")
    record = make_record(togo, workshop=w, mechanism=w.choice.build_mechanism().to_dict())  # releases the choice
    again = load_decision_record(record.to_json())
    assert again.workshop == w and again == record
    data = json.loads(make_record(togo).to_json())  # an empty workshop is not written …
    assert data["workshop"] is None
    data.pop("workshop")  # … and a record from before the workshop loads
    assert load_decision_record(json.dumps(data)).workshop is None
    data = json.loads(record.to_json())
    data["workshop"]["pinned"][0]["guarantee"].pop("b")  # a field missing inside the block is refused, not defaulted
    with pytest.raises(InvalidParameterError, match="missing the field.*workshop.pinned\\[0\\].guarantee.b"):
        load_decision_record(json.dumps(data))


def test_a_recommendation_becomes_a_seeded_candidate_with_the_searchs_evidence():
    from engine.recommend import FrontierPoint, Recommendation, RecommendConfig, Target
    from engine.workshop import candidate_from_recommendation

    point = FrontierPoint("gaussian", 0.5, 2.0, 1e-4, (0.71, 0.72, 0.73), 0.72, 0.70, 0.74,
                          tdp_to_dp(2.0, 1e-4, 0.5)[0])
    rec = Recommendation(RecommendConfig(Target.parse("accuracy>=0.7"), mechanisms=("gaussian",), seed=11), point,
                         (point,), (), protections={"protection_distinguishing": 0.3, "protection_singling_out": 0.9})
    c = candidate_from_recommendation(rec, "recommended")
    assert c.source == "recommendation" and c.guarantee == GaussianMechanism.from_budget(0.5, 2.0, 1e-4).guarantee()
    assert c.evidence is not None and c.evidence.value == Interval(0.72, 0.70, 0.74) and c.evidence.repetitions == 3
    assert c.evidence.protections == {"distinguishing": 0.3, "singling_out": 0.9} and c.seeded  # seed 11: simulation
    none = Recommendation(rec.config, None, (), ())
    with pytest.raises(InvalidParameterError, match="nothing to pin"):
        candidate_from_recommendation(none, "x")
