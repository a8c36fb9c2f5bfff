r"""One home for the budget conventions: the default δ and how a total (ε, δ) is split between the steps.

* :func:`default_delta` — δ = 1/(n + 1) for n privatized records, the targeted-DP paper's choice (δ < 1/n, so the
  guarantee does not allow releasing one whole record in the clear).
* :func:`split_budget` — a total (ε, δ) for Algorithm 1's two steps: ε2 = min(ε/4, 0.9999) for the covariance
  step (its classical Gaussian needs ε2 < 1), ε1 = ε − ε2; δ1 = 2δ/3, δ2 = δ/3 (the paper's δ split). Composition
  (:mod:`engine.accounting.composition`) adds the steps back up to exactly the total.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (δ = 1/(n+1), the δ split of the Togo and Nigeria case studies).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.validation import check_integer, check_interval

__all__ = ["EPS2_CAP", "BudgetSplit", "default_delta", "split_budget", "split_delta"]

#: Largest ε2 the default split gives Algorithm 1's covariance step (its classical Gaussian needs ε2 < 1).
EPS2_CAP = 0.9999


def default_delta(n: int) -> float:
    """δ = 1/(n + 1) for n privatized records.

    >>> default_delta(4201) * 4202
    1.0
    """
    return 1.0 / (check_integer("n", n, 1, None) + 1)


@dataclass(frozen=True)
class BudgetSplit:
    """A total (ε, δ) split between Algorithm 1's projection step (ε1, δ1) and covariance step (ε2, δ2)."""

    epsilon1: float
    delta1: float
    epsilon2: float
    delta2: float

    def as_dict(self) -> dict[str, float]:
        return {"epsilon1": self.epsilon1, "delta1": self.delta1, "epsilon2": self.epsilon2, "delta2": self.delta2}


def split_budget(epsilon: float, delta: float) -> BudgetSplit:
    """The default split of a total (ε, δ) for Algorithm 1 (see the module docstring).

    For ε ≤ 4 this is ε1 = 3ε/4; above, ε1 takes the rest so that the whole budget is spent.

    >>> split_budget(1.0, 3e-4).epsilon1, split_budget(8.0, 3e-4).epsilon2
    (0.75, 0.9999)
    >>> s = split_budget(2.0, 3e-4); s.epsilon1 + s.epsilon2, round(s.delta1 + s.delta2, 12)
    (2.0, 0.0003)
    """
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    dlt = check_interval("delta", delta, 0, 1, closed="left")
    eps2 = min(eps / 4.0, EPS2_CAP)
    delta1, delta2 = split_delta(dlt)
    return BudgetSplit(epsilon1=eps - eps2, delta1=delta1, epsilon2=eps2, delta2=delta2)


def split_delta(delta: float) -> tuple[float, float]:
    """The paper's δ split: (δ1, δ2) = (2δ/3, δ/3).

    >>> [round(v * 1e4, 12) for v in split_delta(3e-4)]
    [2.0, 1.0]
    """
    return 2.0 * float(delta) / 3.0, float(delta) / 3.0
