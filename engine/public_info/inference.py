"""Inference with partially private data (§3): Algorithm 1 (corrected), Algorithm 2, Bayes risk and test power.

* :func:`rejection_posterior` — Algorithm 1 with the fixes of digest §6.2: accept when U ≤ π(y | X*, z) / C
  (the seed's test is reversed) with a GLOBAL bound C ≥ sup_{x,y} π(y | x, z). A per-X* bound (the seed) is only
  exact when the normaliser K(x) does not depend on x; it is available as ``bound="per-draw"`` and labelled biased
  (G10, oracle O10).
* :func:`importance_posterior` — Algorithm 2 with a proposal g and its effective sample size (Σw)²/Σw².
* :class:`KAnonymityDemo` — the one-dimensional demo of O10 (θ ~ U(0,1), S ~ Bin(30, θ), k-anonymity Z) with the
  exact posterior mean.
* :func:`two_cell_bayes_risk` — Lemma 14's comparison E[Var | Y, Z] ≤ E[Var | Y*] (oracle O8).
* :func:`power_comparison` — Theorem 15's raw vs post-processed power (oracle O9), computed rather than asserted: the
  strictness claim fails for Laplace noise with clipping (G11).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from engine.errors import InvalidParameterError, ResourceLimitError
from engine.public_info.discrete_laplace import dl_logpmf
from engine.public_info.sensitivity import binomial_logpmf
from engine.validation import check_choice, check_integer, check_interval, check_rng

__all__ = [
    "PosteriorDraws",
    "ImportanceEstimate",
    "rejection_posterior",
    "importance_posterior",
    "KAnonymityDemo",
    "two_cell_bayes_risk",
    "power_comparison",
]


@dataclass(frozen=True)
class PosteriorDraws:
    """Accepted θ draws of Algorithm 1 and the acceptance rate."""

    draws: np.ndarray
    proposals: int
    accepted: int

    @property
    def acceptance(self) -> float:
        """Accepted / proposed over all batches (an estimate of π(y | z) / C)."""
        return self.accepted / self.proposals if self.proposals else math.nan


@dataclass(frozen=True)
class ImportanceEstimate:
    """Algorithm 2's self-normalised estimate of E[a(θ) | y, z] with its effective sample size."""

    estimate: float
    ess: float
    m: int


def rejection_posterior(
    y,
    sample_prior: Callable[[np.random.Generator, int], np.ndarray],
    sample_data: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    likelihood: Callable[[object, np.ndarray], np.ndarray],
    bound: float | Callable[[np.ndarray], np.ndarray],
    n_draws: int,
    *,
    rng: np.random.Generator,
    batch: int = 20_000,
    max_proposals: int = 10_000_000,
) -> PosteriorDraws:
    r"""Algorithm 1 (corrected): exact draws from θ | y, z by rejection (Theorem 16).

    Vectorised: ``sample_prior(rng, m)`` returns m draws of θ from π(θ | z); ``sample_data(theta, rng)`` one data
    draw X* per θ; ``likelihood(y, x)`` the mechanism's full π(y | x, z) including any x-dependent normaliser
    (G10). ``bound`` is the global C ≥ sup π(y | x, z); a callable gives a per-draw bound (the seed's literal
    version — biased when K(x) depends on x).
    """
    check_rng(rng)
    n_draws = check_integer("n_draws", n_draws, 1, None)
    accepted: list[np.ndarray] = []
    total = 0
    proposals = 0
    while total < n_draws:
        if proposals >= max_proposals:
            raise ResourceLimitError(
                f"Algorithm 1 used max_proposals = {max_proposals} proposals for {total} of {n_draws} draws "
                "(acceptance too low) — use Algorithm 2 (importance sampling) or a noisier release"
            )
        theta = sample_prior(rng, batch)
        x = sample_data(theta, rng)
        lik = likelihood(y, x)
        c = bound(x) if callable(bound) else float(bound)
        if np.any(lik > np.asarray(c) * (1 + 1e-12)):
            raise InvalidParameterError("bound must be ≥ the likelihood of every draw (a global bound C)")
        keep = rng.random(theta.shape[0]) <= lik / c
        accepted.append(theta[keep])
        total += int(keep.sum())
        proposals += theta.shape[0]
    draws = np.concatenate(accepted)[:n_draws]
    return PosteriorDraws(draws, proposals, total)


