r"""Worst-case neighbouring inputs for each mechanism family the Studio prints a guarantee for.

Each construction is a pure function returning the two inputs (and, where one release call can carry many
independent experiments, the stacked form and the statistic that reads them back). The constructions, and why
they are worst cases:

* **Targeted DP (Gaussian mechanism, private projection)**: two records at L2 distance exactly B inside the unit
  ball (:func:`tdp_pair`). The mechanisms add noise whose law does not depend on where the record sits, so only the
  distance matters, and (B, ε, δ)-TDP covers every pair at distance ≤ B. The likelihood-ratio statistic is the
  release projected on the direction of the difference (the first coordinate here).
* **JL + Laplace** (secret projection P, then Laplace noise): the (ε, δ_fail) guarantee covers an adversary who sees
  the WHOLE release, and the other records' outputs reveal P. The worst case therefore puts, next to the record
  that changes, rows that expose the row of P the change acts on (:func:`jl_element_experiments`,
  :func:`jl_row_experiments`); given P the release is Laplace, whose likelihood ratio is
  :math:`(|z - x_0 P| - |z - x_1 P|)/\lambda`. One release carries many independent experiments: experiment i
  uses only column i of the data, so only row i of P and its own Laplace draws (rows of P are independent).
* **Per-record sums**: the record alone (the other records total 0): the transformations are concave, so the
  record's effect f(x + a) − f(a) is largest at a = 0, and additive noise does not depend on a.
* **Count tables under ε-TP** (:func:`coupled_count_tables`): the secret is one person's record. Without a
  public total, the two secret-conditional tables differ in ONE region by that person (count, and sub-count when
  there is one): L1 distance 1 or 2. Once the current total is public both tables must add up to it, so the person's
  change is offset elsewhere — one region up, another down: L1 distance 2 per count, 4 for count + sub-count
  (issue 30 §1; ``shared/spec/001-partially-private-data.md`` G15).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import InvalidParameterError
from engine.validation import check_integer, check_interval

__all__ = [
    "CoupledTables",
    "JLExperiments",
    "coupled_count_tables",
    "jl_element_experiments",
    "jl_row_experiments",
    "tdp_pair",
]


def tdp_pair(b: float, d: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two records (length d) at L2 distance exactly ``b``, symmetric about 0 on the first axis (unit ball).

    >>> x0, x1 = tdp_pair(0.5, 2)
    >>> x0.tolist(), x1.tolist(), float(np.linalg.norm(x1 - x0))
    ([-0.25, 0.0], [0.25, 0.0], 0.5)
    """
    bb = check_interval("b", b, 0, 2, closed="right")
    dd = check_integer("d", d, 1, None)
    x0 = np.zeros(dd)
    x1 = np.zeros(dd)
    x0[0], x1[0] = -bb / 2.0, bb / 2.0
    return x0, x1


@dataclass(frozen=True)
class JLExperiments:
    """Stacked JL inputs: ``x0``/``x1`` differ only in the target entries; ``targets`` are the target rows,
    ``reveal`` the (row indices, weight) of the rows exposing each experiment's row of P; ``shift0``/``shift1``
    the target row's value (on its own column) in x0 and x1."""

    x0: np.ndarray
    x1: np.ndarray
    targets: np.ndarray
    reveal_rows: np.ndarray
    reveal_weight: float
    shift0: float
    shift1: float

    @property
    def experiments(self) -> int:
        return int(self.targets.size)

    def statistic(self, z: np.ndarray) -> np.ndarray:
        """Laplace likelihood-ratio statistic of each experiment given the P row estimated from the release ``z``.

        With P̂_i = mean of the revealing rows' outputs / weight: Σ_j |z_ij − s0 P̂_ij| − |z_ij − s1 P̂_ij|.
        """
        z = np.asarray(z, dtype=float)
        p_hat = z[self.reveal_rows].mean(axis=1) / self.reveal_weight  # (m, k)
        t = z[self.targets]
        return np.sum(np.abs(t - self.shift0 * p_hat) - np.abs(t - self.shift1 * p_hat), axis=1)


def jl_element_experiments(m: int, element_bound: float = 1.0, reveal: float = 1e6) -> JLExperiments:
    """``m`` independent element-wise experiments in one 2m × m input (no row-norm bound applies element-wise).

    Row i (< m) holds the changing entry at column i: 0 in x0, ``element_bound`` in x1. Row m + i holds ``reveal`` at
    column i, so its output is reveal·P_i + Laplace: P_i is known to within the Laplace scale / ``reveal``.

    >>> e = jl_element_experiments(2)
    >>> e.x1.tolist()
    [[1.0, 0.0], [0.0, 1.0], [1000000.0, 0.0], [0.0, 1000000.0]]
    """
    mm = check_integer("m", m, 1, None)
    bound = check_interval("element_bound", element_bound, 0, None, closed="neither")
    big = check_interval("reveal", reveal, 0, None, closed="neither")
    eye = np.eye(mm)
    x0 = np.vstack([np.zeros((mm, mm)), big * eye])
    x1 = np.vstack([bound * eye, big * eye])
    return JLExperiments(x0, x1, np.arange(mm), (mm + np.arange(mm))[:, None], big, 0.0, bound)


