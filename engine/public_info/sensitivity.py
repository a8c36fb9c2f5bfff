"""Pufferfish sensitivity Δ_z: the ∞-Wasserstein distance between the secret-conditional laws (digest §5).

Three calculators, one per example of the paper, plus the exact W∞ for integer-valued laws:

* :func:`gaussian_sensitivity` — Example 1 (Gaussian mean with a correlated public Z): the corrected
  Δ_z = Δ·sup_θ |β₁(θ)|. The paper's Eq. 16 adds a z − μ_Z term that cancels between the two secret-conditional
  means (digest G3); it is not reproduced.
* :func:`binary_sdl_sensitivity` — Example 2 (binary counts with k-anonymity / t-closeness public): Eq. 35.
* :func:`correlated_counts_sensitivity` — §4.4 / Figure 4: W∞(1 + Bin(n−1, z1), Bin(n−1, z0)).

W∞ is computed exactly by the log-space stochastic-dominance test of digest G4b, never with float quantiles
(which lose tail mass below ~1e-16 and report 88 instead of 100 for n = 100, z0 = 0, z1 = 0.5).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from engine.errors import InvalidParameterError
from engine.validation import check_choice, check_integer, check_interval

__all__ = [
    "GAUSSIAN_Z_CONSTRUCTIONS",
    "binomial_logpmf",
    "w_infinity",
    "gaussian_beta1",
    "gaussian_sensitivity",
    "gaussian_z_coefficient",
    "GaussianSensitivityReport",
    "gaussian_sensitivity_report",
    "binary_sdl_sensitivity",
    "correlated_counts_sensitivity",
    "correlated_counts_grid",
]

#: How the public Z is built from the data in Example 1 (digest §5.1).
GAUSSIAN_Z_CONSTRUCTIONS = {
    "independent": "Z independent of X",
    "mean-plus-noise": "Z = X̄ + η, η ~ N(0, τ²)",
    "first-minus-rest": "Z = X₁ − X̄₋₁ + η, η ~ N(0, τ²) (the worst case: perfectly correlated as τ → 0)",
}

_LOG_HALF = math.log(0.5)
_TOL = 1e-9  # log-space slack for mathematically equal CDF values computed through different roundings


def binomial_logpmf(n: int, p: float) -> np.ndarray:
    """log P(K = k), k = 0..n, for K ~ Bin(n, p), exact in log space (p may be 0 or 1).

    >>> np.exp(binomial_logpmf(2, 0.5)).tolist()
    [0.25, 0.5, 0.25]
    """
    n = check_integer("n", n, 0, None)
    p = check_interval("p", p, 0, 1)
    k = np.arange(n + 1, dtype=float)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + xlogy(k, p) + xlog1py(n - k, -p)


def _log_cdf_sf(logpmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P(X ≤ i) and log P(X > i) for a pmf on 0..m, accumulated in log space (no 1 − F cancellation)."""
    with np.errstate(divide="ignore"):
        log_cdf = np.logaddexp.accumulate(logpmf)
        rev = np.logaddexp.accumulate(logpmf[::-1])[::-1]  # log P(X ≥ i)
        log_sf = np.concatenate([rev[1:], [-np.inf]])
    return log_cdf, log_sf


def _dominated(cdf_a, sf_a, cdf_b, sf_b, lo_a: int, lo_b: int, shift: int, lo: int, hi: int) -> bool:
    """True iff F_A(x) ≥ F_B(x − shift) for every integer x in [lo, hi] (log-space comparison)."""
    x = np.arange(lo, hi + 1)

    def at(cdf, sf, offset, pos):
        i = pos - offset
        inside = (i >= 0) & (i < cdf.size)
        ic = np.clip(i, 0, cdf.size - 1)
        lc = np.where(inside, cdf[ic], np.where(i < 0, -np.inf, 0.0))
        ls = np.where(inside, sf[ic], np.where(i < 0, 0.0, -np.inf))
        return lc, ls

    ca, sa = at(cdf_a, sf_a, lo_a, x)
    cb, sb = at(cdf_b, sf_b, lo_b, x - shift)
    upper = (ca > _LOG_HALF) & (cb > _LOG_HALF)
    with np.errstate(invalid="ignore"):
        ok_upper = sa <= sb + _TOL * np.maximum(1.0, np.abs(sb))
        ok_lower = ca >= cb - _TOL * np.maximum(1.0, np.abs(cb))
    ok_upper = ok_upper | (sa == -np.inf)
    ok_lower = ok_lower | (cb == -np.inf)
    return bool(np.all(np.where(upper, ok_upper, ok_lower)))


