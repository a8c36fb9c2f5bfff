r"""Lending amounts and profit: the money side of the micro-lending program (Nigeria case study).

Profit of applicant j (Kohli & Blumenstock, Methods "Case studies"): reject a high-risk applicant → 0; approve a
low-risk applicant → :math:`+r_j`; approve a high-risk applicant → :math:`-(l_j + i_j)`; reject a low-risk
applicant → :math:`-r_j` (the paper's convention: the revenue forgone is counted as a loss; ordinary profit and loss
counts 0 there, :data:`PROFIT_CONVENTIONS`), with loan amount :math:`l_j`, revenue :math:`r_j` and interest :math:`i_j` from the
column roles :data:`LENDING_ROLES` or the program's defaults (:func:`lending_amounts`). Columns can be given in the
units :data:`AMOUNT_UNITS` (money, a fraction of the loan, a percentage of the loan).

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods "Case studies" (Nigeria). Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import numpy as np

from engine.errors import DataValidationError

if TYPE_CHECKING:
    from engine.evaluation.programs import ProgramConfig

__all__ = ["AMOUNT_UNITS", "LENDING_ROLES", "PROFIT_CONVENTIONS", "AmountUnit", "ProfitConvention", "lending_amounts",
           "lending_profit"]

AmountUnit = Literal["amount", "rate", "percent"]
ProfitConvention = Literal["paper", "ordinary"]
#: How rejecting a low-risk applicant is scored: the paper counts the revenue forgone (−r_j); ordinary profit and loss
#: counts only the loans made (0). Every other case is the same in both.
PROFIT_CONVENTIONS: dict[str, str] = {
    "paper": "the paper's convention: rejecting an applicant who would have repaid costs the revenue forgone (−r)",
    "ordinary": "ordinary profit and loss: only the loans made count (rejecting anyone is 0)",
}
AMOUNT_UNITS: tuple[str, ...] = ("amount", "rate", "percent")

#: Column roles the lending program reads from ``extras``.
LENDING_ROLES: tuple[str, ...] = ("loan_amount", "revenue", "interest")


def lending_profit(approved: np.ndarray, low_risk: np.ndarray, loan_amount: np.ndarray, revenue: np.ndarray,
                   interest: np.ndarray, convention: ProfitConvention = "paper") -> np.ndarray:
    r"""Per-applicant profit :math:`\pi_j` under the paper's four cases.

    correct reject → 0; correct approve → +r_j; approve a high-risk applicant (default) → −(l_j + i_j);
    reject a low-risk applicant → −r_j (``convention="paper"``) or 0 (``"ordinary"`` profit and loss).

    >>> args = (np.array([0, 1, 1, 0], bool), np.array([0, 1, 0, 1], bool), np.full(4, 10.0), np.full(4, 2.0),
    ...         np.full(4, 1.0))
    >>> lending_profit(*args).tolist(), lending_profit(*args, convention="ordinary").tolist()
    ([0.0, 2.0, -11.0, -2.0], [0.0, 2.0, -11.0, 0.0])
    """
    a = np.asarray(approved, dtype=bool)
    good = np.asarray(low_risk, dtype=bool)
    forgone = -revenue if convention == "paper" else 0.0
    return np.where(a, np.where(good, revenue, -(loan_amount + interest)), np.where(good, forgone, 0.0)).astype(
        float
    )


def _role_values(extras: Mapping[str, object] | None, role: str, n: int) -> np.ndarray | None:
    if not extras or role not in extras or extras[role] is None:
        return None
    try:
        arr = np.asarray(extras[role], dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DataValidationError(f"the {role!r} column must be numeric", column=role) from None
    if arr.shape[0] != n:
        raise DataValidationError(f"the {role!r} column must have {n} values; got {arr.shape[0]}", column=role)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataValidationError(
            f"the {role.replace('_', ' ')} column must be a non-negative number in every row; "
            f"data row {i + 1} (counting from 1) has {float(arr[i]):g} — correct it or choose another column",
            column=role,
            row=i,
        )
    return arr


def lending_amounts(n: int, config: ProgramConfig, extras: Mapping[str, object] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(l, r, i) per applicant: from the ``extras`` roles when present, else the config's defaults.

    l_j = ``loan_amount`` column or the default amount; i_j = ``interest`` column or ``interest_rate`` × l_j;
    r_j = ``revenue`` column, else the ``interest`` column (the revenue of a repaid loan is its interest), else
    ``revenue_rate`` × l_j. Columns given as rates or percentages (``interest_unit``, ``revenue_unit``) are turned
    into money with the loan amount first.

    >>> from engine.evaluation.programs import ProgramConfig
    >>> l, r, i = lending_amounts(2, ProgramConfig(kind="lending", loan_amount=10, revenue_rate=0.2,
    ...                                             interest_rate=0.1))
    >>> l.tolist(), r.tolist(), i.tolist()
    ([10.0, 10.0], [2.0, 2.0], [1.0, 1.0])
    """
    loan = _role_values(extras, "loan_amount", n)
    if loan is None:
        loan = np.full(n, float(config.loan_amount))
    interest_column = _as_amount(_role_values(extras, "interest", n), config.interest_unit, loan)
    interest = config.interest_rate * loan if interest_column is None else interest_column
    revenue = _as_amount(_role_values(extras, "revenue", n), config.revenue_unit, loan)
    if revenue is None:
        # The lender's revenue on a repaid loan is the interest it earns: use the interest column when there is
        # one, else the default rate.
        revenue = config.revenue_rate * loan if interest_column is None else interest_column
    return loan, revenue, interest


def _as_amount(values: np.ndarray | None, unit: str, loan: np.ndarray) -> np.ndarray | None:
    """Money per applicant from a column in ``unit`` (amount, rate = fraction of the loan, percent of the loan)."""
    if values is None or unit == "amount":
        return values
    return values * loan / (100.0 if unit == "percent" else 1.0)
