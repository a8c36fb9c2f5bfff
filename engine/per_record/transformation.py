r"""Transformation mechanisms (Algorithm 1): add Gaussian noise to a concave transform of the total.

``ṽ = f(q + a) + N(0, σ²)``, then any estimator ``g(ṽ)``. Theorem 4.4: the mechanism is P-PRzCDP with

.. math:: P(x) = \frac{|f(x + a) - f(a)|^2}{2σ^2}

for every estimator g (post-processing). The policy is a worst case over databases, attained by a record that is
alone (q = 0); records inside large totals suffer less, but PRzCDP cannot claim that (spec gotcha 17).

``sample`` returns ṽ (the transformed noisy total). ``estimate`` is the mean-unbiased g of Theorem 4.9;
``estimate_median`` and the exact intervals from the pivot ``ṽ − f(q + a) ~ N(0, σ²)`` are ours (the paper's
appendix on median-unbiased estimators is missing from the seed), as is the unbiased variance estimate.

The variance of the estimate grows with the confidential total q: ``variance(q)`` is for planning only; publish
``variance_estimate(output)`` or the interval instead (spec gotcha 16).

References
----------
.. [1] Finley et al., arXiv:2409.18118, Algorithm 1, Theorem 4.4, Corollaries 4.5 and 4.7, Theorem 4.9
       (from Washio, Morimoto & Ikeda 1956), Table 2. Digest: ``shared/spec/003-per-record-dp.md`` §2.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.polynomial import hermite_e
from scipy.stats import norm

from engine.constraints import Constraint, Integer, Real, check_declared
from engine.per_record.base import SumMechanism, register_sum
from engine.per_record.units import Unit

VARIANCE_CAUTION = (
    "The variance of a transformation mechanism grows with the confidential total: publish the variance estimate "
    "or the interval computed from the output, never the variance at the true total."
)

_TRANSFORM_SOURCES = {
    "variance_estimate": "ours: σ^m He_m(ṽ/σ) is unbiased for v^m (Monte Carlo checked)",
    "median": "ours: f⁻¹(ṽ) − a, median-unbiased because ṽ has median f(q + a) (paper appendix missing)",
    "interval": "ours: exact interval from the pivot ṽ − f(q + a) ~ N(0, σ²), clipped to q ≥ 0",
    "half_width": "ours: half the interval length at ṽ = f(q + a)",
    "sampler": "numpy normal on the transformed scale",
}


@register_sum
@dataclass(frozen=True)
class KthRootTransformation(SumMechanism):
    r"""k-th-root transformation mechanism: ``ṽ = (q + a)^{1/k} + N(0, σ²)`` (Corollary 4.5, Theorem 4.9).

    Policy (ρ-PRzCDP): :math:`P(x) = ((x + a)^{1/k} - a^{1/k})^2 / (2σ^2)`; for a = 0 it is
    :math:`x^{2/k}/(2σ^2)` (k = 2 linear, k = 4 square root). k = 1 is the Gaussian mechanism.

    Unbiased estimator :math:`g(ṽ) = σ^k He_k(ṽ/σ) - a` (probabilists' Hermite polynomial; equal to the paper's
    :math:`(-σ)^k He_k(-ṽ/σ) - a` by parity), variance
    :math:`\sum_{i=0}^{k-1} \binom{k}{i}^2 (k-i)!\, σ^{2(k-i)} (q+a)^{2i/k}`.

    Parameters
    ----------
    k : int
        Root order, a whole number in [1, 12] (the unbiased estimator needs an integer k; spec gotcha 6).
    a : float
        Offset a ≥ 0 (f's domain [a, ∞) requires it; spec gotcha 5). a = 0 gives tiny records a steep loss.
    sigma : float
        Noise standard deviation on the transformed scale, > 0.

    Examples
    --------
    Example 4.6 (fourth root, a = 0, σ = 2):

    >>> KthRootTransformation(k=4, a=0.0, sigma=2.0).policy([5, 10, 20, 30, 10000]).round(6).tolist()
    [0.279508, 0.395285, 0.559017, 0.684653, 12.5]
    >>> KthRootTransformation(k=2, a=0.0, sigma=1.0).variance(1000.0)
    4002.0
    """

    KIND: ClassVar[str] = "kth-root"
    LABEL: ClassVar[str] = "k-th root transformation"
    FAMILY: ClassVar[str] = "transformation"
    UNIT: ClassVar[Unit] = "rho"
    SOURCES: ClassVar[dict[str, str]] = {
        "guarantee": "paper Thm 4.4 / Cor. 4.5",
        "policy": "paper Cor. 4.5",
        "estimator": "paper Thm 4.9 (Hermite polynomial, Washio et al. 1956)",
        "variance": "paper Thm 4.9 / Table 2",
        **_TRANSFORM_SOURCES,
    }

    k: int = 2
    a: float = 0.0
    sigma: float = 1.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "k": Integer(1, 12, hint="the unbiased Hermite estimator needs a whole-number root order"),
        "a": Real(0, None, hint="the k-th root is defined on [a, ∞) with a ≥ 0"),
        "sigma": Real(0, None, closed="neither"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    def cautions(self) -> tuple[str, ...]:
        notes = [VARIANCE_CAUTION]
        if self.a == 0.0 and self.k > 1:
            notes.append("With a = 0 the root has an infinite slope at 0: tiny records pay a steep loss; a > 0 "
                         "flattens the policy near zero.")
        return tuple(notes)

    # transform and its monotone extension of the inverse to all of R
    def _f(self, x):
        return np.power(x, 1.0 / self.k)

    def _finv(self, v):
        return np.sign(v) * np.abs(v) ** self.k

    def _policy(self, x):
        if self.a == 0.0:
            gap = np.power(x, 1.0 / self.k)
        else:
            gap = self.a ** (1.0 / self.k) * np.expm1(np.log1p(x / self.a) / self.k)
        r = gap / np.float64(self.sigma)
        return 0.5 * r * r

    def _policy_inverse(self, loss):
        gap = self.sigma * np.sqrt(2.0 * loss)  # f(x + a) − f(a)
        if self.a == 0.0:
            return gap**self.k
        # (a^{1/k} + gap)^k − a without cancellation when gap ≪ a^{1/k}
        return self.a * np.expm1(self.k * np.log1p(gap / self.a ** (1.0 / self.k)))

    def _sample(self, q, rng):
        return self._f(q + self.a) + rng.normal(0.0, self.sigma, size=q.shape)

    def _estimate(self, y):
        coef = np.zeros(self.k + 1)
        coef[self.k] = 1.0
        sigma = np.float64(self.sigma)
        if sigma < 1.0:  # Σ_j h_j σ^{k−j} y^j: the powers of a tiny σ underflow harmlessly (no 0·inf)
            power = hermite_e.herme2poly(coef) * sigma ** np.arange(self.k, -1, -1, dtype=float)
            return np.polynomial.polynomial.polyval(y, power) - self.a
        return sigma**self.k * hermite_e.hermeval(y / sigma, coef) - self.a

    def _estimate_median(self, y):
        return self._finv(y) - self.a

    def _variance_terms(self) -> np.ndarray:
        k = self.k
        return np.array([math.comb(k, i) ** 2 * math.factorial(k - i) for i in range(k)], dtype=float)

    def _variance(self, q):
        k, s2 = self.k, np.square(np.float64(self.sigma))
        c = self._variance_terms()
        out = np.zeros(q.shape)
        for i in range(k):
            out = out + c[i] * s2 ** (k - i) * np.power(q + self.a, 2.0 * i / k)
        return out

    def _variance_estimate(self, y):
        # σ^{2i} He_{2i}(ṽ/σ) is unbiased for v^{2i} = (q + a)^{2i/k}.
        coef = np.zeros(2 * self.k - 1)
        coef[0::2] = self._variance_terms()
        sigma = np.float64(self.sigma)
        if sigma < 1.0:
            power = hermite_e.herme2poly(coef) * sigma ** (2 * self.k - np.arange(2 * self.k - 1, dtype=float))
            return np.polynomial.polynomial.polyval(y, power)
        return sigma ** (2 * self.k) * hermite_e.hermeval(y / sigma, coef)

    def _interval(self, y, beta):
        z = float(norm.isf(beta / 2.0))
        fa = self.a ** (1.0 / self.k)
        lo = self._finv(np.maximum(y - z * self.sigma, fa)) - self.a
        hi = self._finv(y + z * self.sigma) - self.a
        return lo, hi

    def _half_width(self, q, beta):
        lo, hi = self._interval(self._f(q + self.a), beta)
        return (hi - np.maximum(lo, 0.0)) / 2.0


@register_sum
@dataclass(frozen=True)
class LogTransformation(SumMechanism):
    r"""Log transformation mechanism: ``ṽ = ln(q + a) + N(0, σ²)`` (Corollary 4.7, Theorem 4.9).

    Policy (ρ-PRzCDP): :math:`P(x) = \ln(1 + x/a)^2/(2σ^2)`. Unbiased estimator :math:`e^{ṽ - σ^2/2} - a`, variance
    :math:`(e^{σ^2} - 1)(q + a)^2` (constant *relative* error).

    Parameters
    ----------
    a : float
        Offset a > 0: the crucial knob — a small a makes small records pay heavily.
    sigma : float
        Noise standard deviation on the log scale, > 0.

    Examples
    --------
    Example 4.8 (a = 1, σ = 2):

    >>> LogTransformation(a=1.0, sigma=2.0).policy([5, 10, 20, 30, 10000]).round(6).tolist()
    [0.4013, 0.718738, 1.15864, 1.474034, 10.604026]
    """

    KIND: ClassVar[str] = "log"
    LABEL: ClassVar[str] = "Log transformation"
    FAMILY: ClassVar[str] = "transformation"
    UNIT: ClassVar[Unit] = "rho"
    SOURCES: ClassVar[dict[str, str]] = {
        "guarantee": "paper Thm 4.4 / Cor. 4.7",
        "policy": "paper Cor. 4.7",
        "estimator": "paper Thm 4.9",
        "variance": "paper Thm 4.9 / Table 2",
        **_TRANSFORM_SOURCES,
        "variance_estimate": "ours: (e^{σ²} − 1)·e^{2ṽ − 2σ²} is unbiased (Monte Carlo checked)",
    }

    a: float = 1.0
    sigma: float = 1.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "a": Real(0, None, closed="neither", hint="ln is defined on [a, ∞) only for a > 0"),
        "sigma": Real(0, None, closed="neither"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    def cautions(self) -> tuple[str, ...]:
        return (VARIANCE_CAUTION, "The offset a is the crucial knob: a small a makes small records pay heavily.")

    def _policy(self, x):
        r = np.log1p(x / self.a) / np.float64(self.sigma)
        return 0.5 * r * r

    def _policy_inverse(self, loss):
        g = self.sigma * np.sqrt(2.0 * loss)
        with np.errstate(over="ignore"):
            return np.where(g > 30.0, np.exp(math.log(self.a) + g), self.a * np.expm1(np.minimum(g, 30.0)))

    def _sample(self, q, rng):
        return np.log(q + self.a) + rng.normal(0.0, self.sigma, size=q.shape)

    def _estimate(self, y):
        return np.exp(y - np.square(np.float64(self.sigma)) / 2.0) - self.a

    def _estimate_median(self, y):
        return np.exp(y) - self.a

    def _variance(self, q):
        return np.expm1(np.square(np.float64(self.sigma))) * (q + self.a) ** 2

    def _variance_estimate(self, y):
        s2 = np.square(np.float64(self.sigma))
        if s2 > 30.0:  # (e^{s²} − 1)e^{2ṽ − 2s²} = e^{2ṽ − s²}(1 − e^{−s²}), no inf·0
            return np.exp(2.0 * y - s2) * -np.expm1(-s2)
        return np.expm1(s2) * np.exp(2.0 * y - 2.0 * s2)

    def _interval(self, y, beta):
        z = float(norm.isf(beta / 2.0))
        lo = np.exp(np.maximum(y - z * self.sigma, math.log(self.a))) - self.a
        hi = np.exp(y + z * self.sigma) - self.a
        return lo, hi

    def _half_width(self, q, beta):
        lo, hi = self._interval(np.log(q + self.a), beta)
        return (hi - np.maximum(lo, 0.0)) / 2.0
