"""What an ε-TP release means and whether a claimed ε holds: Lemma 4's band, the realised-ε audit, Corollary 13.

* :func:`posterior_band` — Lemma 4 (Eq. 12): for an exhaustive secret pair with prior p, the posterior of s1
  after any release lies in [p e^{−ε}/(p e^{−ε} + 1 − p), p e^{ε}/(p e^{ε} + 1 − p)] (oracle O5). For a
  non-exhaustive pair use :func:`odds_band` (the odds ratio moves by at most e^{±ε}). The paper's total-variation
  form (Eq. 3/5, d_TV ≤ e^ε − 1) is not used: its constant is disputed (digest G1).
* :func:`realised_epsilon` / :func:`exponential_mechanism_audit` — the largest |log ratio| of the output laws
  under a secret pair, computed exactly; shows that a DP sensitivity used under correlated records violates the
  claimed ε (oracle O6).
* :func:`manifold_errors` — Corollary 13's exact constants for isotropic ℓ2 K-norm noise (oracle O13, G9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import logsumexp

from engine.errors import InvalidParameterError
from engine.public_info.sensitivity import binomial_logpmf
from engine.validation import check_choice, check_integer, check_interval

__all__ = [
    "posterior_band",
    "odds_band",
    "realised_epsilon",
    "AuditResult",
    "exponential_mechanism_audit",
    "manifold_errors",
]


def posterior_band(epsilon: float | np.ndarray, prior: float | np.ndarray) -> tuple:
    r"""Lemma 4: the range of the posterior P(s1 | Y ∈ B) for an exhaustive pair with prior p (oracle O5).

    Examples
    --------
    >>> lo, hi = posterior_band(1.0, 0.5)
    >>> round(lo, 5), round(hi, 5)
    (0.26894, 0.73106)
    """
    eps = np.asarray(epsilon, dtype=float)
    p = np.asarray(prior, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise InvalidParameterError(f"epsilon must be finite and ≥ 0; got {epsilon!r}")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InvalidParameterError(f"prior must be in [0, 1]; got {prior!r}")
    lo = p * np.exp(-eps) / (p * np.exp(-eps) + 1 - p)
    hi = p * np.exp(eps) / (p * np.exp(eps) + 1 - p)
    if lo.ndim == 0:
        return float(lo), float(hi)
    return lo, hi


def odds_band(epsilon: float, prior_odds: float) -> tuple[float, float]:
    """Lemma 4 for a non-exhaustive pair: posterior odds P(s1|·)/P(s2|·) ∈ [odds·e^{−ε}, odds·e^{ε}]."""
    eps = check_interval("epsilon", epsilon, 0, None)
    odds = check_interval("prior_odds", prior_odds, 0, None, closed="neither")
    return odds * math.exp(-eps), odds * math.exp(eps)


def realised_epsilon(log_p1: np.ndarray, log_p2: np.ndarray) -> float:
    """max over outputs of |log P(y | s1) − log P(y | s2)| for two output laws on the same outputs (log pmfs).

    Outputs impossible under both are ignored; an output possible under only one gives ∞.
    """
    a = np.asarray(log_p1, dtype=float)
    b = np.asarray(log_p2, dtype=float)
    if a.shape != b.shape:
        raise InvalidParameterError(f"the two laws must be on the same outputs; got shapes {a.shape} and {b.shape}")
    both = np.isfinite(a) & np.isfinite(b)
    if np.any(np.isfinite(a) != np.isfinite(b)):
        return math.inf
    return float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0


@dataclass(frozen=True)
class AuditResult:
    """Realised ε of an exponential mechanism on a count under the correlated family Θ_(z0, z1)."""

    claimed_epsilon: float
    sensitivity_used: float
    realised_epsilon: float

    @property
    def violated(self) -> bool:
        return self.realised_epsilon > self.claimed_epsilon * (1 + 1e-9)


def exponential_mechanism_audit(
    n: int, z0: float, z1: float, epsilon: float, sensitivity: float, *,
    base: Literal["congenial", "naive"] = "congenial", factor_two: bool = True,
) -> AuditResult:
    r"""Realised ε of y ∝ exp(−ε|y − S| / (2σ)) ν(y) when S | s1 = 1 + Bin(n−1, z1), S | s0 = Bin(n−1, z0) (O6).

    ``base="congenial"``: ν = counting measure on {0..n} (the normaliser K(S) depends on S);
    ``base="naive"``: ν on all of ℤ (DL; the factor 2 may be dropped: ``factor_two=False``).
    With σ = Δ_z (see :func:`~engine.public_info.sensitivity.correlated_counts_sensitivity`) the realised ε
    stays ≤ ε; with the DP sensitivity 1 under correlation it exceeds ε.

    Examples
    --------
    >>> r = exponential_mechanism_audit(20, 0.3, 0.7, 1.0, 1.0)
    >>> round(r.realised_epsilon, 4), r.violated
    (4.3046, True)
    """
    n = check_integer("n", n, 1, None)
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    sigma = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    check_choice("base", base, ["congenial", "naive"])
    a = eps / ((2.0 if factor_two else 1.0) * sigma)
    law1 = np.concatenate([[-np.inf], binomial_logpmf(n - 1, z1)])  # S on 0..n
    law0 = np.concatenate([binomial_logpmf(n - 1, z0), [-np.inf]])
    s = np.arange(n + 1)
    if base == "congenial":
        y = np.arange(n + 1)
        kernel = -a * np.abs(y[:, None] - s[None, :])
        kernel = kernel - logsumexp(kernel, axis=0, keepdims=True)
    else:  # the ratio is constant beyond [0, n]; DL normaliser does not depend on S
        y = np.arange(-1, n + 2)
        kernel = -a * np.abs(y[:, None] - s[None, :]) + math.log(math.tanh(a / 2))
    with np.errstate(invalid="ignore"):
        p1 = logsumexp(kernel + law1[None, :], axis=1)
        p0 = logsumexp(kernel + law0[None, :], axis=1)
    return AuditResult(eps, sigma, realised_epsilon(p1, p0))


def manifold_errors(d1: int, d2: int, b: float = 1.0) -> dict[str, float]:
    r"""Corollary 13's exact mean squared errors for isotropic ℓ2 K-norm noise of scale b (digest §6.1, O13).

    ``raw`` = E‖Y1 − X̄‖² = d1(d1+1)b²; ``projected`` = E‖Proj(Y1) − X̄‖² = d2(d1+1)b²;
    ``on_manifold`` = E‖Y2 − X̄‖² = d2(d2+1)b²; ``ratio`` = projected / on_manifold = (d1+1)/(d2+1).
    The paper's O(d1²/(n²ε²)) and O(d1 d2/(n²ε²)) rates are loose upper bounds (G9).

    Examples
    --------
    >>> manifold_errors(10, 3)
    {'raw': 110.0, 'projected': 33.0, 'on_manifold': 12.0, 'ratio': 2.75}
    """
    d1 = check_integer("d1", d1, 1, None)
    d2 = check_integer("d2", d2, 1, d1)
    b = check_interval("b", b, 0, None, closed="neither")
    return {
        "raw": float(d1 * (d1 + 1) * b * b),
        "projected": float(d2 * (d1 + 1) * b * b),
        "on_manifold": float(d2 * (d2 + 1) * b * b),
        "ratio": (d1 + 1) / (d2 + 1),
    }
