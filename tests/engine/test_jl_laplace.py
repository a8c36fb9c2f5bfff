"""JL projection + Laplace release: oracles from shared/spec/002-jl-laplace.md §4, §5, §8."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from engine.errors import DataValidationError, InvalidParameterError
from engine.evaluation.clustering import blob_experiment, clustering_accuracy
from engine.mechanisms import MECHANISMS, mechanism_from_dict
from engine.mechanisms.jl_laplace import (
    JLLaplace,
    delta_fail_curve,
    element_failure_bound,
    element_failure_probability,
    l1_tail_bound,
    per_pair_delta,
    recover_squared_distance,
    row_failure_bound,
    row_failure_probability,
    row_t_for_delta,
    row_t_min,
    squared_distance_variance,
)


@pytest.mark.parametrize(
    ("k", "t_min", "t_1e3", "t_1e6"),
    [(2, 1.1774, 2.8799, 3.8989), (3, 1.0929, 2.4083, 3.2257), (10, 0.7740, 1.4074, 1.8336), (20, 0.6074, 1.0294, 1.3230)],
)
def test_row_thresholds_match_spec_table(k, t_min, t_1e3, t_1e6):
    assert row_t_min(k, 1.0) == pytest.approx(t_min, abs=1e-4)
    assert row_t_for_delta(k, 1.0, 1e-3) == pytest.approx(t_1e3, abs=1e-4)
    assert row_t_for_delta(k, 1.0, 1e-6) == pytest.approx(t_1e6, abs=1e-4)
    assert row_failure_bound(k * row_t_min(k, 1.0), k, 1.0) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("d", "k", "paper", "exact"),
    [(3, 2, 1.104, 0.05395), (10, 3, 2.231, 0.07143), (50, 10, 0.3369, 8.469e-4), (100, 20, 0.00454, 3.926e-7)],
)
def test_element_failure_probabilities_match_spec(d, k, paper, exact):
    c = 2 * math.sqrt(k)
    assert element_failure_bound(c, k, d) == pytest.approx(paper, rel=1e-3)
    assert element_failure_probability(c, k, d) == pytest.approx(exact, rel=1e-3)
    mech = JLLaplace(k=k, epsilon=4.0, d=d, relation="element")
    assert mech.delta_fail_event == pytest.approx(exact, rel=1e-3)
    # The stated δ is per neighbouring pair: at most the single-row χ² tail, so ≤ event / d (roughly) and ≤ event.
    assert mech.guarantee().delta <= stats.chi2.sf(4 * k, df=k) * (1 + 1e-12)
    assert mech.guarantee().delta <= exact
    assert mech.guarantee().vacuous is False
    assert any("VACUOUS" in w for w in mech.warnings()) == (paper >= 1)


def test_element_failure_probability_matches_monte_carlo():
    rng = np.random.default_rng(11)
    d, k, draws = 3, 2, 200_000
    p = rng.normal(0, 1 / math.sqrt(k), size=(draws, d, k))
    fails = (math.sqrt(k) * np.linalg.norm(p, axis=2) > 2 * math.sqrt(k)).any(axis=1).mean()
    exact = element_failure_probability(2 * math.sqrt(k), k, d)
    se = math.sqrt(exact * (1 - exact) / draws)
    assert abs(fails - exact) < 5 * se


def test_row_failure_probability_matches_monte_carlo():
    rng = np.random.default_rng(12)
    k, draws = 3, 200_000
    v = np.array([0.6, 0.8, 0.0])  # ‖v‖ = 1 = b
    p = rng.normal(0, 1 / math.sqrt(k), size=(draws, 3, k))
    t = row_t_min(k, 1.0)
    fails = (np.abs(np.einsum("j,njk->nk", v, p)) > t).any(axis=1).mean()
    exact = row_failure_probability(k * t, k, 1.0)
    se = math.sqrt(exact * (1 - exact) / draws)
    assert abs(fails - exact) < 5 * se
    assert exact < row_failure_bound(k * t, k, 1.0)


def test_privacy_privacy_curves_match_spec():
    elem = delta_fail_curve([3, 4, 5, 6], laplace_scale=2.236, k=20, relation="element", d=100)
    assert elem["delta_fail_paper"] == pytest.approx([8.2, 4.54e-3, 1.69e-8, 4.3e-16], rel=0.02)
    assert elem["delta_fail_proof_event"] == pytest.approx([0.105, 3.93e-7, 3.4e-15, 9.7e-26], rel=0.03)
    assert np.all(elem["delta_fail"] <= elem["delta_fail_proof_event"])
    row = delta_fail_curve([4, 6, 8, 10], laplace_scale=1.9351, k=10, relation="row", b=1.0)
    assert row["delta_fail_paper"] == pytest.approx([1.0, 0.0236, 1.25e-4, 1.48e-7], rel=0.02)
    assert np.all(np.diff(row["delta_fail"]) < 0)  # more ε claimed at fixed noise → smaller failure
    assert np.all(row["delta_fail"] <= row["delta_fail_proof_event"])
    assert np.all(row["delta_fail_proof_event"] <= np.minimum(row["delta_fail_paper"], 1.0))


@pytest.mark.parametrize(("k", "b_elem", "b_row"), [(1, 0.5, 0.2944), (2, 0.7071, 0.5887), (10, 1.5811, 1.9351), (20, 2.2361, 3.0368)])
def test_noise_scales_match_fig4_table(k, b_elem, b_row):
    assert JLLaplace(k=k, epsilon=4.0, d=3, relation="element").laplace_scale == pytest.approx(b_elem, abs=1e-4)
    assert JLLaplace(k=k, epsilon=4.0, d=3, relation="row", b=1.0).laplace_scale == pytest.approx(b_row, abs=1e-4)


def test_variance_formulas_hand_oracle():
    assert squared_distance_variance(16.0, 2, 1.0) == 412.0
    assert squared_distance_variance(16.0, 2, 1.0, "paper-statement") == 344.0
    assert squared_distance_variance(16.0, 2, 1.0, "paper-proof") == 348.0


@pytest.mark.parametrize(("d", "k", "b", "a2", "corrected"), [(3, 2, 0.7071, 3.0, 61.0), (5, 4, 2.0, 20.0, 5064.0)])
def test_distance_estimator_unbiased_and_corrected_variance_by_monte_carlo(d, k, b, a2, corrected):
    rng = np.random.default_rng(2024)
    trials = 200_000
    a = np.zeros(d)
    a[0] = math.sqrt(a2)
    p = rng.normal(0, 1 / math.sqrt(k), size=(trials, d, k))
    ap = np.einsum("j,njk->nk", a, p)
    zi = ap + rng.laplace(0, b, size=(trials, k))
    zj = rng.laplace(0, b, size=(trials, k))
    est = recover_squared_distance(zi, zj, 2 * b * b)
    theory = squared_distance_variance(a2, k, 2 * b * b)
    assert theory == pytest.approx(corrected, rel=2e-3)
    mean_se = math.sqrt(theory / trials)
    assert abs(est.mean() - a2) < 4 * mean_se
    # SE of a sample variance: sqrt((m4 − s⁴)/N), estimated from the sample itself.
    centred = est - est.mean()
    var_se = math.sqrt((np.mean(centred**4) - np.var(est) ** 2) / trials)
    assert abs(np.var(est) - theory) < 4 * var_se
    for wrong in ("paper-statement", "paper-proof"):
        assert abs(np.var(est) - squared_distance_variance(a2, k, 2 * b * b, wrong)) > 4 * var_se


@pytest.mark.parametrize(("k", "threshold", "scale"), [(2, 2.4, 1.0), (3, 3.0, 0.8), (10, 9.0, 1 / math.sqrt(10))])
def test_l1_chernoff_bound_dominates_monte_carlo(k, threshold, scale):
    rng = np.random.default_rng(k)
    draws = 400_000
    sums = np.abs(rng.normal(0, scale, size=(draws, k))).sum(axis=1)
    p_hat = np.mean(sums > threshold)
    bound = l1_tail_bound(threshold, k, scale)
    assert bound >= p_hat - 5 * math.sqrt(max(p_hat, 1 / draws) / draws)  # a valid upper bound
    assert bound < 1.0


def test_per_pair_delta_is_valid_against_monte_carlo_of_the_l1_event():
    # δ_fail must dominate P(‖(X − X')P‖₁ > c) for the worst neighbouring pair; estimate it by Monte Carlo.
    rng = np.random.default_rng(21)
    draws = 400_000
    mech = JLLaplace(k=2, epsilon=1.0, d=3, relation="row", b=1.0)  # t = t_min: proof event bound is 1
    v = np.array([1.0, 0.0, 0.0])  # ‖v‖ = b
    p = rng.normal(0, 1 / math.sqrt(2), size=(draws, 3, 2))
    l1 = np.abs(np.einsum("j,njk->nk", v, p)).sum(axis=1)
    p_hat = np.mean(l1 > mech.c)
    assert mech.delta_fail >= p_hat - 5 * math.sqrt(p_hat / draws)
    assert mech.delta_fail <= mech.delta_fail_event < mech.delta_fail_paper + 1e-12


def test_laplace_scale_calibrates_the_privacy_loss_to_epsilon():
    # For a fixed P, the worst-case privacy loss of the Laplace stage is ‖(X − X')P‖₁ / b_L. With b_L = c/ε it is
    # exactly ε when the L1 change equals c, and it exceeds ε when the change exceeds c.
    mech = JLLaplace(k=4, epsilon=1.5, d=6, relation="element")
    rng = np.random.default_rng(5)
    x = rng.uniform(-0.3, 0.3, size=(5, 6))
    p = rng.normal(0, 1 / 2, size=(6, 4))
    change = mech.c / np.abs(p[3]).sum()  # an element change whose L1 effect is exactly c
    x2 = x.copy()
    x2[2, 3] += change
    mu, mu2 = x @ p, x2 @ p
    # The loss is maximised at points z beyond both means in every coordinate (e.g. z = mu + large·sign).
    z = mu + 50 * np.sign(mu - mu2 + 1e-300)
    loss = (np.abs(z - mu2).sum() - np.abs(z - mu).sum()) / mech.laplace_scale
    assert loss == pytest.approx(mech.epsilon, rel=1e-9)
    x2[2, 3] += change  # twice the change → twice the loss
    loss2 = (np.abs(z - x2 @ p).sum() - np.abs(z - mu).sum()) / mech.laplace_scale
    assert loss2 == pytest.approx(2 * mech.epsilon, rel=1e-9)


def test_release_shape_guarantee_and_determinism():
    x = np.random.default_rng(0).uniform(-0.3, 0.3, size=(40, 5))
    mech = JLLaplace(k=3, epsilon=2.0, d=5, relation="row", b=2.0, target_delta=1e-6)
    r1 = mech.release(x, rng=np.random.default_rng(9))
    r2 = mech.release(x, rng=np.random.default_rng(9))
    assert r1.value.shape == (40, 3)
    np.testing.assert_array_equal(r1.value, r2.value)
    g = r1.guarantee
    assert g.relation == "row" and g.b == 2.0 and g.epsilon == 2.0
    # target_delta picks the smallest c whose per-pair bound meets the target: δ ≤ target, tight, and less noise
    # than the paper's rule for the same δ.
    assert g.delta <= 1e-6 and g.delta == pytest.approx(1e-6, rel=1e-6)
    paper_rule = JLLaplace(k=3, epsilon=2.0, d=5, relation="row", b=2.0, t=row_t_for_delta(3, 2.0, 1e-6))
    assert paper_rule.delta_fail_paper == pytest.approx(1e-6, rel=1e-9)
    assert mech.c < paper_rule.c
    assert "jl-laplace" in MECHANISMS
    assert mechanism_from_dict(mech.to_dict()) == mech
    with pytest.raises(InvalidParameterError, match="d must equal the number of data columns"):
        mech.release(np.zeros((40, 4)), rng=np.random.default_rng(0))
    with pytest.raises(DataValidationError, match="row 1 has L2 norm 50"):  # review finding: unit ball enforced
        mech.release(np.array([[0.1, 0, 0, 0, 0], [0, 50.0, 0, 0, 0]]), rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0, "epsilon": 1.0, "d": 3},
        {"k": 2, "epsilon": 0.0, "d": 3},
        {"k": 2, "epsilon": 1.0, "d": 0},
        {"k": 2, "epsilon": 1.0, "d": 3, "relation": "column"},
        {"k": 2, "epsilon": 1.0, "d": 3, "b": 2.5},
        {"k": 2, "epsilon": 1.0, "d": 3, "t": 0.1},
        {"k": 2, "epsilon": 1.0, "d": 3, "t": 2.0, "target_delta": 1e-3},
        {"k": 2, "epsilon": 1.0, "d": 3, "relation": "element", "t": 2.0},
        {"k": 2, "epsilon": 1.0, "d": 3, "target_delta": 1.0},
    ],
)
def test_invalid_configurations_raise(kwargs):
    with pytest.raises(InvalidParameterError):
        JLLaplace(**kwargs)


def test_clustering_accuracy_best_matching():
    assert clustering_accuracy(np.array([0, 0, 1, 1, 1]), np.array([1, 1, 0, 0, 1])) == pytest.approx(0.8)


@pytest.mark.slow
def test_blob_experiment_reproduces_table1_orderings():
    rng = np.random.default_rng(77)
    small = blob_experiment(3, 2, n=500, repetitions=12, rng=rng)
    large = blob_experiment(100, 20, n=500, repetitions=12, rng=rng)
    for res in (small, large):
        assert res.mean("none") == pytest.approx(stats.norm.cdf(2), abs=0.02)
        assert res.mean("none") > res.mean("element") + 0.05
    # Paired comparison (common random numbers): row-wise noise is smaller at k=2, larger at k=20.
    assert small.mean("row") >= small.mean("element")
    assert large.mean("row") < large.mean("element")


@pytest.mark.parametrize("relation", ["element", "row"])
def test_target_delta_calibration_is_tight_and_valid(relation):
    for target in (1e-3, 1e-6, 1 / 4202):
        mech = JLLaplace(k=8, epsilon=1.0, d=10, relation=relation, target_delta=target)
        assert mech.delta_fail <= target
        assert mech.guarantee().delta <= target
        # The smallest such c: 1e-6 less noise would break the target.
        assert per_pair_delta(mech.c * (1 - 1e-6), 8, relation, b=2.0) > target


def test_cli_privatize_runs_jl_laplace_with_d_from_the_data(tmp_path, capsys):
    import json

    import pandas as pd

    from engine.cli import main

    out = tmp_path / "z.csv"
    code = main(["privatize", "--dataset", "togo-demo", "--mechanism", "jl-laplace", "--k", "3", "--epsilon", "2",
                 "--relation", "row", "--target-delta", "1e-6", "--seed", "4", "--output", str(out)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["columns"] == ["z1", "z2", "z3"]
    assert summary["guarantee"]["dict"]["delta"] <= 1e-6
    assert pd.read_csv(out).shape == (4201, 3)


def test_cli_blob_experiment_reports_table1_quantities(capsys):
    import json

    from engine.cli import main

    code = main(["blob-experiment", "--d", "3", "--k", "2", "--n", "300", "--reps", "3", "--seed", "5"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out["accuracy"]) == {"none", "projection", "element", "row"}
    assert out["accuracy"]["none"]["mean"] == pytest.approx(stats.norm.cdf(2), abs=0.03)
    assert out["accuracy"]["none"]["mean"] > out["accuracy"]["element"]["mean"]
    # (d, k) = (3, 2) is one of the paper's vacuous settings: its own bound is ≥ 1 and the output says so.
    assert out["guarantees"]["element"]["delta_fail_paper_bound"] >= 1
    assert any("VACUOUS" in w for w in out["guarantees"]["element"]["warnings"])
    assert main(["blob-experiment", "--d", "3", "--k", "0"]) == 2
