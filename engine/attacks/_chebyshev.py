r"""The two nearest rows of every centre in the L∞ (Chebyshev) metric, up to a radius (private module).

The singling-out attack (:mod:`engine.attacks.singling_out`) decides every box from the two smallest L∞
distances of its centre to the rows of X. A k-d tree answers that badly on the attack's inputs (15 columns, a
radius as wide as the data itself at c = 1: the tree visits most of its leaves to prove a box holds no second
row). Here each centre scans the rows in the order of ONE column instead — a column in which few rows lie within
the radius (bounded per column from the index's position table, below), outward from the centre — and stops as
soon as the next row of that column is farther than the second-best distance found so far.

Before that walk, a byte filter drops most rows of the window without reading them (:class:`ColumnIndex`). Every
row carries a one-byte code per column: its rank in that column, in 256 buckets of equal count. A row within the
radius of a centre lies, in every column j, between two positions of column j's sorted order (the binary search),
so its code in column j lies between the codes of those two positions. The codes of the window's rows, stored in
the window column's order (one ``d × n`` byte block per column), are compared with those bounds column by column,
32 rows per vector instruction; only the rows that pass in every column are read and get their distance. The
filter can only keep rows it need not keep, never drop one within the radius (the bounds are widened by a few ulps
for the rounding of z ± radius), so the distances are the same floating-point numbers a k-d tree computes
(max over columns of |x_j − z_j|), and the answer is exact. On nigeria-demo the filter leaves 1–5 % of a window's
rows, and the search takes a third to a fifth of the CPU time of the unfiltered walk (``benchmarks/bench_attacks.py``).
Each centre's window comes from a position table of the index: each column's positions at 4,096 equal-width values.
The table brackets every column's rows within reach (checked on the values themselves, :func:`_bracket`), which
bounds each column's count from above and gives bucket bounds for the filter that can only be wider than the exact
ones; the column with the smallest bound is then searched exactly, inside its brackets. Two short binary searches
per centre instead of 2d over all n rows: on nigeria-demo at B = 0.05 the windows take 0.008 instead of 0.039 CPU s,
the whole search 0.040 instead of 0.066.
The centres are visited in the order of their windows (the window's column, then its first row): consecutive
centres then read overlapping codes and rows, which stay in the caches — 15–40 % less CPU than in the release's
order (nigeria-demo and 200,000 generated rows, the same answers).

The index depends only on the ORDER of each column, which a positive scale per column does not change: the
singling-out attack rescales X by the release's column sd at every release, and one index of X serves them all
(:meth:`ColumnIndex.build` once per data set, see ``AnalysisData.so_index``). Its codes take d² n bytes; beyond
:data:`CODES_LIMIT` the index has none and the walk checks every row of the window, as before the filter.

Compiled with numba (a well-kept library; a scan with a data-dependent stop cannot be vectorised in numpy, and
the scipy/scikit-learn k-d trees are 3–6× slower here, see ``benchmarks/bench_attacks.py``). The compiled code
is cached next to this module (``__pycache__``), so a process compiles it once per installation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.errors import InvalidParameterError

#: Largest byte filter (d² n bytes) an index keeps; wider or longer data are searched without it.
CODES_LIMIT = 1 << 28
#: Buckets of a column's code (one byte).
_BUCKETS = 256
#: Equal-width value buckets of a column's position table (:func:`_bracketed_search`).
_TABLE_BUCKETS = 4096


@numba.njit(cache=True, nogil=True, inline="always")
def _bracket(values: np.ndarray, table: np.ndarray, origin: float, inv_width: float, scale: float, target: float,
             right: bool) -> tuple[int, int]:  # pragma: no cover - compiled; tested through _bracketed_search
    """(start, end) with ``np.searchsorted(values, target, "right" if right else "left")`` in [start, end].

    ``values`` is the column sorted and divided by ``scale``; ``table[b]`` the position of the unscaled column's
    value ``origin + b / inv_width`` (``table[-1]`` = n). ``target · scale`` gives the bucket; the table's positions
    one bucket either side bracket the answer, and the bracket is CHECKED on ``values`` themselves (the value before
    it below the target, the value at its end at or above it), so rounding of the scale can only widen it to the
    whole column, never make it wrong."""
    n = values.shape[0]
    last = table.shape[0] - 1  # table[last] = n
    u = (target * scale - origin) * inv_width
    if u >= 0.0:
        b = int(u) if u < last else last
    else:
        b = 0
    start = table[b - 1] if b > 0 else 0
    end = table[b + 2] if b + 2 <= last else n
    if right:
        ok = (start == 0 or values[start - 1] <= target) and (end == n or values[end] > target)
    else:
        ok = (start == 0 or values[start - 1] < target) and (end == n or values[end] >= target)
    if not ok:
        return 0, n
    return start, end


@numba.njit(cache=True, nogil=True, inline="always")
def _bracketed_search(values: np.ndarray, table: np.ndarray, origin: float, inv_width: float, scale: float,
                      target: float, right: bool) -> int:  # pragma: no cover - compiled; tested directly
    """``np.searchsorted(values, target, "right" if right else "left")``, searched only inside :func:`_bracket`: on
    nigeria-demo a few dozen rows instead of 20,000."""
    start, end = _bracket(values, table, origin, inv_width, scale, target, right)
    if right:
        return int(start + np.searchsorted(values[start:end], target, "right"))
    return int(start + np.searchsorted(values[start:end], target, "left"))


@numba.njit(cache=True, nogil=True)
def _windows(sorted_values: np.ndarray, tables: np.ndarray, origins: np.ndarray, inv_widths: np.ndarray,
             scale: np.ndarray, centres: np.ndarray, reach: float, n_rows: int, windows: np.ndarray,
             buckets: np.ndarray) -> None:  # pragma: no cover - compiled; covered through two_nearest_chebyshev
    """Per centre: a column with few rows within reach (``windows[q] = first, start, end`` in that column's order;
    end = start when some column has none) and every column's bucket bounds (``buckets[q, j] = low, width``).

    Every column's rows within reach lie between the brackets of :func:`_bracket` for z_j − reach and z_j + reach,
    so the brackets bound each column's count from above and give bucket bounds that can only be wider than the
    exact ones (the filter then keeps a row it need not, never drops one); the column with the smallest bound is
    searched exactly. Two binary searches per centre instead of 2d."""
    d = sorted_values.shape[0]
    for q in range(centres.shape[0]):
        z = centres[q]
        first = 0
        fewest = n_rows + 1
        low_start = 0
        low_end = 0
        high_start = 0
        high_end = 0
        empty = False
        for j in range(d):
            # Widened by a few ulps: every row with fl(|x_j − z_j|) ≤ reach lies inside.
            pad = 4.0 * 2.220446049250313e-16 * (abs(z[j]) + reach)
            lo_a, lo_b = _bracket(sorted_values[j], tables[j], origins[j], inv_widths[j], scale[j],
                                  z[j] - reach - pad, False)
            hi_a, hi_b = _bracket(sorted_values[j], tables[j], origins[j], inv_widths[j], scale[j],
                                  z[j] + reach + pad, True)
            if hi_b <= lo_a:  # at most hi_b − lo_a rows within reach in this column: none
                empty = True
                break
            if hi_b - lo_a < fewest:
                fewest = hi_b - lo_a
                first = j
                low_start, low_end, high_start, high_end = lo_a, lo_b, hi_a, hi_b
            bucket = (lo_a * 256) // n_rows
            buckets[q, j, 0] = bucket
            buckets[q, j, 1] = ((hi_b - 1) * 256) // n_rows - bucket
        values = sorted_values[first]
        start = low_start + np.searchsorted(values[low_start:low_end], z[first] - reach - 4.0 * 2.220446049250313e-16
                                            * (abs(z[first]) + reach), "left")
        end = high_start + np.searchsorted(values[high_start:high_end], z[first] + reach + 4.0 * 2.220446049250313e-16
                                           * (abs(z[first]) + reach), "right")
        windows[q, 0] = first
        windows[q, 1] = start
        windows[q, 2] = start if empty or end <= start else end


@numba.njit(cache=True, nogil=True)
def _two_nearest(
    rows: np.ndarray, order: np.ndarray, codes: np.ndarray, sorted_values: np.ndarray, tables: np.ndarray,
    origins: np.ndarray, inv_widths: np.ndarray, scale: np.ndarray, centres: np.ndarray, reach: float, filtered: bool,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled; covered through two_nearest_chebyshev
    n, d = rows.shape
    m = centres.shape[0]
    dist = np.full((m, 2), np.inf)
    index = np.full((m, 2), n, dtype=np.intp)
    windows = np.empty((m, 3), dtype=np.intp)
    buckets = np.zeros((m, d, 2), dtype=np.uint8)
    _windows(sorted_values, tables, origins, inv_widths, scale, centres, reach, n, windows, buckets)
    # Centres in the order of their windows (by column, then start): consecutive centres read overlapping windows
    # of the same codes and rows, which stay in the caches (about a third less CPU on 200,000 rows).
    visit = np.argsort(windows[:, 0] * (n + 1) + windows[:, 1])
    keep = np.empty(n, dtype=np.uint8)
    for qq in range(m):
        q = visit[qq]
        first = windows[q, 0]
        start = windows[q, 1]
        end = windows[q, 2]
        if end == start:
            continue  # no row within reach in some column
        z = centres[q]
        ok = keep[: end - start]
        ok[:] = 1
        if filtered:
            for j in range(d):
                low8 = buckets[q, j, 0]
                width8 = buckets[q, j, 1]
                if j == first or (low8 == 0 and width8 == 255):
                    continue
                column = codes[first, j, start:end]
                for p in range(end - start):  # unsigned wrap-around: one compare tests low ≤ code ≤ high
                    ok[p] &= np.uint8(column[p] - low8) <= width8
        values = sorted_values[first]
        rank = order[first]
        zc = z[first]
        right = np.searchsorted(values[start:end], zc) + start
        left = right - 1
        d1 = reach
        d2 = reach
        i1 = n
        i2 = n
        while True:
            while left >= start and ok[left - start] == 0:
                left -= 1
            while right < end and ok[right - start] == 0:
                right += 1
            if left >= start and right < end:
                if zc - values[left] <= values[right] - zc:
                    k = left
                    left -= 1
                else:
                    k = right
                    right += 1
            elif left >= start:
                k = left
                left -= 1
            elif right < end:
                k = right
                right += 1
            else:
                break
            if abs(values[k] - zc) > d2:  # every row left in this column's order is farther
                break
            r = rank[k]
            dr = 0.0
            for j in range(d):
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


@dataclass(frozen=True, eq=False)
class ColumnIndex:
    """Per-column order and byte codes of the rows of X (module docstring); valid for X / s for any positive s.

    Attributes
    ----------
    order : ndarray of intp, shape (d, n)
        Row indices of every column in ascending order of that column.
    sorted_values : ndarray, shape (d, n)
        ``x[order[j], j]``.
    codes : ndarray of uint8, shape (d, d, n) or (1, 1, 1)
        ``codes[f, j, p]``: the bucket (0–255) of row ``order[f, p]``'s rank in column j; a placeholder when the
        filter would exceed :data:`CODES_LIMIT` bytes (``filtered`` is False).
    tables : ndarray of intp, shape (d, 4098)
        ``tables[j, b]``: the position in column j's order of the value ``origins[j] + b / inv_widths[j]`` (b ≤ 4096,
        equal-width buckets over the column's range), then n: the brackets of :func:`_bracketed_search`.
    origins, inv_widths : ndarray, shape (d,)
        Each column's smallest value and 4096 / its range (0 for a constant column).
    """

    order: np.ndarray
    sorted_values: np.ndarray
    codes: np.ndarray
    filtered: bool
    tables: np.ndarray
    origins: np.ndarray
    inv_widths: np.ndarray

    @classmethod
    def build(cls, x: np.ndarray, *, filtered: bool = True) -> ColumnIndex:
        """Index the rows of ``x`` (n × d, finite); ``filtered=False`` leaves the byte filter out (for a search of a
        few centres, which it would not repay), as does data beyond :data:`CODES_LIMIT`.

        >>> index = ColumnIndex.build(np.array([[2.0, 0.0], [1.0, 5.0], [3.0, 1.0]]))
        >>> index.order.tolist(), index.codes[0, 1].tolist()
        ([[1, 0, 2], [0, 2, 1]], [170, 0, 85])
        """
        arr = np.asarray(x, dtype=np.float64)
        if arr.ndim != 2:
            raise InvalidParameterError(f"x must be a matrix (rows × columns); got {arr.ndim} dimension(s)")
        n, d = arr.shape
        columns = np.ascontiguousarray(arr.T)  # sorting contiguous rows is ~3× faster than sorting along axis 0
        order = np.argsort(columns, axis=1, kind="stable")
        sorted_values = np.take_along_axis(columns, order, axis=1)
        filtered = filtered and n > 0 and d * d * n <= CODES_LIMIT
        codes = np.zeros((1, 1, 1), dtype=np.uint8)
        if filtered:
            position = np.empty_like(order)
            np.put_along_axis(position, order, np.arange(n)[None, :], axis=1)
            bucket = (position * _BUCKETS // n).astype(np.uint8)  # (d, n): each row's bucket in each column
            codes = np.empty((d, d, n), dtype=np.uint8)
            for f in range(d):
                codes[f] = bucket[:, order[f]]
        origins = sorted_values[:, 0].copy() if n else np.zeros(d)
        spans = sorted_values[:, -1] - origins if n else np.zeros(d)
        inv_widths = np.divide(_TABLE_BUCKETS, spans, out=np.zeros(d), where=spans > 0)
        tables = np.full((d, _TABLE_BUCKETS + 2), n, dtype=np.intp)
        edges = np.arange(_TABLE_BUCKETS + 1) / _TABLE_BUCKETS
        for j in range(d):
            tables[j, :-1] = np.searchsorted(sorted_values[j], origins[j] + edges * spans[j], "left")
        return cls(order, sorted_values, codes, filtered, tables, origins, inv_widths)

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.order.shape[1]), int(self.order.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.order.nbytes + self.sorted_values.nbytes + self.codes.nbytes + self.tables.nbytes)


def two_nearest_chebyshev(
    rows: np.ndarray, centres: np.ndarray, reach: float,
    index: ColumnIndex | None = None, scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the two nearest rows of every centre in the L∞ metric, up to ``reach``.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
    centres : ndarray, shape (m, d)
    reach : float
        Rows farther than ``reach`` are not reported.
    index : ColumnIndex, optional
        ``ColumnIndex.build(x)`` of the rows before scaling, when ``rows`` is exactly ``x / scale`` (column by
        column, as numpy divides); built from ``rows`` when None.
    scale : ndarray, shape (d,), optional
        The positive column scale of ``rows`` against the index (ones when None).

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
    x = np.ascontiguousarray(rows, dtype=np.float64)
    if index is None:
        index, scale = ColumnIndex.build(x), None
    if index.shape != x.shape:
        raise InvalidParameterError(f"the index covers {index.shape} rows × columns, the rows are {x.shape}")
    sorted_values = index.sorted_values if scale is None else index.sorted_values / np.asarray(scale)[:, None]
    factors = np.ones(x.shape[1]) if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
    z = np.ascontiguousarray(centres, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] != x.shape[1]:
        raise InvalidParameterError(f"centres must have as many columns as the rows ({x.shape[1]}); got shape {z.shape}")
    return _two_nearest(x, index.order, index.codes, np.ascontiguousarray(sorted_values), index.tables, index.origins,
                        index.inv_widths, factors, z, float(reach), index.filtered)
