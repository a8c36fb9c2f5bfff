r"""Generalized Gaussian mechanism (Corollary 5.6): ``q + Z`` with :math:`f_Z(z) ∝ \exp(-(|z|/σ)^p)`, 0 < p ≤ 1.

Additive noise with a density :math:`∝ e^{f(|z|)}`, f decreasing and convex, is P-PRDP with the tight policy
:math:`P(x) = f(0) - f(x)` (Theorem 5.5); here :math:`P(x) = (x/σ)^p` in ε, and :math:`ε\tanh(ε/2)` in ρ
(Lemma 5.2). p = 1 is the Laplace mechanism (ε = x/σ, variance 2σ²).

References
----------
.. [1] Finley et al., arXiv:2409.18118, Theorem 5.5, Corollary 5.6. Digest §2.4.1.
.. [2] Nadarajah, "A generalized normal distribution", J. Applied Statistics 32 (2005) — the variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import gammainc, gammaincinv, gammaln

from engine.constraints import Constraint, Real, check_declared
from engine.per_record.base import SumMechanism, register_sum
from engine.per_record.units import Unit
from engine.validation import check_array_interval


@register_sum
@dataclass(frozen=True)
class GeneralizedGaussian(SumMechanism):
    r"""Generalized Gaussian mechanism: ε-PRDP policy :math:`(x/σ)^p`, variance :math:`σ^2 Γ(3/p)/Γ(1/p)`.

    Parameters
    ----------
    p : float
        Shape in (0, 1]. The paper writes 0 ≤ p ≤ 1; p = 0 is not a density and p > 1 breaks the convexity the
        guarantee needs (spec gotcha 4). Small p gives enormous variance (p = 0.25: 6,652,800·σ²).
    sigma : float
        Scale σ > 0.

    Examples
    --------
    >>> GeneralizedGaussian(p=0.5, sigma=4.0).policy(16.0)
    2.0
    >>> round(GeneralizedGaussian(p=0.5, sigma=4.0).policy_rho(16.0), 7)
    1.5231883
    >>> GeneralizedGaussian(p=1.0, sigma=1.0).variance()
    2.0
    """

    KIND: ClassVar[str] = "generalized-gaussian"
    LABEL: ClassVar[str] = "Generalized Gaussian (p = 1: Laplace)"
    FAMILY: ClassVar[str] = "additive"
    UNIT: ClassVar[Unit] = "epsilon"
    SOURCES: ClassVar[dict[str, str]] = {
        "guarantee": "paper Thm 5.5 / Cor. 5.6 (PRDP); ρ by Lemma 5.2",
        "policy": "paper Cor. 5.6",
        "estimator": "paper §5 (identity; additive noise has mean 0)",
        "variance": "paper Cor. 5.6 (Nadarajah 2005)",
        "variance_estimate": "ours: data-independent, equals the variance",
        "median": "ours: identity (symmetric noise)",
        "interval": "ours: exact interval q̃ ± σ·(P⁻¹(1/p, 1−β))^{1/p} (regularised incomplete gamma)",
        "half_width": "ours: the noise's (1−β/2) quantile",
        "sampler": "ours: |Z| = σ·G^{1/p}, G ~ Gamma(1/p), random sign",
    }

    p: float = 1.0
    sigma: float = 1.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "p": Real(0, 1, closed="right",
                  hint="0 < p ≤ 1 keeps the noise log-density convex, which the PRDP guarantee needs (p = 1 is Laplace)"),
        "sigma": Real(0, None, closed="neither"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    def describe(self) -> str:
        if self.p == 1.0:
            return f"Laplace (sigma={self.sigma:g}): P-PRDP, losses in ε (per-record pure DP)"
        return super().describe()

    def cautions(self) -> tuple[str, ...]:
        if self.p < 0.5:
            ratio = float(np.exp(gammaln(3.0 / self.p) - gammaln(1.0 / self.p)))
            return (f"p = {self.p:g} gives a very heavy tail: the variance is {ratio:.3g}·σ²; compare mechanisms at "
                    "equal accuracy, not equal σ.",)
        return ()

    def _policy(self, x):
        return (x / self.sigma) ** self.p

    def _policy_inverse(self, loss):
        return self.sigma * loss ** (1.0 / self.p)

    def _sample(self, q, rng):
        g = rng.gamma(1.0 / self.p, 1.0, size=q.shape)
        sign = np.where(rng.random(size=q.shape) < 0.5, -1.0, 1.0)
        return q + sign * np.exp(np.log(self.sigma) + np.log(g) / self.p)

    def _variance(self, q):
        log_ratio = float(gammaln(3.0 / self.p) - gammaln(1.0 / self.p)) + 2.0 * math.log(self.sigma)
        return np.full(q.shape, math.exp(log_ratio) if log_ratio < 709.0 else math.inf)

    def noise_pdf(self, z):
        """Density p/(2σΓ(1/p))·exp(−(|z|/σ)^p) of the noise at z (vectorised)."""
        zz = np.abs(np.asarray(z, dtype=float))
        log_c = math.log(self.p) - math.log(2.0 * self.sigma) - float(gammaln(1.0 / self.p))
        out = np.exp(log_c - (zz / self.sigma) ** self.p)
        return float(out) if out.ndim == 0 else out

    def noise_cdf(self, z):
        """CDF of the noise Z at z (vectorised)."""
        zz = np.asarray(z, dtype=float)
        half = 0.5 * gammainc(1.0 / self.p, (np.abs(zz) / self.sigma) ** self.p)
        out = 0.5 + np.sign(zz) * half
        return float(out) if out.ndim == 0 else out

    def noise_quantile(self, u):
        """Quantile function of the noise at levels u ∈ (0, 1) (vectorised)."""
        uu = check_array_interval("u", u, 0, 1, closed="neither")
        with np.errstate(over="ignore"):
            mag = self.sigma * gammaincinv(1.0 / self.p, np.abs(2.0 * uu - 1.0)) ** (1.0 / self.p)
        out = np.sign(uu - 0.5) * mag
        return float(out) if out.ndim == 0 else out

    def _noise_quantile(self, u):
        # P(|Z| ≤ c) = P(1/p, (c/σ)^p) = 2u − 1 for u > 1/2.
        log_c = math.log(float(gammaincinv(1.0 / self.p, 2.0 * u - 1.0))) / self.p + math.log(self.sigma)
        return math.exp(log_c) if log_c < 709.0 else math.inf
