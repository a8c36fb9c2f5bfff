r"""Theorem 1 of the targeted-DP paper: which (B, ε, δ) are ruled out for γ-accurate targeting.

This module is the one home of Theorem 1. If a mechanism A is (B, ε, δ)-TDP (B, ε > 0) and γ-accurate for a
minimally responsive targeting rule, with γ ∈ [1/2, 1), then

.. math:: \lceil 2/B \rceil \;\ge\; \lceil \ln(Q)/\varepsilon \rceil, \qquad
          Q = \frac{\delta + \gamma(e^\varepsilon - 1)}{\delta + (1 - \gamma)(e^\varepsilon - 1)}.

Where the inequality fails, NO (B, ε, δ)-TDP algorithm is γ-accurate: the "infeasible region". The condition
is necessary, not sufficient — the B that actually delivers γ on a given task may be smaller.

The derivation (switch lemma, s = ⌈2/B⌉ steps across the unit ball) is

.. math:: \gamma \le e^{s\varepsilon}(1-\gamma) + \frac{e^{s\varepsilon}-1}{e^\varepsilon-1}\,\delta
          \iff s \ge \ln(Q)/\varepsilon,

and every function here is a rearrangement of it: the predicate (:func:`is_feasible`), the number of steps
it needs (:func:`min_steps`), the largest B (:func:`b_supremum`, :func:`max_feasible_b_integer`), the smallest ε
(:func:`min_epsilon`) and the highest accuracy (:func:`gamma_max`).

Conventions
-----------
* Pure and vectorised: arguments broadcast (numpy rules); scalar input gives a Python ``float``/``int``/``bool``,
  array input an ndarray.
* Inputs are validated: ``epsilon > 0`` (finite), ``delta`` in [0, 1), ``gamma`` in [1/2, 1), ``b`` in (0, 2].
* Rounding: Theorem 1 is a negative result, so each side is rounded in the direction that rules out less.
  The left side ⌈2/B⌉ is the exact ceiling of the exact ratio of the floats (:func:`engine.accounting.tdp.steps`,
  never rounded down); the right side ⌈ln Q/ε⌉ uses :func:`engine.accounting.tdp.tolerant_ceil` (a ratio within
  an absolute 1e-9 above a whole number counts as that number, so at most one step is forgiven and only at a
  whole number). Floating-point noise therefore never rules out a parameter (and never pushes a designer
  towards a smaller, less protective B). :func:`min_epsilon` is the exception in the other direction: it
  returns an ε that passes the predicate in exact arithmetic, not only with the tolerance.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Theorem 1 and Example 1. Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.accounting.tdp import steps, tolerant_ceil
from engine.errors import InvalidParameterError
from engine.serialization import Serializable
from engine.validation import check_array_interval

__all__ = [
    "FeasibilityReport",
    "b_supremum",
    "dp_feasible",
    "feasibility_grid",
    "feasibility_report",
    "gamma_max",
    "is_feasible",
    "max_feasible_b_integer",
    "min_epsilon",
    "min_steps",
    "q_value",
]

# ---------------------------------------------------------------------------------------------------------
# validation


def _check(name: str, value, low, high, closed: str, hint: str) -> np.ndarray:
    if np.asarray(value).dtype.kind not in "iuf":  # text, booleans, None, mixed objects
        raise InvalidParameterError(f"{name} must be a number or an array of numbers; got {value!r}")
    arr = check_array_interval(name, value, low, high, closed=closed, hint=hint)  # type: ignore[arg-type]
    if not np.isfinite(arr).all():
        raise InvalidParameterError(f"{name} must be a finite number; got {float(arr[~np.isfinite(arr)][0])}")
    return arr


def _gamma(value) -> np.ndarray:
    return _check("gamma", value, 0.5, 1, "left", "γ is the targeting accuracy; Theorem 1 covers 1/2 ≤ γ < 1")


def _epsilon(value) -> np.ndarray:
    return _check("epsilon", value, 0, None, "neither", "ε must be a positive privacy-loss bound")


def _delta(value) -> np.ndarray:
    return _check("delta", value, 0, 1, "left", "δ is a failure probability, 0 ≤ δ < 1")


def _b(value) -> np.ndarray:
    return _check("b", value, 0, 2, "right", "B is an L2 distance between rows of the unit ball, 0 < B ≤ 2")


def _float(arr):
    arr = np.asarray(arr, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


# ---------------------------------------------------------------------------------------------------------
# core (inputs assumed valid and broadcastable)


def _log_q(gamma, epsilon, delta):
    r"""ln Q = log1p((2γ − 1) / (δ/c + 1 − γ)), c = e^ε − 1: exact rearrangement, stable for tiny and huge ε."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        c = np.expm1(epsilon)
        return np.log1p((2.0 * gamma - 1.0) / (delta / c + (1.0 - gamma)))