def importance_posterior(
    y,
    sample_proposal: Callable[[np.random.Generator, int], np.ndarray],
    log_prior_over_proposal: Callable[[np.ndarray], np.ndarray],
    sample_data: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    likelihood: Callable[[object, np.ndarray], np.ndarray],
    m: int,
    *,
    rng: np.random.Generator,
    a: Callable[[np.ndarray], np.ndarray] = lambda t: t,
) -> ImportanceEstimate:
    r"""Algorithm 2: Ê[a(θ) | y, z] = Σ w a(θ) / Σ w with w = π(y | X, z) π(θ | z) / g(θ); ESS = (Σw)²/Σw²."""
    check_rng(rng)
    m = check_integer("m", m, 1, None)
    theta = sample_proposal(rng, m)
    x = sample_data(theta, rng)
    w = likelihood(y, x) * np.exp(log_prior_over_proposal(theta))
    if not np.any(w > 0):
        raise InvalidParameterError("every importance weight is zero — use a proposal closer to the posterior")
    est = float(np.sum(w * a(theta)) / np.sum(w))
    ess = float(w.sum() ** 2 / np.sum(w**2))
    return ImportanceEstimate(est, ess, m)


@dataclass(frozen=True)
class KAnonymityDemo:
    r"""O10's demo: θ ~ U(0,1), S ~ Bin(n, θ), public Z = k-anonymity (S ∈ {k..n−k}), release
    y ∝ exp(−ε|y − S| / (2Δ_z)) on {k..n−k} (Δ_z = 1, Example 2).

    Examples
    --------
    >>> demo = KAnonymityDemo()
    >>> round(demo.exact_posterior_mean(5), 5), round(demo.global_bound, 5)
    (0.27848, 0.22237)
    """

    n: int = 30
    k: int = 5
    epsilon: float = 0.5
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_integer("n", self.n, 2, None)
        check_integer("k", self.k, 0, self.n // 2)
        check_interval("epsilon", self.epsilon, 0, None, closed="neither")
        check_interval("sensitivity", self.sensitivity, 0, None, closed="neither")

    @property
    def support(self) -> np.ndarray:
        return np.arange(self.k, self.n - self.k + 1)

    @property
    def rate(self) -> float:
        return self.epsilon / (2 * self.sensitivity)

    def normaliser(self, s) -> np.ndarray:
        """K(s) = Σ_{y in support} exp(−a|y − s|)."""
        s = np.asarray(s)
        return np.exp(-self.rate * np.abs(self.support[None, :] - s[..., None])).sum(axis=-1)

    def likelihood(self, y, s) -> np.ndarray:
        s = np.asarray(s)
        return np.exp(-self.rate * np.abs(y - s)) / self.normaliser(s)

    @property
    def global_bound(self) -> float:
        return float(1.0 / self.normaliser(self.support).min())

    def exact_posterior_mean(self, y: int, variant: Literal["exact", "per-draw-bound"] = "exact") -> float:
        """E[θ | y, Z] = Σ_s w_s (s+1)/(n+2); ``"per-draw-bound"`` is the biased limit of the seed's Algorithm 1."""
        check_choice("variant", variant, ["exact", "per-draw-bound"])
        s = self.support
        w = np.exp(-self.rate * np.abs(y - s))
        if variant == "exact":
            w = w / self.normaliser(s)
        return float(np.sum(w * (s + 1) / (self.n + 2)) / w.sum())

    def _in_z(self, s: np.ndarray) -> np.ndarray:
        return (s >= self.k) & (s <= self.n - self.k)

    def _prior(self, rng, m):
        """m draws of θ from π(θ | z): θ ~ U(0, 1) kept when a draw S ~ Bin(n, θ) satisfies Z."""
        out = np.empty(0)
        while out.size < m:
            theta = rng.random(2 * m)
            out = np.concatenate([out, theta[self._in_z(rng.binomial(self.n, theta))]])
        return out[:m]

    def _data(self, theta, rng):
        """S ~ Bin(n, θ) conditioned on Z (resampled until k-anonymous)."""
        s = rng.binomial(self.n, theta)
        bad = ~self._in_z(s)
        while bad.any():
            s[bad] = rng.binomial(self.n, theta[bad])
            bad = ~self._in_z(s)
        return s

    def algorithm1(self, y: int, n_draws: int, *, rng: np.random.Generator,
                   bound: Literal["global", "per-draw"] = "global") -> PosteriorDraws:
        """Algorithm 1 draws of θ | y, Z with proposals θ ~ π(θ | z), S ~ π(s | θ, z)."""
        check_choice("bound", bound, ["global", "per-draw"])

        def lik(yy, s):
            ok = (s >= self.k) & (s <= self.n - self.k)
            return np.where(ok, self.likelihood(yy, np.clip(s, self.k, self.n - self.k)), 0.0)

        c = self.global_bound if bound == "global" else (lambda s: 1.0 / self.normaliser(np.clip(s, self.k, self.n - self.k)))
        return rejection_posterior(y, self._prior, self._data, lik, c, n_draws, rng=rng)

    def algorithm2(self, y: int, m: int, *, rng: np.random.Generator) -> ImportanceEstimate:
        """Algorithm 2 with the prior as proposal (weights = likelihood; zero outside Z)."""

        def lik(yy, s):
            ok = (s >= self.k) & (s <= self.n - self.k)
            return np.where(ok, self.likelihood(yy, np.clip(s, self.k, self.n - self.k)), 0.0)

        return importance_posterior(y, self._prior, lambda t: np.zeros_like(t), self._data, lik, m, rng=rng)


def two_cell_bayes_risk(n: int, p: float, epsilon: float, *, tail: float = 45.0) -> dict[str, float]:
    r"""Lemma 14 on two cells with a public total (oracle O8): E[Var(X1 | ·)] for three summaries.

    X1 ~ Bin(N, p), X2 = N − X1 (N public), Y_i = X_i + DL(ε/2). ``"y_and_z"``: E[Var | Y1, Y2, N];
    ``"projected"``: E[Var | Y*] with Y* = clip((Y1 − Y2 + N)/2, 0, N); ``"rounded"``: E[Var | ⌊Y*⌋].

    Examples
    --------
    >>> r = two_cell_bayes_risk(20, 0.3, 1.0)
    >>> round(r["y_and_z"], 4), round(r["projected"], 4), round(r["rounded"], 4)
    (1.803, 1.9869, 2.0048)
    """
    n = check_integer("n", n, 1, None)
    p = check_interval("p", p, 0, 1, closed="neither")
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    a = eps / 2
    m = int(math.ceil(tail / a))
    x = np.arange(n + 1)
    prior = binomial_logpmf(n, p)
    y = np.arange(-m, n + m + 1)
    # E[Var | Y1, Y2]: joint over (x, y1, y2)
    l1 = dl_logpmf(y[None, :] - x[:, None], a)  # (x, y1)
    l2 = dl_logpmf(y[None, :] - (n - x)[:, None], a)
    logj = prior[:, None, None] + l1[:, :, None] + l2[:, None, :]
    logm = logsumexp(logj, axis=0)
    post = np.exp(logj - logm[None])
    mean = np.tensordot(x, post, axes=(0, 0))
    second = np.tensordot(x.astype(float) ** 2, post, axes=(0, 0))
    risk_full = float(np.sum(np.exp(logm) * (second - mean**2)))
    # D = Y1 − Y2 = 2x − N + (e1 − e2); e1 − e2 has the pmf DL * DL
    e = np.arange(-2 * m, 2 * m + 1)
    dl = np.exp(dl_logpmf(np.arange(-m, m + 1), a))
    diff = np.convolve(dl, dl)  # pmf of e1 − e2 on e
    dvals = np.arange(-n - 2 * m, n + 2 * m + 1)
    pd = np.zeros((n + 1, dvals.size))
    for xi in range(n + 1):  # N + 1 ≤ a few dozen shifts
        pd[xi, (2 * xi - n + e) - dvals[0]] = diff
    ystar = np.clip((dvals + n) / 2, 0, n)

    def risk_of(summary: np.ndarray) -> float:
        keys, inv = np.unique(summary, return_inverse=True)
        joint = np.exp(prior)[:, None] * pd
        grouped = np.zeros((n + 1, keys.size))
        np.add.at(grouped.T, inv, joint.T)
        pm = grouped.sum(axis=0)
        ok = pm > 0
        mu = (x @ grouped)[ok] / pm[ok]
        s2 = ((x.astype(float) ** 2) @ grouped)[ok] / pm[ok]
        return float(np.sum(pm[ok] * (s2 - mu**2)))

    return {"y_and_z": risk_full, "projected": risk_of(ystar), "rounded": risk_of(np.floor(ystar)),
            "prior": float(n * p * (1 - p))}


def _ump_power(p0: np.ndarray, p1: np.ndarray, alpha: float) -> float:
    """Power of the randomised UMP test rejecting for large values (outcomes sorted ascending)."""
    tail0 = np.cumsum(p0[::-1])
    k = int(np.searchsorted(tail0, alpha, side="right"))  # outcomes rejected outright: the top k
    full0 = tail0[k - 1] if k > 0 else 0.0
    power = float(np.sum(p1[::-1][:k]))
    if k < p0.size and p0[::-1][k] > 0:
        gamma = (alpha - full0) / p0[::-1][k]
        power += gamma * float(p1[::-1][k])
    return power


def power_comparison(
    n: int, theta0: float, theta1: float, alpha: float = 0.05, *,
    noise: Literal["discrete-laplace", "gaussian"] = "discrete-laplace", epsilon: float = 0.5, sd: float = 10.0,
) -> dict[str, float]:
    r"""Power at θ1 of the level-α one-sided test of H0: θ ≤ θ0 from Y = S + noise vs Y* = clip(Y, 0, n) (O9).

    S ~ Bin(n, θ). Both tests are the randomised UMP tests (Y and Y* have monotone likelihood ratio for
    log-concave noise). Laplace noise DL(ε): the two powers are equal (clipping is sufficient, G11);
    Gaussian noise: clipping loses power when the raw threshold lies beyond n.

    Examples
    --------
    >>> r = power_comparison(10, 0.3, 0.7, epsilon=0.5)
    >>> round(r["raw"], 4), round(r["clipped"], 4)
    (0.3337, 0.3337)
    """
    n = check_integer("n", n, 1, None)
    t0 = check_interval("theta0", theta0, 0, 1, closed="neither")
    t1 = check_interval("theta1", theta1, 0, 1, closed="neither")
    alpha = check_interval("alpha", alpha, 0, 1, closed="neither")
    check_choice("noise", noise, ["discrete-laplace", "gaussian"])
    s = np.arange(n + 1)
    w0 = np.exp(binomial_logpmf(n, t0))
    w1 = np.exp(binomial_logpmf(n, t1))
    if noise == "discrete-laplace":
        eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
        m = int(math.ceil(60 / eps))
        y = np.arange(-m, n + m + 1)
        k = np.exp(dl_logpmf(y[:, None] - s[None, :], eps))
        p0, p1 = k @ w0, k @ w1
        raw = _ump_power(p0, p1, alpha)
        ystar = np.clip(y, 0, n)
        q0 = np.bincount(ystar, weights=p0, minlength=n + 1)
        q1 = np.bincount(ystar, weights=p1, minlength=n + 1)
        return {"raw": float(raw), "clipped": float(_ump_power(q0, q1, alpha))}
    sd = check_interval("sd", sd, 0, None, closed="neither")

    def sf(c, w):
        return float(np.sum(w * norm.sf((c - s) / sd)))

    from scipy.optimize import brentq

    c = brentq(lambda c: sf(c, w0) - alpha, -50 * sd - n, n + 50 * sd)
    raw = sf(c, w1)
    if c <= n:
        clipped = raw  # the rejection region {Y > c} lies inside [0, n]: clipping changes nothing
    else:
        atom0, atom1 = sf(n, w0), sf(n, w1)  # P(Y* = n) = P(Y ≥ n)
        clipped = alpha / atom0 * atom1
    return {"raw": raw, "clipped": clipped, "threshold": c}
