"""Benchmark Theorem 1's predicate (engine.theory.feasibility) on 400 × 400 grids. Target: well under 100 ms.

Three shapes of the same question:

* ``grid 400x400 (heatmap axes)`` — :func:`feasibility_grid` over a B axis and an ε axis (what the UI heatmap
  calls): ⌈2/B⌉ and ⌈ln Q/ε⌉ are computed per axis and compared by broadcasting.
* ``is_feasible 400x400 broadcast`` — :func:`is_feasible` with B as a row and ε as a column.
* ``is_feasible 160000 distinct (b, γ, ε, δ)`` — every one of the four arguments a full 400 × 400 array, so every
  cell evaluates its own Q (the worst case for a grid over γ or δ).
* ``min_epsilon 400x400 (B × δ)`` — the vectorised inverse question, for reference.

Run ``python benchmarks/bench_feasibility.py`` or ``bash scripts/studio.sh bench feasibility``.
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

if __name__ == "__main__":  # allow running as a script from anywhere
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from engine.theory.feasibility import feasibility_grid, is_feasible, min_epsilon  # noqa: E402

TARGET_SECONDS = 0.100
REPEATS = 7


def _median_seconds(fn, repeats: int = REPEATS) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> list[dict]:
    n = 400
    b = np.linspace(0.005, 2.0, n)
    eps = np.geomspace(0.01, 10.0, n)
    rng = np.random.default_rng(0)
    full = {
        "b": rng.uniform(0.005, 2.0, (n, n)),
        "gamma": rng.uniform(0.5, 0.999, (n, n)),
        "epsilon": np.exp(rng.uniform(np.log(0.01), np.log(10.0), (n, n))),
        "delta": 10 ** rng.uniform(-12, -1, (n, n)),
    }
    deltas = np.geomspace(1e-12, 1e-1, n)

    cases = [
        ("grid 400x400 (heatmap axes)", lambda: feasibility_grid(b, eps, 0.99, 1e-4)),
        ("is_feasible 400x400 broadcast", lambda: is_feasible(b[None, :], 0.99, eps[:, None], 1e-4)),
        ("is_feasible 160000 distinct (b, gamma, epsilon, delta)", lambda: is_feasible(**full)),
    ]
    rows = []
    for name, fn in cases:
        seconds = _median_seconds(fn)
        rows.append(
            {
                "name": name,
                "seconds": seconds,
                "target": TARGET_SECONDS,
                "ratio": TARGET_SECONDS / seconds,
                "note": f"median of {REPEATS}; ratio = target / measured",
            }
        )
    seconds = _median_seconds(lambda: min_epsilon(b[None, :], 0.99, deltas[:, None]), repeats=3)
    rows.append({"name": "min_epsilon 400x400 (B x delta)", "seconds": seconds, "note": "median of 3; bisection"})
    return rows


if __name__ == "__main__":
    for row in run():
        extras = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items() if k != "name")
        print(f"{row['name']}: {extras}")