def w_infinity(logpmf_a: np.ndarray, logpmf_b: np.ndarray, offset_a: int = 0, offset_b: int = 0) -> int:
    r"""Exact ∞-Wasserstein distance between two laws on the integers.

    ``logpmf_a[i]`` is log P(A = offset_a + i). W∞(A, B) ≤ δ iff A ≤_st B + δ and B ≤_st A + δ, i.e.
    F_A(x) ≥ F_B(x − δ) and F_B(x) ≥ F_A(x − δ) for all x; the CDFs are compared in log space (log-SFs in the upper
    tails), so tail masses far below 1e-16 still count (digest G4b). The smallest such integer δ is found by
    bisection.

    Examples
    --------
    Point mass at 0 against 1 + Bin(99, 1/2): the full range, 100 (float quantiles give 88).

    >>> w_infinity(binomial_logpmf(99, 0.5), np.array([0.0]), offset_a=1)
    100
    """
    a = np.asarray(logpmf_a, dtype=float)
    b = np.asarray(logpmf_b, dtype=float)
    if a.ndim != 1 or b.ndim != 1 or a.size == 0 or b.size == 0:
        raise InvalidParameterError("logpmf_a and logpmf_b must be non-empty 1-D arrays of log probabilities")
    cdf_a, sf_a = _log_cdf_sf(a)
    cdf_b, sf_b = _log_cdf_sf(b)
    lo = min(offset_a, offset_b)
    hi = max(offset_a + a.size, offset_b + b.size)
    span = hi - lo

    def ok(d: int) -> bool:
        return _dominated(cdf_a, sf_a, cdf_b, sf_b, offset_a, offset_b, d, lo, hi + d) and _dominated(
            cdf_b, sf_b, cdf_a, sf_a, offset_b, offset_a, d, lo, hi + d
        )

    low, high = 0, span  # ok(span) always holds: the supports lie within the span
    if ok(0):
        return 0
    while high - low > 1:
        mid = (low + high) // 2
        if ok(mid):
            high = mid
        else:
            low = mid
    return high


def gaussian_beta1(
    n: int,
    sigma2: float | np.ndarray,
    construction: Literal["independent", "mean-plus-noise", "first-minus-rest"] = "independent",
    tau2: float = 1.0,
) -> float | np.ndarray:
    r"""β₁: the coefficient of X₁ in the regression of X̄ on (X₁, Z) (Example 1, Eq. 34; digest §5.1).

    * independent Z: β₁ = 1/n;
    * Z = X̄ + η: β₁ = τ² / (nτ² + σ²(n−1)/n);
    * Z = X₁ − X̄₋₁ + η: β₁ = 1/n + ((n−1)/n)·κ, κ = (σ²/(n−1)) / (σ²/(n−1) + τ²).

    Examples
    --------
    Digest oracle O4 (n = 100, σ² = 4):

    >>> round(gaussian_beta1(100, 4.0, "mean-plus-noise", tau2=1.0), 7)
    0.0096191
    >>> round(gaussian_beta1(100, 4.0, "first-minus-rest", tau2=0.04), 7)
    0.5074874
    """
    n = check_integer("n", n, 2, None)
    check_choice("construction", construction, GAUSSIAN_Z_CONSTRUCTIONS)
    s2 = np.asarray(sigma2, dtype=float)
    if not np.all(np.isfinite(s2)) or np.any(s2 < 0):
        raise InvalidParameterError(f"sigma2 must be finite and ≥ 0; got {sigma2!r}")
    if construction == "independent":
        out = np.full_like(s2, 1.0 / n)
    else:
        tau2 = check_interval("tau2", tau2, 0, None, closed="neither")
        if construction == "mean-plus-noise":
            out = tau2 / (n * tau2 + s2 * (n - 1) / n)
        else:
            v = s2 / (n - 1)
            out = 1.0 / n + (n - 1) / n * v / (v + tau2)
    return float(out) if out.ndim == 0 else out


