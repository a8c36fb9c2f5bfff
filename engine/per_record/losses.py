r"""Who pays what: per-record losses of a column under a sum mechanism, their summary, and policy curves.

For a sum, a record's per-record sensitivity is its own value, so its loss is the policy evaluated at its
value. The summary a designer needs: median, 90th and 99th percentiles, maximum, the share of records above a
threshold, and the top records with their identifying columns.

**Per-record losses of real records are themselves confidential** (Definition 2.10 remark; spec gotcha 18): they
depend on the records' values. Show them only in an internal planning tool; public material shows the policy
curve (:func:`policy_curves`) instead.

References
----------
.. [1] Finley et al., arXiv:2409.18118, Definitions 2.10–2.11, 4.2. Digest §1.4–1.5, §7.2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.errors import DataValidationError, InvalidParameterError
from engine.per_record.base import SumMechanism
from engine.per_record.units import UNIT_LABELS
from engine.validation import check_array_interval, check_choice, check_integer, check_interval

LossUnit = Literal["native", "rho", "epsilon"]

#: Text the UI shows next to any table of real records' losses.
CONFIDENTIAL_NOTE = (
    "Per-record losses of real records depend on their values and are confidential: use them for internal "
    "planning only; publish the policy curve instead."
)


@dataclass(frozen=True)
class LossSummary:
    """Summary of a vector of per-record losses (one unit).

    Attributes
    ----------
    unit, label : str
        Unit key (``"rho"``, ``"epsilon"``, ``"tdp_epsilon"``, …) and axis label.
    n : int
    median, p90, p99, max, mean : float
    threshold : float or None
        The user's threshold, in ``unit``.
    share_above : float or None
        Share of records whose loss is strictly above ``threshold``.
    top : DataFrame
        The ``top_n`` records with the largest loss (ties broken by row order): their identifying columns, the
        value (when given), ``loss`` and ``rank``.
    """

    unit: str
    label: str
    n: int
    median: float
    p90: float
    p99: float
    max: float
    mean: float
    threshold: float | None
    share_above: float | None
    top: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (top records as a list of dicts)."""
        return {
            "unit": self.unit, "label": self.label, "n": self.n, "median": self.median, "p90": self.p90,
            "p99": self.p99, "max": self.max, "mean": self.mean, "threshold": self.threshold,
            "share_above": self.share_above, "top": self.top.to_dict(orient="records"),
        }


def summarize_losses(
    losses,
    *,
    unit: str,
    label: str | None = None,
    threshold: float | None = None,
    frame: pd.DataFrame | None = None,
    id_columns: Sequence[str] = (),
    top_n: int = 10,
) -> LossSummary:
    """Summarise per-record losses (quantiles by linear interpolation; ``share_above`` uses ``loss > threshold``).

    ``frame`` (aligned row by row with ``losses``) supplies ``id_columns`` for the top records.

    Examples
    --------
    >>> s = summarize_losses([1.0, 1.0, 1.0, 4.0, 9.0, 1e6], unit="rho", threshold=2.0, top_n=2)
    >>> s.median, s.max, s.share_above, s.top["loss"].tolist()
    (2.5, 1000000.0, 0.5, [1000000.0, 9.0])
    """
    arr = np.asarray(losses, dtype=float).ravel()
    if arr.size == 0:
        raise InvalidParameterError("cannot summarise losses of zero records")
    if np.isnan(arr).any():
        raise InvalidParameterError("losses must not contain NaN")
    top_n = check_integer("top_n", top_n, 0, None)
    thr = None if threshold is None else check_interval("threshold", threshold, 0, None)
    order = np.argsort(-arr, kind="stable")[:top_n]
    top = pd.DataFrame({"row": order})
    if frame is not None:
        if len(frame) != arr.size:
            raise InvalidParameterError(f"frame has {len(frame)} rows but there are {arr.size} losses")
        for col in id_columns:
            if col not in frame.columns:
                raise InvalidParameterError(f"id column {col!r} is not in the table; columns: {list(frame.columns)}")
            top[col] = frame[col].to_numpy()[order]
    top["loss"] = arr[order]
    top["rank"] = np.arange(1, len(order) + 1)
    q = np.quantile(arr, [0.5, 0.9, 0.99])
    return LossSummary(
        unit=unit,
        label=label or UNIT_LABELS.get(unit, unit),
        n=int(arr.size),
        median=float(q[0]),
        p90=float(q[1]),
        p99=float(q[2]),
        max=float(arr.max()),
        mean=float(arr.mean()),
        threshold=thr,
        share_above=None if thr is None else float(np.mean(arr > thr)),
        top=top,
    )


def _resolve_unit(mechanism: SumMechanism, unit: LossUnit) -> str:
    check_choice("unit", unit, ["native", "rho", "epsilon"])
    if unit == "native":
        return mechanism.UNIT
    if unit == "epsilon" and mechanism.UNIT != "epsilon":
        raise InvalidParameterError(
            f"{mechanism.LABEL} gives per-record zCDP (ρ); its losses have no ε-PRDP value — use unit='rho'"
        )
    return unit


