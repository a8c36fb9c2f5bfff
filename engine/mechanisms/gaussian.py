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

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from engine.constraints import Choice, Constraint, Real, check_declared
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee, Release
from engine.mechanisms.base import (
    FormField,
    GaussianTradeoff,
    MechanismReport,
    MechanismTags,
    RecordMechanism,
    ReportMetric,
    register,
)
from engine.mechanisms.samplers import NumpySampler
from engine.validation import check_array_interval, check_choice, check_interval, check_rng, check_unit_ball

if TYPE_CHECKING:
    from engine.accounting.budget import BudgetSplit
    from engine.mechanisms.samplers import NoiseSampler

__all__ = ["CALIBRATIONS", "GaussianMechanism", "gaussian_delta", "gaussian_sigma"]

Calibration = Literal["analytic", "classical"]

CALIBRATIONS: dict[str, str] = {
    "analytic": "analytic Gaussian calibration (Balle & Wang 2018): exact, valid for every ε > 0",
    "classical": "classical bound σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth 2014): needs ε < 1, more noise",
}

_CLASSICAL_HINT = "the classical Gaussian bound needs ε < 1 — lower ε or use calibration='analytic'"


_SQRT2 = math.sqrt(2.0)


def _log_delta_u(u, epsilon):
    r"""log δ as a function of u = Δ/(2σ) − εσ/Δ, stable for every ε > 0 and every u (vectorised).

    With v = √(u² + 2ε) (so that Δ/(2σ) + εσ/Δ = v and v² − u² = 2ε exactly), Theorem 8 of Balle & Wang reads
    δ = Φ(u) − e^ε Φ(−v). Writing Φ(−x) = ½ erfcx(x/√2) e^{−x²/2} removes e^ε analytically (ε − v²/2 = −u²/2):

    * u < 0: δ = Φ(u)(1 − e^L), L = ln erfcx(v/√2) − ln erfcx(−u/√2) ≤ 0; when v − |u| = 2ε/(v + |u|) is tiny,
      L is its second-order Taylor expansion in h = (v − |u|)/√2 < 1e-5 around x = |u|/√2: with g = ln erfcx,
      g'(x) = 2x − 2/(√π erfcx(x)) and g''(x) = 2 + 2g'(x)/(√π erfcx(x)), L = g'h + g''h²/2 (relative error
      ~h²; the direct difference of logarithms would lose ~1e-16/h of its digits).
    * u ≥ 0: δ = ½(erf(u/√2) + erf(v/√2)) − ½ erfcx(v/√2) e^{−u²/2} (1 − e^{−ε}), a difference of terms that
      never cancel badly (the first exceeds the second by at least a factor ~√(1/ε) for small ε).
    """
    # Imported when used: a release that finds no σ (the projection, the command line's start) loads no scipy.
    from scipy.special import erf, erfcx, log_ndtr

    u = np.asarray(u, dtype=float)
    e = np.asarray(epsilon, dtype=float)
    v = np.hypot(u, np.sqrt(2.0) * np.sqrt(e))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        au = np.abs(u)
        gap = 2.0 * e / (v + au)  # v − |u|, without cancellation
        x = au / _SQRT2
        ex = erfcx(x)
        g1 = 2.0 * x - 2.0 / (math.sqrt(math.pi) * ex)
        g2 = 2.0 + 2.0 * g1 / (math.sqrt(math.pi) * ex)
        h = gap / _SQRT2
        small = h < 1e-5
        l_direct = np.log(erfcx(v / _SQRT2)) - np.log(ex)
        l_series = h * g1 + 0.5 * h * h * g2
        big_l = np.minimum(np.where(small, l_series, l_direct), 0.0)
        neg = log_ndtr(u) + np.log(-np.expm1(big_l))
        first = 0.5 * (erf(u / _SQRT2) + erf(v / _SQRT2))
        second = 0.5 * erfcx(v / _SQRT2) * np.exp(-0.5 * u * u) * (-np.expm1(-e))
        pos = np.log(np.maximum(first - second, 0.0))
    return np.where(u < 0, neg, pos)


def _u_of(sensitivity, sigma, epsilon):
    """u = Δ/(2σ) − εσ/Δ (absolute rounding error ~1e-16 · (Δ/(2σ) + εσ/Δ))."""
    r = np.asarray(sigma, dtype=float) / np.asarray(sensitivity, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):
        return 0.5 / r - epsilon * r


