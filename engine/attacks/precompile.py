"""Compile the attacks' numba kernels once per installation: ``python -m engine.attacks.precompile``.

The nearest-row scans of attribute inference (:mod:`engine.attacks._l1`) and singling out
(:mod:`engine.attacks._chebyshev`) are compiled by numba on first use and cached next to their modules
(``__pycache__``). Without the cache, the first attack of every new process compiles them: about 7 s of CPU on the
2-core machine (the Chebyshev scan alone about 4 s), paid by the first Mechanisms run of a fresh install and by
every test process and server of a fresh clone. ``scripts/studio.sh`` runs this module after installing the
requirements, when the kernels' source changed; with the cache in place it takes about a second.

The calls below use the argument types the attacks pass (C-contiguous float64 matrices, intp indices), so the
cached machine code is the one they load.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def compile_kernels() -> float:
    """Compile (or load from the cache) every attack kernel; return the seconds it took."""
    from engine.attacks._chebyshev import two_nearest_chebyshev
    from engine.attacks._l1 import (
        NARROW_COLUMNS,
        all_but_one_nearest,
        box_gaps,
        joint_nearest,
        largest_nearest_distance,
        largest_nearest_without_each,
        scan_nearest,
    )

    started = time.perf_counter()
    rows = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 2.0, 0.0]])
    queries = np.array([[0.5, 0.5, 0.5]])
    scan_nearest(rows, queries, np.array([0, 2]))
    all_but_one_nearest(rows, queries, 1e-9)
    largest_nearest_distance(queries[:, :2], rows[:, :2])
    largest_nearest_without_each(queries, rows)
    box_gaps(np.ascontiguousarray(rows.T), queries[0], queries[0])
    for every in (True, False):
        joint_nearest(rows, queries, [np.array([0, 2]), np.array([0, 1])], 1e-9, every)
    # Beyond NARROW_COLUMNS columns the scans add 32-bit terms (and the joint scan subset sums by blocks): the same
    # kernels compiled for 32-bit integers, and the block scan.
    wide_rows = np.tile(rows, (1, NARROW_COLUMNS // 3 + 1))
    wide_queries = np.tile(queries, (1, NARROW_COLUMNS // 3 + 1))
    wide = wide_rows.shape[1]
    scan_nearest(wide_rows, wide_queries, np.arange(wide))
    all_but_one_nearest(wide_rows, wide_queries, 1e-9)
    for every in (True, False):
        joint_nearest(wide_rows, wide_queries, [np.arange(0, wide, 2), np.arange(1, wide, 2)], 1e-9, every)
    huge = (rows - 1.0) * 1e308  # a spread beyond float64 (not on the 16-bit grid): the float64-only scans
    scan_nearest(huge, queries, np.array([0, 2]))
    all_but_one_nearest(huge, queries, 1e-9)
    two_nearest_chebyshev(rows, queries, 1.0)
    return time.perf_counter() - started


def main() -> int:
    seconds = compile_kernels()
    print(f"attack kernels compiled or loaded from the cache in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
