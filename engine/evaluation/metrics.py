r"""Program metrics: what each metric means, which direction is better, and the confusion-matrix helpers.

:data:`METRICS` describes every metric :func:`engine.evaluation.programs.evaluate_program` can report
(:class:`MetricInfo`: label, direction, description); :func:`higher_is_better` reads a metric's direction (never
guessed). :func:`confusion_counts`, :func:`confusion_rates` and :func:`at_or_below_quantile` are the pure helpers
the programs score decisions with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from engine.errors import InvalidParameterError
from engine.validation import (
    check_array_interval,
    check_interval,
)

__all__ = [
    "ATTACK_CELL_PREFIX",
    "BASELINE_PREFIX",
    "METRICS",
    "ROUNDING_NOISE",
    "MetricInfo",
    "at_or_below_quantile",
    "attack_cell_column",
    "attack_cell_columns",
    "attack_cell_name",
    "baseline_column",
    "baseline_rules",
    "confusion_counts",
    "confusion_rates",
    "higher_is_better",
    "resolved_difference",
]


@dataclass(frozen=True)
class MetricInfo:
    """How to read a metric: label for the UI and whether a larger value is better for the program."""

    label: str
    higher_is_better: bool
    description: str


#: Every metric :func:`evaluate_program` can report.
METRICS: dict[str, MetricInfo] = {
    "accuracy": MetricInfo("Accuracy", True, "share of people whose decision matches the true status"),
    "tpr": MetricInfo("True positive rate", True, "share of the eligible who are selected (recall)"),
    "fpr": MetricInfo("False positive rate", False, "share of the ineligible who are selected"),
    "tnr": MetricInfo("True negative rate", True, "share of the ineligible who are not selected"),
    "fnr": MetricInfo("False negative rate", False, "share of the eligible who are not selected"),
    "precision": MetricInfo("Precision", True, "share of the selected who are eligible"),
    "exclusion_errors": MetricInfo(
        "Exclusion errors (sample)", False, "truly poor but not targeted, people in the sample"
    ),
    "inclusion_errors": MetricInfo(
        "Inclusion errors (sample)", False, "targeted but not poor, people in the sample"
    ),
    "exclusion_rate": MetricInfo(
        "Exclusion error rate", False, "share of the truly poor who are not targeted (= false negative rate)"
    ),
    "inclusion_rate": MetricInfo(
        "Inclusion error rate", False, "share of the targeted who are not poor (= 1 − precision, 'leakage')"
    ),
    "exclusion_errors_population": MetricInfo(
        "Exclusion errors (population)", False, "exclusion errors in the sample / n × the population the sample stands for"
    ),
    "inclusion_errors_population": MetricInfo(
        "Inclusion errors (population)", False, "inclusion errors in the sample / n × the population the sample stands for"
    ),
    "decision_agreement": MetricInfo(
        "Decision agreement", True,
        "share of people whose decision on the release equals the non-private program's decision, on these data "
        "(an average over people; Theorem 1's γ is a worst case over data sets, a different statement)",
    ),
    "profit": MetricInfo("Profit", True, "total lender profit over all applicants (out-of-fold decisions), in the "
                         "program's profit convention"),
    "profit_paper": MetricInfo("Profit (paper's convention)", True, "total profit counting a rejected applicant who "
                               "would have repaid as −revenue (the targeted-DP paper's convention)"),
    "profit_ordinary": MetricInfo("Profit (ordinary P&L)", True, "total profit of the loans made (a rejected "
                                  "applicant counts 0)"),
    "profit_per_applicant": MetricInfo("Profit per applicant", True, "profit / n"),
    "approval_rate": MetricInfo("Approval rate", True, "share of applicants offered a loan"),
    "defaults": MetricInfo("Defaults", False, "high-risk applicants who were approved"),
    "auc": MetricInfo("AUC", True, "area under the ROC curve of the predicted probabilities"),
    "clustering_accuracy": MetricInfo(
        "Clustering accuracy", True,
        "k-means on the release (one cluster per outcome class), best one-to-one label matching against the outcome "
        "(the secure-release paper's program; JL sweeps of a classification program)",
    ),
    "r2": MetricInfo("R²", True, "coefficient of determination of the out-of-fold predictions"),
    "rmse": MetricInfo("RMSE", False, "root mean squared error of the out-of-fold predictions"),
    "mae": MetricInfo("MAE", False, "mean absolute error of the out-of-fold predictions"),
    # relative to the non-private model on the same rows (relative_to)
    "relative_profit": MetricInfo("Relative profit", True, "profit / non-private profit"),
    "profit_change_relative": MetricInfo(
        "Profit change (relative)", True, "(profit − non-private profit) / |non-private profit|"
    ),
    "extra_exclusion_errors_population": MetricInfo(
        "Extra exclusion errors (population)", False, "exclusion errors in the population beyond the non-private model's"
    ),
}


# --------------------------------------------------------------------------------------------------------------
# The flat table's column names (a sweep's table, the CSV written from it): the one place they are made and read.
# Everything else holds the typed results (engine.analysis.Metrics) and flattens them only to write a table.

#: Prefix of the trivial baselines' columns: ``baseline:<rule>:<metric>``.
BASELINE_PREFIX = "baseline:"
#: Prefix of the per-(adversary, secret column) attribute-inference columns: ``attribute_inference_cell:<k>:<j>``.
ATTACK_CELL_PREFIX = "attribute_inference_cell:"


def baseline_column(rule: str, metric: str) -> str:
    """Column of a trivial rule's metric.

    >>> baseline_column("target nobody", "accuracy")
    'baseline:target nobody:accuracy'
    """
    return f"{BASELINE_PREFIX}{rule}:{metric}"


def baseline_rules(columns: object, metric: str) -> list[str]:
    """The rules whose ``metric`` a table's ``columns`` hold (in column order).

    >>> baseline_rules(["accuracy", "baseline:target nobody:accuracy", "baseline:a:b:accuracy"], "accuracy")
    ['target nobody', 'a:b']
    """
    suffix = ":" + metric
    return [str(c)[len(BASELINE_PREFIX):-len(suffix)] for c in columns  # type: ignore[attr-defined]
            if isinstance(c, str) and c.startswith(BASELINE_PREFIX) and c.endswith(suffix)]


def attack_cell_column(knowledge: str, secret: object) -> str:
    """Column of one attribute-inference cell's relative protection in one run.

    >>> attack_cell_column("half", 3)
    'attribute_inference_cell:half:3'
    """
    return f"{ATTACK_CELL_PREFIX}{knowledge}:{secret}"


def attack_cell_columns(columns: object) -> list[str]:
    """The attribute-inference cell columns among ``columns`` (in order)."""
    return [str(c) for c in columns if isinstance(c, str) and c.startswith(ATTACK_CELL_PREFIX)]  # type: ignore[attr-defined]


def attack_cell_name(column: str) -> str:
    """``"<knowledge>:<secret>"`` of a cell column.

    >>> attack_cell_name("attribute_inference_cell:half:3")
    'half:3'
    """
    return column[len(ATTACK_CELL_PREFIX):]


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` (or of its ``<metric>_change``) is better for the program.

    Program metrics take their direction from :data:`METRICS` (``<metric>_change`` from its metric), the
    protection columns (``protection_*``) are higher-is-better. Any other name raises:
    a direction is never guessed (a lower-is-better column read the wrong way round would flip a Pareto frontier).

    >>> higher_is_better("accuracy"), higher_is_better("exclusion_errors_change"), higher_is_better("fpr")
    (True, False, False)
    >>> higher_is_better("protection_singling_out"), higher_is_better("baseline:approve no one:profit")
    (True, True)
    """
    if str(metric).startswith(BASELINE_PREFIX):  # a trivial rule's metric: baseline:<rule>:<metric>
        metric = str(metric).rsplit(":", 1)[-1]
    name = metric[: -len("_change")] if metric.endswith("_change") and metric not in METRICS else metric
    info = METRICS.get(name)
    if info is not None:
        return info.higher_is_better
    if str(name).startswith("protection_"):
        return True
    raise InvalidParameterError(
        f"metric {metric!r} has no known direction (higher or lower is better) — choose one of "
        f"{sorted(METRICS)} or a protection column"
    )


