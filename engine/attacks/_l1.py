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
  every set's sum adds them, with the additions that sets share done once (:func:`shared_pairs`).

The first pass of each adds integer terms on a 16-bit grid (:func:`quantized_copies`): every column becomes
round(λ(v − lo_k)) with one scale λ for all columns, so an integer term is within e = 1 + 10⁻⁹ of λ|t − v| and a sum
of h terms within h·e of λ times the exact sum S, in any grouping (integers add exactly). The canonical float64 sum
is within E = 4d²·2⁻⁵²·M of S (M the largest |value|). For the canonical nearest row r and the row m with the
smallest integer sum,

.. math:: S_q(r) \le \lambda S(r) + he \le \lambda (S_{can}(r) + E) + he \le \lambda (S_{can}(m) + E) + he
          \le S_q(m) + 2he + 2\lambda E,

so every row within that margin (:func:`grid_margin`) of the smallest integer sum is a survivor, and the canonical
float64 sums of the survivors (usually one or two rows) decide. For the all-but-one sets, a row can be nearest
without column j only if its total minus its largest term is within (2d − 1)e + 2λE of the smallest integer total
(the same chain, with Σ_{k≠j} ≤ T). 16-bit lanes hold 32 terms per AVX-512 instruction and integer minima
vectorise: the passes take about half the CPU of the float32 passes they replaced (nigeria-demo,
``benchmarks/bench_attacks.py``). Inputs whose spread is not a finite float64 are scanned in float64 only
(:func:`_scan64`, :func:`_all_but_one64`, with the relative slack of the joint search).

Compiled with numba, as the singling-out scan (:mod:`engine.attacks._chebyshev`); cached next to this module.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.errors import InvalidParameterError

#: Largest value of a 16-bit sum: every partial sum of the integer passes must fit.
_U16_MAX = 65535
#: Allowance per integer term over λ|t − v|: two roundings to the nearest integer and the float64 rounding of λ(v − lo).
_TERM_ERROR = 1.0 + 1e-9


