"""Distinguishing protection: the paper's closed form, the Gaussian's exact expected loss, trade-off curves."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from engine.attacks.distinguishing import (
    distinguishing,
    eps_delta_min_total_error,
    gaussian_expected_loss,
    gaussian_min_total_error,
    gaussian_tradeoff_curve,
    guarantee_expected_loss,
    projection_distinguishing,
    projection_expected_loss,
    tradeoff_curve,
    tradeoff_curve_from_eps_delta,
)
from engine.errors import InvalidParameterError
from engine.mechanisms.gaussian import GaussianMechanism, gaussian_delta
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.mondrian import MondrianKAnonymity
from engine.mechanisms.private_projection import PrivateProjection

N = 4201
DELTA = 1 / (N + 1)
D1, D2 = 2 * DELTA / 3, DELTA / 3
FINE = np.linspace(0.0, 1.0, 20001)


# ------------------------------------------------------------------------------------------- paper's closed form
@pytest.mark.parametrize("eps1, eps2, expected", [(3.0, 0.9999, 0.8347), (2.0, 0.5, 0.9135)])
def test_paper_oracles_for_classic_dp(eps1, eps2, expected):
    assert projection_distinguishing(2.0, eps1, D1, eps2, D2) == pytest.approx(expected, abs=5e-5)


def test_closed_form_by_hand_when_delta1_clips():
    """B = 0.25: s = 8, δ̂1 clips to 1 so ln(1/δ̂1) = 0 and the first term is (8·3)²/(4·3) = 48 exactly."""
    s, e1, e2 = 8, 3.0, 0.9999
    dh2 = min(1.0, math.expm1(s * e2) / math.expm1(e2) * D2)
    expected_u = (s * e1) ** 2 / (4 * (0.0 + e1)) + (s * e2) ** 2 / (16 * math.log(1.25 / dh2))
    assert projection_expected_loss(0.25, e1, D1, e2, D2) == pytest.approx(expected_u, rel=1e-12)
    assert projection_distinguishing(0.25, e1, D1, e2, D2) == pytest.approx(1 / (1 + expected_u), rel=1e-12)
    assert projection_distinguishing(0.25, e1, D1, e2, D2) == pytest.approx(0.0197, abs=5e-5)  # spec digest


def test_closed_form_when_delta2_clips_uses_ln_1_25():
    # B = 0.05: s = 40, both δ̂ clip to 1.
    u = projection_expected_loss(0.05, 3.0, D1, 0.9999, D2)
    assert u == pytest.approx((40 * 3.0) ** 2 / 12 + (40 * 0.9999) ** 2 / (16 * math.log(1.25)), rel=1e-12)


def test_closed_form_is_vectorised_and_monotone_in_b():
    bs = np.array([0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0])
    d = projection_distinguishing(bs, 3.0, D1, 0.9999, D2)
    assert d.shape == bs.shape
    assert np.all(np.diff(d) >= 0)  # larger B → fewer steps → less loss → more protection
    assert d[-1] == pytest.approx(0.8347, abs=5e-5)
    assert np.all((d > 0) & (d <= 1))


def test_closed_form_rejects_bad_parameters():
    with pytest.raises(InvalidParameterError, match="b"):
        projection_distinguishing(2.5, 3.0, D1, 0.9999, D2)
    with pytest.raises(InvalidParameterError, match="delta1"):
        projection_distinguishing(2.0, 3.0, 0.0, 0.9999, D2)
    with pytest.raises(InvalidParameterError, match="epsilon2"):
        projection_distinguishing(2.0, 3.0, D1, -1.0, D2)


# ------------------------------------------------------------------------------------------- Gaussian exact
@pytest.mark.parametrize("t, sigma", [(2.0, 1.0), (2.0, 5.0), (0.25, 0.3)])
def test_gaussian_expected_loss_is_the_mean_of_the_privacy_loss(t, sigma):
    """Independent oracle: integrate the log-likelihood ratio ln p0(y)/p1(y) under y ~ N(0, σ²)."""

    def loss(y):
        return norm.logpdf(y, 0, sigma) - norm.logpdf(y, t, sigma)

    mean, _ = integrate.quad(lambda y: loss(y) * norm.pdf(y, 0, sigma), -12 * sigma, 12 * sigma + t)
    var, _ = integrate.quad(lambda y: (loss(y) - mean) ** 2 * norm.pdf(y, 0, sigma), -12 * sigma, 12 * sigma + t)
    mu = gaussian_expected_loss(t, sigma)
    assert mu == pytest.approx(mean, rel=1e-7)
    assert 2 * mu == pytest.approx(var, rel=1e-6)  # N(μ, 2μ)


def test_guarantee_expected_loss_forms():
    assert guarantee_expected_loss(3.0, D1) == pytest.approx(9 / (4 * (math.log(1 / D1) + 3.0)))
    assert guarantee_expected_loss(1.0, 0.0) == pytest.approx(math.tanh(0.5))
    assert guarantee_expected_loss(math.inf, 1.0) == math.inf
    assert guarantee_expected_loss(2.0, 1.0) == math.inf


# ------------------------------------------------------------------------------------------- trade-off curves
def _is_convex(alphas, betas, tol=1e-8):
    slopes = np.diff(betas) / np.diff(alphas)
    return bool(np.all(np.diff(slopes) >= -tol))


@pytest.mark.parametrize("eps, delta", [(0.0, 0.0), (0.5, 0.0), (1.0, 1e-5), (3.9999, 2.4e-4), (2.0, 0.3)])
def test_eps_delta_curve_properties(eps, delta):
    betas = tradeoff_curve_from_eps_delta(eps, delta, FINE)
    assert betas[0] == pytest.approx(1 - delta)
    assert tradeoff_curve_from_eps_delta(eps, delta, [1 - delta])[0] == pytest.approx(0.0, abs=1e-15)
    assert np.all(np.diff(betas) <= 1e-15)  # non-increasing
    assert _is_convex(FINE, betas)
    assert np.all(betas <= 1 - FINE + 1e-15)  # never above the trivial test
    # Symmetry f = f⁻¹ (neighbouring relation is symmetric): f(f(α)) = α on [0, 1 − δ].
    inner = FINE[FINE <= 1 - delta]
    back = tradeoff_curve_from_eps_delta(eps, delta, tradeoff_curve_from_eps_delta(eps, delta, inner))
    np.testing.assert_allclose(back, inner, atol=1e-12)


def test_eps_delta_curve_trivial_and_vacuous_cases():
    np.testing.assert_allclose(tradeoff_curve_from_eps_delta(0.0, 0.0, FINE), 1 - FINE, atol=1e-15)
    assert tradeoff_curve_from_eps_delta(math.inf, 0.0, [0.0, 0.1]).tolist() == [1.0, 0.0]
    assert np.all(tradeoff_curve_from_eps_delta(1.0, 1.0, FINE) == 0.0)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_gaussian_curve_properties(mu):
    betas = gaussian_tradeoff_curve(mu, 1.0, FINE)
    assert betas[0] == 1.0 and betas[-1] == 0.0
    assert np.all(np.diff(betas) <= 0)
    assert _is_convex(FINE, betas, tol=1e-9)
    back = gaussian_tradeoff_curve(mu, 1.0, betas)
    np.testing.assert_allclose(back, FINE, atol=1e-9)  # symmetric: G_μ(G_μ(α)) = α
    # Scale invariance: only Δ/σ matters.
    np.testing.assert_allclose(gaussian_tradeoff_curve(2 * mu, 2.0, FINE), betas, atol=1e-12)


@pytest.mark.parametrize("sens, sigma", [(2.0, 1.0), (2.0, 3.0), (0.5, 0.4)])
def test_gaussian_curve_matches_exact_privacy_profile(sens, sigma):
    """δ(ε) = sup_α [1 − e^ε α − β(α)] (f-DP ↔ (ε, δ) duality) must equal Balle & Wang's exact profile."""
    alphas = np.concatenate([np.logspace(-14, -1, 4000), np.linspace(0.1, 1.0, 4000)])
    betas = gaussian_tradeoff_curve(sens, sigma, alphas)
    for eps in (0.0, 0.5, 1.0, 2.0):
        dual = np.max(1 - math.exp(eps) * alphas - betas)
        assert dual == pytest.approx(float(gaussian_delta(sens, sigma, eps)), rel=2e-3, abs=1e-9)


