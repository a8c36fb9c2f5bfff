"""ε ↔ ρ (Lemma 5.2) and ρ-zCDP → (ε, δ)-DP conversions; unit-labelled loss values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InvalidParameterError
from engine.per_record.units import (
    CONVERSION_TEXT,
    UNIT_LABELS,
    LossValues,
    dp_epsilon,
    epsilon_to_rho,
    rho_to_epsilon,
    zcdp_to_dp,
)


@pytest.mark.parametrize(
    ("eps", "rho"),
    [(0.5, 0.122459), (1, 0.462117), (2, 1.523188), (3, 2.715445), (5, 4.933071), (10, 9.999092)],
)
def test_epsilon_to_rho_table(eps, rho):
    assert epsilon_to_rho(eps) == pytest.approx(rho, abs=5e-7)


@pytest.mark.parametrize(
    ("rho", "eps"), [(0.01, 0.141539), (0.1, 0.450975), (0.5, 1.043627), (1, 1.543405), (5, 5.063628)]
)
def test_rho_to_epsilon_table(rho, eps):
    assert rho_to_epsilon(rho) == pytest.approx(eps, abs=5e-7)


def test_limits_and_bounds():
    e = np.logspace(-8, 3, 500)
    r = epsilon_to_rho(e)
    assert np.all(r <= np.minimum(e, e * e / 2) * (1 + 1e-15))
    np.testing.assert_allclose(epsilon_to_rho(1e-6), 0.5e-12, rtol=1e-9)  # → ε²/2 as ε → 0
    assert epsilon_to_rho(100.0) == pytest.approx(100.0, rel=1e-15)  # → ε as ε → ∞
    assert epsilon_to_rho(0.0) == 0.0 and rho_to_epsilon(0.0) == 0.0
    assert epsilon_to_rho(math.inf) == math.inf and rho_to_epsilon(math.inf) == math.inf


def test_round_trip_from_tiny_to_huge():
    e = np.logspace(-150, 300, 3000)
    np.testing.assert_allclose(rho_to_epsilon(epsilon_to_rho(e)), e, rtol=1e-13)
    r = np.logspace(-300, 300, 3000)
    np.testing.assert_allclose(epsilon_to_rho(rho_to_epsilon(r)), r, rtol=1e-13)
    assert np.all(np.diff(rho_to_epsilon(r)) > 0)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-12, max_value=1e6))
def test_inverse_property(rho):
    assert epsilon_to_rho(rho_to_epsilon(rho)) == pytest.approx(rho, rel=1e-12)


def test_lemma_5_2_bound_dominates_laplace_renyi_divergence():
    """Spec §5.2: max over α of d_α/α for the Laplace mechanism stays below ε·tanh(ε/2)."""

    def laplace_renyi(alpha, eps):  # Mironov 2017, Prop. 6 (sensitivity 1, scale 1/ε), in log space
        return np.logaddexp(np.log(alpha / (2 * alpha - 1)) + (alpha - 1) * eps,
                            np.log((alpha - 1) / (2 * alpha - 1)) - alpha * eps) / (alpha - 1)

    for eps, expected in [(0.1, 0.004837), (1, 0.367876), (3, 2.049697), (10, 8.999295)]:
        alphas = np.linspace(1.0001, 100, 200_000)
        worst = float(np.max(laplace_renyi(alphas, eps) / alphas))
        assert worst == pytest.approx(expected, abs=2e-6)
        assert worst <= epsilon_to_rho(eps)


def test_standard_conversion_formula():
    rho, delta = 0.5, 1e-6
    assert zcdp_to_dp(rho, delta, method="standard") == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))


def test_tight_conversion_below_standard_and_matches_rdp_accountant():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = np.concatenate([np.linspace(1.01, 10, 2000), np.linspace(10, 2000, 4000)])
    for rho in (0.001, 0.05, 0.5, 2.0, 10.0):
        for delta in (1e-9, 1e-5, 1e-2):
            ours = zcdp_to_dp(rho, delta)
            assert ours <= zcdp_to_dp(rho, delta, method="standard")
            eps_google, _ = rdp.compute_epsilon(orders, orders * rho, delta)
            # Google's accountant uses the same conversion on a grid of orders: ours (continuous α) is ≤ it, close
            assert ours <= eps_google + 1e-9
            assert ours == pytest.approx(eps_google, rel=2e-3)
    assert dp_accounting is not None


def test_zcdp_to_dp_vectorised_and_validated():
    out = zcdp_to_dp([0.0, 0.1, 1.0], 1e-6)
    assert out.shape == (3,) and out[0] == 0.0 and np.all(np.diff(out) > 0)
    with pytest.raises(InvalidParameterError, match=r"^delta must be in \(0, 1\)"):
        zcdp_to_dp(0.1, 0.0)
    with pytest.raises(InvalidParameterError, match=r"^method must be one of"):
        zcdp_to_dp(0.1, 1e-6, method="magic")
    with pytest.raises(InvalidParameterError, match=r"^rho must be in \[0, inf\)"):
        rho_to_epsilon(-1.0)
    with pytest.raises(InvalidParameterError, match=r"^epsilon must be"):
        epsilon_to_rho(float("nan"))


def test_loss_values_carry_units():
    eps = LossValues(np.array([1.0, 2.0]), "epsilon")
    assert eps.label == UNIT_LABELS["epsilon"] and "ε" in eps.label
    rho = eps.to_rho()
    assert rho.unit == "rho" and "ρ" in rho.label
    np.testing.assert_allclose(rho.values, [0.462117, 1.523188], atol=1e-6)
    assert rho.to_rho() is rho
    dp = rho.to_dp(1e-6)
    assert dp.unit == "dp_epsilon" and dp.delta == 1e-6 and "1e-06" in dp.label
    with pytest.raises(InvalidParameterError, match="cannot be converted back"):
        dp.to_rho()
    with pytest.raises(InvalidParameterError, match="delta must be given exactly"):
        LossValues(np.ones(2), "dp_epsilon")
    with pytest.raises(InvalidParameterError, match=r"^unit must be one of"):
        LossValues(np.ones(2), "nats")
    with pytest.raises(ValueError):
        eps.values[0] = 5.0  # read-only


# ----- review findings: pure ε through ρ ended above ε; "tight" wording; CKS never below the exact Gaussian ε ----
def test_pure_epsilon_to_dp_never_exceeds_epsilon():
    eps = np.array([0.0, 0.01, 0.5, 2.0, 10.0, 50.0])
    for delta in (1e-12, 1e-6, 0.1):
        out = np.asarray(dp_epsilon(eps, "epsilon", delta))
        assert np.all(out <= eps)
        np.testing.assert_allclose(out, np.minimum(eps, zcdp_to_dp(epsilon_to_rho(eps), delta)))
    # before: ε → ρ → CKS gave 2.39, 9.94, 32.2 for ε = 0.5, 2, 10 at δ = 1e-6
    assert zcdp_to_dp(epsilon_to_rho([0.5, 2.0, 10.0]), 1e-6) == pytest.approx([2.39, 9.94, 32.2], rel=1e-2)
    dp = LossValues(np.array([0.5, 2.0, 10.0]), "epsilon").to_dp(1e-6)
    np.testing.assert_array_equal(dp.values, [0.5, 2.0, 10.0])
    # ρ losses keep the zCDP conversion
    np.testing.assert_allclose(LossValues(np.array([1.0]), "rho").to_dp(1e-6).values, zcdp_to_dp(1.0, 1e-6))
    with pytest.raises(InvalidParameterError, match="already"):
        dp.to_dp(1e-6)


def _exact_gaussian_epsilon(rho, delta):
    """Exact (ε, δ) of the Gaussian mechanism with μ = Δ/σ = √(2ρ) (Balle & Wang 2018, Thm 8), by brentq."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    mu = math.sqrt(2 * rho)

    def gap(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta

    return brentq(gap, 0.0, 200.0, xtol=1e-14)


@pytest.mark.parametrize("rho", [0.001, 0.05, 0.5, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
def test_cks_conversion_is_an_upper_bound_never_below_the_exact_gaussian_epsilon(rho, delta):
    # ρ-zCDP holds for the Gaussian mechanism at ρ = μ²/2; no valid conversion can beat its exact ε
    exact = _exact_gaussian_epsilon(rho, delta)
    assert zcdp_to_dp(rho, delta) >= exact - 1e-9
    assert zcdp_to_dp(rho, delta) <= zcdp_to_dp(rho, delta, method="standard")


def test_cks_is_not_called_tight_and_the_gap_is_real():
    assert _exact_gaussian_epsilon(1.0, 1e-6) == pytest.approx(7.286, abs=1e-3)
    assert zcdp_to_dp(1.0, 1e-6) == pytest.approx(7.766, abs=1e-3)
    assert "tight conversion" not in CONVERSION_TEXT["cks"] and "improved conversion" in CONVERSION_TEXT["cks"]
