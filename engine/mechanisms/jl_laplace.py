r"""JL projection + Laplace noise (the secure-release paper), with corrected guarantees.

Dhaliwal, So, Parker-Wood & Beck, "Utility Preserving Secure Private Data Release" (seed
``shared/seeds/002_…txt``; digest ``shared/spec/002-jl-laplace.md``). The mechanism releases

.. math:: Z = X P + \Delta,\qquad P_{ij} \sim N(0, 1/k),\quad \Delta_{ij} \sim \mathrm{Laplace}(0, c/\varepsilon)

with P secret (never stored or exported). The paper claims "ε-DP with probability ≥ 1 − δ_fail over P". Because
P is the mechanism's own secret randomness this is the standard (ε, δ_fail)-DP (digest §4.3), and that is what we
state, with δ_fail bounded per neighbouring pair (:attr:`JLLaplace.delta_fail`; ours: no union over all pairs is
needed, and the L1 event the Laplace stage needs is far rarer than the proof's sufficient events). Two
neighbouring relations:

* element-wise (Theorem 3): one entry changes by at most ``element_bound`` (the paper: 1); c = 2√k · bound;
  the failure event of the proof is max_i √k‖P_i‖₂ > c/bound, with exact probability
  1 − F_{χ²_k}(c²/bound²)^d (the paper prints the looser d·e^{−k/2}).
* row-wise (Theorem 5): one row changes by at most ``b`` in L2 norm (α = b²); c = k·t with
  t ≥ t_min = √(2 ln(2k)·α/k); the failure event of the proof is max_i |(vP)_i| > t, with exact probability
  1 − (1 − 2Φ̄(t√(k/α)))^k (the paper prints 2k·e^{−kt²/(2α)}, which equals 1 at t_min).

Corrections to the paper (digest §5, §7), all implemented and tested:

* The paper's variance of the distance estimator (Claim 7) is wrong; the correct value is
  2‖a‖⁴/k + 14kσ⁴ + 8σ²‖a‖² with σ² = 2b² the variance of one Laplace entry. Both printed versions stay
  available through ``variant=`` for reproducing the paper.
* Two of the paper's four experimental settings give vacuous guarantees (δ_fail ≥ 1): the Studio flags them.
* The paper's "reconstruction is impossible because P is secret" is not a quantified guarantee. An adversary who
  knows a few original records can regress X on Z (a known-plaintext attack) without ever seeing P; the sweeps use
  exactly that adversary (:func:`engine.attacks.known_records.known_record_reconstruction`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from engine.constraints import Choice, Constraint, Integer, Real, check_declared
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee, Release
from engine.mechanisms.base import (
    FormField,
    MechanismReport,
    MechanismTags,
    NoiseProfile,
    PartitionPlan,
    RecordMechanism,
    ReportMetric,
    ReportTable,
    register,
)
from engine.mechanisms.samplers import NumpySampler
from engine.validation import (
    check_array_interval,
    check_choice,
    check_integer,
    check_interval,
    check_matrix,
    check_rng,
    check_unit_ball,
)

if TYPE_CHECKING:
    from engine.accounting.budget import BudgetSplit
    from engine.mechanisms.samplers import NoiseSampler

Relation = Literal["element", "row"]

#: Default projection dimension k of a JL release configured from a budget (the paper uses k from 2 to 20, k ≪ d).
DEFAULT_K = 5

_RELATION_TEXT = (("row", "row-wise (one record changes by at most B in L2)"),
                  ("element", "element-wise (one entry changes by at most the element bound)"))


def row_t_min(k: int, b: float) -> float:
    r"""Smallest t the paper allows for row-wise neighbours: :math:`t_{min} = \sqrt{2 \ln(2k)\,\alpha / k}`, α = b².

    >>> round(row_t_min(2, 1.0), 4)
    1.1774
    """
    k = check_integer("k", k, 1, None)
    b = check_interval("b", b, 0, None, closed="neither")
    return math.sqrt(2.0 * math.log(2.0 * k) * b * b / k)


def row_t_for_delta(k: int, b: float, target_delta: float) -> float:
    r"""t making the paper's row-wise bound 2k·e^{−kt²/(2α)} equal ``target_delta``: t = √((2α/k)·ln(2k/δ)).

    >>> round(row_t_for_delta(2, 1.0, 1e-3), 4)
    2.8799
    """
    k = check_integer("k", k, 1, None)
    b = check_interval("b", b, 0, None, closed="neither")
    target_delta = check_interval("target_delta", target_delta, 0, 1, closed="neither")
    return math.sqrt(2.0 * b * b / k * math.log(2.0 * k / target_delta))


def element_failure_probability(c, k: int, d: int, element_bound: float = 1.0):
    r"""Exact probability of the element-wise failure event: :math:`1 - F_{\chi^2_k}(c^2/\text{bound}^2)^d`.

    The proof of Theorem 3 needs √k‖P_i‖₂ ≤ c/bound for every row i of P; k‖P_i‖₂² is χ²_k.
    Vectorised over ``c``.

    >>> round(element_failure_probability(2 * math.sqrt(2), 2, 3), 5)
    0.05395
    """
    from scipy.special import chdtrc  # the χ² survival function (scipy.stats.chi2.sf), without scipy.stats

    c = check_array_interval("c", c, 0, None, closed="neither")
    k = check_integer("k", k, 1, None)
    d = check_integer("d", d, 1, None)
    element_bound = check_interval("element_bound", element_bound, 0, None, closed="neither")
    tail = chdtrc(k, (c / element_bound) ** 2)
    out = -np.expm1(d * np.log1p(-tail))
    return float(out) if out.ndim == 0 else out


def l1_tail_bound(threshold, k: int, scale: float):
    r"""Rigorous Chernoff upper bound on :math:`P(\sum_{i=1}^k |g_i| > \text{threshold})`, g_i ~ N(0, scale²) i.i.d.

    Uses :math:`E e^{\lambda|g|} = 2 e^{\lambda^2 s^2/2}\Phi(\lambda s)`; the bound
    :math:`\exp(-\lambda t + k \ln E e^{\lambda|g|})` holds for EVERY λ > 0, so evaluating it at a numerically
    optimised λ is valid whatever the optimiser returns. Vectorised over ``threshold``; capped at 1. Ours.
    """
    from scipy import optimize, special

    thr = np.atleast_1d(check_array_interval("threshold", threshold, 0, None))
    k = check_integer("k", k, 1, None)
    scale = check_interval("scale", scale, 0, None, closed="neither")

    def log_bound(lam: float, t: float) -> float:
        # log Φ by scipy.special.log_ndtr: what scipy.stats.norm.logcdf computes (the same values), without the
        # distribution object's argument handling — 0.3 µs a call instead of 65 µs, inside the optimiser's loop.
        return -lam * t + k * (math.log(2.0) + 0.5 * (lam * scale) ** 2 + float(special.log_ndtr(lam * scale)))

    out = np.ones_like(thr)
    mean = k * scale * math.sqrt(2.0 / math.pi)
    for i, t in enumerate(thr):
        if t <= mean:
            continue  # Chernoff gives nothing below the mean
        res = optimize.minimize_scalar(lambda lam, t=t: log_bound(lam, t), bounds=(1e-12, 1e6), method="bounded",
                                       options={"xatol": 1e-10})
        out[i] = min(1.0, math.exp(min(0.0, log_bound(float(res.x), t))))
    return float(out[0]) if np.ndim(threshold) == 0 else out


def element_steps_for_record(d: int, element_bound: float, distance: float = 2.0) -> int:
    r"""Most element-wise steps needed to turn one record into another at L2 distance ≤ ``distance``.

    An element-wise neighbour changes ONE entry by at most ``element_bound`` (bound b). Two rows x, x' with
    ‖x − x'‖₂ ≤ t are joined by a chain of :math:`\sum_j \lceil |x_j - x'_j| / b \rceil` such steps, and

    .. math:: \sum_{j=1}^d \Bigl\lceil \frac{|x_j - x'_j|}{b} \Bigr\rceil \;<\; \frac{\|x - x'\|_1}{b} + d
              \;\le\; \frac{t\sqrt d}{b} + d, \qquad\text{so}\qquad s \le \Bigl\lceil \frac{t\sqrt d}{b}\Bigr\rceil + d - 1.

    The ceiling is exact (compared in rational arithmetic on t²d/b²). For t = 2 this covers any two records
    of the unit L2 ball. A bound, not always attained (it is for d = 1).

    >>> element_steps_for_record(1, 2.0), element_steps_for_record(1, 0.1), element_steps_for_record(4, 1.0)
    (1, 20, 7)
    """
    from fractions import Fraction

    d = check_integer("d", d, 1, None)
    bound = check_interval("element_bound", element_bound, 0, None, closed="neither")
    t = check_interval("distance", distance, 0, 2, closed="right")
    if not math.isfinite(bound):
        raise InvalidParameterError(f"element_bound must be finite; got {bound}")
    target = Fraction(t) ** 2 * d / Fraction(bound) ** 2  # X² with X = t√d/b, exactly
    n = max(0, math.floor(t * math.sqrt(d) / bound) - 2)
    while Fraction(n) ** 2 < target:
        n += 1
    return n + d - 1


def element_record_loss(epsilon: float, delta: float, d: int, element_bound: float,
                        distance: float = 2.0) -> tuple[float, float]:
    r"""Record-level (ε', δ') implied by an element-wise (ε, δ) guarantee, by group privacy over the chain of
    :func:`element_steps_for_record` steps: :math:`\varepsilon' = s\varepsilon`,
    :math:`\delta' = \min\{1, \delta (e^{s\varepsilon} - 1)/(e^\varepsilon - 1)\}` (as in the switch lemma).

    A valid upper bound on what an adversary who must tell two whole records ``distance`` apart can learn —
    the element-wise statement alone covers ONE entry only.

    >>> eps, dlt = element_record_loss(1.0, 0.0, 3, 1.0)
    >>> eps, dlt
    (6.0, 0.0)
    """
    from engine.accounting.tdp import switch_loss

    s = element_steps_for_record(d, element_bound, distance)
    return switch_loss(epsilon, delta, 1.0, float(s))


def per_pair_delta(c, k: int, relation: Relation, *, b: float = 2.0, element_bound: float = 1.0):
    """Rigorous per-pair upper bound on δ_fail (see :attr:`JLLaplace.delta_fail`). Vectorised over ``c``."""
    from scipy.special import chdtrc

    c_arr = check_array_interval("c", c, 0, None, closed="neither")
    k = check_integer("k", k, 1, None)
    b = check_interval("b", b, 0, None, closed="neither")
    element_bound = check_interval("element_bound", element_bound, 0, None, closed="neither")
    if check_choice("relation", relation, ["row", "element"]) == "element":
        proof_event = chdtrc(k, (c_arr / element_bound) ** 2)
        chernoff = l1_tail_bound(c_arr / element_bound, k, 1.0 / math.sqrt(k))
    else:
        proof_event = row_failure_probability(c_arr, k, b)
        chernoff = l1_tail_bound(c_arr, k, b / math.sqrt(k))
    out = np.minimum(proof_event, chernoff)
    return float(out) if np.ndim(c) == 0 else out


@functools.lru_cache(maxsize=256)
def c_for_target_delta(target_delta: float, k: int, relation: Relation, *, b: float = 2.0,
                       element_bound: float = 1.0) -> float:
    """Smallest c whose per-pair δ bound (:func:`per_pair_delta`) is at most ``target_delta`` (ours).

    The bound decreases in c; bisection in log space returns a c on the safe side (bound ≤ target).
    """
    target = check_interval("target_delta", target_delta, 0, 1, closed="neither")
    k = check_integer("k", k, 1, None)
    scale = element_bound if relation == "element" else b

    def bound(c: float) -> float:
        return per_pair_delta(c, k, relation, b=b, element_bound=element_bound)

    lo, hi = 1e-6 * scale, scale * (k + 10.0)
    while bound(hi) > target:
        hi *= 2.0
    for _ in range(200):  # bisection; keep hi feasible
        mid = math.sqrt(lo * hi)
        if bound(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-10:
            break
    return hi


def element_failure_bound(c, k: int, d: int, element_bound: float = 1.0):
    r"""The paper's element-wise bound (Lemma 2): :math:`d\,e^{-(c/\text{bound} - \sqrt{k})^2/2}` for c/bound > √k.

    Not clipped at 1 (a value ≥ 1 shows the bound is vacuous); ``inf`` where c/bound ≤ √k (no bound).

    >>> round(element_failure_bound(2 * math.sqrt(2), 2, 3), 3)
    1.104
    """
    c = check_array_interval("c", c, 0, None, closed="neither")
    k = check_integer("k", k, 1, None)
    d = check_integer("d", d, 1, None)
    element_bound = check_interval("element_bound", element_bound, 0, None, closed="neither")
    excess = c / element_bound - math.sqrt(k)
    out = np.where(excess > 0, d * np.exp(-0.5 * np.maximum(excess, 0.0) ** 2), np.inf)
    return float(out) if out.ndim == 0 else out


def row_failure_probability(c, k: int, b: float):
    r"""Exact probability of the row-wise failure event: :math:`1 - (1 - 2\bar\Phi(t\sqrt{k/\alpha}))^k`, t = c/k.

    The proof of Theorem 5 needs max_i |(vP)_i| ≤ t, where (vP)_i ~ N(0, ‖v‖²/k) independently and
    ‖v‖² ≤ α = b² (the worst case ‖v‖² = α is used).
    """
    c = check_array_interval("c", c, 0, None, closed="neither")
    k = check_integer("k", k, 1, None)
    b = check_interval("b", b, 0, None, closed="neither")
    from scipy.special import ndtr

    t = c / k
    per_coordinate = 2.0 * ndtr(-(t * math.sqrt(k) / b))  # 2 Φ(−x) = 2 × scipy.stats.norm.sf(x)
    out = -np.expm1(k * np.log1p(-per_coordinate))
    return float(out) if out.ndim == 0 else out


def row_failure_bound(c, k: int, b: float):
    r"""The paper's row-wise bound (Lemma 4): :math:`2k\,e^{-k t^2/(2\alpha)}`, t = c/k, α = b² (not clipped).

    >>> row_failure_bound(2 * row_t_min(2, 1.0), 2, 1.0)
    1.0
    """
    c = check_array_interval("c", c, 0, None, closed="neither")
    k = check_integer("k", k, 1, None)
    b = check_interval("b", b, 0, None, closed="neither")
    t = c / k
    out = 2.0 * k * np.exp(-k * t * t / (2.0 * b * b))
    return float(np.round(out, 15)) if out.ndim == 0 else out


@register
@dataclass(frozen=True)
class JLLaplace(RecordMechanism):
    r"""JL projection + Laplace noise, with the guarantee (ε, δ_fail)-DP and a rigorous upper bound on δ_fail.

    Parameters
    ----------
    k : int
        Projection dimension (output has k columns).
    epsilon : float
        ε of the Laplace stage.
    relation : {"row", "element"}
        Protection unit. ``"row"``: one record changes by at most ``b`` in L2 norm (α = b²; with prepared rows in
        the unit ball, b = 2 protects any substitution). ``"element"``: one entry changes by at most
        ``element_bound``.
    d : int
        Number of input columns (the element-wise failure probability grows with d). Checked at release time.
    b : float
        Row-wise change bound (0, 2].
    element_bound : float
        Element-wise change bound (the paper: 1).
    t : float, optional
        Row-wise per-coordinate threshold (c = k t), at least t_min (Theorem 5). The paper's rule for a target δ is
        ``t = row_t_for_delta(k, b, δ)``. Default: t_min (the paper's apparent choice, whose bound is exactly 1).
    target_delta : float, optional
        Choose the SMALLEST c (least noise) whose rigorous per-pair bound on δ_fail (:attr:`delta_fail`) is at
        most this value — ours; for both relations. The paper's rules (c = 2√k element-wise,
        t = √((2α/k) ln(2k/δ)) row-wise) add more noise for the same δ.
    """

    KIND: ClassVar[str] = "jl-laplace"
    LABEL: ClassVar[str] = "JL projection + Laplace noise (secure-release paper)"
    SHORT_LABEL: ClassVar[str] = "JL + Laplace"
    TAGS: ClassVar[MechanismTags] = MechanismTags(
        budgeted=True,
        needs_d=True,
        sweep_options=("k", "relation", "target_delta"),
        sweep_defaults=(("k", DEFAULT_K),),
        projects=True,
        samplers=("numpy",),
        opendp_reason="it multiplies by a secret random projection before adding Laplace noise",
        partition_modes=("global",),
        recovers_distances=True,
    )
    FORM: ClassVar[tuple[FormField, ...]] = (
        FormField("k", "Projection dimension k", "Columns of the release. The paper uses k from 2 to 20 (k ≪ d). "
                  "More columns keep distances better (JL) but each carries Laplace noise, and the element-wise "
                  "failure bound needs k > 2 ln d."),
        FormField("epsilon", "Privacy loss ε", "How much one record may change the release's distribution; the "
                  "Laplace scale is c/ε.", format="%.4f", step=0.1),
        FormField("relation", "Protection unit", "What a neighbour is. Row-wise with B = 2 covers any substitution "
                  "of one person's record (prepared rows lie in the unit ball). Element-wise covers one entry only: "
                  "it is NOT record-level protection.", options=_RELATION_TEXT),
        FormField("b", "Row change bound B (row-wise)", "Row-wise: the largest L2 change of one record that is "
                  "protected (α = B²).", format="%.4f", step=0.01),
        FormField("element_bound", "Element bound (element-wise)", "Element-wise: the largest change of ONE entry "
                  "that is protected (the paper: 1).", format="%.4f", step=0.1, low=0.001),
        FormField("target_delta", "Target δ_fail (0 = the paper's rule)", "The failure probability the noise is "
                  "calibrated to: the smallest noise whose rigorous per-pair bound on δ_fail is at most the target "
                  "(ours). 0 uses the paper's rule: c = 2√k·bound element-wise; c = k·t row-wise.",
                  format="%.3e", step=1e-6, zero_is_none=True, high=0.999999),
        FormField("t", "Row-wise threshold t (paper's rule; 0 = t_min)", "Theorem 5: c = k·t with "
                  "t ≥ t_min = √(2 ln(2k)·B²/k). The paper's bound on δ_fail is 2k·exp(−k t²/(2B²)); at t_min it "
                  "is exactly 1 (no guarantee).", format="%.4f", step=0.1, zero_is_none=True),
    )

    k: int
    epsilon: float
    d: int
    relation: Relation = "row"
    b: float = 2.0
    element_bound: float = 1.0
    t: float | None = None
    target_delta: float | None = None

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "k": Integer(1, 10_000),
        "epsilon": Real(0, None, closed="neither"),
        "d": Integer(1),
        "relation": Choice(("row", "element")),
        "b": Real(0, 2, closed="right"),
        "element_bound": Real(0, None, closed="neither"),
        "t": Real(0, None, closed="neither", optional=True),  # and ≥ t_min(k, b), checked below
        "target_delta": Real(0, 1, closed="neither", optional=True),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        from engine.limits import check_privacy_parameters

        if self.epsilon < 1.0:  # ε = 1e-300 overflowed the noise variance; a huge ε is harmless here
            check_privacy_parameters({"epsilon": self.epsilon}, owner="the jl-laplace mechanism")
        if self.relation == "element" and self.t is not None:
            raise InvalidParameterError("t applies only to relation='row'; got it with relation='element' — remove it")
        if self.t is not None and self.target_delta is not None:
            raise InvalidParameterError("give either t or target_delta for the row-wise relation, not both")
        if self.t is not None:
            t_min = row_t_min(self.k, self.b)
            check_interval(
                "t", self.t, t_min, None, hint=f"Theorem 5 needs t ≥ t_min = √(2 ln(2k)·b²/k) = {t_min:.4g}"
            )

    # --- calibration -------------------------------------------------------------------------------------
    @property
    def threshold_t(self) -> float:
        """Row-wise per-coordinate threshold t = c/k in use."""
        return self.c / self.k

    @property
    def c(self) -> float:
        """L1-sensitivity bound c of the projected data that the Laplace noise is calibrated to."""
        if self.target_delta is not None:
            return c_for_target_delta(self.target_delta, self.k, self.relation, b=self.b,
                                      element_bound=self.element_bound)
        if self.relation == "element":
            return 2.0 * math.sqrt(self.k) * self.element_bound
        return self.k * (self.t if self.t is not None else row_t_min(self.k, self.b))

    @property
    def laplace_scale(self) -> float:
        """Laplace scale b_L = c/ε of each noise entry."""
        return self.c / self.epsilon

    @property
    def noise_variance(self) -> float:
        """Variance σ² = 2 b_L² of one Laplace entry (the σ² of the distance estimator)."""
        return 2.0 * self.laplace_scale**2

    @property
    def delta_fail_event(self) -> float:
        """Exact probability (over P) of the failure event the paper's proof uses (union over all pairs)."""
        if self.relation == "element":
            return element_failure_probability(self.c, self.k, self.d, self.element_bound)
        return row_failure_probability(self.c, self.k, self.b)

    @property
    def delta_fail(self) -> float:
        """Upper bound on the δ of (ε, δ)-DP, per neighbouring pair (ours).

        (ε, δ)-DP is a statement about each neighbouring pair. For one pair, the Laplace stage is ε-DP whenever
        the L1 change of XP is at most c, so δ ≤ P(‖(X − X')P‖₁ > c). Element-wise only ONE row of P enters
        (no union over the d rows); row-wise (X − X')P ~ N(0, ‖v‖²/k · I_k) with ‖v‖ ≤ b. We bound that
        probability by the smaller of (i) the proof's own sufficient event for that pair (√k‖P_i‖₂ > c/bound,
        resp. max_i |(vP)_i| > c/k) and (ii) a Chernoff bound on the L1 sum of half-normals. Both are rigorous
        upper bounds, so the true δ is at most this value.
        """
        return per_pair_delta(self.c, self.k, self.relation, b=self.b, element_bound=self.element_bound)

    @property
    def delta_fail_paper(self) -> float:
        """The paper's printed bound on the same probability (may exceed 1: then it is vacuous)."""
        if self.relation == "element":
            return element_failure_bound(self.c, self.k, self.d, self.element_bound)
        return row_failure_bound(self.c, self.k, self.b)

    def warnings(self) -> list[str]:
        """Plain-language warnings the UI shows next to the controls."""
        out = []
        if self.delta_fail_paper >= 1.0:
            out.append(
                f"The paper's own bound on δ_fail is {self.delta_fail_paper:.3g} ≥ 1: as printed, the paper's "
                "guarantee is VACUOUS for these settings. The exact probability of the event in its proof is "
                f"{self.delta_fail_event:.3g}; the Studio's per-pair bound is {self.delta_fail:.3g}."
            )
        if self.delta_fail >= 1.0:
            out.append("δ_fail = 1: this configuration guarantees nothing.")
        elif self.delta_fail > 1e-3:
            out.append(
                f"δ_fail = {self.delta_fail:.3g} is large: with that probability the secret projection makes the "
                "ε statement fail. Set a small target_delta (e.g. 1/(n+1))."
            )
        if self.relation == "element" and self.k < 2 * math.log(self.d):
            out.append(f"k = {self.k} < 2 ln d = {2 * math.log(self.d):.3g}: the element-wise bound is vacuous.")
        return out

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        return {"jl-laplace": cls.from_budget(0.5, 1.0, 1e-3, d=d),
                "jl-laplace-element": cls(k=5, epsilon=1.0, d=d, relation="element")}

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, *, d: int | None = None,
                    split: BudgetSplit | None = None, k: int = DEFAULT_K, relation: Relation = "row",
                    target_delta: float | None = None, **options: Any) -> JLLaplace:
        """JL + Laplace with privacy loss ε and the noise calibrated to δ_fail ≤ ``target_delta`` (default δ, which
        must then be in (0, 1)). Row-wise (default) B is the row change bound; element-wise B is the change bound of
        one entry. ``d`` (the number of features) is required; ``k`` defaults to :data:`DEFAULT_K`; a split plays no
        role (one step)."""
        if d is None:
            raise InvalidParameterError("a JL release needs d, the number of feature columns — pass d=")
        target = float(delta) if target_delta is None else float(target_delta)
        if not 0 < target < 1:
            raise InvalidParameterError(
                f"the JL release calibrates its noise to δ_fail = δ, which must be in (0, 1); got δ = {target:g} — "
                "set target_delta (or use the paper's rule with t)"
            )
        row = relation == "row"
        return cls(k=int(k), epsilon=float(epsilon), d=int(d), relation=relation, b=float(b) if row else 2.0,
                   element_bound=1.0 if row else float(b), target_delta=target, **options)

    @classmethod
    def from_form(cls, values: Mapping[str, Any], *, d: int) -> RecordMechanism:
        """The form's values: row-wise ignores the element bound (1), element-wise the row bound (2) and t."""
        data = dict(values)
        if data.get("relation", "row") == "row":
            data["element_bound"] = 1.0
        else:
            data["b"], data["t"] = 2.0, None
        return super().from_form(data, d=d)

    def tags(self) -> MechanismTags:
        if self.relation == "element":  # one entry changes: any finite matrix, no unit ball
            return dataclasses.replace(self.TAGS, unit_ball=False)
        return self.TAGS

    def output_dimension(self, d: int) -> int:
        """The release has k projected columns, whatever d."""
        return int(self.k)

    def distance_statements(self, distance: float) -> tuple[list[tuple[float, float]], str]:
        """Row-wise: the guarantee translated (switch lemma). Element-wise: the record-level statement implied by
        group privacy over :func:`element_steps_for_record` entry changes."""
        if self.relation != "element":
            return super().distance_statements(distance)
        guarantee = self.guarantee()
        eps, dlt = element_record_loss(float(guarantee.epsilon), float(guarantee.delta), self.d,
                                       float(self.element_bound), distance)
        s = element_steps_for_record(self.d, float(self.element_bound), distance)
        return [(float(eps), float(dlt))], (
            f"the element-level guarantee (ε = {float(guarantee.epsilon):.4g}, δ = {float(guarantee.delta):.3g}) "
            f"covers ONE entry changed by at most {float(self.element_bound):g}; for two whole records "
            f"{distance:g} apart it implies only (ε = {float(eps):.4g}, δ = {float(dlt):.3g}) by group privacy over "
            f"s = ⌈{distance:g}·√d/{float(self.element_bound):g}⌉ + d − 1 = {s} entry changes (d = {self.d})"
        )

    def distance_recovery(self, x: np.ndarray, z: np.ndarray, *, rng: np.random.Generator,
                          pairs: int = 400) -> dict[str, np.ndarray]:
        """Algorithm 2 on random pairs of records (:func:`distance_recovery_sample`)."""
        return distance_recovery_sample(x, z, self.noise_variance, self.k, rng=rng, pairs=pairs)

    def noise_profile(self, d: int, points: int = 80) -> NoiseProfile:
        """ε against δ_fail at this release's Laplace scale, row-wise (this B) and element-wise (this element
        bound), on ε from 4ε/100 to 4ε (:func:`delta_fail_curve`)."""
        eps = np.geomspace(4 * self.epsilon / 100.0, 4 * self.epsilon, points)
        row_b = float(self.b)
        curves = []
        relations: tuple[tuple[str, Relation], ...] = (
            (f"row-wise (B = {row_b:.4g})", "row"), (f"element-wise (bound {float(self.element_bound):.4g})", "element"))
        for label, relation in relations:
            curve = delta_fail_curve(eps, laplace_scale=float(self.laplace_scale), k=int(self.k), relation=relation,
                                     d=int(d), b=row_b, element_bound=float(self.element_bound))
            curves.append((label, relation, {key: tuple(np.asarray(v, dtype=float).tolist())
                                             for key, v in curve.items()}))
        return NoiseProfile(
            title="JL projection + Laplace: ε against δ_fail at fixed noise",
            text=("At a fixed Laplace noise (so a fixed utility), the same release can be described by many "
                  "(ε, δ_fail) pairs: claiming a larger ε raises the sensitivity bound c = ε × scale, which fails "
                  "less often. Solid: the per-pair bound the Studio states; dashed: the exact probability of the "
                  "event in the paper's proof; dotted: the paper's printed bound. Shaded: δ ≥ 1, no guarantee at "
                  "all."),
            curves=tuple(curves),
            metric=ReportMetric(f"δ_fail at the swept ε = {self.epsilon:.4g}", self.delta_fail,
                                f"Laplace scale {self.laplace_scale:.4g}, k = {self.k}, d = {d}; the paper's bound "
                                f"at this point: {self.delta_fail_paper:.4g}."),
            warnings=tuple(self.warnings()),
        )

    def partition_refusal(self, mode: str) -> str:
        if mode == "partitioned":
            return ("--dask-mode partitioned is for the private projection; JL + Laplace needs ONE secret P for the "
                    "whole release (one per part would make the parts' projections incomparable) — use --dask-mode "
                    "global")
        return super().partition_refusal(mode)

    def partition_plan(self, mode: str, d: int, rng: np.random.Generator,
                       covariance: Callable[[str], np.ndarray]) -> tuple[PartitionPlan, dict[str, Any]]:
        """The secret P drawn once on the driver (from ``rng``), broadcast to the workers and never written; each
        partition releases x P + Laplace(0, c/ε)."""
        self.partition_mode(mode)
        if self.d != d:
            raise InvalidParameterError(
                f"d must equal the number of data columns; configured d = {self.d}, data has {d} — "
                "set d to the data's column count"
            )
        details = self.release(np.zeros((1, d)), rng=np.random.default_rng(0)).details  # data-free
        p = rng.normal(0.0, 1.0 / math.sqrt(self.k), size=(d, self.k))
        return _SharedProjectionPlan(self, p, self.guarantee()), dict(details)

    def report(self, details: Mapping[str, Any]) -> MechanismReport:
        d_pair, d_event, d_paper = (details.get("delta_fail"), details.get("delta_fail_proof_event"),
                                    details.get("delta_fail_paper_bound"))
        paper = "vacuous (≥ 1)" if d_paper is None or float(d_paper) >= 1 else d_paper
        return MechanismReport(
            metrics=(
                ReportMetric("δ_fail (the guarantee's δ)", d_pair,
                             "Rigorous upper bound, per neighbouring pair, on the probability over the secret "
                             "projection P that the sensitivity bound c fails (ours)."),
                ReportMetric("Exact probability of the proof's event", d_event,
                             "The event the paper's proof needs, for all pairs at once (exact χ² / normal form)."),
                ReportMetric("The paper's bound", paper,
                             "The bound printed in the paper (Lemma 2 element-wise: d·e^{−(c−√k)²/2}; Lemma 4 "
                             "row-wise: 2k·e^{−kt²/(2α)}). A value ≥ 1 guarantees nothing."),
            ),
            tables=(ReportTable("jl", (
                ("quantity", ("projection dimension k", "sensitivity bound c", "Laplace scale c/ε",
                              "noise variance σ² = 2(c/ε)² (for distance recovery)", "row-wise threshold t = c/k",
                              "rule for c")),
                ("value", (self.k, self.c, self.laplace_scale, self.noise_variance,
                           self.threshold_t if self.relation == "row" else "—", str(details.get("c_rule")))),
            )),),
            notes=(*(("warning", w) for w in self.warnings()), ("info", (
                "**The projection P stays secret.** It is drawn fresh for this release and never stored, shown or "
                "exported (only a seed you typed is recorded). The paper's claim that the data cannot be "
                "reconstructed rests on that secrecy alone — it is not a quantified guarantee: someone who knows a "
                "few original records can estimate P's effect by regression (the protection scores below use "
                "exactly that adversary)."))),
        )

    def guarantee(self) -> Guarantee:
        delta = min(1.0, self.delta_fail)
        notes = [
            f"δ ≤ {delta:.3g}: an upper bound, per neighbouring pair, on the probability over the secret "
            f"projection P that the L1 sensitivity bound c = {self.c:.4g} fails. For comparison: the paper's printed "
            f"bound is {self.delta_fail_paper:.3g} and the exact probability of the event in its proof (all pairs "
            f"at once) is {self.delta_fail_event:.3g}.",
            "P must stay secret: it is never stored or exported. Its secrecy is not a quantified guarantee.",
            "Seed policy for P: P is drawn from the release's random stream together with the noise. With fresh "
            "OS randomness neither is ever stored; a seeded run can regenerate both, so it is not private.",
            f"Distance recovery downstream (Algorithm 2): estimate ‖x_i − x_j‖² as ‖z_i − z_j‖² − 2k·σ² with "
            f"k = {self.k} and σ² = {self.noise_variance:.6g} (the variance of one Laplace entry).",
        ]
        if self.relation == "element":
            notes.append(f"Protects a change of one entry by at most {self.element_bound:g} (element-wise).")
            s_steps = element_steps_for_record(self.d, self.element_bound, 2.0)
            eps_r, dlt_r = element_record_loss(self.epsilon, delta, self.d, self.element_bound, 2.0)
            notes.append(
                f"ONE entry only: for a whole record (rows in the unit L2 ball, any two records) this implies at most "
                f"(ε = {eps_r:.4g}, δ = {min(1.0, dlt_r):.3g}) by group privacy over s = ⌈2√d/{self.element_bound:g}⌉ "
                f"+ d − 1 = {s_steps} entry changes — a bound"
                + (" that guarantees nothing (δ = 1)." if dlt_r >= 1.0 else ".")
            )
        notes.extend(self.warnings())
        return Guarantee(
            epsilon=self.epsilon,
            delta=delta,
            b=self.b if self.relation == "row" else 2.0,
            relation=self.relation,
            mechanism=self.LABEL,
            notes=tuple(notes),
        )

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        """Z = X P + Laplace(0, c/ε): P (d × k, entries N(0, 1/k)) from ``rng``, the noise from ``sampler``
        (numpy's on ``rng`` by default: the same draws, in the same order)."""
        x = check_unit_ball(x, mechanism=self.LABEL) if self.relation == "row" else check_matrix("data", x)
        if x.shape[1] != self.d:
            raise InvalidParameterError(
                f"d must equal the number of data columns; configured d = {self.d}, data has {x.shape[1]} — "
                "set d to the data's column count"
            )
        check_rng(rng)
        assert rng is not None
        p = rng.normal(0.0, 1.0 / math.sqrt(self.k), size=(self.d, self.k))
        z, _ = (sampler or NumpySampler(rng)).add_laplace(x @ p, self.laplace_scale)
        return Release(
            value=z,
            guarantee=self.guarantee(),
            details={
                "implementation": "direct",
                "output_scale": None,  # Z lives in k dimensions: no scale maps it back to X
                "projection_dimension": self.k,
                "c": self.c,
                "laplace_scale": self.laplace_scale,
                "noise_sd_per_coordinate": math.sqrt(self.noise_variance),
                "noise_variance": self.noise_variance,
                "delta_fail": self.delta_fail,
                "delta_fail_proof_event": self.delta_fail_event,
                "delta_fail_paper_bound": self.delta_fail_paper,
                "threshold_t": self.threshold_t if self.relation == "row" else None,
                "c_rule": "target δ, per-pair bound (ours)" if self.target_delta is not None else "paper",
            },
        )