def test_gaussian_curve_matches_dp_accounting_pld():
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    sens, sigma = 2.0, 2.5
    pld = pld_mod.from_gaussian_mechanism(sigma, sensitivity=sens, value_discretization_interval=1e-4)
    alphas = np.concatenate([np.logspace(-14, -1, 4000), np.linspace(0.1, 1.0, 4000)])
    betas = gaussian_tradeoff_curve(sens, sigma, alphas)
    for eps in (0.25, 0.75, 1.5):
        dual = float(np.max(1 - math.exp(eps) * alphas - betas))
        assert dual == pytest.approx(pld.get_delta_for_epsilon(eps), rel=1e-2)


def test_gaussian_curve_matches_monte_carlo_threshold_test():
    """Empirical FPR/FNR of the likelihood-ratio (threshold) test, 200,000 draws per hypothesis (sd ≤ 0.0012)."""
    rng = np.random.default_rng(7)
    sens, sigma = 2.0, 1.5
    y0 = rng.normal(0.0, sigma, 200_000)
    y1 = rng.normal(sens, sigma, 200_000)
    for cut in (0.0, 1.0, 2.0, 3.0):
        alpha = np.mean(y0 > cut)
        beta = np.mean(y1 <= cut)
        assert beta == pytest.approx(float(gaussian_tradeoff_curve(sens, sigma, [alpha])[0]), abs=0.006)