def gaussian_sensitivity(
    delta: float,
    n: int,
    construction: Literal["independent", "mean-plus-noise", "first-minus-rest"] = "independent",
    tau2: float = 1.0,
    sigma_min: float = 0.0,
    sigma_max: float = math.inf,
) -> float:
    r"""Δ_z = Δ · sup_{σ ∈ [σ_min, σ_max]} |β₁(σ)| for the mean of n records in [−Δ/2, Δ/2] (corrected Eq. 16).

    Notes
    -----
    The paper's Eq. 16 reads sup Σᵀ Σ⁻¹ (Δ, z − μ_Z)ᵀ; the z − μ_Z part cancels between the two secret-conditional
    means, so Δ_z does not depend on how unusual z is (digest G3). β₁ is decreasing in σ for "mean-plus-noise"
    (sup at σ_min) and increasing for "first-minus-rest" (sup at σ_max; → 1, i.e. Δ_z → Δ, as σ_max → ∞).

    Examples
    --------
    >>> gaussian_sensitivity(1.0, 100)
    0.01
    >>> gaussian_sensitivity(1.0, 100, "first-minus-rest", tau2=1.0)
    1.0
    """
    delta = check_interval("delta", delta, 0, None, closed="neither")
    lo = check_interval("sigma_min", sigma_min, 0, None)
    hi = check_interval("sigma_max", sigma_max, 0, None, allow_inf=True)
    if hi < lo:
        raise InvalidParameterError(f"sigma_max must be ≥ sigma_min = {lo:g}; got {hi:g}")
    check_choice("construction", construction, GAUSSIAN_Z_CONSTRUCTIONS)
    n = check_integer("n", n, 2, None)
    if construction == "independent":
        return delta / n
    if construction == "first-minus-rest" and math.isinf(hi):
        return float(delta)
    sigma = lo if construction == "mean-plus-noise" else hi
    if construction == "mean-plus-noise" and lo == 0:
        return delta / n
    return float(delta * abs(float(gaussian_beta1(n, sigma**2, construction, tau2))))


def gaussian_z_coefficient(
    n: int,
    sigma2: float,
    construction: Literal["independent", "mean-plus-noise", "first-minus-rest"] = "independent",
    tau2: float = 1.0,
) -> float:
    r"""β_Z: the coefficient of Z in the regression of X̄ on (X₁, Z) — the term the paper's Eq. 16 multiplies by
    z − μ_Z (digest §5.1, G3). ``sigma2 = inf`` gives the limit σ → ∞.

    * independent Z: 0;
    * Z = X̄ + η: β_Z = (σ²(n−1)/n²) / (σ²(n−1)/n² + τ²);
    * Z = X₁ − X̄₋₁ + η: β_Z = −((n−1)/n)·κ, κ = (σ²/(n−1)) / (σ²/(n−1) + τ²) (→ −(n−1)/n as σ → ∞).

    Examples
    --------
    >>> round(gaussian_z_coefficient(100, 4.0, "first-minus-rest", tau2=0.04), 7)
    -0.4974874
    """
    n = check_integer("n", n, 2, None)
    check_choice("construction", construction, GAUSSIAN_Z_CONSTRUCTIONS)
    s2 = check_interval("sigma2", sigma2, 0, None, allow_inf=True)
    if construction == "independent":
        return 0.0
    tau2 = check_interval("tau2", tau2, 0, None, closed="neither")
    if construction == "mean-plus-noise":
        if math.isinf(s2):
            return 1.0
        v = s2 * (n - 1) / n**2
        return v / (v + tau2)
    kappa = 1.0 if math.isinf(s2) else (s2 / (n - 1)) / (s2 / (n - 1) + tau2)
    return -(n - 1) / n * kappa


