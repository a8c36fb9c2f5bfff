"""Mechanisms of the public-information engine: oracles O1, O2, O11, O12, the ε limits and the privacy test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from engine.errors import InvalidParameterError
from engine.public_info.discrete_laplace import (
    discrete_laplace_mechanism,
    dl_mean_abs,
    dl_p0,
    dl_variance,
    sample_discrete_laplace,
    sample_truncated_discrete_laplace,
)
from engine.public_info.knorm import knorm_sd_per_coordinate, sample_l2_knorm
from engine.public_info.projection import project_stage1, round_stage2, two_stage_projection
from engine.public_info.semantics import realised_epsilon
from engine.public_info.wasserstein import (
    congenial_count_marginals,
    congenial_log_pmf,
    sample_congenial,
    wasserstein_count_mechanism,
)


@pytest.mark.parametrize(("epsilon", "var", "sd", "p0"), [
    (1.0, 7.8354, 2.799, 0.24492), (0.1, 799.83, 28.281, 0.02499), (0.01, 79999.83, 282.842, 0.00250),
])
def test_o1_discrete_laplace_closed_forms(epsilon, var, sd, p0):
    a = epsilon / 2
    assert dl_variance(a) == pytest.approx(var, rel=1e-5)
    assert math.sqrt(dl_variance(a)) == pytest.approx(sd, rel=2e-4)
    assert dl_p0(a) == pytest.approx(p0, abs=6e-6)


@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_o1_discrete_laplace_monte_carlo(epsilon):
    a = epsilon / 2
    x = sample_discrete_laplace(a, 200_000, rng=np.random.default_rng(11)).astype(float)
    var = dl_variance(a)
    # standard errors: mean sd/√m; variance √((m4 − σ⁴)/m) with m4 ≤ 6σ⁴ for DL (Laplace kurtosis 6)
    assert abs(x.mean()) < 5 * math.sqrt(var / x.size)
    assert abs(x.var() - var) < 5 * math.sqrt(5 * var**2 / x.size)
    assert abs(np.abs(x).mean() - dl_mean_abs(a)) < 5 * math.sqrt(var / x.size)
    p0 = dl_p0(a)
    assert abs((x == 0).mean() - p0) < 5 * math.sqrt(p0 * (1 - p0) / x.size)


@pytest.mark.parametrize(("d", "epsilon", "expected"), [(2, 1.0, 6.93), (2, 0.01, 692.8), (134, 1.0, 46.48),
                                                        (134, 0.01, 4647.6)])
def test_o2_knorm_sd(d, epsilon, expected):
    assert knorm_sd_per_coordinate(d, epsilon, 2.0) == pytest.approx(expected, rel=1e-3)


def test_o2_knorm_monte_carlo_within_one_percent():
    a = 0.25  # ε = 1, σ = 2
    v = sample_l2_knorm(2, a, 200_000, rng=np.random.default_rng(2))
    assert v.std(axis=0) == pytest.approx([6.928, 6.928], rel=0.01)
    assert math.sqrt(dl_variance(1.0 / 4)) == pytest.approx(5.64, abs=0.01)  # DL(ε/4) for comparison


def test_truncated_discrete_laplace_matches_its_pmf():
    rng = np.random.default_rng(5)
    centers, uppers, a, m = np.array([3, 0, 10, 5, 2]), np.array([5, 4, 2, 5, 0]), 0.5, 100_000
    d = sample_truncated_discrete_laplace(np.tile(centers, (m, 1)), np.tile(uppers, (m, 1)), a, rng=rng)
    for j in range(centers.size):
        support = np.arange(uppers[j] + 1)
        p = np.exp(-a * np.abs(support - centers[j]))
        p /= p.sum()
        freq = np.bincount(d[:, j], minlength=support.size) / m
        assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / m) + 1e-12)


def test_o12_two_stage_projection():
    yc, yd = np.array([[-3, 2, 10, 41.3]]), np.array([[1, 5, -2, 3.0]])
    one = project_stage1(yc, yd, 50)
    assert float(one.mu[0]) == pytest.approx(1.92, abs=1e-12)
    assert one.c[0] == pytest.approx([0, 2.54, 8.08, 39.38], abs=1e-12)
    assert one.d[0] == pytest.approx([0, 2.54, 0, 3], abs=1e-12)
    assert one.region[0].tolist() == [1, 2, 3, 0]  # polar, diagonal, axis, interior
    c, d = round_stage2(one.c, one.d, 50)
    assert c[0].tolist() == [0, 3, 8, 39] and d[0].tolist() == [0, 3, 0, 3]


def test_stage1_is_the_exact_constrained_minimiser():
    """KKT check on random instances: Σc = s, c ≥ d ≥ 0 and no feasible direction improves the objective."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    yc, yd = rng.normal(5, 6, (5, 6)), rng.normal(1, 3, (5, 6))
    one = project_stage1(yc, yd, 30)
    assert np.allclose(one.c.sum(axis=1), 30, atol=1e-9)
    assert np.all(one.c >= one.d - 1e-12) and np.all(one.d >= -1e-12)
    for r in range(2):
        obj = lambda v, r=r: np.sum((v[:6] - yc[r]) ** 2 + (v[6:] - yd[r]) ** 2)  # noqa: E731
        cons = [{"type": "eq", "fun": lambda v: v[:6].sum() - 30},
                {"type": "ineq", "fun": lambda v: v[:6] - v[6:]}, {"type": "ineq", "fun": lambda v: v[6:]}]
        ref = minimize(obj, np.concatenate([np.full(6, 5.0), np.zeros(6)]), constraints=cons, method="SLSQP",
                       options={"ftol": 1e-12, "maxiter": 500})
        assert obj(np.concatenate([one.c[r], one.d[r]])) <= ref.fun + 1e-6