def test_gaussian_curve_dominates_every_eps_delta_bound_it_satisfies():
    sens, sigma = 2.0, 1.2
    g = gaussian_tradeoff_curve(sens, sigma, FINE)
    for eps in (0.2, 1.0, 3.0):
        delta = float(gaussian_delta(sens, sigma, eps))
        assert np.all(g >= tradeoff_curve_from_eps_delta(eps, delta, FINE) - 1e-9)


def test_min_total_error_closed_forms_against_a_fine_grid():
    for eps, delta in [(0.5, 0.0), (2.0, 1e-3), (4.0, 2.4e-4)]:
        grid = np.min(FINE + tradeoff_curve_from_eps_delta(eps, delta, FINE))
        assert eps_delta_min_total_error(eps, delta) == pytest.approx(grid, abs=1e-4)
        assert eps_delta_min_total_error(eps, delta) <= grid + 1e-12
    for sens, sigma in [(2.0, 1.0), (0.5, 2.0)]:
        grid = np.min(FINE + gaussian_tradeoff_curve(sens, sigma, FINE))
        assert gaussian_min_total_error(sens, sigma) == pytest.approx(grid, abs=1e-4)
    assert eps_delta_min_total_error(math.log(3), 0.0) == pytest.approx(0.5)


# ------------------------------------------------------------------------------------------- dispatch
def test_dispatch_gaussian_is_exact():
    mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    curve = tradeoff_curve(mech, FINE)
    assert curve.method == "gaussian-exact" and curve.mu == pytest.approx(2.0 / mech.sigma)
    np.testing.assert_allclose(curve.betas, gaussian_tradeoff_curve(2.0, mech.sigma, FINE))
    # The exact curve is above what the switch-lemma (ε', δ') bound at distance 2 promises.
    eps2, delta2 = mech.guarantee().loss_at_distance(2.0)
    assert np.all(np.array(curve.betas) >= tradeoff_curve_from_eps_delta(eps2, delta2, FINE) - 1e-9)
    res = distinguishing(mech)
    assert res.expected_loss == pytest.approx(4.0 / (2 * mech.sigma**2))
    assert res.expected_loss_score == pytest.approx(1 / (1 + res.expected_loss))
    assert res.protection == pytest.approx(2 * norm.cdf(-1.0 / mech.sigma))


