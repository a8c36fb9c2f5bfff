"""The mechanism parameters' command-line flags: a module of constants only, so that a command's ``--help`` does not
import the engine's numerical modules (``privatize --help`` in about the time of ``import numpy``)."""

from __future__ import annotations

__all__ = ["PARAMETER_FLAGS"]

#: Command-line flag (argparse dest) → (mechanism field, type, help).
PARAMETER_FLAGS: dict[str, tuple[str, type, str]] = {
    "b": ("b", float, "target distance B in (0, 2] (2 = classic DP)"),
    "epsilon": ("epsilon", float, "ε (gaussian)"),
    "delta": ("delta", float, "δ (gaussian)"),
    "epsilon1": ("epsilon1", float, "ε1 of the projection step (projection)"),
    "delta1": ("delta1", float, "δ1 of the projection step (projection)"),
    "epsilon2": ("epsilon2", float, "ε2 of the covariance step, < 1 (projection)"),
    "delta2": ("delta2", float, "δ2 of the covariance step (projection)"),
    "k": ("k", int, "projection dimension k (projection; default 10000)"),
    "rank": ("rank", int, "number of singular vectors kept, ≤ d (projection; default d)"),
    "calibration": ("calibration", str, "analytic or classical (gaussian)"),
    "covariance": ("covariance", str, "gram (XᵀX, the paper) or centred (the authors' code) (projection)"),
    "partitions": ("partitions", int, "split rows into this many disjoint parts (projection; the paper's Nigeria: 6)"),
    "anonymity_k": ("k", int, "minimum class size k (mondrian)"),
    "implementation": ("implementation", str, "fast (default) or reference (projection)"),
    "output_scale": ("output_scale", str, "unbiased (default; ×k) or paper (as printed: X/k + noise) (projection)"),
    "relation": ("relation", str, "row (one record changes by at most B) or element (one entry) (jl-laplace)"),
    "element_bound": ("element_bound", float, "largest change of one entry protected, element-wise (jl-laplace; default 1)"),
    "t": ("t", float, "row-wise per-coordinate threshold t ≥ t_min (jl-laplace)"),
    "target_delta": ("target_delta", float, "row-wise: choose t so the paper's failure bound equals this δ (jl-laplace)"),
}
