r"""The Gaussian mechanism on records: X + N(0, σ² I), calibrated to L2 sensitivity B — (B, ε, δ)-targeted DP.

Two B-neighbouring data sets differ in one row by at most B in L2 norm, so the whole n × d matrix moves by at
most B in Frobenius norm: the L2 sensitivity of the identity map is Δ = B. Adding i.i.d. N(0, σ²) to every
entry is then (ε, δ)-indistinguishable for every B-neighbouring pair, i.e. (B, ε, δ)-TDP. With rows in the
unit L2 ball, B = 2 covers every pair of records: classic (ε, δ)-DP.

Two calibrations of σ:

* ``"analytic"`` (default) — the exact privacy profile of the Gaussian mechanism (Balle & Wang 2018,
  Theorem 8):

  .. math:: \delta(\sigma) = \Phi\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            - e^{\varepsilon}\,\Phi\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr),

  decreasing in σ; we return (up to a relative ~1e-12) the smallest σ with δ(σ) ≤ δ, always on the private
  side of the root. Valid for every ε > 0 and needs less noise than the classical bound.
* ``"classical"`` — :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (Dwork & Roth 2014, Theorem
  A.1), valid only for ε < 1. Kept because the targeted-DP paper uses it (Algorithm 1, step 4).

References
----------
.. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
       Calibration and Optimal Denoising", ICML 2018, Theorem 8 and Algorithm 1.
.. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Theorem A.1.
.. [3] Kohli & Blumenstock, arXiv:2408.13424, Definition 2 (TDP) — digest ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee, Release
from engine.mechanisms.base import RecordMechanism, register
from engine.validation import check_array_interval, check_choice, check_interval, check_rng, check_unit_ball

__all__ = ["CALIBRATIONS", "GaussianMechanism", "gaussian_delta", "gaussian_sigma"]

Calibration = Literal["analytic", "classical"]

CALIBRATIONS: dict[str, str] = {
    "analytic": "analytic Gaussian calibration (Balle & Wang 2018): exact, valid for every ε > 0",
    "classical": "classical bound σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth 2014): needs ε < 1, more noise",
}

_CLASSICAL_HINT = "the classical Gaussian bound needs ε < 1 — lower ε or use calibration='analytic'"


def _log_delta(sensitivity, sigma, epsilon):
    """log δ(σ) of the exact privacy profile, computed in log space (no overflow of e^ε, no cancellation)."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    log_first = log_ndtr(a - b)
    log_second = epsilon + log_ndtr(-a - b)
    with np.errstate(divide="ignore"):
        # δ = Φ(a − b)·(1 − e^{log_second − log_first}); the bracket is in [0, 1] in exact arithmetic.
        return log_first + np.log(np.clip(-np.expm1(log_second - log_first), 0.0, 1.0))


def gaussian_delta(sensitivity, sigma, epsilon):
    r"""Exact δ of the Gaussian mechanism N(0, σ²) with L2 sensitivity Δ at privacy loss ε (Balle & Wang, Thm 8).

    .. math:: \delta = \Phi\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
              - e^{\varepsilon}\,\Phi\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)

    The inverse of :func:`gaussian_sigma` with ``calibration="analytic"``.

    Parameters
    ----------
    sensitivity : float or array_like
        L2 sensitivity Δ > 0 (B for the record-level mechanism).
    sigma : float or array_like
        Noise standard deviation per coordinate, > 0.
    epsilon : float or array_like
        Privacy loss, ≥ 0. Arguments broadcast.

    Returns
    -------
    delta : float or ndarray
        The smallest δ for which the mechanism is (ε, δ)-DP (tight), in [0, 1].

    Raises
    ------
    InvalidParameterError
        If a parameter is outside its range.

    References
    ----------
    .. [1] Balle & Wang, ICML 2018, Theorem 8.

    Examples
    --------
    At ε = 0 the profile is the total-variation distance 2Φ(Δ/(2σ)) − 1:

    >>> round(gaussian_delta(1.0, 1.0, 0.0), 6)
    0.382925
    """
    s = check_array_interval("sensitivity", sensitivity, 0, None, closed="neither")
    sd = check_array_interval("sigma", sigma, 0, None, closed="neither")
    e = check_array_interval("epsilon", epsilon, 0, None, closed="left")
    for name, arr in (("sensitivity", s), ("sigma", sd), ("epsilon", e)):
        if not np.isfinite(arr).all():
            raise InvalidParameterError(f"{name} must be finite; got {float(arr[~np.isfinite(arr)][0])}")
    out = np.exp(_log_delta(s, sd, e))
    return float(out) if np.ndim(out) == 0 else out


