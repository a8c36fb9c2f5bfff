r"""Calibrating a sum mechanism's noise parameter: to a common accuracy, or to a target loss (ours).

Comparing policy functions at equal σ is meaningless — σ lives on different scales (transformed totals, noise
scales). The dashboard compares mechanisms **at matched accuracy** (spec §5.4, ours): every mechanism is tuned
so that its estimate has the same standard deviation (or the same (1−β) interval half-width) at a planning total
``q_ref``, and only then are the policy curves overlaid.

* Additive mechanisms and the Gaussian baselines are scale families in their noise parameter: SD and
  half-width are proportional to it, so one rescaling solves the target exactly.
* Transformation mechanisms: the variance and half-width are increasing in σ; the root is found by brentq on
  ``log σ`` after bracketing.
* :func:`calibrate_loss` solves the other way round: the noise for which a record of size ``x_ref`` loses
  exactly ``loss`` (in ρ or ε); the result is nudged so the loss never exceeds the target (round toward privacy).

``q_ref`` is a *planning* value chosen by the designer; never use the confidential true total.

References
----------
.. [1] Digest ``shared/spec/003-per-record-dp.md`` §5.4 and §7.1 (calibration modes, ours).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from scipy.optimize import brentq

from engine.errors import InfeasibleTargetError, InvalidParameterError
from engine.per_record.base import SumMechanism, check_beta
from engine.validation import check_choice, check_interval

#: Provenance shown by the UI next to calibrated parameters.
SOURCE = "ours: calibration to equal accuracy / target loss (digest §5.4, §7.1; not in the paper)"

_SCALE_FAMILIES = ("additive", "baseline")


def _finite(value: float, what: str) -> float:
    if not (math.isfinite(value) and value > 0):
        raise InfeasibleTargetError(
            f"the mechanism's {what} is {value:g} at its current parameters (beyond floating point); choose a less "
            "extreme shape (larger p or d) before calibrating"
        )
    return value


def _log(value: float) -> float:
    """log of a non-negative quantity; 0 → −inf, inf → inf (NaN → NaN)."""
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan


#: log of the noise parameter stays in the positive normal float range.
_LOG_NOISE_RANGE = (math.log(np.finfo(float).tiny), math.log(np.finfo(float).max))


def _solve_log(
    mechanism: SumMechanism, log_quantity: Callable[[SumMechanism], float], log_target: float, what: str,
    *, increasing: bool = True,
) -> SumMechanism:
    """Noise parameter θ with log_quantity(θ) = log_target, for a quantity monotone in θ (root in log θ).

    Everything is in log space, so quantities that underflow to 0 or overflow to inf still order correctly; the
    bracket grows geometrically over the whole float range of θ."""
    sign = 1.0 if increasing else -1.0
    low_end, high_end = _LOG_NOISE_RANGE

    def gap(log_theta: float) -> float:
        value = sign * (log_quantity(mechanism.with_noise(math.exp(log_theta))) - log_target)
        if math.isnan(value):
            raise InfeasibleTargetError(f"the mechanism's accuracy or loss is undefined at "
                                        f"{mechanism.NOISE_PARAMETER} = {math.exp(log_theta):g}; cannot reach {what}")
        return max(min(value, 1e300), -1e300)  # brentq needs finite values; the sign is what matters

    lo = hi = math.log(mechanism.noise)
    g_lo = g_hi = gap(lo)
    step = 1.0
    while not (g_lo <= 0 <= g_hi):
        if g_hi < 0:
            if hi >= high_end:
                raise InfeasibleTargetError(f"no value of {mechanism.NOISE_PARAMETER} gives {what}")
            lo, g_lo = hi, g_hi
            hi = min(hi + step, high_end)
            g_hi = gap(hi)
        else:
            if lo <= low_end:
                raise InfeasibleTargetError(f"no value of {mechanism.NOISE_PARAMETER} gives {what}")
            hi, g_hi = lo, g_lo
            lo = max(lo - step, low_end)
            g_lo = gap(lo)
        step *= 2.0
    if g_lo == 0:
        return mechanism.with_noise(math.exp(lo))
    if g_hi == 0:
        return mechanism.with_noise(math.exp(hi))
    root = brentq(gap, lo, hi, xtol=1e-14, rtol=1e-14)
    return mechanism.with_noise(math.exp(root))


def _solve_increasing(
    mechanism: SumMechanism, quantity: Callable[[SumMechanism], float], target: float, what: str
) -> SumMechanism:
    """Noise parameter θ with quantity(θ) = target, for a quantity increasing in θ (root in log θ)."""
    return _solve_log(mechanism, lambda m: _log(quantity(m)), math.log(target), what)


def check_mechanism(mechanism: object, name: str = "mechanism") -> SumMechanism:
    """``mechanism`` itself if it is a configured sum mechanism; otherwise an error naming the fix."""
    if not isinstance(mechanism, SumMechanism):
        raise InvalidParameterError(
            f"{name} must be a per-record sum mechanism (e.g. GaussianSum(sigma=1.0), or "
            f"sum_mechanism_from_dict({{'kind': 'gaussian', 'sigma': 1.0}})); got {type(mechanism).__name__}"
        )
    return mechanism


def calibrate_sd(mechanism: SumMechanism, target_sd: float, q_ref: float = 0.0) -> SumMechanism:
    """Copy of ``mechanism`` whose estimate has standard deviation ``target_sd`` at the planning total ``q_ref``.

    Other parameters (k, a, p, d, τ) stay fixed; only ``NOISE_PARAMETER`` changes.

    Raises
    ------
    InvalidParameterError
        If the mechanism has no finite variance (EPL p = 1 with d ≤ 3): calibrate the half-width instead.

    Examples
    --------
    Spec §5.4: the log transform with a = 1 at q = 10⁶ and SD = 10⁴ needs σ ≈ 0.00999974.

    >>> from engine.per_record.transformation import LogTransformation
    >>> round(calibrate_sd(LogTransformation(a=1.0), 1e4, 1e6).sigma, 8)
    0.00999974
    """
    check_mechanism(mechanism)
    target = check_interval("target_sd", target_sd, 0, None, closed="neither")
    q = check_interval("q_ref", q_ref, 0, None, hint="a planning total, not the confidential one")
    if mechanism.FAMILY in _SCALE_FAMILIES:
        return mechanism.with_noise(mechanism.noise * target / _finite(float(mechanism.sd(q)), "standard deviation"))
    return _solve_increasing(mechanism, lambda m: float(m.sd(q)), target, f"SD {target:g} at q = {q:g}")


def calibrate_half_width(
    mechanism: SumMechanism, half_width: float, q_ref: float = 0.0, beta: float = 0.05
) -> SumMechanism:
    """Copy of ``mechanism`` whose (1−β) interval has planning half-width ``half_width`` at total ``q_ref``.

    Works for every mechanism, including heavy-tailed ones without a variance.
    """
    check_mechanism(mechanism)
    target = check_interval("half_width", half_width, 0, None, closed="neither")
    q = check_interval("q_ref", q_ref, 0, None, hint="a planning total, not the confidential one")
    b = check_beta(beta)
    if mechanism.FAMILY in _SCALE_FAMILIES:
        width = _finite(float(mechanism.half_width(q, b)), "interval half-width")
        return mechanism.with_noise(mechanism.noise * target / width)
    return _solve_increasing(
        mechanism, lambda m: float(m.half_width(q, b)), target, f"half-width {target:g} at q = {q:g}"
    )


def calibrate_accuracy(
    mechanism: SumMechanism,
    target: float,
    q_ref: float = 0.0,
    *,
    by: Literal["sd", "relative_sd", "half_width"] = "sd",
    beta: float = 0.05,
) -> SumMechanism:
    """Dispatch: ``by="sd"`` (absolute SD), ``"relative_sd"`` (SD / q_ref), ``"half_width"`` ((1−β) interval)."""
    check_mechanism(mechanism)
    check_choice("by", by, ["sd", "relative_sd", "half_width"])
    target = check_interval("target", target, 0, None, closed="neither", hint="the accuracy to reach")
    if by == "half_width":
        return calibrate_half_width(mechanism, target, q_ref, beta)
    if by == "relative_sd":
        q = check_interval("q_ref", q_ref, 0, None, closed="neither", hint="a relative SD needs q_ref > 0")
        return calibrate_sd(mechanism, target * q, q)
    return calibrate_sd(mechanism, target, q_ref)


def calibrate_all(
    mechanisms: Sequence[SumMechanism],
    target: float,
    q_ref: float = 0.0,
    *,
    by: Literal["sd", "relative_sd", "half_width"] = "sd",
    beta: float = 0.05,
) -> list[SumMechanism]:
    """:func:`calibrate_accuracy` for each mechanism (same target), preserving order.

    The shared arguments are checked once, up front (messages name ``target``, ``q_ref``, ``by``, ``beta``)."""
    check_choice("by", by, ["sd", "relative_sd", "half_width"])
    target = check_interval("target", target, 0, None, closed="neither", hint="the accuracy to reach")
    check_interval("q_ref", q_ref, 0, None, hint="a planning total, not the confidential one")
    check_beta(beta)
    for i, m in enumerate(mechanisms):
        check_mechanism(m, f"mechanisms[{i}]")
    return [calibrate_accuracy(m, target, q_ref, by=by, beta=beta) for m in mechanisms]


def calibrate_loss(
    mechanism: SumMechanism, x_ref: float, loss: float, *, unit: Literal["rho", "epsilon"] = "rho"
) -> SumMechanism:
    """Copy of ``mechanism`` whose loss for a record of value ``x_ref`` equals ``loss`` (never more).

    ``unit="rho"`` compares ``policy_rho(x_ref)``; ``unit="epsilon"`` needs a PRDP (additive) mechanism.
    Closed forms exist (digest §7.1, e.g. Gaussian σ = x₀/√(2ρ₀)); the generic root finder reproduces them.

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> round(calibrate_loss(GaussianSum(), 10.0, 0.5).sigma, 12)
    10.0
    """
    check_mechanism(mechanism)
    x = check_interval("x_ref", x_ref, 0, None, closed="neither")
    target = check_interval("loss", loss, 0, None, closed="neither")
    check_choice("unit", unit, ["rho", "epsilon"])
    if unit == "epsilon" and mechanism.UNIT != "epsilon":
        raise InfeasibleTargetError(
            f"{mechanism.LABEL} is analysed in ρ (PRzCDP); give the target loss in ρ (unit='rho')"
        )
    loss_of = (lambda m: float(m.policy(x))) if unit == "epsilon" else (lambda m: float(m.policy_rho(x)))
    # the loss is decreasing in the noise parameter; solve in log space (losses may underflow to 0)
    solved = _solve_log(mechanism, lambda m: _log(loss_of(m)), math.log(target), f"loss {target:g} at x = {x:g}",
                        increasing=False)
    for i in range(200):  # round toward privacy: the returned noise never gives more than the target loss
        if loss_of(solved) <= target:
            return solved
        noise = solved.noise * (1.0 + 1e-12 * 2.0**i)
        if not math.isfinite(noise):
            break
        solved = solved.with_noise(noise)
    raise InfeasibleTargetError(f"could not reach loss ≤ {target:g} at x = {x:g}")


__all__ = [
    "calibrate_accuracy",
    "calibrate_all",
    "calibrate_half_width",
    "calibrate_loss",
    "calibrate_sd",
    "check_mechanism",
]
