"""Δ_z calculators (digest §5): oracles O3 and O4, the limiting cases, and the float-quantile pitfall (G4b)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from engine.errors import InvalidParameterError
from engine.public_info.sensitivity import (
    binary_sdl_sensitivity,
    binomial_logpmf,
    correlated_counts_sensitivity,
    gaussian_beta1,
    gaussian_sensitivity,
    w_infinity,
)

Z1 = (0.5, 0.75, 0.9, 0.99, 1.0)
O3 = [  # (n, z0, values for Z1) — digest §8 O3, exact integers
    (10, 0.0, (10, 10, 10, 10, 10)),
    (10, 0.1, (6, 8, 9, 10, 10)),
    (10, 0.25, (4, 6, 8, 9, 10)),
    (10, 0.5, (1, 4, 6, 8, 10)),
    (100, 0.0, (100, 100, 100, 100, 100)),
    (100, 0.1, (49, 68, 81, 93, 100)),
    (100, 0.25, (28, 51, 68, 86, 100)),
    (100, 0.5, (1, 28, 49, 74, 100)),
    (1000, 0.1, (475, 671, 801, 925, 1000)),
    (1000, 0.25, (265, 501, 671, 855, 1000)),
    (1000, 0.5, (1, 265, 475, 732, 1000)),
]


@pytest.mark.parametrize(("n", "z0", "expected"), O3)
def test_o3_correlated_counts_table(n, z0, expected):
    assert tuple(correlated_counts_sensitivity(n, z0, z1) for z1 in Z1) == expected


@pytest.mark.parametrize(("z0", "expected"), [(0.4, 21), (0.3, 41), (0.2, 61), (0.1, 81), (0.01, 99)])
def test_o3_symmetric_pairs(z0, expected):
    assert correlated_counts_sensitivity(100, z0, 1 - z0) == expected


@pytest.mark.parametrize(("n", "z0", "z1"), [(10, 0.1, 0.75), (100, 0.25, 0.9), (100, 0.0, 0.5), (57, 0.2, 0.3)])
def test_o3_mirror_symmetry(n, z0, z1):
    assert correlated_counts_sensitivity(n, z0, z1) == correlated_counts_sensitivity(n, 1 - z1, 1 - z0)


def test_exact_w_infinity_beats_float_quantiles():
    """G4b: n = 100, z0 = 0, z1 = 0.5 is exactly n; a float-quantile implementation under-reports (88)."""
    assert correlated_counts_sensitivity(100, 0.0, 0.5) == 100
    t = np.linspace(1e-6, 1 - 1e-16, 200_001)
    naive = np.max(np.abs(1 + binom.ppf(t, 99, 0.5) - binom.ppf(t, 99, 0.0)))
    assert naive < 100  # the pitfall the exact search avoids


def test_independence_gives_one_and_perfect_dependence_gives_n():
    for n in (2, 10, 250):
        assert correlated_counts_sensitivity(n, 0.3, 0.3) == 1
        assert correlated_counts_sensitivity(n, 0.0, 0.2) == n
        assert correlated_counts_sensitivity(n, 0.7, 1.0) == n


def test_w_infinity_of_shifted_laws_is_the_shift():
    law = binomial_logpmf(30, 0.37)
    assert w_infinity(law, law, offset_a=7, offset_b=0) == 7
    assert w_infinity(law, law) == 0


@pytest.mark.parametrize(("construction", "tau2", "expected"), [
    ("independent", 1.0, 0.01),
    ("mean-plus-noise", 1.0, 0.0096191),
    ("mean-plus-noise", 0.04, 0.0050251),
    ("first-minus-rest", 1e6, 0.0100000),
    ("first-minus-rest", 1.0, 0.0484466),
    ("first-minus-rest", 0.04, 0.5074874),
    ("first-minus-rest", 1e-4, 0.9975558),
])
def test_o4_gaussian_beta1(construction, tau2, expected):
    assert gaussian_beta1(100, 4.0, construction, tau2) == pytest.approx(expected, abs=5e-8)


def test_gaussian_sensitivity_limits():
    assert gaussian_sensitivity(2.0, 50) == pytest.approx(2.0 / 50)  # Δ/n: independent Z, equal to DP
    assert gaussian_sensitivity(2.0, 50, "mean-plus-noise", tau2=0.3) == pytest.approx(2.0 / 50)  # sup at σ → 0
    assert gaussian_sensitivity(2.0, 50, "first-minus-rest", tau2=0.3) == 2.0  # unbounded σ: Δ_z → Δ
    bounded = gaussian_sensitivity(2.0, 100, "first-minus-rest", tau2=1.0, sigma_max=2.0)
    assert bounded == pytest.approx(2.0 * 0.0484466, rel=1e-6)  # sup at σ_max (σ² = 4)


def test_o4_z_minus_mu_has_no_effect():
    """G3: the shift of E[X̄ | X₁ = v, Z = z] between v = ±Δ/2 is Δ·β₁ whatever z is (Eq. 34 by hand)."""
    n, s2, tau2, delta = 100, 4.0, 1.0, 1.0
    var_x1, var_z = s2, s2 + s2 / (n - 1) + tau2  # Z = X1 − X̄₋₁ + η
    cov_x1_z = s2
    cov = np.array([[var_x1, cov_x1_z], [cov_x1_z, var_z]])
    cross = np.array([s2 / n, 0.0])  # Cov(X1, X̄) = s²/n; Cov(Z, X̄) = s²/n − s²/n = 0
    coef = np.linalg.solve(cov, cross)
    for z in (-5.0, 0.0, 3.0):
        shift = coef @ np.array([delta / 2, z]) - coef @ np.array([-delta / 2, z])
        assert shift == pytest.approx(delta * gaussian_beta1(n, s2, "first-minus-rest", tau2), rel=1e-9)


@pytest.mark.parametrize(("n", "k"), [(20, 3), (50, 5), (100, 10)])
def test_binary_sdl_sensitivity_is_one(n, k):
    grid = np.linspace(0.01, 0.99, 11)
    assert binary_sdl_sensitivity(n, grid, k=k) == 1
    assert binary_sdl_sensitivity(n, grid, t_star=0.4, t=0.2) == 1
    assert binary_sdl_sensitivity(n, grid, k=k, t_star=0.5, t=0.3) == 1


@pytest.mark.parametrize(("call", "word"), [
    (lambda: correlated_counts_sensitivity(10, 0.6, 0.2), "z0"),
    (lambda: correlated_counts_sensitivity(0, 0.1, 0.2), "n"),
    (lambda: gaussian_beta1(10, 1.0, "bogus"), "construction"),
    (lambda: gaussian_sensitivity(1.0, 10, sigma_min=2.0, sigma_max=1.0), "sigma_max"),
    (lambda: binary_sdl_sensitivity(10, k=3, t_star=0.5), "t_star"),
])
def test_bad_input_names_the_parameter(call, word):
    with pytest.raises(InvalidParameterError, match=word):
        call()


def test_figure4_grid_matches_pointwise_values():
    from engine.public_info.sensitivity import correlated_counts_grid

    grid = correlated_counts_grid(100, [0.0, 0.1, 0.25, 0.5], list(Z1))
    expected = np.array([row for n, _, row in O3 if n == 100], dtype=float)
    assert np.array_equal(grid, expected)
    assert np.isnan(correlated_counts_grid(10, [0.6], [0.2])[0, 0])


@pytest.mark.parametrize("construction", ["independent", "mean-plus-noise", "first-minus-rest"])
def test_beta_z_solves_eq34(construction):
    """β_Z (the coefficient Eq. 16 multiplies by z − μ_Z) equals the regression of X̄ on (X₁, Z) solved by hand."""
    from engine.public_info.sensitivity import gaussian_z_coefficient

    n, s2, tau2 = 100, 4.0, 0.04
    cov_x1_z, var_z, cross_z = {
        "independent": (0.0, tau2, 0.0),
        "mean-plus-noise": (s2 / n, s2 / n + tau2, s2 / n),
        "first-minus-rest": (s2, s2 + s2 / (n - 1) + tau2, 0.0),
    }[construction]
    coef = np.linalg.solve(np.array([[s2, cov_x1_z], [cov_x1_z, var_z]]), np.array([s2 / n, cross_z]))
    assert coef[0] == pytest.approx(gaussian_beta1(n, s2, construction, tau2), rel=1e-9)
    assert gaussian_z_coefficient(n, s2, construction, tau2) == pytest.approx(coef[1], rel=1e-9, abs=1e-15)


def test_paper_eq16_differs_from_the_corrected_value_only_through_z_minus_mu():
    """G3: Eq. 16 adds β_Z·(z − μ_Z); the corrected Δ_z = Δ·sup|β₁| (O4 at σ = 2, τ² = 0.04: β₁ = 0.5074874)."""
    from engine.public_info.sensitivity import gaussian_sensitivity_report

    r = gaussian_sensitivity_report(1.0, 100, "first-minus-rest", 0.04, sigma_max=2.0, z_offset=1.0)
    assert r.delta_z == pytest.approx(0.5074874, abs=1e-7) and r.sigma_at == 2.0
    assert r.paper_eq16 == pytest.approx(abs(0.5074874 - 0.99 * (4 / 99) / (4 / 99 + 0.04)), abs=1e-7)
    assert r.paper_differs
    same = gaussian_sensitivity_report(1.0, 100, "first-minus-rest", 0.04, sigma_max=2.0, z_offset=0.0)
    assert same.paper_eq16 == pytest.approx(same.delta_z) and not same.paper_differs
    independent = gaussian_sensitivity_report(2.0, 50, z_offset=3.0)
    assert independent.delta_z == pytest.approx(0.04) and not independent.paper_differs