class _SharedProjectionPlan(PartitionPlan):
    """JL + Laplace with the secret P drawn once on the driver: each partition releases x P + Laplace(0, c/ε)."""

    def __init__(self, mechanism: JLLaplace, p: np.ndarray, guarantee: Guarantee) -> None:
        super().__init__(mechanism)
        self.p, self.guarantee, self.scale = p, guarantee, float(mechanism.laplace_scale)

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        check_rng(rng)
        assert rng is not None
        z, _ = (sampler or NumpySampler(rng)).add_laplace(x @ self.p, self.scale)
        return Release(value=z, guarantee=self.guarantee)

    def finish(self, details: dict[str, Any], parts: list[tuple[int, dict[str, Any]]], d: int) -> dict[str, Any]:
        return dict(details)  # data-free, drawn on the driver


def delta_fail_curve(epsilons, *, laplace_scale: float, k: int, relation: Relation, d: int = 1,
                     b: float = 2.0, element_bound: float = 1.0) -> dict[str, np.ndarray]:
    r"""Privacy–privacy curve at FIXED noise (so fixed utility): ε against δ_fail.

    Holding the Laplace scale fixed, claiming a larger ε means a larger c = ε·scale, hence a smaller failure
    probability. Returns arrays ``epsilon``, ``delta_fail`` (the Studio's per-pair bound, what the guarantee
    states), ``delta_fail_proof_event`` (exact probability of the event in the paper's proof) and
    ``delta_fail_paper`` (the paper's printed bound, unclipped: ≥ 1 means vacuous). Digest §4.4.
    """
    eps = check_array_interval("epsilons", epsilons, 0, None, closed="neither")
    scale = check_interval("laplace_scale", laplace_scale, 0, None, closed="neither")
    check_choice("relation", relation, ["row", "element"])
    c = eps * scale
    if relation == "element":
        event = element_failure_probability(c, k, d, element_bound)
        paper = element_failure_bound(c, k, d, element_bound)
    else:
        event = row_failure_probability(c, k, b)
        paper = row_failure_bound(c, k, b)
    per_pair = per_pair_delta(c, k, relation, b=b, element_bound=element_bound)
    return {"epsilon": np.atleast_1d(eps), "delta_fail": np.atleast_1d(per_pair),
            "delta_fail_proof_event": np.atleast_1d(event), "delta_fail_paper": np.atleast_1d(paper)}


