r"""Empirical privacy auditing: a statistical lower bound on the privacy loss a mechanism actually has.

Run a mechanism many times on each of two neighbouring inputs D and D' and record a scalar statistic of every
release (for the Gaussian-type mechanisms here: the release projected on the direction in which D and D' differ,
the likelihood-ratio statistic). For a threshold test "say D' when the statistic exceeds τ" with false-positive
rate :math:`p_0 = P_D[S]` and power :math:`p_1 = P_{D'}[S]`, an (ε, δ)-DP mechanism must satisfy

.. math:: p_1 \le e^\varepsilon p_0 + \delta \quad\text{and}\quad 1 - p_0 \le e^\varepsilon (1 - p_1) + \delta,

so :math:`\varepsilon \ge \ln\frac{p_1 - \delta}{p_0}` (and the same with the roles swapped). With Clopper–Pearson
bounds — an upper bound on :math:`p_0` and a lower bound on :math:`p_1`, each at level :math:`1 - (1-c)/2` so that
both hold at once with probability ≥ c — this gives a lower bound on ε that holds with confidence c
(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021). A correctly calibrated mechanism can exceed its claimed ε
here only with probability ≤ 1 − c; a mechanism with too little noise shows ε above its claim.

The threshold and the direction are chosen on one half of the samples (the selection half) and the bound is
computed on the other half, so choosing the best threshold does not bias the interval.

References
----------
.. [1] M. Jagielski, J. Ullman and A. Oprea, "Auditing Differentially Private Machine Learning: How Private is
       Private SGD?", NeurIPS 2020.
.. [2] M. Nasr, S. Song, A. Thakurta, N. Papernot and N. Carlini, "Adversary Instantiation: Lower Bounds for
       Differentially Private Machine Learning", IEEE S&P 2021.
.. [3] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of the
       binomial", Biometrika 26(4), 1934.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from engine.errors import InvalidParameterError
from engine.validation import check_interval

__all__ = ["PrivacyAudit", "clopper_pearson", "empirical_privacy"]


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided Clopper–Pearson interval for a binomial proportion.

    >>> low, high = clopper_pearson(0, 10, 0.95)
    >>> low, round(high, 4)
    (0.0, 0.3085)
    """
    if not (isinstance(trials, (int, np.integer)) and trials >= 1):
        raise InvalidParameterError(f"trials must be a whole number ≥ 1; got {trials!r}")
    if not (isinstance(successes, (int, np.integer)) and 0 <= successes <= trials):
        raise InvalidParameterError(f"successes must be a whole number in [0, trials]; got {successes!r}")
    level = check_interval("confidence", confidence, 0, 1, closed="neither")
    tail = (1.0 - level) / 2.0
    low = 0.0 if successes == 0 else float(stats.beta.ppf(tail, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(stats.beta.ppf(1.0 - tail, successes + 1, trials - successes))
    return low, high


@dataclass(frozen=True)
class PrivacyAudit:
    """Result of :func:`empirical_privacy`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound on the ε of any (ε, ``delta``)-DP statement the mechanism can satisfy (0 when the
        test shows nothing; ``inf`` is not returned — a power bound at or below δ gives 0).
    epsilon_hat : float
        The same quantity from the point estimates (no interval), on the evaluation half.
    delta, confidence : float
    threshold : float
        The selected τ.
    direction : str
        ``">"``: the test says D' when the statistic exceeds τ; ``"<"``: when it is below.
    fpr_upper, power_lower : float
        Clopper–Pearson bounds (each at level 1 − (1 − confidence)/2) on the false-positive rate under D and the
        power under D' of the selected test, on the evaluation half.
    n_d, n_d_prime : int
        Releases in the evaluation half for D and D'.
    """

    epsilon_lower: float
    epsilon_hat: float
    delta: float
    confidence: float
    threshold: float
    direction: str
    fpr_upper: float
    power_lower: float
    n_d: int
    n_d_prime: int

    def delta_lower(self, epsilon: float) -> float:
        """Lower confidence bound on δ at a given ε: power_lower − e^ε·fpr_upper (0 if negative).

        The same pair of Clopper–Pearson bounds backs every ε, so the bounds at several ε hold jointly.
        """
        eps = check_interval("epsilon", epsilon, 0, None)
        return max(0.0, self.power_lower - math.exp(min(eps, 700.0)) * self.fpr_upper)

    def describe(self) -> str:
        return (
            f"empirical ε ≥ {self.epsilon_lower:.3f} at δ = {self.delta:.3g} with {self.confidence:.0%} confidence "
            f"(point estimate {self.epsilon_hat:.3f}; threshold test {self.direction} {self.threshold:.4g}, "
            f"{self.n_d} + {self.n_d_prime} releases)"
        )


def _rates(sorted_scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Fraction of scores strictly above each threshold."""
    return 1.0 - np.searchsorted(sorted_scores, thresholds, side="right") / sorted_scores.size


def _eps(p0: np.ndarray, p1: np.ndarray, delta: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log((p1 - delta) / p0)
    return np.where((p1 > delta) & (p0 > 0), out, np.where(p1 > delta, np.inf, 0.0))


def empirical_privacy(scores_d, scores_d_prime, *, delta: float = 0.0, confidence: float = 0.95,
                      n_thresholds: int = 200, min_count: int = 30) -> PrivacyAudit:
    r"""Lower confidence bound on ε at δ from releases on two neighbouring inputs (optimal threshold test).

    Parameters
    ----------
    scores_d, scores_d_prime : array_like, 1-D
        The statistic of each release on D and on D' (at least 100 each). Independent releases.
    delta : float
        The δ of the statement audited, in [0, 1).
    confidence : float
        Joint confidence of the two Clopper–Pearson bounds, in (0, 1).
    n_thresholds : int
        Candidate thresholds (quantiles of the pooled selection half).
    min_count : int
        A threshold is only selected if at least this many selection-half releases of D fall in the test's
        rejection region, so that its false-positive rate is estimable.

    Returns
    -------
    PrivacyAudit

    Examples
    --------
    Two Gaussians one standard deviation apart (μ = 1 Gaussian DP, which is (ε, δ)-DP with ε ≈ 4.2 at δ = 1e-5
    and far below at larger δ):

    >>> rng = np.random.default_rng(0)
    >>> res = empirical_privacy(rng.normal(0, 1, 40_000), rng.normal(1, 1, 40_000), delta=1e-5)
    >>> 0.5 < res.epsilon_lower < res.epsilon_hat < 4.2
    True
    """
    s0 = np.asarray(scores_d, dtype=float).ravel()
    s1 = np.asarray(scores_d_prime, dtype=float).ravel()
    if s0.size < 100 or s1.size < 100:
        raise InvalidParameterError(f"need at least 100 releases on each input; got {s0.size} and {s1.size}")
    if not (np.isfinite(s0).all() and np.isfinite(s1).all()):
        raise InvalidParameterError("the release statistics must be finite numbers")
    dlt = check_interval("delta", delta, 0, 1, closed="left")
    level = check_interval("confidence", confidence, 0, 1, closed="neither")
    half0, half1 = s0.size // 2, s1.size // 2
    sel0, ev0 = np.sort(s0[:half0]), np.sort(s0[half0:])
    sel1, ev1 = np.sort(s1[:half1]), np.sort(s1[half1:])
    pooled = np.concatenate([sel0, sel1])
    taus = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1]))
    best = (-np.inf, 0.0, ">")
    for direction in (">", "<"):
        if direction == ">":
            p0, p1 = _rates(sel0, taus), _rates(sel1, taus)
        else:  # "say D' when below τ": swap the roles of the tails
            p0, p1 = 1.0 - _rates(sel0, taus), 1.0 - _rates(sel1, taus)
        ok = p0 * sel0.size >= min_count
        if not ok.any():
            continue
        eps = np.where(ok, _eps(p0, p1, dlt), -np.inf)
        i = int(np.argmax(eps))
        if eps[i] > best[0]:
            best = (float(eps[i]), float(taus[i]), direction)
    _, tau, direction = best
    above0 = int(np.sum(ev0 > tau))
    above1 = int(np.sum(ev1 > tau))
    hits0, hits1 = (above0, above1) if direction == ">" else (ev0.size - above0, ev1.size - above1)
    # A two-sided interval at level c has one-sided tails (1 − c)/2; using one side of each of two such intervals,
    # both bounds hold together with probability ≥ 1 − 2·(1 − c)/2 = c (Bonferroni).
    fpr_upper = clopper_pearson(hits0, ev0.size, level)[1]
    power_lower = clopper_pearson(hits1, ev1.size, level)[0]
    lower = float(_eps(np.array(fpr_upper), np.array(power_lower), dlt))
    hat = float(_eps(np.array(hits0 / ev0.size), np.array(hits1 / ev1.size), dlt))
    return PrivacyAudit(
        epsilon_lower=max(0.0, lower),
        epsilon_hat=max(0.0, hat),
        delta=dlt,
        confidence=level,
        threshold=tau,
        direction=direction,
        fpr_upper=fpr_upper,
        power_lower=power_lower,
        n_d=int(ev0.size),
        n_d_prime=int(ev1.size),
    )
