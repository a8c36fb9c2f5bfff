r"""Accuracy of sum mechanisms: error against the cell total, Monte Carlo simulation of one total, and the
privacy–accuracy frontier (all ours: the paper's empirical section is missing from the seed; digest §7.2).

* :func:`accuracy_curves` — planning SD, relative SD and (1−β) half-width as functions of the total q.
  Transformation mechanisms' SD grows with q (log: constant *relative* SD); additive noise is flat in absolute
  terms, so its relative error falls with q.
* :func:`simulate_total` — run a mechanism many times on one total: MC mean against the truth (unbiasedness),
  MC variance against the formula, interval coverage, the median-unbiased alternative.
* :func:`privacy_accuracy_frontier` — for a range of accuracy targets at a planning total, each mechanism is
  calibrated (see :mod:`engine.per_record.calibration`) and the ρ of chosen record sizes (e.g. the data's p99 and
  maximum) is reported: the spec §5.4 comparison as a curve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.errors import EngineError, InfeasibleTargetError, InvalidParameterError
from engine.per_record.base import SumMechanism, check_beta
from engine.per_record.calibration import calibrate_accuracy, check_mechanism
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.validation import check_array_interval, check_choice, check_integer, check_interval

#: Provenance shown by the UI next to accuracy curves, simulations and frontiers.
SOURCE = "ours: the paper's empirical section is missing; planning formulas from the paper, Monte Carlo ours"


def _name(m: SumMechanism) -> str:
    return m.describe().split(":")[0]


def accuracy_curves(mechanisms: Sequence[SumMechanism], q, *, beta: float = 0.05) -> pd.DataFrame:
    """Long table: ``mechanism``, ``kind``, ``q``, ``sd`` (NaN if infinite/undefined), ``relative_sd``,
    ``half_width``, ``relative_half_width`` (relative columns NaN at q = 0).

    These are planning values at hypothetical totals, not at the confidential ones.

    Examples
    --------
    >>> from engine.per_record.transformation import LogTransformation
    >>> t = accuracy_curves([LogTransformation(a=1.0, sigma=0.1)], [99.0, 9999.0])
    >>> t["relative_sd"].round(6).tolist()
    [0.101263, 0.100261]
    """
    b = check_beta(beta)
    qs = np.asarray(q, dtype=float).ravel()
    if qs.size == 0 or np.isnan(qs).any() or (qs < 0).any():
        raise InvalidParameterError("q must be a non-empty list of totals ≥ 0")
    frames = []
    for m in mechanisms:
        try:
            sd = np.asarray(m.sd(qs), dtype=float).reshape(qs.shape)
        except EngineError:
            sd = np.full(qs.shape, np.nan)
        hw = np.asarray(m.half_width(qs, b), dtype=float).reshape(qs.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel_sd = np.where(qs > 0, sd / qs, np.nan)
            rel_hw = np.where(qs > 0, hw / qs, np.nan)
        frames.append(pd.DataFrame({"mechanism": _name(m), "kind": m.KIND, "q": qs, "sd": sd, "relative_sd": rel_sd,
                                    "half_width": hw, "relative_half_width": rel_hw}))
    if not frames:
        raise InvalidParameterError("give at least one mechanism")
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class TotalSimulation:
    """Monte Carlo of one mechanism on one total.

    Attributes
    ----------
    mechanism : SumMechanism
    q : float
        The true total used.
    beta : float
    draws : DataFrame
        ``output``, ``estimate``, ``estimate_median``, ``low``, ``high``, ``covered`` per draw.
    summary : dict
        ``n``, ``mean``, ``se`` (sample SD/√n), ``bias``, ``bias_in_se``, ``mc_variance``, ``variance``
        (formula; None when infinite), ``median_of_median_estimates``, ``share_median_below_q``, ``coverage``,
        ``coverage_se``, ``nominal_coverage``.
    notes : tuple of str
    """

    mechanism: SumMechanism
    q: float
    beta: float
    draws: pd.DataFrame
    summary: dict[str, Any]
    notes: tuple[str, ...] = field(default=())


def simulate_total(
    mechanism: SumMechanism, q: float, n_draws: int = 10_000, *, rng: np.random.Generator, beta: float = 0.05
) -> TotalSimulation:
    """Run ``mechanism`` ``n_draws`` times on the total ``q`` and compare with the formulas.

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> sim = simulate_total(GaussianSum(sigma=2.0), 100.0, 1000, rng=np.random.default_rng(0))
    >>> abs(sim.summary["bias_in_se"]) < 4, sim.summary["variance"]
    (True, 4.0)
    """
    qq = check_interval("q", q, 0, None)
    n = check_integer("n_draws", n_draws, 2, 10_000_000)
    b = check_beta(beta)
    notes: list[str] = []
    out = np.asarray(mechanism.sample(np.full(n, qq), rng=rng), dtype=float)
    median = np.asarray(mechanism.estimate_median(out), dtype=float)
    try:
        est = np.asarray(mechanism.estimate(out), dtype=float)
    except EngineError as exc:
        est = median
        notes.append(f"No mean-unbiased estimate ({exc}); 'estimate' is the median-unbiased one.")
    try:
        variance: float | None = float(mechanism.variance(qq))
    except EngineError as exc:
        variance = None
        notes.append(f"No finite variance ({exc}).")
    if mechanism.FAMILY == "additive" and mechanism.KIND in ("generalized-gaussian", "epl1", "epl"):
        notes.append("Heavy-tailed noise: the Monte Carlo variance converges slowly; trust the formula.")
    lo, hi = mechanism.interval(out, b)
    covered = (np.asarray(lo) <= qq) & (qq <= np.asarray(hi))
    mean = float(est.mean())
    se = float(est.std(ddof=1) / math.sqrt(n))
    cov = float(covered.mean())
    summary = {
        "n": n,
        "mean": mean,
        "se": se,
        "bias": mean - qq,
        "bias_in_se": (mean - qq) / se if se > 0 else 0.0,
        "mc_variance": float(est.var(ddof=1)),
        "variance": variance,
        "median_of_median_estimates": float(np.median(median)),
        "share_median_below_q": float(np.mean(median <= qq)),
        "coverage": cov,
        "coverage_se": math.sqrt((1 - b) * b / n),
        "nominal_coverage": 1 - b,
    }
    draws = pd.DataFrame({"output": out, "estimate": est, "estimate_median": median, "low": lo, "high": hi,
                          "covered": covered})
    return TotalSimulation(mechanism=mechanism, q=qq, beta=b, draws=draws, summary=summary, notes=tuple(notes))


def privacy_accuracy_frontier(
    mechanisms: Sequence[SumMechanism],
    targets,
    q_ref: float,
    record_values,
    *,
    by: Literal["sd", "relative_sd", "half_width"] = "relative_sd",
    beta: float = 0.05,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> pd.DataFrame:
    """ρ of given record sizes when each mechanism is calibrated to each accuracy target at ``q_ref``.

    Returns a long table: ``mechanism``, ``kind``, ``target``, ``noise`` (the calibrated parameter),
    ``record_value``, ``rho`` and ``status`` (``"ok"``, or why the row is NaN). Every argument is validated up
    front, so invalid ``by``, ``q_ref``, ``beta``, ``targets`` or ``record_values`` raise. Only a target a
    mechanism genuinely cannot meet gives NaN rows, labelled ``"infeasible: …"`` in ``status``: an SD-based
    target for a mechanism whose noise has no finite variance (e.g. EPL p = 1 with d ≤ 3), or a target no noise
    parameter reaches (:class:`~engine.errors.InfeasibleTargetError`).

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> t = privacy_accuracy_frontier([GaussianSum()], [0.01], 1e6, [1e6])
    >>> float(t["rho"].iloc[0]), t["status"].iloc[0]
    (5000.0, 'ok')
    """
    check_choice("by", by, ["sd", "relative_sd", "half_width"])
    q = check_interval("q_ref", q_ref, 0, None, closed="neither" if by == "relative_sd" else "both",
                       hint="a planning total, not the confidential one")
    b = check_beta(beta)
    ts = check_array_interval("targets", targets, 0, None, closed="neither", hint="accuracy targets").ravel()
    xs = check_array_interval("record_values", record_values, 0, None, hint="record values are ≥ 0").ravel()
    if ts.size == 0:
        raise InvalidParameterError("targets must be a non-empty list of positive numbers")
    if xs.size == 0:
        raise InvalidParameterError("record_values must be a non-empty list of values ≥ 0")
    for i, m in enumerate(mechanisms):
        check_mechanism(m, f"mechanisms[{i}]")
    rows = []
    total = len(mechanisms) * ts.size
    done = 0
    for m in mechanisms:
        no_sd = None
        if by != "half_width":
            try:  # an SD target needs a finite variance; the mechanism says so (q is valid here)
                m.sd(q)
            except EngineError as exc:
                no_sd = f"infeasible: no finite standard deviation ({exc})"
        for t in ts:
            if cancel is not None:
                cancel.raise_if_cancelled("the privacy–accuracy frontier")
            status = no_sd
            if status is None:
                try:
                    tuned = calibrate_accuracy(m, float(t), q, by=by, beta=b)
                    noise, rho, status = tuned.noise, np.asarray(tuned.policy_rho(xs), dtype=float), "ok"
                except InfeasibleTargetError as exc:
                    status = f"infeasible: {exc}"
            if status != "ok":
                noise, rho = float("nan"), np.full(xs.shape, np.nan)
            for x, r in zip(xs, rho, strict=True):
                rows.append({"mechanism": _name(m).split(" (")[0], "kind": m.KIND, "target": float(t),
                             "noise": noise, "record_value": float(x), "rho": float(r), "status": status})
            done += 1
            if progress is not None:
                progress(Progress(done, total, f"calibrated {m.LABEL} to {t:g}"))
    return pd.DataFrame(rows)
