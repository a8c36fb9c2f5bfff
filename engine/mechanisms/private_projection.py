r"""Algorithm 1 of Kohli & Blumenstock — the private projection — and its noise calibration.

This module is the one home of Algorithm 1. The paper's steps, for X (n × d, rows in the unit L2 ball):

1. :math:`R \in \{-1, 0, 1\}^{d \times k}`, entries i.i.d. uniform (:math:`p_0 = 1/3`);
2. :math:`P = k^{-1} X R`;
3. :math:`P_{priv} = P + G`, :math:`G_{ij} \sim N(0, \sigma_1^2)` (:func:`projection_sigma1`);
4. :math:`C_{priv} = X^\top X + G'`, :math:`G'` symmetric with i.i.d. :math:`N(0, \sigma_2^2)` upper triangle
   (:func:`projection_sigma2`);
5. :math:`V^\top` = right singular vectors of :math:`C_{priv}` (the top ``rank`` of them);
6. :math:`X_{priv} = P_{priv} (V^\top R)^\dagger V^\top`.

Theorem 2: the output is :math:`(B, \varepsilon_1 + \varepsilon_2, \delta_1 + \delta_2)`-targeted DP.

Facts used here (``shared/spec/000-targeted-dp.md``, "Facts about Algorithm 1"; not stated in the paper)
----------------------------------------------------------------------------------------------------------
Write :math:`S = R R^\top` (d × d) and :math:`H = V^\top S V` (r × r). Then

.. math:: X_{priv} = k^{-1} X A + G M,\quad A = R (V^\top R)^\dagger V^\top = S V H^\dagger V^\top,\quad
          M = (V^\top R)^\dagger V^\top,\quad M^\top M = V H^\dagger V^\top,

and the rows of :math:`G M` are i.i.d. :math:`N(0, \sigma_1^2 V H^\dagger V^\top)`. At full rank (r = d, R of
full row rank — near-certain for k ≫ d such as the paper's k = 10⁴, but NOT for small k: a 10 × 10 ternary R is
singular with probability ≈ 2 %, a 3 × 3 one ≈ 40 %; the release then reports that its expectation is a projection
of X) :math:`A = I_d` and :math:`M^\top M = S^{-1}` whatever V is, so

(a) the paper's output is :math:`X/k` plus noise — a factor k is missing; multiplying by k is free
    post-processing and makes the release unbiased for X (``output_scale="unbiased"``, the default);
(b) steps 4–5 do not change the output distribution at full rank: the (ε2, δ2) spent on them buys nothing;
(c) the noise can be drawn directly in n × d (``implementation="fast"``, the default), in
    O(d²k + nd²) time and O(nd) memory instead of O(ndk) time and O(nk) memory, with the SAME output distribution
    for every rank r (the projection term :math:`X A` is exact; A is formed once as a d × d matrix);
(d) the per-coordinate noise sd on the unbiased scale is about :math:`\sigma_1 \sqrt{1.5 k}`
    (:func:`projection_noise_sd`).

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Algorithm 1, Propositions 1–2, Lemmas 5–7, Theorem 2.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from engine.accounting.composition import parallel_composition, sequential_composition
from engine.accounting.tdp import switch_loss
from engine.constraints import Choice, Constraint, Integer, Real, check_declared
from engine.errors import (
    DataValidationError,
    InsufficientDataError,
    InvalidParameterError,
    ResourceLimitError,
)
from engine.guarantee import Guarantee, Release
from engine.mechanisms.base import (
    FormField,
    MechanismReport,
    MechanismTags,
    PartitionPlan,
    RecordMechanism,
    ReportMetric,
    ReportTable,
    register,
)
from engine.validation import (
    check_array_integer,
    check_array_interval,
    check_integer,
    check_rng,
    check_unit_ball,
)

if TYPE_CHECKING:
    from engine.accounting.budget import BudgetSplit
    from engine.mechanisms.samplers import NoiseSampler

#: Memory the reference implementation may use for its n × k matrices (two are alive at once). Override per call
#: with ``PrivateProjection.release(..., memory_limit_bytes=...)``.
REFERENCE_MEMORY_LIMIT_BYTES = 2 * 1024**3

#: Largest projection dimension accepted (R is d × k; the paper uses k = 10⁴).
MAX_K = 10_000_000

#: Rows of standard normals drawn at a time by the fast path (bounds its extra memory to a few MB).
_CHUNK_ROWS = 1 << 16

#: Eigenvalues of H = VᵀRRᵀV below this fraction of the largest are treated as zero (exact rank deficiency of
#: VᵀR, which happens when k < r); the pseudo-inverse then matches ``np.linalg.pinv`` in exact arithmetic.
_RANK_RTOL = 1e-10

#: ln E[exp(R_pj²)] with R_pj² ~ Bernoulli(1 − p0), p0 = 1/3 (Proposition 1).
_LOG_MGF = math.log((2.0 / 3.0) * (math.e - 1.0) + 1.0)


def _scalar_or_array(value: np.ndarray):
    return float(value) if np.ndim(value) == 0 else value


def projection_sigma1(b, epsilon1, delta1, k, d):
    r"""Noise sd of step 3 of Algorithm 1 (Gaussian noise on :math:`k^{-1}XR`), on the paper's scale.

    .. math:: \sigma_1 = \frac{B}{\sqrt{k}}\sqrt{d \ln\big(\tfrac23 (e-1)+1\big) - k^{-1}\ln(\delta_1/2)}
              \cdot \frac{\sqrt{2(\ln(1/\delta_1)+\varepsilon_1)}}{\varepsilon_1}

    The first factor is the probabilistic Frobenius sensitivity α of :math:`k^{-1}XR` (Proposition 1 with
    :math:`p_0 = 1/3`, β = δ1/2); the second is Lemma 6's Gaussian calibration at δ = δ1/2. Vectorised.

    Parameters
    ----------
    b : float or array_like
        Target distance B in (0, 2].
    epsilon1 : float or array_like
        > 0.
    delta1 : float or array_like
        In (0, 1).
    k : int or array_like
        Projection dimension, ≥ 1.
    d : int or array_like
        Number of features, ≥ 1.

    Returns
    -------
    float or ndarray

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Algorithm 1 step 3, Proposition 2.

    Examples
    --------
    Spec oracle (n = 4201, d = 10, B = 0.25, ε1 = 3, δ1 = 2/(3·4202), k = 10⁴):

    >>> round(projection_sigma1(0.25, 3.0, 2 / (3 * 4202), 10_000, 10), 5)
    0.01116
    """
    bb = check_array_interval("b", b, 0, 2, closed="right")
    eps = check_array_interval("epsilon1", epsilon1, 0, None, closed="neither")
    dlt = check_array_interval("delta1", delta1, 0, 1, closed="neither")
    kk = check_array_integer("k", k, 1)
    dd = check_array_integer("d", d, 1)
    alpha = bb / np.sqrt(kk) * np.sqrt(dd * _LOG_MGF - np.log(dlt / 2.0) / kk)
    return _scalar_or_array(alpha * np.sqrt(2.0 * (np.log(1.0 / dlt) + eps)) / eps)


def projection_sigma2(b, epsilon2, delta2):
    r"""Noise sd of step 4 (symmetric Gaussian noise on :math:`X^\top X`).

    .. math:: \sigma_2 = 2B\sqrt{2\ln(1.25/\delta_2)}/\varepsilon_2

    The classical Gaussian mechanism with Frobenius sensitivity 2B (Lemma 7); it needs ε2 < 1. Vectorised.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Algorithm 1 step 4, Lemma 7.

    Examples
    --------
    >>> round(projection_sigma2(0.25, 0.9999, 1 / (3 * 4202)), 4)
    2.1985
    """
    bb = check_array_interval("b", b, 0, 2, closed="right")
    eps = check_array_interval(
        "epsilon2", epsilon2, 0, 1, closed="neither", hint="the classical Gaussian mechanism of step 4 needs ε2 < 1"
    )
    dlt = check_array_interval("delta2", delta2, 0, 1, closed="neither")
    return _scalar_or_array(2.0 * bb * np.sqrt(2.0 * np.log(1.25 / dlt)) / eps)


def projection_noise_sd(b, epsilon1, delta1, k, d):
    r"""Expected per-coordinate noise sd of the unbiased (×k) release at full rank, before any data is seen.

    With :math:`S = RR^\top` and :math:`E[R_{pj}^2] = 2/3`, the noise covariance :math:`k^2\sigma_1^2 S^{-1}` has
    diagonal ≈ :math:`k^2 \sigma_1^2 \cdot 1.5/(k-d-1)` (the inverse-Wishart mean, which the ternary R matches to
    within O(1/k)), so

    .. math:: \text{sd} \approx \sigma_1 k \sqrt{1.5/(k-d-1)} \approx \sigma_1\sqrt{1.5k}\quad (k \gg d).

    Requires k > d + 1. Each release reports the exact value for its own R as ``noise_sd_per_coordinate``.

    Examples
    --------
    >>> round(projection_noise_sd(0.25, 3.0, 2 / (3 * 4202), 10_000, 10), 2)
    1.37
    """
    sigma1 = np.asarray(projection_sigma1(b, epsilon1, delta1, k, d))
    kk = np.asarray(k, dtype=float)
    dd = np.asarray(d, dtype=float)
    if np.any(kk <= dd + 1):
        raise InvalidParameterError(
            "projection_noise_sd needs k > d + 1; got "
            f"k = {float(np.min(kk)):g}, d = {float(np.max(dd)):g} — use k well above the number of features"
        )
    return _scalar_or_array(sigma1 * kk * np.sqrt(1.5 / (kk - dd - 1.0)))


def projection_expected_loss(b, epsilon1, delta1, epsilon2, delta2, distance=2.0):
    r"""The paper's expected privacy loss U of Algorithm 1 at distance t (default 2: any two records).

    .. math:: U = \frac{\hat\varepsilon_1^2}{4(\ln(1/\hat\delta_1) + \varepsilon_1)}
              + \frac{\hat\varepsilon_2^2}{16 \ln(1.25/\hat\delta_2)}

    with (ε̂_i, δ̂_i) = :func:`engine.accounting.tdp.switch_loss` (ε_i, δ_i, B, t). Vectorised.

    Examples
    --------
    >>> delta = 1 / 4202
    >>> round(projection_expected_loss(2.0, 3.0, 2 * delta / 3, 0.9999, delta / 3), 4)
    0.198
    """
    e1 = check_array_interval("epsilon1", epsilon1, 0, None, closed="neither")
    d1 = check_array_interval("delta1", delta1, 0, 1, closed="neither")
    e2 = check_array_interval("epsilon2", epsilon2, 0, None, closed="neither")
    d2 = check_array_interval("delta2", delta2, 0, 1, closed="neither")
    bb = check_array_interval("b", b, 0, 2, closed="right")
    t = check_array_interval("distance", distance, 0, 2, closed="right")
    eh1, dh1 = switch_loss(e1, d1, bb, t)
    eh2, dh2 = switch_loss(e2, d2, bb, t)
    eh1, dh1, eh2, dh2 = (np.asarray(v, dtype=float) for v in (eh1, dh1, eh2, dh2))
    with np.errstate(divide="ignore"):
        # ln(1/δ̂1) = 0 when δ̂1 clips to 1 (as printed); δ̂ = 0 cannot occur for t > 0 and δ > 0.
        step1 = eh1**2 / (4.0 * (-np.log(dh1) + e1))
        step2 = eh2**2 / (16.0 * np.log(1.25 / dh2))
    return _scalar_or_array(step1 + step2)


def projection_distinguishing(b, epsilon1, delta1, epsilon2, delta2, distance=2.0):
    """The paper's distinguishing protection D = 1/(U + 1) of Algorithm 1 (see :func:`projection_expected_loss`).

    Examples
    --------
    The paper's 83.5 % for classic DP (n = 4,201, δ = 1/4202, δ1 = 2δ/3, δ2 = δ/3):

    >>> delta = 1 / 4202
    >>> round(projection_distinguishing(2.0, 3.0, 2 * delta / 3, 0.9999, delta / 3), 4)
    0.8347
    >>> round(projection_distinguishing(2.0, 2.0, 2 * delta / 3, 0.5, delta / 3), 4)
    0.9135
    """
    return _scalar_or_array(1.0 / (1.0 + np.asarray(projection_expected_loss(b, epsilon1, delta1, epsilon2, delta2,
                                                                             distance))))


def paper_partition_delta(n: int, partitions: int) -> float:
    r"""The paper's δ for the partitioned (Nigeria) setup: :math:`\delta = 1/(\lceil n/m\rceil + 1)`.

    The paper splits δ as δ1 = 2δ/3, δ2 = δ/3. With m = 1 this is the whole-data choice δ = 1/(n+1).

    >>> paper_partition_delta(20_788, 6) == 1 / 3466
    True
    >>> paper_partition_delta(4201, 1) == 1 / 4202
    True
    """
    nn = check_integer("n", n, 1, None)
    m = check_integer("partitions", partitions, 1, nn, hint="at most one part per row")
    return 1.0 / (math.ceil(nn / m) + 1)


def reference_memory_bytes(n: int, k: int, partitions: int = 1) -> int:
    """Bytes the reference implementation needs for its n × k float64 matrices (XR/k and G alive at once).

    >>> reference_memory_bytes(1_000_000, 10_000) / 1e9
    160.0
    """
    nn = check_integer("n", n, 1, None)
    kk = check_integer("k", k, 1, None)
    m = check_integer("partitions", partitions, 1, nn)
    return 2 * 8 * math.ceil(nn / m) * kk


@register
@dataclass(frozen=True)
class PrivateProjection(RecordMechanism):
    r"""Algorithm 1 (private projection): (B, ε1 + ε2, δ1 + δ2)-targeted DP release of an n × d matrix.

    Parameters
    ----------
    b : float
        Target distance B in (0, 2]; B = 2 is classic DP.
    epsilon1, delta1 : float
        Budget of steps 1–3 (the noisy projection). ε1 > 0, δ1 in (0, 1).
    epsilon2, delta2 : float
        Budget of step 4 (the noisy covariance). ε2 in (0, 1) (classical Gaussian mechanism), δ2 in (0, 1);
        δ1 + δ2 < 1.
    k : int
        Projection dimension (the paper uses 10⁴), 1 ≤ k ≤ 10⁷.
    rank : int or None
        Number of right singular vectors of C_priv kept (1..d, checked against d at release). ``None`` = d, the
        paper's setting — where steps 4–5 do not change the output distribution (ε2, δ2 buy nothing).
    implementation : {"fast", "reference"}
        ``"fast"`` (default) draws the noise directly in n × d (exact: same output distribution for every rank);
        ``"reference"`` follows the paper step by step and materialises n × k matrices (refused above
        :data:`REFERENCE_MEMORY_LIMIT_BYTES`).
    output_scale : {"unbiased", "paper"}
        ``"unbiased"`` (default) multiplies the paper's output by k (free post-processing; E[X_priv] = X at full
        rank). ``"paper"`` returns the as-printed X/k plus noise, to reproduce the authors.
    covariance : {"gram", "centred"}
        Step 4's matrix: ``"gram"`` = XᵀX as in the paper; ``"centred"`` = ``np.cov(X.T)`` as the authors' code.
        The centred covariance has Frobenius sensitivity ≤ 4B/(n−1) ≤ 2B for n ≥ 3 (its mean term moves by at
        most 2B/(n−1), its scatter by at most 2B/(n−1)), so σ2 calibrated for 2B covers it.
    partitions : int
        m ≥ 1. With m > 1, rows are split uniformly at random into m disjoint parts of near-equal size and
        Algorithm 1 runs on each with fresh randomness (the paper's Nigeria setup); parallel composition
        (Lemma 3) gives the same guarantee. The paper then picks δ from the part size
        (:func:`paper_partition_delta`).

    Notes
    -----
    The fast path forms :math:`S = RR^\top`, :math:`H = V^\top S V = U\Lambda U^\top` and returns
    :math:`X A + k\sigma_1 Z \Lambda_+^{-1/2} U_+^\top V^\top` (unbiased scale), Z standard normal n × q. At
    full rank V = I is used and steps 4–5 are skipped (they cannot change the distribution), so A = I exactly.

    Examples
    --------
    >>> mech = PrivateProjection(b=0.25, epsilon1=3.0, delta1=1e-4, epsilon2=0.5, delta2=5e-5)
    >>> mech.guarantee().headline()
    '(B = 0.25, ε = 3.5, δ = 0.00015)-targeted DP for one record'
    >>> x = np.full((50, 3), 0.1)
    >>> release = mech.release(x, rng=np.random.default_rng(0))
    >>> release.value.shape, release.details["output_scale"]
    ((50, 3), 1.0)
    """

    KIND: ClassVar[str] = "projection"
    LABEL: ClassVar[str] = "Private projection (Algorithm 1)"
    SHORT_LABEL: ClassVar[str] = "Projection"
    TAGS: ClassVar[MechanismTags] = MechanismTags(
        budgeted=True,
        sweep_options=("k", "output_scale", "covariance", "partitions"),
        preselected=True,
        samplers=("numpy",),
        opendp_reason="its noise is correlated through a data-dependent covariance step",
        partition_modes=("global", "partitioned"),
    )
    FORM: ClassVar[tuple[FormField, ...]] = (
        FormField("b", "Target distance B", "Two records whose prepared rows are within L2 distance B cannot be "
                  "told apart beyond (ε, δ); B = 2 is classic DP.", format="%.4f", step=0.01),
        FormField("k", "Projection dimension k", "Columns of the random projection (the paper: 10,000). The noise "
                  "per coordinate barely depends on k once k ≫ d.", step=1000),
        FormField("rank", "Rank kept (0 = all d)", "Singular vectors of the noisy covariance kept. At full rank "
                  "(0 = d, the paper) the covariance step does not change the output: (ε2, δ2) buys nothing.",
                  zero_is_none=True, high_is_d=True),
        FormField("epsilon1", "ε1 (projection step)", "Privacy loss spent on the noisy projection. Algorithm 1 "
                  "spends its budget in two steps; the total guarantee is (ε1 + ε2, δ1 + δ2). Default split: "
                  "ε2 = min(ε/4, 0.9999), ε1 = ε − ε2, δ1 = 2δ/3, δ2 = δ/3 (the paper's δ split).",
                  format="%.4f", step=0.05),
        FormField("delta1", "δ1 (projection step)", "Also covers the chance (≤ δ1/2) that the random projection "
                  "exceeds its sensitivity bound.", format="%.3e", step=1e-6),
        FormField("epsilon2", "ε2 (covariance step, < 1)", "Privacy loss of the noisy covariance; the classical "
                  "Gaussian bound it uses needs ε2 < 1.", format="%.4f", step=0.05, high=math.inf),
        FormField("delta2", "δ2 (covariance step)", "δ of the noisy covariance step.", format="%.3e", step=1e-6),
        FormField("implementation", "Implementation", "fast: draws the same output distribution directly in n × d "
                  "(exact, milliseconds). reference: the paper's steps with n × k matrices (seconds; refused when "
                  "it would need too much memory)."),
        FormField("output_scale", "Output scale", "unbiased: the paper's output multiplied by k (free "
                  "post-processing), so values are on the data's prepared scale. paper: as printed, X/k plus noise "
                  "(to reproduce the authors)."),
    )

    b: float
    epsilon1: float
    delta1: float
    epsilon2: float
    delta2: float
    k: int = 10_000
    rank: int | None = None
    implementation: Literal["fast", "reference"] = "fast"
    output_scale: Literal["unbiased", "paper"] = "unbiased"
    covariance: Literal["gram", "centred"] = "gram"
    partitions: int = 1

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "b": Real(0, 2, closed="right", hint="B = 2 is classic DP"),
        "epsilon1": Real(0, None, closed="neither"),
        "delta1": Real(0, 1, closed="neither", hint="typically ≤ 1/n"),
        "epsilon2": Real(0, 1, closed="neither", hint="the classical Gaussian mechanism of step 4 needs ε2 < 1"),
        "delta2": Real(0, 1, closed="neither", hint="typically ≤ 1/n"),
        "k": Integer(1, MAX_K, hint="the paper uses k = 10000"),
        "rank": Integer(1, optional=True, hint="leave it empty to keep all d singular vectors"),
        "implementation": Choice(("fast", "reference")),
        "output_scale": Choice(("unbiased", "paper")),
        "covariance": Choice(("gram", "centred")),
        "partitions": Integer(1),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        from engine.limits import check_privacy_parameters

        # ε1 = 1e-300 overflowed (kσ1)² in the release, and a subnormal δ gave NaN; a huge ε only means negligible
        # noise here (tests use it), so large ε is limited where configurations come in (mechanism_from_dict).
        tiny = {n: v for n, v in (("epsilon1", self.epsilon1), ("epsilon2", self.epsilon2)) if v < 1.0}
        check_privacy_parameters({**tiny, "delta1": self.delta1, "delta2": self.delta2},
                                 owner="the projection mechanism")
        if self.delta1 + self.delta2 >= 1:
            raise InvalidParameterError(
                f"delta1 + delta2 must be < 1; got {self.delta1 + self.delta2:g} — a total δ near 1 guarantees "
                "nothing; use δ ≤ 1/n (the paper: δ1 = 2/(3(n+1)), δ2 = 1/(3(n+1)))"
            )

    # ------------------------------------------------------------------ data-free quantities
    @property
    def epsilon(self) -> float:
        """Total ε = ε1 + ε2 (Theorem 2)."""
        return self.epsilon1 + self.epsilon2

    @property
    def delta(self) -> float:
        """Total δ = δ1 + δ2 (Theorem 2)."""
        return self.delta1 + self.delta2

    def sigma1(self, d: int) -> float:
        """Step-3 noise sd for d features (:func:`projection_sigma1`)."""
        return projection_sigma1(self.b, self.epsilon1, self.delta1, self.k, d)

    def noise_sd(self, d: int) -> float:
        """Expected per-coordinate noise sd of the unbiased release at full rank (:func:`projection_noise_sd`)."""
        return projection_noise_sd(self.b, self.epsilon1, self.delta1, self.k, d)

    @property
    def sigma2(self) -> float:
        """Step-4 noise sd (:func:`projection_sigma2`)."""
        return projection_sigma2(self.b, self.epsilon2, self.delta2)

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        return {
            "projection": cls(b=0.5, epsilon1=3.0, delta1=2e-4, epsilon2=0.5, delta2=1e-4, k=50),
            "projection-parts-rank": cls(b=0.25, epsilon1=2.0, delta1=2e-4, epsilon2=0.9, delta2=1e-4, k=20,
                                         partitions=2, rank=min(2, d), output_scale="paper"),
        }

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, *, d: int | None = None,
                    split: BudgetSplit | None = None, **options: Any) -> PrivateProjection:
        """Algorithm 1 spending the total (ε, δ): with ``split`` (ε1, δ1, ε2, δ2) when given (its totals are ε and
        δ), else the default split (:func:`engine.accounting.budget.split_budget`); ``options`` are the other fields
        (``k``, ``rank``, ``output_scale``, …)."""
        from engine.accounting.budget import split_budget

        parts = split_budget(epsilon, delta) if split is None else split
        return cls(b=float(b), epsilon1=float(parts.epsilon1), delta1=float(parts.delta1),
                   epsilon2=float(parts.epsilon2), delta2=float(parts.delta2), **options)

    # ------------------------------------------------------------------ what the attacks need
    def distance_statements(self, distance: float) -> tuple[list[tuple[float, float]], str]:
        """The basic composition of steps 3 and 4 each translated to ``distance``, and the whole guarantee
        translated (switch lemma): both are valid, so the attack's bound is their pointwise maximum."""
        whole, _ = super().distance_statements(distance)
        e1, d1 = switch_loss(self.epsilon1, self.delta1, self.b, distance)
        e2, d2 = switch_loss(self.epsilon2, self.delta2, self.b, distance)
        return [(float(e1 + e2), float(min(1.0, d1 + d2))), *whole], (
            f"pointwise max of the basic composition of steps 3 and 4 each translated to distance {distance:g} "
            "and of the whole guarantee translated (switch lemma)"
        )

    def expected_loss(self, distance: float) -> tuple[float, str]:
        """The paper's closed form for Algorithm 1 (:func:`projection_expected_loss`)."""
        loss = float(projection_expected_loss(self.b, self.epsilon1, self.delta1, self.epsilon2, self.delta2,
                                              distance))
        return loss, "paper's closed form for Algorithm 1 (switch lemma per step; Kohli & Blumenstock, Methods)"

    # ------------------------------------------------------------------ out of core
    def partition_refusal(self, mode: str) -> str:
        if self.partitions > 1:
            return (
                f"the projection's partitions = {self.partitions} splits the rows by a random permutation of the "
                "whole table, which --engine dask does not do — set partitions to 1 and use --dask-mode partitioned "
                "(disjoint row ranges, same guarantee), or the in-memory engine"
            )
        if self.implementation == "reference":
            return (
                "implementation='reference' materialises n × k matrices and is not available under --engine dask — "
                "use implementation='fast' (exactly the same output distribution)"
            )
        return super().partition_refusal(mode)

    def tags(self) -> MechanismTags:
        if self.partitions > 1 or self.implementation == "reference":
            return dataclasses.replace(self.TAGS, partition_modes=())
        return self.TAGS

    def partition_plan(self, mode: str, d: int, rng: np.random.Generator,
                       covariance: Callable[[str], np.ndarray]) -> tuple[PartitionPlan, dict[str, Any]]:
        """Global mode: R drawn once (from ``rng``), the covariance of the whole table privatized once (rank < d),
        the operators (A, F) formed once; every partition draws its own noise rows σ1·z F — the rows of the fast
        path are i.i.d. given (R, V), so the output has the in-memory fast path's distribution. Partitioned mode:
        Algorithm 1 in full on each partition (its own R, covariance and noise; parallel composition, Lemma 3)."""
        self.partition_mode(mode)
        rank = d if self.rank is None else int(self.rank)
        if rank > d:
            raise InvalidParameterError(f"rank must be at most the number of features d = {d}; got {rank}")
        sigma1, sigma2 = self.sigma1(d), self.sigma2
        details: dict[str, Any] = {
            "implementation": "fast",
            "output_scale": 1.0 if self.output_scale == "unbiased" else 1.0 / self.k,
            "noise_sd_expected": _expected_sd(sigma1, self.k, d),
            "sigma1": float(sigma1),
            "sigma2": float(sigma2),
            "rank": rank,
            "k": int(self.k),
            "partitions": 1,
            "covariance": self.covariance,
            "covariance_step_changes_output": "no (full rank)" if rank == d else "yes",
        }
        if mode == "partitioned":
            return _PartitionedPlan(self), details
        r_mat = _draw_projection(d, self.k, rng)
        v = None if rank == d else noisy_covariance_basis(covariance(self.covariance), rank, sigma2, rng)
        a, f = _projection_operators(r_mat, v)
        full_row_rank = v is None and a is None  # (only read at rank d) see _projection_operators
        multiplier = float(self.k) if self.output_scale == "unbiased" else 1.0
        unit_var = np.einsum("ij,ij->j", f, f)
        details["noise_sd_per_coordinate"] = float(self.k * sigma1 * np.sqrt(unit_var.mean()))
        details["expectation"] = (
            "X (times output_scale)"
            if rank == d and full_row_rank
            else f"X projected onto a subspace of dimension < {d} (rank-deficient R or rank < d)"
        )
        return _GlobalPlan(self, a, f, float(sigma1), multiplier, self.guarantee()), details

    # ------------------------------------------------------------------ what a reviewer reads
    def report(self, details: Any) -> MechanismReport:
        total = self.guarantee()  # the total is Theorem 2's composition
        notes: tuple[tuple[str, str], ...] = ()
        full_rank = details.get("covariance_step_changes_output", "no (full rank)" if self.rank is None else "")
        if full_rank == "no (full rank)":
            notes = (("info", (
                "At full rank the covariance step (ε2, δ2) does not change the output at all: the release is in fact "
                f"(B = {self.b:.4g}, ε1 = {self.epsilon1:.4g}, δ1 = {self.delta1:.4g})-TDP. Spend ε2 only when "
                "keeping fewer singular vectors (rank < d).")),)
        return MechanismReport(
            metrics=(
                ReportMetric("σ1 (projection noise, paper scale)", details.get("sigma1"),
                             "Noise sd of step 3 on the paper's scale."),
                ReportMetric("σ2 (covariance noise)", details.get("sigma2"), "Noise sd of step 4."),
                ReportMetric("Output scale", details.get("output_scale"),
                             "E[release] = scale × X. 1 = unbiased; 1/k = the paper's as-printed output."),
            ),
            tables=(ReportTable("split", (
                ("step", ("1–3: noisy projection (k⁻¹XR + G)", "4: noisy covariance (XᵀX + G')", "total (Theorem 2)")),
                ("ε", (self.epsilon1, self.epsilon2, total.epsilon)),
                ("δ", (self.delta1, self.delta2, total.delta)),
                ("noise sd", (details.get("sigma1"), details.get("sigma2"), None)),
            )),),
            notes=notes,
        )

    def guarantee(self) -> Guarantee:
        """(B, ε1 + ε2, δ1 + δ2)-TDP (Theorem 2), with the caveats a reviewer must read.

        ``Guarantee.describe()`` adds the classic DP implied by the switch lemma (``implied_dp()``).
        """
        notes = [
            f"Theorem 2: steps 1–3 (noisy random projection to k = {self.k} dimensions) spend (ε1 = {self.epsilon1:g}, "
            f"δ1 = {self.delta1:.3g}) — δ1 covers both the chance (≤ δ1/2) that the random projection exceeds its "
            f"sensitivity bound and the Gaussian mechanism's δ1/2; step 4 (noisy covariance) spends "
            f"(ε2 = {self.epsilon2:g}, δ2 = {self.delta2:.3g}); sequential composition adds them.",
        ]
        full_rank_text = (
            "covariance step (ε2, δ2) does not change the output distribution; it buys nothing: R(VᵀR)^†Vᵀ = I, so "
            "the output is X/k plus Gaussian noise with covariance σ1²(RRᵀ)⁻¹ whatever V is. The release is in fact "
            f"(B = {self.b:g}, ε = {self.epsilon1:g}, δ = {self.delta1:.3g})-TDP (post-processing of steps 1–3); "
            "spend ε2 only when reducing the rank."
        )
        if self.rank is None:
            notes.append("At full rank (all d singular vectors kept, the default) the " + full_rank_text)
        else:
            notes.append(
                f"Rank {self.rank}: the noisy covariance selects the {self.rank}-dimensional subspace kept, so (ε2, δ2) "
                f"is genuinely spent when {self.rank} < d. If {self.rank} equals the number of features d, the "
                + full_rank_text
            )
        if self.output_scale == "paper":
            notes.append(
                f"Paper's as-printed scale: the output is X/k + noise, i.e. every value is 1/k = {1 / self.k:.3g} of "
                f"the unbiased release (the paper omits a factor k = {self.k}). Multiply by k (free post-processing) "
                "before fitting regularised models or judging attacks that assume the data's scale."
            )
        else:
            notes.append(
                f"The paper's output X/k + noise is multiplied by k = {self.k} (free post-processing), so the "
                "release is unbiased for X at full rank."
            )
        if self.partitions > 1:
            notes.append(
                f"Rows are split uniformly at random into {self.partitions} disjoint parts and Algorithm 1 runs on "
                "each with fresh randomness; parallel composition (Lemma 3) keeps the same guarantee. The paper sets "
                "δ from the part size: δ = 1/(⌈n/m⌉ + 1), δ1 = 2δ/3, δ2 = δ/3 — larger than the whole-data choice "
                "1/(n+1), so that guarantee is valid but weaker."
            )
        if self.covariance == "centred":
            notes.append(
                "Step 4 uses the centred sample covariance (np.cov, as the authors' code); its Frobenius sensitivity "
                "is at most 4B/(n−1) ≤ 2B for n ≥ 3, so the calibration for XᵀX still covers it."
            )
        # Steps 1–3 and step 4 release from the same rows (Lemma 2); with partitions, each disjoint part runs the
        # whole algorithm (Lemma 3). The numbers come from the composition; the notes above state the caveats.
        one_part = sequential_composition([
            Guarantee(self.epsilon1, self.delta1, b=self.b, relation="row", mechanism=self.LABEL),
            Guarantee(self.epsilon2, self.delta2, b=self.b, relation="row", mechanism=self.LABEL),
        ])
        whole = parallel_composition([one_part] * self.partitions)
        return dataclasses.replace(whole, mechanism=self.LABEL, notes=tuple(notes))

    # ------------------------------------------------------------------ the release
    def release(
        self, x: np.ndarray, *, rng: np.random.Generator | None = None, sampler: NoiseSampler | None = None,
        memory_limit_bytes: int | None = None,
    ) -> Release:
        """Privatize ``x`` (n × d, rows in the unit L2 ball).

        Parameters
        ----------
        x : ndarray
            Prepared data; every row must have L2 norm ≤ 1.
        rng : numpy.random.Generator
            Source of all randomness (R, the noises and the partition).
        sampler : NoiseSampler, optional
            Only numpy's on ``rng`` expresses Algorithm 1 (its noise is correlated through a data-dependent
            covariance step; ``tags.samplers``), so another sampler is refused.
        memory_limit_bytes : int, optional
            Limit for the reference implementation's n × k matrices; default
            :data:`REFERENCE_MEMORY_LIMIT_BYTES` (2 GiB). Ignored by the fast path.

        Raises
        ------
        DataValidationError
            A row lies outside the unit L2 ball, or the matrix has missing values.
        InvalidParameterError
            ``rank`` exceeds the number of features.
        InsufficientDataError
            Fewer rows than parts (or fewer than 3 rows per part with the centred covariance).
        ResourceLimitError
            The reference implementation would exceed the memory limit.
        """
        check_rng(rng)
        assert rng is not None
        if sampler is not None and sampler.name not in self.TAGS.samplers:
            raise InvalidParameterError(f"Algorithm 1 draws its noise with numpy only; got the {sampler.name} sampler")
        try:
            x = check_unit_ball(x, mechanism="Algorithm 1")
        except InvalidParameterError as exc:
            raise DataValidationError(str(exc)) from None
        n, d = x.shape
        rank = d if self.rank is None else check_integer(
            "rank", self.rank, 1, d, hint=f"the data has d = {d} features; rank is at most d"
        )
        if self.partitions > n:
            raise InsufficientDataError(
                f"partitions must be at most the number of rows ({n}); got {self.partitions}"
            )
        smallest_part = n // self.partitions
        needs_covariance = self.implementation == "reference" or rank < d
        if needs_covariance and self.covariance == "centred" and smallest_part < 3:
            raise InsufficientDataError(
                f"the centred covariance needs at least 3 rows per part; the smallest of the {self.partitions} "
                f"part(s) has {smallest_part} — use fewer partitions or covariance='gram'"
            )
        if self.implementation == "reference":
            limit = REFERENCE_MEMORY_LIMIT_BYTES if memory_limit_bytes is None else check_integer(
                "memory_limit_bytes", memory_limit_bytes, 1, None
            )
            need = reference_memory_bytes(n, self.k, self.partitions)
            if need > limit:
                raise ResourceLimitError(
                    f"the reference implementation of Algorithm 1 materialises n × k matrices (XR/k and the noise "
                    f"G): {_gib(need)} ({need:,} bytes) needed for n = {n}, k = {self.k}, above the limit of "
                    f"{_gib(limit)} ({limit:,} bytes) — "
                    "use implementation='fast' (same output distribution, O(n·d) memory)"
                )

        sigma1 = self.sigma1(d)
        sigma2 = self.sigma2
        multiplier = float(self.k) if self.output_scale == "unbiased" else 1.0
        out = np.empty((n, d), dtype=np.float64)
        variance_sum = np.zeros(d)  # Σ over rows of the exact per-coordinate noise variance, unbiased scale
        if self.partitions == 1:
            parts: list[Any] = [None]
        else:
            parts = np.array_split(rng.permutation(n), self.partitions)
        full_row_rank = True
        for idx in parts:
            xp = x if idx is None else x[idx]
            r_mat = _draw_projection(d, self.k, rng)
            if self.implementation == "reference":
                full_row_rank &= bool(np.linalg.matrix_rank(r_mat) == d)
                value, unit_var = _reference_release(xp, r_mat, rank, sigma1, sigma2, self.covariance, rng)
                if multiplier != 1.0:
                    value *= multiplier
            else:
                v = None if rank == d else _covariance_basis(xp, rank, sigma2, self.covariance, rng)
                value = out if idx is None else np.empty_like(xp)
                a, f = _projection_operators(r_mat, v)
                # Full row rank of R, read only at rank d (v None): the eigen-decomposition of RRᵀ just made kept
                # every eigenvalue (A = I). No SVD of the d × k matrix R per release (6 % of a paper sweep).
                full_row_rank &= v is None and a is None
                unit_var = fast_release_with_operators(xp, a, f, self.k, sigma1, multiplier, rng, out=value)
            if idx is None:
                out = value
            else:
                out[idx] = value
            variance_sum += xp.shape[0] * (self.k * sigma1) ** 2 * unit_var

        details = {
            "implementation": self.implementation,
            "output_scale": 1.0 if self.output_scale == "unbiased" else 1.0 / self.k,
            "noise_sd_per_coordinate": float(np.sqrt(variance_sum.mean() / n)),
            "noise_sd_expected": _expected_sd(sigma1, self.k, d),
            "sigma1": float(sigma1),
            "sigma2": float(sigma2),
            "rank": int(rank),
            "k": int(self.k),
            "partitions": int(self.partitions),
            "covariance": self.covariance,
            "expectation": (
                "X (times output_scale)"
                if rank == d and full_row_rank
                else f"X projected onto a subspace of dimension < {d} (rank-deficient R or rank < d)"
            ),
            "covariance_step_changes_output": "no (full rank)" if rank == d else "yes",
        }
        return Release(value=out, guarantee=self.guarantee(), details=details)


class _GlobalPlan(PartitionPlan):
    """Algorithm 1's fast path with R, V and the operators (A, F) drawn once: out = multiplier·(X A/k + σ1 Z F)."""

    def __init__(self, mechanism: PrivateProjection, a: np.ndarray | None, f: np.ndarray, sigma1: float,
                 multiplier: float, guarantee: Guarantee) -> None:
        super().__init__(mechanism)
        self.a, self.f, self.sigma1, self.multiplier, self.guarantee = a, f, sigma1, multiplier, guarantee
        self.k = int(mechanism.k)

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        check_rng(rng)
        assert rng is not None
        out = np.empty_like(x)
        fast_release_with_operators(x, self.a, self.f, self.k, self.sigma1, self.multiplier, rng, out=out)
        return Release(value=out, guarantee=self.guarantee)

    def finish(self, details: dict[str, Any], parts: list[tuple[int, dict[str, Any]]], d: int) -> dict[str, Any]:
        return dict(details)  # every detail was drawn on the driver


class _PartitionedPlan(PartitionPlan):
    """The partitioned mode: Algorithm 1 in full on each partition (its own R, covariance and noise)."""

    def finish(self, details: dict[str, Any], parts: list[tuple[int, dict[str, Any]]], d: int) -> dict[str, Any]:
        rows = sum(n for n, _ in parts)
        sds = [(n, float(part["noise_sd_per_coordinate"])) for n, part in parts if n]
        total = sum(n * sd * sd for n, sd in sds)
        full = all(str(part["expectation"]).startswith("X (") for n, part in parts if n)
        return {
            **details,
            "noise_sd_per_coordinate": float(math.sqrt(total / rows)) if rows else math.nan,
            "partitions": len(parts),
            "expectation": (
                "X (times output_scale)" if full
                else f"X projected onto a subspace of dimension < {d} in some parts (rank-deficient R or rank < d)"
            ),
        }


# ---------------------------------------------------------------------- private helpers (assume valid input)
def _gib(nbytes: float) -> str:
    return f"{nbytes / 1024**3:.3g} GiB"


def _expected_sd(sigma1: float, k: int, d: int) -> float | None:
    return float(sigma1 * k * math.sqrt(1.5 / (k - d - 1))) if k > d + 1 else None


def _draw_projection(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Step 1: R ∈ {−1, 0, 1}^{d×k}, i.i.d. uniform (as float64 so that products are exact BLAS integer sums)."""
    return rng.integers(-1, 2, size=(d, k)).astype(np.float64)


def _covariance_basis(
    x: np.ndarray, rank: int, sigma2: float, covariance: str, rng: np.random.Generator
) -> np.ndarray:
    """Steps 4–5: the top ``rank`` right singular vectors of C_priv, as the columns of a d × rank matrix V."""
    c = x.T @ x if covariance == "gram" else np.atleast_2d(np.cov(x.T))
    return noisy_covariance_basis(c, rank, sigma2, rng)


def noisy_covariance_basis(c: np.ndarray, rank: int, sigma2: float, rng: np.random.Generator) -> np.ndarray:
    """Steps 4–5 from the covariance matrix C (d × d, XᵀX or the centred covariance): add the symmetric noise G'
    (i.i.d. N(0, σ2²) upper triangle) and return the top ``rank`` right singular vectors of C_priv (d × rank).

    Shared by the in-memory release and the out-of-core one (``engine.scale``), which computes C by a reduction.
    """
    d = c.shape[0]
    g = rng.normal(0.0, sigma2, size=(d, d))
    upper = np.triu(g)
    c_priv = c + upper + np.triu(g, 1).T
    _, _, vh = np.linalg.svd(c_priv)
    return vh[:rank].T.copy()


def _projection_operators(r_mat: np.ndarray, v: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray]:
    """A = R(VᵀR)^†Vᵀ (None when it is exactly I) and F with FᵀF = M ᵀM = V H^† Vᵀ, H = VᵀRRᵀV.

    ``v=None`` means V = I_d (full rank; any orthogonal V gives the same A and MᵀM). Noise rows on the paper's
    scale are σ1·z F with z standard normal of length F.shape[0].

    With ``v=None``, A is None exactly when every eigenvalue of RRᵀ is kept (above :data:`_RANK_RTOL` of the
    largest), which is how the releases decide that R has full row rank for their "expectation" note — and it is
    what the release itself does (A = None: no projection), so the note describes the release. R is an integer
    matrix, so RRᵀ is exact in float64, and a rank-deficient R leaves an eigenvalue near λ_max·2⁻⁵², far below the
    threshold: k < d is never called full rank. The converse is numerical: a full-rank R whose RRᵀ has λ_min/λ_max
    below :data:`_RANK_RTOL` is treated as rank-deficient (the release projects, and the note says so), where
    ``np.linalg.matrix_rank`` (a threshold on the singular values, about (max(d, k)·2⁻⁵²)² on the eigenvalues) still
    says full rank. The two agreed on all of 38,040 random draws at d = 1–12 (k = 1 to d + 3, 50 and 10⁴; 20,766
    rank-deficient); a review found them to differ on 2–3 draws in 10⁴ at k = d ≥ 16, where the note follows the
    release (``tests/engine/test_private_projection.py`` keeps a smaller version of the check; the reference
    implementation still uses ``matrix_rank``).
    """
    s = r_mat @ r_mat.T
    h = s if v is None else v.T @ s @ v
    lam, u = np.linalg.eigh(h)
    keep = lam > _RANK_RTOL * max(float(lam[-1]), 0.0)
    lam_kept, u_kept = lam[keep], u[:, keep]
    f = (u_kept / np.sqrt(lam_kept)).T  # q × r: Λ₊^{-1/2} U₊ᵀ
    if v is not None:
        f = f @ v.T  # q × d
    if v is None and keep.all():
        return None, f
    h_pinv = (u_kept / lam_kept) @ u_kept.T
    a = s @ h_pinv if v is None else s @ v @ h_pinv @ v.T
    return a, f


def _fast_release(
    x: np.ndarray,
    r_mat: np.ndarray,
    v: np.ndarray | None,
    sigma1: float,
    multiplier: float,
    rng: np.random.Generator,
    *,
    out: np.ndarray,
) -> np.ndarray:
    """Exact fast path: out = multiplier·(X A / k + σ1 Z F). Returns diag(MᵀM) (unit-σ1, paper-scale variance).

    The noise rows σ1·z F have covariance σ1² FᵀF = σ1² MᵀM, the law of the rows of G M in the paper's step 6.
    """
    k = r_mat.shape[1]
    a, f = _projection_operators(r_mat, v)
    return fast_release_with_operators(x, a, f, k, sigma1, multiplier, rng, out=out)


def fast_release_with_operators(
    x: np.ndarray,
    a: np.ndarray | None,
    f: np.ndarray,
    k: int,
    sigma1: float,
    multiplier: float,
    rng: np.random.Generator,
    *,
    out: np.ndarray,
) -> np.ndarray:
    """The fast path's row loop for given operators (A, F) = ``_projection_operators(R, V)``.

    out = multiplier·(X A / k + σ1 Z F), Z standard normal drawn in chunks of rows; returns diag(FᵀF). The rows of
    ``x`` are treated independently, so the out-of-core release (``engine.scale``) calls it once per partition with
    A and F computed once and broadcast: the output has exactly the in-memory fast path's distribution.
    """
    # Work on the unbiased scale (X A + kσ1 Z F) and rescale blocks for the paper's scale: no n × d temporaries,
    # one reusable chunk buffer for the standard normals.
    noise_factor = (k * sigma1) * f
    rescale = multiplier / k
    n, q = x.shape[0], f.shape[0]
    z = np.empty((min(n, _CHUNK_ROWS), q))
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        zb = z[: stop - start]
        rng.standard_normal(out=zb)
        block = out[start:stop]
        np.matmul(zb, noise_factor, out=block)
        if a is None:
            block += x[start:stop]
        else:
            block += x[start:stop] @ a
        if rescale != 1.0:
            block *= rescale
    return np.einsum("ij,ij->j", f, f)


def _reference_release(
    x: np.ndarray,
    r_mat: np.ndarray,
    rank: int,
    sigma1: float,
    sigma2: float,
    covariance: str,
    rng: np.random.Generator,
    *,
    v: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's Algorithm 1, step by step (R already drawn). Returns (X_priv on the paper's scale, diag MᵀM).

    ``v`` (d × rank) replaces steps 4–5 when given (tests compare both implementations for one fixed V).
    """
    k = r_mat.shape[1]
    p = x @ r_mat  # step 2
    p /= k
    p += rng.normal(0.0, sigma1, size=p.shape)  # step 3
    if v is None:
        v = _covariance_basis(x, rank, sigma2, covariance, rng)  # steps 4–5
    m = np.linalg.pinv(v.T @ r_mat) @ v.T  # k × d
    value = p @ m  # step 6
    del p
    return value, np.einsum("ij,ij->j", m, m)