#: Differences below this share of the values compared are floating-point rounding, not a change (a mean of five
#: equal profits of 15.5 million differs from that profit by one unit in the last place, 1.86e-09).
ROUNDING_NOISE = 1e-12


def resolved_difference(value: float, reference: float, half_width: float = math.nan) -> float:
    """``value − reference`` rounded to what the interval of ``value`` can resolve (issue 34: a difference of
    −1.86e-09 was shown as a change).

    With a 95 % interval of half-width h > 0 the difference is rounded to the decimal place of h's leading digit
    (10^⌊log10 h⌋): digits below it are noise the interval cannot resolve, and a difference that rounds to 0 is no
    change. Without an interval (one release, or releases that all agree: h = 0 or NaN) only floating-point
    rounding is removed: a difference below :data:`ROUNDING_NOISE` × max(|value|, |reference|) is 0. NaN stays NaN.

    >>> resolved_difference(0.8347, 0.8512, 0.0123)
    -0.02
    >>> resolved_difference(15502106.789999992, 15502106.79, 0.0)
    0.0
    >>> resolved_difference(-95740.0, 69835.0)
    -165575.0
    """
    difference = float(value) - float(reference)
    if not math.isfinite(difference):
        return difference
    h = abs(float(half_width))
    if math.isfinite(h) and h > 0:
        step = 10.0 ** math.floor(math.log10(h))
        return float(round(difference / step) * step) + 0.0  # + 0.0: never −0
    if abs(difference) <= ROUNDING_NOISE * max(abs(float(value)), abs(float(reference))):
        return 0.0
    return difference


