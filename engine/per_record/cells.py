r"""Releasing a column's sums over cells (e.g. industry × county) with a per-record mechanism.

Each cell's total is released once with the chosen mechanism. The cells partition the record universe, so by
parallel composition (Lemma 2.14) a record's loss is its loss in its own cell, where its per-record sensitivity
is its own value: ``loss_i = P(x_i)``. Records outside a cell contribute Δ = 0 there.

The result reports, per cell, the true sum, the raw output, the unbiased and median-unbiased estimates, the
error, the exact (1−β) interval, and two standard deviations: ``sd_estimate`` (from the output — publishable) and
``sd_true`` (the mechanism's SD at the *true* total — confidential, for evaluating the simulation only; spec
gotcha 16).

References
----------
.. [1] Finley et al., arXiv:2409.18118, Lemma 2.14 (parallel composition), Definition 4.2. Digest §7.1, §4.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.errors import EngineError, InvalidParameterError
from engine.per_record.base import SumMechanism, check_beta
from engine.per_record.losses import CONFIDENTIAL_NOTE, LossSummary, LossUnit, _resolve_unit, losses_for
from engine.per_record.losses import summarize_losses, value_column


#: Provenance shown by the UI next to per-cell releases.
SOURCE = "paper Lemma 2.14 (parallel composition) and Def. 4.2; the per-cell evaluation is ours (digest §4.3)"


@dataclass(frozen=True)
class CellRelease:
    """One simulated release of per-cell sums.

    Attributes
    ----------
    mechanism : SumMechanism
    value : str
    by : tuple of str
        Cell columns (empty: one cell, the whole column).
    beta : float
        Intervals have coverage 1 − β.
    unit : str
        Unit of the ``loss`` columns.
    cells : DataFrame
        One row per cell: the ``by`` columns, ``n_records``, ``true_sum``, ``output``, ``estimate``,
        ``estimate_median``, ``error``, ``relative_error`` (NaN for empty totals), ``low``, ``high``, ``covered``,
        ``sd_estimate``, ``sd_true``, ``max_value``, ``max_loss``.
    records : DataFrame
        One row per input record (input order): id columns, ``by`` columns, the value, ``cell`` (row of
        ``cells``), ``loss`` and ``loss_rho``.
    loss_summary : LossSummary
    notes : tuple of str
    """

    mechanism: SumMechanism
    value: str
    by: tuple[str, ...]
    beta: float
    unit: str
    cells: pd.DataFrame
    records: pd.DataFrame
    loss_summary: LossSummary
    notes: tuple[str, ...] = field(default=())

    def metrics(self) -> dict[str, Any]:
        """Accuracy over cells: RMSE, mean and median absolute relative error (cells with a positive total),
        interval coverage and mean half-width."""
        c = self.cells
        rel = c["relative_error"].abs().dropna()
        return {
            "n_cells": int(len(c)),
            "rmse": float(np.sqrt(np.mean(c["error"].to_numpy() ** 2))),
            "mean_abs_relative_error": float(rel.mean()) if len(rel) else float("nan"),
            "median_abs_relative_error": float(rel.median()) if len(rel) else float("nan"),
            "coverage": float(c["covered"].mean()),
            "mean_half_width": float(((c["high"] - c["low"]) / 2).mean()),
            "max_loss": float(c["max_loss"].max()),
            "unit": self.unit,
        }


def release_cells(
    frame: pd.DataFrame,
    value: str,
    by: Sequence[str],
    mechanism: SumMechanism,
    *,
    rng: np.random.Generator,
    beta: float = 0.05,
    unit: LossUnit = "rho",
    threshold: float | None = None,
    id_columns: Sequence[str] = (),
    top_n: int = 10,
) -> CellRelease:
    """Group ``frame`` by ``by``, release each cell's sum of ``value`` with ``mechanism``, report errors and losses.

    Missing keys in ``by`` form their own cell (no record is dropped).

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> toy = pd.DataFrame({"industry": ["a", "a", "b"], "employees": [5.0, 10.0, 20.0]})
    >>> r = release_cells(toy, "employees", ["industry"], GaussianSum(sigma=1.0), rng=np.random.default_rng(0))
    >>> r.cells["true_sum"].tolist(), r.records["loss"].tolist()
    ([15.0, 20.0], [12.5, 50.0, 200.0])
    """
    vals = value_column(frame, value)
    by = tuple(by)
    for col in (*by, *id_columns):
        if col not in frame.columns:
            raise InvalidParameterError(f"column {col!r} is not in the table; columns: {list(frame.columns)}")
    if value in by:
        raise InvalidParameterError(f"the value column {value!r} cannot also be a cell column")
    if len(frame) == 0:
        raise InvalidParameterError("the table has no rows")
    b = check_beta(beta)
    u = _resolve_unit(mechanism, unit)
    notes: list[str] = [CONFIDENTIAL_NOTE]

    if by:
        grouped = frame.reset_index(drop=True).groupby(list(by), dropna=False, observed=True, sort=True)
        cell_of = grouped.ngroup().to_numpy()
        keys = grouped.size().reset_index()[list(by)]
    else:
        cell_of = np.zeros(len(frame), dtype=np.int64)
        keys = pd.DataFrame(index=[0])
    n_cells = int(cell_of.max()) + 1
    true_sum = np.bincount(cell_of, weights=vals, minlength=n_cells)
    n_records = np.bincount(cell_of, minlength=n_cells)
    max_value = np.full(n_cells, -np.inf)
    np.maximum.at(max_value, cell_of, vals)

    output = np.asarray(mechanism.sample(true_sum, rng=rng), dtype=float).reshape(n_cells)
    median = np.asarray(mechanism.estimate_median(output), dtype=float).reshape(n_cells)
    try:
        estimate = np.asarray(mechanism.estimate(output), dtype=float).reshape(n_cells)
    except EngineError as exc:  # e.g. EPL p = 1 with d ≤ 2: no mean, report the median-unbiased estimate
        estimate = median
        notes.append(f"No mean-unbiased estimate ({exc}); 'estimate' is the median-unbiased one.")
    try:
        v_hat = np.asarray(mechanism.variance_estimate(output), dtype=float).reshape(n_cells)
        sd_estimate = np.sqrt(np.maximum(v_hat, 0.0))
        sd_true = np.sqrt(np.asarray(mechanism.variance(true_sum), dtype=float).reshape(n_cells))
    except EngineError as exc:  # infinite variance
        sd_estimate = sd_true = np.full(n_cells, np.nan)
        notes.append(f"No standard deviation ({exc}); use the intervals.")
    low, high = mechanism.interval(output, b)
    low = np.asarray(low, dtype=float).reshape(n_cells)
    high = np.asarray(high, dtype=float).reshape(n_cells)
    error = estimate - true_sum
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(true_sum > 0, error / true_sum, np.nan)

    record_loss = losses_for(mechanism, vals, u)
    max_loss = np.full(n_cells, -np.inf)
    np.maximum.at(max_loss, cell_of, record_loss)

    cells = keys.reset_index(drop=True).copy()
    cells["n_records"] = n_records
    cells["true_sum"] = true_sum
    cells["output"] = output
    cells["estimate"] = estimate
    cells["estimate_median"] = median
    cells["error"] = error
    cells["relative_error"] = relative
    cells["low"] = low
    cells["high"] = high
    cells["covered"] = (low <= true_sum) & (true_sum <= high)
    cells["sd_estimate"] = sd_estimate
    cells["sd_true"] = sd_true
    cells["max_value"] = max_value
    cells["max_loss"] = max_loss

    cols = list(dict.fromkeys([*id_columns, *by]))
    records = frame[cols].reset_index(drop=True).copy() if cols else pd.DataFrame(index=range(len(vals)))
    value_name = value if value not in records.columns else f"{value}_value"
    records[value_name] = vals
    records["cell"] = cell_of
    records["loss"] = record_loss
    records["loss_rho"] = record_loss if u == "rho" else np.asarray(mechanism.policy_rho(vals), dtype=float)
    summary = summarize_losses(record_loss, unit=u, threshold=threshold, frame=records,
                               id_columns=[*cols, value_name], top_n=top_n)
    return CellRelease(mechanism=mechanism, value=value, by=by, beta=b, unit=u, cells=cells, records=records,
                       loss_summary=summary, notes=tuple(notes))
