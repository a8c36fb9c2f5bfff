"""The post-processing baseline's two-stage projection Y* = Proj(Y, Z) (digest §4.4, §7.3 method 1).

Stage 1 (continuous): min Σ (c_j − Yc_j)² + (d_j − Yd_j)² s.t. Σ c_j = s, c_j ≥ d_j ≥ 0. For a multiplier
μ = λ/2 every region projects (Yc_j − μ, Yd_j) onto the cone K = {c ≥ d ≥ 0}; Σ c_j(μ) is continuous,
non-increasing and piecewise linear with at most two breakpoints per region, so the multiplier is found
exactly by sorting the breakpoints (no iteration; this replaces the digest's bisection with the same solution).
Stage 2 (integer): the exact greedy rounding of the digest (checked equal to a MILP).

Both stages are vectorised over replicates (rows). The stage-1 region of every cell is returned: it is the
operational definition of the paper's contraction effects (Figure 3): polar → case and sub-count zeros, axis →
sub-count zero, diagonal → sub-count = count ("contracted rate").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import InvalidParameterError

__all__ = ["REGION_CODES", "StageOne", "cone_projection", "project_stage1", "round_stage2", "two_stage_projection"]

#: Stage-1 region codes.
REGION_CODES = {0: "interior", 1: "polar", 2: "diagonal", 3: "axis"}
_INTERIOR, _POLAR, _DIAGONAL, _AXIS = 0, 1, 2, 3


def cone_projection(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Euclidean projection of (a, b) onto K = {(c, d): c ≥ d ≥ 0}; returns (c, d, region code)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    interior = (a >= b) & (b >= 0)
    polar = ~interior & (a <= 0) & (a + b <= 0)
    diagonal = ~interior & ~polar & (b > a)
    axis = ~interior & ~polar & ~diagonal
    half = (a + b) / 2
    c = np.where(interior | axis, a, np.where(diagonal, half, 0.0))
    d = np.where(interior, b, np.where(diagonal, half, 0.0))
    region = np.select([polar, diagonal, axis], [_POLAR, _DIAGONAL, _AXIS], _INTERIOR)
    return c, d, region


@dataclass(frozen=True)
class StageOne:
    """Stage-1 output: continuous counts, sub-counts, region codes and the multiplier μ = λ/2 (per replicate)."""

    c: np.ndarray
    d: np.ndarray
    region: np.ndarray
    mu: np.ndarray


def project_stage1(
    yc: np.ndarray, yd: np.ndarray | None, total: np.ndarray | float | None
) -> StageOne:
    r"""Stage 1 for rows of noisy counts ``yc`` (R × J) and sub-counts ``yd`` (R × J or None).

    ``total`` (scalar or one per row) is the public total s ≥ 0; None means no total is public (μ = 0: each cell is
    only projected onto the cone). Without sub-counts the cone is c ≥ 0.

    Examples
    --------
    Digest oracle O12:

    >>> out = project_stage1(np.array([[-3, 2, 10, 41.3]]), np.array([[1, 5, -2, 3.0]]), 50)
    >>> np.round(out.c, 2).tolist(), round(float(out.mu[0]), 2)
    ([[0.0, 2.54, 8.08, 39.38]], 1.92)
    """
    yc = np.atleast_2d(np.asarray(yc, dtype=float))
    has_d = yd is not None
    ydd = np.atleast_2d(np.asarray(yd, dtype=float)) if has_d else np.full_like(yc, -np.inf)
    if ydd.shape != yc.shape:
        raise InvalidParameterError(f"yd must have the shape of yc {yc.shape}; got {ydd.shape}")
    r, j = yc.shape

    def proj(mu: np.ndarray):
        a = yc - mu[:, None]
        if has_d:
            return cone_projection(a, ydd)
        c = np.maximum(a, 0.0)
        return c, np.zeros_like(c), np.where(a <= 0, _POLAR, _INTERIOR)

    if total is None:
        c, d, region = proj(np.zeros(r))
        return StageOne(c, d, region, np.zeros(r))
    s = np.broadcast_to(np.asarray(total, dtype=float), (r,)).astype(float)
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise InvalidParameterError(f"total must be finite and ≥ 0; got {total!r}")
    # Σc(μ) is piecewise linear with ≤ 2 breakpoints per cell: with Yd ≥ 0, slope −1 until μ = Yc − Yd
    # (interior → diagonal), −1/2 until μ = Yc + Yd (diagonal → polar), then 0; with Yd < 0 (or no sub-count),
    # slope −1 until μ = Yc (axis → polar), then 0. Sort the breakpoints, accumulate, solve on the crossing piece.
    b = np.where(np.isfinite(ydd), ydd, -1.0)
    pos = b >= 0
    bp = np.concatenate([np.where(pos, yc - b, yc), np.where(pos, yc + b, np.inf)], axis=1)
    change = np.concatenate([np.where(pos, 0.5, 1.0), np.where(pos, 0.5, 0.0)], axis=1)
    order = np.argsort(bp, axis=1, kind="stable")
    bp = np.take_along_axis(bp, order, axis=1)
    change = np.take_along_axis(change, order, axis=1)
    finite = np.isfinite(bp)
    bpf = np.where(finite, bp, bp[:, :1])
    slope_after = -float(j) + np.cumsum(np.where(finite, change, 0.0), axis=1)
    slope_before = np.concatenate([np.full((r, 1), -float(j)), slope_after[:, :-1]], axis=1)
    first = yc.sum(axis=1) - j * bpf[:, 0]  # Σc at the smallest breakpoint (every cell on its first piece)
    steps = np.diff(bpf, axis=1) * slope_after[:, :-1]
    value = np.concatenate([first[:, None], first[:, None] + np.cumsum(steps, axis=1)], axis=1)
    value = np.where(finite, value, -np.inf)
    # k = number of breakpoints at which Σc is still ≥ s; the crossing lies just after breakpoint k − 1.
    k = (value >= s[:, None] - 1e-9 * np.maximum(1.0, s[:, None])).sum(axis=1)
    rows = np.arange(r)
    at_start = k == 0
    kk = np.maximum(k - 1, 0)
    base_mu = bpf[rows, kk]
    base_val = np.where(at_start, first, value[rows, kk])
    slope = np.where(at_start, slope_before[:, 0], slope_after[rows, kk])
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where(slope < 0, base_mu + (base_val - s) / -np.where(slope < 0, slope, -1.0), base_mu)
    mu = np.where(at_start, bpf[:, 0] + (first - s) / j, mu)
    c, d, region = proj(mu)
    return StageOne(c, d, region, mu)


def round_stage2(c: np.ndarray, d: np.ndarray, total: np.ndarray | float | None) -> tuple[np.ndarray, np.ndarray]:
    r"""Stage 2: the exact greedy integer rounding (digest §4.4, corrected from the seed).

    With R = s − Σ⌊c̃⌋, coupled_j = (⌊c̃_j⌋ = ⌊d̃_j⌋) and v_j = (1 − 2g^c_j) + coupled_j·min(0, 1 − 2g^d_j):
    r^c = 1 on the R smallest v_j; r^d_j = 1 iff g^d_j > 1/2 and (not coupled_j or r^c_j = 1). Without a public
    total, r^c_j = 1 iff v_j < 0 (each cell rounded on its own).

    Examples
    --------
    >>> c, d = round_stage2(np.array([[0, 2.54, 8.08, 39.38]]), np.array([[0, 2.54, 0, 3.0]]), 50)
    >>> c.tolist(), d.tolist()
    ([[0, 3, 8, 39]], [[0, 3, 0, 3]])
    """
    c = np.atleast_2d(np.asarray(c, dtype=float))
    d = np.atleast_2d(np.asarray(d, dtype=float))
    # Snap values within rounding error of an integer, so floors are not off by one.
    c = np.where(np.abs(c - np.round(c)) < 1e-9, np.round(c), c)
    d = np.where(np.abs(d - np.round(d)) < 1e-9, np.round(d), d)
    fc, fd = np.floor(c), np.floor(d)
    gc, gd = c - fc, d - fd
    coupled = fc == fd
    v = (1 - 2 * gc) + np.where(coupled, np.minimum(0.0, 1 - 2 * gd), 0.0)
    if total is None:
        rc = v < 0
    else:
        s = np.broadcast_to(np.asarray(total, dtype=float), (c.shape[0],))
        need = np.clip(np.round(s - fc.sum(axis=1)), 0, c.shape[1]).astype(np.int64)
        ranks = np.argsort(np.argsort(v, axis=1, kind="stable"), axis=1, kind="stable")
        rc = ranks < need[:, None]
    rd = (gd > 0.5) & (~coupled | rc)
    return (fc + rc).astype(np.int64), (fd + rd).astype(np.int64)


def two_stage_projection(
    yc: np.ndarray, yd: np.ndarray | None, total: np.ndarray | float | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Stage 1 then stage 2: integer (counts, sub-counts or None, stage-1 region codes), rows = replicates."""
    one = project_stage1(yc, yd, total)
    c, d = round_stage2(one.c, one.d, total)
    return c, (d if yd is not None else None), one.region
