r"""Record mechanisms applied partition by partition, with the small shared pieces drawn once on the driver.

Two modes (:data:`MODES`); the release states which one ran.

``global`` (default) — ONE release of the whole table whose output distribution is exactly that of the in-memory
  release (fast path for the projection):

  * Gaussian: :math:`x_i + N(0, \sigma^2 I)` row by row — no shared piece (σ is data-free).
  * Private projection (Algorithm 1, fast path): R (d × k) is drawn once; at rank r < d the covariance
    :math:`C = X^\top X` (or the centred covariance) of the WHOLE table is computed by a reduction over the
    partitions and privatized once (:func:`engine.mechanisms.private_projection.noisy_covariance_basis`); the
    operators A and F (the noise covariance :math:`\sigma_1^2 M^\top M = \sigma_1^2 F^\top F`) are formed once and
    broadcast. Each partition then draws its own noise rows :math:`\sigma_1 z F` — the rows of the in-memory
    fast path are i.i.d. given (R, V), so drawing them in partitions with independent streams gives the same joint
    law (:func:`engine.mechanisms.private_projection.fast_release_with_operators` is the shared row loop).
  * JL + Laplace: the secret P (d × k) is drawn once on the driver, broadcast to the workers (never written
    anywhere), and each partition releases :math:`x_i P + \text{Laplace}`.

``partitioned`` — the targeted-DP paper's partitioned setup (Nigeria: m disjoint parts): every partition is a
  disjoint part and runs the whole of Algorithm 1 on its own rows with its own R, covariance and noise. Each
  record is in exactly one part, so parallel composition (Lemma 3) gives the same (B, ε, δ); the parts here are
  the input's row ranges (fixed before the data are seen), not a random split. Only for the projection.

Refused (one line each, :func:`check_supported`): Mondrian k-anonymity (its median splits need the whole table),
the projection's random split into ``partitions > 1`` parts (a global permutation), its reference implementation
(n × k matrices), and JL + Laplace in partitioned mode (one P per part would make the parts' projections
incomparable).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee
from engine.mechanisms import RecordMechanism
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace

# The in-memory fast path's own R sampler and operator construction (one home for Algorithm 1).
from engine.mechanisms.private_projection import (
    PrivateProjection,
    _draw_projection,
    _expected_sd,
    _projection_operators,
    fast_release_with_operators,
    noisy_covariance_basis,
)

#: Execution modes of the out-of-core release → what the guarantee says about them.
MODES: dict[str, str] = {
    "global": (
        "one global release: the shared pieces (σ; R, the privatized covariance and the noise covariance of the "
        "fast path; JL's secret P) were computed once and broadcast, and every partition drew its own noise — the "
        "output has exactly the distribution of the in-memory release"
    ),
    "partitioned": (
        "partitioned mode of the targeted-DP paper: the rows were split into {m} disjoint parts (the input's row "
        "ranges, fixed before the data were seen) and Algorithm 1 ran on each part with its own R, covariance and "
        "noise; each record is in exactly one part, so parallel composition (Lemma 3) keeps the same guarantee"
    ),
}


def check_supported(mechanism: RecordMechanism, mode: str) -> None:
    """Refuse, in one line saying why, what cannot run partition by partition."""
    if mode not in MODES:
        raise InvalidParameterError(f"--dask-mode must be one of {', '.join(MODES)}; got {mode!r}")
    kind = mechanism.KIND
    if kind == "mondrian":
        raise InvalidParameterError(
            "Mondrian k-anonymity cannot run under --engine dask: its median splits depend on all rows at once "
            "(every cut is chosen from the whole table), so it is not partition-local — use the in-memory engine"
        )
    if isinstance(mechanism, PrivateProjection):
        if mechanism.partitions > 1:
            raise InvalidParameterError(
                f"the projection's partitions = {mechanism.partitions} splits the rows by a random permutation of "
                "the whole table, which --engine dask does not do — set partitions to 1 and use --dask-mode "
                "partitioned (disjoint row ranges, same guarantee), or the in-memory engine"
            )
        if mechanism.implementation == "reference":
            raise InvalidParameterError(
                "implementation='reference' materialises n × k matrices and is not available under --engine dask — "
                "use implementation='fast' (exactly the same output distribution)"
            )
    elif mode == "partitioned":
        if isinstance(mechanism, JLLaplace):
            raise InvalidParameterError(
                "--dask-mode partitioned is for the private projection; JL + Laplace needs ONE secret P for the "
                "whole release (one per part would make the parts' projections incomparable) — use --dask-mode global"
            )
        if not isinstance(mechanism, GaussianMechanism):
            raise InvalidParameterError(f"--dask-mode partitioned does not apply to the {kind} mechanism")


@dataclass(frozen=True)
class GaussianPieces:
    """Gaussian mechanism: x + N(0, σ² I) (σ is data-free, nothing else is shared)."""

    sigma: float

    def privatize(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        return x + rng.normal(0.0, self.sigma, size=x.shape), {}


@dataclass(frozen=True)
class ProjectionPieces:
    """Algorithm 1's fast path with (A, F) computed once: out = multiplier·(X A/k + σ1 Z F)."""

    a: np.ndarray | None
    f: np.ndarray
    k: int
    sigma1: float
    multiplier: float

    def privatize(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        out = np.empty_like(x)
        fast_release_with_operators(x, self.a, self.f, self.k, self.sigma1, self.multiplier, rng, out=out)
        return out, {}


@dataclass(frozen=True)
class JLPieces:
    """JL + Laplace with the secret P drawn once: x P + Laplace(0, c/ε)."""

    p: np.ndarray
    laplace_scale: float

    def privatize(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        z = x @ self.p
        z += rng.laplace(0.0, self.laplace_scale, size=z.shape)
        return z, {}


@dataclass(frozen=True)
class PartitionedProjection:
    """The partitioned mode: Algorithm 1 in full on each partition (its own R, covariance and noise)."""

    mechanism: PrivateProjection

    def privatize(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        release = self.mechanism.release(x, rng=rng)
        sd = float(release.details["noise_sd_per_coordinate"])
        full = release.details["expectation"].startswith("X (")
        return np.asarray(release.value), {"noise_variance_sum": x.shape[0] * sd * sd, "not_full_rank": float(not full)}


Pieces = GaussianPieces | ProjectionPieces | JLPieces | PartitionedProjection


def plan_pieces(
    mechanism: RecordMechanism,
    mode: str,
    d: int,
    rng: np.random.Generator,
    covariance: Callable[[str], np.ndarray],
) -> tuple[Pieces, dict[str, Any]]:
    """Draw the shared pieces on the driver; return them with the release's ``details`` (as in memory).

    Parameters
    ----------
    mechanism : RecordMechanism
    mode : {"global", "partitioned"}
    d : int
        Number of features.
    rng : numpy.random.Generator
        The driver's stream (R, the covariance noise, P).
    covariance : callable
        ``covariance("gram" | "centred")`` → the d × d matrix of the whole prepared table, by reduction; called
        only when the projection keeps fewer than d singular vectors.
    """
    check_supported(mechanism, mode)
    if isinstance(mechanism, GaussianMechanism):
        # σ and every entry of details are data-free: the mechanism's own details for a one-row zero matrix.
        gaussian_details = mechanism.release(np.zeros((1, d)), rng=np.random.default_rng(0)).details
        return GaussianPieces(float(mechanism.sigma)), dict(gaussian_details)
    if isinstance(mechanism, JLLaplace):
        if mechanism.d != d:
            raise InvalidParameterError(
                f"d must equal the number of data columns; configured d = {mechanism.d}, data has {d} — "
                "set d to the data's column count"
            )
        jl_details = mechanism.release(np.zeros((1, d)), rng=np.random.default_rng(0)).details  # data-free
        p = rng.normal(0.0, 1.0 / math.sqrt(mechanism.k), size=(d, mechanism.k))
        return JLPieces(p, float(mechanism.laplace_scale)), dict(jl_details)
    assert isinstance(mechanism, PrivateProjection)
    rank = d if mechanism.rank is None else int(mechanism.rank)
    if rank > d:
        raise InvalidParameterError(f"rank must be at most the number of features d = {d}; got {rank}")
    sigma1, sigma2 = mechanism.sigma1(d), mechanism.sigma2
    details: dict[str, Any] = {
        "implementation": "fast",
        "output_scale": 1.0 if mechanism.output_scale == "unbiased" else 1.0 / mechanism.k,
        "noise_sd_expected": _expected_sd(sigma1, mechanism.k, d),
        "sigma1": float(sigma1),
        "sigma2": float(sigma2),
        "rank": rank,
        "k": int(mechanism.k),
        "partitions": 1,
        "covariance": mechanism.covariance,
        "covariance_step_changes_output": "no (full rank)" if rank == d else "yes",
    }
    if mode == "partitioned":
        return PartitionedProjection(mechanism), details
    r_mat = _draw_projection(d, mechanism.k, rng)
    full_row_rank = bool(np.linalg.matrix_rank(r_mat) == d)
    v = None if rank == d else noisy_covariance_basis(covariance(mechanism.covariance), rank, sigma2, rng)
    a, f = _projection_operators(r_mat, v)
    multiplier = float(mechanism.k) if mechanism.output_scale == "unbiased" else 1.0
    unit_var = np.einsum("ij,ij->j", f, f)
    details["noise_sd_per_coordinate"] = float(mechanism.k * sigma1 * np.sqrt(unit_var.mean()))
    details["expectation"] = (
        "X (times output_scale)"
        if rank == d and full_row_rank
        else f"X projected onto a subspace of dimension < {d} (rank-deficient R or rank < d)"
    )
    return ProjectionPieces(a, f, int(mechanism.k), float(sigma1), multiplier), details


def finish_details(details: dict[str, Any], pieces: Pieces, reports: list[dict[str, float]], rows: int, d: int) -> None:
    """Complete ``details`` from the partitions' reports (partitioned mode: noise sd and expectation over parts)."""
    if isinstance(pieces, PartitionedProjection):
        total = sum(r["noise_variance_sum"] for r in reports)
        details["noise_sd_per_coordinate"] = float(math.sqrt(total / rows))
        details["partitions"] = len(reports)
        details["expectation"] = (
            "X (times output_scale)"
            if not any(r["not_full_rank"] for r in reports)
            else f"X projected onto a subspace of dimension < {d} in some parts (rank-deficient R or rank < d)"
        )


def stated_guarantee(mechanism: RecordMechanism, mode: str, parts: int) -> Guarantee:
    """The mechanism's guarantee with one more note saying which out-of-core mode ran."""
    guarantee = mechanism.guarantee()
    note = "Out-of-core release (Dask): " + MODES[mode].format(m=parts) + "."
    return dataclasses.replace(guarantee, notes=(*guarantee.notes, note))


__all__ = [
    "MODES",
    "GaussianPieces",
    "JLPieces",
    "PartitionedProjection",
    "ProjectionPieces",
    "check_supported",
    "finish_details",
    "plan_pieces",
    "stated_guarantee",
]