def jl_row_experiments(m: int, b: float, known: int = 200) -> JLExperiments:
    """``m`` independent row-wise experiments in one m(1 + known) × m input whose rows all lie in the unit ball.

    Row i (< m) is the record that changes: −(b/2)·e_i in x0, +(b/2)·e_i in x1 (L2 distance b). Each experiment has
    ``known`` further rows equal to e_i, whose outputs average to P_i plus Laplace noise of sd √2·λ/√known.

    >>> e = jl_row_experiments(2, 1.0, known=1)
    >>> e.x0.tolist(), e.reveal_rows.tolist()
    ([[-0.5, 0.0], [0.0, -0.5], [1.0, 0.0], [0.0, 1.0]], [[2], [3]])
    """
    mm = check_integer("m", m, 1, None)
    bb = check_interval("b", b, 0, 2, closed="right")
    kn = check_integer("known", known, 1, None)
    eye = np.eye(mm)
    rest = np.tile(eye, (kn, 1))  # row m + r·m + i = e_i
    x0 = np.vstack([eye * (-bb / 2.0) + 0.0, rest])
    x1 = np.vstack([bb / 2.0 * eye, rest])
    reveal = mm + np.arange(kn)[None, :] * mm + np.arange(mm)[:, None]
    return JLExperiments(x0, x1, np.arange(mm), reveal, 1.0, -bb / 2.0, bb / 2.0)


@dataclass(frozen=True)
class CoupledTables:
    """One period's two secret-conditional count tables (x0, x1) for a declared public set.

    ``counts0``/``counts1`` (J regions), ``subcounts0``/``subcounts1`` (or None), ``previous`` (last period's public
    counts, for the prior base) and the public statistics the coupling follows.
    """

    counts0: np.ndarray
    counts1: np.ndarray
    subcounts0: np.ndarray | None
    subcounts1: np.ndarray | None
    previous: np.ndarray
    public: tuple[str, ...]

    @property
    def total(self) -> int:
        return int(self.counts0.sum())

    @property
    def l1_distance(self) -> int:
        """L1 distance between the two tables (counts and sub-counts together)."""
        out = int(np.abs(self.counts1 - self.counts0).sum())
        if self.subcounts0 is not None and self.subcounts1 is not None:
            out += int(np.abs(self.subcounts1 - self.subcounts0).sum())
        return out

    def describe(self) -> str:
        def pair(c, d):
            return f"counts {tuple(int(v) for v in c)}" + ("" if d is None else f", sub {tuple(int(v) for v in d)}")

        return f"{pair(self.counts0, self.subcounts0)} vs {pair(self.counts1, self.subcounts1)}"


def coupled_count_tables(public: tuple[str, ...], has_subcount: bool, counts=(1, 10), subcounts=None,
                         previous=None) -> CoupledTables:
    """The worst-case pair of one-period tables for one person's secret under the declared public statistics.

    With ``"total"`` public: x0 = ``counts`` (and ``subcounts``, default = ``counts``: every case of the person's
    region is also counted in the sub-count), x1 moves the person from region 0 to region 1 — both counts and both
    sub-counts change by 1, the total stays. Without it: region 0 alone, and x1 drops the person (count and
    sub-count − 1). ``previous`` (default: the counts) is last period's public table for the prior base.

    >>> t = coupled_count_tables(("total", "subcount"), True)
    >>> t.describe(), t.l1_distance
    ('counts (1, 10), sub (1, 10) vs counts (0, 11), sub (0, 11)', 4)
    >>> coupled_count_tables((), False).describe()
    'counts (1,) vs counts (0,)'
    """
    c0 = np.asarray(counts, dtype=np.int64)
    d0 = c0.copy() if subcounts is None else np.asarray(subcounts, dtype=np.int64)
    if c0.ndim != 1 or c0.size < 2 or d0.shape != c0.shape or (c0 < 1).any() or (d0 < 1).any() or (d0 > c0).any():
        raise InvalidParameterError(
            "counts must list ≥ 2 regions with counts ≥ 1 and 1 ≤ sub-count ≤ count (the person moves out of "
            f"region 0); got counts {tuple(c0)}, sub-counts {tuple(d0)}")
    prev = c0.copy() if previous is None else np.asarray(previous, dtype=np.int64)
    if "total" in public:
        step = np.zeros_like(c0)
        step[0], step[1] = -1, 1
        c1, d1 = c0 + step, d0 + step
    else:
        c0, d0, prev = c0[:1], d0[:1], prev[:1]
        c1, d1 = c0 - 1, d0 - 1
    if not has_subcount:
        return CoupledTables(c0, c1, None, None, prev, tuple(public))
    return CoupledTables(c0, c1, d0, d1, prev, tuple(public))
