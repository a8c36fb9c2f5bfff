r"""Units of per-record privacy loss: ε (PRDP), ρ (PRzCDP) and the (ε, δ)-DP a ρ implies.

Additive mechanisms (generalized Gaussian, exponential polylogarithmic) are analysed in ε (per-record pure DP,
Definition 5.1); transformation mechanisms, unit splitting and the Gaussian baseline in ρ (per-record zCDP,
Definition 2.11). The two are different units: never overlay them on one axis. Convert ε → ρ with Lemma 5.2
(``ρ = ε·tanh(ε/2)``) first, and label every number with its unit — :class:`LossValues` carries the label.

References
----------
.. [1] Finley et al., "Slowly Scaling Per-Record Differential Privacy", arXiv:2409.18118, Lemma 5.2.
       Digest: ``shared/spec/003-per-record-dp.md`` §1.5, §5.1.
.. [2] Bun & Steinke, "Concentrated Differential Privacy", TCC 2016, Proposition 1.3 (ρ-zCDP ⇒ (ε, δ)-DP).
.. [3] Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
       Proposition 12 / Corollary 13 (an improved, not tight, conversion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from engine.errors import InvalidParameterError
from engine.validation import check_array_interval, check_choice, check_interval

Unit = Literal["rho", "epsilon"]

#: Axis labels for each unit. Use these (never a bare "loss") so ε and ρ cannot be confused.
UNIT_LABELS: dict[str, str] = {
    "rho": "ρ (per-record zCDP)",
    "epsilon": "ε (per-record pure DP)",
    "dp_epsilon": "ε of (ε, δ)-DP",
    "tdp_epsilon": "ε of (ε, δ)-DP under TDP (δ grows with the distance)",
}
UNIT_SYMBOLS: dict[str, str] = {"rho": "ρ", "epsilon": "ε", "dp_epsilon": "ε (δ > 0)", "tdp_epsilon": "ε (δ > 0)"}

#: Which (ε, δ) conversion :func:`zcdp_to_dp` uses by default, with the text the UI should show.
CONVERSION_TEXT: dict[str, str] = {
    "cks": "improved conversion of Canonne, Kamath & Steinke (2020, Prop. 12), optimised over the Rényi order α "
    "(an upper bound, not tight)",
    "standard": "standard conversion ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3)",
}

_TANH1 = math.tanh(1.0)


def check_nonnegative(name: str, value, hint: str = "") -> np.ndarray:
    """``value`` as a float array with every entry in [0, ∞] — ``inf`` allowed (an unbounded loss), NaN and
    negatives refused with the usual message (:func:`engine.validation.check_array_interval`)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return check_array_interval(name, value, 0, None, hint=hint)  # raises the standard message
    raw = np.asarray(value)
    if raw.dtype == bool or raw.dtype.kind in "OUSV":
        check_array_interval(name, value, 0, None, hint=hint)  # text/bool: refused there
    check_array_interval(name, np.where(arr == np.inf, 0.0, arr), 0, None, hint=hint)
    return arr


def _ret(arr: np.ndarray):
    return float(arr) if np.ndim(arr) == 0 else arr


def epsilon_to_rho(epsilon):
    r"""ρ of per-record zCDP implied by a per-record pure-DP loss ε (Lemma 5.2): :math:`ρ = ε\tanh(ε/2)`.

    Vectorised; ε ≥ 0 (``inf`` maps to ``inf``). The bound is at most ``min(ε, ε²/2)`` and is tight as α → 1
    (the KL divergence of ε-randomised response).

    Examples
    --------
    >>> round(epsilon_to_rho(1.0), 6)
    0.462117
    >>> round(epsilon_to_rho(10.0), 6)
    9.999092
    """
    eps = check_array_interval("epsilon", epsilon, 0, None, allow_inf=True)  # an unbounded loss is a loss
    with np.errstate(invalid="ignore"):
        out = np.where(np.isinf(eps), np.inf, eps * np.tanh(eps / 2.0))
    return _ret(out)


