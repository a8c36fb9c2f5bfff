"""Theorem 1 (engine.theory.feasibility): spec oracles, closed forms, consistency between the inverse questions and
the predicate, and property tests (monotonicity, agreement with the classic-DP condition)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.errors import InvalidParameterError
from engine.theory.feasibility import (
    FeasibilityReport,
    b_supremum,
    dp_feasible,
    feasibility_grid,
    feasibility_report,
    gamma_max,
    is_feasible,
    max_feasible_b_integer,
    min_epsilon,
    min_steps,
    q_value,
)

# Strategies kept inside the ranges a designer uses; the boundary cases are tested by hand below.
gammas = st.floats(0.5, 0.9999)
epsilons = st.floats(1e-3, 20.0)
deltas = st.one_of(st.just(0.0), st.floats(1e-12, 0.5))
bs = st.floats(1e-3, 2.0)
PROPERTY = settings(max_examples=300, deadline=None)


def _derivation_slack(b, gamma, epsilon, delta):
    """Independent form of Theorem 1 (the paper's derivation step): e^{sε}(1−γ) + (e^{sε}−1)/(e^ε−1)·δ − γ ≥ 0.

    Written with plain math (no expm1/log1p) so it does not share code paths with the module under test.
    Returns the slack relative to γ.
    """
    s = math.ceil(2.0 / b - 1e-12)
    k = math.exp(s * epsilon)
    growth = sum(math.exp(i * epsilon) for i in range(s))  # (e^{sε} − 1)/(e^ε − 1) as a geometric sum
    return (k * (1.0 - gamma) + growth * delta - gamma) / gamma


# ------------------------------------------------------------------------------------------------ oracles


@pytest.mark.parametrize(
    ("epsilon", "q", "m", "b_int", "b_sup", "dp"),
    [
        (1.0, 98.43, 5, 0.4, 0.5, False),  # Example 1
        (4.0, 98.98, 2, 1.0, 2.0, False),  # Example 1: supremum 2 but B = 2 itself infeasible
    ],
)
def test_example_1_oracles(epsilon, q, m, b_int, b_sup, dp):
    gamma, delta = 0.99, 1e-4
    assert q_value(gamma, epsilon, delta) == pytest.approx(q, abs=0.005)
    assert min_steps(gamma, epsilon, delta) == m
    assert max_feasible_b_integer(gamma, epsilon, delta) == pytest.approx(b_int, rel=1e-15)
    assert b_supremum(gamma, epsilon, delta) == pytest.approx(b_sup, rel=1e-15)
    assert dp_feasible(gamma, epsilon, delta) is dp
    assert is_feasible(b_int, gamma, epsilon, delta) is True
    assert is_feasible(b_sup, gamma, epsilon, delta) is False  # supremum not attained (m ≥ 2 here)
    assert is_feasible(b_sup * (1 - 1e-6), gamma, epsilon, delta) is True
    assert is_feasible(2.0, gamma, epsilon, delta) is False


def test_example_1_log_q_and_gamma_max_at_b2():
    assert math.log(q_value(0.99, 1.0, 1e-4)) == pytest.approx(4.589, abs=5e-4)
    assert math.log(q_value(0.99, 4.0, 1e-4)) / 4 == pytest.approx(1.149, abs=5e-4)
    # Issue oracle: (e^ε + δ)/(e^ε + 1) = 0.73108... at ε = 1, δ = 1e-4
    assert gamma_max(2.0, 1.0, 1e-4) == pytest.approx((math.e + 1e-4) / (math.e + 1), rel=1e-14)
    assert gamma_max(2.0, 1.0, 1e-4) == pytest.approx(0.73108, abs=1e-5)


def test_q_closed_forms_and_stability():
    assert q_value(0.9, 2.0, 0.0) == pytest.approx(9.0, rel=1e-14)  # δ = 0: γ/(1−γ)
    assert q_value(0.5, 3.0, 0.2) == 1.0
    c = math.e**0.7 - 1
    assert q_value(0.8, 0.7, 0.01) == pytest.approx((0.01 + 0.8 * c) / (0.01 + 0.2 * c), rel=1e-13)
    # Large ε: e^ε overflows, Q tends to γ/(1−γ); tiny ε: Q tends to 1 when δ > 0.
    assert q_value(0.9, 1000.0, 1e-4) == pytest.approx(9.0, rel=1e-12)
    assert q_value(0.9, 1e-12, 1e-4) == pytest.approx(1.0 + 0.8e-12 / 1e-4, rel=1e-6)
    assert min_steps(0.5, 1.0, 1e-4) == 0  # Q = 1, ln Q = 0
    assert b_supremum(0.5, 1.0, 1e-4) == 2.0 and max_feasible_b_integer(0.5, 1.0, 1e-4) == 2.0


@pytest.mark.parametrize("m", [1, 2, 3, 5, 7, 40])
@pytest.mark.parametrize("gamma", [0.6, 0.9, 0.99, 0.999])
def test_exact_integer_ratio_is_not_rounded_up(m, gamma):
    # δ = 0 and ε = ln(γ/(1−γ))/m make ln Q/ε = m exactly; floating point may land a hair above m.
    epsilon = math.log(gamma / (1 - gamma)) / m
    assert min_steps(gamma, epsilon, 0.0) == m
    assert is_feasible(2.0 / m, gamma, epsilon, 0.0) is True
    assert max_feasible_b_integer(gamma, epsilon, 0.0) == pytest.approx(2.0 / m)
    # A little less ε is genuinely worse: one more step.
    assert min_steps(gamma, epsilon * (1 - 1e-6), 0.0) == m + 1


def test_scalar_and_array_return_types():
    assert isinstance(q_value(0.9, 1.0, 1e-4), float)
    assert isinstance(min_steps(0.9, 1.0, 1e-4), int)
    assert isinstance(is_feasible(0.5, 0.9, 1.0, 1e-4), bool)
    assert isinstance(dp_feasible(0.9, 1.0, 1e-4), bool)
    assert isinstance(b_supremum(0.9, 1.0, 1e-4), float)
    assert isinstance(gamma_max(0.5, 1.0, 1e-4), float)
    assert isinstance(min_epsilon(0.5, 0.9, 1e-4), float)
    eps = np.array([0.5, 1.0, 4.0])
    assert min_steps(0.99, eps, 1e-4).dtype == np.int64
    assert list(min_steps(0.99, eps, 1e-4)) == [min_steps(0.99, e, 1e-4) for e in eps]
    out = is_feasible(np.array([[0.4], [2.0]]), 0.99, eps, 1e-4)
    assert out.shape == (2, 3) and out.dtype == bool
    assert out.tolist() == [[False, True, True], [False, False, False]]


def test_b_supremum_and_integer_form_bracket_the_feasible_set():
    rng = np.random.default_rng(7)
    g = rng.uniform(0.5, 0.999, 500)
    e = np.exp(rng.uniform(np.log(0.01), np.log(10), 500))
    d = np.where(rng.random(500) < 0.3, 0.0, 10 ** rng.uniform(-10, -1, 500))
    sup = b_supremum(g, e, d)
    b_int = max_feasible_b_integer(g, e, d)
    m = min_steps(g, e, d)
    assert np.all(is_feasible(b_int, g, e, d))
    assert np.all(b_int <= sup)
    assert np.allclose(2.0 / b_int, np.maximum(m, 1))  # 2/B is a whole number
    assert np.all(is_feasible(sup * (1 - 1e-7), g, e, d))
    attained = m <= 1
    # Not attained: just above the supremum is infeasible (the float nearest 2/(m−1) may lie on either side of
    # the real number, so the supremum itself is tested from both sides, not at the float).
    above = np.minimum(sup[~attained] * (1 + 1e-9), 2.0)
    assert np.all(is_feasible(above, g[~attained], e[~attained], d[~attained]) == False)  # noqa: E712
    assert np.all(sup[attained] == 2.0)
    assert np.array_equal(dp_feasible(g, e, d), is_feasible(2.0, g, e, d))


def test_gamma_max_matches_predicate_on_a_table():
    for b, eps, delta in [(2.0, 1.0, 1e-4), (0.4, 1.0, 1e-4), (1.0, 4.0, 1e-4), (0.25, 0.3, 1e-6), (2.0, 2.0, 0.0)]:
        gm = gamma_max(b, eps, delta)
        assert 0.5 <= gm < 1
        assert is_feasible(b, gm * (1 - 1e-7), eps, delta)
        assert not is_feasible(b, min(gm * (1 + 1e-7), 0.999999999), eps, delta)
    assert gamma_max(0.05, 3.0, 1e-4) == 1.0  # s = 40: e^{120} — every γ < 1 possible
    assert gamma_max(2.0, 1000.0, 0.1) == 1.0  # e^ε overflows: no NaN


def test_gamma_max_closed_form_for_dp():
    eps = np.array([0.1, 0.5, 1.0, 3.0])
    assert np.allclose(gamma_max(2.0, eps, 1e-5), (np.exp(eps) + 1e-5) / (np.exp(eps) + 1), rtol=1e-14)
    assert np.allclose(gamma_max(2.0, eps, 0.0), 1 / (1 + np.exp(-eps)), rtol=1e-14)


def test_min_epsilon_closed_form_and_boundary():
    # δ = 0: ε* = ln(γ/(1−γ))/s.
    for b, gamma in [(2.0, 0.99), (0.4, 0.99), (0.25, 0.9), (1.0, 0.75)]:
        s = math.ceil(2 / b - 1e-12)
        assert min_epsilon(b, gamma, 0.0) == pytest.approx(math.log(gamma / (1 - gamma)) / s, rel=2e-9)
    # δ > 0: on the feasible side, and just below is ruled out.
    for b, gamma, delta in [(0.4, 0.99, 1e-4), (2.0, 0.9, 1e-6), (0.1, 0.95, 1e-3), (0.05, 0.999, 1e-8)]:
        eps = min_epsilon(b, gamma, delta)
        assert eps > 0
        assert is_feasible(b, gamma, eps, delta)
        assert not is_feasible(b, gamma, eps * (1 - 1e-8), delta)  # beyond the absolute 1e-9 band
        assert gamma_max(b, eps, delta) == pytest.approx(gamma, rel=1e-8)  # the two inverses agree
    # No ε > 0 ruled out iff s·δ ≥ 2γ − 1.
    assert min_epsilon(2.0, 0.5, 1e-4) == 0.0
    assert min_epsilon(0.1, 0.55, 0.005) == 0.0  # s = 20: 20 · 0.005 = 0.1 ≥ 0.1
    assert min_epsilon(0.1, 0.56, 0.005) > 0
    assert is_feasible(0.1, 0.55, 1e-9, 0.005)


def test_min_epsilon_vectorised_equals_scalar():
    b = np.array([0.05, 0.25, 0.4, 2.0])
    d = np.array([[0.0], [1e-6], [1e-2]])
    out = min_epsilon(b, 0.99, d)
    assert out.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert out[i, j] == min_epsilon(b[j], 0.99, d[i, 0])


def test_feasibility_is_monotone_in_epsilon_on_a_dense_grid():
    eps = np.linspace(1e-3, 12, 4000)
    for b, gamma, delta in [(2.0, 0.99, 1e-4), (0.3, 0.9, 0.01), (0.05, 0.999, 0.0), (0.7, 0.8, 0.2)]:
        feasible = is_feasible(b, gamma, eps, delta)
        # once feasible, stays feasible: the feasible set is an up-set [ε*, ∞)
        assert np.all(np.diff(feasible.astype(int)) >= 0)
        if not feasible.all():
            first = eps[np.argmax(feasible)] if feasible.any() else np.inf
            assert min_epsilon(b, gamma, delta) <= first


def test_feasibility_grid_matches_predicate():
    b = np.linspace(0.01, 2.0, 37)
    e = np.geomspace(0.01, 10, 23)
    grid = feasibility_grid(b, e, 0.95, 1e-5)
    assert grid.shape == (23, 37) and grid.dtype == bool
    assert np.array_equal(grid, is_feasible(b[None, :], 0.95, e[:, None], 1e-5))
    assert grid.any() and not grid.all()


def test_report_fields_round_trip_and_text():
    r = feasibility_report(0.99, 4.0, 1e-4)
    assert (r.m, r.b_max_integer, r.b_sup, r.dp_feasible, r.b_sup_attained) == (2, 1.0, 2.0, False, False)
    assert r.q == pytest.approx(q_value(0.99, 4.0, 1e-4))
    assert r.log_q == pytest.approx(math.log(r.q))
    assert r.gamma_max_at_b2 == pytest.approx((math.e**4 + 1e-4) / (math.e**4 + 1))
    assert r.min_epsilon_at_b2 == min_epsilon(2.0, 0.99, 1e-4)
    assert FeasibilityReport.from_json(r.to_json()) == r
    text = " ".join(r.describe())
    assert "ruled out" in text and "necessary condition" in text
    ok = feasibility_report(0.7, 1.0, 1e-4)
    assert ok.dp_feasible and ok.b_sup_attained and "not ruled out" in ok.describe()[1]


# --------------------------------------------------------------------------------------------- properties


@PROPERTY
@given(b1=bs, b2=bs, gamma=gammas, epsilon=epsilons, delta=deltas)
def test_smaller_b_is_never_less_feasible(b1, b2, gamma, epsilon, delta):
    lo, hi = min(b1, b2), max(b1, b2)
    if is_feasible(hi, gamma, epsilon, delta):
        assert is_feasible(lo, gamma, epsilon, delta)


@PROPERTY
@given(gamma=gammas, epsilon=epsilons, delta=deltas)
def test_b2_agrees_with_classic_dp_condition(gamma, epsilon, delta):
    # Classic DP (s = 1) can be γ-accurate only if γ ≤ e^ε(1 − γ) + δ.
    slack = math.exp(epsilon) * (1 - gamma) + delta - gamma
    assume(abs(slack) > 1e-7 * gamma)
    assert is_feasible(2.0, gamma, epsilon, delta) is (slack >= 0)
    assert dp_feasible(gamma, epsilon, delta) is (slack >= 0)


@PROPERTY
@given(b=bs, gamma=gammas, epsilon=st.floats(1e-3, 5.0), delta=deltas)
def test_predicate_agrees_with_the_derivation(b, gamma, epsilon, delta):
    assume(abs(2.0 / b - round(2.0 / b)) > 1e-6)  # away from ⌈2/B⌉ jumps
    assume(math.ceil(2.0 / b) * epsilon < 600)
    slack = _derivation_slack(b, gamma, epsilon, delta)
    assume(abs(slack) > 1e-7)
    assert is_feasible(b, gamma, epsilon, delta) is (slack >= 0)


@PROPERTY
@given(b=bs, epsilon=epsilons, delta=deltas, gamma=gammas)
def test_gamma_max_is_the_predicate_boundary(b, epsilon, delta, gamma):
    gm = gamma_max(b, epsilon, delta)
    assert 0.5 <= gm <= 1.0
    assume(abs(gamma - gm) > 1e-6 * gm)
    assert is_feasible(b, gamma, epsilon, delta) is (gamma < gm)


@PROPERTY
@given(b=bs, gamma=gammas, delta=deltas, e1=epsilons, e2=epsilons)
def test_min_epsilon_is_the_predicate_boundary_and_monotone(b, gamma, delta, e1, e2):
    lo, hi = min(e1, e2), max(e1, e2)
    if is_feasible(b, gamma, lo, delta):
        assert is_feasible(b, gamma, hi, delta)  # monotone in ε
    eps_star = min_epsilon(b, gamma, delta)
    if eps_star > 0:
        assert is_feasible(b, gamma, eps_star, delta)
        assert not is_feasible(b, gamma, eps_star * (1 - 1e-6), delta)
    for e in (lo, hi):
        if abs(e - eps_star) > 1e-6 * max(e, eps_star):
            assert is_feasible(b, gamma, e, delta) is (e > eps_star)


@PROPERTY
@given(b=bs, g1=gammas, g2=gammas, epsilon=epsilons, d1=deltas, d2=deltas)
def test_monotone_in_gamma_and_delta(b, g1, g2, epsilon, d1, d2):
    if is_feasible(b, max(g1, g2), epsilon, d1):
        assert is_feasible(b, min(g1, g2), epsilon, d1)
    if is_feasible(b, g1, epsilon, min(d1, d2)):
        assert is_feasible(b, g1, epsilon, max(d1, d2))


# ---------------------------------------------------------------------------------------- invalid inputs

GOOD = {"b": 0.5, "gamma": 0.9, "epsilon": 1.0, "delta": 1e-4}
BAD = {
    "b": [0.0, -0.1, 2.5, math.nan, math.inf, "x"],
    "gamma": [0.49, 1.0, 1.2, math.nan, None],
    "epsilon": [0.0, -1.0, math.nan, math.inf, "1"],
    "delta": [-1e-9, 1.0, 2.0, math.nan],
}
FUNCTIONS = {
    q_value: ("gamma", "epsilon", "delta"),
    min_steps: ("gamma", "epsilon", "delta"),
    is_feasible: ("b", "gamma", "epsilon", "delta"),
    b_supremum: ("gamma", "epsilon", "delta"),
    max_feasible_b_integer: ("gamma", "epsilon", "delta"),
    dp_feasible: ("gamma", "epsilon", "delta"),
    min_epsilon: ("b", "gamma", "delta"),
    gamma_max: ("b", "epsilon", "delta"),
    feasibility_report: ("gamma", "epsilon", "delta"),
}
INVALID_CASES = [
    pytest.param(func, params, name, value, id=f"{func.__name__}-{name}={value!r}")
    for func, params in FUNCTIONS.items()
    for name in params
    for value in BAD[name]
]


@pytest.mark.parametrize(("func", "params", "name", "value"), INVALID_CASES)
def test_invalid_inputs_raise_invalid_parameter_error(func, params, name, value):
    kwargs = {p: GOOD[p] for p in params}
    kwargs[name] = value
    with pytest.raises(InvalidParameterError, match=name):
        func(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"b_values": [], "epsilon_values": [1.0]}, "b_values"),
        ({"b_values": [[0.5]], "epsilon_values": [1.0]}, "b_values"),
        ({"b_values": [0.5], "epsilon_values": [0.0]}, "epsilon"),
        ({"b_values": [3.0], "epsilon_values": [1.0]}, "b must be in"),
        ({"b_values": [0.5], "epsilon_values": [1.0], "gamma": [0.9, 0.95]}, "single numbers"),
        ({"b_values": [0.5], "epsilon_values": [1.0], "delta": 1.0}, "delta"),
    ],
)
def test_feasibility_grid_invalid_inputs(kwargs, match):
    full = {"gamma": 0.9, "delta": 1e-4, **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        feasibility_grid(**full)


def test_invalid_array_entry_is_reported():
    with pytest.raises(InvalidParameterError, match=r"gamma must be in \[0.5, 1\); got 1.0"):
        is_feasible(0.5, np.array([0.9, 1.0]), 1.0, 1e-4)
    with pytest.raises(InvalidParameterError, match="single numbers"):
        feasibility_report(np.array([0.9, 0.95]), 1.0, 1e-4)


# ---------------------------------------------------------------------------------------------------------
# Rounding at extremes (issue 15): exact arithmetic with mpmath (50 digits) as the oracle.


def _exact_ratio(gamma: float, epsilon: float, delta: float):
    """ln Q / ε for the exact values of the given floats, in 50-digit arithmetic."""
    import mpmath

    with mpmath.workdps(50):
        g, e, d = mpmath.mpf(gamma), mpmath.mpf(epsilon), mpmath.mpf(delta)
        c = mpmath.expm1(e)
        return mpmath.log((d + g * c) / (d + (1 - g) * c)) / e


def test_min_steps_loses_no_whole_steps_for_huge_ratios():
    import mpmath

    for gamma, eps, delta in [(0.99, 1e-12, 0.0), (0.9, 1e-11, 0.0), (0.999, 3e-10, 1e-20), (0.75, 1e-9, 0.0)]:
        exact = int(mpmath.ceil(_exact_ratio(gamma, eps, delta)))
        assert min_steps(gamma, eps, delta) == exact  # the relative band lost 4,595 steps at the first one
    # An absolute band: at most one step forgiven, and only within 1e-9 above a whole number.
    assert min_steps(0.99, 1e-12, 0.0) == 4595119850135


def test_min_epsilon_is_feasible_in_exact_arithmetic_on_a_grid():
    # 10 B × 10 γ × 15 δ = 1,500 cases (the grid on which main returned a value ruled out by ~1e-9 relative in
    # 1,098 cases). The returned ε must pass the implemented predicate AND ln Q/ε ≤ s in exact arithmetic, and
    # sit within a relative 1e-10 of the exact boundary (ε·(1 − 1e-10) is ruled out exactly).
    bs = [2.0, 1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01]
    gammas_ = [0.51, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999]
    deltas = [0.0, 1e-12, 1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3]
    bb, gg, dd = np.meshgrid(bs, gammas_, deltas, indexing="ij")
    eps = min_epsilon(bb, gg, dd)
    assert eps.shape == (10, 10, 15)
    checked = 0
    for b, g, d, e in zip(bb.ravel(), gg.ravel(), dd.ravel(), eps.ravel(), strict=True):
        s = math.ceil(2.0 / b - 1e-12)
        if e == 0.0:  # nothing ruled out: s·δ ≥ 2γ − 1 (up to the decimal tolerance)
            assert s * d >= (2 * g - 1) * (1 - 1e-9)
            assert is_feasible(b, g, 1e-12, d)
            continue
        checked += 1
        assert is_feasible(b, g, e, d), (b, g, d, e)
        assert _exact_ratio(g, e, d) <= s, (b, g, d, e)
        assert _exact_ratio(g, e * (1 - 1e-10), d) > s, (b, g, d, e)
    assert checked > 1200


@settings(max_examples=200, deadline=None)
@given(b=st.floats(0.01, 2.0), gamma=gammas, delta=st.floats(0.0, 0.2))
def test_min_epsilon_never_returns_a_ruled_out_value(b, gamma, delta):
    e = min_epsilon(b, gamma, delta)
    assume(e > 0)
    s = math.ceil(2.0 / b)  # b drawn as a float: the exact ceiling of the float ratio, up to 1e-16 noise
    assume(abs(2.0 / b - round(2.0 / b)) > 1e-9)
    assert is_feasible(b, gamma, e, delta)
    assert _exact_ratio(gamma, e, delta) <= s