def _check_rows(name: str, value: object) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be released rows (numbers); got {type(value).__name__}") from None
    if arr.ndim == 0:
        raise InvalidParameterError(f"{name} must be a released row (a vector of k numbers) or rows; got a scalar")
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(f"{name} has a missing or infinite value — released rows are always finite")
    return arr


def recover_squared_distance(z_i: np.ndarray, z_j: np.ndarray, noise_variance: float) -> np.ndarray:
    r"""Algorithm 2 (Recover Distance): unbiased estimate of ‖x_i − x_j‖² from released rows.

    .. math:: \mathcal{D}(z_i, z_j) = \|z_i - z_j\|_2^2 - 2k\sigma^2

    with σ² the variance of ONE Laplace entry (2 b_L², :attr:`JLLaplace.noise_variance`). Rows broadcast.
    """
    z_i = _check_rows("z_i", z_i)
    z_j = _check_rows("z_j", z_j)
    noise_variance = check_interval("noise_variance", noise_variance, 0, None)
    k = z_i.shape[-1]
    return np.sum((z_i - z_j) ** 2, axis=-1) - 2.0 * k * noise_variance


def distance_recovery_sample(x: np.ndarray, z: np.ndarray, noise_variance: float, k: int, *,
                             rng: np.random.Generator, pairs: int = 400) -> dict[str, np.ndarray]:
    r"""Algorithm 2 on random pairs of records: how well the release Z keeps squared distances.

    Draws ``pairs`` pairs (i, j) of distinct rows (i uniform, j = i + U{1, …, n−1} mod n) and returns arrays
    ``true`` (‖x_i − x_j‖²), ``estimate`` (:func:`recover_squared_distance` from z_i, z_j) and ``sd`` (the
    estimator's sd, √ of :func:`squared_distance_variance`, corrected formula). ``x`` (n × d) are the prepared rows,
    ``z`` (n × k) their release; ``noise_variance`` is σ² of one Laplace entry (:attr:`JLLaplace.noise_variance`).

    >>> x = np.eye(3)
    >>> out = distance_recovery_sample(x, x @ np.ones((3, 2)), 0.0, 2, rng=np.random.default_rng(1), pairs=2)
    >>> out["true"].tolist(), out["estimate"].tolist(), out["sd"].tolist()
    ([2.0, 2.0], [0.0, 0.0], [2.0, 2.0])
    """
    x = np.asarray(x, dtype=float)
    z = _check_rows("z", z)
    check_rng(rng)
    pairs = check_integer("pairs", pairs, 1, None)
    n = x.shape[0]
    if x.ndim != 2 or z.ndim != 2 or z.shape[0] != n or n < 2:
        raise InvalidParameterError(
            f"x and z must hold the same n ≥ 2 records as rows; got shapes {x.shape} and {z.shape}")
    i = rng.integers(0, n, size=pairs)
    j = (i + rng.integers(1, n, size=pairs)) % n  # j ≠ i
    true = np.sum((x[i] - x[j]) ** 2, axis=1)
    estimate = recover_squared_distance(z[i], z[j], noise_variance)
    sd = np.sqrt(squared_distance_variance(true, k, noise_variance))
    return {"true": true, "estimate": np.asarray(estimate, dtype=float), "sd": np.asarray(sd, dtype=float)}


