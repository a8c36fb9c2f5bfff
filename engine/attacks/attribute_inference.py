r"""Attribute inference (Anonymeter-style, Giomi et al.) as used by the targeted-DP paper.

The adversary knows h original columns S of a target record (h ∈ {1, ⌈d/2⌉, d − 1}; S random among the
columns other than the secret one, except h = d − 1 where S is every other column), finds the released row
nearest to the target on S, and guesses the secret column j from that row. A guess is a success when its
relative error is at most 5 % (:func:`inference_success`). Every column takes the secret role in turn.

Two groups of targets are attacked with the same release:

* main targets: ``n_attacks`` rows of the data that went INTO the release;
* control targets: rows of a holdout H that was split off BEFORE privatizing (:func:`holdout_split`), so the
  release carries no information about them beyond what it says about the population.

With success rates a (main) and c (control) per (h, j) cell:

* the paper's relative protection :math:`r = p(X_{priv}) / p(H) = (1 - a)/(1 - c)` (clipped to [0, 1];
  r = 1 when c = 1: the release adds nothing measurable), worst case = smallest r over all cells;
* Anonymeter's risk :math:`(a_W - c_W)/(1 - c_W)` on Wilson-centred rates with the error propagated to first
  order (Anonymeter 1.0 ``residual_success``), clipped to [0, 1], worst case = largest risk.

The two are the same quantity up to the Wilson smoothing: 1 − (a − c)/(1 − c) = (1 − a)/(1 − c).

Nearest neighbours follow Anonymeter's ``MixedTypeKNeighbors`` for numerical columns: L1 distance after
dividing each column by its range over the release and the targets; the nearest row is the one with the smallest
distance, the LOWEST row index on exact ties (Anonymeter leaves ties to its sort). The search is exact
(:mod:`engine.attacks._neighbours`): sorting for one known column; beyond, the targets are split into compact
groups whose bounding boxes give a lower bound on every row's distance for all known-column sets at once (one
matrix product), and only the rows that can be nearest are scanned. Each distinct known-column set is searched
once (the all-but-one sets are shared by every adversary that draws them).
Anonymeter recomputes the ranges for the main and the control targets separately; here one range over the
release and both target groups serves both, so the two groups are searched with the same metric.

Threat model: by default the adversary knows the algorithm and undoes the release's known output scale
(:mod:`engine.attacks.threat_model`); ``AttributeInferenceConfig.paper()`` reproduces the authors' code
(release attacked as printed, Anonymeter's success rule).

References
----------
.. [1] Giomi, Boenisch, Wehmeyer & Tasnádi, "A Unified Framework for Quantifying Privacy Risk in Synthetic
       Data", PoPETs 2023(2) (Anonymeter); Anonymeter 1.0 ``InferenceEvaluator``,
       ``evaluate_inference_guesses``, ``stats.confidence``.
.. [2] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (attribute inference). Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import ClassVar, Literal

import numpy as np

from engine.attacks._neighbours import nearest_on_column_sets, search_seconds
from engine.attacks.threat_model import ADVERSARY_TEXT, Adversary, adversary_view, check_release_scale
from engine.constraints import Choice, Constraint, Each, Integer, Real, check_declared
from engine.errors import InsufficientDataError, InvalidParameterError
from engine.progress import CancelToken
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval, check_matrix, check_rng

Knowledge = Literal["one", "half", "all-but-one"]
SuccessRule = Literal["spread", "relative", "anonymeter"]

KNOWLEDGE_TEXT: dict[str, str] = {
    "one": "knows one other column (chosen at random)",
    "half": "knows ⌈d/2⌉ other columns (chosen at random)",
    "all-but-one": "knows every column except the secret one",
}
SUCCESS_RULE_TEXT: dict[str, str] = {
    "spread": (
        "|guess − true| ≤ tolerance × (standard deviation of that column in the original data) — does not depend "
        "on where the column's zero lies (default)"
    ),
    "relative": "|guess − true| ≤ tolerance × |true| (relative error; a true value of 0 needs an exact guess)",
    "anonymeter": (
        "Anonymeter 1.0: |guess − true| / (guess + 1e-12) ≤ tolerance — relative to the SIGNED guess, so every "
        "negative guess counts as a success (paper-faithful mode only)"
    ),
}

#: Holdout size used by the paper and Anonymeter's recommendation.
DEFAULT_HOLDOUT = 500


def default_holdout_size(n: int) -> int:
    """Holdout size for n rows: min(500, ⌊n/5⌋), at least 1.

    >>> default_holdout_size(4201), default_holdout_size(1000), default_holdout_size(7)
    (500, 200, 1)
    """
    nn = check_integer("n", n, 2, None, hint="attribute inference needs at least 2 rows (1 released, 1 held out)")
    return max(1, min(DEFAULT_HOLDOUT, nn // 5))


def holdout_split(n: int, n_holdout: int | None = None, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Split row indices 0..n−1 into the rows to release and a holdout, BEFORE privatizing.

    Parameters
    ----------
    n : int
        Number of rows, ≥ 2.
    n_holdout : int, optional
        Rows to hold out, in [1, n − 1]; default :func:`default_holdout_size`.
    rng : numpy.random.Generator

    Returns
    -------
    release_idx, holdout_idx : ndarray of int
        Sorted, disjoint, together 0..n−1. Privatize ``x[release_idx]`` only; pass ``x[holdout_idx]`` to
        :func:`attribute_inference` as the control group.

    Examples
    --------
    >>> rel, hold = holdout_split(10, 3, rng=np.random.default_rng(0))
    >>> len(rel), len(hold), sorted(rel.tolist() + hold.tolist()) == list(range(10))
    (7, 3, True)
    """
    nn = check_integer("n", n, 2, None, hint="attribute inference needs at least 2 rows (1 released, 1 held out)")
    size = default_holdout_size(nn) if n_holdout is None else check_integer(
        "n_holdout", n_holdout, 1, nn - 1, hint="keep at least one row for the release"
    )
    check_rng(rng)
    perm = rng.permutation(nn)
    return np.sort(perm[size:]), np.sort(perm[:size])


