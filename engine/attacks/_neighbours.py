r"""Exact L1 nearest-neighbour kernels shared by the attacks (private module).

The attribute-inference adversary needs, for every target t (a row of the original data) and every set S of
known columns, the released row v nearest to t on S. The distance is the CANONICAL L1 sum

.. math:: D_S(t, v) = (\dots((|t_{k_1} - v_{k_1}| + |t_{k_2} - v_{k_2}|) + \dots) + |t_{k_h} - v_{k_h}|),
          \quad k_1 < k_2 < \dots < k_h,

and the nearest row is the one with the smallest :math:`D_S`, the LOWEST row index on exact ties
(:func:`canonical_nearest`). Every fast path below returns exactly that row: the scans compute the canonical
sums themselves (compiled, :mod:`engine.attacks._l1`); the one-column search re-solves the queries whose best
and second-best rows are within a relative slack (:data:`SLACK`, many times any rounding), and every bound that
drops rows is widened by it.

Speed (:func:`nearest_on_column_sets`): the targets are split into compact groups of at most :data:`_GROUP_SIZE`
(median splits; the attack's default 500 + 500 targets make one group). For a group g with bounding box
[lo_g, hi_g], the L1 distance on S from any target of the group to a row v is at least

.. math:: LB_{g,S}(v) = \sum_{k \in S} \max(lo_{gk} - v_k,\; v_k - hi_{gk},\; 0),

and all column sets are served by one matrix product (the per-column box gaps times the 0/1 matrix of the
column sets). A few rows with the smallest bound give every target of the group an upper bound U(t) on its
nearest distance; rows with :math:`LB > (1 + \text{slack})\max_g U` can be neither the nearest row nor within
the slack of it and are dropped, the rest are scanned exactly. When the release lies among the targets (little
noise: the first of several groups keeps more than :data:`_PRUNE_FRACTION` of the rows) the remaining targets are
scanned against every row instead. The all-but-one sets are searched together (:func:`nearest_all_but_one`). When
most sets keep most rows (a release among the targets: the data itself, little noise) one joint scan of the kept
rows serves every set (:func:`engine.attacks._l1.joint_nearest`: each row's terms computed once, sums shared
between sets, 16-bit integer sums as a filter), about 2× less CPU than a scan per set. The d all-but-one sets get
their upper bounds in one pass over the seeds of the whole box (:func:`engine.attacks._l1.
largest_nearest_without_each`), not d passes over d − 1 columns each. Many columns make the bounds useless (the
distances concentrate) and the search a joint scan of every row: its cost grows as d² (:func:`search_seconds`, what
the Mechanisms page's time estimate is made of), and a cancel token is looked at between its compiled calls.
The answer is the canonical one in every case; only the work changes.

Rounding of the bound: each float64 gap fl(lo − v) is at most the computed term fl(|t − v|) of every target of
the group (rounding is monotone and lo ≤ t ≤ hi); rounding the non-negative gaps to float32 and summing them in
float32 (one product with the 0/1 matrix of the column sets) adds at most (h + 1)·2⁻²⁴ relative (:func:`bound_slack`
covers it, twice over), so the computed bound is at most (1 + ``bound_slack(h)``)(1 + h·2⁻⁵³) × the computed distance
in any summation order. Rows are dropped only when the bound exceeds (1 + 2·slack)(1 + ``bound_slack(h)``) × U:
never a row within the
slack of a target's nearest distance.
"""

from __future__ import annotations

import math

import numpy as np

from engine.progress import CancelToken

