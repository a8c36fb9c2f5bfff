"""ℓ2 K-norm noise: the Wasserstein exponential mechanism with loss ‖y − q‖₂ and Lebesgue base on ℝ^d (§4.1).

Density ∝ exp(−a‖y − q‖₂), a = ε/(2σ): y = q + r·u with u uniform on the sphere and r ~ Gamma(d, rate a).
E‖y − q‖² = d(d+1)/a², per-coordinate sd = √(d+1)/a (oracle O2). The per-coordinate noise grows like √d, unlike
ℓ1 noise (digest G14).
"""

from __future__ import annotations

import math

import numpy as np

from engine.public_info.guarantee import TPGuarantee
from engine.validation import check_integer, check_interval, check_rng

__all__ = ["knorm_sd_per_coordinate", "sample_l2_knorm", "l2_knorm_mechanism"]


def knorm_sd_per_coordinate(d: int, epsilon: float, sigma: float = 2.0) -> float:
    """√(d+1)·2σ/ε (oracle O2).

    >>> round(knorm_sd_per_coordinate(134, 1.0), 2)
    46.48
    """
    d = check_integer("d", d, 1, None)
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    sigma = check_interval("sigma", sigma, 0, None, closed="neither")
    return math.sqrt(d + 1) * 2 * sigma / eps


def sample_l2_knorm(d: int, a: float, size: int, *, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws (rows) of ℓ2 K-norm noise in d dimensions, density ∝ exp(−a‖v‖₂)."""
    d = check_integer("d", d, 1, None)
    a = check_interval("a", a, 0, None, closed="neither")
    size = check_integer("size", size, 0, None)
    check_rng(rng)
    u = rng.standard_normal((size, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    r = rng.gamma(shape=d, scale=1.0 / a, size=(size, 1))
    return r * u


def l2_knorm_mechanism(
    q: np.ndarray, epsilon: float, sensitivity: float, *, rng: np.random.Generator, factor_two: bool = True,
    public: tuple[str, ...] = (),
) -> tuple[np.ndarray, TPGuarantee]:
    r"""Release q + ℓ2 K-norm noise with a = ε/(2Δ_z) (Theorem 9 with Lebesgue base; ε-TP).

    ``factor_two=False`` uses a = ε/Δ_z, allowed because the Lebesgue base is translation invariant (the normaliser
    does not depend on the data; digest §4.1 "Factor 2").
    """
    q = np.asarray(q, dtype=float).ravel()
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    delta = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    a = eps / ((2.0 if factor_two else 1.0) * delta)
    noise = sample_l2_knorm(q.size, a, 1, rng=rng)[0]
    sd = math.sqrt(q.size + 1) / a
    g = TPGuarantee(epsilon=eps, sensitivity=delta, public=public, mechanism="ℓ2 K-norm (Wasserstein exponential)",
                    notes=(f"Noise sd per coordinate: {sd:.4g} (grows like √d, digest G14).",))
    return q + noise, g
