r"""The two nearest rows of every centre in the L∞ (Chebyshev) metric, up to a radius (private module).

The singling-out attack (:mod:`engine.attacks.singling_out`) decides every box from the two smallest L∞
distances of its centre to the rows of X. A k-d tree answers that badly on the attack's inputs (15 columns, a
radius as wide as the data itself at c = 1: the tree visits most of its leaves to prove a box holds no second
row). Here each centre scans the rows in the order of ONE column instead — the column in which the fewest rows
lie within the radius (a binary search per column on the rows sorted by that column), outward from the centre —
and stops as soon as the next row of that column is farther than the second-best distance found so far; the
other columns are checked in the same order (fewest rows within reach first), with an early exit once a
row is farther than the second best. The distances are the same floating-point numbers a k-d tree computes
(max over columns of |x_j − z_j|), so the answer is exact.

Compiled with numba (a well-kept library; a scan with a data-dependent stop cannot be vectorised in numpy, and
the scipy/scikit-learn k-d trees are 3–6× slower here, see ``benchmarks/bench_attacks.py``). The compiled code
is cached next to this module (``__pycache__``), so a process compiles it once per installation.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _two_nearest(
    rows: np.ndarray, order: np.ndarray, sorted_values: np.ndarray, centres: np.ndarray, reach: float
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled; covered through two_nearest_chebyshev
    n, d = rows.shape
    m = centres.shape[0]
    dist = np.full((m, 2), np.inf)
    index = np.full((m, 2), n, dtype=np.intp)
    counts = np.empty(d, dtype=np.intp)
    lows = np.empty(d, dtype=np.intp)
    highs = np.empty(d, dtype=np.intp)
    for q in range(m):
        z = centres[q]
        for j in range(d):
            lows[j] = np.searchsorted(sorted_values[j], z[j] - reach, "left")
            highs[j] = np.searchsorted(sorted_values[j], z[j] + reach, "right")
            counts[j] = highs[j] - lows[j]
        columns = np.argsort(counts)
        first = columns[0]
        if counts[first] == 0:
            continue
        values = sorted_values[first]
        rank = order[first]
        zc = z[first]
        left = np.searchsorted(values, zc) - 1
        right = left + 1
        low, high = lows[first], highs[first]
        d1 = reach
        d2 = reach
        i1 = n
        i2 = n
        while True:
            if left >= low and right < high:
                if zc - values[left] <= values[right] - zc:
                    k = left
                    left -= 1
                else:
                    k = right
                    right += 1
            elif left >= low:
                k = left
                left -= 1
            elif right < high:
                k = right
                right += 1
            else:
                break
            if abs(values[k] - zc) > d2:  # every row left in this column's order is farther
                break
            r = rank[k]
            dr = 0.0
            for jj in range(d):
                j = columns[jj]
                v = abs(rows[r, j] - z[j])
                if v > dr:
                    dr = v
                    if dr > d2:
                        break
            if dr <= d2:
                if dr < d1 or (dr == d1 and r < i1):
                    d2 = d1
                    i2 = i1
                    d1 = dr
                    i1 = r
                else:
                    d2 = dr
                    i2 = r
        if i1 < n:
            dist[q, 0] = d1
            index[q, 0] = i1
        if i2 < n:
            dist[q, 1] = d2
            index[q, 1] = i2
    return dist, index


def sorted_columns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows as contiguous float64, and per column the row order and the sorted values (the scan's index)."""
    x = np.ascontiguousarray(rows, dtype=np.float64)
    columns = np.ascontiguousarray(x.T)  # sorting contiguous rows is ~3× faster than sorting along axis 0
    order = np.argsort(columns, axis=1)
    return x, order, np.take_along_axis(columns, order, axis=1)


def two_nearest_chebyshev(
    rows: np.ndarray, centres: np.ndarray, reach: float,
    index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the two nearest rows of every centre in the L∞ metric, up to ``reach``.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
    centres : ndarray, shape (m, d)
    reach : float
        Rows farther than ``reach`` are not reported.
    index : tuple, optional
        ``sorted_columns(rows)`` when already computed (several searches of the same rows).

    Returns
    -------
    dist : ndarray, shape (m, 2)
        The two smallest distances max_j |rows[i, j] − centres[q, j]| that are ≤ ``reach``, ascending; ``inf``
        where fewer rows are within reach.
    index : ndarray of intp, shape (m, 2)
        Their rows (``n`` where the distance is ``inf``). Of rows at equal distance, the nearest is the lowest
        index.

    >>> rows = np.array([[0.0, 0.0], [1.0, 1.0], [1.05, 1.0]])
    >>> dist, index = two_nearest_chebyshev(rows, np.array([[1.0, 0.9], [5.0, 5.0]]), 0.5)
    >>> dist[0].round(2).tolist(), index[0].tolist(), dist[1].tolist(), index[1].tolist()
    ([0.1, 0.1], [1, 2], [inf, inf], [3, 3])
    """
    x, order, sorted_values = sorted_columns(rows) if index is None else index
    z = np.ascontiguousarray(centres, dtype=np.float64)
    return _two_nearest(x, order, sorted_values, z, float(reach))