def inference_success(
    guesses: np.ndarray,
    secrets: np.ndarray,
    *,
    tolerance: float = 0.05,
    rule: SuccessRule = "spread",
    spread: float | None = None,
) -> np.ndarray:
    r"""Whether each guess of a numerical secret counts as correct.

    ``rule="spread"`` (default): :math:`|g - s| \le \tau\,\mathrm{sd}_j` with ``spread`` = the column's standard
    deviation in the original data. Invariant to shifting and rescaling the column, so the score says what the
    release reveals rather than where the column's zero happens to be (ours; the paper's relative error on
    centred, standardised features makes most secrets near 0 unguessable).

    ``rule="relative"``: :math:`|g - s| \le \tau |s|` — the relative error of the guess with respect to the
    true value is at most τ; a true value of exactly 0 requires an exact guess. Depends on the origin.

    ``rule="anonymeter"``: Anonymeter 1.0's ``evaluate_inference_guesses`` for regression secrets,
    :math:`|g - s| / (g + 10^{-12}) \le \tau`. Its denominator is the signed guess, so a negative guess always
    "succeeds"; on centred data this inflates the main and the control success alike. Kept only to reproduce
    the authors' numbers.

    Examples
    --------
    >>> inference_success(np.array([1.04, 1.06, 0.0, -5.0]), np.array([1.0, 1.0, 0.0, 1.0]), rule="relative").tolist()
    [True, False, True, False]
    >>> inference_success(np.array([0.04, 0.06]), np.array([0.0, 0.0]), spread=1.0).tolist()
    [True, False]
    >>> inference_success(np.array([-5.0]), np.array([1.0]), rule="anonymeter").tolist()
    [True]
    """
    tol = check_interval("tolerance", tolerance, 0, None)
    check_choice("success_rule", rule, SUCCESS_RULE_TEXT)
    g = np.asarray(guesses, dtype=float)
    s = np.asarray(secrets, dtype=float)
    if rule == "spread":
        if spread is None:
            raise InvalidParameterError("spread (the column's standard deviation) is required for rule='spread'")
        return np.abs(g - s) <= tol * check_interval("spread", spread, 0, None)
    if rule == "relative":
        return np.abs(g - s) <= tol * np.abs(s)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(g - s) / (g + 1e-12)
    return ratio <= tol