@dataclass(frozen=True)
class GaussianSensitivityReport:
    """Example 1's Δ_z (corrected) next to what the paper's Eq. 16 gives for an observed z − μ_Z (digest G3).

    ``sigma_at`` is the σ where the corrected supremum is attained (None when β₁ does not depend on σ);
    ``paper_eq16`` = |Δ·β₁ + β_Z·(z − μ_Z)| evaluated there.
    """

    delta_z: float
    beta1: float
    beta_z: float
    sigma_at: float | None
    z_offset: float
    paper_eq16: float

    @property
    def paper_differs(self) -> bool:
        return not math.isclose(self.paper_eq16, self.delta_z, rel_tol=1e-12, abs_tol=1e-15)


def gaussian_sensitivity_report(
    delta: float,
    n: int,
    construction: Literal["independent", "mean-plus-noise", "first-minus-rest"] = "independent",
    tau2: float = 1.0,
    sigma_min: float = 0.0,
    sigma_max: float = math.inf,
    z_offset: float = 0.0,
) -> GaussianSensitivityReport:
    r"""The corrected Δ_z = Δ·sup|β₁| (:func:`gaussian_sensitivity`) and the paper's Eq. 16 value for an observed
    z − μ_Z = ``z_offset``, at the σ attaining the supremum (digest §5.1, G3: the z − μ_Z term cancels between the
    two secret-conditional means, so the correct Δ_z does not depend on z).

    Examples
    --------
    Digest O4 (n = 100, σ = 2, τ² = 0.04, Z = X₁ − X̄₋₁ + η), Δ = 1 and an observed z one unit above μ_Z:

    >>> r = gaussian_sensitivity_report(1.0, 100, "first-minus-rest", 0.04, sigma_max=2.0, z_offset=1.0)
    >>> round(r.delta_z, 7), round(r.paper_eq16, 7), r.paper_differs
    (0.5074874, 0.01, True)
    """
    corrected = gaussian_sensitivity(delta, n, construction, tau2, sigma_min, sigma_max)
    z_offset = check_interval("z_offset", z_offset, None, None)
    if construction == "independent":
        sigma_at: float | None = None
        s2 = 1.0
    elif construction == "mean-plus-noise":
        sigma_at = float(sigma_min)
        s2 = sigma_at**2
    else:
        sigma_at = float(sigma_max)
        s2 = sigma_at**2
    beta1 = corrected / delta
    beta_z = gaussian_z_coefficient(n, s2, construction, tau2)
    paper = abs(delta * beta1 + beta_z * z_offset)
    return GaussianSensitivityReport(corrected, beta1, beta_z, sigma_at, z_offset, paper)