def _log_delta(sensitivity, sigma, epsilon):
    """log δ(σ) of the exact privacy profile (:func:`_log_delta_u` at u = Δ/(2σ) − εσ/Δ)."""
    return _log_delta_u(_u_of(sensitivity, sigma, epsilon), epsilon)


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
        Brent's method on log δ as a function of u = Δ/(2σ) − εσ/Δ (strictly monotone, evaluated without
        cancellation for every finite ε > 0, from 1e-300 to 1e308) and then nudged upward until the exact
        profile is within budget (plus a relative 1e-9 margin for floating-point error in δ(σ) itself).
        Checked against 60+-digit arithmetic from ε = 1e-300 to 1e20 and δ = 1e-300 to 0.9. ``"classical"``:
        :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Returns
    -------
    sigma : float

    Raises
    ------
    InvalidParameterError
        If a parameter is outside its range (the message for ε ≥ 1 with the classical bound points to the
        analytic calibration), or if σ itself would overflow or underflow the floating-point range (e.g.
        sensitivity 1e-300 with ε = 1e300).

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
    >>> f"{gaussian_sigma(0.4, 1e200, 1e-5):.6e}"  # ε → ∞: σ → Δ/√(2ε)
    '2.828427e-101'
    """
    sens, eps, dlt, cal = _check_sigma_inputs(sensitivity, epsilon, delta, calibration)
    if cal == "classical":
        return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
    return _analytic_sigma(sens, eps, dlt)


#: Relative safety margin on the analytic σ (see :func:`_analytic_sigma`).
_SIGMA_MARGIN = 1e-9


def _analytic_sigma(sens: float, eps: float, dlt: float) -> float:
    """Smallest σ (up to a relative ~1e-9, on the private side) with δ(σ) ≤ δ, for every ε > 0 and δ ∈ (0, 1).

    The root is found in u = Δ/(2σ) − εσ/Δ, where log δ(u) is evaluated stably (:func:`_log_delta_u`), and
    mapped back by σ/Δ = 1/(u + v) (u ≥ 0) or (v − u)/(2ε) (u < 0), v = √(u² + 2ε) — both free of cancellation.
    This covers the extremes that broke the old root finder in σ (ε = 1e200: σ ≈ Δ/√(2ε); ε = 1e-100:
    σ ≈ Δ/(δ√(2π))).
    """
    from scipy.optimize import brentq
    from scipy.special import ndtri

    target = math.log(dlt)

    def excess(u: float) -> float:  # log δ(u) − log δ; increasing in u
        return float(_log_delta_u(u, eps)) - target

    lo = float(ndtri(dlt)) - 1.0  # δ(u) ≤ Φ(u): below u = Φ⁻¹(δ) the budget holds
    while excess(lo) > 0:  # safety against rounding at the bracket's end
        lo -= 1.0 + abs(lo)
    step = 1.0
    hi = lo + step
    while excess(hi) <= 0:
        lo, step = hi, 2.0 * step
        hi = lo + step
    u = brentq(excess, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    v = math.hypot(u, math.sqrt(2.0) * math.sqrt(eps))
    ratio = 1.0 / (u + v) if u >= 0 else (0.5 * (v - u)) / eps
    sigma = ratio * sens * (1.0 + _SIGMA_MARGIN)
    if not (math.isfinite(sigma) and sigma > 0.0 and math.isfinite(eps * sigma / sens)):
        raise InvalidParameterError(
            f"the analytic Gaussian σ for sensitivity = {sens:g}, epsilon = {eps:g}, delta = {dlt:g} is "
            f"{ratio:.3g} × the sensitivity, which is outside the floating-point range — use a sensitivity "
            "closer to 1 (rescale the data) or a less extreme ε"
        )
    # Round toward privacy with a margin for float64 evaluation error of δ(σ) itself (review: an 80-digit
    # re-derivation found overspends up to 1.6e-10 relative at ε = 1e-3, δ = 1e-12 without it): σ is raised by
    # a relative 1e-9 — far below any utility difference — and then stepped up until our profile is in budget.
    # The margin moves u by ~1e-9·v, far more than the ~1e-16·v rounding error of u(σ), so the check below is
    # reliable even where δ is extremely sensitive to σ (huge ε).
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
    SHORT_LABEL = "Gaussian"
    TAGS = MechanismTags(
        budgeted=True,
        sweep_options=("calibration",),
        preselected=True,
        samplers=("numpy", "opendp"),
        partition_modes=("global",),
        exact_tradeoff=True,
    )
    FORM = (
        FormField("b", "Target distance B", "Two records whose prepared rows are within L2 distance B cannot be told "
                  "apart beyond (ε, δ); B = 2 is classic DP.", format="%.4f", step=0.01),
        FormField("epsilon", "Privacy loss ε", "How much one record may change the release's distribution "
                  "(smaller is more private).", format="%.4f", step=0.1),
        FormField("delta", "δ", "The probability with which the ε bound may fail (typically at most 1/n).",
                  format="%.3e", step=1e-6, high=1.0),
        FormField("calibration", "Calibration", "analytic (Balle & Wang): the smallest σ with the exact guarantee, "
                  "any ε. classical: σ = B·√(2 ln(1.25/δ))/ε, needs ε < 1 and adds more noise."),
    )

    b: float
    epsilon: float
    delta: float
    calibration: Calibration = "analytic"

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "b": Real(0, 2, closed="right", hint="B is an L2 distance in the unit ball"),
        "epsilon": Real(0, None, closed="neither"),  # and < 1 for the classical calibration, checked below
        "delta": Real(0, 1, closed="neither", hint="the Gaussian mechanism needs δ > 0 (pure ε-DP needs Laplace noise)"),
        "calibration": Choice(tuple(CALIBRATIONS)),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        _check_sigma_inputs(self.b, self.epsilon, self.delta, self.calibration)
        _ = self.sigma  # refuses (B, ε, δ) whose σ is not a representable number, at construction

    @cached_property
    def sigma(self) -> float:
        """Noise standard deviation per coordinate (:func:`gaussian_sigma` at sensitivity B)."""
        return gaussian_sigma(self.b, self.epsilon, self.delta, self.calibration)

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        return {"gaussian": cls(b=0.5, epsilon=1.0, delta=1e-5),
                "gaussian-classical": cls(b=2.0, epsilon=0.5, delta=1e-5, calibration="classical")}

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, *, d: int | None = None,
                    split: BudgetSplit | None = None, **options: Any) -> GaussianMechanism:
        """The mechanism spending the total (ε, δ) at target distance B in one step (``d`` and a split play no role;
        ``options``: ``calibration``)."""
        return cls(b=float(b), epsilon=float(epsilon), delta=float(delta), **options)

    def exact_tradeoff(self, distance: float) -> GaussianTradeoff:
        """N(0, σ²) against N(distance, σ²): the exact trade-off of two records ``distance`` apart."""
        return GaussianTradeoff(float(distance), float(self.sigma))

    def partition_mode(self, requested: str) -> tuple[str, str | None]:
        """Both out-of-core modes are the global one: every entry gets independent noise, nothing is shared."""
        if requested == "partitioned":
            return "global", (
                "--dask-mode partitioned was asked for; for the Gaussian mechanism (independent noise on every entry) "
                "it is the same release as the global mode, which is what ran"
            )
        return super().partition_mode(requested)

    def report(self, details: Any) -> MechanismReport:
        return MechanismReport(metrics=(
            ReportMetric("σ (per coordinate)", float(self.sigma), "Noise standard deviation on every value."),
            ReportMetric("Calibration", self.calibration, CALIBRATIONS[self.calibration]),
        ))

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

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        """Add N(0, σ²) to every entry of ``x`` (n × d, rows in the unit L2 ball), drawn by ``sampler`` (default:
        numpy on ``rng``; OpenDP's vetted sampler through :func:`engine.release.privatize`).

        Raises
        ------
        InvalidParameterError
            ``x`` is not a finite numeric matrix, or ``rng`` is not a ``numpy.random.Generator``.
        DataValidationError
            A row lies outside the unit L2 ball (prepare the data first), since the guarantee's unit assumes it.
        """
        if sampler is None:
            check_rng(rng)
            assert rng is not None
            sampler = NumpySampler(rng)
        arr = check_unit_ball(x, mechanism="the Gaussian mechanism")
        sigma = self.sigma
        value, drawn = sampler.add_gaussian(arr, sigma, sensitivity=float(self.b), epsilon=float(self.epsilon))
        drawn = dict(drawn)
        delta_at = float(gaussian_delta(self.b, sigma, self.epsilon))
        effective = drawn.get("opendp_effective_sensitivity")
        if effective is not None:  # OpenDP's rounding: σ was raised for the effective sensitivity (samplers)
            raised = float(drawn["noise_sd_per_coordinate"])
            stated = float(gaussian_delta(float(effective), raised, self.epsilon))
            if not stated <= delta_at:  # holds by σ'/Δ' ≥ σ/B; a change must not pass silently
                raise RuntimeError(f"σ' = {raised!r} at Δ' = {effective!r} gives δ = {stated!r} > {delta_at!r}")
            delta_at = stated
        guarantee = self.guarantee()
        note = drawn.pop("note", None)
        if note is not None:
            guarantee = dataclasses.replace(guarantee, notes=(*guarantee.notes, str(note)))
        return Release(
            value=value,
            guarantee=guarantee,
            details={
                "noise_sd_per_coordinate": float(sigma),
                "output_scale": 1.0,
                "calibration": self.calibration,
                "implementation": "direct",
                "sensitivity_l2": float(self.b),
                "delta_at_sigma": delta_at,
                **drawn,
            },
        )
