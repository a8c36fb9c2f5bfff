r"""Distinguishing protection: what an adversary who must tell two records apart can and cannot do.

Two views, both computed from the mechanism's configuration alone (no data):

1. **The paper's closed form** (Kohli & Blumenstock, Methods): translate each step's (B, ε_i, δ_i) to classic
   DP with the switch lemma (s = ⌈t/B⌉, t = 2 for any two records in the unit ball),
   ε̂_i = s ε_i, δ̂_i = min{1, (e^{sε_i} − 1)/(e^{ε_i} − 1) δ_i}, and add the steps' expected privacy losses

   .. math:: U = \frac{\hat\varepsilon_1^2}{4(\ln(1/\hat\delta_1) + \varepsilon_1)}
                 + \frac{\hat\varepsilon_2^2}{16 \ln(1.25/\hat\delta_2)},\qquad D = \frac{1}{U + 1}.

   Each term is the mean μ = Δ²/(2σ²) of the privacy-loss distribution N(μ, 2μ) of a Gaussian mechanism
   calibrated by the paper's formula for step i (Lemma 6 for step 3: σ² = 2Δ²(ln(1/δ) + ε)/ε², so
   μ = ε²/(4(ln(1/δ) + ε)); the classical bound with the paper's factor for step 4) — evaluated at the
   translated (ε̂, δ̂). As printed, the denominator mixes ε̂1 with ε1 (not ε̂1), ln(1/δ̂1) = 0 when δ̂1 clips to 1,
   and δ̂2 = 1 gives ln 1.25. D is 1 when the expected loss is 0 and falls toward 0 as it grows. It is a
   summary built on worst-case translations, not the expected loss of Algorithm 1's actual noise.

2. **The Gaussian mechanism's exact value of the same quantity.** X_priv = X + N(0, σ²I): two datasets whose
   differing rows are t apart give outputs N(0, σ²) vs N(t, σ²) along that direction, whose privacy loss is
   exactly N(μ, 2μ) with μ = t²/(2σ²). So U = t²/(2σ²) — exact, no switch lemma — and D = 1/(U + 1).
   Because the paper's D for Algorithm 1 is a bound-derived value and this one is exact, a Gaussian D and a
   projection D are not the same kind of number; compare mechanisms with view 3.

3. **Hypothesis testing (every mechanism).** An adversary sees the release and must decide between "record
   x is in the data" (H0) and "record x' is in the data instead" (H1), t = ‖x − x'‖₂ apart. Any test has a
   false-positive rate α and a false-negative rate β; the trade-off function gives the smallest β possible
   at each α (Dong, Roth & Su 2022):

   * from one (ε, δ): :math:`\beta(\alpha) \ge \max\{0,\ 1 - \delta - e^\varepsilon\alpha,\
     e^{-\varepsilon}(1 - \delta - \alpha)\}` (Kairouz, Oh & Viswanath 2015);
   * Gaussian mechanism, exactly: :math:`\beta(\alpha) = \Phi(\Phi^{-1}(1 - \alpha) - t/\sigma)`;
   * private projection (two composed steps): the pointwise maximum of the (ε, δ) bounds of (a) the basic
     composition of the two steps translated separately, (ε̂1 + ε̂2, δ̂1 + δ̂2), and (b) the mechanism's whole
     guarantee translated (``Guarantee.loss_at_distance``). Each is valid, so their maximum is.

   * element-wise JL (one entry changed by at most ``element_bound``): the element-level (ε, δ) covers ONE
     entry; two whole records t apart differ by at most s = ⌈t√d/bound⌉ + d − 1 such changes, so the record-level
     statement is group privacy over s steps (:func:`engine.mechanisms.jl_laplace.element_record_loss`).

   Every :class:`DistinguishingResult` says whether its score is ``"exact"`` (Gaussian) or a ``"bound"``
   derived from a guarantee (:attr:`DistinguishingResult.basis`).

   Scalar summary (:attr:`DistinguishingResult.protection`): the smallest total error any test can reach,
   :math:`\min_\alpha \alpha + \beta(\alpha) = 1 - \text{max advantage}` — 1 means no test beats a coin flip,
   0 means the two records can be told apart without error. For one (ε, δ): 2(1 − δ)/(1 + e^ε); for the
   Gaussian: 2Φ(−t/(2σ)).

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (distinguishing protection), Lemma 4. Digest: ``shared/spec/000-targeted-dp.md``.
.. [2] Kairouz, Oh & Viswanath, "The composition theorem for differential privacy", ICML 2015.
.. [3] Dong, Roth & Su, "Gaussian differential privacy", JRSS-B 84(1), 2022.
.. [4] Balle & Wang, "Improving the Gaussian mechanism for differential privacy", ICML 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri  # Φ, Φ⁻¹: scipy.stats.norm's values without importing scipy.stats

from engine.errors import InvalidParameterError
from engine.mechanisms.base import RecordMechanism
from engine.mechanisms.private_projection import (  # the paper's closed form lives with Algorithm 1
    projection_distinguishing,
    projection_expected_loss,
)
from engine.validation import check_array_interval, check_interval

#: Default grid of false-positive rates.
DEFAULT_ALPHAS = np.linspace(0.0, 1.0, 201)
DEFAULT_ALPHAS.setflags(write=False)


def _scalar_or_array(value: np.ndarray):
    arr = np.asarray(value, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def _check_alphas(alphas) -> np.ndarray:
    arr = check_array_interval("alphas", DEFAULT_ALPHAS if alphas is None else alphas, 0, 1)
    if arr.ndim > 1:
        raise InvalidParameterError(f"alphas must be a number or a 1-D list of numbers in [0, 1]; got shape {arr.shape}")
    return arr


def _check_distance(distance) -> float:
    return check_interval(
        "distance",
        distance,
        0,
        2,
        closed="right",
        hint="rows lie in the unit L2 ball, so two records are at most 2 apart (2 = any two records)",
    )


# ---------------------------------------------------------------------------------------------- closed forms
def gaussian_expected_loss(distance, sigma):
    r"""Exact expected privacy loss μ = t²/(2σ²) of X + N(0, σ²I) for two records t apart. Vectorised.

    The privacy loss of N(0, σ²) against N(t, σ²) is distributed as N(μ, 2μ).

    >>> gaussian_expected_loss(2.0, 2.0)
    0.5
    """
    t = check_array_interval("distance", distance, 0, None)
    s = check_array_interval("sigma", sigma, 0, None, closed="neither")
    return _scalar_or_array(t**2 / (2.0 * s**2))


def guarantee_expected_loss(epsilon, delta):
    r"""Expected privacy loss attributed to a single (ε̂, δ̂) statement, the paper's step-3 way.

    δ̂ > 0: ε̂²/(4(ln(1/δ̂) + ε̂)) — the mean loss of the Lemma-6 Gaussian that just meets (ε̂, δ̂) (the
    paper's first term, with ε̂ in the denominator since there is no per-step ε to mix in).
    δ̂ = 0 (pure DP): ε̂·tanh(ε̂/2), the largest expected privacy loss (KL divergence) of any ε̂-DP mechanism.
    Vacuous statements (ε̂ = ∞ or δ̂ = 1 with no information) give ∞. Vectorised.

    >>> round(guarantee_expected_loss(1.0, 0.0), 4)
    0.4621
    """
    eps = check_array_interval("epsilon", epsilon, 0, None, allow_inf=True)  # ε = ∞: no protection
    dlt = check_array_interval("delta", delta, 0, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        approx = eps**2 / (4.0 * (-np.log(dlt) + eps))
        pure = eps * np.tanh(eps / 2.0)
    out = np.where(dlt > 0, approx, pure)
    out = np.where(np.isinf(eps) | (dlt >= 1.0), np.inf, out)
    out = np.where(eps == 0, 0.0, out)
    return _scalar_or_array(out)


# ---------------------------------------------------------------------------------------------- trade-off curves
def _eps_delta_lines(epsilon: float, delta: float) -> list[tuple[float, float]]:
    """β(α) ≥ max_i (a_i + b_i α): the three lines of the (ε, δ) trade-off bound (ε finite)."""
    big = math.exp(epsilon) if epsilon <= 700.0 else math.inf  # e^ε overflows past ~709: then the slope is −inf
    return [(0.0, 0.0), (1.0 - delta, -big), ((1.0 - delta) / big, -1.0 / big)]


def _lines_curve(lines: list[tuple[float, float]], alphas: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # −inf·0 at α = 0: the line's value there is its intercept
        values = [np.where(alphas == 0, a, a + b * alphas) for a, b in lines]
    return np.max(values, axis=0)


def _lines_min_total_error(lines: list[tuple[float, float]]) -> float:
    """min over α ∈ [0, 1] of α + max_i(a_i + b_i α): attained at an endpoint or where two lines cross."""
    points = {0.0, 1.0}
    for i, (a1, b1) in enumerate(lines):
        for a2, b2 in lines[i + 1 :]:
            if b1 != b2:
                x = (a2 - a1) / (b1 - b2)
                if 0.0 <= x <= 1.0:
                    points.add(x)
    xs = np.array(sorted(points))
    total = xs + _lines_curve(lines, xs)
    return float(min(1.0, max(0.0, total.min())))


def tradeoff_curve_from_eps_delta(epsilon, delta, alphas=None) -> np.ndarray:
    r"""Smallest false-negative rate β at each false-positive rate α allowed by (ε, δ)-DP.

    .. math:: \beta(\alpha) = \max\{0,\ 1 - \delta - e^\varepsilon\alpha,\ e^{-\varepsilon}(1 - \delta - \alpha)\}

    ``epsilon`` may be ``inf`` (no bound: β = max(0, 1 − δ) at α = 0 and 0 elsewhere).

    Parameters
    ----------
    epsilon : float, ≥ 0 (``inf`` allowed)
    delta : float in [0, 1]
    alphas : array_like in [0, 1], optional
        Default: 201 points from 0 to 1.

    Examples
    --------
    >>> tradeoff_curve_from_eps_delta(1.0, 0.1, [0.0, 1.0]).tolist()
    [0.9, 0.0]
    >>> round(float(tradeoff_curve_from_eps_delta(0.0, 0.0, [0.3])[0]), 12)
    0.7
    """
    eps = check_interval("epsilon", epsilon, 0, None, allow_inf=True)  # ε = ∞: no protection
    dlt = check_interval("delta", delta, 0, 1)
    alph = _check_alphas(alphas)
    if math.isinf(eps):
        return np.where(alph == 0, 1.0 - dlt, 0.0)
    return _lines_curve(_eps_delta_lines(eps, dlt), alph)


def gaussian_tradeoff_curve(sensitivity, sigma, alphas=None) -> np.ndarray:
    r"""Exact trade-off of the Gaussian mechanism: :math:`\beta(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \Delta/\sigma)`.

    The Neyman–Pearson test between N(0, σ²) and N(Δ, σ²) rejects for large outputs; this is its β at level α
    (Dong, Roth & Su 2022, G_μ with μ = Δ/σ).

    Examples
    --------
    >>> gaussian_tradeoff_curve(1.0, 1.0, [0.0, 1.0]).tolist()
    [1.0, 0.0]
    >>> round(float(gaussian_tradeoff_curve(1.0, 1.0, [0.5])[0]), 4)
    0.1587
    """
    delta_ = check_interval("sensitivity", sensitivity, 0, None)
    s = check_interval("sigma", sigma, 0, None, closed="neither")
    alph = _check_alphas(alphas)
    return ndtr(-ndtri(alph) - delta_ / s)  # Φ(Φ⁻¹(1 − α) − Δ/σ); norm.isf(α) is −Φ⁻¹(α)


def gaussian_min_total_error(sensitivity, sigma) -> float:
    """min_α α + β(α) for the Gaussian mechanism: 2Φ(−Δ/(2σ)) (= 1 − max advantage).

    >>> gaussian_min_total_error(0.0, 1.0)
    1.0
    """
    delta_ = check_interval("sensitivity", sensitivity, 0, None)
    s = check_interval("sigma", sigma, 0, None, closed="neither")
    return float(2.0 * ndtr(-delta_ / (2.0 * s)))


def eps_delta_min_total_error(epsilon, delta) -> float:
    """min_α α + β(α) under (ε, δ)-DP: 2(1 − δ)/(1 + e^ε) (= 1 − max advantage).

    >>> round(eps_delta_min_total_error(math.log(3), 0.0), 12)
    0.5
    """
    eps = check_interval("epsilon", epsilon, 0, None, allow_inf=True)  # ε = ∞: no protection
    dlt = check_interval("delta", delta, 0, 1)
    if math.isinf(eps):
        return 0.0
    return float(2.0 * (1.0 - dlt) / (1.0 + math.exp(eps))) if eps < 700 else 0.0


@dataclass(frozen=True)
class TradeoffCurve:
    """Lower bound (exact for the Gaussian mechanism) on an attacker's false-negative rate at each false-positive rate.

    Attributes
    ----------
    alphas, betas : tuple of float
        False-positive rates and the smallest false-negative rate any test can reach there.
    method : str
        ``"gaussian-exact"``, ``"eps-delta"`` (one (ε, δ) statement) or ``"composition"`` (pointwise max of
        several valid (ε, δ) bounds).
    eps_delta : tuple of (float, float)
        The (ε, δ) statements behind the bound (empty for ``"gaussian-exact"``).
    min_total_error : float
        min over α of α + β(α) on the exact piecewise function (not only on the grid) = 1 − max advantage.
    distance : float
        L2 distance between the two records the attacker must tell apart.
    mu : float
        Δ/σ for ``"gaussian-exact"`` (NaN otherwise).
    description : str
    """

    alphas: tuple[float, ...]
    betas: tuple[float, ...]
    method: str
    eps_delta: tuple[tuple[float, float], ...]
    min_total_error: float
    distance: float
    mu: float
    description: str

    @property
    def max_advantage(self) -> float:
        """max over α of 1 − α − β(α): the best attacker's edge over a coin flip (0 = none, 1 = certainty)."""
        return 1.0 - self.min_total_error


def _kind(mechanism: object) -> str:
    if not isinstance(mechanism, RecordMechanism) or not type(mechanism).KIND:
        raise InvalidParameterError(
            f"mechanism must be a mechanism configuration (engine.mechanisms); got {type(mechanism).__name__}"
        )
    return type(mechanism).KIND


def tradeoff_curve(mechanism: RecordMechanism, alphas=None, distance: float = 2.0) -> TradeoffCurve:
    """The best distinguishing attacker's false-negative rate at each false-positive rate, for any mechanism.

    Parameters
    ----------
    mechanism : RecordMechanism
        A mechanism configuration (``engine.mechanisms``). A mechanism with an exact trade-off
        (:meth:`~engine.mechanisms.base.RecordMechanism.exact_tradeoff`, e.g. the Gaussian mechanism: Δ =
        ``distance``, its σ) gets its exact curve; every other the pointwise max of the (ε, δ) statements it makes
        at ``distance`` (:meth:`~engine.mechanisms.base.RecordMechanism.distance_statements`: its guarantee by the
        switch lemma; the projection adds its per-step composition).
    alphas : array_like, optional
        False-positive rates in [0, 1]; default 201 points.
    distance : float
        L2 distance in (0, 2] between the two records (2 = any two records; B = the targeted distance).

    Returns
    -------
    TradeoffCurve

    Examples
    --------
    >>> from engine.mechanisms.private_projection import PrivateProjection
    >>> delta = 1 / 4202
    >>> curve = tradeoff_curve(PrivateProjection(b=2.0, epsilon1=3.0, delta1=2 * delta / 3,
    ...                                          epsilon2=0.9999, delta2=delta / 3), [0.0, 0.05])
    >>> curve.method, round(curve.betas[0], 6)
    ('composition', 0.999762)
    """
    t = _check_distance(distance)
    alph = _check_alphas(alphas)
    _kind(mechanism)
    exact = mechanism.exact_tradeoff(t)
    if exact is not None:
        sigma = float(exact.sigma)
        betas = gaussian_tradeoff_curve(t, sigma, alph)
        return TradeoffCurve(
            alphas=tuple(float(a) for a in alph),
            betas=tuple(float(b) for b in betas),
            method="gaussian-exact",
            eps_delta=(),
            min_total_error=gaussian_min_total_error(t, sigma),
            distance=t,
            mu=t / sigma,
            description=(
                f"exact Neyman–Pearson trade-off of N(0, σ²) vs N({t:g}, σ²), σ = {sigma:.4g} (Gaussian DP, μ = {t / sigma:.4g})"
            ),
        )
    statements, text = mechanism.distance_statements(t)
    finite = [(e, d) for e, d in statements if math.isfinite(e) and d < 1.0]
    if not finite:
        return TradeoffCurve(
            alphas=tuple(float(a) for a in alph),
            betas=tuple(0.0 for _ in alph),
            method="eps-delta",
            eps_delta=tuple(statements),
            min_total_error=0.0,
            distance=t,
            mu=math.nan,
            description=f"no (ε, δ) bound holds — {text} — so an attacker may tell the two records apart without error",
        )
    lines = [line for e, d in finite for line in _eps_delta_lines(e, d)]
    betas = _lines_curve(lines, alph)
    return TradeoffCurve(
        alphas=tuple(float(a) for a in alph),
        betas=tuple(float(b) for b in betas),
        method="composition" if len(finite) > 1 else "eps-delta",
        eps_delta=tuple(finite),
        min_total_error=_lines_min_total_error(lines),
        distance=t,
        mu=math.nan,
        description=(
            "(ε, δ) trade-off bound from " + text + " — guaranteed: the mechanism may protect more than this"
        ),
    )


@dataclass(frozen=True)
class DistinguishingResult:
    """Distinguishing protection of a mechanism (no data needed).

    Attributes
    ----------
    protection : float
        min over α of α + β(α): the smallest total error (false positives + false negatives) of the best test
        telling two records ``distance`` apart; 1 − ``max_advantage``. In [0, 1]; the hypothesis-testing score,
        comparable across mechanisms.
    max_advantage : float
    expected_loss : float
        U: the paper's closed form (projection), the exact t²/(2σ²) (Gaussian), or
        :func:`guarantee_expected_loss` of the translated guarantee (others; ∞ when there is none).
    expected_loss_score : float
        D = 1/(U + 1), the paper's distinguishing protection (0 when U = ∞).
    expected_loss_method : str
    curve : TradeoffCurve
    distance : float
    mechanism : str
        The mechanism's KIND.
    basis : {"exact", "bound"}
        ``"exact"``: ``protection`` is the exact value for this mechanism (the Gaussian mechanism's
        Neyman–Pearson trade-off); ``"bound"``: a guaranteed floor derived from a stated (ε, δ) guarantee —
        the mechanism may protect more. The UI must label the number accordingly.
    basis_text : str
        One sentence saying which, for labels and exports.
    """

    protection: float
    max_advantage: float
    expected_loss: float
    expected_loss_score: float
    expected_loss_method: str
    curve: TradeoffCurve
    distance: float
    mechanism: str
    basis: Literal["exact", "bound"]
    basis_text: str


def distinguishing(mechanism: RecordMechanism, *, distance: float = 2.0, alphas=None) -> DistinguishingResult:
    """Distinguishing protection of a mechanism configuration: the paper's D and the hypothesis-testing view.

    Examples
    --------
    >>> from engine.mechanisms.private_projection import PrivateProjection
    >>> delta = 1 / 4202
    >>> res = distinguishing(PrivateProjection(b=2.0, epsilon1=3.0, delta1=2 * delta / 3,
    ...                                        epsilon2=0.9999, delta2=delta / 3))
    >>> round(res.expected_loss_score, 4), round(res.protection, 4)
    (0.8347, 0.036)
    """
    t = _check_distance(distance)
    curve = tradeoff_curve(mechanism, alphas, t)
    kind = _kind(mechanism)
    exact = mechanism.exact_tradeoff(t)
    closed = mechanism.expected_loss(t)
    if exact is not None:
        loss = float(gaussian_expected_loss(t, float(exact.sigma)))
        method = f"exact mean of the Gaussian privacy-loss distribution, t²/(2σ²) at t = {t:g}"
    elif closed is not None:
        loss, method = float(closed[0]), closed[1]
    else:
        statements, _ = mechanism.distance_statements(t)
        losses = [float(guarantee_expected_loss(e, d)) for e, d in statements if math.isfinite(e) and d < 1]
        loss = min(losses) if losses else math.inf
        method = "expected loss attributed to the translated guarantee (guarantee_expected_loss)"
    score = 0.0 if math.isinf(loss) else 1.0 / (1.0 + loss)
    basis: Literal["exact", "bound"]
    if curve.method == "gaussian-exact":
        basis, basis_text = "exact", (
            f"Exact: the best possible test between two records {t:g} apart under this Gaussian noise "
            "(Neyman–Pearson); no attacker does better and the optimal one reaches it."
        )
    else:
        basis, basis_text = "bound", (
            f"Bound: the least protection the stated guarantee allows for two records {t:g} apart ({curve.description}); "
            "the mechanism may protect more."
        )
    return DistinguishingResult(
        protection=curve.min_total_error,
        max_advantage=curve.max_advantage,
        expected_loss=loss,
        expected_loss_score=score,
        expected_loss_method=method,
        curve=curve,
        distance=t,
        mechanism=kind,
        basis=basis,
        basis_text=basis_text,
    )


__all__ = [
    "DEFAULT_ALPHAS",
    "DistinguishingResult",
    "TradeoffCurve",
    "distinguishing",
    "eps_delta_min_total_error",
    "gaussian_expected_loss",
    "gaussian_min_total_error",
    "gaussian_tradeoff_curve",
    "guarantee_expected_loss",
    "projection_distinguishing",
    "projection_expected_loss",
    "tradeoff_curve",
    "tradeoff_curve_from_eps_delta",
]
