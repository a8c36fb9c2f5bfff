"""Lemma 8: conditioning an ε-DP output on agreement with the public Z (resample until consistent) costs 2ε.

The release Y | Y ∈ A of an ε-DP mechanism is (2ε, Θ_DPz)-TP for the DP class renormalised on the databases
consistent with Z (digest §3, G17): the ratio of conditionals is (ratio of joints ≤ e^ε) × (ratio of
normalisers ≤ e^ε). The factor 2 is attained on two-atom constraint sets (oracle O7).
"""

from __future__ import annotations

import numpy as np

from engine.errors import InvalidParameterError, ResourceLimitError
from engine.public_info.discrete_laplace import sample_discrete_laplace
from engine.public_info.guarantee import IncompatibleGuaranteeError, TPGuarantee
from engine.validation import check_integer, check_interval, check_rng

__all__ = ["condition_on_public", "conditioning_privacy_loss", "conditioned_discrete_laplace"]


def condition_on_public(guarantee: object) -> TPGuarantee:
    """Seeman et al.'s Lemma 8: an ε-DP output conditioned on agreeing with Z is 2ε-TP for the class renormalised on
    Z."""
    if not isinstance(guarantee, TPGuarantee):
        raise IncompatibleGuaranteeError(
            f"guarantees[0] is a {type(guarantee).__name__}, not an ε-TP guarantee — ε-TP (Pufferfish subject to Z) "
            "does not compose with (B, ε, δ)-TDP or ρ-zCDP statements; account for them separately"
        )
    g = guarantee
    note = "Lemma 8: conditioning an ε-DP output on its agreement with Z doubles ε (attained, digest O7)."
    return TPGuarantee(
        epsilon=2 * g.epsilon, sensitivity=g.sensitivity, public=g.public, mechanism=g.mechanism, unit=g.unit,
        exact=g.exact, composition="conditioned", periods=g.periods, notes=g.notes + (note,), basis=g.basis,
    )


def _allowed_mask(allowed, lo: int, hi: int) -> np.ndarray:
    values = np.arange(lo, hi + 1)
    if isinstance(allowed, tuple) and len(allowed) == 2 and all(isinstance(v, (int, np.integer)) for v in allowed):
        return (values >= allowed[0]) & (values <= allowed[1])
    return np.isin(values, np.asarray(sorted(allowed)))


def conditioning_privacy_loss(epsilon: float, n_max: int, allowed, *, margin: int = 2000) -> float:
    r"""Realised max privacy loss of DL(ε) on a count s ∈ {0..n_max} conditioned on Y ∈ A (oracle O7).

    ``allowed`` is an interval ``(lo, hi)`` (inclusive) or a set of values. Neighbours are s and s + 1.

    Examples
    --------
    >>> round(conditioning_privacy_loss(1.0, 30, {0, 30}), 4)
    2.0
    >>> round(conditioning_privacy_loss(1.0, 30, (5, 25)), 4)
    1.2091
    """
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    n_max = check_integer("n_max", n_max, 1, None)
    lo, hi = -margin, n_max + margin
    mask = _allowed_mask(allowed, lo, hi)
    if not mask.any():
        raise InvalidParameterError("allowed must contain at least one value")
    y = np.arange(lo, hi + 1)[mask]
    s = np.arange(n_max + 1)
    logp = -eps * np.abs(y[:, None] - s[None, :])
    lognorm = np.logaddexp.reduce(logp, axis=0)  # log P_s(A) up to the common DL constant
    cond = logp - lognorm[None, :]
    return float(np.max(np.abs(cond[:, 1:] - cond[:, :-1])))


def conditioned_discrete_laplace(
    x: np.ndarray, epsilon: float, allowed: tuple[int, int], *, sensitivity: float = 1.0,
    rng: np.random.Generator, max_draws: int = 10_000_000, public: tuple[str, ...] = (),
) -> tuple[np.ndarray, TPGuarantee]:
    r"""x + DL(ε/Δ) resampled (elementwise, vectorised) until it lies in ``allowed = (lo, hi)``; guarantee 2ε.

    Expected number of draws per value is 1/P(x + noise ∈ A); more than ``max_draws`` in total raises
    :class:`~engine.errors.ResourceLimitError`.
    """
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    delta = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    check_rng(rng)
    lo, hi = (check_integer("allowed[0]", allowed[0]), check_integer("allowed[1]", allowed[1]))
    if hi < lo:
        raise InvalidParameterError(f"allowed must be (lo, hi) with lo ≤ hi; got {allowed!r}")
    x = np.asarray(x, dtype=np.int64)
    out = x + sample_discrete_laplace(eps / delta, x.shape, rng=rng)
    bad = (out < lo) | (out > hi)
    used = x.size
    while bad.any():
        k = int(bad.sum())
        used += k
        if used > max_draws:
            raise ResourceLimitError(
                f"conditioning needed more than max_draws = {max_draws} draws: the allowed set ({lo}, {hi}) is very "
                "unlikely under the noise — widen it or raise ε"
            )
        out[bad] = x[bad] + sample_discrete_laplace(eps / delta, k, rng=rng)
        bad = (out < lo) | (out > hi)
    base = TPGuarantee(epsilon=eps, sensitivity=delta, public=public, mechanism="discrete Laplace, conditioned on Z")
    return out, condition_on_public(base)



