r"""Releasing a column's sums over cells (e.g. industry × county) with a per-record mechanism.

Each cell's total is released once with the chosen mechanism. The cells partition the record universe, so by
parallel composition (Lemma 2.14) a record's loss is its loss in its own cell, where its per-record sensitivity
is its own value: ``loss_i = P(x_i)``. Records outside a cell contribute Δ = 0 there.

**The partition must be public and fixed in advance** (Lemma 2.14 needs a partition of the record *universe*,
not of the data). So every cell of the *cell universe* — the cartesian product of each cell column's declared
levels — is released, including empty cells (true total 0, plus noise). If only the cells that happen to contain
records were released, the mere presence of a cell would reveal that some record is in it, with no noise at all
(ours; a reviewer's finding). The levels come from, in order: the ``levels`` argument; the declared categories
of a categorical column; otherwise the levels observed in the data, with a note in the result that those level
lists must themselves be public (e.g. the list of all industries and counties), or the release is not private.

Exact record counts per cell are *not* released: the ``n_records_internal`` column is internal evaluation
information (like ``true_sum``, ``error`` and ``sd_true``). :attr:`CellRelease.published` is the part that may
be published: the keys, the raw output, the estimates derived from it, the interval and ``sd_estimate``.

**Units with several rows.** Per-record DP protects *units* (establishments, people), not rows. When
``id_columns`` are given and an id repeats, the rows of one unit are summed within each cell (the cell sum does
not change) and the unit's loss is the sum of its losses over the cells it appears in (sequential composition,
Lemma 2.13; disjoint cells of one release still add up when one unit spans several of them). Without
``id_columns`` every row is taken to be a separate unit: give the id columns whenever a unit can have several
rows.

The result reports, per cell, the true sum, the raw output, the unbiased and median-unbiased estimates, the
error, the exact (1−β) interval, and two standard deviations: ``sd_estimate`` (from the output — publishable) and
``sd_true`` (the mechanism's SD at the *true* total — confidential, for evaluating the simulation only; spec
gotcha 16).

References
----------
.. [1] Finley et al., arXiv:2409.18118, Lemma 2.13 (sequential composition), Lemma 2.14 (parallel composition
       over a partition of the record universe), Definition 4.2. Digest §7.1, §4.3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.errors import DataValidationError, EngineError, InvalidParameterError, ResourceLimitError
from engine.per_record.base import SumMechanism, check_beta
from engine.per_record.losses import (
    CONFIDENTIAL_NOTE,
    LossSummary,
    LossUnit,
    _resolve_unit,
    losses_for,
    summarize_losses,
    unit_keys,
    value_column,
)

#: Provenance shown by the UI next to per-cell releases.
SOURCE = ("paper Lemma 2.14 (parallel composition over a public partition) and Def. 4.2; releasing every cell of "
          "the declared cell universe and the per-cell evaluation are ours (digest §4.3)")

#: Largest cell universe (product of the level counts) a release builds.
MAX_CELLS = 1_000_000

#: Columns of :attr:`CellRelease.cells` that may be published (besides the cell columns).
PUBLIC_COLUMNS: tuple[str, ...] = ("output", "estimate", "estimate_median", "low", "high", "sd_estimate")

#: Note added to every cell release.
UNIVERSE_NOTE = (
    "Every cell of the cell universe (all combinations of the declared levels) is released, empty cells "
    "included, so which cells appear does not depend on the data (parallel composition needs a public partition)."
)
COUNTS_NOTE = (
    "'n_records_internal', 'true_sum', 'error', 'relative_error', 'covered', 'sd_true', 'max_value' and "
    "'max_loss' are internal evaluation columns computed from the confidential data, not part of the release; "
    "exact record counts are not private. Publish only CellRelease.published."
)


def observed_levels_note(columns: Sequence[str]) -> str:
    """The note shown when cell levels were read off the data."""
    cols = ", ".join(repr(c) for c in columns)
    return (
        f"The levels of {cols} were taken from the data. They must be public (fixed before seeing the data, e.g. "
        "the official list of industries or counties); otherwise the set of released cells reveals which levels "
        "occur and the release is not private. Declare them with levels= or use a categorical column."
    )


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
        One row per cell of the cell universe (empty cells included), for internal evaluation: the ``by`` columns,
        ``n_records_internal`` (exact count of units — internal, not private), ``true_sum``, ``output``,
        ``estimate``, ``estimate_median``, ``error``, ``relative_error`` (NaN for empty totals), ``low``, ``high``,
        ``covered``, ``sd_estimate``, ``sd_true``, ``max_value`` and ``max_loss`` (NaN for empty cells).
    records : DataFrame
        One row per input record (input order): id columns, ``by`` columns, the value, ``cell`` (row of
        ``cells``), ``loss`` and ``loss_rho``. When ids repeat: one row per unit and cell (the unit's rows summed),
        plus ``unit_loss`` and ``unit_loss_rho`` (summed over the unit's cells) and ``n_rows``.
    loss_summary : LossSummary
        Over units (records, or units when ids repeat).
    notes : tuple of str
    levels : dict
        The cell universe: column → tuple of levels (``None`` stands for a missing key).
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
    levels: dict[str, tuple] = field(default_factory=dict)

    @property
    def published(self) -> pd.DataFrame:
        """The publishable part of the release: cell keys and :data:`PUBLIC_COLUMNS` (no counts, no true sums)."""
        return self.cells[[*self.by, *PUBLIC_COLUMNS]].copy()

    def metrics(self) -> dict[str, Any]:
        """Accuracy over cells: RMSE, mean and median absolute relative error (cells with a positive total),
        interval coverage and mean half-width (internal evaluation)."""
        c = self.cells
        rel = c["relative_error"].abs().dropna()
        return {
            "n_cells": int(len(c)),
            "n_empty_cells": int((c["n_records_internal"] == 0).sum()),
            "rmse": float(np.sqrt(np.mean(c["error"].to_numpy() ** 2))),
            "mean_abs_relative_error": float(rel.mean()) if len(rel) else float("nan"),
            "median_abs_relative_error": float(rel.median()) if len(rel) else float("nan"),
            "coverage": float(c["covered"].mean()),
            "mean_half_width": float(((c["high"] - c["low"]) / 2).mean()),
            "max_loss": float(c["max_loss"].max()),
            "unit": self.unit,
        }


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT


def _declared_levels(name: str, given: Any) -> tuple:
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence | pd.Index | np.ndarray):
        raise InvalidParameterError(f"levels[{name!r}] must be a list of the column's possible values; got {given!r}")
    lv = tuple(None if _is_missing(v) else v for v in given)
    if not lv:
        raise InvalidParameterError(f"levels[{name!r}] must not be empty")
    if len(set(lv)) != len(lv):
        raise InvalidParameterError(f"levels[{name!r}] lists a value twice")
    return lv


def _column_levels(frame: pd.DataFrame, col: str, levels: Mapping[str, Any] | None) -> tuple[tuple, bool]:
    """(levels, observed?) of one cell column."""
    if levels is not None and col in levels:
        return _declared_levels(col, levels[col]), False
    s = frame[col]
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = tuple(s.cat.categories)
        return (cats + (None,) if s.isna().any() else cats), False  # missing keys: one more public level
    observed = pd.unique(s.dropna().to_numpy())
    try:
        observed = sorted(observed)
    except TypeError:  # mixed types: keep order of appearance
        observed = list(observed)
    return tuple(observed) + ((None,) if s.isna().any() else ()), True


def _codes(frame: pd.DataFrame, col: str, lv: tuple) -> np.ndarray:
    """Index of each row's key in ``lv``; rows outside the declared levels are named."""
    s = frame[col].reset_index(drop=True)
    present = [v for v in lv if v is not None]
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)
    missing = s.isna().to_numpy()
    codes = np.asarray(pd.Index(present, dtype=object).get_indexer_for(s.to_numpy(dtype=object)), dtype=np.int64)
    codes[missing] = -1
    if None in lv:
        codes[missing] = lv.index(None)
    bad = (codes < 0) & ~(missing & (None in lv))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataValidationError(
            f"row {row} has {col} = {frame[col].iloc[row]!r}, which is not among the declared levels of {col!r}; "
            "add it to the levels (they must be public) or fix the row",
            column=col, row=row,
        )
    return codes


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
    levels: Mapping[str, Sequence] | None = None,
) -> CellRelease:
    """Release the sum of ``value`` in every cell of the public cell universe over ``by``; report errors and losses.

    Parameters
    ----------
    frame : DataFrame
    value : str
        Non-negative numeric column.
    by : sequence of str
        Cell columns (empty: one cell).
    mechanism : SumMechanism
    rng : numpy Generator
    beta : float
        Intervals have coverage 1 − β.
    unit : {"rho", "epsilon", "native"}
    threshold : float, optional
        Acceptable loss (in ``unit``) for the summary.
    id_columns : sequence of str
        Columns identifying a unit; rows with the same ids are one unit (summed within a cell, losses summed over
        cells). Without them every row is a unit.
    top_n : int
    levels : mapping column → list of levels, optional
        The public levels of each cell column (``None`` in a list is the level of missing keys). Columns not
        given use their categorical dtype's categories, or else the levels observed in the data (the result's
        notes then warn that those lists must be public).

    Raises
    ------
    DataValidationError
        A key outside the declared levels, a bad value.
    ResourceLimitError
        More than :data:`MAX_CELLS` cells in the universe.

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> toy = pd.DataFrame({"industry": ["a", "a", "b"], "employees": [5.0, 10.0, 20.0]})
    >>> r = release_cells(toy, "employees", ["industry"], GaussianSum(sigma=1.0), rng=np.random.default_rng(0),
    ...                   levels={"industry": ["a", "b", "c"]})
    >>> r.cells["true_sum"].tolist(), r.records["loss"].tolist()
    ([15.0, 20.0, 0.0], [12.5, 50.0, 200.0])
    >>> list(r.published.columns)
    ['industry', 'output', 'estimate', 'estimate_median', 'low', 'high', 'sd_estimate']
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
    if levels is not None:
        if not isinstance(levels, Mapping):
            raise InvalidParameterError("levels must map each cell column to its list of public levels")
        extra = sorted(set(levels) - set(by))
        if extra:
            raise InvalidParameterError(f"levels given for {extra[0]!r}, which is not a cell column; cell columns: "
                                        f"{list(by)}")
    b = check_beta(beta)
    u = _resolve_unit(mechanism, unit)
    notes: list[str] = [CONFIDENTIAL_NOTE, UNIVERSE_NOTE, COUNTS_NOTE]

    # ----- the public cell universe --------------------------------------------------------------------------
    universe: dict[str, tuple] = {}
    observed_cols = []
    for col in by:
        lv, observed = _column_levels(frame, col, levels)
        universe[col] = lv
        if observed:
            observed_cols.append(col)
    if observed_cols:
        notes.insert(1, observed_levels_note(observed_cols))
    shape = tuple(len(universe[c]) for c in by)
    n_cells = int(np.prod(shape, dtype=float)) if by else 1
    if n_cells > MAX_CELLS:
        raise ResourceLimitError(
            f"the cell universe has {n_cells:,} cells (the product of the level counts {list(shape)}); at most "
            f"{MAX_CELLS:,} — use fewer or coarser cell columns"
        )
    if by:
        cell_of = np.ravel_multi_index(tuple(_codes(frame, c, universe[c]) for c in by), shape)
        keys = pd.MultiIndex.from_product([list(universe[c]) for c in by], names=list(by)).to_frame(index=False)
    else:
        cell_of = np.zeros(len(frame), dtype=np.int64)
        keys = pd.DataFrame(index=[0])

    # ----- units: rows of one unit are summed within a cell ---------------------------------------------------
    ids = unit_keys(frame, id_columns)
    repeated = ids is not None and bool(ids.duplicated().any())
    if repeated:
        rows = ids.assign(cell=cell_of, __v=vals)  # type: ignore[union-attr]
        agg = rows.groupby([*id_columns, "cell"], sort=False, dropna=False).agg(
            value_sum=("__v", "sum"), n_rows=("__v", "size")).reset_index()
        unit_vals = agg["value_sum"].to_numpy(dtype=float)
        unit_cell = agg["cell"].to_numpy(dtype=np.int64)
        notes.append(
            f"Some ids in {list(id_columns)} have several rows: each unit's rows were summed within its cell, and a "
            "unit's loss is the sum of its losses over the cells it appears in (sequential composition)."
        )
    else:
        unit_vals, unit_cell = vals, cell_of

    true_sum = np.bincount(unit_cell, weights=unit_vals, minlength=n_cells)
    n_records = np.bincount(unit_cell, minlength=n_cells)
    max_value = np.full(n_cells, -np.inf)
    np.maximum.at(max_value, unit_cell, unit_vals)
    max_value[n_records == 0] = np.nan

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
    with np.errstate(invalid="ignore"):
        error = estimate - true_sum
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(true_sum > 0, error / true_sum, np.nan)

    unit_loss = losses_for(mechanism, unit_vals, u)  # type: ignore[arg-type]
    max_loss = np.full(n_cells, -np.inf)
    np.maximum.at(max_loss, unit_cell, unit_loss)
    max_loss[n_records == 0] = np.nan

    cells = keys.reset_index(drop=True).copy()
    cells["n_records_internal"] = n_records
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

    rho_of = (lambda v, loss: loss) if u == "rho" else (lambda v, loss: np.asarray(mechanism.policy_rho(v), float))
    if not repeated:
        cols = list(dict.fromkeys([*id_columns, *by]))
        records = frame[cols].reset_index(drop=True).copy() if cols else pd.DataFrame(index=range(len(vals)))
        value_name = value if value not in records.columns else f"{value}_value"
        records[value_name] = vals
        records["cell"] = cell_of
        records["loss"] = unit_loss
        records["loss_rho"] = rho_of(vals, unit_loss)
        summary = summarize_losses(unit_loss, unit=u, threshold=threshold, frame=records,
                                   id_columns=[*cols, value_name], top_n=top_n)
    else:
        records = agg[list(id_columns)].copy()
        for col in by:
            records[col] = keys[col].to_numpy()[unit_cell]
        value_name = value if value not in records.columns else f"{value}_value"
        records[value_name] = unit_vals
        records["n_rows"] = agg["n_rows"].to_numpy()
        records["cell"] = unit_cell
        records["loss"] = unit_loss
        records["loss_rho"] = rho_of(unit_vals, unit_loss)
        grouped = records.groupby(list(id_columns), sort=False, dropna=False)
        records["unit_loss"] = grouped["loss"].transform("sum").to_numpy()
        records["unit_loss_rho"] = grouped["loss_rho"].transform("sum").to_numpy()
        units = grouped.agg(**{value_name: (value_name, "sum"), "loss": ("loss", "sum")}).reset_index()
        summary = summarize_losses(units["loss"].to_numpy(), unit=u, threshold=threshold, frame=units,
                                   id_columns=[*id_columns, value_name], top_n=top_n)
    return CellRelease(mechanism=mechanism, value=value, by=by, beta=b, unit=u, cells=cells, records=records,
                       loss_summary=summary, notes=tuple(notes), levels=universe)