# --------------------------------------------------------------------------------------------------------------
# confusion-matrix helpers (pure)


def confusion_counts(selected: np.ndarray, eligible: np.ndarray) -> dict[str, int]:
    """Counts tp, fp, tn, fn of a selection against the truth (positive = eligible/selected).

    >>> confusion_counts(np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool))
    {'tp': 1, 'fp': 1, 'tn': 1, 'fn': 1}
    """
    s = np.asarray(selected, dtype=bool)
    e = np.asarray(eligible, dtype=bool)
    return {
        "tp": int(np.count_nonzero(s & e)),
        "fp": int(np.count_nonzero(s & ~e)),
        "tn": int(np.count_nonzero(~s & ~e)),
        "fn": int(np.count_nonzero(~s & e)),
    }


def _ratio(a: float, b: float) -> float:
    return float(a) / float(b) if b > 0 else math.nan


def confusion_rates(counts: Mapping[str, int]) -> dict[str, float]:
    """Accuracy, TPR, FPR, TNR, FNR and precision from confusion counts (NaN where a denominator is 0).

    >>> confusion_rates({"tp": 3, "fp": 1, "tn": 5, "fn": 1})["accuracy"]
    0.8
    """
    tp, fp, tn, fn = counts["tp"], counts["fp"], counts["tn"], counts["fn"]
    return {
        "accuracy": _ratio(tp + tn, tp + fp + tn + fn),
        "tpr": _ratio(tp, tp + fn),
        "fpr": _ratio(fp, fp + tn),
        "tnr": _ratio(tn, fp + tn),
        "fnr": _ratio(fn, tp + fn),
        "precision": _ratio(tp, tp + fp),
    }


def at_or_below_quantile(values: np.ndarray, q: float) -> np.ndarray:
    """Boolean mask ``values <= np.quantile(values, q)`` (linear interpolation, as ``np.percentile(v, 100 q)``).

    >>> at_or_below_quantile(np.array([5.0, 1.0, 3.0, 2.0, 4.0]), 0.25).tolist()
    [False, True, False, True, False]

    Raises
    ------
    InvalidParameterError
        ``q`` is not a number in [0, 1], or ``values`` is empty or has a missing, infinite or non-numeric entry.
    """
    q = check_interval("q", q, 0, 1)
    v = check_array_interval("values", values, None, None, hint="predictions and outcomes must be finite numbers")
    if v.size == 0:
        raise InvalidParameterError("values must hold at least one number; got none")
    return v <= np.quantile(v, q)
