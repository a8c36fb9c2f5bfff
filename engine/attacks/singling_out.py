r"""Predicate singling out (Cohen & Nissim) with the net attack of the targeted-DP paper.

For every released row z (a row of X_priv as the adversary sees it) the adversary forms the box predicate

.. math:: \phi_z(x) = \bigwedge_j \; z_j - w_j \le x_j \le z_j + w_j,\qquad w_j = c \cdot \mathrm{sd}_j(X_{priv}),

and applies it to the original data X. When exactly one row of X satisfies :math:`\phi_z`, that row is
*singled out*. The risk at net size c is the number of DISTINCT rows of X singled out by some box, divided by
n; protection is 1 − risk, worst case (largest risk) over the net sizes c ∈ {1/10, 1/3, 1/2, 2/3, 1}.
This is exactly what the authors' ``pso_utils.multi_sd`` computes (inclusive bounds on both sides; the column
standard deviation is pandas' ``.std()``, i.e. with ddof = 1, of the privatized data); their code uses
c ∈ {0.1, 0.33, 0.5, 0.67, 1} (:data:`AUTHORS_NET_SIZES`).

The non-private baseline runs the same attack with X in place of X_priv, and also reports the share of rows
of X that are not unique (exact duplicates cannot be singled out by any predicate).

Speed: the naive attack is O(n² d) per net size. Here the boxes are decided on coordinates rescaled by the
half-widths, in the Chebyshev metric (a box of half-widths w is the unit L∞ ball after rescaling): the two
nearest rows of each box centre decide whether the box isolates one row. The half-widths of all net sizes are
multiples c·sd of one vector, so one search on x/sd serves every net size (:func:`_singled_out_nets`; the search
is :func:`engine.attacks._chebyshev.two_nearest_chebyshev`, a compiled scan along the most selective column behind
a byte filter, with one index of X for every release, ``index``;
:func:`singled_out_rows` for one set of half-widths uses a k-d tree). Because
rescaling rounds differently from the authors' predicate, the decision uses radii 1 ± τ (τ a few ulps of
the largest rescaled coordinate); boxes with a row within τ of their boundary are checked with the exact
predicate. The result
is identical to the brute force (:func:`singled_out_rows_bruteforce`; tested on many random seeds, with
duplicates and boundary ties).

References
----------
.. [1] Cohen & Nissim, "Towards formalizing the GDPR's notion of singling out", PNAS 117(15), 2020.
.. [2] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (privacy attacks: predicate singling out).
       Digest: ``shared/spec/000-targeted-dp.md``; authors' code: ``shared/reference/tdp-replication/NOTES.md``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from engine.attacks.threat_model import ADVERSARY_TEXT, Adversary, adversary_view, check_release_scale
from engine.constraints import Choice, Constraint, Each, Real, check_declared
from engine.errors import InvalidParameterError
from engine.serialization import Serializable
from engine.validation import (
    check_array_interval,
    check_choice,
    check_integer,
    check_interval,
    check_matrix,
    check_rng,
)

if TYPE_CHECKING:  # numba is loaded when a scan runs, not when this module is imported
    from scipy.spatial import cKDTree

    from engine.attacks._chebyshev import ColumnIndex

#: k-d tree layout: sliding-midpoint splits and larger leaves answer the box queries ~30 % faster than scipy's
#: defaults on the demos (the answers do not depend on the layout: boxes are decided by distances, ambiguous
#: ones by the exact predicate).
_TREE_OPTIONS = {"leafsize": 32, "balanced_tree": False, "compact_nodes": False}
#: Above this many boxes with a row at their boundary, their candidate rows come from a k-d tree (built for them)
#: rather than one pass over all rows each.
_TREE_FOR_UNSETTLED = 32
#: Centres near the data from which the column scan builds its byte filter when no index is passed (below, the
#: filter's d² n bytes cost more to build than they save: a generated 25,000 × 30 table builds it in 0.2 s).
_FILTER_MIN_CENTRES = 2048
#: Centres per thread at least, when the scan is split between threads (``workers``).
_CENTRES_PER_THREAD = 512
#: Net sizes c of the paper's text: boxes of half-width c × column sd.
NET_SIZES: tuple[float, ...] = (0.1, 1.0 / 3.0, 0.5, 2.0 / 3.0, 1.0)
#: Net sizes hard-coded in the authors' replication code (``jitter_factor_array``).
AUTHORS_NET_SIZES: tuple[float, ...] = (0.1, 0.33, 0.5, 0.67, 1.0)


@dataclass(frozen=True)
class SinglingOutConfig(Serializable):
    """Configuration of the net attack.

    Parameters
    ----------
    net_sizes : tuple of float
        Net sizes c > 0; a box has half-width c × (sd of each released column, ddof = 1).
    adversary : {"knows-scale", "paper"}
        ``"knows-scale"`` (default) undoes the release's known output scale before attacking;
        ``"paper"`` attacks the release as printed (authors' code). See :mod:`engine.attacks.threat_model`.
    """

    KIND = "singling-out"

    net_sizes: tuple[float, ...] = NET_SIZES
    adversary: Adversary = "knows-scale"

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "net_sizes": Each(Real(0, None, closed="neither")),
        "adversary": Choice(tuple(ADVERSARY_TEXT)),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @classmethod
    def paper(cls) -> SinglingOutConfig:
        """The authors' code: net sizes (0.1, 0.33, 0.5, 0.67, 1) and the release attacked as printed."""
        return cls(net_sizes=AUTHORS_NET_SIZES, adversary="paper")


@dataclass(frozen=True)
class SinglingOutResult:
    """Outcome of the net attack.

    Attributes
    ----------
    protection : float
        1 − ``risk``: share of individuals not singled out under the most successful net size. In [0, 1].
    risk : float
        Largest risk over the net sizes.
    risks : tuple of float
        Risk (distinct rows singled out / n) per net size, in the order of ``net_sizes``.
    n_singled_out : tuple of int
        Distinct rows singled out per net size.
    net_sizes : tuple of float
    worst_net_size : float
        Net size with the largest risk (the first one on ties).
    non_unique_share : float
        Share of rows of X that have an exact duplicate in X (they cannot be singled out by any predicate).
    n : int
        Rows of X.
    adversary : str
    release_scale : float
    chance_risk : float or None
        Risk of the same attack against a release that carries NO information about individuals: the adversary's
        view with every column permuted independently (same marginals). Part of ``risk`` is isolation by chance;
        ``risk − chance_risk`` is what the release itself adds (ours; the paper reports ``risk`` alone). None
        unless an ``rng`` was given.
    """

    protection: float
    risk: float
    risks: tuple[float, ...]
    n_singled_out: tuple[int, ...]
    net_sizes: tuple[float, ...]
    worst_net_size: float
    non_unique_share: float
    n: int
    adversary: str
    release_scale: float
    chance_risk: float | None = None

    @property
    def excess_risk(self) -> float | None:
        """``risk − chance_risk`` (floored at 0): the singling out the release adds beyond chance."""
        return None if self.chance_risk is None else max(0.0, self.risk - self.chance_risk)


def non_unique_share(x: np.ndarray) -> float:
    """Share of rows of ``x`` that are exact duplicates of another row (the paper's non-private baseline).

    >>> non_unique_share(np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]))
    0.5
    """
    arr = check_matrix("x", x)
    _, inverse, counts = np.unique(arr, axis=0, return_inverse=True, return_counts=True)
    return float(np.mean(counts[inverse.ravel()] > 1))


def _check_boxes(x: object, centres: object, half_widths: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xa = check_matrix("x", x)
    za = check_matrix("centres", centres)
    if za.shape[1] != xa.shape[1]:
        raise InvalidParameterError(
            f"centres must have as many columns as x ({xa.shape[1]}); got {za.shape[1]} — pass the release of "
            "the same features"
        )
    wa = check_array_interval("half_widths", half_widths, 0, None)
    if wa.shape != (xa.shape[1],):
        raise InvalidParameterError(
            f"half_widths must hold one value per column ({xa.shape[1]}); got shape {wa.shape}"
        )
    return xa, za, wa


def singled_out_rows_bruteforce(x: np.ndarray, centres: np.ndarray, half_widths: np.ndarray) -> np.ndarray:
    """Reference implementation: rows of ``x`` isolated by some box (O(m n d); for tests and benchmarks).

    A box around centre z contains row x when ``x_j <= z_j + w_j`` and ``x_j >= z_j - w_j`` for every column j
    (the authors' predicate, bounds computed in floating point exactly like this). Returns the sorted distinct
    indices of rows of ``x`` that are the only row in at least one box.

    >>> x = np.array([[0.0, 0.0], [1.0, 1.0], [1.05, 1.0]])
    >>> singled_out_rows_bruteforce(x, x, np.array([0.1, 0.1])).tolist()
    [0]
    """
    xa, za, wa = _check_boxes(x, centres, half_widths)
    hi = za + wa
    lo = za - wa
    found: list[int] = []
    # Chunk the centres so the boolean block stays small (≈ 8 MB).
    chunk = max(1, int(8e6 // max(1, xa.shape[0] * xa.shape[1])))
    for start in range(0, za.shape[0], chunk):
        inside = np.all(
            (xa[None, :, :] <= hi[start : start + chunk, None, :]) & (xa[None, :, :] >= lo[start : start + chunk, None, :]),
            axis=2,
        )
        single = inside.sum(axis=1) == 1
        if single.any():
            found.extend(np.argmax(inside[single], axis=1).tolist())
    return np.unique(np.asarray(found, dtype=np.int64))


def singled_out_rows(x: np.ndarray, centres: np.ndarray, half_widths: np.ndarray) -> np.ndarray:
    """Rows of ``x`` that are the only row of ``x`` inside some box (fast; identical to the brute force).

    Parameters
    ----------
    x : ndarray, shape (n, d)
        The original data (the rows that can be singled out).
    centres : ndarray, shape (m, d)
        Box centres (the released rows).
    half_widths : ndarray, shape (d,)
        Half-widths w_j ≥ 0 of every box. A zero half-width means "equal in that column".

    Returns
    -------
    ndarray of int
        Sorted distinct indices of singled-out rows of ``x``.

    Notes
    -----
    Columns with positive half-width are divided by it, so a box becomes the L∞ ball of radius 1. Columns
    with zero half-width become one integer key coordinate (3 × the id of the row's values in those
    columns): rows with different values there are ≥ 3 apart and never fall in one box. For every box the
    k-d tree returns the two nearest rows in the L∞ metric: the box isolates a row when the nearest is within
    1 − τ and the second beyond 1 + τ; it isolates none when the nearest is beyond 1 + τ or the second within
    1 − τ. The few boxes left (a row within τ of the boundary) are checked with the exact predicate of
    :func:`singled_out_rows_bruteforce` on their candidates. Cost O((n + m) log n) instead of O(m n d).

    >>> x = np.array([[0.0, 0.0], [1.0, 1.0], [1.05, 1.0]])
    >>> singled_out_rows(x, x, np.array([0.1, 0.1])).tolist()
    [0]
    """
    xa, za, wa = _check_boxes(x, centres, half_widths)
    return _singled_out_fast(xa, za, wa)


def _tree(xs: np.ndarray) -> cKDTree:
    """scipy's k-d tree on the rows ``xs`` (:data:`_TREE_OPTIONS`). scipy.spatial is imported here, when a tree is
    built (the brute-force check, the tree search, many boxes at their boundary), not with this module: its import
    (with scipy.sparse) was about 0.4 CPU s of every sweep command, whose column scans never build one."""
    from scipy.spatial import cKDTree

    return cKDTree(xs, **_TREE_OPTIONS)


def _singled_out_fast(xa: np.ndarray, za: np.ndarray, wa: np.ndarray) -> np.ndarray:
    positive = wa > 0
    xs = xa[:, positive] / wa[positive]
    zs = za[:, positive] / wa[positive]
    largest = max(float(np.max(np.abs(xs), initial=0.0)), float(np.max(np.abs(zs), initial=0.0)))
    # Rounding of x/w − z/w versus the authors' (z ± w) comparisons: a few ulps of the largest coordinate.
    tau = 16.0 * np.finfo(float).eps * (largest + 1.0) + 1e-12
    if not positive.all():
        zero = ~positive
        keys = np.vstack([xa[:, zero], za[:, zero]])
        _, groups = np.unique(keys, axis=0, return_inverse=True)
        ids = 3.0 * groups.ravel().astype(float)
        xs = np.column_stack([xs, ids[: xa.shape[0]]])
        zs = np.column_stack([zs, ids[xa.shape[0] :]])
    tree = _tree(xs)
    # The two nearest rows in the L∞ metric settle almost every box: a box holds exactly one row when the
    # nearest is inside (≤ 1 − τ) and the second nearest outside (> 1 + τ).
    k = min(2, xa.shape[0])
    dist, nearest = tree.query(zs, k=k, p=np.inf, distance_upper_bound=1.0 + 2.0 * tau)
    dist = dist.reshape(zs.shape[0], k)
    nearest = nearest.reshape(zs.shape[0], k)
    first_in = dist[:, 0] <= 1.0 - tau
    second_out = dist[:, 1] > 1.0 + tau if k == 2 else np.ones(zs.shape[0], dtype=bool)
    found = [nearest[first_in & second_out, 0]]
    # Unsettled: the nearest is within 1 + τ, and not (first clearly in and second clearly out) and not
    # (two clearly in). These boxes have a row near their boundary; check them with the exact predicate.
    two_in = dist[:, 1] <= 1.0 - tau if k == 2 else np.zeros(zs.shape[0], dtype=bool)
    unsettled = np.flatnonzero((dist[:, 0] <= 1.0 + tau) & ~(first_in & second_out) & ~two_in)
    if unsettled.size:
        hi = za[unsettled] + wa
        lo = za[unsettled] - wa
        candidates = tree.query_ball_point(zs[unsettled], r=1.0 + tau, p=np.inf)
        extra: list[int] = []
        for row, cand in enumerate(candidates):
            idx = np.asarray(cand, dtype=np.int64)
            inside = np.all((xa[idx] <= hi[row]) & (xa[idx] >= lo[row]), axis=1)
            if np.count_nonzero(inside) == 1:
                extra.append(int(idx[inside][0]))
        found.append(np.asarray(extra, dtype=np.int64))
    return np.unique(np.concatenate(found).astype(np.int64))


def _singled_out_nets(xa: np.ndarray, za: np.ndarray, sd: np.ndarray, net_sizes: tuple[float, ...],
                      search: str = "scan", workers: int = 1, index: ColumnIndex | None = None) -> list[np.ndarray]:
    """``[_singled_out_fast(xa, za, c * sd) for c in net_sizes]`` with ONE nearest-row search.

    ``search``: ``"scan"`` (the compiled column scan behind its byte filter, the faster everywhere measured) or
    ``"tree"`` (a k-d tree; kept as an independent check) — see :func:`_two_nearest`. Both return the same
    distances, hence the same rows. ``workers`` threads share the search (each centre on its own: the same answers).
    ``index``: ``ColumnIndex.build(xa)`` when already built (a sweep attacks many releases of the same rows); the
    scan uses it when every sd is positive (the rows are then exactly ``xa / sd``), and builds its own otherwise.

    The boxes of every net size are balls of the same L∞ metric on the coordinates x / sd (radius c), so the two
    nearest rows of each centre, found once, settle every net size; boxes with a row within τ of their
    boundary are checked with the exact predicate of :func:`singled_out_rows_bruteforce` (half-widths
    ``c * sd``, computed exactly as the brute force gets them).
    """
    sizes = [float(c) for c in net_sizes]
    positive = sd > 0
    if any(not np.array_equal(c * sd > 0, positive) for c in sizes):  # c · sd underflowed to 0: no common metric
        return [_singled_out_fast(xa, za, c * sd) for c in sizes]
    xs = xa[:, positive] / sd[positive]
    zs = za[:, positive] / sd[positive]
    largest = max(float(np.max(np.abs(xs), initial=0.0)), float(np.max(np.abs(zs), initial=0.0)))
    c_max = max(sizes)
    # Rounding of x/sd − z/sd versus the authors' (z ± c·sd) comparisons, in units of the rescaled coordinates.
    eps = np.finfo(float).eps

    def tau(c: float) -> float:
        return 32.0 * eps * (largest + c + 1.0) + 1e-12 * c

    scaled_index = (index, sd) if index is not None and positive.all() else None
    if not positive.all():
        zero = ~positive
        keys = np.vstack([xa[:, zero], za[:, zero]])
        _, groups = np.unique(keys, axis=0, return_inverse=True)
        ids = 3.0 * (c_max + 1.0) * groups.ravel().astype(float)  # different values: ≥ 3(c_max + 1) apart
        xs = np.column_stack([xs, ids[: xa.shape[0]]])
        zs = np.column_stack([zs, ids[xa.shape[0] :]])
    k = min(2, xa.shape[0])
    reach = c_max + 2.0 * tau(c_max)
    # Only centres within `reach` (L∞) of the data's bounding box can have a row in any of their boxes; on a
    # noisy release most cannot, and the search (the cost of the attack) is spent on the others only.
    dist = np.full((zs.shape[0], k), np.inf)
    nearest = np.full((zs.shape[0], k), xa.shape[0], dtype=np.intp)
    gap = np.maximum(xs.min(axis=0) - zs, zs - xs.max(axis=0))
    near = np.flatnonzero(np.max(gap, axis=1, initial=-np.inf) <= reach)
    tree = None
    if near.size:
        tree, d_near, i_near = _two_nearest(xs, zs[near], reach, k, search, workers, scaled_index)
        dist[near] = d_near
        nearest[near] = i_near
    second = dist[:, 1] if k == 2 else np.full(zs.shape[0], np.inf)
    out = []
    for c in sizes:
        t = tau(c)
        first_in = dist[:, 0] <= c - t
        settled_one = first_in & (second > c + t)
        found = [nearest[settled_one, 0]]
        two_in = second <= c - t
        unsettled = np.flatnonzero((dist[:, 0] <= c + t) & ~settled_one & ~two_in)
        if unsettled.size:
            w = c * sd
            hi = za[unsettled] + w
            lo = za[unsettled] - w
            if tree is None and unsettled.size > _TREE_FOR_UNSETTLED:
                tree = _tree(xs)
            candidates = (tree.query_ball_point(zs[unsettled], r=c + t, p=np.inf) if tree is not None else
                          [np.flatnonzero(np.max(np.abs(xs - centre), axis=1, initial=0.0) <= c + t)
                           for centre in zs[unsettled]])
            extra: list[int] = []
            for row, cand in enumerate(candidates):
                idx = np.asarray(cand, dtype=np.int64)
                inside = np.all((xa[idx] <= hi[row]) & (xa[idx] >= lo[row]), axis=1)
                if np.count_nonzero(inside) == 1:
                    extra.append(int(idx[inside][0]))
            found.append(np.asarray(extra, dtype=np.int64))
        out.append(np.unique(np.concatenate(found).astype(np.int64)))
    return out


def _two_nearest(xs: np.ndarray, zs: np.ndarray, reach: float, k: int, search: str, workers: int = 1,
                 scaled_index: tuple[ColumnIndex, np.ndarray] | None = None
                 ) -> tuple[cKDTree | None, np.ndarray, np.ndarray]:
    """The k ≤ 2 nearest rows (L∞, up to ``reach``) of every centre: by the column scan (``search="scan"``) or the
    k-d tree (``"tree"``); the same distances either way. With its byte filter the scan is the faster on every input
    measured: noisy releases, k-anonymous ones (repeated centres), the data themselves, 15 to 30 columns (see
    :func:`singling_out_baseline`). ``workers`` threads share the centres (the compiled scan releases the interpreter
    lock; each centre is answered on its own, so the answers do not depend on it). Returns the tree when one was
    built. ``scaled_index``: (``ColumnIndex.build(x)``, s) with ``xs`` exactly ``x / s``, or None."""
    check_choice("search", search, ("scan", "tree"))
    if search == "tree":
        tree = _tree(xs)
        dist, nearest = tree.query(zs, k=k, p=np.inf, distance_upper_bound=reach, workers=workers)
        return tree, dist.reshape(zs.shape[0], k), nearest.reshape(zs.shape[0], k)
    # numba: loaded when a scan runs, not when this module is imported
    from engine.attacks._chebyshev import ColumnIndex, two_nearest_chebyshev

    if zs.shape[0] > 1 and np.unique(zs[:, 0]).size < zs.shape[0]:
        # Repeated centres (a k-anonymous release repeats each group's values) have the same answer: search each
        # distinct centre once. A distinct first column (a noisy release) rules repeats out without sorting rows.
        distinct, inverse = np.unique(zs, axis=0, return_inverse=True)
        if distinct.shape[0] < zs.shape[0]:
            tree, dist, nearest = _two_nearest(xs, distinct, reach, k, search, workers, scaled_index)
            inverse = inverse.ravel()
            return tree, dist[inverse], nearest[inverse]
    if scaled_index is None:
        index, scale = ColumnIndex.build(xs, filtered=zs.shape[0] >= _FILTER_MIN_CENTRES), None
    else:
        index, scale = scaled_index
    parts = min(workers, zs.shape[0] // _CENTRES_PER_THREAD)
    if parts <= 1:
        dist, nearest = two_nearest_chebyshev(xs, zs, reach, index, scale)
    else:
        import concurrent.futures as cf

        chunks = np.array_split(zs, parts)
        with cf.ThreadPoolExecutor(parts, thread_name_prefix="singling-out") as pool:
            answers = list(pool.map(lambda chunk: two_nearest_chebyshev(xs, chunk, reach, index, scale), chunks))
        dist = np.concatenate([a[0] for a in answers])
        nearest = np.concatenate([a[1] for a in answers])
    return None, dist[:, :k], nearest[:, :k]


def _net_attack(
    x: np.ndarray,
    view: np.ndarray,
    config: SinglingOutConfig,
    release_scale: float,
    non_unique: float | None = None,
    search: str = "scan",
    workers: int = 1,
    index: ColumnIndex | None = None,
) -> SinglingOutResult:
    n = x.shape[0]
    sd = np.std(view, axis=0, ddof=1) if view.shape[0] > 1 else np.zeros(view.shape[1])
    nets = _singled_out_nets(x, view, sd, tuple(config.net_sizes), search, workers, index)
    counts = [int(rows.size) for rows in nets]
    risks = tuple(count / n for count in counts)
    worst = int(np.argmax(risks))
    return SinglingOutResult(
        protection=1.0 - risks[worst],
        risk=risks[worst],
        risks=risks,
        n_singled_out=tuple(counts),
        net_sizes=tuple(float(c) for c in config.net_sizes),
        worst_net_size=float(config.net_sizes[worst]),
        non_unique_share=non_unique_share(x) if non_unique is None else non_unique,
        n=n,
        adversary=config.adversary,
        release_scale=release_scale,
    )


def singling_out(
    x: np.ndarray,
    x_priv: np.ndarray,
    config: SinglingOutConfig | None = None,
    *,
    release_scale: float = 1.0,
    rng: np.random.Generator | None = None,
    non_unique: float | None = None,
    index: ColumnIndex | None = None,
) -> SinglingOutResult:
    """Net singling-out attack of the released ``x_priv`` against the original ``x``.

    Parameters
    ----------
    x : ndarray, shape (n, d)
        Original (prepared) data.
    x_priv : ndarray, shape (m, d)
        The release (m = n for the record-level mechanisms; any m ≥ 2 works).
    config : SinglingOutConfig, optional
        Net sizes and adversary; default :class:`SinglingOutConfig()`.
    release_scale : float
        s with E[x_priv] = s·X (``Release.details["output_scale"]``); the ``"knows-scale"`` adversary divides
        the release by s first. Ignored by the ``"paper"`` adversary.
    rng : numpy.random.Generator, optional
        When given, also compute ``chance_risk`` (the attack on a column-permuted copy of the view).
    non_unique : float, optional
        ``non_unique_share(x)`` if already known (it depends on ``x`` only: a sweep attacking many releases of
        the same ``x`` computes it once, e.g. from :func:`singling_out_baseline`); in [0, 1]. Computed if None.
    index : ColumnIndex, optional
        ``engine.attacks._chebyshev.ColumnIndex.build(x)`` of the same ``x``, when already built (it depends on
        ``x`` only; ``AnalysisData.so_index`` holds one per data set). Built per search if None; the result does
        not depend on it.

    Returns
    -------
    SinglingOutResult
        ``protection`` = 1 − max over c of (distinct rows of x singled out)/n.

    Raises
    ------
    InvalidParameterError
        Non-finite data, mismatched columns, fewer than 2 released rows (no column sd), bad scale.

    Examples
    --------
    Continuous data released as is: every row is alone in its smallest box.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 5))
    >>> round(singling_out(x, x).risks[0], 2)
    1.0
    """
    config = SinglingOutConfig() if config is None else config
    if not isinstance(config, SinglingOutConfig):
        raise InvalidParameterError(f"config must be a SinglingOutConfig; got {type(config).__name__}")
    xa = check_matrix("x", x)
    za = check_matrix("x_priv", x_priv, min_rows=2)
    if za.shape[1] != xa.shape[1]:
        raise InvalidParameterError(
            f"x_priv must have as many columns as x ({xa.shape[1]}); got {za.shape[1]} — release the same features"
        )
    scale = check_release_scale(release_scale)
    check_rng(rng, allow_none=True, hint="pass None for no chance baseline")
    if non_unique is None:
        non_unique = non_unique_share(xa)
    else:
        non_unique = check_interval(
            "non_unique", non_unique, 0, 1, hint="pass non_unique_share(x) of the same x, or leave it out"
        )
    view = adversary_view(za, release_scale=scale, adversary=config.adversary)
    _check_index(index, xa)
    result = _net_attack(xa, view, config, scale, non_unique, index=index)
    if rng is None:
        return result
    shuffled = np.column_stack([rng.permutation(view[:, j]) for j in range(view.shape[1])])
    chance = _net_attack(xa, shuffled, config, scale, non_unique, index=index)
    return dataclasses.replace(result, chance_risk=chance.risk)


def _check_index(index: object, x: np.ndarray) -> None:
    if index is None:
        return
    from engine.attacks._chebyshev import ColumnIndex

    if not isinstance(index, ColumnIndex) or index.shape != x.shape:
        raise InvalidParameterError(
            "index must be ColumnIndex.build(x) of the same x (or None to build it); got "
            + (f"one of {index.shape[0]} × {index.shape[1]} for x of {x.shape[0]} × {x.shape[1]}"
               if isinstance(index, ColumnIndex) else type(index).__name__)
        )


def singling_out_baseline(x: np.ndarray, config: SinglingOutConfig | None = None, *, workers: int = 1,
                          index: ColumnIndex | None = None) -> SinglingOutResult:
    """Non-private baseline: the net attack run with X itself as the release (plus the share of non-unique rows).

    ``workers`` threads (in [1, 16]) share the nearest-row queries; ``index`` is :func:`singling_out`'s. The result
    depends on neither.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> res = singling_out_baseline(x, SinglingOutConfig(net_sizes=(0.1,)))
    >>> res.risks, res.non_unique_share
    ((0.5,), 0.5)
    """
    config = SinglingOutConfig() if config is None else config
    if not isinstance(config, SinglingOutConfig):
        raise InvalidParameterError(f"config must be a SinglingOutConfig; got {type(config).__name__}")
    xa = check_matrix("x", x, min_rows=2)
    n_workers = check_integer("workers", workers, 1, 16)
    _check_index(index, xa)
    # The column scan, as for a release: with its byte filter it beats the k-d tree here too (nigeria-demo, 15
    # columns: 0.49 against 0.63 CPU s for the tree; a generated 25,000 × 30 table: 0.78 against 3.9 s).
    return _net_attack(xa, xa, config, 1.0, workers=n_workers, index=index)


__all__ = [
    "AUTHORS_NET_SIZES",
    "NET_SIZES",
    "SinglingOutConfig",
    "SinglingOutResult",
    "non_unique_share",
    "singled_out_rows",
    "singled_out_rows_bruteforce",
    "singling_out",
    "singling_out_baseline",
]
