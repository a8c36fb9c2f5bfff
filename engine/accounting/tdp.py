"""The targeted-DP calculus of Kohli & Blumenstock (Lemmas 1–4): steps of size B, switch lemma, composition.

This module is the one home of the step count and the switch lemma (Lemma 4). The composition lemmas for
(B, ε, δ)-TDP guarantees — sequential composition (Lemma 2) and parallel composition on disjoint data (Lemma 3) —
live in the one composition module, :mod:`engine.accounting.composition` (this module imports nothing above the
validation helpers, so it sits below :mod:`engine.guarantee`). Post-processing (Lemma 1) needs no function: any
computation on a release keeps its guarantee.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Lemmas 1–4. Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from engine.validation import check_array_interval

#: Tolerance of :func:`tolerant_ceil`, used ONLY where rounding down is the conservative direction (Theorem 1's
#: right-hand side ⌈ln Q/ε⌉): ratios within this ABSOLUTE distance above a whole number count as that number.
#: Absolute, not relative: a relative band grows with the ratio and once ln Q/ε exceeds 1e9 it swallowed whole
#: steps (``min_steps(0.99, 1e-12, 0.0)`` came out 4,595 steps short). An absolute band below 1 can lower the
#: ceiling by at most one, and only for a ratio within 1e-9 above a whole number.
_STEP_TOLERANCE = 1e-9
STEP_TOLERANCE = _STEP_TOLERANCE

#: Step counts saturate here (far beyond anything meaningful: B would be below 1e-18), so that absurdly small
#: B never overflows the integer type.
MAX_STEPS = 2**62


def tolerant_ceil(ratio):
    r"""Ceiling that treats a ratio within an absolute ``STEP_TOLERANCE`` above a whole number as that number.

    :math:`\lceil r - \tau \rceil` with :math:`\tau` = ``STEP_TOLERANCE`` = 1e-9, never below 0, as a float
    array (exact for whole numbers up to 2**53; saturates at :data:`MAX_STEPS`). The result is never more than
    one below the exact ceiling :math:`\lceil r \rceil`, and equals it unless r lies in (n, n + 1e-9] for a
    whole n; above r ≈ 1e7 the band is smaller than the spacing of floats, so the ceiling is exact there. Theorem 1's ⌈ln Q/ε⌉
    (:mod:`engine.theory.feasibility`) uses it, so a ratio that is a whole number in exact arithmetic is
    never pushed to the next whole number by floating-point noise. Rounding down is the conservative direction
    only for Theorem 1's right-hand side (fewer parameters ruled out); :func:`steps` therefore does NOT use it.

    >>> float(tolerant_ceil(2.0 / 0.4))
    5.0
    >>> float(tolerant_ceil(5.0001))
    6.0
    >>> float(tolerant_ceil(4.6e12 + 0.5))  # no whole steps lost for huge ratios
    4600000000001.0
    """
    r = np.asarray(ratio, dtype=float)
    with np.errstate(invalid="ignore"):  # inf − inf: handled on the next line
        out = np.ceil(r - _STEP_TOLERANCE)
    out = np.where(np.isposinf(r), float(MAX_STEPS), out)
    return np.clip(out, 0.0, float(MAX_STEPS))


def steps(distance, b):
    r"""Number of B-steps needed to move a record by ``distance``: :math:`s = \lceil t / B \rceil`, exactly.

    The ceiling is taken of the EXACT ratio of the two floating-point numbers (rational arithmetic where the
    float quotient is within 1e-9 of a whole number), so s is never rounded down: a larger s is the
    conservative direction both for the switch lemma (more loss) and for Theorem 1's left-hand side (fewer
    parameters ruled out). Every decimal B = 2/s with up to six decimals (0.4, 0.1, 0.05, 0.025, ...) gives
    exactly s, because its nearest float lies above the decimal. Vectorised; an int for scalar input.

    >>> steps(2.0, 0.4)
    5
    >>> steps(2.0, 0.3)
    7
    >>> steps(0.0, 0.5)
    0
    >>> steps(2.0, 0.4 * (1 - 5e-10))  # just below 0.4: six steps, not five
    6
    """
    t = check_array_interval("distance", distance, 0, None)
    bb = check_array_interval("b", b, 0, None, closed="neither")
    t, bb = np.broadcast_arrays(t, bb)
    with np.errstate(over="ignore"):
        ratio = t / bb
    s = np.ceil(ratio)
    near = np.isfinite(ratio) & (np.abs(ratio - np.round(ratio)) <= 1e-9 * np.maximum(ratio, 1.0))
    if near.any():
        s = np.array(s, copy=True)
        for i in np.flatnonzero(near):
            s.flat[i] = math.ceil(Fraction(float(t.flat[i])) / Fraction(float(bb.flat[i])))
    s = np.clip(np.where(np.isposinf(ratio), float(MAX_STEPS), s), 0.0, float(MAX_STEPS)).astype(np.int64)
    return int(s) if s.ndim == 0 else s


def switch_loss(epsilon, delta, b, distance):
    r"""Privacy loss of a record moved by ``distance`` under (B, ε, δ)-TDP (switch lemma, Lemma 4).

    .. math:: s = \lceil t/B \rceil,\quad \varepsilon' = s\varepsilon,\quad
              \delta' = \min\{1, \frac{e^{s\varepsilon}-1}{e^\varepsilon-1}\delta\}

    Returns ``(epsilon_prime, delta_prime)`` (floats for scalar input, arrays otherwise).

    >>> switch_loss(1.0, 1e-5, 0.5, 2.0)[0]
    4.0
    """
    eps = check_array_interval("epsilon", epsilon, 0, None, closed="neither")
    dlt = check_array_interval("delta", delta, 0, 1, closed="both")
    s = np.asarray(steps(distance, b))
    with np.errstate(over="ignore"):  # s·ε beyond the float range is ε' = ∞ (no protection), not a warning
        eps_prime = s * eps
    # growth = (e^{sε} − 1)/(e^ε − 1), in log space so that huge sε neither overflows nor gives inf/inf:
    # log growth = sε + log(1 − e^{−sε}) − ε − log(1 − e^{−ε}). δ = 0 stays exactly 0 (no inf·0).
    with np.errstate(divide="ignore", invalid="ignore"):
        log_growth = eps_prime + np.log(-np.expm1(-eps_prime)) - eps - np.log(-np.expm1(-eps))
        log_delta = np.where(dlt > 0, np.log(np.where(dlt > 0, dlt, 1.0)), -np.inf)
        delta_prime = np.minimum(1.0, np.exp(np.minimum(log_growth + log_delta, 0.0)))
    delta_prime = np.where((s == 0) | (dlt == 0), 0.0, delta_prime)
    if np.ndim(eps_prime) == 0:
        return float(eps_prime), float(delta_prime)
    return eps_prime, delta_prime


def tdp_to_dp(epsilon, delta, b):
    """Classic (ε', δ')-DP implied by (B, ε, δ)-TDP for rows in the unit L2 ball (distance 2).

    >>> tdp_to_dp(1.0, 0.0, 0.4)
    (5.0, 0.0)
    """
    return switch_loss(epsilon, delta, b, 2.0)

