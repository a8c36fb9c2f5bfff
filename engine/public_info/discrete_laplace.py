"""Discrete Laplace noise DL(a), P(k) ∝ e^{−a|k|} on the integers, and the discrete Laplace mechanism.

The post-processing baseline of the case study adds DL(ε/Δ) to every count (digest §7.3, method 1); the L1-loss
Wasserstein exponential mechanism with the naive lattice base is DL(ε/(2Δ_z)) per coordinate (§4.1). Sampling is
exact: the difference of two iid geometric variables.

Oracle O1 (a = ε/2): Var = 2e^{−a}/(1 − e^{−a})², P(0) = (1 − e^{−a})/(1 + e^{−a}).
"""

from __future__ import annotations

import math

import numpy as np

from engine.public_info.guarantee import TPGuarantee
from engine.validation import check_interval, check_rng

__all__ = [
    "dl_variance",
    "dl_mean_abs",
    "dl_p0",
    "dl_logpmf",
    "sample_discrete_laplace",
    "sample_truncated_discrete_laplace",
    "discrete_laplace_mechanism",
]


def _a(a: float) -> float:
    return check_interval("a", a, 0, None, closed="neither")


def dl_variance(a: float) -> float:
    """Var of DL(a) = 2e^{−a}/(1 − e^{−a})².

    >>> round(dl_variance(0.5), 4)
    7.8354
    """
    a = _a(a)
    return 2.0 * math.exp(-a) / math.expm1(-a) ** 2


def dl_mean_abs(a: float) -> float:
    """E|K| of DL(a) = 2e^{−a}/(1 − e^{−2a})."""
    a = _a(a)
    return 2.0 * math.exp(-a) / -math.expm1(-2 * a)


def dl_p0(a: float) -> float:
    """P(K = 0) of DL(a) = (1 − e^{−a})/(1 + e^{−a}) = tanh(a/2).

    >>> round(dl_p0(0.5), 5)
    0.24492
    """
    return math.tanh(_a(a) / 2)


def dl_logpmf(k: np.ndarray | int, a: float) -> np.ndarray:
    """log P(K = k) for DL(a)."""
    a = _a(a)
    return math.log(math.tanh(a / 2)) - a * np.abs(np.asarray(k, dtype=float))


def sample_discrete_laplace(a: float, size, *, rng: np.random.Generator) -> np.ndarray:
    """Exact DL(a) draws (int64): G1 − G2 with G1, G2 iid geometric on {0, 1, …}, success 1 − e^{−a}."""
    a = _a(a)
    check_rng(rng)
    p = -math.expm1(-a)
    return (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(np.int64)


def _truncated_geometric(a: float, k: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of j ∈ {0..k} with P(j) ∝ e^{−a j} (k may be huge = untruncated)."""
    # P(J ≤ j) = (1 − e^{−a(j+1)}) / (1 − e^{−a(k+1)})
    tail = -np.expm1(-a * (k.astype(float) + 1.0))
    j = np.floor(-np.log1p(-u * tail) / a)
    return np.minimum(j, k).astype(np.int64)


def sample_truncated_discrete_laplace(
    center: np.ndarray, upper: np.ndarray | None, a: float, *, rng: np.random.Generator
) -> np.ndarray:
    r"""Exact draws of d ∈ {0, …, upper} with P(d) ∝ e^{−a|d − center|}, elementwise and vectorised.

    ``center`` ≥ 0 integers; ``upper`` ≥ 0 integers (None = no upper bound). Used for the sub-count given the count
    in the congenial samplers (digest §7.4 step iv).
    """
    a = _a(a)
    check_rng(rng)
    m = np.asarray(center, dtype=np.int64)
    c = np.full_like(m, 2**50) if upper is None else np.broadcast_to(np.asarray(upper, dtype=np.int64), m.shape)
    u1 = rng.random(m.shape)
    u2 = rng.random(m.shape)
    # Case m ≥ c: distance k = m − d ∈ {m − c, …, m}: d = c − j with j truncated geometric on {0..c}.
    high = c - _truncated_geometric(a, c, u2)
    # Case m < c: centre (mass 1), left distances 1..m, right distances 1..c − m.
    q = math.exp(-a)
    left = q * -np.expm1(-a * m.astype(float)) / -math.expm1(-a)
    right = q * -np.expm1(-a * np.maximum(c - m, 0).astype(float)) / -math.expm1(-a)
    total = 1.0 + left + right
    pick = u1 * total
    jl = 1 + _truncated_geometric(a, np.maximum(m - 1, 0), u2)
    jr = 1 + _truncated_geometric(a, np.maximum(c - m - 1, 0), u2)
    inner = np.where(pick < 1.0, m, np.where(pick < 1.0 + left, m - jl, m + jr))
    return np.where(m >= c, high, inner).astype(np.int64)


def discrete_laplace_mechanism(
    x: np.ndarray, epsilon: float, sensitivity: float = 2.0, *, rng: np.random.Generator,
    public: tuple[str, ...] = (),
) -> tuple[np.ndarray, TPGuarantee]:
    r"""x + DL(ε/Δ) per coordinate: ε-DP for L1 sensitivity Δ, hence ε-TP with Δ_z = Δ (Lemma 12's rich classes).

    Examples
    --------
    >>> y, g = discrete_laplace_mechanism(np.array([5, 7]), 1.0, rng=np.random.default_rng(0))
    >>> g.epsilon, y.dtype.kind
    (1.0, 'i')
    """
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither", allow_inf=True)
    delta = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    check_rng(rng)
    x = np.asarray(x)
    noise = 0 if math.isinf(eps) else sample_discrete_laplace(eps / delta, x.shape, rng=rng)
    guarantee = TPGuarantee(
        epsilon=eps, sensitivity=delta, public=public, mechanism=f"discrete Laplace DL(ε/{delta:g})",
        notes=(f"Noise sd per coordinate: {math.sqrt(dl_variance(eps / delta)) if math.isfinite(eps) else 0:.4g}.",),
    )
    return np.asarray(x + noise), guarantee