def test_stage2_greedy_equals_brute_force():
    rng = np.random.default_rng(8)
    for _ in range(40):
        j = 4
        yc, yd = rng.normal(4, 3, (1, j)), rng.normal(1, 2, (1, j))
        one = project_stage1(yc, yd, 12)
        c, d = round_stage2(one.c, one.d, 12)
        fc, fd = np.floor(one.c[0] + 1e-12), np.floor(one.d[0] + 1e-12)
        best = math.inf
        for rc in itertools.product((0, 1), repeat=j):
            for rd in itertools.product((0, 1), repeat=j):
                cc, dd = fc + rc, fd + rd
                if cc.sum() != 12 or np.any(cc < dd) or np.any(dd < 0):
                    continue
                best = min(best, np.abs(np.array(rc) - (one.c[0] - fc)).sum() + np.abs(np.array(rd) - (one.d[0] - fd)).sum())
        got = np.abs(c[0] - one.c[0]).sum() + np.abs(d[0] - one.d[0]).sum()
        assert got == pytest.approx(best, abs=1e-9)
        assert c[0].sum() == 12 and np.all(c[0] >= d[0]) and np.all(d[0] >= 0)


def test_stage1_without_noise_returns_the_data():
    x = np.array([[12, 0, 7, 30]])
    xd = np.array([[3, 0, 7, 1]])
    c, d, region = two_stage_projection(x.astype(float), xd.astype(float), int(x.sum()))
    assert c.tolist() == x.tolist() and d.tolist() == xd.tolist() and np.all(region == 0)


def test_o11_exact_marginals():
    p = congenial_count_marginals([6, 3, 1], [1, 2, 0], 10, 0.25)
    assert p @ np.arange(11) == pytest.approx([4.6314, 3.2790, 2.0896], abs=6e-5)
    p = congenial_count_marginals([6, 3, 1], [1, 2, 0], 10, 0.25, concentration=np.array([2.0, 1.5, 0.7]))
    assert p @ np.arange(11) == pytest.approx([5.2105, 3.3853, 1.4042], abs=6e-5)


def _brute_force_law(xc, xd, s, a, conc=None):
    """Every (c, d) of the congenial lattice with its exact probability (tiny instances)."""
    j = len(xc)
    outs, logw = [], []
    for c in itertools.product(range(s + 1), repeat=j):
        if sum(c) != s:
            continue
        for d in itertools.product(*[range(ci + 1) for ci in c]):
            lw = -a * (np.abs(np.subtract(c, xc)).sum() + np.abs(np.subtract(d, xd)).sum())
            if conc is not None:
                lw += float(np.sum(gammaln(np.add(c, conc)) - gammaln(np.add(c, 1))))
            outs.append(c + d)
            logw.append(lw)
    logw = np.array(logw)
    return outs, np.exp(logw - np.logaddexp.reduce(logw))


@pytest.mark.parametrize("conc", [None, (2.0, 1.5, 0.7)])
@pytest.mark.parametrize("tail", [None, 40.0])
def test_o11_sampler_matches_the_exact_law(conc, tail):
    xc, xd, s, a = [3, 1, 0], [1, 0, 0], 4, 0.4
    conc_arr = None if conc is None else np.array(conc)
    outs, p = _brute_force_law(xc, xd, s, a, conc_arr)
    m = 60_000
    c, d = sample_congenial(xc, xd, s, a, m, rng=np.random.default_rng(21), concentration=conc_arr, tail=tail)
    index = {o: i for i, o in enumerate(outs)}
    counts = np.bincount([index[tuple(r)] for r in np.hstack([c, d]).tolist()], minlength=len(outs))
    se = np.sqrt(p * (1 - p) / m)
    assert np.all(np.abs(counts / m - p) <= 5 * se + 1e-4)
    # the exact log pmf (with the normaliser K(x), G10) agrees with brute force
    arr = np.array(outs)
    lp = congenial_log_pmf(arr[:, :3], arr[:, 3:], xc, xd, s, a, concentration=conc_arr)
    assert np.exp(lp) == pytest.approx(p, rel=1e-9)