def test_dispatch_projection_uses_the_tighter_of_composition_and_whole_guarantee():
    mech = PrivateProjection(b=1.0, epsilon1=3.0, delta1=D1, epsilon2=0.9999, delta2=D2)
    curve = tradeoff_curve(mech, FINE)
    assert curve.method == "composition" and len(curve.eps_delta) == 2
    bounds = [tradeoff_curve_from_eps_delta(e, d, FINE) for e, d in curve.eps_delta]
    np.testing.assert_allclose(curve.betas, np.maximum(*bounds))
    assert curve.min_total_error <= np.min(FINE + np.array(curve.betas)) + 1e-12
    res = distinguishing(mech)
    assert res.expected_loss_score == pytest.approx(projection_distinguishing(1.0, 3.0, D1, 0.9999, D2))
    assert 0.0 <= res.protection <= 1.0 and res.max_advantage == pytest.approx(1 - res.protection)
    # B = 0.25: the whole guarantee translated to distance 2 has δ' = 1 (vacuous) and drops out; the per-step
    # composition (24 + 8, δ̂1 = 1 clipped + δ̂2 → 1) is vacuous too: no protection against far-apart records.
    far = tradeoff_curve(PrivateProjection(b=0.25, epsilon1=3.0, delta1=D1, epsilon2=0.9999, delta2=D2), FINE)
    assert far.min_total_error == 0.0


def test_dispatch_classic_dp_projection_oracle_and_hypothesis_view():
    mech = PrivateProjection(b=2.0, epsilon1=3.0, delta1=D1, epsilon2=0.9999, delta2=D2)
    res = distinguishing(mech)
    assert res.expected_loss_score == pytest.approx(0.8347, abs=5e-5)
    # ε = 3.9999 allows a test with total error 2(1 − δ)/(1 + e^ε) ≈ 3.6 %: the paper's "83.5 %" is not a
    # statement about how well two records can be told apart.
    assert res.protection == pytest.approx(2 * (1 - DELTA) / (1 + math.exp(3.9999)), rel=1e-9)


def test_dispatch_targeted_distance_is_better_protected():
    mech = PrivateProjection(b=0.25, epsilon1=3.0, delta1=D1, epsilon2=0.9999, delta2=D2)
    near = distinguishing(mech, distance=0.25)
    far = distinguishing(mech, distance=2.0)
    assert near.protection > far.protection
    assert near.expected_loss_score > far.expected_loss_score


def test_dispatch_k_anonymity_gives_no_protection():
    res = distinguishing(MondrianKAnonymity(k=2))
    assert res.protection == 0.0 and res.expected_loss_score == 0.0 and math.isinf(res.expected_loss)
    assert all(b == 0.0 for b in res.curve.betas)


