r"""Targeted DP read as a per-record guarantee: the loss of a record as a function of how far it can move.

Under (B, ε, δ)-TDP, a record that can be replaced by one at L2 distance t (rows of the prepared data lie in the
unit ball, so t ≤ 2) is protected at level

.. math:: ε(t) = \lceil t/B \rceil ε, \qquad δ(t) = \min\{1, \tfrac{e^{\lceil t/B\rceil ε} - 1}{e^ε - 1} δ\}

(switch lemma; computed by :func:`engine.accounting.tdp.switch_loss`, the one home of that lemma). This is a
policy function over t, in the vocabulary of the per-record page: its unit is the ε of (ε, δ)-DP with a δ that
grows with t (``"tdp_epsilon"``).

Per record of the prepared data we report the loss at two meaningful distances (ours):

* the distance to its **nearest distinct neighbour** in the data (excluding itself and identical copies, whose
  count is reported as ``multiplicity``): how well the record hides among the records that actually exist.
  A duplicate at distance 0 would show "no loss", but swapping identical rows changes nothing and says nothing
  about protection, so it is skipped;
* the **worst case** t = 2 (replacement by any row of the unit ball): the classic DP guarantee TDP implies.

Like the losses of seed-003 mechanisms, these per-record values depend on the data and are confidential.

References
----------
.. [1] Kohli & Blumenstock, arXiv:2408.13424, Lemma 4 (switch lemma). Digest ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from engine.accounting.tdp import steps, switch_loss
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.per_record.losses import CONFIDENTIAL_NOTE, LossSummary, summarize_losses
from engine.per_record.units import UNIT_LABELS
from engine.validation import check_array_interval, check_interval, check_matrix

__all__ = [
    "SOURCE",
    "WORST_CASE_DISTANCE",
    "TDPPolicy",
    "TDPRecordLosses",
    "nearest_neighbour_distances",
    "tdp_policy",
    "tdp_record_losses",
]

#: Provenance shown by the UI next to TDP per-record losses.
SOURCE = ("switch lemma: Kohli & Blumenstock Lemma 4; reading TDP as a per-record policy and the nearest-neighbour "
          "distance are ours")

#: Rows of prepared data may exceed norm 1 by this much (rounding in normalisation).
_NORM_TOLERANCE = 1e-9

WORST_CASE_DISTANCE = 2.0


@dataclass(frozen=True)
class TDPPolicy:
    """The TDP policy over distances t: ``steps``, ``epsilon`` and ``delta`` arrays aligned with ``distance``."""

    epsilon0: float
    delta0: float
    b: float
    distance: np.ndarray
    steps: np.ndarray
    epsilon: np.ndarray
    delta: np.ndarray
    unit: str = "tdp_epsilon"
    source: str = "paper (Kohli & Blumenstock) Lemma 4, switch lemma"

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"distance": self.distance, "steps": self.steps, "epsilon": self.epsilon,
                             "delta": self.delta})


def tdp_policy(distance, epsilon: float, delta: float, b: float) -> TDPPolicy:
    """Per-record (ε(t), δ(t)) under (B, ε, δ)-TDP for distances t ∈ [0, 2] (vectorised).

    Examples
    --------
    >>> pol = tdp_policy([0.0, 0.3, 0.5, 2.0], 1.0, 1e-6, 0.5)
    >>> pol.steps.tolist(), pol.epsilon.tolist()
    ([0, 1, 1, 4], [0.0, 1.0, 1.0, 4.0])
    """
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    dlt = check_interval("delta", delta, 0, 1)
    bb = check_interval("b", b, 0, 2, closed="right", hint="B is a distance between rows of the unit ball")
    t = np.atleast_1d(check_array_interval("distance", distance, 0, None, hint="a distance between prepared rows"))
    if (t > WORST_CASE_DISTANCE + _NORM_TOLERANCE).any():
        raise InvalidParameterError(f"distance must lie in [0, 2] (rows of the prepared data are in the unit ball); "
                                    f"got {float(t.max()):g}")
    t = np.minimum(t, WORST_CASE_DISTANCE)
    e, d = switch_loss(eps, dlt, bb, t)
    return TDPPolicy(epsilon0=eps, delta0=dlt, b=bb, distance=t, steps=np.atleast_1d(steps(t, bb)),
                     epsilon=np.atleast_1d(np.asarray(e, float)), delta=np.atleast_1d(np.asarray(d, float)))


@dataclass(frozen=True)
class TDPRecordLosses:
    """Per-record TDP losses of prepared data.

    Attributes
    ----------
    records : DataFrame
        One row per record: id columns (if given), ``nn_distance`` (to the nearest *distinct* row), ``nn_index``
        (that row), ``multiplicity`` (rows identical to this one, itself included), ``steps_nn``, ``epsilon_nn``, ``delta_nn``, ``epsilon_worst``, ``delta_worst``.
    summary_nn, summary_worst : LossSummary
        Summaries of ``epsilon_nn`` and ``epsilon_worst`` (unit ``"tdp_epsilon"``).
    epsilon, delta, b : float
        The TDP parameters.
    """

    records: pd.DataFrame
    summary_nn: LossSummary
    summary_worst: LossSummary
    epsilon: float
    delta: float
    b: float
    note: str = CONFIDENTIAL_NOTE


def nearest_neighbour_distances(x, *, return_multiplicity: bool = False):
    """Distance from each row to its nearest *distinct* row, and that row's index (cKDTree on the unique rows).

    Identical rows are not neighbours: swapping a record for an identical copy changes nothing, so a distance of 0
    (loss 0) would say nothing about the record's protection — a duplicated record is no better protected than
    any other. Each row is measured against the closest row with a different value; ``nn_index`` is the first
    such row. With ``return_multiplicity=True`` also returns how many rows share each row's value (1 = unique).

    Raises
    ------
    InsufficientDataError
        If all rows are identical (no distinct neighbour exists).
    """
    xx = check_matrix("x", x, min_rows=2)
    uniq, first, inverse, counts = np.unique(xx, axis=0, return_index=True, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).ravel()
    if len(uniq) < 2:
        raise InsufficientDataError("all records are identical: no record has a distinct nearest neighbour")
    dist, idx = cKDTree(uniq).query(uniq, k=2)  # unique rows: the nearest other one is always the second hit
    nn_dist = dist[:, 1][inverse]
    nn_idx = first[idx[:, 1]][inverse]
    if return_multiplicity:
        return nn_dist, nn_idx, counts[inverse]
    return nn_dist, nn_idx


def tdp_record_losses(
    data,
    epsilon: float,
    delta: float,
    b: float,
    *,
    threshold: float | None = None,
    frame: pd.DataFrame | None = None,
    id_columns: Sequence[str] = (),
    top_n: int = 10,
) -> TDPRecordLosses:
    """Loss of each record of prepared data under (B, ε, δ)-TDP at its nearest-neighbour distance and at t = 2.

    Parameters
    ----------
    data : PreparedData or array_like
        Anything with an ``x`` attribute (n × d, rows in the unit L2 ball), or the matrix itself; n ≥ 2.
    epsilon, delta, b : float
        The TDP guarantee.
    threshold : float, optional
        Acceptable ε; summaries report the share of records above it.
    frame : DataFrame, optional
        Row-aligned table supplying ``id_columns`` for the top records.
    """
    x = getattr(data, "x", data)
    try:
        xx = check_matrix("x", x, min_rows=1)
    except InvalidParameterError as exc:
        raise DataValidationError(str(exc)) from None
    if len(xx) < 2:
        raise InsufficientDataError("a nearest neighbour needs at least 2 records; got 1")
    # (all-identical data is rejected by nearest_neighbour_distances: no distinct neighbour)
    norms = np.linalg.norm(xx, axis=1)
    if (norms > 1.0 + _NORM_TOLERANCE).any():
        row = int(np.flatnonzero(norms > 1.0 + _NORM_TOLERANCE)[0])
        raise DataValidationError(
            f"row {row} has L2 norm {norms[row]:.6g} > 1; TDP distances assume prepared rows in the unit ball — "
            "prepare the data first", row=row,
        )
    nn_dist, nn_idx, multiplicity = nearest_neighbour_distances(xx, return_multiplicity=True)
    nn = tdp_policy(np.minimum(nn_dist, WORST_CASE_DISTANCE), epsilon, delta, b)
    worst = tdp_policy(np.full(len(xx), WORST_CASE_DISTANCE), epsilon, delta, b)
    if frame is not None and len(frame) != len(xx):
        raise InvalidParameterError(f"frame has {len(frame)} rows but the data has {len(xx)}")
    cols = list(id_columns)
    if cols and frame is None:
        raise InvalidParameterError("id_columns need the row-aligned frame")
    records = frame[cols].reset_index(drop=True).copy() if cols else pd.DataFrame(index=range(len(xx)))  # type: ignore[index]
    records["nn_distance"] = nn_dist
    records["nn_index"] = nn_idx
    records["multiplicity"] = multiplicity
    records["steps_nn"] = nn.steps
    records["epsilon_nn"] = nn.epsilon
    records["delta_nn"] = nn.delta
    records["epsilon_worst"] = worst.epsilon
    records["delta_worst"] = worst.delta
    label = UNIT_LABELS["tdp_epsilon"]
    s_nn = summarize_losses(nn.epsilon, unit="tdp_epsilon", label=label, threshold=threshold, frame=records,
                            id_columns=[*cols, "nn_distance"], top_n=top_n)
    s_worst = summarize_losses(worst.epsilon, unit="tdp_epsilon", label=label, threshold=threshold,
                               frame=records, id_columns=cols, top_n=top_n)
    return TDPRecordLosses(records=records, summary_nn=s_nn, summary_worst=s_worst, epsilon=nn.epsilon0,
                           delta=nn.delta0, b=nn.b)