def quantized_copies(block: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """16-bit integer copies of ``block`` (d columns × rows) and ``queries`` (queries × d) for the scans' first pass,
    the scale λ of their grid and the largest |value| M (for :func:`grid_margin`); None if the spread of a column is
    not a finite float64 or so small that λ is not.

    Column k becomes round(λ·(v − lo_k)), lo_k its smallest value over both, with ONE λ for every column:
    λ = ⌊65535 / d⌋ / (the largest spread of a column), so that a sum of up to d terms fits 16 bits. With one λ,
    λ·|t − v| = |λ(t − lo_k) − λ(v − lo_k)| for every column, and each integer term |t_q − v_q| is within
    :data:`_TERM_ERROR` of λ|t − v| (two roundings to the nearest integer, each within 1/2, plus the float64 rounding
    of λ·(v − lo_k), below 2·2⁻⁵³·65535). A constant block (every spread 0) gets λ = 0: every term 0.

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
    levels = _U16_MAX // max(d, 1)
    lam = levels / spread if spread > 0.0 else 0.0
    if not np.isfinite(lam):  # a spread below levels / 1.8e308 (subnormal values): the float64 scans
        return None
    block_q = np.minimum(np.rint((block - low[:, None]) * lam), levels).astype(np.uint16)
    queries_q = np.minimum(np.rint((queries - low[None, :]) * lam), levels).astype(np.uint16)
    magnitude = max(float(np.max(np.abs(low), initial=0.0)), float(np.max(np.abs(high), initial=0.0)))
    return np.ascontiguousarray(block_q), np.ascontiguousarray(queries_q), lam, magnitude


def grid_margin(terms: float, lam: float, d: int, magnitude: float) -> int:
    """Margin over the smallest integer sum, in grid units, that keeps every canonical nearest row (module
    docstring): ``terms``·e + 2λE, E = 4d²·2⁻⁵²·M for sums of at most d terms of values at most M in size (the
    canonical float64 sums' rounding), rounded down, plus one (the sums are integers).

    >>> grid_margin(2 * 8, 4096.0, 8, 1.0)
    17
    """
    margin = terms * _TERM_ERROR + 2.0 * lam * 4.0 * d * d * 2.0**-52 * magnitude
    return int(min(margin, 2.0**62)) + 1


#: Rows per tile of the one-set scan: the tile's sums stay in the first-level cache while its columns are added, and
#: the tile's smallest sum lets the survivors' pass skip every tile without one.
_TILE = 1024


@numba.njit(cache=True, nogil=True)
def _scan(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
          queries_q: np.ndarray, margin: int) -> np.ndarray:  # pragma: no cover
    h, c = block.shape
    m = queries.shape[0]
    out = np.empty(m, dtype=np.intp)
    acc = np.empty(c, dtype=np.uint16)
    tiles = (c + _TILE - 1) // _TILE
    tile_low = np.empty(tiles, dtype=np.int64)
    for q in range(m):
        low = np.int64(_U16_MAX)
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
    quantized = quantized_copies(block, sub)
    if quantized is None:  # a spread beyond float64 (or a subnormal one): float64 only
        return _scan64(block, candidates, sub)
    block_q, sub_q, lam, magnitude = quantized
    return _scan(block, block_q, candidates, sub, sub_q, grid_margin(2 * known.size, lam, known.size, magnitude))


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
    total = np.empty(c, dtype=np.uint16)
    largest = np.empty(c, dtype=np.uint16)
    survivors = np.empty(c, dtype=np.intp)
    terms = np.empty((c, d + 1))
    term = np.empty(_TILE, dtype=np.uint16)
    for q in range(m):
        low = np.int64(_U16_MAX)
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
    quantized = quantized_copies(block, sub)
    if quantized is None:  # a spread beyond float64 (or a subnormal one): float64 only
        # Every term |t_k − v_k| is at most this: an absolute scale for the slack.
        term_bound = float(np.max(np.abs(block), initial=0.0)) + float(np.max(np.abs(sub), initial=0.0))
        return _all_but_one64(block, candidates, sub, float(slack), term_bound)
    block_q, sub_q, lam, magnitude = quantized
    d = block.shape[0]
    return _all_but_one(block, block_q, candidates, sub, sub_q, grid_margin(2 * d - 1, lam, d, magnitude))


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
    """16-bit total of the d term rows into ``total``, their largest into ``top``; the smallest total and the smallest
    total − largest (≥ 0: the total holds the largest term)."""
    for i in range(_JOINT_TILE):
        total[i] = terms[0, i]
        top[i] = terms[0, i]
    for k in range(1, d):
        for i in range(_JOINT_TILE):
            total[i] += terms[k, i]
            top[i] = max(top[i], terms[k, i])
    low_total = np.uint16(_U16_MAX)
    low_rest = np.uint16(_U16_MAX)
    for i in range(_JOINT_TILE):
        low_total = min(low_total, total[i])
        low_rest = min(low_rest, np.uint16(total[i] - top[i]))
    return np.int64(low_total), np.int64(low_rest)


@numba.njit(cache=True, nogil=True)
def _joint(block: np.ndarray, block_q: np.ndarray, candidates: np.ndarray, queries: np.ndarray,
           queries_q: np.ndarray, columns: np.ndarray, count: np.ndarray, pairs: np.ndarray,
           members: np.ndarray, sizes: np.ndarray, margins: np.ndarray, joint_margin: int,
           with_all_but_one: bool, levels: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """``block_q`` is padded to whole tiles (:data:`_JOINT_TILE`); ``block`` has the c real rows only."""
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
    terms = np.empty((d + pairs.shape[0], _JOINT_TILE), dtype=np.uint16)
    acc = np.empty(_JOINT_TILE, dtype=np.uint16)
    total = np.empty(_JOINT_TILE, dtype=np.uint16)
    top = np.empty(_JOINT_TILE, dtype=np.uint16)
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
                    low = np.uint16(_U16_MAX)
                    if h == 2:
                        for i in range(_JOINT_TILE):
                            low = min(low, np.uint16(terms[m0, i] + terms[m1, i]))
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
                        low = min(low, np.uint16(acc[i] + terms[m1, i]))
                    lows[b, s, t] = low
                if with_all_but_one:
                    low_total[b, t], low_rest[b, t] = _tile_total(terms, d, total, top)
        # Pass 2, query by query: the canonical float64 sums of the rows within the margin of the smallest 16-bit
        # sum, in the tiles that hold one. Their 16-bit sums are recomputed from the set's own columns: integers,
        # so the same sums as pass 1's (joint_nearest's docstring).
        for b in range(size):
            q = first + b
            for s in range(n_sets):
                low = lows[b, s, 0]
                for t in range(1, tiles):
                    low = min(low, lows[b, s, t])
                threshold = low + margins[s]
                best = 0
                value = np.inf
                for t in range(tiles):
                    if lows[b, s, t] > threshold:
                        continue
                    start = t * _JOINT_TILE
                    width = min(c, start + _JOINT_TILE) - start
                    k = columns[s, 0]
                    tq = queries_q[q, k]
                    for i in range(_JOINT_TILE):
                        v = block_q[k, start + i]
                        acc[i] = max(tq, v) - min(tq, v)
                    for r in range(1, count[s]):
                        k = columns[s, r]
                        tq = queries_q[q, k]
                        for i in range(_JOINT_TILE):
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
    return out, out_joint


def shared_pairs(sets: list[list[int]], d: int) -> tuple[np.ndarray, list[list[int]]]:
    """Common pairs of several sums (Paar's greedy elimination): while some pair of terms appears in two sets or more,
    the most frequent pair (first in sorted order on ties) becomes a new term d, d + 1, … = the sum of the two, and
    each set holding both uses it instead. Returns the pairs, shape (P, 2), in the order to compute them, and each
    set's terms. A set's integer sum then adds the same terms in another grouping: the same integer.

    >>> pairs, plan = shared_pairs([[0, 1, 2], [0, 1, 3], [1, 2, 3]], 4)
    >>> pairs.tolist(), plan
    ([[0, 1]], [[2, 4], [3, 4], [1, 2, 3]])
    """
    total = d + sum(len(s) for s in sets)  # each new term removes at least two memberships
    member = np.zeros((len(sets), total), dtype=np.int32)
    for r, terms in enumerate(sets):
        member[r, list(terms)] = 1
    pairs: list[tuple[int, int]] = []
    width = d
    while True:
        counts = member[:, :width].T @ member[:, :width]  # sets holding both terms, for every pair
        np.fill_diagonal(counts, 0)
        best = int(np.argmax(counts))  # the first (a, b) in row-major order among the most frequent
        a, b = divmod(best, width)
        if counts[a, b] < 2:
            break
        both = (member[:, a] == 1) & (member[:, b] == 1)
        member[both, a] = 0
        member[both, b] = 0
        member[both, width] = 1
        pairs.append((a, b))
        width += 1
    plan = [np.flatnonzero(row).tolist() for row in member]
    return np.array(pairs, dtype=np.intp).reshape(-1, 2), plan


def joint_nearest(rows: np.ndarray, queries: np.ndarray, column_sets: list[np.ndarray], slack: float,
                  all_but_one: bool, candidates: np.ndarray | None = None,
                  shared: tuple[np.ndarray, list[list[int]]] | None = None) -> tuple[list[np.ndarray], np.ndarray | None]:
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
        per_set = [scan_nearest(rows, queries, s, candidates) for s in sets]
        return per_set, (all_but_one_nearest(rows, queries, slack, candidates) if all_but_one else None)
    block_q, sub_q, lam, magnitude = quantized
    count = np.array([s.size for s in sets], dtype=np.intp)
    columns = np.zeros((len(sets), max(count, default=1)), dtype=np.intp)
    for r, s in enumerate(sets):
        columns[r, : s.size] = s
    pairs, plan = shared_pairs([s.tolist() for s in sets], d) if shared is None else shared
    sizes = np.array([len(p) for p in plan], dtype=np.intp)
    members = np.zeros((len(sets), max(sizes, default=1)), dtype=np.intp)
    for r, p in enumerate(plan):
        members[r, : len(p)] = p
    margins = np.array([grid_margin(2 * int(h), lam, d, magnitude) for h in count], dtype=np.int64)
    joint_margin = grid_margin(2 * d - 1, lam, d, magnitude)
    c = block.shape[1]
    padded = np.zeros((d, -(-c // _JOINT_TILE) * _JOINT_TILE), dtype=np.uint16)
    padded[:, :c] = block_q
    out, every = _joint(block, padded, candidates, sub, sub_q, columns, count, pairs, members, sizes, margins,
                        joint_margin, bool(all_but_one), _U16_MAX // d)
    return [np.ascontiguousarray(out[:, r]) for r in range(len(sets))], (every if all_but_one else None)


__all__ = ["all_but_one_nearest", "box_gaps", "joint_nearest", "largest_nearest_distance", "scan_nearest"]