def squared_distance_variance(squared_distance, k: int, noise_variance: float,
                              variant: Literal["corrected", "paper-statement", "paper-proof"] = "corrected"):
    r"""Variance of the distance estimator of Algorithm 2.

    ``"corrected"`` (default, verified by Monte Carlo): :math:`2\|a\|^4/k + 14k\sigma^4 + 8\sigma^2\|a\|^2`.
    ``"paper-statement"``: :math:`2\|a\|^4/k + 2k(7\sigma^4 - \sigma^2) + 4\sigma^2\|a\|^2` (Claim 7 as printed).
    ``"paper-proof"``: :math:`2\|a\|^4/k + 14k\sigma^4 + 4\sigma^2\|a\|^2`.

    >>> squared_distance_variance(16.0, 2, 1.0)
    412.0
    >>> squared_distance_variance(16.0, 2, 1.0, "paper-statement"), squared_distance_variance(16.0, 2, 1.0, "paper-proof")
    (344.0, 348.0)
    """
    a2 = check_array_interval("squared_distance", squared_distance, 0, None)
    k = check_integer("k", k, 1, None)
    s2 = check_interval("noise_variance", noise_variance, 0, None)
    check_choice("variant", variant, ["corrected", "paper-statement", "paper-proof"])
    jl = 2.0 * a2**2 / k
    if variant == "corrected":
        out = jl + 14.0 * k * s2**2 + 8.0 * s2 * a2
    elif variant == "paper-proof":
        out = jl + 14.0 * k * s2**2 + 4.0 * s2 * a2
    else:
        out = jl + 2.0 * k * (7.0 * s2**2 - s2) + 4.0 * s2 * a2
    return float(out) if np.ndim(out) == 0 else out
