"""The Mechanisms page's run (engine.release_analysis): the CLI's release plus the one analysis entry point.

Also the two helpers moved out of the dashboard with it: a sweep's partial result from its finished rows, and
Algorithm 2's distance recovery on random pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.analysis import AnalysisConfig, analyse_mechanisms
from engine.comparison import alternatives
from engine.data.demos import load_demo
from engine.errors import InvalidParameterError
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace, distance_recovery_sample, squared_distance_variance
from engine.release import ReleaseConfig, run_release
from engine.release_analysis import analyse_release
from engine.rng import make_rng
from engine.sweeps import SweepConfig, SweepResult, run_sweep

ATTACKS = ("singling_out", "distinguishing")


@pytest.fixture(scope="module")
def togo():
    demo = load_demo("togo-demo")
    return demo.frame.head(600).reset_index(drop=True), demo.spec, demo.program_config()


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def test_run_is_the_cli_release_and_the_one_analysis_for_the_same_seed(togo):
    frame, spec, program = togo
    mechanism = GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-4)
    config = ReleaseConfig.of(spec, mechanism, seed=13)
    analysis = AnalysisConfig(program=program, attacks=ATTACKS)
    run = analyse_release(frame, config, analysis, mechanism.guarantee(), seed=13, repetitions=2)

    # the downloadable release is exactly what `python -m engine privatize` writes for this config
    prepared, release = run_release(frame, config, rng=make_rng(13))
    np.testing.assert_array_equal(run.value, release.value)
    assert run.d == prepared.d and not run.projected and run.output_scale == 1.0
    np.testing.assert_allclose(run.measured_sd, np.std(release.value - prepared.x, axis=0, ddof=1), rtol=1e-12)
    # every analysed number is analyse_mechanisms' for the same mechanisms and seed (and so a sweep cell's)
    others = alternatives(mechanism, d=prepared.d, candidate=mechanism.guarantee())
    data, points = analyse_mechanisms(prepared, [mechanism, *others], analysis, seed=13, repetitions=2)
    assert [type(p.mechanism).KIND for p in run.points] == [type(p.mechanism).KIND for p in points]
    for mine, theirs in zip(run.points, points, strict=True):
        for run_a, run_b in zip(mine.runs, theirs.runs, strict=True):
            row_a, row_b = run_a.row(), run_b.row()
            assert row_a.keys() == row_b.keys()
            assert all(_same(row_a[k], row_b[k]) for k in row_a), type(mine.mechanism).KIND
    assert (run.n_released, run.n_holdout) == (data.n_released, data.n_holdout)
    # the summary states the typed seed, the guarantee and the scores shown on the page
    assert run.summary["seed"] == 13 and run.summary["guarantee"]["headline"] == run.headline
    assert run.summary["protection"]["singling_out"] == run.protection("singling_out")[0]
    assert run.summary["protection"]["singling_out_interval"] == list(run.protection("singling_out")[2:])
    assert run.summary["sampler"]["name"] == run.sampler == "numpy" and "numpy" in run.download_note
    assert run.summary["program"]["decision_agreement"]["repetitions"] == 2
    assert run.summary["program"]["decision_agreement"]["no_data_rules"]
    assert run.kind == "gaussian" and run.label == GaussianMechanism.LABEL and run.is_dp


def test_a_real_release_never_states_its_seed_and_a_projected_release_has_no_per_feature_sd(togo):
    frame, spec, program = togo
    jl = JLLaplace.from_budget(1.0, 3.0, 1e-4, d=len(spec.features), k=3)
    config = ReleaseConfig.of(spec, jl)  # seed None: a real release; the run's seed came from the OS
    run = analyse_release(frame, config, AnalysisConfig(program=program, attacks=ATTACKS), jl.guarantee(), seed=5,
                          repetitions=1)
    assert run.summary["seed"] is None
    assert run.projected and run.value.shape == (len(frame), 3)
    assert np.isnan(run.measured_sd).all() and run.measured_sd.shape == (run.d,)
    assert f"knows {run.n_known} original records" in run.summary["protection"]["adversary"]


@pytest.mark.parametrize("bad", [{"seed": -1}, {"seed": 1, "repetitions": 0}])
def test_bad_seed_or_repetitions_are_refused(togo, bad):
    frame, spec, program = togo
    mechanism = GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-4)
    with pytest.raises(InvalidParameterError):
        analyse_release(frame, ReleaseConfig.of(spec, mechanism), AnalysisConfig(program=program),
                        mechanism.guarantee(), **bad)


def test_partial_result_from_finished_rows_summarises_like_the_finished_sweep(togo):
    from engine.data.preparation import prepare
    from engine.sweeps import Budget

    frame, spec, program = togo
    prepared = prepare(frame, spec)
    config = SweepConfig(budgets=(Budget(3.0, 1e-4, 0.9999, 5e-5),), b_values=(0.5, 2.0), mechanism="gaussian",
                         repetitions=2, seed=3, program=program, attacks=("distinguishing",))
    rows: list[dict] = []
    result = run_sweep(prepared, config, on_row=rows.append, use_cache=False)
    partial = SweepResult.from_rows(config, rows)
    assert not partial.complete and "cell" not in partial.table
    order = partial.table.sort_values(["point", "rep"]).reset_index(drop=True)
    expected = result.table.sort_values(["point", "rep"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(order[expected.columns], expected)
    pd.testing.assert_frame_equal(partial.summary(), result.summary())
    # fewer rows: only the finished points are summarised
    first = SweepResult.from_rows(config, [r for r in rows if r["point"] == 0])
    assert list(first.summary()["point"]) == [0]


def test_distance_recovery_is_unbiased_within_five_standard_errors():
    rng = np.random.default_rng(20261124)
    n, d, k = 400, 6, 8
    x = rng.normal(size=(n, d))
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0) * 1.5  # rows inside the unit ball
    jl = JLLaplace(k=k, epsilon=4.0, d=d, relation="row", b=1.0, target_delta=1e-3)
    z = jl.release(x, rng=rng).value
    out = distance_recovery_sample(x, z, jl.noise_variance, k, rng=np.random.default_rng(7), pairs=3000)
    err = out["estimate"] - out["true"]
    # each error has mean 0 and sd out["sd"] (corrected variance, Claim 7 as fixed): its mean is within 5 SE of 0
    se = math.sqrt(float(np.sum(out["sd"] ** 2))) / len(err)
    assert abs(float(err.mean())) < 5 * se
    np.testing.assert_allclose(out["sd"], np.sqrt(squared_distance_variance(out["true"], k, jl.noise_variance)))
    # the same generator seed gives the same pairs; pairs are of distinct records
    again = distance_recovery_sample(x, z, jl.noise_variance, k, rng=np.random.default_rng(7), pairs=3000)
    np.testing.assert_array_equal(again["true"], out["true"])
    assert (out["true"] > 0).all()


def test_distance_recovery_refuses_mismatched_rows():
    with pytest.raises(InvalidParameterError, match="same n"):
        distance_recovery_sample(np.zeros((3, 2)), np.zeros((4, 2)), 1.0, 2, rng=np.random.default_rng(0))


# ------------------------------------------------------------------------- helpers the Tradeoffs page now calls
@pytest.fixture(scope="module")
def two_sweeps(togo):
    from engine.data.preparation import prepare
    from engine.sweeps import Budget

    frame, spec, program = togo
    prepared = prepare(frame, spec)
    budget = Budget(3.0, 1e-4, 0.9999, 5e-5)
    configs = [SweepConfig(budgets=(budget,), b_values=(0.5, 2.0), mechanism=m, repetitions=2, seed=3,
                           program=program, attacks=("distinguishing",)) for m in ("projection", "gaussian")]
    return prepared, [run_sweep(prepared, c, use_cache=False) for c in configs]


def test_mechanism_at_a_grid_point_is_the_configs_mechanism_and_none_for_the_non_private_point(two_sweeps):
    prepared, (projection, _) = two_sweeps
    summary = projection.summary()
    point = int(summary.query("reference == 'tdp' and b == 0.5")["point"].iloc[0])
    mechanism, budget = projection.mechanism_at(point, d=prepared.d)
    assert mechanism == projection.config.mechanism_for(0.5, projection.config.budgets[0], d=prepared.d)
    assert budget == projection.config.budgets[0]
    nonprivate = int(summary.query("reference == 'non-private'")["point"].iloc[0])
    assert projection.mechanism_at(nonprivate) is None and projection.mechanism_at(999) is None


def test_combined_summary_keeps_one_non_private_row_and_flags_trivial_rules(two_sweeps):
    from engine.sweeps import combined_summary

    _, results = two_sweeps
    metric = results[0].config.program.headline_metric
    table = combined_summary(results, metric)
    summaries = [r.summary() for r in results]
    assert (table["reference"] == "non-private").sum() == 1
    assert len(table) == len(summaries[0]) + len(summaries[1]) - 1
    expected = list(results[0].no_better_than_trivial(metric)) + [
        flag for flag, ref in zip(results[1].no_better_than_trivial(metric), summaries[1]["reference"], strict=True)
        if ref != "non-private"]
    assert list(table["no_better_than"]) == expected
    assert combined_summary([], metric).empty


def test_best_trivial_rule_is_the_best_mean_of_the_rules_columns_and_at_least_every_flagged_point(two_sweeps):
    from engine.evaluation.programs import BASELINE_NAMES

    _, results = two_sweeps
    result = results[0]
    metric = result.config.program.headline_metric
    assert metric == "accuracy"
    means = {rule: float(result.table[f"baseline:{rule}:{metric}"].mean()) for rule in BASELINE_NAMES["targeting"]}
    best = result.best_trivial()
    assert best is not None and best.metric == metric
    assert best.rule == max(means, key=means.__getitem__) and best.value == pytest.approx(means[best.rule], abs=1e-12)
    # a flagged point is no better than some rule, hence its mean is not above the best rule's (up to the spread of
    # the rules' values between points: target nobody/everybody are the same on every point's rows)
    summary = result.flagged_summary()
    flagged = summary[summary["no_better_than"] != ""]
    assert (flagged[f"{metric}_mean"] <= best.value + 1e-12).all()


def test_distinguishing_references_use_the_configured_split_only_at_the_candidates_budget():
    from engine.comparison import distinguishing_references
    from engine.guarantee import Guarantee
    from engine.mechanisms.private_projection import PrivateProjection

    candidate = Guarantee(epsilon=2.0, delta=3e-5, b=0.5)
    own = PrivateProjection(b=0.5, epsilon1=1.25, delta1=1e-5, epsilon2=0.75, delta2=2e-5)
    roles = dict(distinguishing_references(candidate, own))
    assert (roles["projection"].epsilon1, roles["projection"].epsilon2) == (own.epsilon1, own.epsilon2)
    assert roles["gaussian"] == GaussianMechanism(b=0.5, epsilon=2.0, delta=3e-5)
    assert roles["classic-dp"] == GaussianMechanism(b=2.0, epsilon=2.0, delta=3e-5)
    # another budget: the candidate's default split (ε2 = ε/4, δ1 = 2δ/3), and no JL curve without a JL release
    other = dict(distinguishing_references(candidate, PrivateProjection(b=0.5, epsilon1=0.5, delta1=1e-5,
                                                                        epsilon2=0.5, delta2=2e-5)))
    assert other["projection"].epsilon2 == pytest.approx(0.5) and other["projection"].epsilon1 == pytest.approx(1.5)
    assert other["projection"].delta1 == pytest.approx(2e-5) and "jl-laplace" not in other
    jl = JLLaplace.from_budget(0.5, 2.0, 3e-5, d=4, k=3)
    assert dict(distinguishing_references(candidate, jl))["jl-laplace"] is jl