def _m_float(gamma, epsilon, delta):
    with np.errstate(divide="ignore", invalid="ignore"):
        return tolerant_ceil(_log_q(gamma, epsilon, delta) / epsilon)


def _feasible(s, gamma, epsilon, delta):
    """Predicate ⌈2/B⌉ ≥ ⌈ln Q/ε⌉ with ``s`` = ⌈2/B⌉ given (comparisons of NaN are False → infeasible)."""
    return s >= _m_float(gamma, epsilon, delta)


#: Relative margin of :func:`_strictly_feasible`: larger than the floating-point error of ln(Q)/ε (a few ulps).
_STRICT_MARGIN = 1e-12


def _strictly_feasible(s, gamma, epsilon, delta):
    """ln Q/ε ≤ s·(1 − 1e-12), with no tolerance: True only where the predicate also holds in exact arithmetic."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _log_q(gamma, epsilon, delta) / epsilon <= s * (1.0 - _STRICT_MARGIN)


# ---------------------------------------------------------------------------------------------------------
# public functions


def q_value(gamma, epsilon, delta):
    r"""Theorem 1's ratio :math:`Q = \frac{\delta + \gamma(e^\varepsilon - 1)}{\delta + (1-\gamma)(e^\varepsilon - 1)}`.

    Parameters
    ----------
    gamma : float or array_like
        Required targeting accuracy, in [1/2, 1).
    epsilon : float or array_like
        Privacy loss, > 0.
    delta : float or array_like
        In [0, 1).

    Returns
    -------
    Q : float or ndarray
        At least 1 (equal to 1 at γ = 1/2); γ/(1 − γ) when δ = 0. Computed as
        ``1 + (2γ − 1)/(δ/(e^ε − 1) + 1 − γ)`` with ``expm1``, which is the same number and stays finite for
        large ε.

    Raises
    ------
    InvalidParameterError
        If a parameter is outside its range.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1.

    Examples
    --------
    Example 1 of the paper (γ = 0.99, δ = 1e-4, ε = 1):

    >>> round(q_value(0.99, 1.0, 1e-4), 2)
    98.43
    >>> q_value(0.5, 1.0, 1e-4)
    1.0
    """
    g, e, d = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    return _float(np.exp(_log_q(g, e, d)))


def min_steps(gamma, epsilon, delta):
    r"""Smallest number of B-steps across the unit ball compatible with γ: :math:`m = \lceil \ln(Q)/\varepsilon \rceil`.

    (B, ε, δ) is feasible iff ⌈2/B⌉ ≥ m.

    Parameters
    ----------
    gamma, epsilon, delta : float or array_like
        As in :func:`q_value`.

    Returns
    -------
    m : int or ndarray of int64
        0 at γ = 1/2 (Q = 1, ln Q = 0); m ≤ 1 means classic DP (B = 2) is not ruled out.

    Notes
    -----
    A ratio ln(Q)/ε within an absolute 1e-9 above a whole number counts as that whole number
    (:func:`engine.accounting.tdp.tolerant_ceil`): floating-point noise never makes the theorem rule out more
    than it does in exact arithmetic, and the result is never more than one below the exact ceiling (exactly
    the exact ceiling unless the ratio lies within 1e-9 above a whole number). Values saturate at 2**62 (ε so small that no representable B works).

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1 and Example 1.

    Examples
    --------
    >>> min_steps(0.99, 1.0, 1e-4), min_steps(0.99, 4.0, 1e-4)
    (5, 2)
    >>> min_steps(0.5, 1.0, 1e-4)
    0
    >>> min_steps(0.99, 1e-12, 0.0)  # ⌈ln 99 / 1e-12⌉, no whole steps lost
    4595119850135
    """
    g, e, d = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    m = _m_float(g, e, d).astype(np.int64)
    return int(m) if m.ndim == 0 else m


def is_feasible(b, gamma, epsilon, delta):
    r"""Theorem 1's predicate, exactly as stated: :math:`\lceil 2/B \rceil \ge \lceil \ln(Q)/\varepsilon \rceil`.

    True means "not ruled out" (the theorem is a necessary condition); False means no (B, ε, δ)-TDP algorithm
    can be γ-accurate for a minimally responsive targeting rule.

    Parameters
    ----------
    b : float or array_like
        Target distance B in (0, 2]; B = 2 is classic DP.
    gamma, epsilon, delta : float or array_like
        As in :func:`q_value`. All four arguments broadcast.

    Returns
    -------
    feasible : bool or ndarray of bool

    Notes
    -----
    Monotone in every argument a designer turns: a smaller B, a larger ε, a larger δ or a smaller γ is never
    less feasible. ⌈2/B⌉ is :func:`engine.accounting.tdp.steps` (2/0.4 counts as exactly 5).
    Vectorised: a 400 × 400 grid takes a few milliseconds (``benchmarks/bench_feasibility.py``).

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1.

    Examples
    --------
    >>> is_feasible(0.4, 0.99, 1.0, 1e-4), is_feasible(0.41, 0.99, 1.0, 1e-4)
    (True, True)
    >>> is_feasible(0.5, 0.99, 1.0, 1e-4), is_feasible(2.0, 0.99, 4.0, 1e-4)
    (False, False)
    """
    bb, g, e, d = _b(b), _gamma(gamma), _epsilon(epsilon), _delta(delta)
    s = np.asarray(steps(2.0, bb), dtype=float)
    out = _feasible(s, g, e, d)
    return bool(out) if np.ndim(out) == 0 else out


def b_supremum(gamma, epsilon, delta):
    r"""Supremum of the feasible B: :math:`2/(m-1)` (not attained) when m ≥ 2, else 2 (attained).

    ⌈2/B⌉ ≥ m ⟺ 2/B > m − 1 ⟺ B < 2/(m − 1): every B below the supremum is feasible, the supremum itself is
    not (it gives ⌈2/B⌉ = m − 1). When m ≤ 1 every B in (0, 2] is feasible.

    Parameters
    ----------
    gamma, epsilon, delta : float or array_like
        As in :func:`q_value`.

    Returns
    -------
    b_sup : float or ndarray

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1.

    Examples
    --------
    >>> b_supremum(0.99, 1.0, 1e-4), b_supremum(0.99, 4.0, 1e-4)
    (0.5, 2.0)
    """
    g, e, d = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    m = _m_float(g, e, d)
    with np.errstate(divide="ignore"):
        return _float(np.where(m <= 1, 2.0, 2.0 / np.maximum(m - 1.0, 1.0)))


def max_feasible_b_integer(gamma, epsilon, delta):
    r"""Largest feasible B with 2/B a whole number: :math:`B = 2/\max(m, 1)` (the form of Example 1).

    Parameters
    ----------
    gamma, epsilon, delta : float or array_like
        As in :func:`q_value`.

    Returns
    -------
    b_max : float or ndarray
        Attained (it is feasible). Compare :func:`b_supremum`, which is larger when m ≥ 2.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1 ("when 2/B ∈ ℤ: B ≤ 2/⌈ln(Q)/ε⌉") and Example 1.

    Examples
    --------
    >>> max_feasible_b_integer(0.99, 1.0, 1e-4), max_feasible_b_integer(0.99, 4.0, 1e-4)
    (0.4, 1.0)
    """
    g, e, d = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    return _float(2.0 / np.maximum(_m_float(g, e, d), 1.0))


def dp_feasible(gamma, epsilon, delta):
    """Whether classic (ε, δ)-DP (B = 2) is not ruled out for γ-accurate targeting: m ≤ 1.

    Equivalent to γ ≤ (e^ε + δ)/(e^ε + 1) (:func:`gamma_max` at B = 2); with δ = 0 to ε ≥ ln(γ/(1 − γ)).

    Examples
    --------
    >>> dp_feasible(0.99, 4.0, 1e-4), dp_feasible(0.99, 5.0, 1e-4)
    (False, True)
    """
    g, e, d = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    out = _m_float(g, e, d) <= 1
    return bool(out) if np.ndim(out) == 0 else out


def min_epsilon(b, gamma, delta):
    r"""Smallest ε not ruled out by Theorem 1 for given (B, γ, δ).

    With s = ⌈2/B⌉ the predicate is equivalent to

    .. math:: g(\varepsilon) = e^{s\varepsilon}(1-\gamma) + \delta \sum_{i=0}^{s-1} e^{i\varepsilon} \;\ge\; \gamma,

    and g is strictly increasing in ε (each term is, and 1 − γ > 0). So the condition IS monotone in ε: if ε is
    not ruled out, no larger ε is, and the feasible set is an interval [ε*, ∞). Note that ln(Q)/ε itself need
    not be monotone; its ceiling compared with a whole number s is.

    Parameters
    ----------
    b : float or array_like
        Target distance B in (0, 2].
    gamma : float or array_like
        Required accuracy, in [1/2, 1).
    delta : float or array_like
        In [0, 1). All arguments broadcast.

    Returns
    -------
    epsilon_min : float or ndarray
        ε* — never a value the theorem rules out: the predicate holds at the returned value both as implemented
        (``is_feasible(b, gamma, epsilon_min, delta)`` is True) and in exact arithmetic (ln Q/ε ≤ s, checked
        against 50-digit mpmath in the tests), and the exact boundary lies at most a relative ~1e-11 below it.
        (:func:`is_feasible` forgives an absolute 1e-9 in ln Q/ε, so it may also accept values up to about a
        relative 1e-9/s below the returned one.) 0.0 when no ε > 0 is ruled out, which happens exactly when
        s·δ ≥ 2γ − 1 (the infimum; ε must still be positive).

    Notes
    -----
    Closed form for δ = 0: ε* = ln(γ/(1 − γ))/s. For δ > 0 the boundary is a root of a degree-s polynomial in
    e^ε; we bisect a STRICT form of the predicate (vectorised), ln Q/ε ≤ s·(1 − 1e-12) with no tolerance, between
    0 and the δ = 0 root, which bounds it from above, keeping the feasible end of the bracket. The 1e-12 margin
    exceeds the floating-point error of ln Q/ε, so the answer is never a value the theorem rules out, even by
    rounding error.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1.

    Examples
    --------
    >>> round(min_epsilon(2.0, 0.99, 0.0), 6)  # ln 99
    4.59512
    >>> eps = min_epsilon(0.4, 0.99, 1e-4)
    >>> is_feasible(0.4, 0.99, eps, 1e-4), is_feasible(0.4, 0.99, eps * (1 - 1e-8), 1e-4)
    (True, False)
    >>> min_epsilon(2.0, 0.5, 1e-4)
    0.0
    """
    bb, g, d = _b(b), _gamma(gamma), _delta(delta)
    bb, g, d = np.broadcast_arrays(bb, g, d)
    s = np.asarray(steps(2.0, bb), dtype=float)
    # ε → 0: ln(Q)/ε → (2γ − 1)/δ. No ε > 0 is ruled out iff that limit passes (s·δ ≥ 2γ − 1, same tolerance).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # subnormal δ: the limit is +inf
        limit = np.where(2.0 * g - 1.0 > 0, (2.0 * g - 1.0) / d, 0.0)
    everything = tolerant_ceil(limit) <= s
    with np.errstate(divide="ignore"):
        hi = np.log(g / (1.0 - g)) / s  # the δ = 0 root: an upper bound on ε* for δ ≥ 0
    hi = np.where(everything, 1.0, np.maximum(hi * (1.0 + 1e-9), np.finfo(float).tiny))
    for _ in range(64):  # safety: guarantee the upper end is feasible
        ok = _strictly_feasible(s, g, hi, d)
        if ok.all():
            break
        hi = np.where(ok, hi, 2.0 * hi)
    lo = np.where(everything, hi, 0.0)  # nothing to search where no ε is ruled out
    for _ in range(1100):
        mid = lo + 0.5 * (hi - lo)
        done = (mid <= lo) | (mid >= hi)
        if done.all():
            break
        ok = _strictly_feasible(s, g, np.where(mid > 0, mid, hi), d) & (mid > 0)
        hi = np.where(ok & ~done, mid, hi)
        lo = np.where(~ok & ~done, mid, lo)
    return _float(np.where(everything, 0.0, hi))


def gamma_max(b, epsilon, delta):
    r"""Highest targeting accuracy γ not ruled out for given (B, ε, δ).

    With s = ⌈2/B⌉, :math:`K = e^{s\varepsilon}`, :math:`c = e^\varepsilon - 1`:

    .. math:: \gamma_{\max} = \min\Bigl(1, \frac{K c + (K - 1)\delta}{(K + 1) c}\Bigr)

    (solve :math:`\gamma \le K(1-\gamma) + (K-1)\delta/c` for γ). γ ∈ [1/2, 1) is feasible iff γ ≤ γ_max (up to the floating-point resolution of γ near 1).
    Evaluated as ``(c + δ(1 − 1/K)) / (c(1 + 1/K))`` with ``exp(−sε)`` and ``expm1``, which stays finite
    when e^{sε} overflows.

    Parameters
    ----------
    b : float or array_like
        Target distance B in (0, 2].
    epsilon : float or array_like
        > 0.
    delta : float or array_like
        In [0, 1). All arguments broadcast.

    Returns
    -------
    gamma_max : float or ndarray
        In [1/2, 1]; 1 means every accuracy below 1 is possible as far as Theorem 1 can tell.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Theorem 1 (derivation step).

    Examples
    --------
    Classic DP (B = 2): (e^ε + δ)/(e^ε + 1).

    >>> f"{gamma_max(2.0, 1.0, 1e-4):.6f}"
    '0.731085'
    """
    bb, e, d = _b(b), _epsilon(epsilon), _delta(delta)
    s = np.asarray(steps(2.0, bb), dtype=float)
    inv_k = np.exp(-s * e)
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.expm1(e)
        ratio = (c + d * (-np.expm1(-s * e))) / (c * (1.0 + inv_k))
    ratio = np.where(np.isinf(c), 1.0, ratio)  # ε beyond ~709: the ratio tends to 1
    return _float(np.minimum(1.0, ratio))


def feasibility_grid(b_values, epsilon_values, gamma, delta):
    """Theorem 1's predicate over a B × ε grid, for a heatmap.

    Parameters
    ----------
    b_values : array_like, 1-D
        B axis, each in (0, 2].
    epsilon_values : array_like, 1-D
        ε axis, each > 0.
    gamma : float
        In [1/2, 1).
    delta : float
        In [0, 1).

    Returns
    -------
    feasible : ndarray of bool, shape (len(epsilon_values), len(b_values))
        ``feasible[i, j] = is_feasible(b_values[j], gamma, epsilon_values[i], delta)``: rows follow ε (y axis),
        columns follow B (x axis), as plotly's ``Heatmap(z=..., x=b_values, y=epsilon_values)`` expects.

    Examples
    --------
    >>> feasibility_grid([0.4, 0.5, 2.0], [1.0, 4.0], 0.99, 1e-4).tolist()
    [[True, False, False], [True, True, False]]
    """
    bb, ee = _b(b_values), _epsilon(epsilon_values)
    for name, arr in (("b_values", bb), ("epsilon_values", ee)):
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidParameterError(f"{name} must be a non-empty 1-D list of numbers; got shape {arr.shape}")
    g, d = _gamma(gamma), _delta(delta)
    if g.ndim or d.ndim:
        raise InvalidParameterError("gamma and delta must be single numbers for a feasibility grid")
    s = np.asarray(steps(2.0, bb), dtype=float)[None, :]
    m = _m_float(float(g), ee, float(d))[:, None]
    return s >= m


@dataclass(frozen=True)
class FeasibilityReport(Serializable):
    """Theorem 1's answers for one (γ, ε, δ): what the Feasibility page and ``python -m engine feasibility`` show.

    Attributes
    ----------
    gamma, epsilon, delta : float
        The question.
    q, log_q : float
        Q and ln Q.
    m : int
        ⌈ln(Q)/ε⌉: the fewest B-steps across the unit ball compatible with γ.
    b_sup : float
        Supremum of feasible B (2/(m − 1), not attained, or 2 when m ≤ 1).
    b_max_integer : float
        Largest feasible B with 2/B a whole number (2/m): the form of the paper's Example 1.
    dp_feasible : bool
        Whether classic DP (B = 2) is not ruled out.
    gamma_max_at_b2 : float
        Highest accuracy not ruled out for classic DP at this (ε, δ): (e^ε + δ)/(e^ε + 1).
    min_epsilon_at_b2 : float
        Smallest ε for which classic DP is not ruled out at this (γ, δ).
    """

    KIND = "feasibility-report"

    gamma: float
    epsilon: float
    delta: float
    q: float
    log_q: float
    m: int
    b_sup: float
    b_max_integer: float
    dp_feasible: bool
    gamma_max_at_b2: float
    min_epsilon_at_b2: float

    @property
    def b_sup_attained(self) -> bool:
        """True when the supremum is itself feasible (m ≤ 1, B = 2)."""
        return self.m <= 1

    def describe(self) -> list[str]:
        """Plain-language sentences for the UI and reports."""
        lines = [
            f"For {self.gamma:.4g}-accurate targeting at ε = {self.epsilon:.4g}, δ = {self.delta:.3g}: "
            f"Q = {self.q:.4g}, ln Q / ε = {self.log_q / self.epsilon:.4g}, so at least m = {self.m} step(s) "
            "of size B are needed across the unit ball (Theorem 1)."
        ]
        if self.dp_feasible:
            lines.append("Classic DP (B = 2) is not ruled out: every B in (0, 2] passes the necessary condition.")
        else:
            lines.append(
                f"Classic DP (B = 2) is ruled out: no (ε, δ)-DP algorithm reaches this accuracy "
                f"(classic DP allows at most γ = {self.gamma_max_at_b2:.4g} here, and needs ε ≥ "
                f"{self.min_epsilon_at_b2:.4g} for γ = {self.gamma:.4g})."
            )
            lines.append(
                f"Feasible B: every B < {self.b_sup:.4g} (not attained); the largest B with 2/B a whole number "
                f"is {self.b_max_integer:.4g}."
            )
        lines.append(
            "This is a necessary condition, not a sufficient one: the B that delivers the accuracy on your task "
            "may be smaller."
        )
        return lines


def feasibility_report(gamma, epsilon, delta) -> FeasibilityReport:
    """All of Theorem 1's answers for one scalar (γ, ε, δ).

    Examples
    --------
    >>> r = feasibility_report(0.99, 1.0, 1e-4)
    >>> (round(r.q, 2), r.m, r.b_max_integer, r.b_sup, r.dp_feasible, round(r.gamma_max_at_b2, 6))
    (98.43, 5, 0.4, 0.5, False, 0.731085)
    """
    ga, ea, da = _gamma(gamma), _epsilon(epsilon), _delta(delta)
    if ga.ndim or ea.ndim or da.ndim:
        raise InvalidParameterError("feasibility_report takes single numbers for gamma, epsilon and delta")
    g, e, d = float(ga), float(ea), float(da)
    log_q = float(_log_q(g, e, d))
    return FeasibilityReport(
        gamma=g,
        epsilon=e,
        delta=d,
        q=math.exp(log_q),
        log_q=log_q,
        m=min_steps(g, e, d),
        b_sup=b_supremum(g, e, d),
        b_max_integer=max_feasible_b_integer(g, e, d),
        dp_feasible=dp_feasible(g, e, d),
        gamma_max_at_b2=gamma_max(2.0, e, d),
        min_epsilon_at_b2=min_epsilon(2.0, g, d),
    )