def losses_for(mechanism: SumMechanism, values, unit: LossUnit = "rho") -> np.ndarray:
    """Each value's loss in ``unit`` (``"native"`` = the mechanism's own unit)."""
    u = _resolve_unit(mechanism, unit)
    vals = check_array_interval("values", values, 0, None, hint="record values (per-record sensitivities) are ≥ 0")
    out = mechanism.policy_rho(vals) if u == "rho" else mechanism.policy(vals)
    return np.asarray(out, dtype=float)


def value_column(frame: pd.DataFrame, value: str) -> np.ndarray:
    """The non-negative numeric column ``value`` as floats; names the first bad row otherwise."""
    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    if value not in frame.columns:
        raise DataValidationError(f"column {value!r} is not in the table; columns: {list(frame.columns)}",
                                  column=value)
    col = pd.to_numeric(frame[value], errors="coerce")
    arr = col.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataValidationError(
            f"column {value!r} must hold finite non-negative numbers (sums of non-negative values); row {row} has "
            f"{frame[value].iloc[row]!r} — fix or drop that row",
            column=value, row=row,
        )
    return arr


def unit_keys(frame: pd.DataFrame, id_columns: Sequence[str]) -> pd.DataFrame | None:
    """The id columns (reset index) identifying each row's unit, or None without id columns."""
    if not id_columns:
        return None
    for col in id_columns:
        if col not in frame.columns:
            raise InvalidParameterError(f"id column {col!r} is not in the table; columns: {list(frame.columns)}")
    return frame[list(id_columns)].reset_index(drop=True)


#: Note added when a unit has several rows.
UNITS_NOTE = ("Some ids have several rows: per-record DP protects units, so each unit's rows were summed and its "
              "loss is that of its total (its per-record sensitivity for a sum).")


@dataclass(frozen=True)
class RecordLosses:
    """Per-record losses of one column under one mechanism.

    Attributes
    ----------
    mechanism : SumMechanism
    value : str
        The value column.
    unit : str
    records : DataFrame
        One row per input record (same order): the id columns, ``value``, ``loss`` (in ``unit``) and ``loss_rho``.
        When ids repeat, one row per unit (first-appearance order) with its summed value and ``n_rows``.
    summary : LossSummary
    note : str
        :data:`CONFIDENTIAL_NOTE`.
    notes : tuple of str
        Further notes (e.g. :data:`UNITS_NOTE`).
    """

    mechanism: SumMechanism
    value: str
    unit: str
    records: pd.DataFrame
    summary: LossSummary
    note: str = CONFIDENTIAL_NOTE
    notes: tuple[str, ...] = ()


def record_losses(
    frame: pd.DataFrame,
    value: str,
    mechanism: SumMechanism,
    *,
    unit: LossUnit = "rho",
    threshold: float | None = None,
    id_columns: Sequence[str] = (),
    top_n: int = 10,
) -> RecordLosses:
    """Each record's loss when ``value`` is summed (in any cells: parallel composition keeps the same loss).

    Parameters
    ----------
    frame : DataFrame
    value : str
        Non-negative numeric column; its entries are the records' per-record sensitivities.
    mechanism : SumMechanism
    unit : {"rho", "epsilon", "native"}
        ρ (default; comparable across all mechanisms), ε (PRDP mechanisms only) or the mechanism's own unit.
    threshold : float, optional
        Acceptable loss in ``unit``; the summary reports the share of records strictly above it.
    id_columns : sequence of str
        Columns identifying a unit (and the top records). Rows sharing ids are one unit: its values are summed
        (a unit's per-record sensitivity for the sum is its total). Without them every row is a separate unit.
    top_n : int

    Examples
    --------
    >>> from engine.per_record.baseline import UnitSplitting
    >>> toy = pd.DataFrame({"id": [1, 2, 3, 4, 5, 6], "employees": [5, 5, 10, 20, 30, 10000]})
    >>> r = record_losses(toy, "employees", UnitSplitting(tau=10, sigma=50 ** 0.5), id_columns=["id"], top_n=1)
    >>> r.records["loss"].round(9).tolist(), r.summary.top["id"].tolist()
    ([1.0, 1.0, 1.0, 4.0, 9.0, 1000000.0], [6])
    """
    vals = value_column(frame, value)
    u = _resolve_unit(mechanism, unit)
    ids = unit_keys(frame, id_columns)
    notes: tuple[str, ...] = ()
    if ids is not None and bool(ids.duplicated().any()):
        # one unit, several rows: its sensitivity for the sum is its total
        agg = ids.assign(__v=vals).groupby(list(id_columns), sort=False, dropna=False).agg(
            value_sum=("__v", "sum"), n_rows=("__v", "size")).reset_index()
        records = agg[list(id_columns)].copy()
        vals = agg["value_sum"].to_numpy(dtype=float)
        n_rows = agg["n_rows"].to_numpy()
        notes = (UNITS_NOTE,)
    else:
        records = ids.copy() if ids is not None else pd.DataFrame(index=range(len(vals)))
        n_rows = None
    loss = losses_for(mechanism, vals, u)  # type: ignore[arg-type]
    value_name = value if value not in records.columns else f"{value}_value"
    records[value_name] = vals
    if n_rows is not None:
        records["n_rows"] = n_rows
    records["loss"] = loss
    records["loss_rho"] = loss if u == "rho" else np.asarray(mechanism.policy_rho(vals), dtype=float)
    summary = summarize_losses(loss, unit=u, threshold=threshold, frame=records,
                               id_columns=list(id_columns) + [value_name], top_n=top_n)
    return RecordLosses(mechanism=mechanism, value=value, unit=u, records=records, summary=summary, notes=notes)