#: Relative slack that covers every summation-order rounding (≈ d·2⁻⁵³) many times over: a query whose two best
#: distances are within it is re-solved canonically; candidate sets are widened by it.
SLACK = 1e-9
#: Query rows × release rows per block of the canonical (reference) search: 8 MB of float64.
_BLOCK = 1 << 20
#: Targets per group (median splits until groups are at most this big). Each group costs a pass over every row and
#: column set (the bounds, the seed rows); with the float32 scans (engine.attacks._l1) the looser box of a bigger
#: group costs less than those passes. Attribute inference per cell, 1,000 targets, CPU s at group size 64 / 256 /
#: 1024 (2-core machine, identical results): nigeria-demo B = 0.25 0.23 / 0.17 / 0.16, B = 1 0.20 / 0.085 / 0.073,
#: B = 0.05 0.58 / 0.58 / 0.59; generated 25,000 × 30 B = 0.25 0.48 / 0.22 / 0.16; 200,000 × 15 1.71 / 0.82 / 0.49.
_GROUP_SIZE = 1024
#: Rows with the smallest bound whose exact distances give each target its upper bound U(t).
_SEED_ROWS = 64
#: Smallest relative error allowance of the float32 bound (:func:`bound_slack`).
_BOUND_SLACK = 1e-5


def bound_slack(h: int) -> float:
    """Relative error allowance of the float32 bound of a set of h known columns: (h + 1)·2⁻²³, twice the rounding of
    h float32 terms and their sum, and at least :data:`_BOUND_SLACK` (what every set had until wide tables were
    searched: it covers up to 82 columns twice over, 166 once; at 500 the rounding reaches 3·10⁻⁵).

    >>> bound_slack(40) == _BOUND_SLACK, bound_slack(499) >= 500 * 2.0**-24
    (True, True)
    """
    return max(_BOUND_SLACK, (h + 1) * 2.0**-23)
#: When the first group's boxes keep more than this share of (row, column set) pairs, the rest is scanned unbounded.
_PRUNE_FRACTION = 0.5
#: CPU ns per (query, row) of the scans, for choosing between them (:func:`_bounded`; medians of 5 runs of 5 on
#: nigeria-demo's 15 columns at B = 0.05 and 0.25, 2-core AMD EPYC machine, 2026-11-27; every first pass on the 16-bit
#: grid of :mod:`engine.attacks._l1`): a separate scan per known column (0.033-0.041); the all-but-one scan per
#: column (0.079); the joint scan per column, set and addition of its shared-pair plan (0.024, whole tiles); the joint
#: scan's all-but-one part per column (0.066).
_COSTS = {"separate": 0.037, "all-but-one": 0.079, "joint": 0.024, "joint all-but-one": 0.066}
#: The same beyond :data:`engine.attacks._l1.NARROW_COLUMNS` columns (32-bit terms; the joint scan adds one subset
#: sum per block of four columns, :func:`engine.attacks._l1.block_patterns`), CPU ns per (query, row) and: column of a
#: separate scan (0.20), column of the all-but-one scan (0.57-0.79), subset sum of the joint scan (0.14-0.16),
#: column of the joint scan's all-but-one part (0.4-1.1). Generated 1,600 rows × 200 and 500 columns, 300 queries,
#: 2026-11-28, at a load of 7-10 on the 2 cores (the ratios are what matters here).
_WIDE_COSTS = {"separate": 0.20, "all-but-one": 0.7, "joint": 0.15, "joint all-but-one": 0.6}
#: Rows sharing a value with a query equal to a row, at most, for answering it by sorting (:func:`_at_distance_zero`).
_ZERO_RANGE = 64
#: Below this many (query, row) pairs a plain blocked scan is cheaper than bounding.
_SCAN_PAIRS = 1 << 18


#: The time estimate's costs beyond :data:`engine.attacks._l1.NARROW_COLUMNS` columns (:func:`search_seconds`), CPU
#: ns per (target, released row) and: subset sum of the joint scan; column (the all-but-one part, the single columns'
#: sorts and the bounds, which grow with d). Fitted to the attribute-inference CPU seconds of four releases' attacks on
#: 2,000 rows (``benchmarks/bench_wide.py``, 2026-11-28, load 7-8 on the 2 cores): 2.4 / 7.0 / 12.7 / 29.6 / 31.8 s
#: measured at 100 / 200 / 300 / 450 / 500 columns, 2.4 / 6.9 / 13.5 / 27.6 / 33.2 s fitted.
_SEARCH_WIDE_NS = (0.079, 2.0)


