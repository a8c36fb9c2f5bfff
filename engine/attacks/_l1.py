r"""Compiled exact L1 nearest-row scans of the attribute-inference search (private module).

Both kernels compute the CANONICAL distance of :mod:`engine.attacks._neighbours` themselves — the terms
:math:`|t_k - v_k|` added one by one from 0.0 in ascending column order, exactly the operations of
:func:`engine.attacks._neighbours.canonical_nearest` (numba keeps the order of floating-point additions unless
``fastmath`` is asked for, and it is not) — and keep the lowest row index on exact ties, so their answers are the
canonical ones by construction: no slack, no re-solving of near ties.

* :func:`scan_nearest` — the nearest of some candidate rows on one set of known columns. The candidates' known
  columns are gathered once into a column-major block; each query then adds one column at a time over all
  candidates (a loop over contiguous memory that the compiler vectorises), about 3× less CPU than
  ``scipy.spatial.distance.cdist`` and no (queries × candidates) matrix.
* :func:`all_but_one_nearest` — for every secret column j, the nearest row on all the other columns, in two passes
  per query: the canonical total over all d columns and the largest term of every row, then the exact per-j sums
  of the rows that can be nearest for some j (total − largest term ≤ the smallest total, widened by the slack
  of the difference; see :func:`engine.attacks._neighbours.nearest_all_but_one`).

Compiled with numba, as the singling-out scan (:mod:`engine.attacks._chebyshev`); cached next to this module.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import InvalidParameterError


@numba.njit(cache=True, nogil=True)
def _scan(block: np.ndarray, candidates: np.ndarray, queries: np.ndarray) -> np.ndarray:  # pragma: no cover
    h, c = block.shape
    m = queries.shape[0]
    out = np.empty(m, dtype=np.intp)
    acc = np.empty(c)
    for q in range(m):
        acc[:] = 0.0
        for k in range(h):
            t = queries[q, k]
            column = block[k]
            for i in range(c):
                acc[i] += abs(t - column[i])
        best = 0
        value = acc[0]
        for i in range(1, c):
            if acc[i] < value:  # strict: the lowest index (candidates ascend) wins a tie
                value = acc[i]
                best = i
        out[q] = candidates[best]
    return out


def scan_nearest(rows: np.ndarray, queries: np.ndarray, known: np.ndarray,
                 candidates: np.ndarray | None = None) -> np.ndarray:
    """Canonical nearest row (an index into ``rows``) of every query on the columns ``known``, among ``candidates``.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
    queries : ndarray, shape (m, d)
    known : ndarray of int
        Ascending column indices (the canonical summation order).
    candidates : ndarray of int, optional
        Ascending row indices holding every row that can be nearest for every query (default: all rows).

    >>> rows = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> scan_nearest(rows, np.array([[0.5, 0.5], [0.9, 0.0]]), np.array([0, 1])).tolist()
    [0, 1]
    """
    known = np.asarray(known, dtype=np.intp)
    if candidates is None:
        candidates = np.arange(rows.shape[0], dtype=np.intp)
    candidates = np.asarray(candidates, dtype=np.intp)
    if candidates.size == 0 or known.size == 0:
        raise InvalidParameterError("the nearest-row scan needs at least one candidate row and one known column")
    block = np.ascontiguousarray(rows[np.ix_(candidates, known)].T, dtype=np.float64)
    sub = np.ascontiguousarray(queries[:, known], dtype=np.float64)
    return _scan(block, candidates, sub)


@numba.njit(cache=True, nogil=True)
def _all_but_one(block: np.ndarray, candidates: np.ndarray, queries: np.ndarray, slack: float,
                 term_bound: float) -> np.ndarray:  # pragma: no cover
    d, c = block.shape
    m = queries.shape[0]
    out = np.empty((m, d), dtype=np.intp)
    total = np.empty(c)
    largest = np.empty(c)
    terms = np.empty(d)
    for q in range(m):
        total[:] = 0.0
        largest[:] = 0.0
        for k in range(d):
            t = queries[q, k]
            column = block[k]
            for i in range(c):
                v = abs(t - column[i])
                total[i] += v
                largest[i] = max(largest[i], v)  # branch-free: the loop vectorises
        t_min = total[0]
        for i in range(1, c):
            if total[i] < t_min:
                t_min = total[i]
        threshold = t_min + slack * (t_min + term_bound)
        best = np.full(d, np.inf)
        index = np.zeros(d, dtype=np.intp)
        for i in range(c):  # ascending: the first row at the smallest distance is the lowest index
            if total[i] - largest[i] > threshold:
                continue
            for k in range(d):
                terms[k] = abs(queries[q, k] - block[k, i])
            for j in range(d):
                dist = 0.0
                for k in range(d):
                    if k != j:
                        dist += terms[k]
                if dist < best[j]:
                    best[j] = dist
                    index[j] = i
        for j in range(d):
            out[q, j] = candidates[index[j]]
    return out


def all_but_one_nearest(rows: np.ndarray, queries: np.ndarray, slack: float,
                        candidates: np.ndarray | None = None) -> np.ndarray:
    """Canonical nearest row on every column but j, for every secret column j: shape (m, d).

    ``candidates`` (ascending) must hold every row that can be nearest for some query and some j; ``slack`` is the
    relative allowance for the rounding of (total − largest term) against the exact sums.

    >>> rows = np.array([[0.0, 0.0, 9.0], [0.0, 5.0, 0.0], [1.0, 1.0, 1.0]])
    >>> all_but_one_nearest(rows, np.array([[0.0, 0.0, 0.0]]), 1e-9).tolist()
    [[2, 1, 0]]
    """
    if candidates is None:
        candidates = np.arange(rows.shape[0], dtype=np.intp)
    candidates = np.asarray(candidates, dtype=np.intp)
    if candidates.size == 0 or rows.shape[1] == 0:
        raise InvalidParameterError("the nearest-row scan needs at least one candidate row and one column")
    block = np.ascontiguousarray(rows[candidates].T, dtype=np.float64)
    sub = np.ascontiguousarray(queries, dtype=np.float64)
    # Every term |t_k − v_k| is at most this: an absolute scale for the slack.
    term_bound = float(np.max(np.abs(block), initial=0.0)) + float(np.max(np.abs(sub), initial=0.0))
    return _all_but_one(block, candidates, sub, float(slack), term_bound)


__all__ = ["all_but_one_nearest", "scan_nearest"]