def test_privacy_exact_congenial_law_never_exceeds_epsilon():
    """Enumerate the output law under every neighbouring pair consistent with Z (same total, d ≤ c, L1 ≤ Δ_z = 2)."""
    epsilon, sigma, s = 1.0, 2.0, 4
    a = epsilon / (2 * sigma)
    datasets = [(c, d) for c in itertools.product(range(s + 1), repeat=2) if sum(c) == s
                for d in itertools.product(*[range(ci + 1) for ci in c])]
    outs, _ = _brute_force_law([s, 0], [0, 0], s, a)
    arr = np.array(outs)
    worst = 0.0
    for (c1, d1), (c2, d2) in itertools.combinations(datasets, 2):
        dist = np.abs(np.subtract(c1, c2)).sum() + np.abs(np.subtract(d1, d2)).sum()
        if dist > sigma:
            continue
        for conc in (None, np.array([1.5, 2.5])):
            l1 = congenial_log_pmf(arr[:, :2], arr[:, 2:], c1, d1, s, a, concentration=conc)
            l2 = congenial_log_pmf(arr[:, :2], arr[:, 2:], c2, d2, s, a, concentration=conc)
            worst = max(worst, realised_epsilon(l1, l2))
    assert 0.3 < worst <= epsilon + 1e-12


def test_privacy_naive_base_and_discrete_laplace():
    """Naive lattice base: the per-coordinate DL(ε/(2Δ)) ratio over L1 distance Δ is at most e^{ε/2} ≤ e^ε."""
    a, k = 1.0 / 4, np.arange(-60, 61)
    law = -a * np.abs(k)
    for shift in (1, 2):
        assert realised_epsilon(law[shift:], law[:-shift]) == pytest.approx(a * shift)


def test_limit_epsilon_large_returns_the_truth():
    rng = np.random.default_rng(1)
    xc, xd = np.array([50, 7, 0, 13]), np.array([2, 7, 0, 1])
    c, d, g = wasserstein_count_mechanism(xc, xd, 400.0, base="congenial", total=70, replicates=5, rng=rng)
    assert np.all(c == xc) and np.all(d == xd)
    c, d, _ = wasserstein_count_mechanism(xc, xd, 400.0, base="prior", total=70, replicates=5, rng=rng,
                                          concentration=np.array([3.0, 1.0, 1.0, 2.0]))
    assert np.all(c == xc) and np.all(d == xd)
    y, _ = discrete_laplace_mechanism(xc, math.inf, rng=rng)
    assert np.all(y == xc)


def test_limit_epsilon_small_congenial_tends_to_uniform_lattice():
    s = 6
    p = congenial_count_marginals([6, 0, 0], [6, 0, 0], s, 1e-9)
    # uniform on {(c, d): Σc = s, 0 ≤ d ≤ c}: weight of c is Π(c_j + 1)
    weights = np.zeros(s + 1)
    for c in itertools.product(range(s + 1), repeat=3):
        if sum(c) == s:
            weights[c[0]] += np.prod(np.add(c, 1))
    assert p[0] == pytest.approx(weights / weights.sum(), abs=1e-7)


def test_limit_epsilon_small_prior_tends_to_dirichlet_multinomial():
    from scipy.stats import betabinom

    s, conc = 9, np.array([2.0, 0.5, 3.5])
    p = congenial_count_marginals([9, 0, 0], None, s, 1e-9, concentration=conc)
    for j in range(3):
        expected = betabinom.pmf(np.arange(s + 1), s, conc[j], conc.sum() - conc[j])
        assert p[j] == pytest.approx(expected, abs=1e-7)


def test_sampler_on_a_large_total_keeps_the_invariants():
    rng = np.random.default_rng(4)
    xc = rng.poisson(2000, 30)
    xd = rng.binomial(xc, 0.02)
    s = int(xc.sum())
    for a in (0.25, 0.0025):
        c, d = sample_congenial(xc, xd, s, a, 20, rng=rng)
        assert np.all(c.sum(axis=1) == s) and np.all((d >= 0) & (d <= c))
        # per-region error at the noise scale (loose sanity bound: 12 unconstrained noise sds)
        assert np.abs(c - xc).max() < 12 * math.sqrt(dl_variance(a)) + 12 / a


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"base": "congenial"}, "total"),
    ({"base": "prior", "total": 10}, "concentration"),
    ({"base": "congenial", "total": 10, "factor_two": False}, "factor_two"),
    ({"base": "bogus", "total": 10}, "base"),
])
def test_wasserstein_bad_input(kwargs, word):
    with pytest.raises(InvalidParameterError, match=word):
        wasserstein_count_mechanism(np.array([5, 5]), None, 1.0, rng=np.random.default_rng(0), **kwargs)