def search_seconds(n_rows: int, n_targets: int, d: int, *, half: bool = True, all_but_one: bool = True) -> float:
    """Estimated CPU seconds of :func:`nearest_on_column_sets` for the attribute-inference attack on ``n_rows``
    released rows × d columns and ``n_targets`` targets: a set of min(⌈d/2⌉, d − 1) columns for every secret column
    (``half``) and the d all-but-one sets (``all_but_one``; single columns are sorted, nearly free).

    The model is the joint scan of every row for every target (:func:`engine.attacks._l1.joint_nearest`): up to
    :data:`engine.attacks._l1.NARROW_COLUMNS` columns with the costs of :data:`_COSTS` (its additions about halved by
    the shared pairs), beyond with one subset sum per set and block of four columns at the fitted costs of
    :data:`_SEARCH_WIDE_NS`. It is what a release among the targets costs (little noise, or many columns, where the
    bounds stop paying); a noisy release of few columns is pruned and costs less. An estimate for telling people how
    long to wait, not a bound.

    >>> round(search_seconds(1_600, 900, 500), 1), round(search_seconds(1_600, 900, 100), 2)
    (8.3, 0.6)
    """
    from engine.attacks._l1 import NARROW_COLUMNS

    if d < 2 or n_rows < 1 or n_targets < 1:
        return 0.0
    h = min(math.ceil(d / 2), d - 1)
    if d > NARROW_COLUMNS:
        blocks = math.ceil(d / 4)
        hit = 1.0 - (1.0 - h / d) ** 4  # the share of a set's blocks holding one of its columns or more
        subset_sums = d * blocks * hit + 4.0 * d
        per_row = (_SEARCH_WIDE_NS[0] * subset_sums if half else 0.0) + _SEARCH_WIDE_NS[1] * d
    else:
        adds = (d * (h - 1) / 2.0 + d if half else 0.0) + d
        per_row = _COSTS["joint"] * adds + (_COSTS["joint all-but-one"] * d if all_but_one else 0.0)
    return float(n_rows) * float(n_targets) * per_row * 1e-9