def _check_sigma_inputs(sensitivity, epsilon, delta, calibration) -> tuple[float, float, float, str]:
    cal = check_choice("calibration", calibration, CALIBRATIONS)
    sens = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    if not math.isfinite(sens):
        raise InvalidParameterError(f"sensitivity must be finite; got {sens}")
    if cal == "classical":
        eps = check_interval("epsilon", epsilon, 0, 1, closed="neither", hint=_CLASSICAL_HINT)
    else:
        eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
        if not math.isfinite(eps):
            raise InvalidParameterError(f"epsilon must be finite; got {eps}")
    dlt = check_interval(
        "delta", delta, 0, 1, closed="neither",
        hint="the Gaussian mechanism needs δ > 0 (pure ε-DP needs Laplace noise)",
    )
    return sens, eps, dlt, cal


def gaussian_sigma(sensitivity, epsilon, delta, calibration: str = "analytic") -> float:
    r"""Noise standard deviation that makes the Gaussian mechanism (ε, δ)-DP at L2 sensitivity Δ.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Δ > 0 (for records: the target distance B).
    epsilon : float
        > 0; below 1 for ``calibration="classical"``.
    delta : float
        In (0, 1).
    calibration : {"analytic", "classical"}
        ``"analytic"``: the smallest σ with :func:`gaussian_delta` (Δ, σ, ε) ≤ δ (Balle & Wang 2018), found by
        Brent's method on log δ(σ) (δ(σ) is strictly decreasing) and then nudged upward until the exact
        profile is within budget (plus a relative 1e-9 margin for floating-point error in δ(σ) itself). ``"classical"``:
        :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Returns
    -------
    sigma : float

    Raises
    ------
    InvalidParameterError
        If a parameter is outside its range (the message for ε ≥ 1 with the classical bound points to the
        analytic calibration).

    References
    ----------
    .. [1] Balle & Wang, ICML 2018, Theorem 8 / Algorithm 1.
    .. [2] Dwork & Roth 2014, Theorem A.1.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 0.5, 1e-5, "classical"), 4)
    9.6896
    >>> sigma = gaussian_sigma(1.0, 1.0, 1e-5)
    >>> round(sigma, 4), gaussian_delta(1.0, sigma, 1.0) <= 1e-5
    (3.7306, True)
    """
    sens, eps, dlt, cal = _check_sigma_inputs(sensitivity, epsilon, delta, calibration)
    if cal == "classical":
        return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
    return _analytic_sigma(sens, eps, dlt)


#: Relative safety margin on the analytic σ (see :func:`_analytic_sigma`).
_SIGMA_MARGIN = 1e-9


