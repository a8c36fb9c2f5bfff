"""The targeted-DP calculus of Kohli & Blumenstock (Lemmas 1–4): switch lemma and steps of size B.

This module is the one home of the switch lemma. Composition of guarantees lives here too.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Lemma 4 (switch lemma). Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import numpy as np

from engine.validation import check_array_interval

#: Ratios t/B within this relative distance of a whole number count as that whole number, so that a user who
#: types B = 0.4 gets ⌈2/0.4⌉ = 5 steps and not 6 because 2/0.4 is not exact in binary floating point.
_STEP_TOLERANCE = 1e-9


def steps(distance, b):
    r"""Number of B-steps needed to move a record by ``distance``: :math:`s = \lceil t / B \rceil`.

    Vectorised. Returns an int for scalar input, an int array otherwise.

    >>> steps(2.0, 0.4)
    5
    >>> steps(2.0, 0.3)
    7
    >>> steps(0.0, 0.5)
    0
    """
    t = check_array_interval("distance", distance, 0, None)
    bb = check_array_interval("b", b, 0, None, closed="neither")
    ratio = t / bb
    s = np.ceil(ratio - _STEP_TOLERANCE * np.maximum(ratio, 1.0))
    s = np.maximum(s, 0).astype(np.int64)
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
    eps_prime = s * eps
    # (e^{sε} − 1)/(e^ε − 1) computed stably; equals s in the limit ε → 0.
    growth = np.expm1(eps_prime) / np.expm1(eps)
    delta_prime = np.minimum(1.0, growth * dlt)
    delta_prime = np.where(s == 0, 0.0, delta_prime)
    if np.ndim(eps_prime) == 0:
        return float(eps_prime), float(delta_prime)
    return eps_prime, delta_prime


def tdp_to_dp(epsilon, delta, b):
    """Classic (ε', δ')-DP implied by (B, ε, δ)-TDP for rows in the unit L2 ball (distance 2).

    >>> tdp_to_dp(1.0, 0.0, 0.4)
    (5.0, 0.0)
    """
    return switch_loss(epsilon, delta, b, 2.0)
