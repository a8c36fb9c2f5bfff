r"""The Wasserstein exponential mechanism for count tables with L1 loss, sampled exactly (Theorem 9; digest §7.4).

For one period with confidential counts x^c (J regions), optional sub-counts x^d ≤ x^c and public total s, release
(c, d) with probability ∝ exp(−a(‖c − x^c‖₁ + ‖d − x^d‖₁)) · ν_z(c, d), a = ε/(2σ), σ = Δ_z (the L1 loss is
1-Lipschitz, so σ(Δ_z) = Δ_z; default Δ_z = 2 as in the paper's case study). Base measures ν_z:

* ``"naive"`` — counting measure on ℤ^{2J}: independent DL(a) per coordinate (closed form);
* ``"congenial"`` — the indicator of Σ c_j = s, c_j ≥ d_j ≥ 0 (integers);
* ``"prior"`` — the congenial indicator times the Dirichlet–multinomial pmf φ(c; s, a_j = α·x^c_{j,t−1}) (G13's
  corrected pmf; deaths get no prior).

Given the fixed sum the congenial targets factorise over regions, so they are sampled **exactly** by the
convolution sampler: (i) per-region log-weights over c (the sub-count summed out in closed form), (ii) a forward
pass of convolutions into partial-sum distributions, (iii) a backward pass drawing c_J, c_{J−1}, … given the
remaining total, vectorised over replicates, (iv) d_j | c_j from the truncated discrete Laplace on [0, c_j].

Large totals: each region's support is cut where its *tilted* log-weight (times e^{λc}; tilting leaves the law
given the sum unchanged; λ is chosen by Newton steps so the tilted means add up to s) falls ``tail`` nats below its
maximum, and partial sums likewise. The mass dropped is below e^{−tail} relative (≈ 4e-18 for the default 40),
beneath the FFT's rounding (≈ 1e-16): the sampler is exact to double precision. The backward draw orders each
region's outcomes with a band around the conditional's centre first; the row total is known from the forward pass,
so rows whose uniform falls in the band (all but ~1e-6 of them) never evaluate the tails — inverse-CDF sampling is
exact under any fixed ordering. Strictly, the cut depends on the data: outputs beyond it get probability 0
instead of less than e^{−tail} of the mass — an additive slack (a δ of about 1e-17) far below anything used in
practice. ``tail=None`` keeps the full support [0, s] (the untruncated law; small instances, privacy tests).

Cost (benchmarks/bench_public_info.py, counties-demo's largest period, s ≈ 2.8e5, 100 replicates): well under a
second at ε = 1; about 2.5 CPU seconds at ε = 0.01 (supports of ±16,000 per region).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import gammaln

from engine.errors import InvalidParameterError
from engine.public_info.discrete_laplace import sample_discrete_laplace, sample_truncated_discrete_laplace
from engine.public_info.guarantee import TPGuarantee
from engine.validation import check_choice, check_integer, check_interval, check_rng

__all__ = [
    "BASES",
    "log_subcount_mass",
    "region_log_weights",
    "congenial_log_pmf",
    "congenial_count_marginals",
    "sample_congenial",
    "wasserstein_count_mechanism",
]

BASES = {
    "naive": "counting measure on the integer lattice (no public information used)",
    "congenial": "integers with Σ counts = public total and 0 ≤ sub-count ≤ count",
    "prior": "congenial support × Dirichlet–multinomial prior from last period's shares (concentration α)",
}

_DIRECT_LIMIT = 4096  # below this length np.convolve is exact and as fast as the FFT


def log_subcount_mass(c: np.ndarray, m: np.ndarray | float, a: float) -> np.ndarray:
    r"""log Σ_{d=0}^{c} e^{−a|d − m|} in closed form (c ≥ 0, m ≥ 0 integers; vectorised).

    >>> round(float(np.exp(log_subcount_mass(np.array(2), 1, 0.5))), 6)  # e^{-0.5} + 1 + e^{-0.5}
    2.213061
    """
    c = np.asarray(c, dtype=float)
    m = np.asarray(m, dtype=float)
    log_norm = math.log(-math.expm1(-a))
    below = -a * (m - c) + np.log(-np.expm1(-a * (c + 1))) - log_norm
    left = -np.expm1(-a * (m + 1))
    right = math.exp(-a) * -np.expm1(-a * np.maximum(c - m, 0.0))
    above = np.log(left + right) - log_norm
    return np.where(c <= m, below, above)


def region_log_weights(
    c: np.ndarray, xc: float, xd: float | None, a: float, concentration: float | None, subcount_bound: bool = True
) -> np.ndarray:
    r"""Unnormalised log-weight of count c for one region (sub-count summed out; digest §7.4 step i).

    −a|c − x^c| + log Σ_{d=0}^{c} e^{−a|d − x^d|} [+ log Γ(c + a_j) − log Γ(c + 1) for the prior base].
    Without sub-counts (or without the public d ≤ c constraint) the d-term does not depend on c and is dropped.
    """
    c = np.asarray(c, dtype=float)
    out = -a * np.abs(c - xc)
    if xd is not None and subcount_bound:
        out = out + log_subcount_mass(c, xd, a)
    if concentration is not None:
        out = out + gammaln(c + concentration) - gammaln(c + 1.0)
    return out


def _check_inputs(xc, xd, total, concentration):
    xc = np.asarray(xc)
    if xc.ndim != 1 or xc.size < 1:
        raise InvalidParameterError(f"xc must be a 1-D array of counts; got shape {xc.shape}")
    if not np.issubdtype(xc.dtype, np.integer):
        if not np.all(np.isfinite(xc)) or np.any(xc != np.round(xc)):
            raise InvalidParameterError("xc must hold whole numbers")
    xc = xc.astype(np.int64)
    if np.any(xc < 0):
        raise InvalidParameterError("xc must be ≥ 0")
    if xd is not None:
        xd = np.asarray(xd).astype(np.int64)
        if xd.shape != xc.shape or np.any(xd < 0):
            raise InvalidParameterError(f"xd must be ≥ 0 with the shape of xc {xc.shape}")
    s = check_integer("total", total, 0, None)
    if concentration is not None:
        concentration = np.asarray(concentration, dtype=float)
        if concentration.shape != xc.shape or np.any(~np.isfinite(concentration)) or np.any(concentration <= 0):
            raise InvalidParameterError(
                f"concentration must be > 0 with one entry per region ({xc.size}); got {concentration!r} — "
                "add a pseudo-count for regions with a zero last-period count"
            )
    return xc, xd, s, concentration


def _conv(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    if min(f.size, g.size) < 64 or f.size * g.size < _DIRECT_LIMIT**2 // 16:
        out = np.convolve(f, g)
    else:
        out = fftconvolve(f, g)
    np.maximum(out, 0.0, out=out)  # FFT rounding can leave tiny negatives
    return out


def _modes(xc, xd, s, a, conc, bound, lam) -> np.ndarray:
    """argmax_c lw_j(c) + λc for every region (bisection on the closed-form discrete derivative; unimodal)."""

    def deriv(c):
        return region_log_weights(c + 1, xc, xd, a, conc, bound) - region_log_weights(c, xc, xd, a, conc, bound)

    lo = np.zeros(xc.size)
    hi = np.full(xc.size, float(s))
    for _ in range(int(math.log2(s + 2)) + 2):
        mid = np.floor((lo + hi) / 2)
        up = deriv(mid) + lam > 0
        lo = np.where(up, mid + 1, lo)
        hi = np.where(up, hi, mid)
    return np.minimum(lo, s)


def _tilt(xc, xd, s, a, conc, bound) -> float:
    """λ where Σ_j argmax_c (lw_j(c) + λc) reaches s (a starting point for the Newton steps on the means)."""
    bound_lam = a + math.log(2.0) + (float(np.max(np.abs(np.log(conc)))) + 1.0 if conc is not None else 0.0) + 1.0

    lo, hi = -bound_lam, bound_lam
    for _ in range(40):
        mid = (lo + hi) / 2
        if _modes(xc, xd, s, a, conc, bound, mid).sum() < s:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _full_table(j, xc, xd, s, a, conc, bound, lam, tail):
    grid = np.arange(s + 1, dtype=float)
    lw = region_log_weights(
        grid, float(xc[j]), None if xd is None else float(xd[j]), a, None if conc is None else float(conc[j]), bound
    ) + lam * grid
    top = lw.max()
    if tail is None:
        return 0, np.exp(lw - top)
    keep = np.flatnonzero(lw >= top - tail)
    lo, hi = int(keep[0]), int(keep[-1])
    return lo, np.exp(lw[lo: hi + 1] - top)


def _windows(xc, xd, s, a, conc, bound, tail, lam):
    """Per-region (offset, weights scaled to max 1) where the λ-tilted log-weight is within ``tail`` of its max."""
    j_count = xc.size

    def f(c):
        return region_log_weights(c, xc, xd, a, conc, bound) + lam * c

    mode = _modes(xc, xd, s, a, conc, bound, lam)
    floor = f(mode) - tail
    steps = int(math.log2(s + 2)) + 2
    lo, hi = np.zeros(j_count), mode.copy()  # smallest c ≤ mode with f(c) ≥ floor (f increasing there)
    for _ in range(steps):
        mid = np.floor((lo + hi) / 2)
        above = f(mid) >= floor
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid + 1)
    left = np.minimum(lo, mode)
    lo, hi = mode.copy(), np.full(j_count, float(s))  # largest c ≥ mode with f(c) ≥ floor
    for _ in range(steps):
        mid = np.ceil((lo + hi) / 2)
        above = f(mid) >= floor
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid - 1)
    right = np.maximum(lo, mode)
    out = []
    for j in range(j_count):
        if conc is not None and conc[j] < 1:  # not log-concave near 0: threshold the whole grid
            out.append(_full_table(j, xc, xd, s, a, conc, bound, lam, tail))
            continue
        grid = np.arange(int(left[j]), int(right[j]) + 1, dtype=float)
        lw = region_log_weights(
            grid, float(xc[j]), None if xd is None else float(xd[j]), a, None if conc is None else float(conc[j]),
            bound,
        ) + lam * grid
        out.append((int(left[j]), np.exp(lw - lw.max())))
    return out


def _region_tables(xc, xd, s, a, conc, bound, tail):
    """Per-region windows under the exponential tilt λ that makes the tilted means add up to s.

    Tilting by e^{λc} leaves the law given Σc = s unchanged; with the right λ every region's tilted weight is
    concentrated where the constrained law puts its mass, so cutting ``tail`` nats below the maximum drops only
    negligible mass. λ is found by Newton steps on the tilted means (the log-partition is convex), starting from
    the λ that matches the modes.
    """
    if tail is None:
        return [_full_table(j, xc, xd, s, a, conc, bound, 0.0, None) for j in range(xc.size)]
    # Start: λ = 0 for the congenial base (each region's weight is already concentrated); the mode-matching λ for
    # the prior base (whose Dirichlet–multinomial factor alone grows without bound in c).
    lam = 0.0 if conc is None else _tilt(xc, xd, s, a, conc, bound)
    bracket = [-math.inf, math.inf]
    for _ in range(30):
        tables = _windows(xc, xd, s, a, conc, bound, tail, lam)
        mean = var = 0.0
        for lo, w in tables:
            m, v = _moments(lo, w)
            mean += m
            var += v
        gap = s - mean
        if abs(gap) <= max(0.5, 0.5 * math.sqrt(var)) or var <= 0:  # s within half an sd of the tilted mean
            return tables
        if gap > 0:
            bracket[0] = max(bracket[0], lam)
        else:
            bracket[1] = min(bracket[1], lam)
        step = lam + gap / var
        if not bracket[0] < step < bracket[1]:  # keep Newton inside the bracket (damped by bisection)
            step = (bracket[0] + bracket[1]) / 2 if math.isfinite(bracket[0] + bracket[1]) else lam + math.copysign(
                min(abs(gap / var), 10 * a), gap)
        lam = step
    return tables


def _forward(tables, s, tail=None):
    """Partial-sum weights F_j (offset, array) for j = 1..J, clipped to totals that can still reach s."""
    his = np.array([lo + w.size - 1 for lo, w in tables])
    rest_hi = np.concatenate([np.cumsum(his[::-1])[::-1][1:], [0]])  # Σ_{k>j} hi_k
    out = []
    off, f = tables[0]
    for j in range(len(tables)):
        if j > 0:
            lo_j, w = tables[j]
            f = _conv(f, w)
            off += lo_j
        # keep partial sums in [s − rest_hi_j, s]
        keep_lo = max(0, s - int(rest_hi[j]) - off)
        keep_hi = min(f.size - 1, s - off)
        if keep_hi < keep_lo:
            raise InvalidParameterError(
                f"the public total {s} cannot be reached by counts near the released regions — check the total"
            )
        f = f[keep_lo: keep_hi + 1]
        off += keep_lo
        top = f.max()
        if top <= 0:
            raise InvalidParameterError(f"the public total {s} has zero probability under this mechanism")
        f = f / top
        if tail is not None and j < len(tables) - 1:
            # partial sums whose tilted weight is below e^{-tail} of the maximum carry negligible mass
            keep = np.flatnonzero(f >= math.exp(-tail))
            f = f[keep[0]: keep[-1] + 1]
            off += int(keep[0])
        out.append((off, f, top))
    return out


_BAND_SDS = 10.0  # half-width of the first-pass band, in standard deviations of the region's weight


def _gather(w, lo_j, f, f_off, remaining, first, width):
    """prob[r, i] = w(first_r + i) · F(remaining_r − first_r − i) for i < width: strided views, no masking."""
    big = w.size + width
    wwin = np.lib.stride_tricks.sliding_window_view(np.concatenate([w, np.zeros(width)]), width)[first - lo_j]
    fpad = np.concatenate([np.zeros(big), f, np.zeros(big)])
    base = np.clip(remaining - first - f_off + big, width - 1, fpad.size - 1)  # padded index of F at i = 0
    fwin = np.lib.stride_tricks.sliding_window_view(fpad[::-1], width)[fpad.size - 1 - base]
    return wwin * fwin


def _moments(lo, w):
    """Mean and variance of the law ∝ w on lo, lo + 1, … (elementwise sums: no BLAS threads, which stall on a
    loaded machine)."""
    z = w.sum()
    i = np.arange(w.size, dtype=float)
    m = float((i * w).sum() / z)
    return lo + m, float(((i - m) ** 2 * w).sum() / z)


def sample_congenial(
    xc: np.ndarray,
    xd: np.ndarray | None,
    total: int,
    a: float,
    size: int,
    *,
    rng: np.random.Generator,
    concentration: np.ndarray | None = None,
    subcount_bound: bool = True,
    tail: float | None = 40.0,
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Exact draws from the congenial (or prior-congenial) L1 Wasserstein mechanism for one period.

    Parameters
    ----------
    xc, xd : array of int
        Confidential counts and sub-counts (None: no sub-count) of the J regions.
    total : int
        Public total s (every draw has Σ c = s).
    a : float
        Rate ε/(2σ).
    size : int
        Number of independent draws (replicates).
    rng : numpy.random.Generator
    concentration : array, optional
        Dirichlet–multinomial parameters a_j > 0 (the prior base); None for the plain congenial base.
    subcount_bound : bool
        Whether 0 ≤ d ≤ c is part of the base (public sub-count constraint); False draws d ≥ 0 unbounded above.
    tail : float or None
        Support cut in nats below each region's tilted maximum (see the module notes); None = full support.

    Returns
    -------
    c : ndarray (size, J) of int64
    d : ndarray (size, J) of int64 or None

    Examples
    --------
    >>> c, d = sample_congenial([6, 3, 1], [1, 2, 0], 10, 0.25, 4, rng=np.random.default_rng(0))
    >>> c.sum(axis=1).tolist(), bool(np.all(d <= c))
    ([10, 10, 10, 10], True)
    """
    xc, xd, s, concentration = _check_inputs(xc, xd, total, concentration)
    a = check_interval("a", a, 0, None, closed="neither")
    size = check_integer("size", size, 1, None)
    check_rng(rng)
    if tail is not None:
        tail = check_interval("tail", tail, 20, None)
    tables = _region_tables(xc, xd, s, a, concentration, subcount_bound, tail)
    forward = _forward(tables, s, tail)
    j_count = xc.size
    c = np.zeros((size, j_count), dtype=np.int64)
    remaining = np.full(size, s, dtype=np.int64)
    for j in range(j_count - 1, 0, -1):
        # Draw c_j ∝ w_j(c) F_{j−1}(t − c) by inverse CDF over an ordering of the outcomes that puts a band around
        # the conditional's centre first: the row total is known exactly (top_j · F_j(t)), so rows whose uniform
        # lands in the band never touch the rest; the rare others are drawn from the rest of the window.
        lo_j, w = tables[j]
        f_off, f, _ = forward[j - 1]
        m_w, v_w = _moments(lo_j, w)
        m_f, v_f = _moments(f_off, f)
        width = min(w.size, 2 * int(math.ceil(_BAND_SDS * math.sqrt(v_w))) + 1)
        centre = m_w + (remaining - m_w - m_f) * (v_w / (v_w + v_f) if v_w + v_f > 0 else 0.0)
        first = np.clip(np.round(centre).astype(np.int64) - width // 2, lo_j, lo_j + w.size - width)
        cum = np.cumsum(_gather(w, lo_j, f, f_off, remaining, first, width), axis=1)
        band = cum[:, -1]
        if width < w.size:
            g_off, g, g_top = forward[j]
            row_mass = np.maximum(g_top * g[np.clip(remaining - g_off, 0, g.size - 1)], band)
        else:
            row_mass = band
        if np.any(row_mass <= 0):
            raise InvalidParameterError("internal: no mass left in the backward pass")  # pragma: no cover
        u = rng.random(size) * row_mass
        inside = u <= band
        pick = first + np.minimum((cum < u[:, None]).sum(axis=1), width - 1)
        out = np.flatnonzero(~inside)
        if out.size:
            full = _gather(w, lo_j, f, f_off, remaining[out], np.full(out.size, lo_j), w.size)
            pos = np.arange(w.size)[None, :] + lo_j
            full[(pos >= first[out, None]) & (pos < first[out, None] + width)] = 0.0
            cum_rest = np.cumsum(full, axis=1)
            u_rest = u[out] - band[out]
            k = (cum_rest < u_rest[:, None]).sum(axis=1)
            last = w.size - 1 - np.argmax(full[:, ::-1] > 0, axis=1)  # last cell with mass (rounding guard)
            has = cum_rest[:, -1] > 0
            pick[out] = np.where(has, lo_j + np.minimum(k, last), first[out] + width - 1)
        c[:, j] = pick
        remaining -= c[:, j]
    c[:, 0] = remaining
    lo0, w0 = tables[0]
    if np.any((remaining < lo0) | (remaining >= lo0 + w0.size)):
        raise InvalidParameterError("internal: the first region's count fell outside its support")  # pragma: no cover
    d = None
    if xd is not None:
        upper = c if subcount_bound else None
        d = sample_truncated_discrete_laplace(np.broadcast_to(xd, c.shape), upper, a, rng=rng)
    return c, d


def _exact_log_marginals(xc, xd, s, a, concentration, bound):
    """log P(c_j = v) for every region and v ∈ 0..s, and log K (full support, small instances)."""
    tables = _region_tables(xc, xd, s, a, concentration, bound, None)
    logw = [np.log(np.maximum(w, 1e-300)) for _, w in tables]
    return tables, logw


def congenial_count_marginals(
    xc: np.ndarray, xd: np.ndarray | None, total: int, a: float, *, concentration: np.ndarray | None = None,
    subcount_bound: bool = True,
) -> np.ndarray:
    r"""Exact law of each region's released count: array (J, s + 1) of P(c_j = v) (full support, small s).

    Used for oracle O11 (E[c] by enumeration) and for the ε → 0 limits.

    Examples
    --------
    >>> p = congenial_count_marginals([6, 3, 1], [1, 2, 0], 10, 0.25)
    >>> np.round(p @ np.arange(11), 4).tolist()
    [4.6314, 3.279, 2.0896]
    """
    xc, xd, s, concentration = _check_inputs(xc, xd, total, concentration)
    a = check_interval("a", a, 0, None, closed="neither")
    if (s + 1) * xc.size > 5_000_000:
        raise InvalidParameterError(f"total = {s} is too large for exact marginals; use sample_congenial")
    tables = _region_tables(xc, xd, s, a, concentration, subcount_bound, None)
    w = [t[1] for t in tables]
    j_count = len(w)
    # prefix and suffix partial-sum weights (full support, offset 0), truncated at s
    pre = [np.ones(1)]
    for j in range(j_count):
        pre.append(np.convolve(pre[-1], w[j])[: s + 1])
    suf = [np.ones(1)]
    for j in range(j_count - 1, -1, -1):
        suf.append(np.convolve(suf[-1], w[j])[: s + 1])
    suf = suf[::-1]  # suf[j] = weights of Σ_{k ≥ j}
    out = np.zeros((j_count, s + 1))
    for j in range(j_count):
        others = np.convolve(pre[j], suf[j + 1])[: s + 1]
        others = np.concatenate([others, np.zeros(s + 1 - others.size)])
        v = np.arange(s + 1)
        out[j] = w[j][v] * others[s - v]
        out[j] /= out[j].sum()
    return out


def congenial_log_pmf(
    c: np.ndarray, d: np.ndarray | None, xc: np.ndarray, xd: np.ndarray | None, total: int, a: float, *,
    concentration: np.ndarray | None = None, subcount_bound: bool = True,
) -> np.ndarray:
    r"""Exact log P(c, d | x) of the congenial mechanism, including the data-dependent normaliser K(x) (G10).

    ``c``, ``d``: arrays (..., J). Outputs off the base's support get −inf.
    """
    xc, xd, s, concentration = _check_inputs(xc, xd, total, concentration)
    a = check_interval("a", a, 0, None, closed="neither")
    c = np.asarray(c, dtype=np.int64)
    tables = _region_tables(xc, xd, s, a, concentration, subcount_bound, None)
    total_w = tables[0][1]
    for _, w in tables[1:]:
        total_w = np.convolve(total_w, w)[: s + 1]
    # log K = log Σ_{Σc = s} Π_j exp(lw_j) ; tables are scaled by exp(−max_j)
    grid = np.arange(s + 1, dtype=float)
    tops = []
    for j in range(xc.size):
        lw = region_log_weights(grid, float(xc[j]), None if xd is None else float(xd[j]), a,
                                None if concentration is None else float(concentration[j]), subcount_bound)
        tops.append(lw.max())
    log_k = math.log(total_w[s]) + float(np.sum(tops))
    # numerator: −a‖c − xc‖₁ − a‖d − xd‖₁ + prior, on the support; sub-count normaliser when unbounded
    num = -a * np.abs(c - xc).sum(axis=-1).astype(float)
    ok = (c >= 0).all(axis=-1) & (c.sum(axis=-1) == s)
    if concentration is not None:
        num = num + (gammaln(c + concentration) - gammaln(c + 1.0)).sum(axis=-1)
    if xd is not None:
        d = np.asarray(d, dtype=np.int64)
        num = num - a * np.abs(d - xd).sum(axis=-1)
        ok &= (d >= 0).all(axis=-1)
        if subcount_bound:
            ok &= (d <= c).all(axis=-1)
        else:  # d ≥ 0 free: its normaliser Σ_{d ≥ 0} e^{−a|d − m|} per region
            num = num - np.sum(log_subcount_mass(np.full(xd.shape, 10**9), xd, a))
    return np.where(ok, num - log_k, -np.inf)


def wasserstein_count_mechanism(
    xc: np.ndarray,
    xd: np.ndarray | None,
    epsilon: float,
    *,
    base: Literal["naive", "congenial", "prior"] = "congenial",
    total: int | None = None,
    concentration: np.ndarray | None = None,
    sensitivity: float = 2.0,
    subcount_bound: bool = True,
    factor_two: bool = True,
    replicates: int = 1,
    rng: np.random.Generator,
    public: tuple[str, ...] = (),
    tail: float | None = 40.0,
) -> tuple[np.ndarray, np.ndarray | None, TPGuarantee]:
    r"""One period's release by the L1 Wasserstein exponential mechanism (Theorem 9), with its guarantee.

    Returns (counts, sub-counts or None, guarantee); arrays have one row per replicate. The naive base may drop the
    factor 2 (translation-invariant base; ``factor_two=False``); the congenial bases need it (digest §4.1).
    """
    check_choice("base", base, BASES)
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    sigma = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    check_rng(rng)
    replicates = check_integer("replicates", replicates, 1, None)
    if not factor_two and base != "naive":
        raise InvalidParameterError(
            "factor_two=False is only valid for the naive base (its normaliser does not depend on the data); "
            f"got base={base!r} — keep the factor 2"
        )
    a = eps / ((2.0 if factor_two else 1.0) * sigma)
    xc_arr = np.asarray(xc).astype(np.int64)
    xd_arr = None if xd is None else np.asarray(xd).astype(np.int64)
    if base == "naive":
        c = xc_arr[None, :] + sample_discrete_laplace(a, (replicates, xc_arr.size), rng=rng)
        d = None if xd_arr is None else xd_arr[None, :] + sample_discrete_laplace(a, (replicates, xc_arr.size), rng=rng)
    else:
        if total is None:
            raise InvalidParameterError(
                f"base={base!r} needs the public total (declare 'total' public) — or use base='naive'"
            )
        if base == "prior" and concentration is None:
            raise InvalidParameterError("base='prior' needs concentration (α × last period's counts)")
        c, d = sample_congenial(
            xc_arr, xd_arr, total, a, replicates, rng=rng,
            concentration=concentration if base == "prior" else None, subcount_bound=subcount_bound, tail=tail,
        )
    sd = math.sqrt(2 * math.exp(-a)) / -math.expm1(-a)
    notes = (
        f"L1 loss, base: {BASES[base]}; rate a = ε/({'2' if factor_two else '1'}Δ_z) = {a:.4g}; "
        f"unconstrained noise sd per coordinate {sd:.4g}.",
        "Exact sampler (closed form for the naive base; convolution sampler, exact to double precision, otherwise).",
    )
    g = TPGuarantee(epsilon=eps, sensitivity=sigma, public=public,
                    mechanism=f"Wasserstein exponential mechanism (L1, {base} base)", notes=notes)
    return c, d, g