def test_dispatch_element_level_guarantee_is_translated_to_whole_records_by_group_privacy():
    # Issue 15: the element-level (ε, δ) was applied to "any two records, distance 2" — with element_bound = 0.1
    # it reported 0.537 while an attacker who learns P from the other rows reaches a total error of 0.139.
    # Two records 2 apart differ by up to s = ⌈2√d/bound⌉ + d − 1 single-entry changes of size ≤ bound.
    mech = JLLaplace(k=10, epsilon=1.0, d=3, relation="element", element_bound=0.1)
    res = distinguishing(mech)
    g = mech.guarantee()
    assert res.basis == "bound"
    assert res.protection <= 0.139  # no longer above what the known attacker achieves
    assert "ONE entry" in res.curve.description and "group privacy" in res.curve.description
    # The implied statement is group privacy over s = 37 steps (⌈2√3/0.1⌉ = 35, + 2).
    mech1 = JLLaplace(k=50, epsilon=1.0, d=3, relation="element", element_bound=1.0)
    s = math.ceil(2 * math.sqrt(3) / 1.0) + 3 - 1
    assert s == 6
    g1 = mech1.guarantee()
    curve = tradeoff_curve(mech1, FINE)
    eps, dlt = curve.eps_delta[0]
    assert eps == pytest.approx(s * g1.epsilon, rel=1e-12)
    growth = math.expm1(s * g1.epsilon) / math.expm1(g1.epsilon)
    assert dlt == pytest.approx(min(1.0, growth * g1.delta), rel=1e-9)
    np.testing.assert_allclose(curve.betas, tradeoff_curve_from_eps_delta(eps, dlt, FINE))
    # d = 1 and bound = 2: one step — the element statement itself, as before.
    single = JLLaplace(k=20, epsilon=4.0, d=1, relation="element", element_bound=2.0)
    gs = single.guarantee()
    assert tradeoff_curve(single, FINE).eps_delta == ((gs.epsilon, gs.delta),)
    # Never more protection than the element-level number, which covers one entry only.
    assert distinguishing(mech1).protection <= eps_delta_min_total_error(g1.epsilon, g1.delta)
    assert g.relation == "element"
    # The guarantee itself says that it covers one entry and what it implies for a whole record.
    assert any(n.startswith("ONE entry only") and "s = ⌈2√d/0.1⌉ + d − 1 = 37" in n for n in g.notes)


def test_element_steps_for_record_is_attained_and_exact_at_whole_numbers():
    from engine.mechanisms.jl_laplace import element_steps_for_record

    # d = 4, bound 1: Δ = (1.0001, 1.0001, 1.0001, 0.01) has ‖Δ‖₂ < 2 and needs 2 + 2 + 2 + 1 = 7 steps.
    delta_row = np.array([1.0001, 1.0001, 1.0001, 0.01])
    assert np.linalg.norm(delta_row) < 2
    assert int(np.ceil(np.abs(delta_row) / 1.0).sum()) == 7 == element_steps_for_record(4, 1.0)
    assert element_steps_for_record(1, 0.1) == 20  # 2/0.1 is 20 exactly, not 21
    assert element_steps_for_record(1, 2.0, 1.0) == 1


def test_every_distinguishing_result_states_whether_it_is_exact_or_a_bound():
    exact = distinguishing(GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5))
    assert exact.basis == "exact" and exact.basis_text.startswith("Exact")
    for mech in (
        PrivateProjection(b=0.25, epsilon1=3.0, delta1=D1, epsilon2=0.9999, delta2=D2),
        JLLaplace(k=10, epsilon=1.0, d=3),
        MondrianKAnonymity(k=2),
    ):
        res = distinguishing(mech)
        assert res.basis == "bound" and res.basis_text.startswith("Bound"), mech


def test_dispatch_rejects_bad_input():
    mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidParameterError, match="distance"):
        tradeoff_curve(mech, FINE, distance=3.0)
    with pytest.raises(InvalidParameterError, match="distance"):
        distinguishing(mech, distance=0.0)
    with pytest.raises(InvalidParameterError, match="alphas"):
        tradeoff_curve(mech, [0.5, 1.5])
    with pytest.raises(InvalidParameterError, match="mechanism"):
        tradeoff_curve({"kind": "gaussian"}, FINE)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        tradeoff_curve_from_eps_delta(-1.0, 0.0, FINE)
    with pytest.raises(InvalidParameterError, match="sigma"):
        gaussian_tradeoff_curve(1.0, 0.0, FINE)