def rho_to_epsilon(rho):
    r"""Inverse of :func:`epsilon_to_rho`: the ε with ε·tanh(ε/2) = ρ (ρ ≥ 0; vectorised).

    ``ε·tanh(ε/2)`` is strictly increasing, so the inverse is unique. It is found by bisection on log ε inside
    the bracket ``[max(ρ, √(2ρ)), max(ρ, √(2ρ))/tanh(1)]`` (valid because ``ε tanh(ε/2) ≤ min(ε, ε²/2)`` and
    ``tanh(ε/2) ≥ tanh(1)·min(1, ε/2)``), then polished by two Newton steps; it is accurate to a few ulps from
    ρ = 1e-300 to 1e300.

    Note this inverse is a *unit conversion of a number*, not a privacy implication: a ρ-PRzCDP mechanism is
    not ε-PRDP.

    Examples
    --------
    >>> round(rho_to_epsilon(0.5), 6)
    1.043627
    >>> round(rho_to_epsilon(5.0), 6)
    5.063628
    """
    r = check_array_interval("rho", rho, 0, None, allow_inf=True)  # an unbounded loss is a loss
    flat = np.atleast_1d(r).astype(float).ravel()
    out = np.zeros_like(flat)
    pos = (flat > 0) & np.isfinite(flat)
    out[np.isinf(flat)] = np.inf
    if pos.any():
        rr = flat[pos]
        lo = np.maximum(rr, np.sqrt(2.0 * rr))
        hi = np.maximum(np.sqrt(2.0 * rr / _TANH1), rr / _TANH1) * (1 + 1e-12)
        llo, lhi = np.log(lo), np.log(hi)
        for _ in range(80):
            mid = 0.5 * (llo + lhi)
            e = np.exp(mid)
            above = e * np.tanh(e / 2.0) > rr
            lhi = np.where(above, mid, lhi)
            llo = np.where(above, llo, mid)
        e = np.exp(0.5 * (llo + lhi))
        for _ in range(2):
            t = np.tanh(e / 2.0)
            g = e * t - rr
            dg = t + e * (1.0 - t * t) / 2.0
            e = np.clip(e - g / dg, np.exp(llo) * (1 - 1e-12), np.exp(lhi) * (1 + 1e-12))
        out[pos] = e
    return _ret(out.reshape(np.shape(r)))


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _cks_epsilon(rho: np.ndarray, delta: float) -> np.ndarray:
    """min over α > 1 of αρ + (ln(1/δ) − ln α)/(α − 1) + ln(1 − 1/α) (Canonne–Kamath–Steinke, Prop. 12).

    Vectorised golden-section search in u = ln(α − 1) on a window of ±12 around the standard optimum
    α* = 1 + √(ln(1/δ)/ρ) (the objective is unimodal in u); 64 iterations shrink the window to ~1e-12, and the objective is flat
    (quadratic) at the minimum, so ε is exact to rounding.
    Entries with ρ = 0 give 0.
    """
    log_inv_delta = -math.log(delta)
    out = np.zeros_like(rho)
    pos = rho > 0
    if not pos.any():
        return out
    r = rho[pos]

    def objective(u: np.ndarray) -> np.ndarray:
        am1 = np.exp(u)
        alpha = 1.0 + am1
        log_alpha = np.log1p(am1)  # exact for tiny α − 1
        return alpha * r + (log_inv_delta - log_alpha) / am1 + np.log(am1) - log_alpha

    u0 = 0.5 * (math.log(log_inv_delta) - np.log(r))
    lo, hi = u0 - 12.0, u0 + 12.0
    x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, f2 = objective(x1), objective(x2)
    for _ in range(64):
        left = f1 < f2  # the minimum lies in [lo, x2]: drop (x2, hi]; else drop [lo, x1)
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        keep_x, keep_f = np.where(left, x1, x2), np.where(left, f1, f2)  # the surviving interior point
        new_x = np.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        new_f = objective(new_x)
        x1, f1 = np.where(left, new_x, keep_x), np.where(left, new_f, keep_f)
        x2, f2 = np.where(left, keep_x, new_x), np.where(left, keep_f, new_f)
    out[pos] = np.maximum(0.0, np.minimum(f1, f2))
    return out


def zcdp_to_dp(rho, delta, *, method: Literal["cks", "standard"] = "cks"):
    r"""(ε, δ)-DP implied by ρ-zCDP (or by a per-record ρ: the same conversion per record).

    ``method="standard"``: :math:`ε = ρ + 2\sqrt{ρ\ln(1/δ)}` (Bun & Steinke 2016, Prop. 1.3).

    ``method="cks"`` (default, what the dashboard shows): the improved conversion
    :math:`ε = \min_{α>1}\; αρ + \frac{\ln(1/δ) - \ln α}{α-1} + \ln(1 - 1/α)` (Canonne, Kamath & Steinke 2020,
    Prop. 12, the conversion used by Google's RDP accountant), minimised numerically over α. It is never larger
    than the standard value (the result is the minimum of both, so rounding can only favour the standard one).
    Neither is tight: for the Gaussian mechanism with ρ = 1, δ = 1e-6 the exact ε is 7.286 while this gives
    7.766 (the standard one 8.434).

    Neither conversion is in the per-record paper (the digest's §6, gotcha 8 suggests the standard one) — ours.

    For a *pure* ε-DP loss use :func:`dp_epsilon`, which never reports more than ε.

    Parameters
    ----------
    rho : float or array_like
        ρ ≥ 0.
    delta : float
        In (0, 1).
    method : {"cks", "standard"}

    Returns
    -------
    epsilon : float or ndarray

    Examples
    --------
    >>> round(zcdp_to_dp(0.5, 1e-6, method="standard"), 6)
    5.756522
    >>> zcdp_to_dp(0.5, 1e-6) < zcdp_to_dp(0.5, 1e-6, method="standard")
    True
    """
    r = check_array_interval("rho", rho, 0, None, allow_inf=True)  # an unbounded loss is a loss
    d = check_interval("delta", delta, 0, 1, closed="neither", hint="a zCDP guarantee needs δ > 0 to become (ε, δ)-DP")
    check_choice("method", method, CONVERSION_TEXT)
    standard = r + 2.0 * np.sqrt(r * math.log(1.0 / d))
    if method == "standard":
        return _ret(standard)
    flat = np.atleast_1d(r).astype(float).ravel()
    finite = np.isfinite(flat)
    improved = np.full(flat.shape, np.inf)
    uniq, inverse = np.unique(flat[finite], return_inverse=True)  # many records share a value
    improved[finite] = _cks_epsilon(uniq, d)[inverse]
    return _ret(np.minimum(improved.reshape(np.shape(r)), standard))


