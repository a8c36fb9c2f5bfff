r"""The L2-loss Wasserstein exponential mechanism of the paper's case study, by Metropolis MCMC — APPROXIMATE ε-TP.

Target for one period (digest §7.3, method 2): (c, d) ∝ exp(−a‖(c, d) − (x^c, x^d)‖₂) · ν_z(c, d), a = ε/(2Δ_z), on
the naive lattice ℤ^{2J}, the congenial lattice (Σc = s, 0 ≤ d ≤ c) or the congenial lattice × the
Dirichlet–multinomial prior. No exact sampler is known for the L2 loss on these lattices; the paper uses MCMC.
A finite chain does not have the target law, so the guarantee is only **approximate ε-TP** (digest G12): the
returned :class:`~engine.public_info.guarantee.TPGuarantee` has ``exact=False`` and its headline says so. Chains
start from a point built from public information only (the public total split by last period's shares, or equally;
sub-counts 0; the naive base starts at 0) — never at the confidential x, whose finite-run influence would leak
beyond the target law. The per-coordinate noise is about √(2J + 1)/a, far above the L1 mechanism's (G14): prefer
:func:`engine.public_info.wasserstein.wasserstein_count_mechanism` (exact, L1) where possible.

Moves (symmetric, Metropolis acceptance): move δ cases from one region to another (sum preserved), or change one
sub-count by ±δ; δ = 1 + Geometric with mean ≈ 1/a. Vectorised over chains (one chain per replicate).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import gammaln

from engine.errors import InvalidParameterError
from engine.public_info.guarantee import TPGuarantee
from engine.validation import check_choice, check_integer, check_interval, check_rng

__all__ = ["l2_wasserstein_mcmc"]


def _start(j: int, total: int | None, concentration: np.ndarray | None) -> np.ndarray:
    if total is None:
        return np.zeros(j, dtype=np.int64)
    shares = np.full(j, 1.0 / j) if concentration is None else concentration / concentration.sum()
    c = np.floor(total * shares).astype(np.int64)
    rest = total - int(c.sum())
    order = np.argsort(-(total * shares - c), kind="stable")
    c[order[:rest]] += 1
    return c


def l2_wasserstein_mcmc(
    xc: np.ndarray,
    xd: np.ndarray | None,
    epsilon: float,
    *,
    base: Literal["naive", "congenial", "prior"] = "congenial",
    total: int | None = None,
    concentration: np.ndarray | None = None,
    sensitivity: float = 2.0,
    iterations: int = 20_000,
    replicates: int = 1,
    rng: np.random.Generator,
    public: tuple[str, ...] = (),
) -> tuple[np.ndarray, np.ndarray | None, TPGuarantee]:
    """Run ``replicates`` Metropolis chains for ``iterations`` steps; return their final states and the
    (approximate) guarantee. See the module notes."""
    check_choice("base", base, ["naive", "congenial", "prior"])
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    sigma = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    iterations = check_integer("iterations", iterations, 1, 10_000_000)
    r = check_integer("replicates", replicates, 1, 100_000)
    check_rng(rng)
    xc = np.asarray(xc, dtype=np.int64)
    j = xc.size
    xd_arr = None if xd is None else np.asarray(xd, dtype=np.int64)
    if base != "naive":
        total = check_integer("total", total, 0, None, hint="the congenial bases need the public total")
    conc = None
    if base == "prior":
        if concentration is None:
            raise InvalidParameterError("base='prior' needs concentration (α × last period's counts)")
        conc = np.asarray(concentration, dtype=float)
        if conc.shape != xc.shape or np.any(~(conc > 0)):
            raise InvalidParameterError(f"concentration must be > 0 with one entry per region ({j})")
    if base != "naive" and j < 2:
        raise InvalidParameterError("the congenial bases need at least 2 regions (one region is fixed by the total)")
    a = eps / (2 * sigma)
    c = np.tile(_start(j, None if base == "naive" else total, conc), (r, 1))
    d = None if xd_arr is None else np.zeros((r, j), dtype=np.int64)
    res_c = c - xc[None]
    res_d = None if d is None or xd_arr is None else d - xd_arr[None]
    sq = (res_c**2).sum(axis=1).astype(float) + (0.0 if res_d is None else (res_d**2).sum(axis=1))
    p_step = min(1.0, a)  # δ − 1 ~ Geometric: mean step ≈ 1/a
    rows = np.arange(r)
    for _ in range(iterations):
        step = rng.geometric(p_step, r).astype(np.int64)
        sign = np.where(rng.random(r) < 0.5, -1, 1)
        delta = step * sign
        move_d = (rng.random(r) < 0.5) if d is not None else np.zeros(r, dtype=bool)
        i = rng.integers(0, j, r)
        k = (i + rng.integers(1, max(j, 2), r)) % j if j > 1 else i
        # proposed change of the squared residual and of the log prior
        ri, rk = res_c[rows, i], res_c[rows, k]
        if base == "naive":  # one coordinate at a time
            new_sq_c = sq - ri**2 + (ri + delta) ** 2
        else:
            new_sq_c = sq - ri**2 - rk**2 + (ri - delta) ** 2 + (rk + delta) ** 2
        ci_new = c[rows, i] + delta if base == "naive" else c[rows, i] - delta
        ck_new = c[rows, k] + (0 if base == "naive" else delta)
        if d is not None and res_d is not None:
            rdi = res_d[rows, i]
            new_sq_d = sq - rdi**2 + (rdi + delta) ** 2
            di_new = d[rows, i] + delta
            valid_d = (di_new >= 0) & (di_new <= c[rows, i]) if base != "naive" else np.ones(r, dtype=bool)
        else:
            new_sq_d, di_new, valid_d = sq, None, np.zeros(r, dtype=bool)
        if base == "naive":
            valid_c = np.ones(r, dtype=bool)
        else:
            di = d[rows, i] if d is not None else 0
            dk = d[rows, k] if d is not None else 0
            valid_c = (ci_new >= di) & (ck_new >= dk) & (ci_new >= 0) & (ck_new >= 0) & (k != i)
        new_sq = np.where(move_d, new_sq_d, new_sq_c)
        valid = np.where(move_d, valid_d, valid_c)
        log_ratio = -a * (np.sqrt(np.maximum(new_sq, 0.0)) - np.sqrt(sq))
        if conc is not None:
            ci_ok = np.where(valid_c, ci_new, c[rows, i])  # invalid proposals are rejected anyway
            ck_ok = np.where(valid_c, ck_new, c[rows, k])
            prior = (gammaln(ci_ok + conc[i]) - gammaln(ci_ok + 1.0) - gammaln(c[rows, i] + conc[i])
                     + gammaln(c[rows, i] + 1.0) + gammaln(ck_ok + conc[k]) - gammaln(ck_ok + 1.0)
                     - gammaln(c[rows, k] + conc[k]) + gammaln(c[rows, k] + 1.0))
            log_ratio = log_ratio + np.where(move_d, 0.0, prior)
        accept = valid & (np.log(rng.random(r)) < log_ratio)
        acc_c = accept & ~move_d
        acc_d = accept & move_d
        if acc_c.any():
            ra, ia, ka = rows[acc_c], i[acc_c], k[acc_c]
            if base == "naive":
                c[ra, ia] += delta[acc_c]
                res_c[ra, ia] += delta[acc_c]
            else:
                c[ra, ia] -= delta[acc_c]
                res_c[ra, ia] -= delta[acc_c]
                c[ra, ka] += delta[acc_c]
                res_c[ra, ka] += delta[acc_c]
        if acc_d.any() and d is not None and res_d is not None:
            ra, ia = rows[acc_d], i[acc_d]
            d[ra, ia] += delta[acc_d]
            res_d[ra, ia] += delta[acc_d]
        sq = np.where(accept, new_sq, sq)
    sd = math.sqrt((2 if d is not None else 1) * j + 1) / a
    guarantee = TPGuarantee(
        epsilon=eps, sensitivity=sigma, public=public, exact=False,
        mechanism=f"Wasserstein exponential mechanism (L2 loss, {base} base, Metropolis MCMC)",
        notes=(
            f"Approximate: {iterations} Metropolis steps per chain, started from public information only; a finite "
            "chain does not have the target law (digest G12).",
            f"Unconstrained noise sd per coordinate ≈ √(dim + 1)/a = {sd:.4g} (digest G14).",
        ),
    )
    return c, d, guarantee
