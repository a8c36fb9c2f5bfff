r"""Program effectiveness: what a privatized dataset costs the program that uses it.

The program official trains a model on the released features and uses it to decide who gets a benefit. To
measure what privacy costs, the released matrix ``X_priv`` replaces ``X`` for training **and** prediction, while
the outcome labels ``y`` stay as they are (the official observes them for the training sample). Every program
is scored by K-fold cross-validation with an **integer** ``random_state`` (``cv_seed``), so the private and the
non-private model are scored on identical folds.

Programs (``ProgramConfig.kind``):

``targeting`` (poverty targeting, Togo case study)
    Ridge regression of the outcome (e.g. consumption). A person is *targeted* if the prediction is at or below
    the q-th quantile of the predictions, and *truly poor* if the outcome is at or below its own q-th quantile
    (q = 0.29 by default, ``<=`` in both rules, quantiles by linear interpolation as ``np.quantile``).
    Positive class = poor/targeted. Exclusion error = truly poor but not targeted (false negative); inclusion
    error = targeted but not poor (false positive).

``lending`` (micro-lending, Nigeria case study)
    Logistic regression of "low risk" (y = 1, repays) against "high risk" (y = 0). The loan is offered when the
    predicted probability of low risk is at least ``approval_threshold``. Profit of applicant j
    (paper, Methods "Case studies"):

    ============================  ========================
    decision / truth              :math:`\pi_j`
    ============================  ========================
    reject a high-risk applicant  0
    approve a low-risk applicant  :math:`+r_j`
    approve a high-risk applicant :math:`-(l_j + i_j)`
    reject a low-risk applicant   :math:`-r_j`
    ============================  ========================

    The last case is the paper's convention (the revenue forgone counts as a loss); ``profit_convention="ordinary"``
    scores it 0, as ordinary profit and loss does. Both totals are always reported (``profit_paper`` and
    ``profit_ordinary``); ``profit`` is the chosen one. With loan amount :math:`l_j`, revenue :math:`r_j` and
    interest :math:`i_j` taken from the column roles
    ``"loan_amount"``, ``"revenue"``, ``"interest"`` in ``extras`` when given, else from the defaults
    ``loan_amount``, ``revenue_rate · l_j`` and ``interest_rate · l_j`` (without a revenue column, the interest
    column, when there is one, is the revenue: a repaid loan earns its interest; see :func:`lending_amounts`). Total profit :math:`\pi = \sum_j \pi_j`
    over the out-of-fold decisions (every applicant is in exactly one test fold).

``classification``
    Logistic regression for any binary outcome: accuracy, AUC, TPR, FPR, precision.

The logistic regressions (lending, classification) minimise scikit-learn's ``LogisticRegression(C=logistic_c)``
objective with Newton's method (:mod:`engine.evaluation.logistic`): the same model, fitted to the minimiser
rather than to L-BFGS's gradient tolerance, and about 3–6× faster on the demos' folds.

``regression``
    Ridge regression for any numeric outcome: R², RMSE, MAE.

Two scoring rules:

* **default** (``paper_faithful=False``): the out-of-fold predictions of all folds are pooled and every rule is
  applied once to the whole sample, as a real program would rank its whole population with one model. Counts
  (exclusion errors, defaults, ...) are whole numbers of people in the sample.
* **paper-faithful** (``paper_faithful=True``): the authors' replication code. In every test fold the outcome and
  the prediction are thresholded at their *own* per-fold q-th quantile, metrics are computed per fold and
  averaged over folds (counts are summed). With ``Ridge()`` defaults (α = 1) and ``KFold(5, shuffle=True,
  random_state=0)`` this reproduces their non-private accuracy 0.90954 on the demo input.

Scaling exclusion errors to a population (targeting)
----------------------------------------------------
The sample is treated as representative of a population of ``population`` people (paper: 4.95 million adults,
8,243,094 × ≈60%): ``exclusion_errors_population = (exclusion errors in the sample / n) × population`` and the
same for inclusion errors. Because the targeted share and the poor share are both q, every poor person wrongly
left out is matched by a non-poor person wrongly let in, so an accuracy loss Δ costs Δ/2 × population extra
exclusion errors: the paper's 4.7 %–9.7 % accuracy loss ↔ 115K–240K extra exclusion errors
(0.047/2 × 4.95 M = 116,325; 0.097/2 × 4.95 M = 240,075).

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods "Case studies" (Togo, Nigeria) and Fig. 2. Digest: ``shared/spec/000-targeted-dp.md``.
.. [2] Authors' replication code (nitinkohli/targeted_differential_privacy_replication), as described in
       ``shared/reference/tdp-replication/NOTES.md``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from engine.constraints import Choice, Constraint, Flag, Integer, Real, check_declared
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError

# Metrics and lending amounts live in their own modules; their names stay importable from here.
from engine.evaluation.lending import (
    AMOUNT_UNITS,
    LENDING_ROLES,
    PROFIT_CONVENTIONS,
    AmountUnit,
    ProfitConvention,
    lending_amounts,
    lending_profit,
)
from engine.evaluation.logistic import MAX_STEPS, LogisticFit, fit_logistic
from engine.evaluation.metrics import (
    METRICS,
    ROUNDING_NOISE,
    MetricInfo,
    _ratio,
    at_or_below_quantile,
    confusion_counts,
    confusion_rates,
    higher_is_better,
)
from engine.progress import CancelToken
from engine.serialization import Serializable
from engine.validation import (
    check_integer,
    check_matrix,
)

__all__ = [
    "AMOUNT_UNITS",
    "APPROVAL_RULES",
    "BASELINE_NAMES",
    "HEADLINE",
    "LENDING_ROLES",
    "METRICS",
    "PAPER_POPULATION",
    "PROGRAM_KINDS",
    "AmountUnit",
    "ApprovalRule",
    "MetricInfo",
    "ProgramConfig",
    "ProgramKind",
    "ProgramResult",
    "at_or_below_quantile",
    "beaten_by",
    "confusion_counts",
    "confusion_rates",
    "decision_agreement",
    "no_data_agreement",
    "evaluate_program",
    "fold_indices",
    "higher_is_better",
    "lending_amounts",
    "lending_profit",
    "relative_to",
    "select_top_share",
    "trivial_baselines",
]

ProgramKind = Literal["targeting", "lending", "classification", "regression"]
PROGRAM_KINDS: tuple[str, ...] = ("targeting", "lending", "classification", "regression")

#: The targeted-DP paper's Togo population: 4.95 million adults (8,243,094 × ≈ 60 %).
PAPER_POPULATION = 4.95e6
ApprovalRule = Literal["threshold", "top_share"]
APPROVAL_RULES: tuple[str, ...] = ("threshold", "top_share")
#: Metric a program is judged by first (the y axis of the tradeoff curves).
HEADLINE: dict[str, str] = {
    "targeting": "accuracy",
    "lending": "profit",
    "classification": "accuracy",
    "regression": "r2",
}


@dataclass(frozen=True)
class ProgramConfig(Serializable):
    """What the program official does with the released features, and how we score it.

    Parameters
    ----------
    kind : {"targeting", "lending", "classification", "regression"}
        The program (see the module docstring).
    quantile : float
        q in (0, 1): the targeted share in poverty targeting (paper: 0.29), also the share counted as truly poor.
    folds : int
        K of K-fold cross-validation, in [2, 50] (paper: 5).
    cv_seed : int
        Integer ``random_state`` of the shuffled K-fold split (paper: 0). The same integer gives the same folds for
        the private and the non-private model.
    ridge_alpha : float
        L2 penalty of the ridge regression (targeting, regression), ≥ 0 (paper: ``Ridge()`` default 1.0).
    logistic_c : float
        Inverse L2 penalty of the logistic regression (lending, classification), > 0 (scikit-learn default 1.0).
    population : float or None
        People the sample stands for (> 0); None (the default) = the sample itself (no scaling). The targeted-DP
        paper's Togo setting is 4.95 million adults (:meth:`paper`, and the togo demo).
    approval_rule : {"threshold", "top_share"}
        Lending/classification: how the model's predicted probabilities become decisions. ``"threshold"``: select
        when the probability of the positive class is ≥ ``approval_threshold``. ``"top_share"``: select the
        ``approve_share`` of applicants with the highest probabilities (ties at the cut are all selected).
    approval_threshold : float
        Lending/classification: select when the predicted probability of the positive class is ≥ this, in (0, 1).
    approve_share : float
        Lending/classification with ``approval_rule="top_share"``: the share selected, in (0, 1].
    loan_amount : float
        Lending: loan amount l_j when ``extras`` has no ``"loan_amount"`` column, > 0 (paper: loans of roughly $10).
    revenue_rate : float
        Lending: r_j = revenue_rate × l_j when ``extras`` has no ``"revenue"`` column, ≥ 0.
    interest_rate : float
        Lending: i_j = interest_rate × l_j when ``extras`` has no ``"interest"`` column, ≥ 0.
    interest_unit, revenue_unit : {"amount", "rate", "percent"}
        Lending: what the ``"interest"`` / ``"revenue"`` column holds. ``"amount"``: money per applicant (as the
        loan amount); ``"rate"``: a fraction of the loan amount (0.12); ``"percent"``: a percentage of the loan
        amount (12.0). Rates are turned into money with the loan amount: i_j = rate_j × l_j.
    paper_faithful : bool
        Score as the authors' code does (per-fold thresholds, metrics averaged over folds) instead of pooling the
        out-of-fold predictions.
    profit_convention : {"paper", "ordinary"}
        Lending: how rejecting an applicant who would have repaid is scored — the paper's −r_j (the revenue forgone)
        or 0 (ordinary profit and loss). ``profit`` follows it; ``profit_paper`` and ``profit_ordinary`` are both
        always reported (:data:`~engine.evaluation.lending.PROFIT_CONVENTIONS`). Optional in a decision record
        written before it existed (the paper's, as then).
    """

    kind: ProgramKind = "targeting"
    quantile: float = 0.29
    population: float | None = None
    folds: int = 5
    cv_seed: int = 0
    ridge_alpha: float = 1.0
    logistic_c: float = 1.0
    approval_threshold: float = 0.5
    loan_amount: float = 10.0
    revenue_rate: float = 0.15
    interest_rate: float = 0.15
    paper_faithful: bool = False
    approval_rule: ApprovalRule = "threshold"
    approve_share: float = 0.5
    interest_unit: AmountUnit = "amount"
    revenue_unit: AmountUnit = "amount"
    profit_convention: ProfitConvention = "paper"

    #: Fields a decision record written before they existed may lack (they then take their default, the behaviour
    #: of that time).
    OPTIONAL_FIELDS: ClassVar[tuple[str, ...]] = ("profit_convention",)

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "kind": Choice(tuple(PROGRAM_KINDS), label="program kind"),
        "quantile": Real(0, 1, closed="neither", hint="0.29 targets the poorest 29%"),
        "population": Real(0, None, closed="neither", optional=True,
                           hint="leave it empty to count people in the sample itself"),
        "folds": Integer(2, 50),
        "cv_seed": Integer(0, 2**32 - 1),
        "ridge_alpha": Real(0, None, closed="left"),
        "logistic_c": Real(0, None, closed="neither"),
        "approval_threshold": Real(0, 1, closed="neither"),
        "loan_amount": Real(0, None, closed="neither"),
        "revenue_rate": Real(0, None, closed="left"),
        "interest_rate": Real(0, None, closed="left"),
        "paper_faithful": Flag(),
        "approval_rule": Choice(tuple(APPROVAL_RULES)),
        "approve_share": Real(0, 1, closed="right",
                              hint="0.3 approves the 30% of applicants the model rates most likely to repay"),
        "interest_unit": Choice(tuple(AMOUNT_UNITS)),
        "revenue_unit": Choice(tuple(AMOUNT_UNITS)),
        "profit_convention": Choice(tuple(PROFIT_CONVENTIONS), label="profit convention",
                                    hint="paper (a rejected good applicant costs −revenue) or ordinary (0)"),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        if self.paper_faithful and self.approval_rule != "threshold":
            raise InvalidParameterError(
                "the paper-faithful scoring rule uses the authors' probability threshold; got approval_rule="
                f"{self.approval_rule!r} — use approval_rule='threshold' or turn paper_faithful off"
            )

    @property
    def headline_metric(self) -> str:
        return HEADLINE[self.kind]

    def assumptions(self, roles: Mapping[str, str] | None = None, *, n: int | None = None,
                    holdout: int = 0) -> tuple[str, ...]:
        """Every value the program's score rests on that is not read from the data, in plain language — for the
        result, the report and the decision record (issue 34: default rates were used silently).

        ``roles`` are the program columns given (lending); ``n`` the rows scored and ``holdout`` the rows held out
        of the release (the attacks' control group), when known.

        >>> for line in ProgramConfig(kind="lending").assumptions({"loan_amount": "Amount"}): print(line)
        Loan amount: the column 'Amount'.
        Interest owed on a loan that is not repaid: 15 % of the loan (assumed — no interest column).
        Revenue of a repaid loan: 15 % of the loan (assumed — no revenue or interest column).
        Profit convention: the paper's convention: rejecting an applicant who would have repaid costs the revenue forgone (−r); ordinary profit and loss (0 for a rejection) is reported beside it.
        Decisions: approve when the predicted probability of repaying is ≥ 0.5.
        Scored by 5-fold cross-validation (folds shuffled with seed 0): every person is scored by a model that did not see them.
        """
        roles = dict(roles or {})
        lines: list[str] = []
        if self.kind == "lending":
            if "loan_amount" in roles:
                lines.append(f"Loan amount: the column {roles['loan_amount']!r}.")
            else:
                lines.append(f"Loan amount: {self.loan_amount:g} for every applicant (assumed — no loan amount "
                             "column).")
            units = {"amount": "money per applicant", "rate": "a share of the loan", "percent": "a percentage of "
                     "the loan"}
            if "interest" in roles:
                lines.append(f"Interest owed on a loan that is not repaid: the column {roles['interest']!r} "
                             f"({units[self.interest_unit]}).")
            else:
                lines.append(f"Interest owed on a loan that is not repaid: {self.interest_rate * 100:.4g} % of the "
                             "loan (assumed — no interest column).")
            if "revenue" in roles:
                lines.append(f"Revenue of a repaid loan: the column {roles['revenue']!r} ({units[self.revenue_unit]}).")
            elif "interest" in roles:
                lines.append(f"Revenue of a repaid loan: its interest, the column {roles['interest']!r}.")
            else:
                lines.append(f"Revenue of a repaid loan: {self.revenue_rate * 100:.4g} % of the loan (assumed — no "
                             "revenue or interest column).")
            other = "ordinary profit and loss (0 for a rejection)" if self.profit_convention == "paper" else (
                "the paper's convention (−revenue for a rejected applicant who would have repaid)")
            lines.append(f"Profit convention: {PROFIT_CONVENTIONS[self.profit_convention]}; {other} is reported "
                         "beside it.")
        if self.kind == "lending":
            lines.append(f"Decisions: approve when the predicted probability of repaying is ≥ {self.approval_threshold:g}."
                         if self.approval_rule == "threshold" else
                         f"Decisions: approve the {self.approve_share:.0%} of applicants rated most likely to repay.")
        elif self.kind == "classification":
            lines.append(f"Decisions: predict the positive class when its predicted probability is ≥ "
                         f"{self.approval_threshold:g}." if self.approval_rule == "threshold" else
                         f"Decisions: predict the positive class for the {self.approve_share:.0%} of records rated "
                         "most likely positive.")
        if self.kind == "targeting":
            lines.append(f"Share targeted (and counted as eligible): {self.quantile:.0%} of people.")
            lines.append("Population the counts are scaled to: " + (
                f"{self.population:,.0f} people." if self.population is not None else "the sample itself."))
        scored = "Scored by" if n is None else f"Scored on {n:,} rows" + (
            f" (the {n + holdout:,} prepared rows minus the {holdout:,} held out of the release as the attacks' "
            "control group)" if holdout else "") + " by"
        lines.append(f"{scored} {self.folds}-fold cross-validation (folds shuffled with seed {self.cv_seed}): every "
                     "person is scored by a model that did not see them.")
        return tuple(lines)

    @classmethod
    def paper(cls, kind: ProgramKind = "targeting", **overrides) -> ProgramConfig:
        """The authors' settings: 5 folds, ``random_state=0``, ``Ridge()``/default logistic, q = 0.29, per-fold rule."""
        base: dict[str, Any] = dict(kind=kind, quantile=0.29, folds=5, cv_seed=0, ridge_alpha=1.0, logistic_c=1.0,
                    paper_faithful=True, population=PAPER_POPULATION)
        base.update(overrides)
        return cls(**base)


@dataclass(frozen=True, eq=False)
class ProgramResult:
    """Effectiveness of one program on one feature matrix.

    ``metrics`` maps metric names (see :data:`METRICS`) to floats; ``headline_metric`` names the one to plot
    first. ``notes`` carries caveats (e.g. a model that did not converge). ``decisions`` holds each person's
    out-of-fold decision (True = selected: targeted, approved, predicted positive; None for regression), so that
    two results on the same rows can be compared decision by decision (:func:`decision_agreement`).
    ``baselines`` maps each trivial rule at the same setting (:func:`trivial_baselines`) to its metrics.
    """

    kind: ProgramKind
    metrics: dict[str, float]
    headline_metric: str
    n: int
    folds: int
    paper_faithful: bool = False
    notes: tuple[str, ...] = field(default=())
    decisions: np.ndarray | None = None
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def headline(self) -> float:
        return self.metrics[self.headline_metric]

    def beaten_by(self, metric: str | None = None) -> list[str]:
        """Trivial baselines at least as good as this result on ``metric`` (default: the headline).

        A non-empty list means the program is no better than a rule that needs no data at all (target nobody,
        approve everyone, …): the UI flags it wherever the result is shown.

        >>> r = ProgramResult("targeting", {"accuracy": 0.6}, "accuracy", 10, 5,
        ...                   baselines={"target nobody": {"accuracy": 0.71}, "target everybody": {"accuracy": 0.29}})
        >>> r.beaten_by()
        ['target nobody']
        """
        name = self.headline_metric if metric is None else metric
        return beaten_by(self.metrics.get(name, math.nan), self.baselines, name)


def beaten_by(value: float, baselines: Mapping[str, Mapping[str, float]], metric: str) -> list[str]:
    """Names of the baselines whose ``metric`` is at least as good as ``value`` (direction from :data:`METRICS`),
    the best of them first (a page that names one names the strongest rule that uses no data).

    >>> beaten_by(-5.0, {"approve all": {"profit": -1.0}, "approve none": {"profit": -9.0}}, "profit")
    ['approve all']
    >>> beaten_by(-9.0, {"approve all": {"profit": -9.0}, "approve none": {"profit": -4.0}}, "profit")
    ['approve none', 'approve all']

    Values that differ by floating-point rounding only (:data:`~engine.evaluation.metrics.ROUNDING_NOISE`, e.g. a
    mean of five equal profits against that profit) tie, and a tie is no better:

    >>> beaten_by(15502106.789999997, {"approve everyone": {"profit": 15502106.79}}, "profit")
    ['approve everyone']
    """
    v = float(value)
    if not math.isfinite(v):
        return []
    up = higher_is_better(metric)
    out = []
    for name, metrics in baselines.items():
        b = metrics.get(metric)
        if b is None or not math.isfinite(float(b)):
            continue
        slack = ROUNDING_NOISE * max(abs(float(b)), abs(v))
        if (up and float(b) >= v - slack) or (not up and float(b) <= v + slack):
            out.append(name)
    scores = {name: float(baselines[name][metric]) for name in out}
    return sorted(out, key=lambda name: -scores[name] if up else scores[name])  # stable: ties keep their order


# --------------------------------------------------------------------------------------------------------------
# cross-validation folds


@functools.lru_cache(maxsize=64)
def _fold_tests(n: int, folds: int, seed: int) -> tuple[np.ndarray, ...]:
    """Sorted test indices of ``KFold(folds, shuffle=True, random_state=seed)`` on n rows (cached, read-only).

    Re-expressed without importing scikit-learn (sweep workers stay light): the rows are shuffled by
    ``RandomState(seed)`` and cut into consecutive folds, the first ``n % folds`` one row longer — scikit-learn's
    algorithm, checked against it in the tests.
    """
    order = np.random.RandomState(seed).permutation(n)
    sizes = np.full(folds, n // folds)
    sizes[: n % folds] += 1
    out = []
    start = 0
    for size in sizes:
        test = np.sort(order[start : start + size])
        test.setflags(write=False)
        out.append(test)
        start += size
    return tuple(out)


def fold_indices(n: int, config: ProgramConfig) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs of the program's K-fold split on n rows.

    Identical to ``KFold(n_splits=config.folds, shuffle=True, random_state=config.cv_seed).split(...)``.

    >>> [len(test) for _, test in fold_indices(10, ProgramConfig(folds=3))]
    [4, 3, 3]

    Raises
    ------
    InvalidParameterError
        ``config`` is not a ProgramConfig, or n is not a whole number of at least ``config.folds`` (fewer rows
        would leave a fold empty).
    """
    if not isinstance(config, ProgramConfig):
        raise InvalidParameterError(f"config must be a ProgramConfig; got {type(config).__name__}")
    n = check_integer("n", n, max(2, config.folds), None,
                      hint=f"{config.folds}-fold cross-validation needs at least one row per fold — use fewer folds")
    tests = _fold_tests(int(n), config.folds, config.cv_seed)
    all_idx = np.arange(n)
    pairs = []
    for test in tests:
        mask = np.ones(n, dtype=bool)
        mask[test] = False
        pairs.append((all_idx[mask], test))
    return pairs


# --------------------------------------------------------------------------------------------------------------
# validation


def _check_outcome(y: object, n: int, kind: str) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise DataValidationError("the outcome must be numeric — pick a numeric target column") from None
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1 or arr.shape[0] != n:
        raise DataValidationError(
            f"the outcome must have one value per row of the features ({n}); got shape {np.asarray(y).shape}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        raise DataValidationError(
            f"the outcome has a missing or infinite value at data row {int(np.flatnonzero(bad)[0]) + 1} "
            "(counting from 1) — clean or drop it",
            row=int(np.flatnonzero(bad)[0]),
        )
    if kind in ("lending", "classification"):
        values = np.unique(arr)
        if values.size != 2:
            raise DataValidationError(
                f"the {kind} program needs a binary outcome with exactly two values; got {values.size} distinct "
                "value(s) — pick a yes/no target or use the regression program"
            )
        if kind == "lending" and not np.array_equal(values, [0.0, 1.0]):
            raise DataValidationError(
                f"the lending program needs the outcome coded 1 = low risk (repays), 0 = high risk; got values "
                f"{values.tolist()}"
            )
        return (arr == values[1]).astype(float)
    if np.ptp(arr) == 0:
        raise DataValidationError("the outcome is constant — there is nothing to predict")
    return arr



# --------------------------------------------------------------------------------------------------------------
# models


def _ridge_predict(x_train, y_train, x_test, alpha: float) -> np.ndarray:
    r"""Ridge regression with an unpenalised intercept, fitted on the training rows, predicted on the test rows.

    Closed form on centred data, :math:`w = (X_c^\top X_c + \alpha I)^{-1} X_c^\top y_c`, intercept
    :math:`\bar y - \bar x^\top w` — the same estimator and the same Cholesky solve as scikit-learn's
    ``Ridge(alpha)`` (``solver="auto"`` on dense data), without its per-call validation overhead (≈ 10× faster on a
    few thousand rows; a sweep fits it five times per cell). ``alpha = 0`` is ordinary least squares (minimum-norm
    solution via ``lstsq``, as ``LinearRegression``).
    """
    from scipy.linalg import LinAlgError, lstsq, solve

    x_mean = x_train.mean(axis=0)
    y_mean = y_train.mean()
    xc = x_train - x_mean
    yc = y_train - y_mean
    if alpha > 0:
        gram = xc.T @ xc
        gram.flat[:: gram.shape[0] + 1] += alpha
        try:
            w = solve(gram, xc.T @ yc, assume_a="pos", overwrite_a=True, check_finite=False)
        except LinAlgError:  # pragma: no cover - numerically singular despite alpha > 0
            w = lstsq(xc, yc, check_finite=False)[0]
    else:
        w = lstsq(xc, yc, check_finite=False)[0]
    return x_test @ w + (y_mean - x_mean @ w)


def _logistic_proba(x_train, y_train, x_test, c: float, notes: list[str],
                    start: LogisticFit | None = None) -> tuple[np.ndarray, LogisticFit | None]:
    """Probabilities for ``x_test`` from a fit on the training fold (started from ``start``, another fold's fit),
    and the fit (None when the fold has one class)."""
    if np.unique(y_train).size < 2:
        # One class only in this training fold: the model can only predict that class.
        return np.full(x_test.shape[0], float(y_train[0])), None
    fit = fit_logistic(x_train, y_train, c, start=start)
    if not fit.converged:
        note = f"the logistic regression did not fully converge in {MAX_STEPS} Newton steps on at least one fold"
        if note not in notes:
            notes.append(note)
    return fit.proba(x_test), fit


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for the larger label of ``y`` (scikit-learn's convention): the
    Mann–Whitney statistic, (rank sum of the positives − n₁(n₁ + 1)/2) / (n₁ n₀), tied scores sharing their mean
    rank — ``sklearn.metrics.roc_auc_score``'s value up to rounding (its trapezoids count a tie as half; the two
    differ by at most an ulp or so), without importing scikit-learn (about 1.5 s at a command's start). ``y`` holds
    two labels (the programs' 0/1 outcomes).

    >>> _auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8])), _auc(np.array([0, 1]), np.array([0.5, 0.5]))
    (0.75, 0.5)
    """
    labels = np.unique(y)
    if labels.size < 2:
        return math.nan
    positive = np.asarray(y) == labels[-1]
    order = np.argsort(score, kind="stable")
    ordered = np.asarray(score, dtype=float)[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first position of each run of equal scores
    ends = np.r_[starts[1:], ordered.size]
    ranks = np.empty(ordered.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)  # mean 1-based rank of each run
    n_pos = int(np.count_nonzero(positive))
    n_neg = positive.size - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


# --------------------------------------------------------------------------------------------------------------
# evaluation


def evaluate_program(
    x: object,
    y: object,
    config: ProgramConfig | None = None,
    *,
    extras: Mapping[str, object] | None = None,
    cancel: CancelToken | None = None,
) -> ProgramResult:
    """Score a program trained and applied on the feature matrix ``x`` (original or privatized).

    Parameters
    ----------
    x : array_like, shape (n, d)
        Features the program official receives (``X`` or ``X_priv``); used for training and prediction.
    y : array_like, shape (n,)
        True outcomes of the same rows (consumption for targeting, 1 = low risk for lending, any binary outcome
        for classification, any number for regression). Never privatized.
    config : ProgramConfig, optional
        The program and scoring rule (default: poverty targeting, pooled out-of-fold rule).
    extras : mapping of role → array, optional
        Per-row program columns; lending reads ``"loan_amount"``, ``"revenue"``, ``"interest"``.
    cancel : CancelToken, optional
        Checked before each fold's fit (a fifth of the evaluation: 0.1 s at 2,000 rows × 500 columns); a cancel
        raises :class:`~engine.errors.CancelledError`.

    Returns
    -------
    ProgramResult
        ``metrics`` (see :data:`METRICS`), ``headline_metric`` and notes.

    Raises
    ------
    InvalidParameterError
        ``x`` is not a finite numeric matrix.
    DataValidationError
        The outcome does not fit the program (wrong length, missing values, not binary for lending, ...).
    InsufficientDataError
        Fewer than two rows per fold.

    Examples
    --------
    A perfect predictor targets exactly the poorest 40 %:

    >>> x = np.arange(10.0).reshape(-1, 1)
    >>> r = evaluate_program(x, np.arange(10.0), ProgramConfig(quantile=0.4))
    >>> r.metrics["accuracy"], r.metrics["exclusion_errors"]
    (1.0, 0.0)
    """
    config = ProgramConfig() if config is None else config
    if not isinstance(config, ProgramConfig):
        raise InvalidParameterError(f"config must be a ProgramConfig; got {type(config).__name__}")
    xm = check_matrix("the feature matrix", x)
    n = xm.shape[0]
    if n < 2 * config.folds:
        raise InsufficientDataError(
            f"{config.folds}-fold cross-validation needs at least {2 * config.folds} rows; got {n} — "
            "use fewer folds or more data"
        )
    yv = _check_outcome(y, n, config.kind)
    splits = _Folds(fold_indices(n, config), cancel)
    notes: list[str] = []
    decisions = None
    baselines: dict[str, dict[str, float]] = {}
    if config.kind == "regression":
        metrics = _regression(xm, yv, config, splits)
        # The rule that needs no data: predict the mean outcome (R² = 0 on the pooled sample by definition).
        sd = float(np.std(yv))
        baselines = {"predict the mean": {"r2": 0.0, "rmse": sd, "mae": float(np.mean(np.abs(yv - yv.mean())))}}
    else:
        if config.kind == "targeting":
            metrics, decisions, truth = _targeting(xm, yv, config, splits)
        else:
            metrics, decisions, truth = _binary(xm, yv, config, splits, extras, notes)
        baselines = trivial_baselines(decisions, truth, config, extras)
        decisions.setflags(write=False)
    return ProgramResult(
        kind=config.kind,
        metrics={k: float(v) for k, v in metrics.items()},
        headline_metric=config.headline_metric,
        n=n,
        folds=config.folds,
        paper_faithful=config.paper_faithful,
        notes=tuple(notes),
        decisions=decisions,
        baselines=baselines,
    )


class _Folds(list):
    """The folds of :func:`fold_indices`, looking at a cancel token before handing out each one: the program's
    cancellation points, between its fits."""

    def __init__(self, folds: list, cancel: CancelToken | None) -> None:
        super().__init__(folds)
        self._cancel = cancel

    def __iter__(self):
        for fold in super().__iter__():
            if self._cancel is not None:
                self._cancel.raise_if_cancelled("the program's evaluation")
            yield fold


def _targeting(x, y, config: ProgramConfig, splits) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    q = config.quantile
    n = x.shape[0]
    if config.paper_faithful:
        per_fold = []
        totals = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
        selected = np.zeros(n, dtype=bool)
        eligible = np.zeros(n, dtype=bool)
        for train, test in splits:
            pred = _ridge_predict(x[train], y[train], x[test], config.ridge_alpha)
            selected[test] = at_or_below_quantile(pred, q)
            eligible[test] = at_or_below_quantile(y[test], q)
            counts = confusion_counts(selected[test], eligible[test])
            per_fold.append(confusion_rates(counts))
            for key in totals:
                totals[key] += counts[key]
        metrics = {key: float(np.mean([f[key] for f in per_fold])) for key in per_fold[0]}
        counts = totals
    else:
        pred = np.empty(n)
        for train, test in splits:
            pred[test] = _ridge_predict(x[train], y[train], x[test], config.ridge_alpha)
        selected = at_or_below_quantile(pred, q)
        eligible = at_or_below_quantile(y, q)
        counts = confusion_counts(selected, eligible)
        metrics = confusion_rates(counts)
    metrics.update(_targeting_counts(counts, n, config))
    return metrics, selected, eligible


def _targeting_counts(counts: Mapping[str, float], n: int, config: ProgramConfig) -> dict[str, float]:
    """Exclusion and inclusion errors in the sample, as rates in the social-protection sense, and scaled."""
    population = float(n) if config.population is None else float(config.population)
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        "exclusion_errors": fn,
        "inclusion_errors": fp,
        # Social-protection usage: exclusion error rate = share of the eligible left out; inclusion error rate =
        # share of the beneficiaries who are not eligible.
        "exclusion_rate": _ratio(fn, tp + fn),
        "inclusion_rate": _ratio(fp, tp + fp),
        "exclusion_errors_population": fn / n * population,
        "inclusion_errors_population": fp / n * population,
    }


def _regression(x, y, config: ProgramConfig, splits) -> dict[str, float]:
    n = x.shape[0]
    pred = np.empty(n)
    per_fold_r2 = []
    for train, test in splits:
        pred[test] = _ridge_predict(x[train], y[train], x[test], config.ridge_alpha)
        sst = float(np.sum((y[test] - y[test].mean()) ** 2))
        per_fold_r2.append(1.0 - float(np.sum((y[test] - pred[test]) ** 2)) / sst if sst > 0 else math.nan)
    resid = y - pred
    if config.paper_faithful:
        r2 = float(np.nanmean(per_fold_r2))
    else:
        r2 = 1.0 - float(np.sum(resid**2)) / float(np.sum((y - y.mean()) ** 2))
    return {"r2": r2, "rmse": float(np.sqrt(np.mean(resid**2))), "mae": float(np.mean(np.abs(resid)))}


def select_top_share(score: np.ndarray, share: float) -> np.ndarray:
    """Select the ``share`` of rows with the highest scores (every row tied with the last one selected is selected).

    >>> select_top_share(np.array([0.1, 0.9, 0.5, 0.7]), 0.5).tolist()
    [False, True, False, True]
    """
    v = np.asarray(score, dtype=float)
    k = max(1, math.ceil(float(share) * v.size - 1e-9))
    cut = np.partition(v, v.size - k)[v.size - k]
    return v >= cut


def _binary_decisions(proba: np.ndarray, config: ProgramConfig) -> np.ndarray:
    if config.approval_rule == "top_share":
        return select_top_share(proba, config.approve_share)
    if config.paper_faithful:
        # scikit-learn's predict(): positive class when the decision function is > 0, i.e. probability > 1/2.
        return proba > config.approval_threshold
    return proba >= config.approval_threshold


def _binary(x, y, config: ProgramConfig, splits, extras, notes: list[str]
            ) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    n = x.shape[0]
    proba = np.empty(n)
    fit = None
    for train, test in splits:
        # Each fold's fit starts from the previous fold's (the folds share most rows: 3 Newton steps instead of 6).
        proba[test], fit = _logistic_proba(x[train], y[train], x[test], config.logistic_c, notes, fit)
    selected = _binary_decisions(proba, config)
    truth = y.astype(bool)
    counts = confusion_counts(selected, truth)
    if config.paper_faithful:
        per_fold = [confusion_rates(confusion_counts(selected[test], truth[test])) for _, test in splits]
        metrics = {key: float(np.nanmean([f[key] for f in per_fold])) for key in per_fold[0]}
        metrics["auc"] = float(np.nanmean([_auc(y[test], proba[test]) for _, test in splits]))
    else:
        metrics = confusion_rates(counts)
        metrics["auc"] = _auc(y, proba)
    if config.kind == "lending":
        metrics.update(_lending_metrics(selected, truth, config, extras))
    return metrics, selected, truth


def _lending_metrics(selected: np.ndarray, truth: np.ndarray, config: ProgramConfig, extras) -> dict[str, float]:
    n = selected.size
    loan, revenue, interest = lending_amounts(n, config, extras)
    both = {c: lending_profit(selected, truth, loan, revenue, interest, convention=c)  # type: ignore[arg-type]
            for c in PROFIT_CONVENTIONS}
    profit = both[config.profit_convention]
    return {
        "profit": float(profit.sum()),
        "profit_paper": float(both["paper"].sum()),
        "profit_ordinary": float(both["ordinary"].sum()),
        "profit_per_applicant": float(profit.mean()),
        "approval_rate": float(selected.mean()),
        "defaults": float(np.count_nonzero(selected & ~truth)),
    }


#: Names of the trivial rules, per program kind: (all selected, none selected, random at the same share).
BASELINE_NAMES: dict[str, tuple[str, str, str]] = {
    "targeting": ("target everybody", "target nobody", "random targeting at the same share"),
    "lending": ("approve everyone", "approve no one", "random approval at the same rate"),
    "classification": ("predict positive for all", "predict negative for all", "random at the same positive rate"),
}


def trivial_baselines(selected: np.ndarray, truth: np.ndarray, config: ProgramConfig,
                      extras: Mapping[str, object] | None = None) -> dict[str, dict[str, float]]:
    r"""Metrics of the rules that use no data, at the same setting as the program's decisions ``selected``.

    Select everybody, select nobody, and select at random the same share s as the program (its expected metrics,
    exact: a random selection of share s has expected confusion counts tp = s·P, fp = s·N, fn = (1 − s)·P,
    tn = (1 − s)·N with P eligible and N ineligible people; profit is linear in the decisions, so the random
    rule's expected profit is s·π(all) + (1 − s)·π(none)). The headline of a program that does not beat all of
    them is no better than a rule that needs no data.

    >>> b = trivial_baselines(np.array([1, 0, 0, 0], bool), np.array([1, 1, 0, 0], bool), ProgramConfig())
    >>> b["target nobody"]["accuracy"], b["target everybody"]["accuracy"], b["random targeting at the same share"]["accuracy"]
    (0.5, 0.5, 0.5)
    """
    sel = np.asarray(selected, dtype=bool)
    tru = np.asarray(truth, dtype=bool)
    n = tru.size
    names = BASELINE_NAMES.get(config.kind)
    if names is None or n == 0:
        return {}
    positives = float(np.count_nonzero(tru))
    negatives = float(n - positives)
    share = float(sel.mean())
    rules = {
        names[0]: {"tp": positives, "fp": negatives, "tn": 0.0, "fn": 0.0},
        names[1]: {"tp": 0.0, "fp": 0.0, "tn": negatives, "fn": positives},
        names[2]: {"tp": share * positives, "fp": share * negatives, "tn": (1 - share) * negatives,
                   "fn": (1 - share) * positives},
    }
    out: dict[str, dict[str, float]] = {}
    for name, counts in rules.items():
        metrics = confusion_rates(counts)  # type: ignore[arg-type]
        if config.kind == "targeting":
            metrics.update(_targeting_counts(counts, n, config))
        if config.kind == "lending":
            metrics["defaults"] = counts["fp"]
        out[name] = {k: float(v) for k, v in metrics.items()}
    if config.kind == "lending":
        every = _lending_metrics(np.ones(n, dtype=bool), tru, config, extras)
        none = _lending_metrics(np.zeros(n, dtype=bool), tru, config, extras)
        out[names[0]].update(every)
        out[names[1]].update(none)
        out[names[2]].update({
            key: share * every[key] + (1 - share) * none[key]
            for key in ("profit", "profit_paper", "profit_ordinary", "profit_per_applicant")
        })
        out[names[2]]["approval_rate"] = share
    return out


def decision_agreement(result: ProgramResult, reference: ProgramResult) -> float:
    r"""Share of people whose decision under ``result`` equals their decision under ``reference``.

    With ``reference`` the non-private program on the same rows this is the **decision agreement** of a release: the
    share of people, on these data, whose decision on the release is the one the non-private program makes. It is
    not Theorem 1's γ, which is a worst case — every data set, each decision right with probability ≥ γ — so an
    average agreement on one data set can exceed the γ Theorem 1 allows (compare it with :func:`no_data_agreement`,
    what rules that use no data already reach). NaN when either has no decisions (regression).

    >>> a = ProgramResult("targeting", {}, "accuracy", 4, 2, decisions=np.array([1, 1, 0, 0], bool))
    >>> b = ProgramResult("targeting", {}, "accuracy", 4, 2, decisions=np.array([1, 0, 0, 0], bool))
    >>> decision_agreement(a, b)
    0.75
    """
    if result.decisions is None or reference.decisions is None:
        return math.nan
    a, b = np.asarray(result.decisions, dtype=bool), np.asarray(reference.decisions, dtype=bool)
    if a.shape != b.shape:
        raise InvalidParameterError(
            f"decisions of {a.size} and {b.size} people cannot be compared — score both on the same rows"
        )
    return float(np.mean(a == b)) if a.size else math.nan


def no_data_agreement(reference: ProgramResult) -> dict[str, float]:
    r"""The decision agreement that each rule using no data reaches with ``reference`` (the non-private program).

    With q the share the reference selects: selecting everybody agrees with it for a share q of the people, selecting
    nobody for 1 − q, and selecting at random the same share q agrees in expectation for
    :math:`q^2 + (1 - q)^2 = 1 - 2q(1 - q)`. An agreement target that one of them meets says nothing about the data.
    Empty when the reference has no decisions (regression) or its kind has no such rules.

    >>> ref = ProgramResult("targeting", {}, "accuracy", 4, 2, decisions=np.array([1, 0, 0, 0], bool))
    >>> no_data_agreement(ref)
    {'target everybody': 0.25, 'target nobody': 0.75, 'random targeting at the same share': 0.625}
    """
    names = BASELINE_NAMES.get(reference.kind)
    if names is None or reference.decisions is None:
        return {}
    decisions = np.asarray(reference.decisions, dtype=bool)
    if decisions.size == 0:
        return {}
    q = float(decisions.mean())
    return {names[0]: q, names[1]: 1.0 - q, names[2]: q * q + (1.0 - q) * (1.0 - q)}


def relative_to(result: ProgramResult, baseline: ProgramResult) -> dict[str, float]:
    r"""Changes of ``result`` against a ``baseline`` (normally the non-private model on the same rows).

    Returns ``<metric>_change`` = result − baseline for every metric both report (so ``profit_change`` is in
    money), and for lending ``relative_profit`` = π / π₀ and ``profit_change_relative`` = (π − π₀)/|π₀| (the
    paper's "relative profit": DP "reduces profits by 430 %" means profit_change_relative = −4.3); for targeting
    ``extra_exclusion_errors_population`` (= ``exclusion_errors_population_change``).

    >>> base = ProgramResult("lending", {"profit": 100.0}, "profit", 10, 5)
    >>> rel = relative_to(ProgramResult("lending", {"profit": 88.0}, "profit", 10, 5), base)
    >>> rel["profit_change"], rel["profit_change_relative"], rel["relative_profit"]
    (-12.0, -0.12, 0.88)
    """
    if result.kind != baseline.kind:
        raise InvalidParameterError(
            f"cannot compare a {result.kind} result with a {baseline.kind} baseline — use the same program"
        )
    out = {
        f"{name}_change": float(value) - float(baseline.metrics[name])
        for name, value in result.metrics.items()
        if name in baseline.metrics
    }
    if "profit" in result.metrics and "profit" in baseline.metrics:
        p, p0 = result.metrics["profit"], baseline.metrics["profit"]
        out["relative_profit"] = p / p0 if p0 != 0 else math.nan
        out["profit_change_relative"] = (p - p0) / abs(p0) if p0 != 0 else math.nan
    if "exclusion_errors_population" in result.metrics and "exclusion_errors_population" in baseline.metrics:
        out["extra_exclusion_errors_population"] = (
            result.metrics["exclusion_errors_population"] - baseline.metrics["exclusion_errors_population"]
        )
    return out
