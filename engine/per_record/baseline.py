r"""Baselines for sums: the Gaussian mechanism with per-record accounting, and unit splitting.

References
----------
.. [1] Finley et al., arXiv:2409.18118, Definition 2.8 (Gaussian), §2.5 and Example 2.16 (unit splitting).
       Digest: ``shared/spec/003-per-record-dp.md`` §2.1–2.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.stats import norm

from engine.constraints import Constraint, Real, check_declared
from engine.per_record.base import SumMechanism, register_sum
from engine.per_record.units import Unit

#: x/τ within a few ulp (relative 8.9e-16) above a whole number counts as that number, so τ = 0.1 and x = 1.1 give
#: 11 pieces, not 12 (1.1/0.1 is 11.000000000000002 in floating point). Kept at float resolution: a wider
#: tolerance would understate the loss of records genuinely just above a multiple of τ.
_PIECE_TOLERANCE = 4 * float(np.finfo(float).eps)


class _GaussianNoise:
    """Additive N(0, σ²) noise on the sum: the part :class:`GaussianSum` and :class:`UnitSplitting` share."""

    sigma: float

    def _sample(self, q, rng):
        return q + rng.normal(0.0, self.sigma, size=q.shape)

    def _variance(self, q):
        return np.full(q.shape, np.square(np.float64(self.sigma)))

    def _noise_quantile(self, u):
        return float(self.sigma * norm.ppf(u))

    def noise_pdf(self, z):
        """Density of the additive noise N(0, σ²) at z (vectorised)."""
        out = norm.pdf(np.asarray(z, dtype=float), scale=self.sigma)
        return float(out) if np.ndim(out) == 0 else out


@register_sum
@dataclass(frozen=True)
class GaussianSum(_GaussianNoise, SumMechanism):
    r"""Gaussian mechanism on a sum, accounted per record: :math:`P(x) = x^2/(2σ^2)` ρ-PRzCDP.

    Output ``q + N(0, σ²)``; unbiased; variance σ². It is the identity transformation of §4 (k = 1).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.

    Notes
    -----
    §5 of the paper misprints the policy as ``x²/σ²``; Definition 2.8 and §4 give ``x²/(2σ²)``, used here.

    Examples
    --------
    >>> GaussianSum(sigma=2.0).policy([5.0, 10000.0]).tolist()
    [3.125, 12500000.0]
    """

    KIND: ClassVar[str] = "gaussian"
    LABEL: ClassVar[str] = "Gaussian (per-record accounting)"
    FAMILY: ClassVar[str] = "baseline"
    UNIT: ClassVar[Unit] = "rho"
    SOURCES: ClassVar[dict[str, str]] = {
        "guarantee": "paper Def. 2.8",
        "policy": "paper Def. 2.8 (x²/(2σ²); the §5 'x²/σ²' is a typo)",
        "estimator": "paper Def. 2.8 (identity)",
        "variance": "paper Def. 2.8",
        "variance_estimate": "ours: data-independent, equals σ²",
        "median": "ours: identity (symmetric noise)",
        "interval": "ours: exact Gaussian interval q̃ ± z σ",
        "sampler": "numpy normal",
    }

    sigma: float = 1.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {"sigma": Real(0, None, closed="neither")}

    def __post_init__(self) -> None:
        check_declared(self)

    def _policy(self, x):
        r = x / np.float64(self.sigma)
        return 0.5 * r * r

    def _policy_inverse(self, loss):
        return self.sigma * np.sqrt(2.0 * loss)



@register_sum
@dataclass(frozen=True)
class UnitSplitting(_GaussianNoise, SumMechanism):
    r"""Unit splitting + Gaussian: split each record into ⌈x/τ⌉ rows of at most τ, then add N(0, σ²).

    Each row has sensitivity τ, so the split data are ρ_u-zCDP with :math:`ρ_u = τ^2/(2σ^2)`; a record that
    becomes :math:`A(x) = ⌈x/τ⌉` rows has the group-privacy loss :math:`P(x) = ρ_u A(x)^2` ρ-PRzCDP.

    Parameters
    ----------
    tau : float
        Splitting threshold τ > 0 (largest contribution of one row).
    sigma : float
        Noise standard deviation σ > 0.

    Notes
    -----
    The paper calls A(r) "the number of times the record was split" but its Example 2.16 uses the number of
    resulting rows; we use rows (spec gotcha 7). ⌈x/τ⌉ absorbs floating-point noise of a few ulp only (see
    ``_PIECE_TOLERANCE``). For a sum at the same σ the Gaussian with per-record accounting is never worse
    (``⌈x/τ⌉²τ² ≥ x²``) — ours.

    Examples
    --------
    Example 2.16 (τ = 10, σ² = 50, Table 1):

    >>> UnitSplitting(tau=10.0, sigma=50 ** 0.5).policy([5, 5, 10, 20, 30, 10000]).round(9).tolist()
    [1.0, 1.0, 1.0, 4.0, 9.0, 1000000.0]
    """

    KIND: ClassVar[str] = "unit-splitting"
    LABEL: ClassVar[str] = "Unit splitting + Gaussian"
    FAMILY: ClassVar[str] = "baseline"
    UNIT: ClassVar[Unit] = "rho"
    SOURCES: ClassVar[dict[str, str]] = {
        "guarantee": "paper §2.5, Example 2.16",
        "policy": "paper §2.5 (A(r) = number of rows ⌈x/τ⌉, as in Example 2.16)",
        "estimator": "paper §2.5 (identity)",
        "variance": "ours: σ² (splitting does not change the total)",
        "variance_estimate": "ours: data-independent, equals σ²",
        "median": "ours: identity (symmetric noise)",
        "interval": "ours: exact Gaussian interval q̃ ± z σ",
        "sampler": "numpy normal",
    }

    tau: float = 1.0
    sigma: float = 1.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "tau": Real(0, None, closed="neither", hint="τ is the largest contribution of one row"),
        "sigma": Real(0, None, closed="neither"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @property
    def rho_unit(self) -> float:
        """ρ of one row: τ²/(2σ²)."""
        with np.errstate(over="ignore", under="ignore"):
            r = np.float64(self.tau) / np.float64(self.sigma)
            return float(0.5 * r * r)

    def pieces(self, x):
        """Number of rows a record of value x becomes, ⌈x/τ⌉ (0 for x = 0)."""
        xx = np.asarray(x, dtype=float)
        with np.errstate(over="ignore"):
            ratio = xx / self.tau
        shrunk = ratio * (1.0 - _PIECE_TOLERANCE)  # relative: any x > 0, however small, is at least one row
        out = np.maximum(np.ceil(shrunk), 0.0)
        return float(out) if out.ndim == 0 else out

    def _loss_of_pieces(self, n):
        r = np.where(n == 0, 0.0, n * self.tau) / np.float64(self.sigma)  # ρ_u n² = (nτ/σ)²/2 without 0·inf
        return 0.5 * r * r

    def _policy(self, x):
        return self._loss_of_pieces(np.asarray(self.pieces(x), dtype=float))

    def _policy_inverse(self, loss):
        # largest x with ⌈x/τ⌉ ≤ n = floor(σ√(2·loss)/τ) is τ·n
        n = np.floor(np.float64(self.sigma) * np.sqrt(2.0 * loss) / self.tau)
        n = np.where(self._loss_of_pieces(n) > loss, n - 1.0, n)  # rounding of the square root
        return self.tau * n


