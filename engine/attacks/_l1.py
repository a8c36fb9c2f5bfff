r"""Compiled exact L1 nearest-row scans of the attribute-inference search (private module).

Every kernel decides with the CANONICAL distance of :mod:`engine.attacks._neighbours`, computed by itself — the
terms :math:`|t_k - v_k|` added one by one from 0.0 in ascending column order in float64, exactly the operations of
:func:`engine.attacks._neighbours.canonical_nearest` (numba keeps the order of floating-point additions unless
reassociation is allowed, and it is not) — and keeps the lowest row index on exact ties, so their answers are the
canonical ones by construction.

* :func:`scan_nearest` — the nearest of some candidate rows on one set of known columns. The candidates' known
  columns are gathered once into a column-major block; each query then adds one column at a time over a tile of
  :data:`_TILE` candidates (a loop over contiguous memory that the compiler vectorises, its sums kept in the
  first-level cache), and no (queries × candidates) matrix. The survivors' pass reads only the tiles whose smallest
  sum is within the margin.
* :func:`all_but_one_nearest` — for every secret column j, the nearest row on all the other columns, in two passes
  per query: the total over all d columns and the largest term of every row, then the exact per-j sums of the
  rows that can be nearest for some j (total − largest term ≤ the smallest total, widened by the bounds below;
  see :func:`engine.attacks._neighbours.nearest_all_but_one`).
* :func:`joint_nearest` — both at once for several column sets: each row's terms are computed once per query and
  every set's sum adds them, with the additions that sets share done once (:func:`shared_pairs`, at most
  :func:`pair_limit` of them); beyond :data:`NARROW_COLUMNS` columns every set adds instead one precomputed subset
  sum per block of four columns (:func:`_joint_blocks`, :func:`block_patterns`: about d/4 additions per set rather
  than its ⌈d/2⌉ columns, with no plan to search for).

The first pass of each adds integer terms on a 16-bit grid (:func:`quantized_copies`; 32-bit beyond
:data:`NARROW_COLUMNS` columns, where ⌊65535/d⌋ levels would leave a tenth of the rows to the float64 sums): every
column becomes round(λ(v − lo_k)) with one scale λ for all columns, so an integer term is within e = 1 + 10⁻⁹
(1 + 10⁻⁵ on the 32-bit grid, :func:`term_error`) of λ|t − v| and a sum
of h terms within h·e of λ times the exact sum S, in any grouping (integers add exactly). The canonical float64 sum
is within E = 4d²·2⁻⁵²·M of S (M the largest |value|). For the canonical nearest row r and the row m with the
smallest integer sum,

.. math:: S_q(r) \le \lambda S(r) + he \le \lambda (S_{can}(r) + E) + he \le \lambda (S_{can}(m) + E) + he
          \le S_q(m) + 2he + 2\lambda E,

so every row within that margin (:func:`grid_margin`) of the smallest integer sum is a survivor, and the canonical
float64 sums of the survivors (usually one or two rows) decide. For the all-but-one sets, a row can be nearest
without column j only if its total minus its largest term is within (2d − 1)e + 2λE of the smallest integer total
(the same chain, with Σ_{k≠j} ≤ T). 16-bit lanes hold twice the terms of 32-bit ones per vector instruction and
integer minima vectorise: the passes take about half the CPU of the float32 passes they replaced (nigeria-demo,
``benchmarks/bench_attacks.py``). Inputs whose spread is not a finite float64 are scanned in float64 only
(:func:`_scan64`, :func:`_all_but_one64`, with the relative slack of the joint search).

Every scan calls its compiled kernel on a slice of the queries at a time (at most :data:`_CALL_ADDITIONS` (query,
row, addition) triples, a few tenths of a second) and looks at its cancel token between calls (:func:`check_cancel`):
a Stop, a closed tab or a server shutting down ends a search on 500 columns within that, not after minutes.

Compiled with numba, as the singling-out scan (:mod:`engine.attacks._chebyshev`); cached next to this module.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import CancelledError, InvalidParameterError
from engine.progress import CancelToken

#: Largest value of a 16-bit sum: every partial sum of the integer passes must fit.
_U16_MAX = 65535
#: Largest value of a 32-bit sum (the wide grid, :data:`NARROW_COLUMNS`).
_U32_MAX = 4294967295
#: Allowance per integer term over λ|t − v|: two roundings to the nearest integer and the float64 rounding of λ(v − lo).
_TERM_ERROR = 1.0 + 1e-9
#: The same on the 32-bit grid: λ(v − lo) reaches 2³², so its float64 rounding is up to 2³²·2⁻⁵² ≈ 10⁻⁶ per value.
_TERM_ERROR_WIDE = 1.0 + 1e-5
#: Columns up to which the scans' first pass adds 16-bit terms; beyond, 32-bit ones. One λ for every column puts
#: ⌊65535 / d⌋ levels on the widest column: at 200 columns 327, and the margin of two levels per term then keeps a
#: tenth of the rows of a noisy release for the canonical float64 sums (2,000 rows × 200 columns: 11.6 of 11.8 CPU s
#: of the JL release's attack), where the 32-bit grid's ⌊2³² / d⌋ levels keep one or two. 16-bit lanes hold twice
#: as many terms per instruction: below this the coarser grid costs less than it loses.
NARROW_COLUMNS = 40


def term_error(lanes: np.dtype) -> float:
    """:data:`_TERM_ERROR` for 16-bit terms, :data:`_TERM_ERROR_WIDE` for 32-bit ones."""
    return _TERM_ERROR if np.dtype(lanes) == np.uint16 else _TERM_ERROR_WIDE


def quantized_copies(block: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """Integer copies of ``block`` (d columns × rows) and ``queries`` (queries × d) for the scans' first pass, the
    scale λ of their grid and the largest |value| M (for :func:`grid_margin`); None if the spread of a column is not
    a finite float64 or so small that λ is not. 16-bit integers up to :data:`NARROW_COLUMNS` columns, 32-bit beyond
    (the arrays' dtype says which).

    Column k becomes round(λ·(v − lo_k)), lo_k its smallest value over both, with ONE λ for every column:
    λ = ⌊U / d⌋ / (the largest spread of a column), U = 65535 (16 bits) or 2³² − 1 (32 bits), so that a sum of up to
    d terms fits. With one λ, λ·|t − v| = |λ(t − lo_k) − λ(v − lo_k)| for every column, and each integer term
    |t_q − v_q| is within :func:`term_error` of λ|t − v| (two roundings to the nearest integer, each within 1/2,
    plus the float64 rounding of λ·(v − lo_k), below 2·2⁻⁵³·U). A constant block (every spread 0) gets λ = 0: every
    term 0.

    >>> b, q, lam, m = quantized_copies(np.array([[1.0, 3.0], [0.0, 0.5]]), np.array([[2.0, 0.25]]))
    >>> b.tolist(), q.tolist(), lam == (65535 // 2) / 2.0, m
    ([[0, 32767], [0, 8192]], [[16384, 4096]], True, 3.0)
    """
    d = block.shape[0]
    both = np.concatenate([block, queries.T], axis=1)
    low = both.min(axis=1)
    high = both.max(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = float(np.max(high - low, initial=0.0))
    if not (np.isfinite(spread) and np.all(np.isfinite(low))):
        return None
    lanes = np.uint16 if d <= NARROW_COLUMNS else np.uint32
    levels = (_U16_MAX if lanes is np.uint16 else _U32_MAX) // max(d, 1)
    lam = levels / spread if spread > 0.0 else 0.0
    if not np.isfinite(lam):  # a spread below levels / 1.8e308 (subnormal values): the float64 scans
        return None
    block_q = np.minimum(np.rint((block - low[:, None]) * lam), levels).astype(lanes)
    queries_q = np.minimum(np.rint((queries - low[None, :]) * lam), levels).astype(lanes)
    magnitude = max(float(np.max(np.abs(low), initial=0.0)), float(np.max(np.abs(high), initial=0.0)))
    return np.ascontiguousarray(block_q), np.ascontiguousarray(queries_q), lam, magnitude


def lane_max(lanes: np.dtype) -> int:
    """Largest sum of the integer passes' lanes: 65535 (16 bits) or 2³² − 1 (32 bits)."""
    return _U16_MAX if np.dtype(lanes) == np.uint16 else _U32_MAX


def grid_margin(terms: float, lam: float, d: int, magnitude: float, error: float = _TERM_ERROR) -> int:
    """Margin over the smallest integer sum, in grid units, that keeps every canonical nearest row (module
    docstring): ``terms``·e + 2λE, e = ``error`` (:func:`term_error` of the grid), E = 4d²·2⁻⁵²·M for sums of at
    most d terms of values at most M in size (the canonical float64 sums' rounding), rounded down, plus one (the
    sums are integers).

    >>> grid_margin(2 * 8, 4096.0, 8, 1.0)
    17
    """
    margin = terms * error + 2.0 * lam * 4.0 * d * d * 2.0**-52 * magnitude
    return int(min(margin, 2.0**62)) + 1


#: (Query, row, addition) triples of one call of the joint scan (a few tenths of a second): the scans check for a
#: cancel between calls (:func:`check_cancel`), so a Stop takes effect within about that.
_CALL_ADDITIONS = 1 << 32


def check_cancel(cancel: CancelToken | None) -> None:
    """Raise :class:`~engine.errors.CancelledError` when ``cancel`` is set: the scans' cancellation point, between
    calls of their compiled kernels."""
    if cancel is not None and cancel.cancelled:
        raise CancelledError("the attribute-inference attack was cancelled")


def _call_queries(per_query: int) -> int:
    """Queries per call of a compiled scan that does ``per_query`` (row, addition) pairs for each query: the calls
    stay within :data:`_CALL_ADDITIONS`, at least one query each."""
    return int(max(1, _CALL_ADDITIONS // max(1, per_query)))


#: Above every integer sum of either grid: the starting value of a running minimum.
_NO_SUM = 1 << 62
#: Rows per tile of the one-set scan: the tile's sums stay in the first-level cache while its columns are added, and
#: the tile's smallest sum lets the survivors' pass skip every tile without one.
_TILE = 1024


@numba.njit(cache=True, nogil=True)
def _scan(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
          queries_q: np.ndarray, margin: int) -> np.ndarray:  # pragma: no cover
    h, c = block.shape
    m = queries.shape[0]
    out = np.empty(m, dtype=np.intp)
    acc = np.empty(c, dtype=block_q.dtype)
    tiles = (c + _TILE - 1) // _TILE
    tile_low = np.empty(tiles, dtype=np.int64)
    for q in range(m):
        low = np.int64(_NO_SUM)
        for t in range(tiles):
            start = t * _TILE
            width = min(c, start + _TILE) - start
            sums = acc[start : start + width]
            tq = queries_q[q, 0]
            column = block_q[0, start : start + width]
            for i in range(width):
                sums[i] = max(tq, column[i]) - min(tq, column[i])
            for k in range(1, h):
                tq = queries_q[q, k]
                column = block_q[k, start : start + width]
                for i in range(width):
                    sums[i] += max(tq, column[i]) - min(tq, column[i])
            smallest = sums[0]
            for i in range(1, width):
                smallest = min(smallest, sums[i])
            tile_low[t] = smallest
            low = min(low, tile_low[t])
        threshold = low + margin
        best = 0
        value = np.inf
        for t in range(tiles):
            if tile_low[t] > threshold:
                continue
            for i in range(t * _TILE, min(c, (t + 1) * _TILE)):  # ascending: strict < keeps the lowest index
                if acc[i] <= threshold:
                    dist = 0.0
                    for k in range(h):  # the canonical float64 sum
                        dist += abs(queries[q, k] - block[k, i])
                    if dist < value:
                        value = dist
                        best = i
        out[q] = candidates[best]
    return out


@numba.njit(cache=True, nogil=True)
def _scan64(block: np.ndarray, candidates: np.ndarray, queries: np.ndarray) -> np.ndarray:  # pragma: no cover
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


@numba.njit(cache=True, nogil=True)
def _largest_nearest(queries: np.ndarray, seeds_t: np.ndarray) -> float:  # pragma: no cover
    m = queries.shape[0]
    h, s = seeds_t.shape
    sums = np.empty(s)
    largest = 0.0
    for q in range(m):
        column = seeds_t[0]
        t = queries[q, 0]
        for i in range(s):
            sums[i] = abs(t - column[i])
        for k in range(1, h):
            column = seeds_t[k]
            t = queries[q, k]
            for i in range(s):
                sums[i] += abs(t - column[i])
        smallest = sums[0]
        for i in range(1, s):
            smallest = min(smallest, sums[i])
        largest = max(largest, smallest)
    return largest


@numba.njit(cache=True, nogil=True)
def _largest_nearest_without_each(queries: np.ndarray, seeds_t: np.ndarray) -> np.ndarray:  # pragma: no cover
    m, d = queries.shape
    s = seeds_t.shape[1]
    totals = np.empty(s)
    terms = np.empty((d, s))
    best = np.empty(d)
    largest = np.zeros(d)
    allowance = 2.0 * d * 2.220446049250313e-16
    for q in range(m):
        totals[:] = 0.0
        for k in range(d):
            t = queries[q, k]
            column = seeds_t[k]
            for i in range(s):
                terms[k, i] = abs(t - column[i])
                totals[i] += terms[k, i]
        for j in range(d):
            smallest = np.inf
            for i in range(s):
                smallest = min(smallest, totals[i] - terms[j, i] + allowance * totals[i])
            best[j] = smallest
        for j in range(d):
            largest[j] = max(largest[j], best[j])
    return largest


def largest_nearest_without_each(queries: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """For every column j, an upper bound on max over the queries of the smallest L1 distance to the rows ``seeds``
    on every column but j — what :func:`largest_nearest_distance` bounds for each all-but-one set, for all d of them
    in one pass: each seed's total over the d columns minus its j-th term, plus 2d·2⁻⁵² of the total (the rounding
    of the total and of the subtraction, as in the all-but-one scan). O(queries × seeds × d) instead of d times
    that (2,000 rows × 500 columns: 2.3 of the 3.5 CPU s of the private projection's bounds).

    >>> largest_nearest_without_each(np.array([[0.0, 0.0, 0.0]]), np.array([[1.0, 2.0, 4.0]])).round(6).tolist()
    [6.0, 5.0, 3.0]
    """
    queries = np.ascontiguousarray(queries, dtype=np.float64)
    seeds = np.asarray(seeds, dtype=np.float64)
    if queries.shape[0] == 0 or seeds.shape[0] == 0:
        raise InvalidParameterError("the nearest-distance bound needs at least one query and one seed row")
    if queries.ndim != 2 or seeds.ndim != 2 or queries.shape[1] != seeds.shape[1] or queries.shape[1] < 2:
        raise InvalidParameterError(f"queries and seeds must have the same columns, at least two; got {queries.shape} "
                                    f"and {seeds.shape}")
    return _largest_nearest_without_each(queries, np.ascontiguousarray(seeds.T))


@numba.njit(cache=True, nogil=True)
def _box_gaps(rows_t: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:  # pragma: no cover
    d, n = rows_t.shape
    gaps = np.empty((d, n), dtype=np.float32)
    outside = np.zeros(n, dtype=np.bool_)
    for k in range(d):
        low = lo[k]
        high = hi[k]
        column = rows_t[k]
        for i in range(n):
            gap = max(low - column[i], column[i] - high, 0.0)
            gaps[k, i] = gap
            outside[i] |= gap > 0.0
    return gaps, n - int(np.count_nonzero(outside))


def box_gaps(rows_t: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-column gap between each row (a column of ``rows_t``, shape (d, n)) and the box [lo, hi]: max(lo_k − v_k,
    v_k − hi_k, 0) computed in float64 and rounded to float32, shape (d, n); and the number of rows inside the box
    on every column (all gaps 0). For finite values, what ``np.maximum(np.maximum(lo[:, None] - rows_t,
    rows_t - hi[:, None]), 0).astype(np.float32)`` gives, in one pass instead of four.

    >>> gaps, inside = box_gaps(np.array([[0.0, 2.0, 5.0]]), np.array([1.0]), np.array([3.0]))
    >>> gaps.tolist(), inside
    ([[1.0, 0.0, 2.0]], 1)
    """
    return _box_gaps(np.ascontiguousarray(rows_t, dtype=np.float64), np.ascontiguousarray(lo, dtype=np.float64),
                     np.ascontiguousarray(hi, dtype=np.float64))


def largest_nearest_distance(queries: np.ndarray, seeds: np.ndarray) -> float:
    """max over the queries of the smallest float64 L1 distance to the rows ``seeds`` (same columns): an upper bound,
    up to rounding, on every query's distance to its nearest row among any rows that include the seeds. What
    ``scipy.spatial.distance.cdist(queries, seeds, "cityblock").min(axis=1).max()`` gives (the terms added in column
    order, as cdist adds them), about 10× faster for the attack's 64 seeds: the seeds' columns are contiguous and the
    compiler vectorises over them.

    >>> largest_nearest_distance(np.array([[0.0, 0.0], [3.0, 1.0]]), np.array([[1.0, 0.0], [3.0, 3.0]]))
    2.0
    """
    if queries.shape[0] == 0 or seeds.shape[0] == 0:
        raise InvalidParameterError("the nearest-distance bound needs at least one query and one seed row")
    if queries.ndim != 2 or seeds.ndim != 2 or queries.shape[1] != seeds.shape[1] or queries.shape[1] == 0:
        raise InvalidParameterError(f"queries and seeds must have the same columns, at least one; got {queries.shape} "
                                    f"and {seeds.shape}")
    return float(_largest_nearest(np.ascontiguousarray(queries, dtype=np.float64),
                                  np.ascontiguousarray(np.asarray(seeds, dtype=np.float64).T)))


def scan_nearest(rows: np.ndarray, queries: np.ndarray, known: np.ndarray,
                 candidates: np.ndarray | None = None, cancel: CancelToken | None = None) -> np.ndarray:
    """Canonical nearest row (an index into ``rows``) of every query on the columns ``known``, among ``candidates``.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
    queries : ndarray, shape (m, d)
    known : ndarray of int
        Ascending column indices (the canonical summation order).
    candidates : ndarray of int, optional
        Ascending row indices holding every row that can be nearest for every query (default: all rows).
    cancel : CancelToken, optional
        Checked between calls of the compiled scan (:func:`check_cancel`).

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
    quantized = quantized_copies(block, sub)
    step = _call_queries(block.shape[1] * known.size)
    parts = []
    if quantized is None:  # a spread beyond float64 (or a subnormal one): float64 only
        for first in range(0, sub.shape[0], step):
            check_cancel(cancel)
            parts.append(_scan64(block, candidates, sub[first : first + step]))
    else:
        block_q, sub_q, lam, magnitude = quantized
        margin = grid_margin(2 * known.size, lam, known.size, magnitude, term_error(block_q.dtype))
        for first in range(0, sub.shape[0], step):
            check_cancel(cancel)
            parts.append(_scan(block, block_q, candidates, sub[first : first + step], sub_q[first : first + step],
                               margin))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)


@numba.njit(cache=True, nogil=True)
def _nearest_without_each(queries: np.ndarray, q: int, block: np.ndarray, survivors: np.ndarray, kept: int,
                          terms: np.ndarray, out: np.ndarray, candidates: np.ndarray) -> None:  # pragma: no cover
    """For every column j, the canonical nearest of the rows ``survivors[:kept]`` (ascending) to query q on every
    column but j, written to ``out[q, j]`` as ``candidates[row]``. No floating-point flags: the canonical sums.

    First every survivor's terms |t_k − v_k| and their float64 total T. The total minus the j-th term, A_j, and the
    canonical sum without j, C_j, add the same non-negative terms, so they differ by at most d·2⁻⁵² T (the
    allowance e = 2d·2⁻⁵² T is twice that). U_j = min over the survivors of A_j + e bounds C_j of the nearest row
    from above; a row with A_j − e > U_j has C_j > U_j and cannot be nearest (nor tie it), so its canonical sum
    without j (d − 1 additions in column order) is skipped. Survivors cost about 3d operations each instead of d² (a
    JL release can leave a thousand per target); the rows compared are in ascending order and the first at the
    smallest distance wins a tie."""
    d = block.shape[0]
    upper = np.full(d, np.inf)
    totals = terms[:kept, 0]  # the buffer's first column is reused for the totals after the terms are read
    for s in range(kept):
        i = survivors[s]
        total = 0.0
        for k in range(d):
            term = abs(queries[q, k] - block[k, i])
            terms[s, k + 1] = term
            total += term
        totals[s] = total
        allowance = 2.0 * d * 2.220446049250313e-16 * total
        for j in range(d):
            upper[j] = min(upper[j], total - terms[s, j + 1] + allowance)
    for j in range(d):
        best = np.inf
        index = 0
        for s in range(kept):
            total = totals[s]
            if total - terms[s, j + 1] - 2.0 * d * 2.220446049250313e-16 * total > upper[j]:
                continue
            dist = 0.0
            for k in range(d):
                if k != j:
                    dist += terms[s, k + 1]
            if dist < best:
                best = dist
                index = survivors[s]
        out[q, j] = candidates[index]


@numba.njit(cache=True, nogil=True)
def _all_but_one(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
                 queries_q: np.ndarray, margin: int) -> np.ndarray:  # pragma: no cover
    d, c = block.shape
    m = queries.shape[0]
    out = np.empty((m, d), dtype=np.intp)
    total = np.empty(c, dtype=block_q.dtype)
    largest = np.empty(c, dtype=block_q.dtype)
    survivors = np.empty(c, dtype=np.intp)
    terms = np.empty((c, d + 1))
    term = np.empty(_TILE, dtype=block_q.dtype)
    for q in range(m):
        low = np.int64(_NO_SUM)
        for start in range(0, c, _TILE):
            width = min(c, start + _TILE) - start
            sums = total[start : start + width]
            top = largest[start : start + width]
            tq = queries_q[q, 0]
            column = block_q[0, start : start + width]
            for i in range(width):
                sums[i] = max(tq, column[i]) - min(tq, column[i])
            for i in range(width):
                top[i] = sums[i]
            for k in range(1, d):
                tq = queries_q[q, k]
                column = block_q[k, start : start + width]
                for i in range(width):
                    term[i] = max(tq, column[i]) - min(tq, column[i])
                for i in range(width):
                    sums[i] += term[i]
                for i in range(width):
                    top[i] = max(top[i], term[i])
            smallest = sums[0]
            for i in range(1, width):
                smallest = min(smallest, sums[i])
            low = min(low, np.int64(smallest))
        threshold = low + margin
        kept = 0
        for i in range(c):  # rows that can be nearest for some j (module docstring), ascending
            if np.int64(total[i]) - np.int64(largest[i]) <= threshold:
                survivors[kept] = i
                kept += 1
        _nearest_without_each(queries, q, block, survivors, kept, terms, out, candidates)
    return out


@numba.njit(cache=True, nogil=True)
def _all_but_one64(block: np.ndarray, candidates: np.ndarray, queries: np.ndarray, slack: float,
                 term_bound: float) -> np.ndarray:  # pragma: no cover
    d, c = block.shape
    m = queries.shape[0]
    out = np.empty((m, d), dtype=np.intp)
    total = np.empty(c)
    largest = np.empty(c)
    survivors = np.empty(c, dtype=np.intp)
    terms = np.empty((c, d + 1))
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
        kept = 0
        for i in range(c):  # ascending: the first row at the smallest distance is the lowest index
            if not total[i] - largest[i] > threshold:  # a term that overflowed to inf gives NaN here: kept
                survivors[kept] = i
                kept += 1
        _nearest_without_each(queries, q, block, survivors, kept, terms, out, candidates)
    return out


def all_but_one_nearest(rows: np.ndarray, queries: np.ndarray, slack: float,
                        candidates: np.ndarray | None = None, cancel: CancelToken | None = None) -> np.ndarray:
    """Canonical nearest row on every column but j, for every secret column j: shape (m, d).

    ``candidates`` (ascending) must hold every row that can be nearest for some query and some j; ``slack`` is the
    relative allowance for the rounding of (total − largest term) against the exact sums; ``cancel`` is checked
    between calls of the compiled scan (:func:`check_cancel`).

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
    quantized = quantized_copies(block, sub)
    d, c = block.shape
    step = _call_queries(c * 3 * d)
    parts = []
    if quantized is None:  # a spread beyond float64 (or a subnormal one): float64 only
        # Every term |t_k − v_k| is at most this: an absolute scale for the slack.
        term_bound = float(np.max(np.abs(block), initial=0.0)) + float(np.max(np.abs(sub), initial=0.0))
        for first in range(0, sub.shape[0], step):
            check_cancel(cancel)
            parts.append(_all_but_one64(block, candidates, sub[first : first + step], float(slack), term_bound))
    else:
        block_q, sub_q, lam, magnitude = quantized
        margin = grid_margin(2 * d - 1, lam, d, magnitude, term_error(block_q.dtype))
        for first in range(0, sub.shape[0], step):
            check_cancel(cancel)
            parts.append(_all_but_one(block, block_q, candidates, sub[first : first + step],
                                      sub_q[first : first + step], margin))
    return np.concatenate(parts) if parts else np.empty((0, d), dtype=np.intp)


#: Queries per batch of the joint scan: each tile of rows is read from memory once per batch.
_QUERY_BATCH = 64
#: Rows per tile of the joint scan, a compile-time constant: every tile is full (the rows are padded to a multiple of
#: it, :func:`_pad_terms`), so each loop over a tile is straight vector code with no remainder, and the tile's terms
#: (one row of 512 bytes per column and shared pair) stay in or near the first-level cache. First pass alone, CPU s at
#: 128 / 192 / 256 rows a tile, interleaved in one process (30 sets of 15 of 30 columns, 24,500 rows × 1,000
#: targets, 2-core machine): 0.142 / 0.143 / 0.113. Whole joint scan, sets and all-but-one, in three processes:
#: 0.17-0.21 s against 0.22-0.29 s for the variable-width tiles of 512 rows it replaced.
_JOINT_TILE = 256


@numba.njit(cache=True, nogil=True, inline="always")
def _tile_terms(block_q: np.ndarray, queries_q: np.ndarray, q: int, start: int,
                terms: np.ndarray) -> None:  # pragma: no cover
    """terms[k] = |t_k − v_k| on the 16-bit grid for the tile's rows start.., every column k."""
    for k in range(block_q.shape[0]):
        t = queries_q[q, k]
        for i in range(_JOINT_TILE):
            v = block_q[k, start + i]
            terms[k, i] = max(t, v) - min(t, v)


@numba.njit(cache=True, nogil=True, inline="always")
def _pad_terms(terms: np.ndarray, d: int, width: int, levels: int) -> None:  # pragma: no cover
    """The padding rows of the last tile (width.. of it) get the largest term, ``levels``, in every column: their sums
    are then at least every real row's sum of as many terms, so a tile's smallest sum is a real row's."""
    for k in range(d):
        for i in range(width, _JOINT_TILE):
            terms[k, i] = levels


@numba.njit(cache=True, nogil=True, inline="always")
def _tile_pairs(terms: np.ndarray, pairs: np.ndarray, d: int) -> None:  # pragma: no cover
    """terms[d + p] = terms[a] + terms[b] for each shared pair (a, b) = ``pairs[p]``, in order."""
    for p in range(pairs.shape[0]):
        a = pairs[p, 0]
        b = pairs[p, 1]
        for i in range(_JOINT_TILE):
            terms[d + p, i] = terms[a, i] + terms[b, i]


@numba.njit(cache=True, nogil=True, inline="always")
def _tile_total(terms: np.ndarray, d: int, total: np.ndarray,
                top: np.ndarray) -> tuple[np.int64, np.int64]:  # pragma: no cover
    """Integer total of the d term rows into ``total``, their largest into ``top``; the smallest total and the
    smallest total − largest (≥ 0: the total holds the largest term)."""
    for i in range(_JOINT_TILE):
        total[i] = terms[0, i]
        top[i] = terms[0, i]
    for k in range(1, d):
        for i in range(_JOINT_TILE):
            total[i] += terms[k, i]
            top[i] = max(top[i], terms[k, i])
    low_total = np.int64(_NO_SUM)
    low_rest = np.int64(_NO_SUM)
    for i in range(_JOINT_TILE):
        low_total = min(low_total, np.int64(total[i]))
        low_rest = min(low_rest, np.int64(total[i]) - np.int64(top[i]))
    return low_total, low_rest


@numba.njit(cache=True, nogil=True)
def _resolve_batch(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
                   queries_q: np.ndarray, columns: np.ndarray, count: np.ndarray, margins: np.ndarray,
                   joint_margin: int, with_all_but_one: bool, first: int, size: int, lows: np.ndarray,
                   low_total: np.ndarray, low_rest: np.ndarray, terms: np.ndarray, acc: np.ndarray, total: np.ndarray,
                   top: np.ndarray, survivors: np.ndarray, survivor_terms: np.ndarray, out: np.ndarray,
                   out_joint: np.ndarray) -> None:  # pragma: no cover
    """Pass 2 of the joint scans (:func:`_joint`, :func:`_joint_blocks`) for the queries first.. first + size, from
    pass 1's smallest integer sum of every (query, set, tile) in ``lows`` (and of the totals, ``low_total``, and
    totals − largest terms, ``low_rest``): the canonical float64 sums decide among the rows within the margins.
    ``lows`` has one column per segment of rows (a whole tile or a part of one), ``low_total`` and ``low_rest`` one per
    tile of :data:`_JOINT_TILE` rows; ``terms`` holds d rows of a tile (the all-but-one part recomputes them); the
    other arrays are work space."""
    d, c = block.shape
    n_sets = lows.shape[1]
    segments = lows.shape[2]
    segment = block_q.shape[1] // segments
    tiles = low_total.shape[1]
    # Query by query: the canonical float64 sums of the rows within the margin of the smallest integer sum, in the
    # segments that hold one. Their integer sums are recomputed from the set's own columns: integers, so the same
    # sums as pass 1's (joint_nearest's docstring).
    for b in range(size):
        q = first + b
        for s in range(n_sets):
            low = lows[b, s, 0]
            for t in range(1, segments):
                low = min(low, lows[b, s, t])
            threshold = low + margins[s]
            best = 0
            value = np.inf
            for t in range(segments):
                if lows[b, s, t] > threshold:
                    continue
                start = t * segment
                width = min(c, start + segment) - start
                k = columns[s, 0]
                tq = queries_q[q, k]
                for i in range(segment):
                    v = block_q[k, start + i]
                    acc[i] = max(tq, v) - min(tq, v)
                for r in range(1, count[s]):
                    k = columns[s, r]
                    tq = queries_q[q, k]
                    for i in range(segment):
                        v = block_q[k, start + i]
                        acc[i] += max(tq, v) - min(tq, v)
                for i in range(width):  # real rows only, ascending: strict < keeps the lowest index
                    if acc[i] <= threshold:
                        dist = 0.0
                        for k in columns[s, : count[s]]:  # the canonical float64 sum, columns ascending
                            dist += abs(queries[q, k] - block[k, start + i])
                        if dist < value:
                            value = dist
                            best = start + i
            out[q, s] = candidates[best]
        if with_all_but_one:
            low = low_total[b, 0]
            for t in range(1, tiles):
                low = min(low, low_total[b, t])
            threshold = low + joint_margin
            kept = 0
            for t in range(tiles):
                if low_rest[b, t] > threshold:
                    continue
                start = t * _JOINT_TILE
                width = min(c, start + _JOINT_TILE) - start
                _tile_terms(block_q, queries_q, q, start, terms)
                _tile_total(terms, d, total, top)
                for i in range(width):  # real rows that can be nearest for some j, ascending
                    if total[i] - top[i] <= threshold:
                        survivors[kept] = start + i
                        kept += 1
            _nearest_without_each(queries, q, block, survivors, kept, survivor_terms, out_joint, candidates)


@numba.njit(cache=True, nogil=True)
def _joint(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
           queries_q: np.ndarray, columns: np.ndarray, count: np.ndarray, pairs: np.ndarray,
           members: np.ndarray, sizes: np.ndarray, margins: np.ndarray, joint_margin: int,
           with_all_but_one: bool, levels: int, ceiling: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """``block_q`` is padded to whole tiles (:data:`_JOINT_TILE`); ``block`` has the c real rows only. ``ceiling``
    holds one value of the lanes' type, at least every sum (:func:`lane_max`): the start of the running minima,
    which then stay in the lanes' type (16-bit minima vectorise twice as wide as 32-bit ones)."""
    d, c = block.shape
    m = queries.shape[0]
    n_sets = sizes.shape[0]
    out = np.empty((m, n_sets), dtype=np.intp)
    out_joint = np.empty((m if with_all_but_one else 0, d), dtype=np.intp)
    tiles = block_q.shape[1] // _JOINT_TILE
    batch = min(m, _QUERY_BATCH)
    lows = np.empty((batch, n_sets, tiles), dtype=np.int64)
    low_total = np.empty((batch, tiles), dtype=np.int64)
    low_rest = np.empty((batch, tiles), dtype=np.int64)
    terms = np.empty((d + pairs.shape[0], _JOINT_TILE), dtype=block_q.dtype)
    acc = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    total = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    top = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    survivors = np.empty(c if with_all_but_one else 0, dtype=np.intp)
    survivor_terms = np.empty((c if with_all_but_one else 0, d + 1))
    for first in range(0, m, batch):
        size = min(m, first + batch) - first
        # Pass 1, tile by tile (its columns stay in the caches for the whole batch of queries): every
        # column's 16-bit terms once, then every set's sums and the totals, keeping only each tile's smallest.
        for t in range(tiles):
            start = t * _JOINT_TILE
            width = min(c, start + _JOINT_TILE) - start
            for b in range(size):
                _tile_terms(block_q, queries_q, first + b, start, terms)
                if width < _JOINT_TILE:
                    _pad_terms(terms, d, width, levels)
                _tile_pairs(terms, pairs, d)
                for s in range(n_sets):  # each set's smallest sum (written out here: 20-30 % faster than a helper)
                    h = sizes[s]
                    m0 = members[s, 0]
                    if h == 1:
                        low = terms[m0, 0]
                        for i in range(1, _JOINT_TILE):
                            low = min(low, terms[m0, i])
                        lows[b, s, t] = low
                        continue
                    # The first two rows are added as they are read and the last one as the minimum is taken: two
                    # passes over acc fewer than adding one row at a time.
                    m1 = members[s, 1]
                    low = ceiling[0]
                    if h == 2:
                        for i in range(_JOINT_TILE):  # the sum stored in the lanes' type, then its minimum
                            acc[i] = terms[m0, i] + terms[m1, i]
                            low = min(low, acc[i])
                        lows[b, s, t] = low
                        continue
                    for i in range(_JOINT_TILE):
                        acc[i] = terms[m0, i] + terms[m1, i]
                    for r in range(2, h - 1):
                        m1 = members[s, r]
                        for i in range(_JOINT_TILE):
                            acc[i] += terms[m1, i]
                    m1 = members[s, h - 1]
                    for i in range(_JOINT_TILE):
                        acc[i] += terms[m1, i]
                        low = min(low, acc[i])
                    lows[b, s, t] = low
                if with_all_but_one:
                    low_total[b, t], low_rest[b, t] = _tile_total(terms, d, total, top)
        _resolve_batch(block, block_q, candidates, queries, queries_q, columns, count, margins, joint_margin,
                       with_all_but_one, first, size, lows, low_total, low_rest, terms, acc, total, top, survivors,
                       survivor_terms, out, out_joint)
    return out, out_joint


#: Columns per block of the wide joint scan (:func:`_joint_blocks`): every subset of a block's columns has its sum
#: computed once per query and tile (2⁴ = 16 rows of the tile), and each set adds one of them per block.
_BLOCK_COLUMNS = 4
#: Blocks whose subset sums are kept at once (32 columns): each set's sum adds its 8 subsets in one pass over the
#: tile, one load and one store of its running sum per 8 additions, with the 8 × 16 rows near the first-level cache.
_CHUNK_BLOCKS = 8
#: Rows per segment of the wide joint scan's first pass: each (query, set) keeps the smallest sum of every segment,
#: so that the second pass recomputes the integer sums of a quarter tile, not of a whole one.
_SEGMENT = 64


def block_patterns(sets: list[np.ndarray], d: int) -> np.ndarray:
    """Each set's columns as one 4-bit pattern per block of :data:`_BLOCK_COLUMNS` columns (bit j: column 4b + j),
    blocks padded with empty patterns to a whole number of chunks of :data:`_CHUNK_BLOCKS`: shape (sets, blocks).

    >>> block_patterns([np.array([0, 1, 5]), np.array([2, 9])], 10)[:, :3].tolist()
    [[3, 2, 0], [4, 0, 2]]
    """
    blocks = -(-d // (_BLOCK_COLUMNS * _CHUNK_BLOCKS)) * _CHUNK_BLOCKS
    patterns = np.zeros((len(sets), blocks), dtype=np.intp)
    for r, columns in enumerate(sets):
        np.bitwise_or.at(patterns[r], np.asarray(columns) // _BLOCK_COLUMNS,
                         np.left_shift(1, np.asarray(columns) % _BLOCK_COLUMNS))
    return patterns


@numba.njit(cache=True, nogil=True)
def _joint_blocks(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
                  queries_q: np.ndarray, columns: np.ndarray, count: np.ndarray, patterns: np.ndarray,
                  margins: np.ndarray, joint_margin: int, with_all_but_one: bool, levels: int,
                  ceiling: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """The joint scan for many columns (:func:`joint_nearest`): pass 1 adds, for every set, the sums of its columns'
    subsets in blocks of four (:func:`block_patterns`; the 16 subset sums of a block are computed once per query and
    tile), about d/4 additions per set instead of its h; pass 2 is :func:`_resolve_batch`. ``block_q`` is padded to
    whole tiles; its padding rows get the largest term in every column (as :func:`_pad_terms`)."""
    d, c = block.shape
    m = queries.shape[0]
    n_sets, n_blocks = patterns.shape
    out = np.empty((m, n_sets), dtype=np.intp)
    out_joint = np.empty((m if with_all_but_one else 0, d), dtype=np.intp)
    tiles = block_q.shape[1] // _JOINT_TILE
    per_tile = _JOINT_TILE // _SEGMENT
    batch = min(m, _QUERY_BATCH)
    lows = np.empty((batch, n_sets, tiles * per_tile), dtype=np.int64)
    low_total = np.empty((batch, tiles), dtype=np.int64)
    low_rest = np.empty((batch, tiles), dtype=np.int64)
    table = np.zeros((_CHUNK_BLOCKS, 1 << _BLOCK_COLUMNS, _JOINT_TILE), dtype=block_q.dtype)  # subset 0 stays 0
    sums = np.empty((n_sets, _JOINT_TILE), dtype=block_q.dtype)
    terms = np.empty((d, _JOINT_TILE), dtype=block_q.dtype)
    acc = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    total = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    top = np.empty(_JOINT_TILE, dtype=block_q.dtype)
    survivors = np.empty(c if with_all_but_one else 0, dtype=np.intp)
    survivor_terms = np.empty((c if with_all_but_one else 0, d + 1))
    for first in range(0, m, batch):
        size = min(m, first + batch) - first
        for t in range(tiles):
            start = t * _JOINT_TILE
            width = min(c, start + _JOINT_TILE) - start
            for b in range(size):
                q = first + b
                if with_all_but_one:
                    total[:] = 0
                    top[:] = 0
                for b0 in range(0, n_blocks, _CHUNK_BLOCKS):
                    for bb in range(_CHUNK_BLOCKS):
                        for j in range(_BLOCK_COLUMNS):  # the single columns' terms (0 beyond the d columns)
                            k = (b0 + bb) * _BLOCK_COLUMNS + j
                            bit = 1 << j
                            if k < d:
                                tq = queries_q[q, k]
                                for i in range(_JOINT_TILE):
                                    v = block_q[k, start + i]
                                    table[bb, bit, i] = max(tq, v) - min(tq, v)
                                for i in range(width, _JOINT_TILE):  # padding rows: never nearest
                                    table[bb, bit, i] = levels
                                if with_all_but_one:
                                    for i in range(_JOINT_TILE):
                                        total[i] += table[bb, bit, i]
                                        top[i] = max(top[i], table[bb, bit, i])
                            else:
                                for i in range(_JOINT_TILE):
                                    table[bb, bit, i] = 0
                        for pattern in range(3, 1 << _BLOCK_COLUMNS):  # every other subset: a smaller one + a column
                            lowest = pattern & -pattern
                            if lowest == pattern:
                                continue
                            for i in range(_JOINT_TILE):
                                table[bb, pattern, i] = table[bb, pattern - lowest, i] + table[bb, lowest, i]
                    for s in range(n_sets):  # 8 subsets per set and pass: the running sum read and written once
                        p0 = patterns[s, b0]
                        p1 = patterns[s, b0 + 1]
                        p2 = patterns[s, b0 + 2]
                        p3 = patterns[s, b0 + 3]
                        p4 = patterns[s, b0 + 4]
                        p5 = patterns[s, b0 + 5]
                        p6 = patterns[s, b0 + 6]
                        p7 = patterns[s, b0 + 7]
                        if b0 == 0:
                            for i in range(_JOINT_TILE):
                                sums[s, i] = (((table[0, p0, i] + table[1, p1, i]) + (table[2, p2, i] + table[3, p3, i]))
                                              + ((table[4, p4, i] + table[5, p5, i]) + (table[6, p6, i] + table[7, p7, i])))
                        else:
                            for i in range(_JOINT_TILE):
                                sums[s, i] += (((table[0, p0, i] + table[1, p1, i]) + (table[2, p2, i] + table[3, p3, i]))
                                               + ((table[4, p4, i] + table[5, p5, i]) + (table[6, p6, i] + table[7, p7, i])))
                for s in range(n_sets):  # each segment's smallest sum
                    for g in range(per_tile):
                        low = ceiling[0]
                        for i in range(g * _SEGMENT, (g + 1) * _SEGMENT):
                            low = min(low, sums[s, i])
                        lows[b, s, t * per_tile + g] = low
                if with_all_but_one:
                    low_t = np.int64(_NO_SUM)
                    low_r = np.int64(_NO_SUM)
                    for i in range(_JOINT_TILE):
                        low_t = min(low_t, np.int64(total[i]))
                        low_r = min(low_r, np.int64(total[i]) - np.int64(top[i]))
                    low_total[b, t] = low_t
                    low_rest[b, t] = low_r
        _resolve_batch(block, block_q, candidates, queries, queries_q, columns, count, margins, joint_margin,
                       with_all_but_one, first, size, lows, low_total, low_rest, terms, acc, total, top, survivors,
                       survivor_terms, out, out_joint)
    return out, out_joint


#: Bytes of one query's term rows in a tile of the joint scan (the d columns' and the shared pairs' rows): the pairs
#: that would take them beyond this are not made (:func:`pair_limit`). Every term row is read by several sets while it
#: sits in the caches; past the second-level cache (512 KB a core here) a shared addition costs more than it saves.
_PAIR_BYTES = 1 << 18


def pair_limit(d: int) -> int:
    """Most shared pairs :func:`shared_pairs` makes for sums over d columns: as many as keep the joint scan's term rows
    of one tile within :data:`_PAIR_BYTES` (16-bit terms up to :data:`NARROW_COLUMNS` columns, 32-bit beyond), none
    when the d columns' rows alone fill them. It bounds the plan's cost as well: at most this many steps, each
    O((d + limit)²).

    >>> pair_limit(15), pair_limit(100), pair_limit(300)
    (497, 156, 0)
    """
    lane_bytes = 2 if d <= NARROW_COLUMNS else 4
    return max(0, _PAIR_BYTES // (_JOINT_TILE * lane_bytes) - d)


def shared_pairs(sets: list[list[int]], d: int, limit: int | None = None) -> tuple[np.ndarray, list[list[int]]]:
    """Common pairs of several sums (Paar's greedy elimination): while some pair of terms appears in two sets or more,
    the most frequent pair (first in sorted order on ties) becomes a new term d, d + 1, … = the sum of the two, and
    each set holding both uses it instead — at most ``limit`` pairs (default :func:`pair_limit`). Returns the pairs,
    shape (P, 2), in the order to compute them, and each set's terms. A set's integer sum then adds the same terms in
    another grouping: the same integer.

    The count of every pair is kept up to date instead of recounted: replacing (a, b) by w in the sets R that hold
    both takes, for every term t, the number of sets of R holding t off the counts of (a, t) and (b, t) and gives it
    to (w, t). Each step is O(|R|·width + width²), not the O(sets·width²) of a recount (which took 12.5 of the
    13.8 CPU s of one release's attacks on 2,000 rows × 100 columns).

    >>> pairs, plan = shared_pairs([[0, 1, 2], [0, 1, 3], [1, 2, 3]], 4)
    >>> pairs.tolist(), plan
    ([[0, 1]], [[2, 4], [3, 4], [1, 2, 3]])
    """
    limit = pair_limit(d) if limit is None else max(0, int(limit))
    limit = min(limit, sum(len(s) for s in sets))  # each new term removes at least two memberships
    total = d + limit
    member = np.zeros((len(sets), total), dtype=bool)
    for r, terms in enumerate(sets):
        member[r, list(terms)] = True
    counts = np.zeros((total, total), dtype=np.int64)  # sets holding both terms, for every pair (0 on the diagonal)
    first = member[:, :d].astype(np.float32)
    counts[:d, :d] = np.rint(first.T @ first)  # exact: at most 2²⁴ sets
    np.fill_diagonal(counts, 0)
    pairs: list[tuple[int, int]] = []
    width = d
    while len(pairs) < limit:
        best = int(np.argmax(counts[:width, :width]))  # the first (a, b) in row-major order among the most frequent
        a, b = divmod(best, width)
        if counts[a, b] < 2:
            break
        both = member[:, a] & member[:, b]
        held = member[both, :width].sum(axis=0)  # for every term, the sets of R holding it (|R| for a and b)
        size = int(held[a])
        for term in (a, b):
            counts[term, :width] -= held
            counts[:width, term] -= held
        counts[a, b] += size  # (a, b) was taken off twice, through a and through b: now 0, no set holds both
        counts[b, a] += size
        counts[a, a] = counts[b, b] = 0
        held[a] = held[b] = 0
        counts[width, :width] = held
        counts[:width, width] = held
        member[both, a] = False
        member[both, b] = False
        member[both, width] = True
        pairs.append((a, b))
        width += 1
    plan = [np.flatnonzero(row).tolist() for row in member]
    return np.array(pairs, dtype=np.intp).reshape(-1, 2), plan


def joint_nearest(rows: np.ndarray, queries: np.ndarray, column_sets: list[np.ndarray], slack: float,
                  all_but_one: bool, candidates: np.ndarray | None = None,
                  shared: tuple[np.ndarray, list[list[int]]] | None = None,
                  cancel: CancelToken | None = None) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Canonical nearest rows on several column sets at once, and optionally on every column but j for every j.

    One pass over the rows per batch of queries: each row's d terms |t_k − v_k| are computed once on the 16-bit grid
    (:func:`quantized_copies`) and every set's sum adds its columns' terms (instead of one pass per set, each
    recomputing its terms from the rows), with the rows read tile by tile (:data:`_JOINT_TILE`) for a whole batch of
    queries (:data:`_QUERY_BATCH`) while they sit in the caches; the sets share their additions
    (:func:`shared_pairs`). The integer sums only filter, with the margins of the module docstring; the canonical
    float64 sums decide, as in :func:`scan_nearest` and :func:`all_but_one_nearest`, so the rows returned are theirs.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
    queries : ndarray, shape (m, d)
    column_sets : list of int arrays
        Ascending known columns, each with at least two.
    slack : float
        As for :func:`all_but_one_nearest` (used by the float64-only fallback).
    all_but_one : bool
        Also return, for every column j, the nearest row on every other column (shape (m, d)).
    candidates : ndarray of int, optional
        Ascending rows holding every row that can be nearest for every query and set (default: all).
    shared : (pairs, plan), optional
        :func:`shared_pairs` of ``column_sets``, when the caller has it (default: computed here).

    Returns
    -------
    per_set : list of ndarray of int, one per set
    every : ndarray of int, shape (m, d), or None

    >>> rows = np.array([[0.0, 0.0, 9.0], [0.0, 5.0, 0.0], [1.0, 1.0, 1.0]])
    >>> per_set, every = joint_nearest(rows, np.array([[0.0, 0.0, 0.0]]), [np.array([0, 2])], 1e-9, True)
    >>> per_set[0].tolist(), every.tolist()
    ([1], [[2, 1, 0]])
    """
    if candidates is None:
        candidates = np.arange(rows.shape[0], dtype=np.intp)
    candidates = np.asarray(candidates, dtype=np.intp)
    sets = [np.asarray(s, dtype=np.intp) for s in column_sets]
    d = rows.shape[1]
    if candidates.size == 0 or d == 0 or any(s.size < 2 or np.any(s[1:] <= s[:-1]) or s[0] < 0 or s[-1] >= d
                                             for s in sets):
        raise InvalidParameterError("the joint scan needs candidate rows and ascending column sets of at least two "
                                    "of the rows' columns")
    block = np.ascontiguousarray(rows[candidates].T, dtype=np.float64)
    sub = np.ascontiguousarray(queries, dtype=np.float64)
    if sub.ndim != 2 or sub.shape[1] != d:
        raise InvalidParameterError(f"queries must have the rows' {d} columns; got shape {sub.shape}")
    if sub.shape[0] == 0:
        nothing = np.empty(0, dtype=np.intp)
        return [nothing.copy() for _ in sets], (np.empty((0, d), dtype=np.intp) if all_but_one else None)
    quantized = quantized_copies(block, sub)
    if quantized is None:  # a spread beyond float64 (or a subnormal one): float64 only, one scan per set
        per_set = []
        for s in sets:
            check_cancel(cancel)
            per_set.append(scan_nearest(rows, queries, s, candidates))
        check_cancel(cancel)
        return per_set, (all_but_one_nearest(rows, queries, slack, candidates, cancel) if all_but_one else None)
    block_q, sub_q, lam, magnitude = quantized
    count = np.array([s.size for s in sets], dtype=np.intp)
    columns = np.zeros((len(sets), max(count, default=1)), dtype=np.intp)
    for r, s in enumerate(sets):
        columns[r, : s.size] = s
    error = term_error(block_q.dtype)
    margins = np.array([grid_margin(2 * int(h), lam, d, magnitude, error) for h in count], dtype=np.int64)
    joint_margin = grid_margin(2 * d - 1, lam, d, magnitude, error)
    c = block.shape[1]
    padded = np.zeros((d, -(-c // _JOINT_TILE) * _JOINT_TILE), dtype=block_q.dtype)
    padded[:, :c] = block_q
    levels = lane_max(block_q.dtype) // d
    ceiling = np.array([lane_max(block_q.dtype)], dtype=block_q.dtype)
    wide = block_q.dtype != np.uint16
    if wide:
        patterns = block_patterns(sets, d)
        additions = int(np.count_nonzero(patterns)) + 2 * d
    else:
        pairs, plan = shared_pairs([s.tolist() for s in sets], d) if shared is None else shared
        sizes = np.array([len(p) for p in plan], dtype=np.intp)
        members = np.zeros((len(sets), max(sizes, default=1)), dtype=np.intp)
        for r, p in enumerate(plan):
            members[r, : len(p)] = p
        additions = int(sizes.sum()) + len(pairs) + 2 * d
    # Queries per call: a cancel is seen between calls (about a quarter of a second of scanning each, at most).
    step = min(_QUERY_BATCH, _call_queries(padded.shape[1] * additions))
    outs, everys = [], []
    for first in range(0, sub.shape[0], step):
        check_cancel(cancel)
        part, part_q = sub[first : first + step], sub_q[first : first + step]
        if wide:
            out, every = _joint_blocks(block, padded, candidates, part, part_q, columns, count, patterns, margins,
                                       joint_margin, bool(all_but_one), levels, ceiling)
        else:
            out, every = _joint(block, padded, candidates, part, part_q, columns, count, pairs, members, sizes,
                                margins, joint_margin, bool(all_but_one), levels, ceiling)
        outs.append(out)
        everys.append(every)
    out = np.concatenate(outs)
    return ([np.ascontiguousarray(out[:, r]) for r in range(len(sets))],
            (np.concatenate(everys) if all_but_one else None))


__all__ = [
    "all_but_one_nearest",
    "box_gaps",
    "joint_nearest",
    "largest_nearest_distance",
    "largest_nearest_without_each",
    "scan_nearest",
]
