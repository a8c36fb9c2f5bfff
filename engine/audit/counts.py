r"""Exact output laws of the count releases (``engine.public_info.count_release``) on small tables, and their audit.

One period's release of a small table is a discrete law that can be written down without sampling, from the release
code path's own pieces (never a re-derivation that could share a bug with the claim):

* **post-processing** — every noise vector of a window is pushed through the same branch of
  :func:`~engine.public_info.count_release.release_counts`: x + DL(a) with ``a = config.noise_rate(subcounts=…)`` (the
  pmf :func:`~engine.public_info.discrete_laplace.dl_logpmf`), then
  :func:`~engine.public_info.projection.two_stage_projection` exactly as the release calls it. The law of the
  output is the sum of the noise probabilities that reach it. With the total public and two regions, stage 1 is
  invariant to adding the same number to both counts (the multiplier absorbs it), so only u = e₀ − e₁ matters and
  its pmf is the convolution of two DL pmfs: this turns a 4-D enumeration into 3-D (the tests check the
  invariance on the real function). Points of the noise grid whose probability is below ``tail`` divided by the
  grid size are skipped; the omitted mass (outside the window, or skipped) is computed, and every listed output's
  probability is a lower bound that is exact to within it (:class:`~engine.audit.exact.DiscreteLaw`).
* **Wasserstein, naive base** — independent DL(a) per count and sub-count (the release's own sampler): each
  listed output's probability is exact (product of :func:`dl_logpmf`); the listed window reaches past both tables,
  beyond which each coordinate's log-ratio −a|y − x₁| + a|y − x₀| is constant, so the maximum is attained on it.
* **Wasserstein, congenial and prior bases** — the engine's exact law
  :func:`~engine.public_info.wasserstein.congenial_log_pmf` (normaliser K(x) included) on every output of the
  congenial support (counts adding up to the total; sub-counts 0..count when the bound is public, else 0..D, past
  which the sub-count's log-ratio is constant), with ``a = config.noise_rate(subcounts=…)`` and the concentration α·max(last
  period, 1) that the release computes.

:func:`sample_count_release` draws the same period with the real :func:`release_counts`, and
:func:`~engine.audit.exact.law_goodness_of_fit` checks the draws against the law: the exact law is the law the
release path samples from.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine.audit.exact import DiscreteLaw, ExactAudit, exact_privacy_loss
from engine.audit.neighbours import CoupledTables
from engine.errors import InvalidParameterError
from engine.public_info.count_release import CountReleaseConfig, release_counts
from engine.public_info.count_table import CountTable
from engine.public_info.discrete_laplace import dl_logpmf
from engine.public_info.projection import two_stage_projection
from engine.public_info.wasserstein import congenial_log_pmf
from engine.validation import check_integer, check_interval, check_rng

__all__ = ["audit_count_release", "count_release_law", "count_table_for", "sample_count_release"]

#: Rows pushed through the projection at a time (bounds the memory of the enumeration).
_CHUNK = 1 << 18


def _window(a: float, tail: float) -> int:
    """Half-width W with P(|DL(a)| > W) = 2e^{−a(W+1)}/(1 + e^{−a}) below ``tail``/8 per axis."""
    return int(math.ceil(math.log(16.0 / tail) / a))


def _dl_axis(a: float, w: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(-w, w + 1)
    return k, np.exp(dl_logpmf(k, a))


def _postprocess_outputs(yc: np.ndarray, yd: np.ndarray | None, total: int | None, bound: bool) -> np.ndarray:
    """The post-processing branch of ``release_counts`` for rows of noisy counts (and sub-counts)."""
    d: np.ndarray | None
    if yd is not None and not bound:  # sub-counts projected on their own (≥ 0), counts on theirs
        c, _, _ = two_stage_projection(yc, None, total)
        d, _, _ = two_stage_projection(yd, None, None)
    else:
        c, d, _ = two_stage_projection(yc, yd, total)
    return c if d is None else np.concatenate([c, d], axis=1)


def _postprocess_law(counts: np.ndarray, subcounts: np.ndarray | None, config: CountReleaseConfig,
                     tail: float, a: float) -> DiscreteLaw:
    total_public = "total" in config.public
    bound = "subcount" in config.public
    j = counts.size
    if (total_public and j != 2) or (not total_public and j != 1):
        raise InvalidParameterError(
            f"the exact post-processing law is enumerated for 2 regions with the total public and 1 without; got {j}"
        )
    if subcounts is not None and not bound:
        # The release projects the counts and the sub-counts separately (independent noise): a product law.
        parts = [_postprocess_law(counts, None, config, tail / (j + 1), a)]
        for i in range(j):
            one = dataclasses.replace(config, public=tuple(p for p in config.public if p != "total"))
            parts.append(_postprocess_law(subcounts[i: i + 1], None, one, tail / (j + 1), a))
        return _product_law(parts)
    w = _window(a, tail)
    k, p = _dl_axis(a, w)
    if total_public:  # only u = e0 − e1 matters (see the module notes)
        first_k, first_p = np.arange(-2 * w, 2 * w + 1), np.convolve(p, p)
    else:
        first_k, first_p = k, p
    sub_axes = 0 if subcounts is None else j
    if sub_axes:
        grids = np.meshgrid(*([k] * sub_axes), indexing="ij")
        mesh = np.stack([g.ravel() for g in grids], axis=1)
        mesh_lp = np.log(np.prod(np.stack([g.ravel() for g in np.meshgrid(*([p] * sub_axes), indexing="ij")],
                                          axis=1), axis=1))
    else:
        mesh = np.zeros((1, 0), dtype=np.int64)
        mesh_lp = np.zeros(1)
    first_lp = np.log(first_p)
    # Skip the least likely noise points whose mass adds up to at most tail/2: first pass, a histogram of the
    # mass by log-probability (0.05-nat bins); second pass, keep every point at or above the threshold bin edge.
    top = float(first_lp.max() + mesh_lp.max())
    edges = np.arange(top - 0.05 * int((top - float(first_lp.min() + mesh_lp.min())) / 0.05 + 2), top + 0.1, 0.05)
    mass = np.zeros(edges.size - 1)
    for lu in first_lp:
        lp = lu + mesh_lp
        mass += np.histogram(lp, bins=edges, weights=np.exp(lp))[0]
    below = np.cumsum(mass)  # mass of the points under edges[1:]
    fits = np.flatnonzero(below <= tail / 2)
    threshold = float(edges[fits[-1] + 1]) if fits.size else -np.inf
    s = int(counts.sum()) if total_public else None
    outputs, weights = [], []
    rows_c: list[np.ndarray] = []
    rows_d: list[np.ndarray] = []
    rows_w: list[np.ndarray] = []
    pending = 0

    def flush() -> None:
        if not rows_w:
            return
        yc = np.concatenate(rows_c).astype(float)
        yd = np.concatenate(rows_d).astype(float) if sub_axes else None
        outputs.append(_postprocess_outputs(yc, yd, s, bound))
        weights.append(np.concatenate(rows_w))
        rows_c.clear()
        rows_d.clear()
        rows_w.clear()

    for u, lu in zip(first_k, first_lp, strict=True):
        lp = lu + mesh_lp
        keep = lp >= threshold
        n = int(keep.sum())
        if n == 0:
            continue
        if total_public:
            rows_c.append(np.tile([counts[0] + u, counts[1]], (n, 1)))
        else:
            rows_c.append(np.full((n, 1), counts[0] + u))
        if sub_axes and subcounts is not None:
            rows_d.append(subcounts[None, :] + mesh[keep])
        rows_w.append(np.exp(lp[keep]))
        pending += n
        if pending >= _CHUNK:
            flush()
            pending = 0
    flush()
    w_all = np.concatenate(weights)
    omitted = max(0.0, 1.0 - math.fsum(w_all)) + 1e-14  # + rounding of the pmf values
    return DiscreteLaw.from_samples(np.concatenate(outputs), w_all, min(1.0, omitted))


def _product_law(parts: list[DiscreteLaw]) -> DiscreteLaw:
    """The law of independent outputs side by side. Listed probabilities multiply; with lower bounds p_i that are
    exact to within o_i, the product is a lower bound exact to within Σ o_i (all p_i ≤ 1)."""
    outputs, prob = parts[0].outputs, parts[0].prob
    for part in parts[1:]:
        outputs = np.concatenate([np.repeat(outputs, part.outputs.shape[0], axis=0),
                                  np.tile(part.outputs, (outputs.shape[0], 1))], axis=1)
        prob = np.outer(prob, part.prob).ravel()
    omitted = min(1.0, sum(part.omitted for part in parts))
    return DiscreteLaw(outputs, prob, omitted, pointwise=all(part.pointwise for part in parts))


def _naive_law(counts: np.ndarray, subcounts: np.ndarray | None, a: float,
               span: tuple[np.ndarray, np.ndarray]) -> DiscreteLaw:
    x = counts if subcounts is None else np.concatenate([counts, subcounts])
    lo, hi = span
    axes = [np.arange(int(lo[i]), int(hi[i]) + 1) for i in range(x.size)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, x.size)
    logp = dl_logpmf(mesh - x[None, :], a).sum(axis=1)
    prob = np.exp(logp)
    # Each coordinate's log-ratio between two tables, a(|y − x₀| − |y − x₁|), is constant outside [min, max] of
    # the two centres; the window reaches past both, so it contains a maximiser of the (separable) loss.
    return DiscreteLaw(mesh.astype(np.int64), prob, min(1.0, max(0.0, 1.0 - math.fsum(prob)) + 1e-14),
                       pointwise=True, attains_maximum=True)


def _compositions(total: int, parts: int) -> np.ndarray:
    """All (c_1..c_J) ≥ 0 with Σ c = total (J ≤ 3 here)."""
    if parts == 1:
        return np.array([[total]])
    grids = np.meshgrid(*([np.arange(total + 1)] * (parts - 1)), indexing="ij")
    head = np.stack([g.ravel() for g in grids], axis=1)
    head = head[head.sum(axis=1) <= total]
    return np.concatenate([head, total - head.sum(axis=1, keepdims=True)], axis=1)


def _congenial_law(counts: np.ndarray, subcounts: np.ndarray | None, previous: np.ndarray,
                   config: CountReleaseConfig, d_max: int, a: float) -> DiscreteLaw:
    s = int(counts.sum())
    bound = "subcount" in config.public
    conc = config.alpha * np.maximum(previous, 1).astype(float) if config.base == "prior" else None
    c = _compositions(s, counts.size)
    if subcounts is None:
        logp = congenial_log_pmf(c, None, counts, None, s, a, concentration=conc, subcount_bound=bound)
        out = c
    else:
        rows = []
        for row in c:
            tops = row if bound else np.full(row.size, d_max)
            grids = np.meshgrid(*[np.arange(int(t) + 1) for t in tops], indexing="ij")
            d = np.stack([g.ravel() for g in grids], axis=1)
            rows.append(np.concatenate([np.tile(row, (d.shape[0], 1)), d], axis=1))
        out = np.concatenate(rows)
        j = counts.size
        logp = congenial_log_pmf(out[:, :j], out[:, j:], counts, subcounts, s, a, concentration=conc,
                                 subcount_bound=bound)
    prob = np.exp(logp)
    omitted = 0.0 if (subcounts is None or bound) else min(1.0, max(0.0, 1.0 - math.fsum(prob)) + 1e-14)
    # Free sub-counts (bound not public): log P(c, d) = log P(c) + Σ_j log P(d_j), and each d_j's log-ratio between
    # the two tables is constant beyond max(sub-counts) + 1 ≤ d_max: the listed window contains a maximiser.
    return DiscreteLaw(out.astype(np.int64), prob, omitted, pointwise=True, attains_maximum=True)


def count_release_law(tables: CoupledTables, side: int, config: CountReleaseConfig, *,
                      tail: float = 1e-9, margin: int = 3) -> DiscreteLaw:
    """The exact law of one period's release of table ``side`` (0 or 1) of ``tables`` under ``config``.

    Outputs are rows (counts, then sub-counts). ``tail`` bounds the omitted mass of the post-processing
    enumeration. Wasserstein laws list outputs shared by both sides (so that they align): the naive base a window
    reaching ``margin`` past both tables, unbounded sub-counts 0..max sub-count + ``margin``.
    """
    side = check_integer("side", side, 0, 1)
    tl = check_interval("tail", tail, 0, 1, closed="neither")
    margin = check_integer("margin", margin, 1, 10_000)
    if not isinstance(config, CountReleaseConfig):
        raise InvalidParameterError(f"config must be a CountReleaseConfig; got {type(config).__name__}")
    counts = tables.counts1 if side else tables.counts0
    subcounts = tables.subcounts1 if side else tables.subcounts0
    a = config.noise_rate(subcounts=subcounts is not None)  # the rate release_counts uses for this table
    if config.method == "postprocess":
        return _postprocess_law(counts, subcounts, config, tl, a)
    if config.base == "naive":
        both = [tables.counts0, tables.counts1]
        if tables.subcounts0 is not None and tables.subcounts1 is not None:
            both = [np.concatenate([tables.counts0, tables.subcounts0]),
                    np.concatenate([tables.counts1, tables.subcounts1])]
        lo = np.minimum(both[0], both[1]) - margin
        hi = np.maximum(both[0], both[1]) + margin
        return _naive_law(counts, subcounts, a, (lo, hi))
    d_max = 0
    if tables.subcounts0 is not None and tables.subcounts1 is not None:
        d_max = margin + int(max(np.max(tables.subcounts0), np.max(tables.subcounts1)))
    return _congenial_law(counts, subcounts, tables.previous, config, d_max, a)


def audit_count_release(tables: CoupledTables, config: CountReleaseConfig, *, tail: float = 1e-9,
                        floor: float | None = None) -> ExactAudit:
    """Realised privacy loss of one period's release between the coupled tables (:func:`exact_privacy_loss`).

    ``floor`` (default: 0 for the Wasserstein laws, listed exactly; 100 × ``tail`` for post-processing, so each
    resolved log-ratio is exact to within 0.01) selects the outputs the maximum runs over.

    Examples
    --------
    Issue 30's oracle: congenial base, cases (1, 10) and deaths (1, 10) vs (0, 11), (0, 11), total 11, claimed ε = 1
    with Δ_z = 2 (a = 0.25):

    >>> from engine.audit.mutants import with_sensitivity
    >>> from engine.audit.neighbours import coupled_count_tables
    >>> tables = coupled_count_tables(("total", "subcount"), True)
    >>> config = CountReleaseConfig(epsilon=1.0, public=("total", "subcount"), sensitivity=4.0)
    >>> round(audit_count_release(tables, with_sensitivity(config, 2.0)).epsilon, 2)
    1.5
    >>> round(audit_count_release(tables, config).epsilon, 2)
    0.84
    """
    fl = (100.0 * tail if config.method == "postprocess" else 0.0) if floor is None else floor
    law0 = count_release_law(tables, 0, config, tail=tail)
    law1 = count_release_law(tables, 1, config, tail=tail)
    return exact_privacy_loss(law0, law1, floor=fl)


def count_table_for(tables: CoupledTables, side: int) -> CountTable:
    """A two-period :class:`CountTable`: last period's public counts, then table ``side`` (the period audited).

    The first period's sub-counts are the previous counts' (any values ≤ them would do; they are not audited).
    """
    side = check_integer("side", side, 0, 1)
    counts = tables.counts1 if side else tables.counts0
    subcounts = tables.subcounts1 if side else tables.subcounts0
    j = counts.size
    both = np.stack([tables.previous, counts], axis=1).astype(np.int64)
    subs = None if subcounts is None else np.stack([tables.previous, subcounts], axis=1).astype(np.int64)
    return CountTable(regions=tuple(f"r{i}" for i in range(j)), periods=("last", "now"), counts=both,
                      subcounts=subs)


def sample_count_release(tables: CoupledTables, side: int, config: CountReleaseConfig, replicates: int, *,
                         rng: np.random.Generator) -> np.ndarray:
    """``replicates`` releases of the audited period of table ``side`` by the real
    :func:`~engine.public_info.count_release.release_counts`: rows (counts, then sub-counts)."""
    check_rng(rng)
    r = check_integer("replicates", replicates, 1, 10_000)
    table = count_table_for(tables, side)
    out = release_counts(table, dataclasses.replace(config, replicates=r), rng=rng)
    c = out.counts[:, :, 1]
    return c if out.subcounts is None else np.concatenate([c, out.subcounts[:, :, 1]], axis=1)