def _analytic_sigma(sens: float, eps: float, dlt: float) -> float:
    target = math.log(dlt)

    def excess(ratio: float) -> float:  # log δ(σ) − log δ at σ = ratio·Δ; decreasing in ratio
        return float(_log_delta(1.0, ratio, eps)) - target

    # Bracket the root in ratio = σ/Δ: δ → 1 as σ → 0 and δ → 0 as σ → ∞.
    hi = max(1.0, math.sqrt(2.0 * math.log(1.25 / dlt)) / eps)
    while excess(hi) > 0:
        hi *= 2.0
    lo = hi / 2.0
    while excess(lo) <= 0:
        lo /= 2.0
    ratio = brentq(excess, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    # Round toward privacy with a margin for float64 evaluation error of δ(σ) itself (review: an 80-digit
    # re-derivation found overspends up to 1.6e-10 relative at ε = 1e-3, δ = 1e-12 without it): σ is raised by
    # a relative 1e-9 — far below any utility difference — and then stepped up until our profile is in budget.
    sigma = ratio * sens * (1.0 + _SIGMA_MARGIN)
    for _ in range(200):
        if float(_log_delta(sens, sigma, eps)) <= target:
            return sigma
        sigma = max(np.nextafter(sigma, math.inf), sigma * (1.0 + 1e-13))
    raise RuntimeError("analytic Gaussian calibration failed to meet the budget")  # unreachable: δ decreases


@register
@dataclass(frozen=True)
class GaussianMechanism(RecordMechanism):
    r"""Gaussian mechanism on records: X_priv = X + N(0, σ² I), σ calibrated to L2 sensitivity B.

    Parameters
    ----------
    b : float
        Target distance B in (0, 2]: the L2 sensitivity. B = 2 is classic DP for rows in the unit ball.
    epsilon : float
        > 0 (below 1 for the classical bound).
    delta : float
        In (0, 1).
    calibration : {"analytic", "classical"}
        How σ is chosen; see :func:`gaussian_sigma`.

    Notes
    -----
    Guarantee: (B, ε, δ)-TDP for the substitution of one row (exact for ``"analytic"``; the classical bound is
    a sufficient condition). The output is unbiased (``output_scale = 1``) and every coordinate carries noise
    of standard deviation σ.

    References
    ----------
    .. [1] Balle & Wang, ICML 2018; Dwork & Roth 2014, Theorem A.1; Kohli & Blumenstock, arXiv:2408.13424.

    Examples
    --------
    >>> mech = GaussianMechanism(b=0.25, epsilon=1.0, delta=1e-5)
    >>> round(mech.sigma, 4)
    0.9327
    >>> mech.guarantee().headline()
    '(B = 0.25, ε = 1, δ = 1e-05)-targeted DP for one record'
    """

    KIND = "gaussian"
    LABEL = "Gaussian mechanism (targeted DP)"

    b: float
    epsilon: float
    delta: float
    calibration: Calibration = "analytic"

    def __post_init__(self) -> None:
        check_interval("b", self.b, 0, 2, closed="right", hint="B is an L2 distance in the unit ball")
        _check_sigma_inputs(self.b, self.epsilon, self.delta, self.calibration)

    @cached_property
    def sigma(self) -> float:
        """Noise standard deviation per coordinate (:func:`gaussian_sigma` at sensitivity B)."""
        return gaussian_sigma(self.b, self.epsilon, self.delta, self.calibration)

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, **options) -> GaussianMechanism:
        """The mechanism spending the total (ε, δ) at target distance B (``options``: ``calibration``)."""
        return cls(b=float(b), epsilon=float(epsilon), delta=float(delta), **options)

    def guarantee(self) -> Guarantee:
        notes = [f"σ = {self.sigma:.6g} per coordinate, from the {CALIBRATIONS[self.calibration]}."]
        if self.calibration == "classical":
            analytic = gaussian_sigma(self.b, self.epsilon, self.delta, "analytic")
            notes.append(
                f"The analytic calibration gives the same guarantee with σ = {analytic:.6g} "
                f"({analytic / self.sigma:.0%} of this noise)."
            )
        return Guarantee(
            epsilon=float(self.epsilon),
            delta=float(self.delta),
            b=float(self.b),
            relation="row",
            mechanism=self.LABEL,
            notes=tuple(notes),
        )

    def release(self, x: np.ndarray, *, rng: np.random.Generator) -> Release:
        """Add N(0, σ²) to every entry of ``x`` (n × d, rows in the unit L2 ball).

        Raises
        ------
        InvalidParameterError
            ``x`` is not a finite numeric matrix, or ``rng`` is not a ``numpy.random.Generator``.
        DataValidationError
            A row lies outside the unit L2 ball (prepare the data first), since the guarantee's unit assumes it.
        """
        check_rng(rng)
        arr = check_unit_ball(x, mechanism="the Gaussian mechanism")
        sigma = self.sigma
        value = arr + rng.normal(0.0, sigma, size=arr.shape)
        return Release(
            value=value,
            guarantee=self.guarantee(),
            details={
                "noise_sd_per_coordinate": float(sigma),
                "output_scale": 1.0,
                "calibration": self.calibration,
                "implementation": "direct",
                "sensitivity_l2": float(self.b),
                "delta_at_sigma": float(gaussian_delta(self.b, sigma, self.epsilon)),
            },
        )