def dp_epsilon(loss, unit: Unit, delta, *, method: Literal["cks", "standard"] = "cks"):
    r"""ε of (ε, δ)-DP implied by per-record losses in ``unit`` (vectorised).

    * ``unit="rho"``: :func:`zcdp_to_dp` of ρ.
    * ``unit="epsilon"`` (pure per-record DP, additive mechanisms): :math:`\min(ε, \mathrm{conv}(ε\tanh(ε/2), δ))`
      — pure ε-DP implies (ε, δ)-DP for every δ, so the detour through ρ may only lower the figure, never raise
      it above ε (for ε = 0.5, 2, 10 at δ = 1e-6 the detour alone gives 2.39, 9.94, 32.2).

    Examples
    --------
    >>> dp_epsilon([0.5, 2.0, 10.0], "epsilon", 1e-6).tolist()
    [0.5, 2.0, 10.0]
    >>> round(dp_epsilon(0.5, "rho", 1e-6, method="standard"), 6)
    5.756522
    """
    check_choice("unit", unit, ["rho", "epsilon"])
    if unit == "rho":
        return zcdp_to_dp(loss, delta, method=method)
    eps = check_nonnegative("epsilon", loss)
    via_rho = np.asarray(zcdp_to_dp(epsilon_to_rho(eps), delta, method=method))
    return _ret(np.minimum(eps, via_rho))


@dataclass(frozen=True)
class LossValues:
    """Per-record losses together with their unit, so a chart or table can never mix ε and ρ.

    Attributes
    ----------
    values : ndarray
        The losses (read-only).
    unit : {"rho", "epsilon", "dp_epsilon"}
        ``"dp_epsilon"`` is the ε of approximate (ε, δ)-DP obtained from ρ; ``delta`` then says which δ.
    delta : float or None
        Only for ``unit="dp_epsilon"``.
    """

    values: np.ndarray
    unit: Literal["rho", "epsilon", "dp_epsilon"]
    delta: float | None = None

    def __post_init__(self) -> None:
        check_choice("unit", self.unit, ["rho", "epsilon", "dp_epsilon"])
        if (self.unit == "dp_epsilon") != (self.delta is not None):
            raise InvalidParameterError("delta must be given exactly when unit is 'dp_epsilon'")
        arr = np.array(self.values, dtype=float)
        arr.setflags(write=False)
        object.__setattr__(self, "values", arr)

    @property
    def label(self) -> str:
        """Axis label, e.g. "ρ (per-record zCDP)" or "ε of (ε, δ)-DP at δ = 1e-06"."""
        if self.unit == "dp_epsilon":
            return f"{UNIT_LABELS[self.unit]} at δ = {self.delta:g}"
        return UNIT_LABELS[self.unit]

    def to_rho(self) -> LossValues:
        """The same losses in ρ (ε → ρ by Lemma 5.2; ρ unchanged)."""
        if self.unit == "rho":
            return self
        if self.unit == "dp_epsilon":
            raise InvalidParameterError("(ε, δ)-DP values cannot be converted back to ρ")
        return LossValues(np.asarray(epsilon_to_rho(self.values)), "rho")

    def to_dp(self, delta: float, *, method: Literal["cks", "standard"] = "cks") -> LossValues:
        """(ε, δ)-DP ε per record at the given δ (unit ``"dp_epsilon"``): from ρ by :func:`zcdp_to_dp`; from a pure
        ε never more than ε itself (:func:`dp_epsilon`)."""
        if self.unit == "dp_epsilon":
            raise InvalidParameterError("these values are already (ε, δ)-DP")
        eps = np.asarray(dp_epsilon(self.values, self.unit, delta, method=method))
        return LossValues(eps, "dp_epsilon", float(delta))