def canonical_nearest(rows: np.ndarray, queries: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Reference search: canonical L1 distance on the columns ``known`` (ascending), lowest index on ties.

    >>> rows = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> canonical_nearest(rows, np.array([[0.5, 0.5], [0.9, 0.0]]), np.array([0, 1])).tolist()
    [0, 1]
    """
    out = np.empty(queries.shape[0], dtype=np.intp)
    step = max(1, _BLOCK // max(1, rows.shape[0]))
    for start in range(0, queries.shape[0], step):
        block = queries[start : start + step]
        dist = np.zeros((block.shape[0], rows.shape[0]))
        for k in known:  # sequential sum in column order: the canonical rounding
            dist += np.abs(block[:, k, None] - rows[None, :, k])
        out[start : start + step] = np.argmin(dist, axis=1)  # argmin: first (lowest) index on ties
    return out


def nearest_1d(values: np.ndarray, queries: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Canonical nearest neighbour on one column by sorting: O((n + q) log n).

    ``order`` may pass ``np.argsort(values)`` when it is already known. The order of equal values does not matter
    (numpy's default sort, 4× faster than a stable one on 20,000 values): a query with two rows within the slack of
    its best distance — equal values among them — is re-solved canonically.

    >>> nearest_1d(np.array([3.0, 1.0, 2.0, 1.0]), np.array([1.2, 2.6, 0.0])).tolist()
    [1, 0, 1]
    """
    n = values.shape[0]
    if order is None:
        order = np.argsort(values)
    sorted_values = values[order]
    pos = np.searchsorted(sorted_values, queries, side="left")
    left = np.clip(pos - 1, 0, n - 1)
    right = np.clip(pos, 0, n - 1)
    d_left = np.where(pos > 0, np.abs(queries - sorted_values[left]), np.inf)
    d_right = np.where(pos < n, np.abs(queries - sorted_values[right]), np.inf)
    best = np.minimum(d_left, d_right)
    nearest = order[np.where(d_left <= d_right, left, right)]
    # Any other row (a duplicate value, or one at the same distance on the other side) within the slack?
    pad = SLACK * (best + np.abs(queries)) + np.finfo(float).tiny
    lo = np.searchsorted(sorted_values, queries - best - pad, side="left")
    hi = np.searchsorted(sorted_values, queries + best + pad, side="right")
    unsure = np.flatnonzero(hi - lo != 1)
    if unsure.size:
        nearest[unsure] = canonical_nearest(values[:, None], queries[unsure, None], np.array([0]))
    return nearest


def _scan(rows: np.ndarray, queries: np.ndarray, known: np.ndarray, candidates: np.ndarray | None = None,
          cancel: CancelToken | None = None) -> np.ndarray:
    """Canonical nearest row (an index into ``rows``) for every query, scanning ``candidates`` (default: all).

    ``candidates`` must be ascending and hold every row that can be nearest for each query. The compiled scan
    (:func:`engine.attacks._l1.scan_nearest`) computes the canonical sums themselves.
    """
    # numba: loaded when a scan runs, not when this module is imported
    from engine.attacks._l1 import scan_nearest

    return scan_nearest(rows, queries, known, candidates, cancel)


def nearest_all_but_one(rows: np.ndarray, queries: np.ndarray, candidates: np.ndarray | None = None,
                        cancel: CancelToken | None = None) -> np.ndarray:
    """Canonical nearest row on every column but j, for every secret column j at once: shape (q, d).

    With t(i) the L1 distance on all d columns and m(i) the largest single-column term (Chebyshev distance),
    the distance without column j is t(i) − |t_j − v_ij| ≥ t(i) − m(i) for every j, while the best distance
    without column j is at most min_i t(i). So only rows with t(i) − m(i) ≤ min_i t(i) (widened by the slack) can
    be nearest for any j (a handful per query on real releases); their canonical distances are computed exactly.
    Two passes over the rows per query (:func:`engine.attacks._l1.all_but_one_nearest`) instead of d.
    ``candidates`` (ascending) restricts the rows searched.

    >>> rows = np.array([[0.0, 0.0, 9.0], [0.0, 5.0, 0.0], [1.0, 1.0, 1.0]])
    >>> nearest_all_but_one(rows, np.array([[0.0, 0.0, 0.0]])).tolist()
    [[2, 1, 0]]
    """
    from engine.attacks._l1 import all_but_one_nearest

    return all_but_one_nearest(rows, queries, SLACK, candidates, cancel)


def _unbounded(rows, queries, subset, sets, multi, joint, results, cancel=None) -> None:
    """Canonical nearest rows for the queries ``subset`` by full scans (no bounds), into ``results``."""
    everything = np.ones(rows.shape[0], dtype=bool)
    _bounded(rows, queries, subset, sets, multi, joint, [everything] * len(multi), results, cancel)


def _left_out(known: np.ndarray, d: int) -> int:
    """The smallest of the d columns not in ``known`` (the secret column of an all-but-one set): what
    ``np.setdiff1d(np.arange(d), known)[0]`` is, without its sorts (they were a tenth of a small search).

    >>> _left_out(np.array([0, 1, 3]), 4), _left_out(np.array([1, 2]), 3)
    (2, 0)
    """
    missing = np.ones(d, dtype=bool)
    missing[known] = False
    return int(np.argmax(missing))


def _bounded(rows, queries, subset, sets, multi, joint, keeps, results, cancel=None) -> None:
    """Canonical nearest rows for the queries ``subset`` on the sets ``multi`` (``joint``: those of d − 1 columns),
    scanning for set ``multi[r]`` the rows ``keeps[r]`` (a mask holding every row that can be nearest), into
    ``results``: one joint scan of the union of the kept rows (:func:`engine.attacks._l1.joint_nearest`) or
    separate scans per set and one all-but-one scan, whichever the cost model (:data:`_COSTS`, :data:`_WIDE_COSTS`)
    says is cheaper. The rows found are the same either way."""
    from engine.attacks._l1 import NARROW_COLUMNS, block_patterns, joint_nearest, shared_pairs

    d = rows.shape[1]
    block = queries[subset]
    joint_set = set(joint)
    separate_sets = [r for r, i in enumerate(multi) if i not in joint_set]
    counts = [int(np.count_nonzero(keep)) for keep in keeps]
    union = np.logical_or.reduce(keeps) if keeps else np.zeros(rows.shape[0], dtype=bool)
    joint_union = (np.logical_or.reduce([keeps[r] for r, i in enumerate(multi) if i in joint_set])
                   if joint else np.zeros(rows.shape[0], dtype=bool))
    wide = d > NARROW_COLUMNS
    cost = _WIDE_COSTS if wide else _COSTS
    separate_cost = cost["separate"] * sum(counts[r] * sets[multi[r]].size for r in separate_sets)
    if joint:
        separate_cost += cost["all-but-one"] * d * int(np.count_nonzero(joint_union))
    chosen = [sets[multi[r]] for r in separate_sets]
    shared: tuple[np.ndarray, list[list[int]]] | None = None
    if wide:  # one subset sum per set and block, and the blocks' 16 subset sums (about 4 additions a column)
        adds = int(np.count_nonzero(block_patterns(chosen, d))) + 4 * d
    else:
        shared = shared_pairs([c.tolist() for c in chosen], d)
        adds = sum(len(p) - 1 for p in shared[1]) + len(shared[0]) + d + len(chosen)
    joint_cost = int(np.count_nonzero(union)) * (cost["joint"] * adds
                                                 + (cost["joint all-but-one"] * d if joint else 0.0))
    if joint_cost < separate_cost:
        found, every = joint_nearest(rows, block, chosen, SLACK, bool(joint), np.flatnonzero(union), shared, cancel)
        for r, result in zip(separate_sets, found, strict=True):
            results[multi[r]][subset] = result
    else:
        for r in separate_sets:
            results[multi[r]][subset] = _scan(rows, block, sets[multi[r]], np.flatnonzero(keeps[r]), cancel)
        every = nearest_all_but_one(rows, block, np.flatnonzero(joint_union), cancel) if joint else None
    if every is not None:
        for i in joint:
            results[i][subset] = every[:, _left_out(sets[i], d)]


def _seed_rows(bound: np.ndarray) -> np.ndarray:
    """:data:`_SEED_ROWS` rows with the smallest ``bound`` (any of them: their exact distances only give the targets
    an upper bound). When that many bounds are 0 — a box holding much of the release — the first zeros: a partial
    sort among thousands of equal values took 5-10× longer than on distinct ones.

    >>> _seed_rows(np.array([3.0, 1.0, 2.0] * 30, dtype=np.float32)).size
    64
    """
    zeros = np.flatnonzero(bound == 0.0)
    if zeros.size >= _SEED_ROWS:
        return zeros[:_SEED_ROWS]
    return np.argpartition(bound, _SEED_ROWS)[:_SEED_ROWS]


def query_groups(queries: np.ndarray, size: int | None = None) -> list[np.ndarray]:
    """Split query indices into compact groups of at most ``size`` by median splits on the widest column.

    >>> [g.tolist() for g in query_groups(np.array([[0.0], [5.0], [1.0], [6.0]]), size=2)]
    [[0, 2], [1, 3]]
    """
    size = _GROUP_SIZE if size is None else size
    out: list[np.ndarray] = []
    stack = [np.arange(queries.shape[0])]
    while stack:
        idx = stack.pop()
        if idx.size <= size:
            out.append(np.sort(idx))
            continue
        block = queries[idx]
        col = int(np.argmax(block.max(axis=0) - block.min(axis=0)))
        order = np.argsort(block[:, col], kind="stable")
        half = idx.size // 2
        stack += [idx[order[half:]], idx[order[:half]]]
    return out


def _at_distance_zero(rows: np.ndarray, queries: np.ndarray, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Queries equal to a row, answered without a search: ``(settled, answers)``, answers of shape (sets, settled).

    A query equal to row r (every column) is at canonical distance 0.0 from r on every set S, and a
    row is at distance 0.0 on S exactly when it equals the query on S (a sum of non-negative terms is 0 only when
    each is, and |a − b| = 0 only when a = b). So its canonical nearest row on S is the LOWEST index among the rows
    equal to it on S. Sorting finds them: the rows sharing the query's value in S's column with the most distinct
    values (r only, in continuous data) are compared on S; when more than :data:`_ZERO_RANGE` rows share it, the
    rows are grouped by their values on S instead. The equal row itself is found the same way in the data's most
    varied column; queries whose value there is shared by more than :data:`_ZERO_RANGE` rows, and queries equal to
    no row, are left to the search.

    >>> rows = np.array([[0.0, 1.0, 5.0], [0.0, 1.0, 2.0], [3.0, 1.0, 2.0]])
    >>> settled, answers = _at_distance_zero(rows, rows[[1, 2]], [np.array([0, 1]), np.array([1, 2])])
    >>> settled.tolist(), answers.tolist()
    ([0, 1], [[0, 2], [1, 1]])
    """
    n, d = rows.shape
    m = queries.shape[0]
    empty = (np.empty(0, dtype=np.intp), np.empty((len(sets), 0), dtype=np.intp))
    if n == 0 or m == 0 or d == 0 or not sets or not np.isin(queries[:, 0], rows[:, 0]).any():
        return empty  # no query shares even its first value with a row (a noisy release): nothing to settle
    columns = np.ascontiguousarray(rows.T)
    orders = np.argsort(columns, axis=1)  # per column (equal values in any order: the lowest index is taken below)
    ordered = np.take_along_axis(columns, orders, axis=1)
    distinct = 1 + np.count_nonzero(ordered[:, 1:] != ordered[:, :-1], axis=1)
    key = int(np.argmax(distinct))  # the most varied column finds each query's equal row, if any
    lo = np.searchsorted(ordered[key], queries[:, key], side="left")
    hi = np.searchsorted(ordered[key], queries[:, key], side="right")
    equal = np.full(m, -1, dtype=np.intp)
    one = np.flatnonzero(hi - lo == 1)  # one row has the value: the query equals it or no row
    row = orders[key, lo[one]]
    equal[one[np.all(rows[row] == queries[one], axis=1)]] = row[np.all(rows[row] == queries[one], axis=1)]
    for q in np.flatnonzero((hi - lo > 1) & (hi - lo <= _ZERO_RANGE)):
        candidates = orders[key, lo[q] : hi[q]]
        same = candidates[np.all(rows[candidates] == queries[q], axis=1)]
        if same.size:
            equal[q] = same.min()
    settled = np.flatnonzero(equal >= 0)
    if settled.size == 0:
        return empty
    answers = np.empty((len(sets), settled.size), dtype=np.intp)
    for i, known in enumerate(sets):
        column = int(known[np.argmax(distinct[known])])
        values = queries[settled, column]
        lo = np.searchsorted(ordered[column], values, side="left")
        hi = np.searchsorted(ordered[column], values, side="right")
        answers[i] = equal[settled]
        shared = np.flatnonzero(hi - lo > 1)  # other rows share the value: compare them on S
        if shared.size and int(np.max(hi[shared] - lo[shared])) > _ZERO_RANGE:
            # Columns of few values: group the rows by their values on S (+ 0.0: −0.0 and 0.0 are one value); the
            # first row of each group is its lowest index.
            values_on_s = np.ascontiguousarray(rows[:, known]) + 0.0
            keys = values_on_s.view(np.dtype((np.void, values_on_s.dtype.itemsize * known.size))).ravel()
            _, first, group = np.unique(keys, return_index=True, return_inverse=True)
            answers[i] = first[group.ravel()[equal[settled]]]
            continue
        for j in shared:
            candidates = orders[column, lo[j] : hi[j]]
            same = candidates[np.all(rows[np.ix_(candidates, known)] == queries[settled[j], known], axis=1)]
            answers[i, j] = same.min()  # the query's own row is among them
    return settled, answers


def nearest_on_column_sets(
    rows: np.ndarray, queries: np.ndarray, column_sets: list[np.ndarray], cancel: CancelToken | None = None
) -> list[np.ndarray]:
    """Canonical nearest row of ``rows`` for every query, on each set of known columns.

    Parameters
    ----------
    rows : ndarray, shape (n, d)
        Candidate rows (the adversary's scaled view of the release).
    queries : ndarray, shape (q, d)
        Targets (scaled like ``rows``).
    column_sets : list of int arrays
        Known columns, each ascending and non-empty.
    cancel : CancelToken, optional
        Checked between the compiled scans' calls (each a few tenths of a second at most) and between query groups;
        a cancel raises :class:`~engine.errors.CancelledError`.

    Returns
    -------
    list of ndarray of int
        For each column set, the index of the canonical nearest row for every query (see the module docstring).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows, queries = rng.normal(size=(300, 4)), rng.normal(size=(50, 4))
    >>> sets = [np.array([0]), np.array([1, 3]), np.array([0, 1, 2])]
    >>> all(np.array_equal(a, canonical_nearest(rows, queries, s))
    ...     for a, s in zip(nearest_on_column_sets(rows, queries, sets), sets))
    True
    """
    rows = np.ascontiguousarray(rows, dtype=float)
    queries = np.ascontiguousarray(queries, dtype=float)
    n, d = rows.shape
    # Repeated rows (a k-anonymous release repeats each group's values) are at the same distance from every
    # target: search the first copy of each only (kept in row order, so the lowest index still wins a tie) — else
    # nearly every target has an exact tie and is re-solved by the canonical brute force.
    if n and d and np.unique(rows[:, 0]).size < n:  # a distinct first column (a noisy release) rules repeats out
        as_bytes = rows.view(np.dtype((np.void, rows.dtype.itemsize * d))).ravel()  # equal bytes: equal distances
        _, first = np.unique(as_bytes, return_index=True)
        if first.size < n:
            distinct = np.sort(first)
            return [distinct[found] for found in nearest_on_column_sets(rows[distinct], queries, column_sets, cancel)]
    sets = [np.asarray(s, dtype=np.intp) for s in column_sets]
    # Queries equal to a row (the data themselves as the release: the non-private reference's main targets) are
    # answered without a search where sorting settles them (:func:`_at_distance_zero`); the rest are searched.
    settled, answers = _at_distance_zero(rows, queries, sets)
    if settled.size:
        rest = np.setdiff1d(np.arange(queries.shape[0]), settled)
        found = nearest_on_column_sets(rows, queries[rest], sets, cancel) if rest.size else []
        merged = []
        for i in range(len(sets)):
            column = np.empty(queries.shape[0], dtype=np.intp)
            column[settled] = answers[i]
            if rest.size:
                column[rest] = found[i]
            merged.append(column)
        return merged
    out: list[np.ndarray | None] = [None] * len(sets)
    multi = [i for i, s in enumerate(sets) if s.size > 1]
    orders: dict[int, np.ndarray] = {}
    from engine.attacks._l1 import check_cancel  # numba: loaded when a search runs

    for i, s in enumerate(sets):
        if s.size == 1:
            check_cancel(cancel)  # d sorts of the single columns: a fraction of a second each at most
            k = int(s[0])
            column = np.ascontiguousarray(rows[:, k])
            if k not in orders:
                orders[k] = np.argsort(column)
            out[i] = nearest_1d(column, np.ascontiguousarray(queries[:, k]), orders[k])
    if not multi:
        return out  # type: ignore[return-value]
    if n * queries.shape[0] <= _SCAN_PAIRS or n <= 2 * _SEED_ROWS:
        for i in multi:  # each scan checks ``cancel`` before each of its calls
            out[i] = _scan(rows, queries, sets[i], cancel=cancel)
        return out  # type: ignore[return-value]

    # The all-but-one sets (d − 1 columns) are searched together per group (:func:`nearest_all_but_one` on the
    # union of their candidate rows): when the release lies among the targets (the data itself, little noise)
    # the boxes prune little, and the two-pass search beats d separate scans.
    from engine.attacks._l1 import (  # numba: loaded when a search runs
        box_gaps,
        largest_nearest_distance,
        largest_nearest_without_each,
    )

    joint = [i for i in multi if sets[i].size == d - 1 and d > 2]
    joint_set = set(joint)
    membership = np.zeros((len(multi), d), dtype=np.float32)
    for r, i in enumerate(multi):
        membership[r, sets[i]] = 1.0
    rows_t = np.ascontiguousarray(rows.T)
    results = {i: np.empty(queries.shape[0], dtype=np.intp) for i in multi}
    kept = 0  # candidate rows kept over the column sets of the first group
    groups = query_groups(queries)
    for g, group in enumerate(groups):
        check_cancel(cancel)
        if g == 1 and kept / (n * len(multi)) > _PRUNE_FRACTION:
            # The first group's boxes kept most rows: the release lies among the targets (small noise) and
            # bounding would cost more than it saves. Scan the other targets against every row instead.
            rest = np.sort(np.concatenate(groups[1:]))
            _unbounded(rows, queries, rest, sets, multi, joint, results, cancel)
            break
        block = queries[group]
        # Per-column gap between each row and the group's box, as float32 (see the module docstring), and the rows
        # inside the box on every column.
        gaps, inside = box_gaps(rows_t, block.min(axis=0), block.max(axis=0))
        if g == 0 and inside > _PRUNE_FRACTION * n:
            # Most rows lie inside the first group's box (the release among the targets: little noise): their
            # bound is 0 on every set, so more than that share would be kept. Scan every target unbounded.
            _unbounded(rows, queries, np.arange(queries.shape[0]), sets, multi, joint, results, cancel)
            break
        # Every column set's bound at once, (sets, n). einsum, not ``@``: a multi-threaded BLAS call on this small
        # inner dimension costs more in thread start-up than it computes, and fights sweep workers.
        bounds = np.einsum("sk,kn->sn", membership, gaps)
        # The all-but-one sets' upper bounds in one pass, from the seeds of the box on every column (any seeds give
        # an upper bound): d passes over the seeds' d columns each cost more than the scans they save at 500 columns.
        without = (largest_nearest_without_each(block, rows[_seed_rows(gaps.sum(axis=0))]) if joint
                   else np.empty(0))
        keeps = []
        for r, i in enumerate(multi):
            check_cancel(cancel)
            known = sets[i]
            if i in joint_set:
                upper = float(without[_left_out(known, d)])
            else:
                upper = largest_nearest_distance(block[:, known], rows[_seed_rows(bounds[r])][:, known])
            keeps.append(bounds[r] <= upper * ((1.0 + 2.0 * SLACK) * (1.0 + bound_slack(known.size))))
        kept += sum(int(np.count_nonzero(keep)) for keep in keeps)
        _bounded(rows, queries, group, sets, multi, joint, keeps, results, cancel)
    for i in multi:
        out[i] = results[i]
    return out  # type: ignore[return-value]


__all__ = [
    "SLACK",
    "canonical_nearest",
    "nearest_1d",
    "nearest_all_but_one",
    "nearest_on_column_sets",
    "query_groups",
    "search_seconds",
]