def _truncate(logpmf: np.ndarray, offset: int, allowed: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Restrict a law on offset + 0..m to the allowed values (a boolean mask over 0..n) and renormalise."""
    values = offset + np.arange(logpmf.size)
    keep = allowed[np.clip(values, 0, allowed.size - 1)] & (values >= 0) & (values < allowed.size)
    out = np.where(keep, logpmf, -np.inf)
    if not np.any(np.isfinite(out)):
        return None
    nz = np.flatnonzero(np.isfinite(out))
    out = out[nz[0]: nz[-1] + 1]
    return out - np.logaddexp.reduce(out), int(offset + nz[0])


def binary_sdl_sensitivity(
    n: int,
    p_values: np.ndarray | Sequence[float] = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99),
    *,
    k: int | None = None,
    t_star: float | None = None,
    t: float | None = None,
) -> int:
    r"""Eq. 35: Δ_z for iid Bernoulli(p) records when k-anonymity and/or L1 t-closeness of (S, n − S) is public.

    The law of S = ΣX given the secret X_i = j and Z is j + Bin(n − 1, p) restricted to the values Z allows
    (S ∈ {k, …, n − k}; |S/n − t*| ≤ t). Δ_z is the largest W∞ over the p's in ``p_values`` for which both
    secrets stay possible (admissible pairs, Eq. 10). Public SDL properties restrict the pairs, not the
    sensitivity: Δ_z = 1 in every case the digest tested.

    Examples
    --------
    >>> binary_sdl_sensitivity(20, k=3)
    1
    """
    n = check_integer("n", n, 2, None)
    allowed = np.ones(n + 1, dtype=bool)
    s = np.arange(n + 1)
    if k is not None:
        k = check_integer("k", k, 0, n // 2)
        allowed &= (s >= k) & (s <= n - k)
    if (t_star is None) != (t is None):
        raise InvalidParameterError("t_star and t must be given together (t-closeness |S/n − t*| ≤ t)")
    if t_star is not None:
        t_star = check_interval("t_star", t_star, 0, 1)
        t = check_interval("t", t, 0, 1)
        allowed &= np.abs(s / n - t_star) <= t + 1e-12
    best = 0
    for p in np.atleast_1d(np.asarray(p_values, dtype=float)):
        base = binomial_logpmf(n - 1, float(p))
        law0 = _truncate(base, 0, allowed)
        law1 = _truncate(base, 1, allowed)
        if law0 is None or law1 is None:
            continue  # a secret impossible under this θ_z: the pair is not admissible
        best = max(best, w_infinity(law1[0], law0[0], law1[1], law0[1]))
    if best == 0:
        raise InvalidParameterError(
            "no admissible secret pair: with these public properties one of the secrets is impossible for every p "
            "— loosen k or t"
        )
    return best


def correlated_counts_sensitivity(n: int, z0: float, z1: float) -> int:
    r"""Δ_z(n, z0, z1) = W∞(1 + Bin(n − 1, z1), Bin(n − 1, z0)) for the family Θ_(z0, z1) (§4.4, Figure 4).

    Reconstruction (digest §5.3): given one person's secret, the other n − 1 records are iid Bernoulli with
    z0 ≤ p0 ≤ p1 ≤ z1; W∞ is increasing in p1 and decreasing in p0, so the supremum is at (z0, z1).
    Equals 1 when z0 = z1 and n whenever z0 = 0 or z1 = 1 (with z0 < z1). Exact (log space, G4b).

    Examples
    --------
    Digest oracle O3:

    >>> correlated_counts_sensitivity(100, 0.0, 0.5)
    100
    >>> correlated_counts_sensitivity(100, 0.1, 0.9)
    81
    """
    n = check_integer("n", n, 1, None)
    z0 = check_interval("z0", z0, 0, 1)
    z1 = check_interval("z1", z1, 0, 1)
    if z0 > z1:
        raise InvalidParameterError(
            f"z0 must be ≤ z1 (bounded positive dependence); got z0 = {z0:g}, z1 = {z1:g} — swap them"
        )
    return w_infinity(binomial_logpmf(n - 1, z1), binomial_logpmf(n - 1, z0), offset_a=1, offset_b=0)


def correlated_counts_grid(n: int, z0_values, z1_values) -> np.ndarray:
    """Figure 4's heatmap: Δ_z(n, z0, z1) for every z0 (rows) and z1 (columns); NaN where z0 > z1.

    Examples
    --------
    >>> correlated_counts_grid(10, [0.1, 0.5], [0.5, 0.9]).tolist()
    [[6.0, 9.0], [1.0, 6.0]]
    """
    n = check_integer("n", n, 1, 5000, hint="the heatmap is exact and costs O(n) per cell; use n ≤ 5000")
    z0s = np.atleast_1d(np.asarray(z0_values, dtype=float))
    z1s = np.atleast_1d(np.asarray(z1_values, dtype=float))
    out = np.full((z0s.size, z1s.size), np.nan)
    laws1 = {float(z1): binomial_logpmf(n - 1, float(z1)) for z1 in z1s}
    for i, z0 in enumerate(z0s):
        law0 = binomial_logpmf(n - 1, float(z0))
        for k, z1 in enumerate(z1s):
            if z0 <= z1:
                out[i, k] = w_infinity(laws1[float(z1)], law0, offset_a=1, offset_b=0)
    return out