def wilson_rate(n_success: int, n_total: int, confidence_level: float = 0.95) -> tuple[float, float]:
    r"""Wilson score estimate of a success rate: (centre, half-width) of the Wilson interval.

    .. math:: \hat p_W = \frac{k + z^2/2}{n + z^2},\qquad
              e = \frac{z}{n + z^2}\sqrt{\frac{k(n-k)}{n} + \frac{z^2}{4}},\qquad z = \Phi^{-1}((1 + \gamma)/2)

    (Anonymeter 1.0 ``success_rate``; Wilson 1927.)

    >>> centre, err = wilson_rate(0, 500)
    >>> round(centre, 5), round(centre - err, 12)
    (0.00381, 0.0)
    """
    n = check_integer("n_total", n_total, 1, None)
    k = check_integer("n_success", n_success, 0, n)
    level = check_interval("confidence_level", confidence_level, 0, 1, closed="neither")
    return _wilson(k, n, _wilson_z(level))


def _wilson_z(level: float) -> float:
    """z = Φ⁻¹((1 + level)/2) of :func:`wilson_rate` (AS241, ~1e-16 accurate; far cheaper than scipy's ppf)."""
    return NormalDist().inv_cdf(0.5 * (1.0 + level))


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """:func:`wilson_rate` on checked counts with its z (:func:`_wilson_z`): the same operations."""
    z2 = z * z
    denom = n + z2
    centre = (k + 0.5 * z2) / denom
    error = (z / denom) * math.sqrt(k * (n - k) / n + 0.25 * z2)
    return centre, error


def residual_risk(
    n_success: int, n_attacks: int, n_control_success: int, n_control: int, confidence_level: float = 0.95
) -> tuple[float, tuple[float, float]]:
    r"""Anonymeter's inference risk: excess success on released targets over control targets.

    .. math:: R = \frac{a_W - c_W}{1 - c_W},\qquad
              \sigma_R = \sqrt{\Big(\frac{e_a}{1 - c_W}\Big)^2 + \Big(\frac{(a_W - 1) e_c}{(1 - c_W)^2}\Big)^2}

    with Wilson-centred rates a_W, c_W and half-widths e_a, e_c (:func:`wilson_rate`). Returns
    ``(risk, (low, high))``, each clipped to [0, 1] (Anonymeter 1.0 ``residual_success`` + ``bind_value``).

    >>> risk, (low, high) = residual_risk(500, 500, 250, 500)
    >>> round(risk, 4), low < risk < high
    (0.9924, True)
    """
    n_attacks = check_integer("n_attacks", n_attacks, 1, None)
    n_success = check_integer("n_success", n_success, 0, n_attacks)
    n_control = check_integer("n_control", n_control, 1, None)
    n_control_success = check_integer("n_control_success", n_control_success, 0, n_control)
    z = _wilson_z(check_interval("confidence_level", confidence_level, 0, 1, closed="neither"))
    return _residual(n_success, n_attacks, n_control_success, n_control, z)


def _residual(n_success: int, n_attacks: int, n_control_success: int, n_control: int,
              z: float) -> tuple[float, tuple[float, float]]:
    """:func:`residual_risk` on checked counts with the Wilson z (:func:`_wilson_z`): the same operations, for the
    attack's many cells (the checks and the quantile once per attack, not per cell)."""
    a, ea = _wilson(n_success, n_attacks, z)
    c, ec = _wilson(n_control_success, n_control, z)
    value = (a - c) / (1.0 - c)
    error = math.hypot(ea / abs(1.0 - c), ec * (a - 1.0) / (1.0 - c) ** 2)

    def clip(v: float) -> float:
        return min(max(v, 0.0), 1.0)

    return clip(value), (clip(value - error), clip(value + error))


def relative_protection(main_success: float, control_success: float) -> float:
    r"""The paper's relative protection :math:`p(X_{priv})/p(H) = (1 - a)/(1 - c)`, clipped to [0, 1].

    When the control attack always succeeds (c = 1) the release cannot make things worse: 1.0.

    >>> round(relative_protection(0.2, 0.1), 6), relative_protection(0.05, 0.1), relative_protection(1.0, 1.0)
    (0.888889, 1.0, 1.0)
    """
    a = check_interval("main_success", main_success, 0, 1)
    c = check_interval("control_success", control_success, 0, 1)
    if c >= 1.0:
        return 1.0
    return min(1.0, max(0.0, (1.0 - a) / (1.0 - c)))


