"""Semantics, audit, Lemma 8, Corollary 13 and inference: oracles O5–O10 and O13."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import InvalidParameterError
from engine.public_info.conditioning import conditioned_discrete_laplace, conditioning_privacy_loss
from engine.public_info.inference import KAnonymityDemo, power_comparison, two_cell_bayes_risk
from engine.public_info.knorm import sample_l2_knorm
from engine.public_info.semantics import (
    exponential_mechanism_audit,
    manifold_errors,
    odds_band,
    posterior_band,
)


@pytest.mark.parametrize(("epsilon", "p", "lo", "hi"), [
    (1, 0.5, 0.26894, 0.73106), (1, 0.1, 0.03927, 0.23197), (1, 0.01, 0.00370, 0.02672),
    (0.1, 0.5, 0.47502, 0.52498), (2, 0.01, 0.00137, 0.06945),
])
def test_o5_posterior_band(epsilon, p, lo, hi):
    got = posterior_band(epsilon, p)
    assert got == pytest.approx((lo, hi), abs=6e-6)


def test_posterior_band_vectorised_and_odds():
    lo, hi = posterior_band(np.array([0.0, 1.0]), 0.3)
    assert lo[0] == pytest.approx(0.3) and hi[0] == pytest.approx(0.3) and lo[1] < 0.3 < hi[1]
    assert odds_band(1.0, 2.0) == pytest.approx((2 * math.exp(-1), 2 * math.e))
    with pytest.raises(InvalidParameterError, match="prior"):
        posterior_band(1.0, 1.5)


@pytest.mark.parametrize(("z0", "z1", "dz", "with_dz", "with_dp"), [
    (0.5, 0.5, 1, 0.5067, 0.5067), (0.3, 0.7, 9, 0.4854, 4.3046), (0.1, 0.9, 17, 0.4785, 8.1972),
])
def test_o6_audit(z0, z1, dz, with_dz, with_dp):
    from engine.public_info.sensitivity import correlated_counts_sensitivity

    assert correlated_counts_sensitivity(20, z0, z1) == dz
    good = exponential_mechanism_audit(20, z0, z1, 1.0, dz)
    bad = exponential_mechanism_audit(20, z0, z1, 1.0, 1.0)
    assert good.realised_epsilon == pytest.approx(with_dz, abs=6e-5) and not good.violated
    assert bad.realised_epsilon == pytest.approx(with_dp, abs=6e-5)
    assert bad.violated == (dz > 1)


@pytest.mark.parametrize(("z0", "z1", "dz", "expected"), [(0.3, 0.7, 9, 0.9548), (0.1, 0.9, 17, 0.9528)])
def test_o6_naive_base_without_factor_two(z0, z1, dz, expected):
    r = exponential_mechanism_audit(20, z0, z1, 1.0, dz, base="naive", factor_two=False)
    assert r.realised_epsilon == pytest.approx(expected, abs=6e-5) and not r.violated


@pytest.mark.parametrize(("epsilon", "interval", "two_atoms"), [(0.1, 0.1801, 0.1896), (0.5, 0.7140, 1.0),
                                                                 (1.0, 1.2091, 2.0)])
def test_o7_lemma8(epsilon, interval, two_atoms):
    assert conditioning_privacy_loss(epsilon, 30, (5, 25)) == pytest.approx(interval, abs=6e-5)
    got = conditioning_privacy_loss(epsilon, 30, {0, 30})
    assert got == pytest.approx(two_atoms, abs=6e-5)
    assert got <= 2 * epsilon + 1e-12  # never above the lemma's 2ε


def test_lemma8_sampler_respects_the_constraint_and_doubles_epsilon():
    x = np.array([0, 3, 12, 30, 18])
    y, g = conditioned_discrete_laplace(x, 0.5, (5, 25), rng=np.random.default_rng(0))
    assert np.all((y >= 5) & (y <= 25)) and g.epsilon == 1.0 and g.composition == "conditioned"


@pytest.mark.parametrize(("d1", "d2", "raw", "proj", "on"), [(10, 3, 110, 33, 12), (50, 5, 2550, 255, 30),
                                                             (67, 66, 4556, 4488, 4422)])
def test_o13_exact_constants(d1, d2, raw, proj, on):
    r = manifold_errors(d1, d2)
    assert (r["raw"], r["projected"], r["on_manifold"]) == (raw, proj, on)
    assert r["ratio"] == pytest.approx((d1 + 1) / (d2 + 1))


def test_o13_monte_carlo():
    d1, d2, m = 10, 3, 40_000
    rng = np.random.default_rng(13)
    y1 = sample_l2_knorm(d1, 1.0, m, rng=rng)  # b = 1/a = 1
    q, _ = np.linalg.qr(rng.standard_normal((d1, d2)))  # an orthonormal basis of Span(A)
    proj = y1 @ q
    y2 = sample_l2_knorm(d2, 1.0, m, rng=rng)
    for sample, exact in ((np.sum(y1**2, 1), 110), (np.sum(proj**2, 1), 33), (np.sum(y2**2, 1), 12)):
        assert abs(sample.mean() - exact) < 5 * sample.std() / math.sqrt(m)


@pytest.mark.parametrize(("epsilon", "full", "proj", "rounded"), [
    (0.5, 3.0573, 3.2562, 3.2602), (1, 1.8030, 1.9869, 2.0048), (2, 0.6860, 0.7491, 0.7905), (5, 0.0896, 0.0929, 0.1378),
])
def test_o8_bayes_risk(epsilon, full, proj, rounded):
    r = two_cell_bayes_risk(20, 0.3, epsilon)
    assert (r["y_and_z"], r["projected"], r["rounded"]) == pytest.approx((full, proj, rounded), abs=6e-5)
    assert r["y_and_z"] <= r["projected"] <= r["rounded"] <= r["prior"]


def test_o8_small_case():
    r = two_cell_bayes_risk(5, 0.2, 1.0)
    assert (r["y_and_z"], r["projected"], r["rounded"]) == pytest.approx((0.6062, 0.6494, 0.6548), abs=6e-5)


def test_o9_power():
    lap = power_comparison(10, 0.3, 0.7, epsilon=0.5)
    assert lap["raw"] == pytest.approx(0.3337, abs=6e-5) and lap["clipped"] == pytest.approx(lap["raw"], abs=1e-12)
    for sd, raw, clipped in ((10, 0.1058, 0.0785), (30, 0.0653, 0.0564), (2, 0.4871, 0.4871)):
        g = power_comparison(10, 0.3, 0.7, noise="gaussian", sd=sd)
        assert (g["raw"], g["clipped"]) == pytest.approx((raw, clipped), abs=6e-5)
    assert power_comparison(10, 0.3, 0.3, epsilon=0.5)["raw"] == pytest.approx(0.05, abs=1e-12)  # size α at θ0


@pytest.mark.parametrize(("y", "exact", "literal", "acceptance"), [
    (5, 0.27848, 0.29406, 0.16730), (10, 0.37050, 0.37966, 0.22437), (15, 0.50000, 0.50000, 0.22840),
])
def test_o10_exact_posterior_and_acceptance(y, exact, literal, acceptance):
    demo = KAnonymityDemo()
    assert demo.exact_posterior_mean(y) == pytest.approx(exact, abs=6e-6)
    assert demo.exact_posterior_mean(y, "per-draw-bound") == pytest.approx(literal, abs=6e-6)
    assert demo.global_bound == pytest.approx(0.22237, abs=6e-6)
    assert demo.normaliser(np.array([5, 15, 25])) == pytest.approx([4.49709, 7.46361, 4.49709], abs=6e-6)
    s = demo.support
    marginal = np.mean(demo.likelihood(y, s))  # π(y | z) with S | Z uniform on {5..25}
    assert marginal / demo.global_bound == pytest.approx(acceptance, abs=6e-5)


def test_o10_algorithms_1_and_2_monte_carlo():
    demo = KAnonymityDemo()
    rng = np.random.default_rng(10)
    y = 5
    exact = demo.exact_posterior_mean(y)
    a1 = demo.algorithm1(y, 5_000, rng=rng)
    assert abs(a1.draws.mean() - exact) < 5 * a1.draws.std() / math.sqrt(a1.draws.size)
    assert a1.acceptance == pytest.approx(0.16730, abs=5 * math.sqrt(0.1673 * 0.8327 / a1.proposals))
    a2 = demo.algorithm2(y, 20_000, rng=rng)
    assert abs(a2.estimate - exact) < 5 * 0.25 / math.sqrt(a2.ess)
    assert 0 < a2.ess <= a2.m
    biased = demo.algorithm1(y, 5_000, rng=rng, bound="per-draw")  # the seed's literal per-X* bound (G10)
    limit = demo.exact_posterior_mean(y, "per-draw-bound")
    assert abs(biased.draws.mean() - limit) < 5 * biased.draws.std() / math.sqrt(biased.draws.size)