def share_protected(mechanism: SumMechanism, values, rho_max: float) -> float:
    """Share of records whose ρ-loss is at most ``rho_max`` (the "fully protected" share; ours)."""
    r = check_interval("rho_max", rho_max, 0, None)
    vals = check_array_interval("values", values, 0, None, hint="record values (per-record sensitivities) are ≥ 0")
    if vals.size == 0:
        raise InvalidParameterError("values must not be empty")
    return float(np.mean(np.asarray(mechanism.policy_rho(vals)) <= r))


def policy_curves(
    mechanisms: Sequence[SumMechanism], x, *, unit: LossUnit = "rho", names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Long table of policy curves for plotting: columns ``mechanism``, ``kind``, ``x``, ``loss``, ``unit``,
    ``unit_label``, ``source``. All rows share one unit (ρ by default), so they can share an axis.

    ``unit="epsilon"`` keeps only PRDP (additive) mechanisms and raises if none is left.
    """
    check_choice("unit", unit, ["native", "rho", "epsilon"])
    xs = check_array_interval("x", x, 0, None, hint="record values (per-record sensitivities) are ≥ 0").ravel()
    if names is not None and len(names) != len(mechanisms):
        raise InvalidParameterError("names must have one entry per mechanism")
    frames = []
    for i, m in enumerate(mechanisms):
        if unit == "epsilon" and m.UNIT != "epsilon":
            continue
        if unit == "native" and len({mm.UNIT for mm in mechanisms}) > 1:
            raise InvalidParameterError("these mechanisms use different units (ε and ρ); use unit='rho' for one axis")
        u = _resolve_unit(m, unit)
        frames.append(pd.DataFrame({
            "mechanism": (names[i] if names is not None else m.describe().split(":")[0]),
            "kind": m.KIND,
            "x": xs,
            "loss": losses_for(m, xs, u),  # type: ignore[arg-type]
            "unit": u,
            "unit_label": UNIT_LABELS[u],
            "source": m.SOURCES.get("policy", m.source),
        }))
    if not frames:
        raise InvalidParameterError("no mechanism has ε (PRDP) losses; use unit='rho'")
    return pd.concat(frames, ignore_index=True)


def composed_rho(mechanisms: Sequence[SumMechanism], values: Sequence, *, constant_rho: float = 0.0) -> np.ndarray:
    """Per-record ρ of several releases of the same records (sequential composition, Lemma 2.13).

    ``values[j]`` holds each record's per-record sensitivity in release j (e.g. its payroll for a payroll sum, its
    employees for an employment sum; 0 if it is not in the released cell); every entry of ``values`` has one
    entry per record. ``constant_rho`` adds a ρ-zCDP release that treats all records alike (e.g. a count released
    with the Gaussian mechanism). Policies must be fixed before any release runs (Lemma 2.13's condition).
    Disjoint cells of one release do not add up (parallel composition, Lemma 2.14): pass them as one release.

    Examples
    --------
    >>> from engine.per_record.baseline import GaussianSum
    >>> composed_rho([GaussianSum(sigma=1.0), GaussianSum(sigma=2.0)], [[1.0, 2.0], [2.0, 0.0]],
    ...              constant_rho=0.1).tolist()
    [1.1, 2.1]
    """
    if len(mechanisms) != len(values):
        raise InvalidParameterError(f"give one value array per release; got {len(mechanisms)} mechanisms and "
                                    f"{len(values)} value arrays")
    if len(mechanisms) == 0:
        raise InvalidParameterError("give at least one release")
    c = check_interval("constant_rho", constant_rho, 0, None)
    arrays = [np.asarray(v, dtype=float).ravel() for v in values]
    if len({a.size for a in arrays}) != 1:
        raise InvalidParameterError("every value array must have one entry per record (same length)")
    total = np.full(arrays[0].shape, c)
    for m, a in zip(mechanisms, arrays, strict=True):
        total = total + np.asarray(m.policy_rho(a), dtype=float)
    return total