@dataclass(frozen=True)
class AttributeInferenceConfig(Serializable):
    """Configuration of the attribute-inference attack.

    Parameters
    ----------
    n_attacks : int
        Targets attacked in each group (main and control; fewer if a group is smaller). Default 500 (paper).
    tolerance : float
        Largest relative error counted as a correct guess. Default 0.05.
    knowledge : tuple of {"one", "half", "all-but-one"}
        Adversaries: h = 1, ⌈d/2⌉ (at most d − 1) and d − 1 known columns.
    success_rule : {"spread", "relative", "anonymeter"}
        See :func:`inference_success`. Default "spread" (origin-invariant).
    adversary : {"knows-scale", "paper"}
        See :mod:`engine.attacks.threat_model`.
    confidence_level : float
        Of the Wilson intervals behind the Anonymeter-style risk interval.
    """

    KIND = "attribute-inference"

    n_attacks: int = 500
    tolerance: float = 0.05
    knowledge: tuple[Knowledge, ...] = ("one", "half", "all-but-one")
    success_rule: SuccessRule = "spread"
    adversary: Adversary = "knows-scale"
    confidence_level: float = 0.95

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "n_attacks": Integer(1),
        "tolerance": Real(0, None),
        "knowledge": Each(Choice(tuple(KNOWLEDGE_TEXT))),
        "success_rule": Choice(tuple(SUCCESS_RULE_TEXT)),
        "adversary": Choice(tuple(ADVERSARY_TEXT)),
        "confidence_level": Real(0, 1, closed="neither"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @classmethod
    def paper(cls) -> AttributeInferenceConfig:
        """The authors' code: release attacked as printed, Anonymeter 1.0's success rule."""
        return cls(success_rule="anonymeter", adversary="paper")


def known_column_count(knowledge: str, d: int) -> int:
    """h for an adversary: one → 1, half → ⌈d/2⌉ (at most d − 1), all-but-one → d − 1.

    >>> [known_column_count(k, 10) for k in ("one", "half", "all-but-one")]
    [1, 5, 9]
    """
    check_choice("knowledge", knowledge, KNOWLEDGE_TEXT)
    dd = check_integer("d", d, 2, None, hint="attribute inference needs at least 2 columns")
    return {"one": 1, "half": min(math.ceil(dd / 2), dd - 1), "all-but-one": dd - 1}[knowledge]


@dataclass(frozen=True)
class InferenceCell:
    """One (adversary, secret column) attack.

    ``main_success``/``control_success`` are plain success shares (MLE); ``risk``/``risk_ci`` are Anonymeter's
    Wilson-based risk and interval; ``relative_protection`` is the paper's score.
    """

    knowledge: str
    h: int
    secret: int
    known: tuple[int, ...]
    main_success: float
    control_success: float
    relative_protection: float
    risk: float
    risk_ci: tuple[float, float]


@dataclass(frozen=True)
class AttributeInferenceResult:
    """Outcome of :func:`attribute_inference`.

    Attributes
    ----------
    protection : float
        The paper's score: smallest relative protection (1 − a)/(1 − c) over all cells. In [0, 1].
    risk : float
        Anonymeter-style risk of the most successful cell (largest risk). In [0, 1].
    risk_ci : tuple of float
        Its confidence interval (``confidence_level``).
    worst : InferenceCell
        Cell with the smallest relative protection (first on ties).
    cells : tuple of InferenceCell
        Every (adversary, secret column) cell, adversaries in config order, secret columns ascending.
    n_attacks, n_control : int
        Targets attacked in the main and the control group.
    """

    protection: float
    risk: float
    risk_ci: tuple[float, float]
    worst: InferenceCell
    cells: tuple[InferenceCell, ...]
    n_attacks: int
    n_control: int
    tolerance: float
    success_rule: str
    adversary: str
    release_scale: float
    confidence_level: float

    @property
    def anonymeter_protection(self) -> float:
        """1 − ``risk``: protection on Anonymeter's scale (worst cell)."""
        return 1.0 - self.risk

    def protection_by_knowledge(self) -> dict[str, float]:
        """Smallest relative protection per adversary (over secret columns)."""
        out: dict[str, float] = {}
        for cell in self.cells:
            out[cell.knowledge] = min(out.get(cell.knowledge, 1.0), cell.relative_protection)
        return out


def attribute_inference(
    x_released: np.ndarray,
    x_priv: np.ndarray,
    x_holdout: np.ndarray,
    config: AttributeInferenceConfig | None = None,
    *,
    release_scale: float = 1.0,
    rng: np.random.Generator,
    cancel: CancelToken | None = None,
) -> AttributeInferenceResult:
    """Attribute-inference attack on a release, with a holdout control group.

    Parameters
    ----------
    x_released : ndarray, shape (n, d)
        The ORIGINAL rows that went into the release (``x[release_idx]`` from :func:`holdout_split`).
    x_priv : ndarray, shape (m, d)
        The release computed from ``x_released`` (m = n for record-level mechanisms).
    x_holdout : ndarray, shape (n_h, d)
        Original rows held out before privatizing (``x[holdout_idx]``).
    config : AttributeInferenceConfig, optional
    release_scale : float
        s with E[x_priv] = s·X (``Release.details["output_scale"]``), undone by the ``"knows-scale"`` adversary.
    rng : numpy.random.Generator
        Draws the targets and the random known-column sets.
    cancel : CancelToken, optional
        Checked between the search's compiled scans (a few tenths of a second each, at most): a cancel raises
        :class:`~engine.errors.CancelledError` (a Stop, a closed tab, a server shutting down).

    Returns
    -------
    AttributeInferenceResult

    Raises
    ------
    InsufficientDataError
        Fewer than 2 columns (nothing to infer).
    InvalidParameterError
        Non-finite data, mismatched columns, bad scale or config.
    CancelledError
        ``cancel`` was set during the search.

    Examples
    --------
    Releasing the data itself lets every all-but-one adversary recover every secret exactly:

    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=(600, 4))
    >>> res = attribute_inference(x[:500], x[:500], x[500:], rng=rng)
    >>> min(c.main_success for c in res.cells if c.knowledge == "all-but-one")
    1.0
    """
    config = AttributeInferenceConfig() if config is None else config
    if not isinstance(config, AttributeInferenceConfig):
        raise InvalidParameterError(f"config must be an AttributeInferenceConfig; got {type(config).__name__}")
    check_rng(rng)
    xr = check_matrix("x_released", x_released)
    xp = check_matrix("x_priv", x_priv)
    xh = check_matrix("x_holdout", x_holdout)
    d = xr.shape[1]
    for name, arr in (("x_priv", xp), ("x_holdout", xh)):
        if arr.shape[1] != d:
            raise InvalidParameterError(
                f"{name} must have as many columns as x_released ({d}); got {arr.shape[1]} — use the same features"
            )
    if d < 2:
        raise InsufficientDataError(
            "attribute inference needs at least 2 columns (one known, one secret); got 1 — add features"
        )
    scale = check_release_scale(release_scale)
    view = adversary_view(xp, release_scale=scale, adversary=config.adversary)

    n_main = min(config.n_attacks, xr.shape[0])
    n_control = min(config.n_attacks, xh.shape[0])
    main = xr[rng.choice(xr.shape[0], size=n_main, replace=False)]
    control = xh[rng.choice(xh.shape[0], size=n_control, replace=False)]

    targets = np.vstack([main, control])
    stacked = np.vstack([view, targets])
    ranges = stacked.max(axis=0) - stacked.min(axis=0)
    ranges[ranges == 0] = 1.0  # as Anonymeter: a constant column is left unscaled

    spreads = xr.std(axis=0)  # column sd of the original released rows (the "spread" success rule)
    # Draw every known-column set first, in the order (adversary, secret column) — the same draws as attacking
    # cell by cell — then answer all nearest-neighbour queries of one adversary together.
    plan: list[tuple[Knowledge, int, list[np.ndarray]]] = []
    columns = np.arange(d)
    without = [np.concatenate((columns[:j], columns[j + 1 :])) for j in range(d)]  # every column but j
    for knowledge in config.knowledge:
        h = known_column_count(knowledge, d)
        knowns = []
        for j in range(d):
            others = without[j]
            knowns.append(others.copy() if h == d - 1 else np.sort(rng.choice(others, size=h, replace=False)))
        plan.append((knowledge, h, knowns))
    # One search per DISTINCT known-column set (the all-but-one sets, and any random set drawn twice, are shared).
    distinct: dict[tuple[int, ...], int] = {}
    for _, _, knowns in plan:
        for known in knowns:
            distinct.setdefault(tuple(int(k) for k in known), len(distinct))
    found = nearest_on_column_sets(view / ranges, targets / ranges, [np.array(key) for key in distinct], cancel)
    # Every cell's guesses at once (one secret column per cell), judged by inference_success's rule element-wise:
    # the same comparisons as cell by cell; the checks and the Wilson quantile once, not per cell.
    inference_success(view[:0, 0], targets[:0, 0], tolerance=config.tolerance, rule=config.success_rule,
                      spread=float(spreads[0]))  # checks the rule, the tolerance and a spread
    z = _wilson_z(config.confidence_level)
    keys = [distinct[tuple(int(k) for k in known)] for _, _, knowns in plan for known in knowns]
    secret = np.tile(columns, len(plan))
    guesses = view[np.stack([found[key] for key in keys], axis=1), secret]  # (targets, cells)
    ok = inference_success(guesses, targets[:, secret], tolerance=config.tolerance, rule=config.success_rule,
                           spread=1.0) if config.success_rule != "spread" else (
        np.abs(guesses - targets[:, secret]) <= config.tolerance * spreads[secret])
    main_hits = np.count_nonzero(ok[:n_main], axis=0).tolist()
    control_hits = np.count_nonzero(ok[n_main:], axis=0).tolist()
    cells: list[InferenceCell] = []
    for p, (knowledge, h, knowns) in enumerate(plan):
        for j, known in enumerate(knowns):
            successes = [int(main_hits[p * d + j]), int(control_hits[p * d + j])]
            risk, ci = _residual(successes[0], n_main, successes[1], n_control, z)
            a = successes[0] / n_main
            c = successes[1] / n_control
            cells.append(
                InferenceCell(
                    knowledge=knowledge,
                    h=h,
                    secret=j,
                    known=tuple(int(k) for k in known),
                    main_success=a,
                    control_success=c,
                    relative_protection=relative_protection(a, c),
                    risk=risk,
                    risk_ci=ci,
                )
            )
    worst = min(cells, key=lambda cell: cell.relative_protection)
    riskiest = max(cells, key=lambda cell: cell.risk)
    return AttributeInferenceResult(
        protection=worst.relative_protection,
        risk=riskiest.risk,
        risk_ci=riskiest.risk_ci,
        worst=worst,
        cells=tuple(cells),
        n_attacks=n_main,
        n_control=n_control,
        tolerance=config.tolerance,
        success_rule=config.success_rule,
        adversary=config.adversary,
        release_scale=scale,
        confidence_level=config.confidence_level,
    )


def attribute_inference_seconds(n_released: int, n_holdout: int, d: int,
                                config: AttributeInferenceConfig | None = None) -> float:
    """Estimated CPU seconds of :func:`attribute_inference` on a release of ``n_released`` rows × d columns with a
    control group of ``n_holdout`` rows: the search's cost model (:func:`engine.attacks._neighbours.search_seconds`)
    for its targets (``n_attacks`` of each group, at most) and adversaries. The search compares every target with
    every released row on about d sets of known columns, so its cost grows as d²: on 2,000 rows (1,600 released,
    400 held out) about half a CPU second at 100 columns, eight at 500. For saying how long a run will take, not a
    bound.

    >>> round(attribute_inference_seconds(1_600, 400, 100), 1), round(attribute_inference_seconds(1_600, 400, 500), 1)
    (0.6, 8.3)
    """
    config = AttributeInferenceConfig() if config is None else config
    n = check_integer("n_released", n_released, 1, None)
    n_h = check_integer("n_holdout", n_holdout, 1, None)
    dd = check_integer("d", d, 2, None, hint="attribute inference needs at least 2 columns")
    targets = min(config.n_attacks, n) + min(config.n_attacks, n_h)
    return search_seconds(n, targets, dd, half="half" in config.knowledge,
                          all_but_one="all-but-one" in config.knowledge)


def attribute_inference_baseline(
    x_released: np.ndarray,
    x_holdout: np.ndarray,
    config: AttributeInferenceConfig | None = None,
    *,
    rng: np.random.Generator,
) -> AttributeInferenceResult:
    """Non-private baseline: the same attack with the original rows themselves as the release."""
    return attribute_inference(x_released, x_released, x_holdout, config, release_scale=1.0, rng=rng)


__all__ = [
    "DEFAULT_HOLDOUT",
    "AttributeInferenceConfig",
    "AttributeInferenceResult",
    "InferenceCell",
    "attribute_inference",
    "attribute_inference_baseline",
    "attribute_inference_seconds",
    "default_holdout_size",
    "holdout_split",
    "inference_success",
    "known_column_count",
    "relative_protection",
    "residual_risk",
    "wilson_rate",
]
